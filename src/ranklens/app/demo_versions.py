"""The demo corpus with planted outdated versions, for freshness (``versions.jsonl``).

Every passage of the Merrow Isles corpus (:mod:`.demo_data`) gets a date, and older
versions of some passages are planted beside it with changed facts and earlier dates:
every visiting page (an older season, other days, a cheaper ticket), every light (another
range, flash and colour), and the page that answers each plainly labelled question (a
history with an earlier, corrected date; other wildlife; another rescue). An older page is
worded a little differently (a note added, a clause missing, or as it stands), so a lexical
retriever ranks it sometimes above, sometimes below its current version, as it would the
pages of a real changing site. Each document carries ``valid_from`` and its version
``group`` (the current passage's id) in its metadata: ``versions.jsonl`` is a corpus and a
versions table at once (``ranklens.read_versions``, ``Versions.from_corpus``).

``python -m ranklens.app.demo_versions`` rewrites the file; a test checks it is up to date.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

from .demo_data import (
    COLOURS,
    DAYS,
    ENGINEERS,
    KEEPERS,
    MONTHS,
    PATTERNS,
    SEED,
    SPECIES,
    demo_folder,
    lighthouses,
    passages,
)

BEST = ["light", "visit", "history", "wildlife", "wreck", "light", "history", "visit"]
"""The passage that answers question ``i`` (its template is ``i % 8``, as in demo_data)."""

FILE = "versions.jsonl"
EPOCH = dt.date(2021, 1, 1)


def _other(rng: random.Random, values: list[Any], current: Any) -> Any:
    return rng.choice([v for v in values if v != current])


def _older(h: dict[str, Any], kind: str, rng: random.Random) -> dict[str, Any]:
    """``h`` with the facts of one passage as an older page stated them."""
    o = dict(h)
    if kind == "visit":
        o["opens"] = _other(rng, MONTHS[:4], h["opens"])
        o["closes"] = _other(rng, MONTHS[4:], h["closes"])
        o["days"] = _other(rng, DAYS, h["days"])
        o["price"] = max(h["price"] - rng.choice([1, 2]), 2)
    elif kind == "light":
        o["range"] = h["range"] + rng.choice([-4, -3, 3, 4])
        o["colour"] = _other(rng, COLOURS, h["colour"])
        seconds = rng.choice([5, 10, 15, 20, 30])
        o["pattern"] = _other(rng, PATTERNS, None).format(s=seconds)
    elif kind == "history":
        o["built"] = h["built"] + rng.choice([-3, -2, 2, 3])
        o["automated"] = h["automated"] + rng.choice([-4, -2, 2, 4])
        o["engineer"] = _other(rng, ENGINEERS, h["engineer"])
    elif kind == "wildlife":
        o["species"] = _other(rng, SPECIES, h["species"])
    elif kind == "wreck":
        o["crew"] = max(h["crew"] + rng.choice([-5, -3, 3, 5]), 2)
        o["keeper"] = _other(rng, KEEPERS, h["keeper"])
        o["wreck"] = h["wreck"] + rng.choice([-1, 1])
    return o


SHORTER = {
    "visit": " The climb has steep steps and no lift.",
    "wildlife": " Paths close during the nesting season to protect the colonies.",
    "wreck": "; the light had been burning all night",
}


def _reworded(text: str, kind: str, year: int, how: str) -> str:
    """An older page's wording: a note added, a clause missing, or as it stands."""
    if how == "longer":
        return f"{text} This page was last checked by the Merrow lights trust in {year}."
    if how == "shorter":
        if kind in SHORTER:
            return text.replace(SHORTER[kind], "", 1)
        if kind == "light":
            return text.replace(" In clear weather the beam", " The beam", 1)
        return text.replace(
            " Keepers lived in the cottages at its foot until", " Keepers stayed until", 1
        )
    return text


def build_versions() -> list[dict[str, Any]]:
    """The corpus with planted versions: one record per document, current passages first
    in the order of ``corpus.jsonl``, each with ``metadata`` ``valid_from`` and ``group``."""
    rng = random.Random(SEED + 1)
    houses = lighthouses()
    current: list[dict[str, Any]] = []
    older: list[dict[str, Any]] = []
    for i, h in enumerate(houses):
        planted = {"visit", "light", BEST[i % len(BEST)]}
        for kind, (title, text) in passages(h).items():
            doc = f"lh{h['n']:02d}-{kind}"
            born = EPOCH + dt.timedelta(days=rng.randrange(0, 1800))
            current.append(_record(doc, title, text, born, doc))
            if kind not in planted:
                continue
            was = born - dt.timedelta(days=rng.randrange(400, 1600))
            how = rng.choice(["longer", "shorter", "same"])
            old_text = _reworded(passages(_older(h, kind, rng))[kind][1], kind, was.year, how)
            older.append(_record(f"{doc}-{was.year}", title, old_text, was, doc))
    return current + older


def _record(doc: str, title: str, text: str, day: dt.date, group: str) -> dict[str, Any]:
    meta = {"valid_from": day.isoformat(), "group": group}
    return {"_id": doc, "title": title, "text": text, "metadata": meta}


def write(folder: Path | None = None) -> Path:
    """Write ``versions.jsonl`` into ``folder`` (default: the demo's data folder)."""
    path = (folder or demo_folder()) / FILE
    with open(path, "w", encoding="utf-8") as fh:
        for rec in build_versions():
            fh.write(json.dumps(rec) + "\n")
    return path


def load_versions() -> tuple[Any, Any]:
    """``(dataset, versions)``: the demo's questions with plain labels (the grouped ones
    left out: an outdated version would find a group first) over the corpus with planted
    versions, and its :class:`~ranklens.Versions` table."""
    from ..io.beir import read_corpus
    from ..model import Dataset, Qrels
    from ..model.versions import Versions
    from .demo_data import load

    ds = load()
    corpus = read_corpus(demo_folder() / FILE)
    groups = ds.qrels.to_groups()
    plain = {q: g for q, g in groups.items() if all(len(x) == 1 for x in g)}
    labels = {q: d for q, d in ds.qrels.to_dict().items() if q in plain}
    queries = {q: t for q, t in ds.queries.items() if q in labels}
    dataset = Dataset(queries, Qrels.from_dict(labels), corpus, "merrow-lighthouses (versions)")
    return dataset, Versions.from_corpus(corpus, source=FILE)


if __name__ == "__main__":
    print(f"wrote {write()}")
