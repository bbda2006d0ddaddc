"""Shared by the span-label tests of the three frameworks and the chunking comparison:
documents with the traps splitters meet, evidence in them, a brute-force oracle of span
judging (Python sets of character positions), and the examples' modules."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import ranklens
from ranklens.app.demo_data import guides

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

TRAPS = {
    # one sentence twice: the evidence is its second copy
    "twice": (
        "Results were checked twice. The cohort had 412 patients. Mortality fell by a "
        "third in the treated arm. The cohort had 412 patients. Mortality fell by a third "
        "in the treated arm, and stayed lower at five years."
    ),
    # runs of whitespace, line breaks, a tab, leading spaces and a ligature
    "spaces": (
        "   Methods  were   standard.\n\nWe measured  the ﬁnal dose in\tplasma.  "
        "Plasma levels rose   sharply after the second dose.\n\n\nNo adverse events "
        "were seen.   "
    ),
    # shorter than any chunk
    "short": "A single short sentence about rare otters.",
}
_SECOND = "Mortality fell by a third in the treated arm"
TRAP_EVIDENCE = {  # the second copy of the repeated sentence; one amid runs of spaces
    "t-twice": [("twice", TRAPS["twice"].rfind(_SECOND), TRAPS["twice"].rindex("years.") + 6)],
    "t-spaces": [("spaces", "Plasma levels rose   sharply after the second dose.")],
    "t-short": [("short", "A single short sentence about rare otters.")],
}
TRAP_QUERIES = {
    "t-twice": "did mortality fall and stay lower at five years",
    "t-spaces": "plasma levels rose sharply after the second dose",
    "t-short": "rare otters",
}


def corpus() -> tuple[dict[str, str], dict[str, str], ranklens.SpanLabels]:
    """The demo's lighthouse guides plus the trap documents: ``(texts, queries, labels)``."""
    texts, queries, evidence = guides()
    texts = {**texts, **TRAPS}
    spans: dict[str, list[Any]] = {**evidence, **TRAP_EVIDENCE}
    return texts, {**queries, **TRAP_QUERIES}, ranklens.SpanLabels.from_spans(spans, texts)


def dataset() -> ranklens.Dataset:
    texts, queries, labels = corpus()
    return ranklens.Dataset(queries, labels, {d: {"text": t} for d, t in texts.items()})


def offset_faults(
    chunks: Iterable[tuple[str, int | None, int | None, str]], texts: Mapping[str, str]
) -> list[tuple]:
    """The chunks ``(doc, start, end, text)`` with a recorded range that does not read
    their text (chunks without one are left to the caller)."""
    return [c for c in chunks if c[1] is not None and texts[c[0]][c[1] : c[2]] != c[3]]


def cover_faults(
    chunks: Sequence[tuple[str, int | None, int | None, str]], texts: Mapping[str, str]
) -> list[str]:
    """What is wrong with where a splitter's chunks (in its order) say they stand: a chunk
    starting before the previous chunk of its document, or a character of a document
    (other than whitespace) that no chunk covers (in documents whose chunks all have a
    place). A chunk placed on an earlier copy of its own text (a repeated sentence) shows
    as both."""
    faults, last, covered = [], {}, {d: set() for d in texts}
    for doc, start, end, text in chunks:
        if start is None:
            covered.pop(doc, None)
            continue
        if start < last.get(doc, 0):
            faults.append(f"{doc}: {text[:30]!r} at {start}, before {last[doc]}")
        last[doc] = start
        if doc in covered:
            covered[doc].update(range(start, end))
    for doc, text in texts.items():
        if doc not in covered:
            continue
        gaps = [i for i, c in enumerate(text) if not c.isspace() and i not in covered[doc]]
        if gaps:
            faults.append(f"{doc}: {len(gaps)} characters in no chunk, from {gaps[0]}")
    return faults


def overlapping(chunks: Sequence[tuple[str, int | None, int | None, str]]) -> int:
    """How many chunks start before the previous chunk of their document ends."""
    n, last = 0, {}
    for doc, start, end, _ in chunks:
        if start is not None and doc in last and start < last[doc]:
            n += 1
        if end is not None:
            last[doc] = end
    return n


def brute_force(
    labels: ranklens.SpanLabels,
    chunks: Sequence[Mapping[str, Any]],
    k: int,
    evidence: float = 0.0,
    chunk: float = 0.0,
) -> dict[str, float]:
    """One query's metrics from first principles: ``chunks`` in rank order, each with
    ``doc_id``, ``start``, ``end`` (None when the chunk has no place); ``labels`` holding
    this query only. A chunk finds a span of its document when they overlap by ``o > 0``
    characters with ``o >= evidence * |span|`` and ``o >= chunk * |chunk|``; precision
    counts the ranks that find a unit (span or group) no higher rank found (grouped ground
    truth, docs/grouped.md)."""
    spans = labels.span_records()
    units = {r["group"] for r in spans}
    top = list(chunks)[:k]
    found, relevant = set(), 0
    evidence_chars = {(r["doc_id"], i) for r in spans for i in range(r["start"], r["end"])}
    covered, read = set(), 0
    for c in top:
        if c.get("start") is None:
            read += c.get("chars") or 0
            continue
        a, b = c["start"], c["end"]
        read += b - a
        hits = [
            r
            for r in spans
            if r["doc_id"] == c["doc_id"]
            and (o := min(b, r["end"]) - max(a, r["start"])) > 0
            and o >= evidence * (r["end"] - r["start"]) - 1e-9
            and o >= chunk * (b - a) - 1e-9
        ]
        new = {r["group"] for r in hits} - found
        relevant += bool(new)  # a rank is relevant when it finds a unit not found above
        found |= new
        covered |= {(c["doc_id"], i) for i in range(a, b)} & evidence_chars
    n_ev = len(evidence_chars)
    return {
        f"P@{k}": relevant / k,
        f"recall@{k}": len(found) / len(units),
        f"evidence_recall@{k}": len(covered) / n_ev,
        f"evidence_precision@{k}": len(covered) / read if read else 0.0,
        f"evidence_iou@{k}": len(covered) / (read + n_ev - len(covered)),
    }


def assert_equals_brute_force(
    labels: ranklens.SpanLabels, result: Any, k: int = 5, **rule: float
) -> None:
    """Every query's P, recall of units and evidence metrics at ``k`` from ranklens equal
    :func:`brute_force` on the chunks the runner recorded (with their recorded ranges)."""
    names = [
        f"P@{k}",
        f"recall@{k}",
        f"evidence_recall@{k}",
        f"evidence_precision@{k}",
        f"evidence_iou@{k}",
    ]
    overlap = ",".join(f"{n}>={v}" for n, v in rule.items()) or "any"
    ev = ranklens.evaluate(labels, result, names, overlap=overlap)
    hits = {r.query_id: r.hits or [] for r in result.records}
    for i, q in enumerate(ev.query_ids):
        chunks = [
            {
                "doc_id": h.get("parent"),
                "start": h.get("start"),
                "end": h.get("end"),
                "chars": h.get("chars"),
            }
            for h in hits.get(q, [])
        ]
        want = brute_force(labels.subset([q]), chunks, k, **rule)
        for m in names:
            assert abs(ev.per_query[m][i] - want[m]) < 1e-12, (result.name, q, m)


def example(name: str) -> Any:
    """A module of examples/ (``scifact_spans``, ``chunking_comparison``), imported once."""
    for module in ("scifact_spans", name):
        if module not in sys.modules:
            spec = importlib.util.spec_from_file_location(module, EXAMPLES / f"{module}.py")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[module] = mod
            spec.loader.exec_module(mod)
    return sys.modules[name]
