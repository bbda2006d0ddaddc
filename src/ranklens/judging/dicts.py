"""The join for the commonest Python input, ``{q: {doc: grade}}`` with ``{q: {doc: score}}``,
without interning any document (see :func:`join_dicts`)."""

from __future__ import annotations

from array import array
from itertools import chain, repeat
from typing import Any

import numpy as np

from .join import Join, tie_counts, tied_pairs
from .options import JudgeOptions


def join_dicts(qrels: Any, run: Any, opts: JudgeOptions) -> Join | None:
    """The join for the commonest Python input, ``{q: {doc: grade}}`` with ``{q: {doc:
    score}}``, without interning any document: only the judged documents are looked up in
    the run's dicts, and each one's rank is the number of documents of its query with a
    higher score, plus those tied with it whose id sorts above it (trec_eval's order).
    Returns None when the input is anything else, for the columnar join."""
    conv = opts.convention
    if (
        conv.ordering != "score"
        or opts.ties != "trec"
        or type(qrels) is not dict
        or type(run) is not dict
        or not all(type(v) is dict for v in qrels.values())
        or not all(type(v) is dict for v in run.values())
        or set(map(type, qrels)) - {str}
        or set(map(type, run)) - {str}
    ):
        return None
    q_vals = list(qrels.values())
    qrel_docs = list(chain.from_iterable(q_vals))
    if set(map(type, qrel_docs)) - {str} or "" in qrel_docs or "" in qrels:
        return None
    r_vals = list(run.values())
    r_lens = np.fromiter(map(len, r_vals), dtype=np.int64, count=len(r_vals))
    n_rows = int(r_lens.sum())
    # the first key of each list decides (a list mixing id types is bad input either way);
    # the columnar path converts integer ids and names bad ones
    firsts = [next(iter(v)) for v in r_vals if v]
    if set(map(type, firsts)) - {str} or any("" in v for v in r_vals) or "" in run:
        return None
    try:
        grades = np.fromiter(
            chain.from_iterable(v.values() for v in q_vals), dtype=np.int64, count=len(qrel_docs)
        )
        # array("d") takes only real numbers (np.fromiter would parse strings such as "0.5")
        scores = np.frombuffer(
            array("d", chain.from_iterable(v.values() for v in r_vals)), dtype=np.float64
        )
    except (TypeError, ValueError, OverflowError):
        return None
    grade_types = set(map(type, chain.from_iterable(v.values() for v in q_vals)))
    if grade_types - {int} or not np.isfinite(scores).all():
        return None  # floats/bools as grades, NaN scores: the columnar path checks them
    if opts.score_precision == "float32":
        scores = scores.astype(np.float32).astype(np.float64)

    # queries, in the sorted order the columnar path uses
    qids = sorted(qrels)
    present_all = np.fromiter((q in run for q in qids), dtype=bool, count=len(qids))
    keep = present_all.copy() if conv.missing == "skip" else np.ones(len(qids), dtype=bool)
    no_rel_ids: list[str] = []
    if conv.no_relevant == "skip":
        lv = opts.relevance_level
        has_rel = np.fromiter(
            (any(g >= lv for g in qrels[q].values()) for q in qids), dtype=bool, count=len(qids)
        )
        no_rel_ids = [q for q, k, h in zip(qids, keep, has_rel) if k and not h]
        keep &= has_rel
    eval_ids = [q for q, k in zip(qids, keep) if k]
    n_q = len(eval_ids)
    if n_q == 0:
        return None  # nothing to evaluate: the columnar join says why
    pos_of = {q: i for i, q in enumerate(eval_ids)}

    # qrels rows of evaluated queries (each row its own unit)
    q_pos = np.fromiter((pos_of.get(q, -1) for q in qrels), dtype=np.int64, count=len(qrels))
    q_lens = np.fromiter(map(len, q_vals), dtype=np.int64, count=len(q_vals))
    row_q = np.repeat(q_pos, q_lens)
    sel = row_q >= 0
    unit_q, unit_g = row_q[sel], grades[sel]

    # list lengths and each run query's rows, sorted by score descending within the query
    r_off = np.concatenate(([0], np.cumsum(r_lens)))
    lens = np.zeros(n_q, dtype=np.int64)
    seg_start = np.zeros(n_q, dtype=np.int64)
    run_ids = list(run)
    for i, q in enumerate(run_ids):
        p = pos_of.get(q)
        if p is not None:
            lens[p] = r_lens[i]
            seg_start[p] = r_off[i]
    desc = np.ones(n_rows, dtype=bool)
    desc[1:] = scores[1:] <= scores[:-1]
    bounds = r_off[1:-1]
    desc[bounds[bounds < n_rows]] = True  # query boundaries
    if not desc.all():
        return None  # dicts not in score order: the columnar path sorts them
    run_pos = np.fromiter((pos_of.get(q, -1) for q in run_ids), dtype=np.int64, count=len(run_ids))
    run_row_q = np.repeat(run_pos, r_lens)
    tied_docs, tie_queries = tie_counts(run_row_q, tied_pairs(run_row_q, scores))

    # judged documents retrieved: their scores, looked up in the run's dicts
    empty: dict[str, float] = {}
    nan = float("nan")
    found = np.fromiter(
        chain.from_iterable(
            map((run.get(q) or empty).get, lab, repeat(nan)) for q, lab in qrels.items()
        ),
        dtype=np.float64,
        count=len(qrel_docs),
    )
    hit = sel & ~np.isnan(found)
    h_rows = np.flatnonzero(hit)
    h_q = row_q[h_rows]
    s = found[h_rows]
    if opts.score_precision == "float32":
        s = s.astype(np.float32).astype(np.float64)
    start, end = seg_start[h_q], seg_start[h_q] + lens[h_q]
    above = _count_desc(scores, start, end, s, strict=True)  # scores > s
    # s itself sits at start + above; a tie needs the next score to equal it too
    nxt = np.minimum(start + above + 1, max(n_rows - 1, 0))
    maybe = (start + above + 1 < end) & (scores[nxt] == s)
    tied = np.ones(len(s), dtype=np.int64)
    if maybe.any():
        tied[maybe] = (
            _count_desc(scores, start[maybe], end[maybe], s[maybe], strict=False) - above[maybe]
        )
    rank = above + 1
    # ties: among documents with the same score, higher ids rank first. The dicts are in
    # score order, so a tie is a contiguous slice of the query's keys.
    keys_of: dict[int, list[str]] = {}
    for i in np.flatnonzero(tied > 1).tolist():
        p = int(h_q[i])
        keys = keys_of.get(p)
        if keys is None:
            keys = keys_of[p] = list(run[eval_ids[p]])
        first = int(above[i])
        doc = qrel_docs[h_rows[i]]
        rank[i] += len([d for d in keys[first : first + int(tied[i])] if d > doc])

    present = present_all[keep]
    qrel_q = row_q  # for counts of positive grades
    return Join(
        query_ids=np.array(eval_ids, dtype=object),
        missing=~present,
        lens=lens,
        m_q=h_q,
        m_rank=rank,
        m_unit=np.cumsum(sel)[h_rows] - 1,
        m_grade=grades[h_rows],
        m_repeat=np.zeros(len(h_rows), dtype=bool),
        rep_q=np.zeros(0, dtype=np.int64),
        rep_rank=np.zeros(0, dtype=np.int64),
        unit_q=unit_q,
        unit_g=unit_g,
        doc_q=unit_q,
        doc_label=unit_g,
        n_gt_ids=np.bincount(qrel_q[sel][grades[sel] > 0], minlength=n_q),
        missing_ids=[q for q, p in zip(qids, present_all) if not p],
        ignored_ids=sorted(q for q in run if q not in qrels),
        no_rel_ids=no_rel_ids,
        dropped=0,
        kept_dups=0,
        run_name="run",
        max_grade=int(grades.max()) if len(grades) else 0,
        tied_docs=tied_docs,
        tie_queries=tie_queries,
    )


def _count_desc(
    scores: np.ndarray, start: np.ndarray, end: np.ndarray, s: np.ndarray, strict: bool
) -> np.ndarray:
    """In segments ``scores[start:end]`` sorted descending, the number of entries ``> s``
    (``strict``) or ``>= s``: one vectorised binary search over all segments at once."""
    lo, hi = start.copy(), end.copy()
    while True:
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        v = scores[np.minimum(mid, len(scores) - 1)]
        go_right = active & ((v > s) if strict else (v >= s))
        lo = np.where(go_right, mid + 1, lo)
        hi = np.where(active & ~go_right, mid, hi)
    return lo - start
