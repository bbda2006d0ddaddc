"""The columnar join: a run and its qrels, interned as codes, matched on (query, document)
into a :class:`Join`, the raw material :func:`~ranklens.judging.build.build` turns into
judged arrays. Ordering, duplicates and missing or unlabelled queries are settled here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from ..errors import InputError
from ..model import Qrels, Run
from ..model import segments as seg
from ..model.spans import SpanLabels
from ..model.vocab import translate
from .budget import BudgetInputs, RankedRows
from .docmatch import match_documents
from .freshness import FreshInput, judge_versions
from .options import JudgeOptions
from .overlap import get_rule
from .overlap_check import no_relevant_query, no_shared_query
from .spanmatch import SpanChars, judged_nonrelevant, match_spans


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
      and ``run_name``, ``max_grade``;
    * for the diversity measures, when the qrels have intents (grouped ground truth or
      subtopics): ``unit_intent`` (each unit's intent, dense per evaluated query) and
      ``members`` (query, document code, unit) of every qrels row, document codes in id
      order; None for plain labels;
    * under ``ties="expected"``: ``ties`` (query, first rank, size) of every run of two or
      more documents with equal scores; always: ``tied_docs`` and ``tie_queries``, the
      documents in such runs and the queries that have one;
    * for span labels: ``chars`` (:class:`~.spanmatch.SpanChars`), the evidence and
      retrieved characters of each ranked row;
    * with document versions: ``fresh`` (:class:`~.freshness.FreshRanks`), each ranked
      row's status and the ranks of each versioned evidence group's versions;
    * ``ranked`` (:class:`~.budget.RankedRows`): the kept ranked rows by reference, read
      only when a context budget asks for the chunks' sizes (None on the dict join), and
      ``budget`` (:class:`~.budget.BudgetInputs`), what else a budget reads (set by
      :func:`~ranklens.judging.judge`).
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
    unit_intent: np.ndarray | None = None
    members: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    ties: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    tied_docs: int = 0
    tie_queries: int = 0
    chars: SpanChars | None = None
    fresh: Any = None
    ranked: RankedRows | None = None
    budget: BudgetInputs | None = None


def join_columnar(
    Q: Qrels,
    R: Run,
    opts: JudgeOptions,
    name: str | None = None,
    chunking: dict[str, np.ndarray] | None = None,
    fresh: FreshInput | None = None,
) -> Join:
    """Join columnar qrels and run: per-query list lengths, every (retrieved row, unit)
    match, repeated rows, and the qrels-side arrays of the evaluated queries; with
    ``fresh``, outdated versions judged by its rule (:mod:`.freshness`)."""
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
        if no_rel_ids:
            raise no_relevant_query(name or R.name, no_rel_ids, opts.relevance_level, conv.name)
        raise no_shared_query(name or R.name, ignored_ids, [str(x) for x in Q.query_ids])

    # --- run rows in ranking order, mapped to evaluated queries -------------------------
    rq_to_ev = np.where(rq_to_qq >= 0, qq_to_eval[np.maximum(rq_to_qq, 0)], -1)
    order = R.row_order(opts.score_precision, opts.ties) if conv.ordering != "given" else None
    ev = rq_to_ev[R.q if order is None or order.within_queries else order.apply(R.q)]
    kept = np.flatnonzero(ev >= 0) if len(ev) and ev.min() < 0 else None
    if kept is not None:
        ev = ev[kept]

    def ranked_rows(positions: np.ndarray | None = None, values: np.ndarray | None = None) -> Any:
        """The original run row of each kept ranked row at ``positions``; or, given
        ``values`` (one per run row), those values in kept ranked order."""
        if values is not None:
            x = values if order is None else order.apply(values)
            return x if kept is None else x[kept]
        p = cast(np.ndarray, positions) if kept is None else kept[positions]  # given here
        return p if order is None else order.source(p)

    # --- qrels rows of evaluated queries --------------------------------------------------
    qsel = qq_to_eval[Q.q] >= 0
    q_rows = np.flatnonzero(qsel)
    qrow_q = qq_to_eval[Q.q[q_rows]]
    qrow_g = Q.grade[q_rows]
    qrow_u = Q.unit[q_rows]
    first_of_unit = seg.run_starts(qrow_u)
    unit_q = qrow_q[first_of_unit]
    unit_g = qrow_g[first_of_unit]
    qrow_unit = np.cumsum(first_of_unit) - 1  # dense unit id of each qrels row
    if Q.grouped:  # judged documents: one per (query, doc), the highest grade of its groups
        qrow_d = Q.d[q_rows]
        dk = qrow_q * np.int64(max(len(Q.doc_ids), 1)) + qrow_d
        o = seg.order_by(dk, qrow_g.max() - qrow_g) if len(dk) else np.zeros(0, np.int64)
        firsts = seg.run_starts(dk[o])
        doc_q, doc_label = qrow_q[o][firsts], qrow_g[o][firsts]
    else:
        doc_q, doc_label = qrow_q, qrow_g
    unit_intent = members = None
    if Q.grouped:
        unit_intent = np.arange(len(unit_q), dtype=np.int64)
        if Q.intent is not None:
            unit_intent = np.unique(Q.intent[q_rows][first_of_unit], return_inverse=True)[1]
        members = (qrow_q.astype(np.int64), Q.d[q_rows].astype(np.int64), qrow_unit)
        if isinstance(Q, SpanLabels):  # the ideal ranking's items are the spans themselves
            by_place = np.lexsort((Q.start[q_rows], Q.d[q_rows]))
            place = np.empty(len(q_rows), dtype=np.int64)
            place[by_place] = np.arange(len(q_rows))
            members = (members[0], place, qrow_unit)

    # --- join run rows with qrels rows on (query, doc) ------------------------------------
    chars = None
    if isinstance(Q, SpanLabels):  # chunks against evidence spans, by overlap
        dm, chars = match_spans(Q, R, conv, get_rule(opts.overlap), opts.relevance_level, ev,
                                ranked_rows, q_rows, qrow_q, n_q, Q.query_ids[eval_q],
                                chunking)  # fmt: skip
    else:
        dm = match_documents(Q, R, conv, ev, ranked_rows, q_rows, qrow_q, n_q, Q.query_ids[eval_q])
    ev, repeat_rows, first_row = dm.ev, dm.repeat_rows, dm.first_row
    m_q = qrow_q[dm.qrows].astype(np.int64)
    m_unit = qrow_unit[dm.qrows]
    m_grade = qrow_g[dm.qrows]
    m_row = dm.m_row
    if chars is not None and len(chars.judged_rows):  # read, and not evidence: grade 0
        n_units = len(unit_q)
        m_q, m_unit, m_grade, m_row, unit_q, unit_g = judged_nonrelevant(
            chars, ev, m_q, m_unit, m_grade, m_row, unit_q, unit_g
        )
        if unit_intent is not None:  # each grade-0 unit an intent of its own
            start = int(unit_intent.max(initial=-1)) + 1
            unit_intent = np.concatenate(
                (unit_intent, start + np.arange(len(unit_q) - n_units, dtype=np.int64))
            )
    at = None  # each ranked row's position, when ties move rows
    ties = None
    tied = (0, 0)
    if R.scored and conv.ordering != "given":
        scores = dm.ranked_rows(values=R.ranking_scores(opts.score_precision))
        pairs = tied_pairs(ev, scores)  # found once, read by all three below
        tied = tie_counts(ev, pairs)
        if opts.ties in ("best", "worst") and tied[0]:
            at = extreme_tie_positions(pairs, dm.m_row, m_grade, opts.ties == "best")
        if opts.ties == "expected":
            _expected_ties_allowed(Q, conv)
            ties = tie_runs(ev, pairs, first_row)
    if opts.ties == "expected" and ties is None:  # a ranked list (no scores): nothing ties
        _expected_ties_allowed(Q, conv)
        none = np.zeros(0, dtype=np.int64)
        ties = (none, none, none)
    m_rank = (m_row if at is None else at[m_row]) - first_row[m_q] + 1
    m_repeat = np.zeros(len(m_row), dtype=bool)
    if len(repeat_rows):
        is_rep = np.zeros(len(ev), dtype=bool)
        is_rep[repeat_rows] = True
        m_repeat = is_rep[m_row]
    pos = np.arange(len(ev), dtype=np.int64) if at is None else at
    if chars is not None:
        chars.rank = pos - first_row[ev] + 1
        chars.q = ev.astype(np.int64)
    jn = Join(
        query_ids=Q.query_ids[eval_q],
        missing=~present[eval_q],
        lens=dm.lens,
        m_q=m_q,
        m_rank=m_rank,
        m_unit=m_unit,
        m_grade=m_grade,
        m_repeat=m_repeat,
        rep_q=ev[repeat_rows].astype(np.int64),
        rep_rank=(repeat_rows if at is None else at[repeat_rows]) - first_row[ev[repeat_rows]] + 1,
        unit_q=unit_q,
        unit_g=unit_g,
        doc_q=doc_q,
        doc_label=doc_label,
        n_gt_ids=np.bincount(qrow_q[qrow_g > 0], minlength=n_q),
        missing_ids=missing_ids,
        ignored_ids=ignored_ids,
        no_rel_ids=no_rel_ids,
        dropped=dm.dropped,
        kept_dups=dm.kept_dups,
        run_name=R.name,
        max_grade=int(Q.grade.max()) if len(Q.grade) else 0,
        failures={q: R.failures[q] for q in missing_ids if q in R.failures},
        unit_intent=unit_intent,
        members=members,
        ties=ties,
        tied_docs=tied[0],
        tie_queries=tied[1],
        chars=chars,
        ranked=RankedRows(R, dm.ranked_rows, ev, first_row, at),
    )
    if fresh is not None:  # outdated versions: grades by the rule, per-rank status
        judge_versions(jn, fresh, Q, q_rows, dm.ranked_rows(np.arange(len(ev))), R,
                       pos - first_row[ev] + 1, ev)  # fmt: skip
    return jn


def _expected_ties_allowed(Q: Qrels, conv: Any) -> None:
    """``ties="expected"`` needs plain labels, a scored ranking and no repeated document."""
    why = ""
    if Q.grouped:
        why = "grouped ground truth"
    elif conv.duplicates != "error" or conv.ordering != "score" or conv.unit_average:
        why = f"the {conv.name} convention"
    if why:
        raise InputError(
            f"ties='expected' is defined for plain labels, scored runs and duplicates='error'; "
            f"not for {why}"
        )


def tied_pairs(q: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """One shorter than ``q``: entry ``i`` is True when ranked row ``i`` ties with row
    ``i + 1`` (same evaluated query, equal score; rows of other queries are < 0)."""
    return seg.repeats(q, scores) & (q[1:] >= 0)


def tie_runs(
    q: np.ndarray, tied: np.ndarray, first_row: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, first rank, size) of each run of two or more equal scores in the ranked
    rows ``q`` (evaluated query per row) with their :func:`tied_pairs`, ``first_row`` the
    position of each query's first row."""
    start = np.flatnonzero(tied & ~np.concatenate(([False], tied[:-1])))
    end = np.flatnonzero(tied & ~np.concatenate((tied[1:], [False]))) + 1
    tq = q[start].astype(np.int64)
    return tq, start - first_row[tq] + 1, end - start + 1


def tie_counts(q: np.ndarray, tied: np.ndarray) -> tuple[int, int]:
    """(documents, queries) in runs of equal scores, from the ranked rows' query ``q`` and
    their :func:`tied_pairs`."""
    if not tied.any():
        return 0, 0
    member = np.zeros(len(q), dtype=bool)
    member[1:] |= tied
    member[:-1] |= tied
    # each query's rows are one block: its members are consecutive
    return int(member.sum()), int(seg.run_starts(q[member]).sum())


def extreme_tie_positions(
    tied: np.ndarray, m_row: np.ndarray, m_grade: np.ndarray, best: bool
) -> np.ndarray:
    """The position of each ranked row once every run of tied scores (:func:`tied_pairs`)
    is reordered in the run's favour (``best``: judged documents first by grade
    descending, unjudged last) or against it (unjudged first, then judged by grade
    ascending); ``m_row``/``m_grade`` are the rows matched to labels and their grades.
    Ranks outside tied runs stay."""
    n = len(tied) + 1
    grade = np.full(n, -np.inf)
    np.maximum.at(grade, m_row, m_grade.astype(np.float64))
    sign = -1.0 if best else 1.0  # best: grade descending, unjudged (+inf) last
    key = np.where(np.isfinite(grade), sign * grade, -sign * np.inf)
    tie_group = np.cumsum(np.concatenate(([True], ~tied)))
    order = np.lexsort((np.arange(n), key, tie_group))
    at = np.empty(n, dtype=np.int64)
    at[order] = np.arange(n, dtype=np.int64)
    return at
