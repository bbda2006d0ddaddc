"""Judging retrieved chunks against evidence spans: which evidence each chunk covers
(:func:`match_spans`, the span half of :func:`~ranklens.judging.join.join_columnar`) and how
many evidence and retrieved characters each rank adds (:class:`SpanChars`).

A chunk is a row of a run of chunks: its source document and character range ``[a, b)``
(:class:`~ranklens.model.chunks.ChunkSpans`). It matches an evidence span ``[s, e)`` of its
query in the same document when they overlap, ``o = min(b, e) − max(a, s) > 0``, and the
overlap rule (:mod:`.overlap`) accepts ``o``; every existing metric then sees the spans as
units of grouped ground truth: a span (or group) is found at the rank of its first matching
chunk and counts once, however many chunks cover it.

For the character metrics, each rank ``r`` gets ``new[r]``, the evidence characters its
chunk covers that no higher-ranked chunk covered, and ``length[r]``, the chunk's length;
evidence is the union of the query's spans with a grade at or above the relevance level.
Everything is vectorised: chunks find their candidate spans by binary search within each
(query, document) group, and first coverage is a minimum over elementary segments.

Chunks without offsets are located in their document's text when the labels carry texts
(exactly, else normalised: :func:`~ranklens.model.anchors.locate`), and offsets that
disagree with a chunk's own text are replaced by where the text stands; a chunk that
cannot be placed matches nothing and is counted (``chunks_unlocated``), never dropped. A
chunk whose text stands in several places is unplaced, unless the convention places text
at its first occurrence (``placement="first"``: Chroma's ``str.find``). A chunk whose
range ends past its document's text (a different version of the document, or offsets of
another text) is an error naming the run, the query, the chunk and the document.

The convention's ``evidence_total`` says what the evidence counts: ``"union"`` (the
characters of the union of the spans: an overlapping character once) or ``"summed"``
(every span's length, overlapping spans counted as often as they are labelled, and the
evidence no chunk covers counted per span: Chroma's recall and IoU denominators). Its
``omega_chunks`` says which chunks of the chunking precision-Ω reads: those sharing a
character with the evidence (``"overlapping"``) or those touching it too (``"touching"``:
Chroma's closed-range intersection).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DuplicateDocumentError, InputError
from ..model import Run
from ..model import segments as seg
from ..model.anchors import agrees, locate
from ..model.chunks import ChunkSpans
from ..model.spans import SpanLabels
from ..model.vocab import translate
from .docmatch import DocMatch
from .overlap import OverlapRule

NO_DOC = "\x00no document"
"""What a chunk without a source document is interned as (no label names it)."""


@dataclass
class SpanChars:
    """Per kept ranked row (aligned with the join's rows): ``new`` evidence characters its
    chunk covers first, and its ``length``; per evaluated query the evidence total
    (``evidence``); and what placing the chunks counted."""

    new: np.ndarray
    length: np.ndarray
    evidence: np.ndarray
    judged_rows: np.ndarray
    judged_group: np.ndarray
    omega: tuple[np.ndarray, np.ndarray] | None = None
    counted: np.ndarray | None = None
    """Per row, the evidence it covers first as the evidence total counts it (``new``
    under ``evidence_total="union"``; each span's newly covered characters summed under
    ``"summed"``): what IoU subtracts from the evidence for its uncovered part."""
    unlocated: int = 0
    relocated: int = 0
    alternatives: int = 0
    q: np.ndarray | None = None
    rank: np.ndarray | None = None
    a: np.ndarray | None = None
    """Per row, where its chunk stands in its document (``a``/``b``: its range, ``-1``
    when unplaced; ``doc``: the document as a code of the labels' documents, ``-1``: none
    with evidence); ``ev_spans``: (query, document code, start, end) of every evidence span
    at the level. What a budget's ``straddle="partial"`` reads (:mod:`.budget`)."""
    b: np.ndarray | None = None
    doc: np.ndarray | None = None
    ev_spans: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None


def place_chunks(R: Run, Q: SpanLabels, placement: str = "unique") -> tuple[Run, int, int]:
    """``R`` with every chunk placed as well as the labels' texts allow: offsets checked
    against the chunk's text, missing ones found by the text (``placement``: at its only
    occurrence, ``"unique"``, or its first, ``"first"``); ``(run, unlocated, relocated)``.
    A chunk past the end of its document's text is an error naming it."""
    sp = R.spans
    if sp is None:
        raise InputError(
            f"run {R.name!r}: span labels need each retrieved chunk's document and character "
            "range (or its text, to find it): run the retriever with ranklens.run_retriever or the "
            "hooks and give its result, or give Run.from_chunks(...) (a runner's log given as a "
            "path reads as documents: `ranklens evaluate LABELS LOG.jsonl` reads its chunks)"
        )
    start, end = sp.start.copy(), sp.end.copy()
    texts = Q.texts or {}
    relocated = 0
    if texts:
        for i in np.flatnonzero(sp.text != None):  # noqa: E711 - elementwise
            doc, text = texts.get(sp.doc[i]), sp.text[i]
            if doc is None or not text:
                continue
            a = int(start[i])
            if a >= 0 and agrees(text, doc, a, a + len(text)):
                if end[i] <= a:  # a start without an end: the text says where it ends
                    end[i] = a + max(int(sp.chars[i]), len(text))
                continue
            found = locate(text, doc, near=a if a >= 0 else None)
            if found.unique or (found.starts and placement == "first"):
                s0 = found.starts[0]
                length = int(sp.chars[i]) if sp.chars[i] > len(text) else found.ends[0] - s0
                relocated += a >= 0
                start[i], end[i] = s0, s0 + length
            elif a >= 0:  # recorded offsets that the text contradicts: not trusted
                start[i] = end[i] = -1
                relocated += 1
    if texts:
        _past_the_end(R, sp, start, end, texts)
    placed = ChunkSpans(sp.doc, start, end, np.where(start >= 0, end - start, sp.chars), sp.text,
                        sp.codes)  # fmt: skip
    out = Run(R.query_ids, None, R.q, None, R.score, R.scored, R.name, R.unique_docs,
              docs=R.docs, spans=placed)  # fmt: skip
    out.failures = dict(R.failures)
    no_doc = sp.doc == None  # noqa: E711 - elementwise
    unlocated = int(((start < 0) | (end <= start) | no_doc).sum())
    return out, unlocated, relocated


def _past_the_end(R: Run, sp: ChunkSpans, start: np.ndarray, end: np.ndarray,
                  texts: Any) -> None:  # fmt: skip
    """An error naming the first placed chunk that ends past its document's text."""
    docs = sp.doc.tolist()
    for i in np.flatnonzero((start >= 0) & (end > start)).tolist():
        text = texts.get(docs[i]) if docs[i] is not None else None
        if text is not None and end[i] > len(text):
            chunk = R.docs.strings(np.array([i]))[0]
            qid = R.query_ids[R.q[i]]
            raise InputError(
                f"run {R.name!r}: chunk {chunk!r} of query {qid!r} stands at "
                f"[{start[i]}, {end[i]}) of document {docs[i]!r}, past the end of its "
                f"{len(text)} characters: a different version of the document, or offsets "
                "into another text? (give the corpus the retriever indexed)"
            )


def match_spans(
    Q: SpanLabels, R: Run, conv: Any, rule: OverlapRule, level: int, ev: np.ndarray,
    ranked_rows: Any, q_rows: np.ndarray, qrow_q: np.ndarray, n_q: int, query_ids: np.ndarray,
    chunking: dict[str, np.ndarray] | None = None,
) -> tuple[DocMatch, SpanChars]:  # fmt: skip
    """Match the kept ranked rows of a run of chunks (``ev``: their evaluated query, in
    ranking order; ``ranked_rows``: as for :func:`~.docmatch.match_documents`) with the
    span rows ``q_rows`` of ``Q`` (``qrow_q``: their evaluated query)."""
    sp = R.spans
    assert sp is not None
    ev, ranked_rows, repeat_rows, dropped, kept_dups = _repeats(R, conv, ev, ranked_rows, query_ids)
    n = len(ev)
    first_row = np.zeros(n_q, dtype=np.int64)
    if n:
        block = seg.run_start_index(ev)
        first_row[ev[block]] = block
    lens = np.bincount(ev, minlength=n_q).astype(np.int64)
    a = ranked_rows(values=sp.start)
    b = ranked_rows(values=sp.end)
    length = np.maximum(ranked_rows(values=sp.chars), 0)
    # each row's document as a code of the labels' documents (-1: no evidence there)
    codes, vocab = sp.doc_codes()
    doc = ranked_rows(values=translate(vocab, Q.doc_ids)[codes]) if n else np.zeros(0, np.int64)
    located = (a >= 0) & (b > a) & (doc >= 0)

    # span rows, sorted by (query, document, start), numbered by (query, document) group
    nd = np.int64(max(len(Q.doc_ids), 1))
    s_doc = Q.d[q_rows].astype(np.int64)
    o = np.lexsort((Q.start[q_rows], s_doc, qrow_q))
    gk = qrow_q[o].astype(np.int64) * nd + s_doc[o]
    s_s, s_e = Q.start[q_rows][o], Q.end[q_rows][o]
    gid = np.cumsum(seg.run_starts(gk)) - 1 if len(gk) else gk
    big = np.int64(max(int(s_e.max(initial=0)), int(b.max(initial=0))) + 1)
    start_key = gid * big + s_s
    end_max = np.maximum.accumulate(gid * big + s_e) if len(gk) else gk
    gkeys = gk[seg.run_starts(gk)] if len(gk) else gk

    # each located row's group, and its candidate spans: start < b and a running end > a
    rk = ev.astype(np.int64) * nd + np.where(located, doc, 0)
    at = np.minimum(np.searchsorted(gkeys, rk), max(len(gkeys) - 1, 0))
    has = located & (gkeys[at] == rk) if len(gkeys) else np.zeros(n, dtype=bool)
    rows = np.flatnonzero(has)
    g = at[rows]
    lo = np.searchsorted(end_max, g * big + a[rows], "right")
    hi = np.searchsorted(start_key, g * big + b[rows], "left")
    cnt = np.maximum(hi - lo, 0)
    row_of = np.repeat(rows, cnt)
    cand = np.repeat(lo, cnt) + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    ov = np.minimum(b[row_of], s_e[cand]) - np.maximum(a[row_of], s_s[cand])
    keep = rule.accepts(ov, s_e[cand] - s_s[cand], b[row_of] - a[row_of])
    m_row, qrows = row_of[keep], o[cand[keep]]
    mo = np.lexsort((qrows, m_row))
    dm = DocMatch(ev, lens, first_row, repeat_rows, qrows[mo], m_row[mo], dropped, kept_dups,
                  ranked_rows)  # fmt: skip

    # characters: evidence (spans at the level, merged) each rank covers first
    grade = Q.grade[q_rows][o]
    ev_sel = grade >= max(level, 1)
    cover = (gid[ev_sel], s_s[ev_sel], s_e[ev_sel], qrow_q[o][ev_sel], rows, g, a, b, big, n, n_q)
    new, evidence = _first_coverage(*cover)
    counted = new
    if getattr(conv, "evidence_total", "union") == "summed":
        counted, evidence = _first_coverage(*cover, summed=True)
    matched = np.zeros(n, dtype=bool)
    matched[m_row] = True
    read = ~matched[rows]  # in a document with evidence, and finding none of it
    spans_at_level = (qrow_q[o][ev_sel], s_doc[o][ev_sel], s_s[ev_sel], s_e[ev_sel])
    chars = SpanChars(new, length.astype(np.int64), evidence, rows[read], g[read],
                      alternatives=_alternatives(Q, q_rows), counted=counted,
                      a=np.where(located, a, -1), b=np.where(located, b, -1), doc=doc,
                      ev_spans=spans_at_level)  # fmt: skip
    if chunking is not None:
        touching = getattr(conv, "omega_chunks", "overlapping") == "touching"
        chars.omega = _omega(Q, q_rows[o][ev_sel], qrow_q[o][ev_sel], chunking, n_q, touching)
    return dm, chars


def _omega(Q: SpanLabels, rows: np.ndarray, rq: np.ndarray, chunking: dict[str, np.ndarray],
           n_q: int, touching: bool = False) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per query, Chroma's precision-Ω numerator and denominator: with ``U`` the union of
    the chunking's chunks that overlap the query's evidence ``E`` (or touch it:
    ``touching``), ``|E ∩ U|`` and ``|U| + |E \\ U|`` (the evidence no chunk holds is read
    at best by itself). ``rows``: the evidence spans' rows of ``Q``, ``rq`` their query."""
    num = np.zeros(n_q, dtype=np.float64)
    den = np.zeros(n_q, dtype=np.float64)
    docs = Q.doc_ids
    key = rq.astype(np.int64) * np.int64(len(docs) + 1) + Q.d[rows]
    for k in np.unique(key):
        pick = rows[key == k]
        q, doc = int(k // (len(docs) + 1)), str(docs[int(k % (len(docs) + 1))])
        e = _union(Q.start[pick], Q.end[pick])
        chunks = chunking.get(doc)
        text = Q.texts.get(doc) if Q.texts else None
        if (
            chunks is not None
            and len(chunks)
            and text is not None
            and chunks[:, 1].max() > len(text)
        ):
            far = chunks[np.argmax(chunks[:, 1])]
            raise InputError(
                f"chunking: chunk [{far[0]}, {far[1]}) of document {doc!r} ends past the end of "
                f"its {len(text)} characters: a chunking of a different version of the document?"
            )
        if chunks is None or not len(chunks):
            u = np.zeros((0, 2), dtype=np.int64)
        else:
            hit = np.zeros(len(chunks), dtype=bool)
            for s0, e0 in e:
                if touching:
                    hit |= (chunks[:, 0] <= e0) & (chunks[:, 1] >= s0)
                else:
                    hit |= (chunks[:, 0] < e0) & (chunks[:, 1] > s0)
            u = _union(chunks[hit, 0], chunks[hit, 1])
        inter = _intersection(e, u)
        num[q] += inter
        den[q] += (u[:, 1] - u[:, 0]).sum() + (e[:, 1] - e[:, 0]).sum() - inter
    return num, den


def _union(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Disjoint sorted ``[[start, end], ...]`` covering the intervals ``[s, e)``."""
    if not len(s):
        return np.zeros((0, 2), dtype=np.int64)
    o = np.argsort(s, kind="stable")
    s, e = s[o], e[o]
    run_end = np.maximum.accumulate(e)
    fresh = np.ones(len(s), dtype=bool)
    fresh[1:] = s[1:] > run_end[:-1]
    idx = np.flatnonzero(fresh)
    return np.column_stack((s[idx], np.maximum.reduceat(e, idx)))


def _intersection(a: np.ndarray, b: np.ndarray) -> int:
    """The length of the intersection of two disjoint sorted interval lists."""
    if not len(a) or not len(b):
        return 0
    lo = np.maximum(a[:, None, 0], b[None, :, 0])
    hi = np.minimum(a[:, None, 1], b[None, :, 1])
    return int(np.clip(hi - lo, 0, None).sum())


def judged_nonrelevant(
    chars: SpanChars, ev: np.ndarray, m_q: np.ndarray, m_unit: np.ndarray,
    m_grade: np.ndarray, m_row: np.ndarray, unit_q: np.ndarray, unit_g: np.ndarray,
) -> tuple[np.ndarray, ...]:  # fmt: skip
    """The matches with, for each chunk read in a document that has evidence for its query
    but finding none (or too little, by the overlap rule), a grade-0 unit of that (query,
    document): such a chunk is judged, not relevant, as a labelled document of grade 0 is
    (it counts for ``judged@k`` and is no hole), and changes no relevance measure."""
    rows, group = chars.judged_rows, chars.judged_group
    keys, first, inv = np.unique(group, return_index=True, return_inverse=True)
    new_unit = len(unit_q) + inv
    zq = ev[rows].astype(np.int64)
    return (
        np.concatenate((m_q, zq)),
        np.concatenate((m_unit, new_unit)).astype(m_unit.dtype),
        np.concatenate((m_grade, np.zeros(len(rows), dtype=m_grade.dtype))),
        np.concatenate((m_row, rows)),
        np.concatenate((unit_q, zq[first])).astype(unit_q.dtype),
        np.concatenate((unit_g, np.zeros(len(keys), dtype=unit_g.dtype))),
    )


def _first_coverage(
    gid: np.ndarray, s: np.ndarray, e: np.ndarray, sq: np.ndarray, rows: np.ndarray,
    g: np.ndarray, a: np.ndarray, b: np.ndarray, big: np.int64, n: int, n_q: int,
    summed: bool = False,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per row, the evidence characters it covers first; per query, the evidence total.
    ``gid``/``s``/``e``/``sq``: evidence spans sorted by (group, start) with their query;
    ``rows``/``g``: the located rows in a group with spans, and that group. With
    ``summed``, a character held by ``m`` spans counts ``m`` times (in both)."""
    new = np.zeros(n, dtype=np.int64)
    if not len(s):
        return new, np.zeros(n_q, dtype=np.int64)
    key_s, key_e = gid * big + s, gid * big + e
    if summed:
        # elementary pieces between the spans' ends, each weighted by the spans holding it
        bounds, at = np.unique(np.concatenate((key_s, key_e)), return_inverse=True)
        step = np.zeros(len(bounds), dtype=np.int64)
        np.add.at(step, at[: len(s)], 1)
        np.add.at(step, at[len(s) :], -1)
        depth = np.cumsum(step)[:-1]
        held = np.flatnonzero(depth > 0)
        u_s, u_e, weight = bounds[held], bounds[held + 1], depth[held]
        group_q = np.zeros(int(gid.max()) + 1, dtype=np.int64)
        group_q[gid] = sq
        u_q = group_q[u_s // big]
    else:
        # the union of each group's evidence: a new interval where a span starts past all ends
        run_end = np.maximum.accumulate(key_e)
        fresh = np.ones(len(s), dtype=bool)
        fresh[1:] = key_s[1:] > run_end[:-1]
        idx = np.flatnonzero(fresh)
        u_s = key_s[idx]
        u_e = np.maximum.reduceat(key_e, idx)
        u_q = sq[idx]
        weight = np.ones(len(u_s), dtype=np.int64)
    evidence = np.bincount(u_q, weights=((u_e - u_s) * weight).astype(np.float64), minlength=n_q)
    # each located row's pieces of evidence (the pieces are disjoint and sorted)
    ra, rb = g * big + a[rows], g * big + b[rows]
    lo = np.searchsorted(u_e, ra, "right")
    hi = np.searchsorted(u_s, rb, "left")
    cnt = np.maximum(hi - lo, 0)
    pr = np.repeat(rows, cnt)
    pu = np.repeat(lo, cnt) + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    px = np.maximum(np.repeat(ra, cnt), u_s[pu])
    py = np.minimum(np.repeat(rb, cnt), u_e[pu])
    good = py > px
    pr, px, py, pw = pr[good], px[good], py[good], weight[pu[good]]
    if not len(pr):
        return new, evidence.astype(np.int64)
    # elementary segments between the pieces' ends; each goes to its first covering row
    bounds = np.unique(np.concatenate((px, py)))
    si, sj = np.searchsorted(bounds, px), np.searchsorted(bounds, py)
    k = sj - si
    seg_idx = np.repeat(si, k) + (np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k))
    first = np.full(len(bounds), n, dtype=np.int64)
    np.minimum.at(first, seg_idx, np.repeat(pr, k))
    seg_w = np.zeros(len(bounds), dtype=np.int64)
    np.maximum.at(seg_w, seg_idx, np.repeat(pw, k))  # one piece (one weight) per place
    seglen = np.diff(bounds) * seg_w[:-1]
    covered = first[:-1] < n
    new += np.bincount(first[:-1][covered], weights=seglen[covered], minlength=n).astype(np.int64)
    return new, evidence.astype(np.int64)


def _alternatives(Q: SpanLabels, q_rows: np.ndarray) -> int:
    """Queries with a group of two or more spans (alternatives): the character metrics count
    every alternative's characters as evidence, and the notes say so."""
    if len(q_rows) < 2:
        return 0
    unit = Q.unit[q_rows]
    multi = ~seg.run_starts(unit)
    return len(np.unique(Q.q[q_rows][np.flatnonzero(multi)]))


def _repeats(R: Run, conv: Any, ev: np.ndarray, ranked_rows: Any,
             query_ids: np.ndarray) -> tuple[np.ndarray, Any, np.ndarray, int, int]:  # fmt: skip
    """A chunk (by id) retrieved twice in one query: an error, dropped
    (``duplicates="first"``) or kept as a repeat, as the convention says."""
    n = len(ev)
    empty = np.zeros(0, dtype=np.int64)
    if n < 2 or R.unique_docs:
        return ev, ranked_rows, empty, 0, 0
    ck = ranked_rows(values=R.d).astype(np.int64)
    o = np.argsort((ev.astype(np.int64) << 32) | ck, kind="stable")
    again = seg.repeats(ev[o], ck[o])
    if not again.any():
        return ev, ranked_rows, empty, 0, 0
    rep = np.sort(o[1:][again])
    if conv.duplicates == "error":
        chunk = R.docs.strings(ranked_rows(rep[:1]))[0]
        raise DuplicateDocumentError(
            f"run {R.name!r}: chunk {chunk!r} appears more than once in query "
            f"{query_ids[ev[rep[0]]]!r}; pass duplicates='first' to keep its highest-ranked "
            "occurrence"
        )
    if conv.duplicates != "first":
        return ev, ranked_rows, rep, 0, len(rep)
    keep = np.ones(n, dtype=bool)
    keep[rep] = False
    kept = np.flatnonzero(keep)

    def composed(positions: np.ndarray | None = None, values: np.ndarray | None = None) -> Any:
        if values is not None:
            return ranked_rows(values=values)[kept]
        return ranked_rows(kept[positions])

    return ev[keep], composed, empty, len(rep), 0
