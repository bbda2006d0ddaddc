"""Judging: the one place where documents are looked up.

:func:`judge` joins a run with its qrels and turns the pair into flat per-rank arrays (CSR
layout: query ``i`` owns ranks ``off[i]:off[i+1]``). Every metric is then a vectorised
function of those arrays and never touches a document id.

Rules (each one is trec_eval's unless an option says otherwise):

* **Ordering.** A scored run is ranked by score descending, then document id descending in
  byte order (trec_eval's ``comp_sim_docno``); the rank column of a TREC file is ignored.
  A run of ranked lists without scores keeps the given order.
* **Relevance.** A document is relevant at level ℓ when its grade is at least ℓ
  (trec_eval ``-l``); ℓ applies to the binary measures only: nDCG's gains are the raw grades.
* **Negative grades** are judged (they count for ``judged@k``) but never relevant, have zero
  gain, and are neither relevant nor non-relevant for bpref (trec_eval's "pooled but
  unjudged").
* **Duplicates.** A document twice in one query of a run is an error naming both by
  default; ``duplicates="first"`` keeps its highest-ranked occurrence and counts the rest
  (conventions may keep them: see :mod:`ranklens.conventions`).
* **Missing queries.** A query with labels but absent from the run is scored 0 and counted
  in the mean (trec_eval ``-c``) by default; ``missing="skip"`` leaves it out. Queries of
  the run with no labels are ignored. Both counts are reported.
* **Grouped ground truth.** Each group is one unit: it is found at the rank of its first
  retrieved member, where it counts once (one relevant document, the group's grade as
  gain); later members of a found group are redundant (not relevant, no gain, and not
  non-relevant for bpref either). A document that belongs to several groups finds all of
  them at its rank: the rank counts as one relevant document for precision, as the number of
  groups it newly finds for recall and AP, and its gain is the highest grade among them.
  This keeps every measure within [0, 1] (the ideal ranking holds one group per rank).

The judged arrays are sparse: besides each query's list length, only the retrieved documents
that have a label are kept (with their rank), so every metric costs time in proportion to
the judged documents retrieved, not to the length of the run.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain, repeat
from typing import Any

import numpy as np

from . import _segments as seg
from ._vocab import translate
from .conventions import Convention, get_convention
from .errors import DuplicateDocumentError, InputError
from .qrels import Qrels, QrelsLike
from .runs import Run, RunLike

_SWITCHES = set(Convention.__dataclass_fields__) - {"name"}


@dataclass(frozen=True)
class JudgeOptions:
    """How a (qrels, run) pair is judged.

    Attributes:
        relevance_level: ℓ, the smallest grade that counts as relevant for binary measures
            (trec_eval ``-l``; default 1). A metric may override it (``P(rel=2)@10``).
        score_precision: ``"float64"`` (default, trec_eval 10) or ``"float32"`` (scores
            compared as float32 when ranking, as trec_eval 9 and pytrec_eval do).
        convention: the switches of :mod:`ranklens.conventions` (default ``trec``); any
            switch may also be given directly, e.g. ``duplicates="first"``,
            ``missing="skip"``.
    """

    relevance_level: int = 1
    score_precision: str = "float64"
    convention: Convention = field(default_factory=lambda: get_convention("trec"))

    def __post_init__(self) -> None:
        lv = self.relevance_level
        if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)):
            raise InputError(f"relevance_level must be an integer, got {lv!r}")
        if lv < 0:
            raise InputError(f"relevance_level must be >= 0, got {lv}")
        if self.score_precision not in ("float64", "float32"):
            raise InputError(
                f"score_precision must be one of float64, float32; got {self.score_precision!r}"
            )
        if not isinstance(self.convention, Convention):
            object.__setattr__(self, "convention", get_convention(self.convention))

    @classmethod
    def build(cls, options: JudgeOptions | None = None, **kwargs: Any) -> JudgeOptions:
        """Options from a base plus keyword arguments; convention switches given by name
        (``duplicates="first"``) derive a convention from the base one."""
        opts = options or cls()
        switches = {k: kwargs.pop(k) for k in list(kwargs) if k in _SWITCHES}
        if "convention" in kwargs:
            kwargs["convention"] = get_convention(kwargs["convention"])
        unknown = set(kwargs) - {"relevance_level", "score_precision", "convention"}
        if unknown:
            raise TypeError(f"unknown judging option(s): {', '.join(sorted(unknown))}")
        opts = replace(opts, **kwargs) if kwargs else opts
        if switches:
            changed = {k: v for k, v in switches.items() if getattr(opts.convention, k) != v}
            if changed:
                opts = replace(opts, convention=opts.convention.with_(**changed))
        return opts

    @property
    def duplicates(self) -> str:
        return self.convention.duplicates

    @property
    def missing(self) -> str:
        return self.convention.missing


@dataclass
class JudgeCounts:
    """What judging left out or changed, so nothing is silently dropped."""

    queries_evaluated: int = 0
    queries_missing: int = 0
    queries_ignored: int = 0
    queries_no_relevant_skipped: int = 0
    duplicates_dropped: int = 0
    duplicates_kept: int = 0
    missing_ids: list[str] = field(default_factory=list)
    ignored_ids: list[str] = field(default_factory=list)
    no_relevant_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "queries_evaluated": self.queries_evaluated,
            "queries_missing": self.queries_missing,
            "queries_ignored": self.queries_ignored,
            "queries_no_relevant_skipped": self.queries_no_relevant_skipped,
            "duplicates_dropped": self.duplicates_dropped,
            "duplicates_kept": self.duplicates_kept,
        }


def _by_query_rank(q: np.ndarray, rank: np.ndarray, *more: np.ndarray) -> tuple:
    if len(q) == 0:
        return (q, rank, *more)
    o = seg.order_by(q, rank)
    return (q[o], rank[o], *(m[o] for m in more))


class Judged:
    """A judged (qrels, run) pair, independent of ℓ; sparse per-rank tables sorted by
    (query, rank):

    * ``lens``: documents retrieved per query (duplicates kept by the convention included);
    * entries (``e_q``, ``e_rank``, ``e_label``, ``e_repeat``): every retrieved document that
      has a label (its highest grade), with rank (1-based) and whether it repeats an earlier
      document of the list;
    * units first found (``u_q``, ``u_rank``, ``u_grade``, ``u_id``): each ground-truth unit at
      the rank where it is first retrieved;
    * matches (``m_q``, ``m_rank``, ``m_unit``, ``m_grade``): every (retrieved row, unit it
      belongs to) pair, repeats included;
    * gains (``g_q``, ``g_rank``, ``g_grade``): per rank, the highest grade among units first
      found there;
    * repeats (``rep_q``, ``rep_rank``): every repeated row kept by the convention;
    * per query from the qrels: units (``unit_q``, ``unit_g``), judged documents (``doc_q``,
      ``doc_label``), ideal grades (``ideal_off``, ``ideal_grade``, descending) and
      ``n_gt_ids`` (ground-truth ids with a positive grade).
    """

    def __init__(self, **arrays: Any) -> None:
        self.__dict__.update(arrays)
        self._views: dict[int, LevelView] = {}

    query_ids: np.ndarray
    lens: np.ndarray
    missing: np.ndarray
    options: JudgeOptions
    counts: JudgeCounts
    run_name: str
    max_grade: int

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def convention(self) -> Convention:
        return self.options.convention

    @cached_property
    def width(self) -> int:
        """A stride for (query, rank) keys: larger than any rank."""
        return int(self.lens.max(initial=0)) + 2

    def depth(self, k: int | None) -> np.ndarray:
        """Documents in the top k of each query (the list length without k)."""
        return self.lens if k is None else np.minimum(self.lens, k)

    def view(self, level: int | None = None) -> LevelView:
        """Arrays at relevance level ``level`` (default: the options' level)."""
        lv = self.options.relevance_level if level is None else int(level)
        v = self._views.get(lv)
        if v is None:
            v = self._views[lv] = LevelView(self, lv)
        return v

    def evaluate(self, metrics: Any) -> Any:
        """Compute metrics on this judged pair (no second judging)."""
        from .evaluation import Evaluation

        return Evaluation.from_judged(self, metrics)

    def __repr__(self) -> str:
        return (
            f"Judged({self.n_queries} queries, {int(self.lens.sum())} ranks, "
            f"{len(self.e_q)} judged, run={self.run_name!r}, convention={self.convention.name})"
        )


class LevelView:
    """Judged arrays at one relevance level ℓ, computed lazily and cached."""

    def __init__(self, judged: Judged, level: int) -> None:
        self.j = judged
        self.level = level

    @cached_property
    def R(self) -> np.ndarray:
        """Number of relevant units per query (grade >= ℓ), retrieved or not."""
        j = self.j
        return np.bincount(j.unit_q[j.unit_g >= self.level], minlength=j.n_queries)

    @cached_property
    def N_nonrel(self) -> np.ndarray:
        """Number of judged non-relevant documents per query (0 <= grade < ℓ)."""
        j = self.j
        keep = (j.doc_label >= 0) & (j.doc_label < self.level)
        return np.bincount(j.doc_q[keep], minlength=j.n_queries)

    @cached_property
    def hits(self) -> tuple[np.ndarray, np.ndarray]:
        """(query, rank) of every relevant unit at the rank where it is first found."""
        j = self.j
        keep = j.u_grade >= self.level
        return j.u_q[keep], j.u_rank[keep]

    @cached_property
    def credit(self) -> tuple[np.ndarray, np.ndarray]:
        """(query, rank) of the ranks that count as relevant documents: where a relevant
        unit is first found or, when the convention counts duplicates, every occurrence of
        a relevant document."""
        j = self.j
        if j.convention.duplicates == "count":
            keep = j.e_label >= self.level
            return j.e_q[keep], j.e_rank[keep]
        hq, hr = self.hits
        if len(hq) < 2:
            return hq, hr
        new = np.ones(len(hq), dtype=bool)
        new[1:] = (hq[1:] != hq[:-1]) | (hr[1:] != hr[:-1])
        return hq[new], hr[new]

    @cached_property
    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """(query, rank) of distinct relevant documents retrieved (repeats not counted)."""
        j = self.j
        if j.convention.duplicates == "count":
            keep = (j.e_label >= self.level) & ~j.e_repeat
            return j.e_q[keep], j.e_rank[keep]
        return self.credit

    @cached_property
    def credit_count(self) -> np.ndarray:
        """1-based running count of credited documents within each query."""
        cq, _ = self.credit
        return seg.seg_running_count(cq)

    def credited_at(self, q: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """Number of credited documents ranked at or above (q, rank)."""
        cq, cr = self.credit
        w = self.j.width
        keys = cq * w + cr
        pos = np.searchsorted(keys, q * w + rank, "right")
        start = np.searchsorted(keys, q * w, "left")
        return pos - start

    @cached_property
    def nonrel(self) -> tuple[np.ndarray, np.ndarray]:
        """(query, rank) of judged non-relevant documents retrieved (0 <= grade < ℓ, not
        credited as relevant)."""
        j = self.j
        keep = (j.e_label >= 0) & (j.e_label < self.level)
        return j.e_q[keep], j.e_rank[keep]


def judge(
    qrels: QrelsLike,
    run: RunLike,
    options: JudgeOptions | None = None,
    **kwargs: Any,
) -> Judged:
    """Judge ``run`` against ``qrels`` into the arrays every metric works on.

    ``options`` (or keyword arguments: ``relevance_level``, ``score_precision``,
    ``convention`` and any convention switch such as ``duplicates="first"``) set the rules;
    see the module docstring for each rule and its default.
    """
    opts = JudgeOptions.build(options, **kwargs)
    # Judging creates no reference cycles; pausing the cyclic collector keeps it from walking
    # every object of a large input (10^7 dict entries) while temporary lists are allocated.
    paused = gc.isenabled()
    gc.disable()
    try:
        joined = _join_dicts(qrels, run, opts)
        if joined is None:
            joined = _join_columnar(Qrels.coerce(qrels), Run.coerce(run), opts)
        return _build(joined, opts)
    finally:
        if paused:
            gc.enable()


def _join_columnar(Q: Qrels, R: Run, opts: JudgeOptions) -> dict[str, Any]:
    """Join columnar qrels and run: per-query list lengths, every (retrieved row, unit)
    match, repeated rows, and the qrels-side arrays of the evaluated queries."""
    conv = opts.convention

    # --- queries ---------------------------------------------------------------------
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
    first_of_unit = np.ones(len(qrow_u), dtype=bool)
    first_of_unit[1:] = qrow_u[1:] != qrow_u[:-1]
    unit_q = qrow_q[first_of_unit]
    unit_g = qrow_g[first_of_unit]
    qrow_unit = np.cumsum(first_of_unit) - 1  # dense unit id of each qrels row
    if Q.grouped:  # judged documents: one per (query, doc), the highest grade of its groups
        dk = qrow_q * np.int64(max(len(Q.doc_ids), 1)) + qrow_d
        o = seg.order_by(dk, qrow_g.max() - qrow_g) if len(dk) else np.zeros(0, np.int64)
        firsts = np.ones(len(o), dtype=bool)
        firsts[1:] = dk[o][1:] != dk[o][:-1]
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
        again = skey[1:] == skey[:-1]
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
        block = np.concatenate(([0], np.flatnonzero(ev[1:] != ev[:-1]) + 1))
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
    return {
        "query_ids": Q.query_ids[eval_q],
        "missing": ~present[eval_q],
        "lens": lens,
        "m_q": m_q,
        "m_rank": m_rank,
        "m_unit": m_unit,
        "m_grade": m_grade,
        "m_repeat": m_repeat,
        "rep_q": ev[repeat_rows].astype(np.int64),
        "rep_rank": repeat_rows - first_row[ev[repeat_rows]] + 1,
        "unit_q": unit_q,
        "unit_g": unit_g,
        "doc_q": doc_q,
        "doc_label": doc_label,
        "n_gt_ids": np.bincount(qrow_q[qrow_g > 0], minlength=n_q),
        "missing_ids": missing_ids,
        "ignored_ids": ignored_ids,
        "no_rel_ids": no_rel_ids,
        "dropped": dropped,
        "kept_dups": kept_dups,
        "run_name": R.name,
        "max_grade": int(Q.grade.max()) if len(Q.grade) else 0,
    }


def _build(jn: dict[str, Any], opts: JudgeOptions) -> Judged:
    """Entries, units first found, gains and the ideal, from a join."""
    conv = opts.convention
    m_q, m_rank, m_unit, m_grade, m_repeat = _by_query_rank(
        jn["m_q"], jn["m_rank"], jn["m_unit"], jn["m_grade"], jn["m_repeat"]
    )
    unit_q, unit_g = jn["unit_q"], jn["unit_g"]
    n_q = len(jn["query_ids"])

    # entries: one per retrieved row with a label (its highest grade)
    starts = _rank_starts(m_q, m_rank)
    e_q, e_rank, e_repeat = m_q[starts], m_rank[starts], m_repeat[starts]
    e_label = _max_from(m_grade, starts)

    # units first found: each unit at its lowest matched rank
    o = seg.order_by(m_unit, m_rank)
    firsts = np.ones(len(o), dtype=bool)
    firsts[1:] = m_unit[o][1:] != m_unit[o][:-1]
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
    io = seg.order_by(iq, ig.max() - ig) if len(ig) else np.zeros(0, dtype=np.int64)
    ideal_grade = ig[io]
    ideal_off = np.searchsorted(iq[io], np.arange(n_q + 1)).astype(np.int64)
    counts = JudgeCounts(
        queries_evaluated=n_q,
        queries_missing=len(jn["missing_ids"]),
        queries_ignored=len(jn["ignored_ids"]),
        queries_no_relevant_skipped=len(jn["no_rel_ids"]),
        duplicates_dropped=jn["dropped"],
        duplicates_kept=jn["kept_dups"],
        missing_ids=jn["missing_ids"],
        ignored_ids=jn["ignored_ids"],
        no_relevant_ids=jn["no_rel_ids"],
    )
    i64 = np.int64
    return Judged(
        query_ids=jn["query_ids"],
        lens=jn["lens"],
        missing=jn["missing"],
        e_q=e_q.astype(i64),
        e_rank=e_rank.astype(i64),
        e_label=e_label.astype(i64),
        e_repeat=e_repeat,
        u_q=u_q.astype(i64),
        u_rank=u_rank.astype(i64),
        u_grade=u_grade.astype(i64),
        u_id=u_id.astype(i64),
        m_q=m_q,
        m_rank=m_rank.astype(i64),
        m_unit=m_unit.astype(i64),
        m_grade=m_grade.astype(i64),
        g_q=g_q.astype(i64),
        g_rank=g_rank.astype(i64),
        g_grade=g_grade.astype(i64),
        rep_q=jn["rep_q"].astype(i64),
        rep_rank=jn["rep_rank"].astype(i64),
        unit_q=unit_q.astype(i64),
        unit_g=unit_g.astype(i64),
        doc_q=jn["doc_q"].astype(i64),
        doc_label=jn["doc_label"].astype(i64),
        ideal_off=ideal_off,
        ideal_grade=ideal_grade.astype(i64),
        n_gt_ids=jn["n_gt_ids"],
        options=opts,
        counts=counts,
        run_name=jn["run_name"],
        max_grade=jn["max_grade"],
    )


def _rank_starts(q: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Indices where a new (query, rank) begins in arrays sorted by (query, rank)."""
    new = np.ones(len(q), dtype=bool)
    new[1:] = (q[1:] != q[:-1]) | (rank[1:] != rank[:-1])
    return np.flatnonzero(new)


def _max_from(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Maximum of each run of ``values`` beginning at ``starts``."""
    return np.maximum.reduceat(values, starts) if len(starts) else values[:0]


def _join_dicts(qrels: Any, run: Any, opts: JudgeOptions) -> dict[str, Any] | None:
    """The join for the commonest Python input, ``{q: {doc: grade}}`` with ``{q: {doc:
    score}}``, without interning any document: only the judged documents are looked up in
    the run's dicts, and each one's rank is the number of documents of its query with a
    higher score, plus those tied with it whose id sorts above it (trec_eval's order).
    Returns None when the input is anything else, for the columnar join."""
    conv = opts.convention
    if (
        conv.ordering != "score"
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
        scores = np.fromiter(
            chain.from_iterable(v.values() for v in r_vals), dtype=np.float64, count=n_rows
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
    return {
        "query_ids": np.array(eval_ids, dtype=object),
        "missing": ~present,
        "lens": lens,
        "m_q": h_q,
        "m_rank": rank,
        "m_unit": np.cumsum(sel)[h_rows] - 1,
        "m_grade": grades[h_rows],
        "m_repeat": np.zeros(len(h_rows), dtype=bool),
        "rep_q": np.zeros(0, dtype=np.int64),
        "rep_rank": np.zeros(0, dtype=np.int64),
        "unit_q": unit_q,
        "unit_g": unit_g,
        "doc_q": unit_q,
        "doc_label": unit_g,
        "n_gt_ids": np.bincount(qrel_q[sel][grades[sel] > 0], minlength=n_q),
        "missing_ids": [q for q, p in zip(qids, present_all) if not p],
        "ignored_ids": sorted(q for q in run if q not in qrels),
        "no_rel_ids": no_rel_ids,
        "dropped": 0,
        "kept_dups": 0,
        "run_name": "run",
        "max_grade": int(grades.max()) if len(grades) else 0,
    }


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
