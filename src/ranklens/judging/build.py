"""From a :class:`~ranklens.judging.join.Join` to the judged arrays: entries, units first
found, gains and the ideal ranking (:func:`build`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..model import segments as seg
from .condense import condense, fill_unjudged
from .join import Join
from .judged import Judged
from .options import JudgeCounts, JudgeOptions


def _by_query_rank(q: np.ndarray, rank: np.ndarray, *more: np.ndarray) -> tuple[np.ndarray, ...]:
    if len(q) == 0:
        return (q, rank, *more)
    o = seg.order_by(q, rank)
    return (q[o], rank[o], *(m[o] for m in more))


def build(jn: Join, opts: JudgeOptions) -> Judged:
    """Entries, units first found, gains and the ideal, from a join."""
    conv = opts.convention
    m_q, m_rank, m_unit, m_grade, m_repeat = _by_query_rank(
        jn.m_q, jn.m_rank, jn.m_unit, jn.m_grade, jn.m_repeat
    )
    unit_q, unit_g = jn.unit_q, jn.unit_g
    n_q = len(jn.query_ids)

    # entries: one per retrieved row with a label (its highest grade)
    starts = _rank_starts(m_q, m_rank)
    if len(starts) == len(m_q) and _each_once(m_unit, len(unit_q)):
        # every rank found one unit and every unit was found once (plain labels, no
        # document twice): entries, units first found and gains are the matches themselves
        e_q, e_rank, e_repeat, e_label = m_q, m_rank, m_repeat, m_grade
        u_q, u_rank, u_grade, u_id = m_q, m_rank, m_grade, m_unit
        g_q, g_rank, g_grade = m_q, m_rank, m_grade
    else:
        e_q, e_rank, e_repeat = m_q[starts], m_rank[starts], m_repeat[starts]
        e_label = _max_from(m_grade, starts)

        # units first found: each unit at its lowest matched rank
        o = seg.order_by(m_unit, m_rank)
        firsts = seg.run_starts(m_unit[o])
        fo = o[firsts]
        u_q, u_rank, u_grade, u_id = _by_query_rank(m_q[fo], m_rank[fo], m_grade[fo], m_unit[fo])

        # gains: per rank, the highest grade among units first found there
        starts = _rank_starts(u_q, u_rank)
        g_q, g_rank, g_grade = u_q[starts], u_rank[starts], _max_from(u_grade, starts)
    nz = g_grade != 0 if conv.negative_gain else g_grade > 0
    g_q, g_rank, g_grade = g_q[nz], g_rank[nz], g_grade[nz]

    # ideal grades per query, descending
    ideal_sel = unit_g != 0 if conv.negative_gain else unit_g > 0
    iq, ig = unit_q[ideal_sel], unit_g[ideal_sel]
    if ig.dtype.kind == "f":  # judged grades with fractions (freshness rules)
        io = np.lexsort((-ig, iq))
    else:
        io = seg.order_by(iq, ig.max() - ig) if len(ig) else np.zeros(0, dtype=np.int64)
    ideal_grade = ig[io]
    ideal_off = np.searchsorted(iq[io], np.arange(n_q + 1)).astype(np.int64)
    level = max(int(opts.relevance_level), 1)
    has_rel = np.zeros(n_q, dtype=bool)
    has_rel[unit_q[unit_g >= level]] = True
    counts = JudgeCounts(
        queries_evaluated=n_q,
        queries_missing=len(jn.missing_ids),
        queries_ignored=len(jn.ignored_ids),
        queries_no_relevant_skipped=len(jn.no_rel_ids),
        duplicates_dropped=jn.dropped,
        duplicates_kept=jn.kept_dups,
        missing_ids=jn.missing_ids,
        ignored_ids=jn.ignored_ids,
        no_relevant_ids=jn.no_rel_ids,
        hits_retrieved=int(jn.lens.sum()),
        hits_labelled=len(e_q),
        failed_ids=sorted(jn.failures),
        failures=jn.failures,
        tied_documents=jn.tied_docs,
        tie_queries=jn.tie_queries,
        chunks_unlocated=jn.chars.unlocated if jn.chars is not None else 0,
        chunks_relocated=jn.chars.relocated if jn.chars is not None else 0,
        span_alternatives=jn.chars.alternatives if jn.chars is not None else 0,
        queries_without_relevant=int((~has_rel).sum()),
        without_relevant_ids=[str(q) for q in jn.query_ids[~has_rel]],
        labelled_documents=len(jn.doc_q),
        freshness=dict(jn.fresh.counts) if jn.fresh is not None else None,
    )

    def i64(x: np.ndarray) -> np.ndarray:
        return x.astype(np.int64, copy=False)

    grade_type = np.float64 if jn.unit_g.dtype.kind == "f" else np.int64  # fractions stay

    def gt(x: np.ndarray) -> np.ndarray:
        return x.astype(grade_type, copy=False)

    return Judged(
        query_ids=jn.query_ids,
        lens=jn.lens,
        missing=jn.missing,
        e_q=i64(e_q),
        e_rank=i64(e_rank),
        e_label=gt(e_label),
        e_repeat=e_repeat,
        u_q=i64(u_q),
        u_rank=i64(u_rank),
        u_grade=gt(u_grade),
        u_id=i64(u_id),
        m_q=m_q,
        m_rank=i64(m_rank),
        m_unit=i64(m_unit),
        m_grade=gt(m_grade),
        g_q=i64(g_q),
        g_rank=i64(g_rank),
        g_grade=gt(g_grade),
        rep_q=i64(jn.rep_q),
        rep_rank=i64(jn.rep_rank),
        unit_q=i64(unit_q),
        unit_g=gt(unit_g),
        doc_q=i64(jn.doc_q),
        doc_label=gt(jn.doc_label),
        ideal_off=ideal_off,
        ideal_grade=gt(ideal_grade),
        n_gt_ids=jn.n_gt_ids,
        options=opts,
        counts=counts,
        run_name=jn.run_name,
        max_grade=jn.max_grade,
        m_repeat=m_repeat,
        unit_intent=jn.unit_intent,
        members=jn.members,
        ties=jn.ties,
        join=jn,
        chars=jn.chars,
        fresh=jn.fresh,
    )


def condensed_pair(judged: Judged) -> Judged:
    """``judged`` as condensed lists (unjudged documents removed, the judged ones moved up:
    trec_eval ``-J``, ir_measures' ``judged_only=True``), built once from its join."""
    if judged.options.judged_only:
        return judged
    if judged.condensed_cache is None:
        if judged.join is None:
            raise InputError(
                "judged_only=True needs the judged pair's join, and this Judged keeps none "
                "(made by hand, not by ranklens.judge): judge the pair with ranklens.judge"
            )
        opts = replace(judged.options, judged_only=True)
        judged.condensed_cache = build(condense(judged.join), opts)
    return judged.condensed_cache


def _each_once(unit: np.ndarray, n_units: int) -> bool:
    """Whether no unit number appears twice in ``unit``."""
    return len(unit) == 0 or int(np.bincount(unit, minlength=n_units).max()) <= 1


def _rank_starts(q: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Indices where a new (query, rank) begins in arrays sorted by (query, rank)."""
    return seg.run_start_index(q, rank)


def _max_from(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Maximum of each run of ``values`` beginning at ``starts``."""
    return np.maximum.reduceat(values, starts) if len(starts) else values[:0]


def filled_pair(judged: Judged) -> Judged:
    """``judged`` with every unjudged retrieved document taken as relevant at the relevance
    level (:func:`~.condense.fill_unjudged`), built once from its join: the upper end of
    what missing labels can do to a metric that rewards relevant documents."""
    if judged.filled_cache is None:
        if judged.join is None:
            raise InputError(
                "filling unjudged documents needs the judged pair's join, and this Judged keeps "
                "none (made by hand, not by ranklens.judge): judge the pair with ranklens.judge"
            )
        level = max(int(judged.options.relevance_level), 1)
        judged.filled_cache = build(fill_unjudged(judged.join, level), judged.options)
    return judged.filled_cache
