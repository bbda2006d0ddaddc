"""SciFact with planted outdated versions: a real public corpus with edited, dated copies.

    from scifact_versions import plant_versions      # with examples/ on sys.path
    dataset, versions = plant_versions()              # ../shared/data/scifact, seed 0

SciFact (Wadden et al., EMNLP 2020; BEIR layout, read with :func:`ranklens.read_dataset`)
pairs scientific claims with the abstracts that support or contradict them. Its abstracts
carry no dates and no versions, so both are planted, by one seeded process
(``random.Random(seed)``; the same arguments give the same corpus, byte for byte):

1. **Claims**: ``claims`` of BEIR's test claims (SciFact's dev split, 300 claims), drawn
   at random; their labels are SciFact's own qrels (binary).
2. **Corpus**: every abstract those claims cite, and ``others`` further abstracts drawn at
   random from the rest of the 5,183 (left as they are, single versions).
3. **Dates**: every abstract of step 2 gets a ``valid_from`` day drawn uniformly from
   2016-01-01 to 2025-12-31, cited and uncited alike (so recency alone does not point at
   the evidence); every document is dated, none is left undated.
4. **Older versions**: each cited abstract gets one older version beside it, the same
   paper as an earlier release stated it (a preprint, an erratum later corrected):
   ``<id>-v<year>``, valid from 1 to 4 years (a uniform number of days, 365 to 1,460)
   before the current one, in the same version ``group`` (the current abstract's id), so
   the real abstract is the current version and the planted one is outdated. Its text is
   the real abstract with

   * its **numbers** changed: each number (counts, sample sizes ``n = 17``, percentages,
     p-values, decimals, years) is changed with probability 1/2, at least one when the
     abstract has any: a year moves 1 to 3 years earlier, an integer is scaled by a
     factor in [0.6, 0.9] or [1.1, 1.4] (rounded, never to itself or 0), a decimal moves
     by 10% to 40% either way and keeps its number of places;
   * one sentence **dropped** (never the first), or **reworded**: one sentence's first
     phrase found in :data:`REWORD` replaced by an older phrasing (``significantly`` ->
     ``markedly``, ``we show`` -> ``we report``, ...), or, when no sentence has one,
     dropped; drop or reword with probability 1/2 each.

   The title is kept. An abstract without a number (33 of the 283 abstracts the test
   claims cite) gets an older version that differs in wording only, counted in
   ``dataset.info["without_numbers"]``.

An older version is about the same claim in nearly the same words, so a lexical retriever
ranks it sometimes above, sometimes below its current version, as it would the versions
of a real changing corpus. Labels carry to versions; judged as of the newest version
(``versions.latest``) under the ``zero`` freshness rule an outdated version is grade 0.
Each document's metadata holds ``valid_from`` and ``group``: the corpus is a versions
table at once (:meth:`ranklens.Versions.from_corpus`). The corpus is in date order, oldest
first, as a changing collection grows (a store that favours what was added last, such as
LangChain's time-weighted retriever, sees the newest documents last).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any

import ranklens

START, DAYS = dt.date(2016, 1, 1), 3653  # current versions valid from 2016-01-01 .. 2025-12-31
REWORD = [
    ("significantly", "markedly"),
    ("We show", "We report"),
    ("we show", "we report"),
    ("demonstrate", "show"),
    ("suggest", "indicate"),
    ("associated with", "linked to"),
    ("increased", "raised"),
    ("decreased", "lowered"),
    ("patients", "subjects"),
    ("results", "findings"),
    ("Here", "In this study"),
    ("however", "but"),
]
"""Older phrasings: in a reworded sentence the first of these found is replaced."""

NUMBER = re.compile(r"(?<![\w.\-/])\d+(?:\.\d+)?(?![\w.]*\d)")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def _number(token: str, rng: random.Random) -> str:
    """An older figure for ``token``: a year earlier, an integer or a decimal scaled."""
    if "." in token:
        places = len(token.split(".")[1])
        value = float(token) * rng.choice([-1, 1]) * rng.uniform(0.1, 0.4) + float(token)
        new = f"{abs(value):.{places}f}"
        return new if new != token else f"{float(token) + 10**-places:.{places}f}"
    n = int(token)
    if 1950 <= n <= 2025 and len(token) == 4:
        return str(n - rng.randint(1, 3))
    factor = rng.uniform(0.6, 0.9) if rng.random() < 0.5 else rng.uniform(1.1, 1.4)
    new = max(round(n * factor), 1)
    return str(new if new != n else n + 1)


def older_text(text: str, rng: random.Random) -> tuple[str, bool]:
    """An older version of an abstract: numbers changed, a sentence dropped or reworded
    (the module's docstring). Returns the text and whether it had a number to change."""
    spans = [m.span() for m in NUMBER.finditer(text)]
    change = [s for s in spans if rng.random() < 0.5]
    if spans and not change:
        change = [rng.choice(spans)]
    for start, end in sorted(change, reverse=True):
        text = text[:start] + _number(text[start:end], rng) + text[end:]
    sentences = SENTENCE.split(text)
    reword = rng.random() < 0.5
    if reword:
        candidates = [
            (i, old, new)
            for i, s in enumerate(sentences)
            for old, new in [next(((o, n) for o, n in REWORD if o in s), ("", ""))]
            if old
        ]
        if candidates:
            i, old, new = rng.choice(candidates)
            sentences[i] = sentences[i].replace(old, new, 1)
        else:
            reword = False
    if not reword and len(sentences) > 1:
        del sentences[rng.randrange(1, len(sentences))]
    return " ".join(sentences), bool(spans)


def plant_versions(
    root: str | Path | None = None, claims: int = 100, others: int = 1000, seed: int = 0
) -> tuple[ranklens.Dataset, ranklens.Versions]:
    """``(dataset, versions)``: ``claims`` SciFact test claims over their cited abstracts,
    each with one planted older version, and ``others`` further abstracts, every document
    dated (the module's docstring gives the process). ``root``: the BEIR SciFact folder
    (default ``../shared/data/scifact`` beside the repository)."""
    if root is None:
        from chunking_comparison import SCIFACT as root
    full = ranklens.read_dataset(root, split="test")
    rng = random.Random(seed)
    labels = full.qrels.to_dict()
    chosen = sorted(rng.sample(sorted(labels, key=int), claims), key=int)
    qrels = {q: labels[q] for q in chosen}
    cited = sorted({d for q in chosen for d in qrels[q]}, key=int)
    rest = sorted(set(full.corpus) - set(cited), key=int)
    kept = cited + rng.sample(rest, others)
    corpus: dict[str, dict[str, Any]] = {}
    older: dict[str, dict[str, Any]] = {}
    without_numbers = 0
    evidence = set(cited)
    for d in sorted(kept, key=int):
        doc = full.corpus[d]
        born = START + dt.timedelta(days=rng.randrange(DAYS))
        corpus[d] = _record(doc["title"], doc["text"], born, d)
        if d in evidence:
            was = born - dt.timedelta(days=rng.randint(365, 1460))
            text, numbered = older_text(doc["text"], rng)
            without_numbers += not numbered
            older[f"{d}-v{was.year}"] = _record(doc["title"], text, was, d)
    corpus.update(older)
    corpus = dict(sorted(corpus.items(), key=lambda kv: (kv[1]["metadata"]["valid_from"], kv[0])))
    queries = {q: full.queries[q] for q in chosen}
    info = {"seed": seed, "planted": len(older), "without_numbers": without_numbers}
    name = f"scifact (test, {claims} claims, planted versions)"
    dataset = ranklens.Dataset(queries, ranklens.Qrels.from_dict(qrels), corpus, name, info)
    return dataset, ranklens.Versions.from_corpus(corpus, source=name)


def _record(title: str, text: str, day: dt.date, group: str) -> dict[str, Any]:
    return {
        "title": title,
        "text": text,
        "metadata": {"valid_from": day.isoformat(), "group": group},
    }
