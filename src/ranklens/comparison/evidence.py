"""Which evidence spans a run of chunks found, chunk by chunk, for the surfaces that show
it: the report's drill-down (:mod:`.spandrill`) and the gate's regressed queries.

The numbers come from judging; this module says *which* spans and *which* chunks, for a
few rows of a run (each query's top ``depth`` and the chunks read in a document with
evidence for their query), with judging's own parts: chunks placed by
:func:`~ranklens.judging.spanmatch.place_chunks` (offsets checked against the chunk's
text, missing ones found by it) and a chunk finding a span when judging's overlap rule
(:mod:`ranklens.judging.overlap`) accepts their overlap ``min(b, e) − max(a, s)``. A chunk's
grade is the best grade of the spans it finds; a placed chunk of a document with evidence
for its query that finds none is grade 0 (judged, not relevant); any other chunk is
unjudged (None), as judging has it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..judging.overlap import OverlapRule, get_rule
from ..judging.spanmatch import place_chunks
from ..model import Run
from ..model import segments as seg
from ..model.ids import hash_strings
from ..model.spans import SpanLabels


@dataclass
class Evidence:
    """The spans of some queries (``query_ids``; ``rows[i]``: the span records of query
    ``i``, as :meth:`SpanLabels.span_records` gives them, in document and offset order)."""

    query_ids: list[str]
    rows: list[list[dict[str, Any]]]
    labels: SpanLabels

    @property
    def texts(self) -> Mapping[str, str] | None:
        return self.labels.texts

    @classmethod
    def of(cls, labels: SpanLabels, query_ids: Sequence[str]) -> Evidence:
        at = {q: i for i, q in enumerate(query_ids)}
        rows: list[list[dict[str, Any]]] = [[] for _ in query_ids]
        for r in labels.span_records():
            i = at.get(r["query_id"])
            if i is not None:
                rows[i].append(r)
        for spans in rows:
            spans.sort(key=lambda r: (r["doc_id"], r["start"], r["end"]))
        return cls(list(query_ids), rows, labels)

    def by_doc(self) -> dict[tuple[int, str], list[int]]:
        """``(query position, document) -> [span index within the query, ...]``."""
        out: dict[tuple[int, str], list[int]] = {}
        for i, spans in enumerate(self.rows):
            for j, r in enumerate(spans):
                out.setdefault((i, r["doc_id"]), []).append(j)
        return out

    def describe(self, i: int, j: int, width: int = 60) -> str:
        """Span ``j`` of query ``i`` in words: ``doc [start, end) "its text"``."""
        r = self.rows[i][j]
        text = r.get("text")
        where = f"{r['doc_id']} [{r['start']}, {r['end']})"
        if not text:
            return where
        flat = " ".join(text.split())
        return f"{where} {(flat if len(flat) <= width else flat[: width - 1] + '…')!r}"


@dataclass
class Chunk:
    """One chunk of a run as shown: its row in the run, query position, rank, id, source
    document, place ``[start, end)`` after placing (``-1`` unplaced) and ``how`` it was
    placed (``"given"`` offsets, ``"found"`` by its text, ``"moved"``: its offsets
    contradicted its text, which stands elsewhere; ``""``: nowhere), its own text, its grade
    (None: unjudged) and the spans it finds (indices into the query's spans)."""

    row: int
    query: int
    rank: int
    id: str
    doc: str | None
    start: int
    end: int
    how: str
    text: str | None
    grade: int | None = None
    finds: list[int] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        return self.start >= 0 and self.end > self.start


@dataclass
class Found:
    """A run's chunks against the evidence: ``top[i]``, the chunks of query ``i`` in its
    top ``depth``; ``first[i]``, ``{span index: rank of the first chunk finding it}`` at
    any rank."""

    top: list[list[Chunk]]
    first: list[dict[int, int]]


def find_evidence(
    evidence: Evidence,
    run: Run,
    depth: int,
    rule: OverlapRule | str | None = None,
    score_precision: str = "float64",
    placement: str = "unique",
) -> Found:
    """The chunks of ``run`` in each query's top ``depth`` and every chunk read in a
    document with evidence for its query, placed and matched (module docstring); a chunk
    found by its text in several places stands where the convention's ``placement`` says
    (``"unique"``: nowhere; ``"first"``: its first place), as judging places it."""
    rule = get_rule(rule)
    n_q = len(evidence.query_ids)
    top: list[list[Chunk]] = [[] for _ in range(n_q)]
    first: list[dict[int, int]] = [{} for _ in range(n_q)]
    sp = run.spans
    if sp is None or not len(run.q):
        return Found(top, first)
    qpos = {q: i for i, q in enumerate(evidence.query_ids)}
    order = run.order(score_precision)
    to_pos = np.array([qpos.get(str(q), -1) for q in run.query_ids], dtype=np.int64)
    pos = to_pos[run.q[order]]
    rank = seg.seg_running_count(run.q[order])
    by_doc = evidence.by_doc()
    # rows in a document with evidence for their query: 64-bit keys, then the strings
    docs = sp.doc[order]
    named = np.array(["" if d is None else d for d in docs], dtype=object)
    wanted = [(i, d) for i, d in by_doc]
    keys = _keys(pos, hash_strings(list(named)) if len(named) else np.zeros(0, np.uint64))
    hashed = hash_strings([d for _, d in wanted]) if wanted else np.zeros(0, np.uint64)
    want = _keys(np.array([i for i, _ in wanted], dtype=np.int64), hashed)
    near = np.isin(keys, want) & (pos >= 0)
    sel = np.flatnonzero(((rank <= depth) & (pos >= 0)) | near)
    rows = order[sel]
    if not len(rows):
        return Found(top, first)
    placed, _, _ = place_chunks(_take(run, rows), evidence.labels, placement)
    ps = placed.spans
    assert ps is not None
    ids = run.docs.strings(rows)
    pairs: list[tuple[Chunk, int]] = []
    chunks: list[Chunk] = []
    for k, (r, i, rk) in enumerate(zip(rows.tolist(), pos[sel].tolist(), rank[sel].tolist())):
        doc = ps.doc[k]
        a, b, given = int(ps.start[k]), int(ps.end[k]), int(sp.start[r])
        if a < 0 or b <= a:
            how = ""
        else:
            how = "given" if a == given else "found" if given < 0 else "moved"
        c = Chunk(r, i, rk, ids[k], doc, a, b, how, ps.text[k])
        chunks.append(c)
        spans = by_doc.get((i, doc)) if doc is not None else None
        if spans and c.placed:
            c.grade = 0
            pairs.extend((c, j) for j in spans)
    if pairs:
        rec = evidence.rows
        s = np.array([rec[c.query][j]["start"] for c, j in pairs], dtype=np.int64)
        e = np.array([rec[c.query][j]["end"] for c, j in pairs], dtype=np.int64)
        ca = np.array([c.start for c, _ in pairs], dtype=np.int64)
        cb = np.array([c.end for c, _ in pairs], dtype=np.int64)
        ok = rule.accepts(np.minimum(cb, e) - np.maximum(ca, s), e - s, cb - ca)
        for (c, j), yes in zip(pairs, ok.tolist()):
            if yes:
                c.finds.append(j)
                g = int(rec[c.query][j]["grade"])
                c.grade = g if c.grade is None else max(c.grade, g)
                seen = first[c.query].get(j)
                if seen is None or c.rank < seen:
                    first[c.query][j] = c.rank
    for c in chunks:
        if c.rank <= depth:
            top[c.query].append(c)
    for chunks_q in top:
        chunks_q.sort(key=lambda c: c.rank)
    return Found(top, first)


def found_evidence(
    labels: SpanLabels,
    run: Run,
    k: int,
    level: int = 1,
    rule: OverlapRule | str | None = None,
    query_ids: Sequence[str] | None = None,
    placement: str = "unique",
) -> dict[str, list[str]]:
    """Per query, the evidence spans (grade >= ``level``) that a chunk of the run's top
    ``k`` finds, each described as ``doc [start, end) "text"`` (the gate's baseline keeps
    them, and a regressed query lists those it no longer finds)."""
    qids = list(query_ids) if query_ids is not None else [str(q) for q in labels.query_ids]
    ev = Evidence.of(labels, qids)
    found = find_evidence(ev, run, k, rule, placement=placement)
    lv = max(int(level), 1)
    return {
        q: sorted(ev.describe(i, j) for j, rank in found.first[i].items()
                  if rank <= k and ev.rows[i][j]["grade"] >= lv)
        for i, q in enumerate(qids)
    }  # fmt: skip


def rule_text(rule: OverlapRule | str | None) -> str:
    """An overlap rule as one canonical string (``"any"``, ``"evidence>=0.5"``,
    ``"evidence>=0.5,chunk>=0.2"``): equal rules read equal whatever they were called."""
    r = get_rule(rule)
    parts = [f"{k}>={v:g}" for k, v in (("evidence", r.evidence), ("chunk", r.chunk)) if v]
    return ",".join(parts) or "any"


def _take(run: Run, rows: np.ndarray) -> Run:
    """The rows ``rows`` of a run of chunks, in that order."""
    assert run.spans is not None
    out = Run(run.query_ids, None, run.q[rows], None, run.score[rows], run.scored, run.name,
              run.unique_docs, docs=run.docs.take(rows), spans=run.spans.take(rows))  # fmt: skip
    out.failures = dict(run.failures)
    return out


def _keys(pos: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """One 64-bit key per (query position, id hash) (a match is confirmed on the text)."""
    with np.errstate(over="ignore"):
        keys: np.ndarray = hashes.astype(np.uint64) ^ (
            pos.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        )
    return keys
