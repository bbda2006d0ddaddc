"""The demo's labelled set, written by this module: the lighthouses of the (fictional) Merrow
Isles. 30 lighthouses x 5 passages (history, light, visiting, wildlife, a wreck) = 150
passages, and 40 questions with graded labels (2: answers it, 1: related) and a few grouped
ground truths (any passage of a group answers that part); ``evidence.jsonl`` holds the same
questions with span labels, the words that answer each.

The files in ``ranklens/data/demo/`` are this module's output (``python -m
ranklens.demo_data`` rewrites them; a test checks they are up to date). Questions are
phrased with other words than the passages, and lighthouses share islands, engineers and
wildlife, so BM25 has to work for it.
"""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

NAMES = [
    "Kestrel Point", "Gannet Rock", "Skerry Head", "Morwen Bar", "Tollan Ness", "Brackwater",
    "Hollin Cape", "Selkie Stack", "Fennick Light", "Caldy Spit", "Rowan Tor", "Wrack Isle",
    "Dunmarra", "Piper's Reef", "Lantern Hook", "Corrie Sound", "Essamy Head", "Black Hythe",
    "Saltings Mouth", "Gull Quay", "Ormond Point", "Tarnet Rock", "Weir Holm", "Brannock",
    "Cairnmore", "Lisk Point", "Harrow Shoal", "Mallory Ness", "Quill Head", "Stennis Bay",
]  # fmt: skip
ISLANDS = ["Great Merrow", "Little Merrow", "Ansel", "Fray", "Corran", "Hesketh"]
ENGINEERS = ["Agnes Tolley", "Robert Carrow", "Isaac Penmarr", "Helena Voss", "Tobias Wren"]
COLOURS = ["white", "red", "green"]
PATTERNS = [
    "one flash every {s} seconds", "two flashes every {s} seconds",
    "three flashes every {s} seconds", "a long flash every {s} seconds",
    "an occulting beam every {s} seconds",
]  # fmt: skip
MONTHS = ["March", "April", "May", "June", "July", "August", "September", "October"]
DAYS = ["at weekends", "every day except Monday", "on Wednesdays and Saturdays", "daily"]
SPECIES = [
    ("puffins", "seabirds that nest in burrows on the grassy slopes"),
    ("grey seals", "which haul out on the rocks below the tower at low tide"),
    ("razorbills", "black-and-white auks crowding the ledges"),
    ("kittiwakes", "small gulls whose cries fill the cliffs in early summer"),
    ("otters", "often seen fishing in the kelp at dusk"),
    ("storm petrels", "which only come ashore at night"),
]  # fmt: skip
SHIPS = [
    "Alder", "Bright Venture", "Cormorant", "Dorothea", "Elsinore", "Fair Isle Maid",
    "Grayling", "Harbinger", "Iona Star", "Juniper",
]  # fmt: skip
KEEPERS = ["Martha Quayle", "John Esson", "Peter Lowrie", "Ann Brodie", "Samuel Teague"]


def _lighthouses(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i, name in enumerate(NAMES):
        built = rng.randrange(1790, 1905)
        out.append(
            {
                "n": i,
                "name": name,
                "island": ISLANDS[i % len(ISLANDS)],
                "engineer": ENGINEERS[(i * 7) % len(ENGINEERS)],
                "built": built,
                "automated": rng.randrange(max(built + 60, 1950), 2001),
                "height": rng.randrange(14, 48),
                "colour": COLOURS[i % 3],
                "pattern": PATTERNS[i % len(PATTERNS)].format(s=rng.choice([5, 10, 15, 20, 30])),
                "range": rng.randrange(8, 27),
                "opens": MONTHS[i % 4],
                "closes": MONTHS[4 + (i * 3) % 4],
                "days": DAYS[i % len(DAYS)],
                "price": rng.choice([3, 4, 5, 6, 8]),
                "species": SPECIES[i % len(SPECIES)],
                "ship": SHIPS[i % len(SHIPS)],
                "wreck": rng.randrange(built + 5, 1960),
                "keeper": KEEPERS[i % len(KEEPERS)],
                "crew": rng.randrange(3, 40),
            }
        )
    return out


def _passages(h: dict[str, Any]) -> dict[str, tuple[str, str]]:
    n = h["name"]
    sp, sp_note = h["species"]
    return {
        "history": (
            f"{n} lighthouse: history",
            f"{n} lighthouse stands on the {h['island']} coast. It was designed by the "
            f"engineer {h['engineer']} and first lit in {h['built']}. Keepers lived in the "
            f"cottages at its foot until the station was automated in {h['automated']}.",
        ),
        "light": (
            f"{n} lighthouse: the light",
            f"The lantern of {n} shows {h['pattern']}, {h['colour']}, from a tower "
            f"{h['height']} metres tall. In clear weather the beam reaches "
            f"{h['range']} nautical miles out to sea.",
        ),
        "visit": (
            f"{n} lighthouse: visiting",
            f"The tower at {n} is open to the public from {h['opens']} to {h['closes']}, "
            f"{h['days']}. A ticket costs {h['price']} pounds; children under five go up "
            "free. The climb has steep steps and no lift.",
        ),
        "wildlife": (
            f"{n} lighthouse: wildlife",
            f"The cliffs around {n} on {h['island']} are home to {sp}, {sp_note}. "
            "Paths close during the nesting season to protect the colonies.",
        ),
        "wreck": (
            f"{n} lighthouse: the wreck of the {h['ship']}",
            f"In {h['wreck']} the {h['ship']} struck the rocks below {n} in a gale. The "
            f"keeper {h['keeper']} rowed out and brought {h['crew']} sailors ashore; the "
            "light had been burning all night.",
        ),
    }


SEED = 20261122


def lighthouses() -> list[dict[str, Any]]:
    """The 30 lighthouses the passages describe (the draws :func:`build` makes)."""
    return _lighthouses(random.Random(SEED))


def passages(h: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``{kind: (title, text)}``: the five passages about lighthouse ``h``."""
    return _passages(h)


def build() -> tuple[dict[str, dict[str, str]], list[dict[str, Any]]]:
    """The corpus (``{doc_id: {"title", "text"}}``) and the labelled questions."""
    rng = random.Random(SEED)
    houses = _lighthouses(rng)
    corpus: dict[str, dict[str, str]] = {}
    for h in houses:
        for kind, (title, text) in _passages(h).items():
            corpus[f"lh{h['n']:02d}-{kind}"] = {"title": title, "text": text}

    def doc(h: dict[str, Any], kind: str) -> str:
        return f"lh{h['n']:02d}-{kind}"

    questions: list[dict[str, Any]] = []
    ask = [
        ("light", "wreck", "How far away can ships see the beam of {name}?"),
        ("visit", "history", "Which months can I go up the {name} tower, and on what days?"),
        ("history", "wreck", "Who designed {name} and when was it first lit?"),
        ("wildlife", "visit", "What animals live near {name}?"),
        ("wreck", "light", "Which ship went aground at {name}, and who rescued the crew?"),
        ("light", "history", "What colour is the {name} light and how does it flash?"),
        ("history", "light", "When did {name} stop having resident keepers?"),
        ("visit", "wildlife", "How much does it cost to climb {name}?"),
    ]
    for i, h in enumerate(houses):
        best, related, template = ask[i % len(ask)]
        questions.append(
            {
                "query_id": f"q{len(questions) + 1:02d}",
                "query": template.format(name=h["name"]),
                "relevant": {doc(h, best): 2, doc(h, related): 1},
                "evidence": [{"doc_id": doc(h, best), "quote": q} for q in _answer(h, i)],
            }
        )
    # Grouped ground truth: two facts in two passages; any passage of a group answers
    # its part (AutoRAG style).
    for h in houses[:6]:
        questions.append(
            {
                "query_id": f"q{len(questions) + 1:02d}",
                "query": f"Tell me who engineered {h['name']} and the visiting season there.",
                "groups": [[doc(h, "history")], [doc(h, "visit")]],
                "grades": [2, 2],
                "evidence": [
                    {"doc_id": doc(h, "history"), "quote": f"engineer {h['engineer']}"},
                    {
                        "doc_id": doc(h, "visit"),
                        "quote": f"open to the public from {h['opens']} to {h['closes']}",
                    },
                ],
            }
        )
    # A fact stated in two passages of different lighthouses: either one answers it.
    by_ship: dict[str, list[dict[str, Any]]] = {}
    for h in houses:
        by_ship.setdefault(h["ship"], []).append(h)
    for ship, hs in list(by_ship.items())[:4]:
        questions.append(
            {
                "query_id": f"q{len(questions) + 1:02d}",
                "query": f"Where was a vessel called {ship} wrecked?",
                "groups": [[doc(x, "wreck") for x in hs]],
                "grades": [2],
                "evidence": [  # alternatives: any one wreck of that name answers
                    {
                        "doc_id": doc(x, "wreck"),
                        "group": 0,
                        "quote": f"the {ship} struck the rocks below {x['name']}",
                    }
                    for x in hs
                ],
            }
        )
    return corpus, questions


def _answer(h: dict[str, Any], i: int) -> list[str]:
    """The words of a question's best passage that answer it (the evidence spans), in the
    order of the question templates of :func:`build`."""
    n = h["name"]
    sp, sp_note = h["species"]
    return [
        [f"the beam reaches {h['range']} nautical miles"],
        [f"open to the public from {h['opens']} to {h['closes']}, {h['days']}"],
        [f"designed by the engineer {h['engineer']} and first lit in {h['built']}"],
        [f"home to {sp}, {sp_note}"],
        [
            f"the {h['ship']} struck the rocks below {n}",
            f"The keeper {h['keeper']} rowed out and brought {h['crew']} sailors ashore",
        ],
        [f"shows {h['pattern']}, {h['colour']}"],
        [f"until the station was automated in {h['automated']}"],
        [f"A ticket costs {h['price']} pounds"],
    ][i % 8]


def demo_folder() -> Path:
    return Path(str(resources.files("ranklens") / "data" / "demo"))


def write(folder: Path | None = None) -> Path:
    """Write ``corpus.jsonl`` and ``questions.jsonl`` into ``folder``."""
    folder = folder or demo_folder()
    folder.mkdir(parents=True, exist_ok=True)
    corpus, questions = build()
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for d, v in corpus.items():
            fh.write(json.dumps({"_id": d, **v}) + "\n")
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(json.dumps({k: v for k, v in q.items() if k != "evidence"}) + "\n")
    with open(folder / "evidence.jsonl", "w", encoding="utf-8") as fh:  # span labels
        for q in questions:
            line = {"query_id": q["query_id"], "query": q["query"], "evidence": q["evidence"]}
            fh.write(json.dumps(line) + "\n")
    return folder


def load() -> Any:
    """The demo :class:`~ranklens.Dataset`: questions, grouped and graded labels, corpus."""
    from ..io.beir import read_corpus
    from ..io.datasets import read_jsonl_dataset

    folder = demo_folder()
    ds = read_jsonl_dataset(folder / "questions.jsonl")
    ds.corpus = read_corpus(folder / "corpus.jsonl")
    ds.name = "merrow-lighthouses"
    return ds


def load_spans() -> Any:
    """The demo's questions with span labels: the words of the passages that answer them
    (``evidence.jsonl``, quotes located in ``corpus.jsonl`` beside it)."""
    from ..io.datasets import read_jsonl_dataset

    ds = read_jsonl_dataset(demo_folder() / "evidence.jsonl")
    ds.name = "merrow-lighthouses (evidence spans)"
    return ds


def guides() -> tuple[dict[str, str], dict[str, str], dict[str, list[dict[str, Any]]]]:
    """The demo's passages as one guide document per lighthouse, to chunk: ``(documents,
    questions, evidence)``. A guide (``lhNN``) is the lighthouse's five passages, each a
    title line and its text, a blank line between; the evidence of a question is the text
    of each passage that answers it (grade 2), quoted in its guide, in its group
    (``{"doc_id", "quote", "group"}``, for :meth:`ranklens.SpanLabels.from_spans`)."""
    ds = load()
    parts: dict[str, list[str]] = {}
    for d, v in ds.corpus.items():
        parts.setdefault(d.split("-")[0], []).append(f"{v['title']}\n{v['text']}")
    documents = {g: "\n\n".join(p) for g, p in parts.items()}
    q = ds.qrels
    evidence: dict[str, list[dict[str, Any]]] = {}
    for qc, dc, grade, unit in zip(q.q.tolist(), q.d.tolist(), q.grade.tolist(), q.unit.tolist()):
        if grade >= 2:
            doc = str(q.doc_ids[dc])
            evidence.setdefault(str(q.query_ids[qc]), []).append(
                {"doc_id": doc.split("-")[0], "quote": ds.corpus[doc]["text"], "group": unit}
            )
    return documents, {qid: ds.queries[qid] for qid in evidence}, evidence


if __name__ == "__main__":
    print(f"wrote {write()}")
