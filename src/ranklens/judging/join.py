"""The columnar join: a run and its qrels, interned as codes, matched on (query, document)
into a :class:`Join`, the raw material :func:`~ranklens.judging.build.build` turns into
judged arrays. Ordering, duplicates and missing or unlabelled queries are settled here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DuplicateDocumentError, InputError
from ..model import Qrels, Run
from ..model import segments as seg
from ..model.vocab import translate
from .options import JudgeOptions


@dataclass
class Join:
    """One (qrels, run) pair matched, for the evaluated queries (index ``0..n-1``).

    * ``query_ids``, ``missing`` (absent from the run), ``lens`` (documents retrieved);
    * matches ``m_q``, ``m_rank``, ``m_unit``, ``m_grade``, ``m_repeat``: every (retrieved
      row, unit it belongs to) pair; repeats ``rep_q``, ``rep_rank`` (rows kept by the
      convention that repeat a document);
    * from the qrels: units ``unit_q``, ``unit_g``; judged documents ``doc_q``,
      ``doc_label``; ``n_gt_ids`` (ids with a positive grade per query);
    * what was counted: ``missing_ids``, ``ignored_ids``, ``no_rel_ids``, ``dropped``,
      ``kept_dups``; ``failures`` (missing queries whose retrieval failed, id -> error);
      and ``run_name``, ``max_grade``.
    """

    query_ids: np.ndarray
    missing: np.ndarray
    lens: np.ndarray
    m_q: np.ndarray
    m_rank: np.ndarray
    m_unit: np.ndarray
    m_grade: np.ndarray
    m_repeat: np.ndarray
    rep_q: np.ndarray
    rep_rank: np.ndarray
    unit_q: np.ndarray
    unit_g: np.ndarray
    doc_q: np.ndarray
    doc_label: np.ndarray
    n_gt_ids: np.ndarray
    missing_ids: list[str]
    ignored_ids: list[str]
    no_rel_ids: list[str]
    dropped: int
    kept_dups: int
    run_name: str
    max_grade: int
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)


def join_columnar(Q: Qrels, R: Run, opts: JudgeOptions) -> Join:
    """Join columnar qrels and run: per-query list lengths, every (retrieved row, unit)
    match, repeated rows, and the qrels-side arrays of the evaluated queries."""
    conv = opts.convention

    # --- queries ---------------------------------------------------------------------
    if len(Q.query_ids) == 0:
        raise InputError("the qrels label no query: there is nothing to evaluate")
    rq_to_qq = translate(R.query_ids, Q.query_ids)  # run query code -> qrels query code
    present = np.zeros(len(Q.query_ids), dtype=bool)
    present[rq_to_qq[rq_to_qq >= 0]] = True
    ignored_ids = [str(x) for x in R.query_ids[rq_to_qq < 0]]
    missing_ids = [str(x) for x in Q.query_ids[~present]]
    keep_q = np.ones(len(Q.query_ids), dtype=bool) if conv.missing == "zero" else present.copy()
    no_rel_ids: list[str] = []
    if conv.no_relevant == "skip":
        has_rel = np.zeros(len(Q.query_ids), dtype=bool)
        has_rel[Q.q[Q.grade >= opts.relevance_level]] = True
        no_rel = keep_q & ~has_rel
        no_rel_ids = [str(x) for x in Q.query_ids[no_rel]]
        keep_q &= has_rel
    eval_q = np.flatnonzero(keep_q)
    qq_to_eval = np.full(len(Q.query_ids), -1, dtype=np.int64)
    qq_to_eval[eval_q] = np.arange(len(eval_q))
    n_q = len(eval_q)
    if n_q == 0:
        raise InputError(
            f"no query to evaluate: run {R.name!r} shares no query id with the qrels (e.g. run "
            f"{_first(R.query_ids)}, qrels {_first(Q.query_ids)}) and missing queries are skipped"
        )

    # --- run rows in ranking order, mapped to evaluated queries -------------------------
    rq_to_ev = np.where(rq_to_qq >= 0, qq_to_eval[np.maximum(rq_to_qq, 0)], -1)
    if conv.ordering == "given":
        rd, ev = R.d, rq_to_ev[R.q]
    else:
        order = R.row_order(opts.score_precision)
        rd = order.apply(R.d)
        ev = rq_to_ev[R.q if order.within_queries else order.apply(R.q)]
    if len(ev) and ev.min() < 0:
        keep = ev >= 0
        ev, rd = ev[keep], rd[keep]

    # --- qrels rows of evaluated queries --------------------------------------------------
    qsel = qq_to_eval[Q.q] >= 0
    qrow_q = qq_to_eval[Q.q[qsel]]
    qrow_d = Q.d[qsel]
    qrow_g = Q.grade[qsel]
    qrow_u = Q.unit[qsel]
    first_of_unit = seg.run_starts(qrow_u)
    unit_q = qrow_q[first_of_unit]
    unit_g = qrow_g[first_of_unit]
    qrow_unit = np.cumsum(first_of_unit) - 1  # dense unit id of each qrels row
    if Q.grouped:  # judged documents: one per (query, doc), the highest grade of its groups
        dk = qrow_q * np.int64(max(len(Q.doc_ids), 1)) + qrow_d
        o = seg.order_by(dk, qrow_g.max() - qrow_g) if len(dk) else np.zeros(0, np.int64)
        firsts = seg.run_starts(dk[o])
        doc_q, doc_label = qrow_q[o][firsts], qrow_g[o][firsts]
    else:
        doc_q, doc_label = qrow_q, qrow_g

    # --- join run rows with qrels rows on (query, doc) ------------------------------------
    qd_to_rd = translate(Q.doc_ids, R.doc_ids)  # qrels doc code -> run doc code
    qrow_rd = qd_to_rd[qrow_d]
    dbits = max(len(R.doc_ids).bit_length(), 1)
    rkey = ev.astype(np.int64) << dbits
    rkey |= rd
    skey, srow = seg.sorted_with_rows(rkey)
    del rkey
    dropped = kept_dups = 0
    repeat_rows = np.zeros(0, dtype=np.int64)
    if len(skey) > 1 and not R.unique_docs:
        again = seg.repeats(skey)
        if again.any():
            repeat_rows = np.sort(srow[1:][again])
            if conv.duplicates == "error":
                i = int(repeat_rows[0])
                raise DuplicateDocumentError(
                    f"run {R.name!r}: document {R.doc_ids[rd[i]]!r} appears more than once in "
                    f"query {Q.query_ids[eval_q[ev[i]]]!r}; pass duplicates='first' to keep its "
                    "highest-ranked occurrence"
                )
            if conv.duplicates == "first":
                dropped = len(repeat_rows)
                keep_rows = np.ones(len(ev), dtype=bool)
                keep_rows[repeat_rows] = False
                new_index = np.cumsum(keep_rows) - 1
                keep_sorted = np.ones(len(skey), dtype=bool)
                keep_sorted[1:] = ~again
                skey, srow = skey[keep_sorted], new_index[srow[keep_sorted]]
                ev, rd = ev[keep_rows], rd[keep_rows]
                repeat_rows = np.zeros(0, dtype=np.int64)
            else:
                kept_dups = len(repeat_rows)
    lens = np.bincount(ev, minlength=n_q).astype(np.int64)
    # each query's rows are one block (in the run's query order): its first row
    first_row = np.zeros(n_q, dtype=np.int64)
    if len(ev):
        block = seg.run_start_index(ev)
        first_row[ev[block]] = block
    in_run = qrow_rd >= 0
    qkey = (qrow_q[in_run].astype(np.int64) << dbits) | qrow_rd[in_run]
    lo = np.searchsorted(skey, qkey, "left")
    if kept_dups:  # a key may match several run rows
        cnt = np.searchsorted(skey, qkey, "right") - lo
        qrows = np.repeat(np.flatnonzero(in_run), cnt)
        within = np.arange(len(qrows)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        m_row = srow[np.repeat(lo, cnt) + within]  # run row of each match
    else:  # keys are unique: at most one match each
        hit = skey[np.minimum(lo, len(skey) - 1)] == qkey if len(skey) else lo < 0
        qrows = np.flatnonzero(in_run)[hit]
        m_row = srow[lo[hit]]
    m_q = qrow_q[qrows].astype(np.int64)
    m_rank = m_row - first_row[m_q] + 1
    m_unit = qrow_unit[qrows]
    m_grade = qrow_g[qrows]
    is_rep = np.zeros(len(ev), dtype=bool)
    is_rep[repeat_rows] = True
    m_repeat = is_rep[m_row]
    return Join(
        query_ids=Q.query_ids[eval_q],
        missing=~present[eval_q],
        lens=lens,
        m_q=m_q,
        m_rank=m_rank,
        m_unit=m_unit,
        m_grade=m_grade,
        m_repeat=m_repeat,
        rep_q=ev[repeat_rows].astype(np.int64),
        rep_rank=repeat_rows - first_row[ev[repeat_rows]] + 1,
        unit_q=unit_q,
        unit_g=unit_g,
        doc_q=doc_q,
        doc_label=doc_label,
        n_gt_ids=np.bincount(qrow_q[qrow_g > 0], minlength=n_q),
        missing_ids=missing_ids,
        ignored_ids=ignored_ids,
        no_rel_ids=no_rel_ids,
        dropped=dropped,
        kept_dups=kept_dups,
        run_name=R.name,
        max_grade=int(Q.grade.max()) if len(Q.grade) else 0,
        failures={q: R.failures[q] for q in missing_ids if q in R.failures},
    )


def _first(ids: np.ndarray) -> str:
    return repr(str(ids[0])) if len(ids) else "none"
