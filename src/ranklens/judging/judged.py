"""The judged arrays: :class:`Judged` (one (qrels, run) pair, independent of ℓ) and
:class:`LevelView` (the same at one relevance level ℓ, with the convention's choices already
applied). Metrics read only these; they never see an id or a convention switch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..model import segments as seg
from .budget import Budget, BudgetInputs, cutoffs, partial_pair
from .conventions import Convention
from .freshness import FreshRanks
from .intents import IntentView
from .join import Join
from .options import JudgeCounts, JudgeOptions
from .spanmatch import SpanChars


@dataclass(eq=False)
class Judged:
    """A judged (qrels, run) pair; sparse per-rank tables sorted by (query, rank).

    * ``lens``: documents retrieved per query (duplicates kept by the convention included);
      ``missing``: whether each evaluated query was absent from the run;
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
      ``n_gt_ids`` (ground-truth ids with a positive grade);
    * for the diversity measures (grouped or subtopic qrels, else None): ``m_repeat``
      (whether each match's row repeats a document), ``unit_intent`` (each unit's intent)
      and ``members`` (query, document code, unit of every qrels row; codes in id order);
    * ``ties`` (under ``ties="expected"``): (query, first rank, size) of every run of tied
      scores;
    * ``join``: the join it was built from (condensed lists are built from it on demand,
      :func:`~ranklens.judging.build.condensed_pair`);
    * for span labels, ``chars`` (:class:`~ranklens.judging.spanmatch.SpanChars`): per
      ranked chunk (``q``, ``rank``) the evidence characters it covers first (``new``) and
      its ``length``; per query the ``evidence`` total (the character metrics read these);
    * with document versions, ``fresh`` (:class:`~ranklens.judging.freshness.FreshRanks`):
      each ranked row's status as of its query's time and the ranks of each versioned
      evidence group's current and outdated versions (the freshness metrics read these);
    * context budgets read the join's ``budget`` (:attr:`budget_inputs`; the chunks'
      sizes are computed only when one is asked for: :meth:`budget_cutoffs`).
    """

    query_ids: np.ndarray
    lens: np.ndarray
    missing: np.ndarray
    e_q: np.ndarray
    e_rank: np.ndarray
    e_label: np.ndarray
    e_repeat: np.ndarray
    u_q: np.ndarray
    u_rank: np.ndarray
    u_grade: np.ndarray
    u_id: np.ndarray
    m_q: np.ndarray
    m_rank: np.ndarray
    m_unit: np.ndarray
    m_grade: np.ndarray
    g_q: np.ndarray
    g_rank: np.ndarray
    g_grade: np.ndarray
    rep_q: np.ndarray
    rep_rank: np.ndarray
    unit_q: np.ndarray
    unit_g: np.ndarray
    doc_q: np.ndarray
    doc_label: np.ndarray
    ideal_off: np.ndarray
    ideal_grade: np.ndarray
    n_gt_ids: np.ndarray
    options: JudgeOptions
    counts: JudgeCounts
    run_name: str
    max_grade: int
    m_repeat: np.ndarray | None = None
    unit_intent: np.ndarray | None = None
    members: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    ties: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    join: Join | None = field(default=None, repr=False)
    chars: SpanChars | None = field(default=None, repr=False)
    fresh: FreshRanks | None = field(default=None, repr=False)
    _views: dict[int, LevelView] = field(default_factory=dict, repr=False)
    condensed_cache: Judged | None = field(default=None, repr=False)
    filled_cache: Judged | None = field(default=None, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def convention(self) -> Convention:
        return self.options.convention

    @property
    def variant(self) -> str:
        """Which implementation of a metric family applies: ``"expected_ties"`` under
        ``ties="expected"``, ``"unit_average"`` when the convention averages RR and AP over
        ground-truth units (AutoRAG), else ``"standard"`` (see
        :class:`ranklens.metrics.Family`)."""
        if self.options.ties == "expected":
            return "expected_ties"
        return "unit_average" if self.options.convention.unit_average else "standard"

    @cached_property
    def width(self) -> int:
        """A stride for (query, rank) keys: larger than any rank."""
        return int(self.lens.max(initial=0)) + 2

    def depth(self, k: int | None) -> np.ndarray:
        """Documents in the top k of each query (the list length without k)."""
        return self.lens if k is None else np.minimum(self.lens, k)

    @property
    def budget_inputs(self) -> BudgetInputs | None:
        """What context budgets read besides these arrays (kept on the join, so the pairs
        made from it, condensed or with the unjudged filled in, read the same chunks)."""
        return None if self.join is None else self.join.budget

    def budget_cutoffs(self, budget: Budget, straddle: str = "exclude") -> np.ndarray:
        """Per evaluated query, the rank cutoff of a context ``budget``: the number of
        leading chunks whose sizes sum to at most the budget, ``c_q = max {c : Σ_{r≤c} s_r
        ≤ B}`` (``straddle="include"``: and the chunk straddling its end); see
        :mod:`ranklens.judging.budget`.

        >>> from ranklens import Run, judge
        >>> from ranklens.judging.budget import Budget
        >>> chunks = [{"id": f"c{n}", "doc_id": "d", "text": "x" * n} for n in (40, 50, 30)]
        >>> j = judge({"q": ["c50"]}, Run.from_chunks({"q": chunks}))
        >>> j.budget_cutoffs(Budget(100, "char")), j.budget_cutoffs(Budget(100, "char"), "include")
        (array([2]), array([3]))
        """
        return cutoffs(self, budget, straddle)

    def budget_partial(self, budget: Budget) -> Judged:
        """This pair with each query's chunks cut at ``budget``, the straddling chunk kept to
        its first ``B − used`` characters or tokens and the evidence it holds counted exactly
        (``straddle="partial"`` of the evidence metrics; :mod:`ranklens.judging.budget`)."""
        cut: Judged = partial_pair(self, budget)
        return cut

    def view(self, level: int | None = None) -> LevelView:
        """Arrays at relevance level ``level`` (default: the options' level)."""
        lv = self.options.relevance_level if level is None else int(level)
        v = self._views.get(lv)
        if v is None:
            v = self._views[lv] = LevelView(self, lv)
        return v

    def __repr__(self) -> str:
        return (
            f"Judged({self.n_queries} queries, {int(self.lens.sum())} ranks, "
            f"{len(self.e_q)} judged, run={self.run_name!r}, convention={self.convention.name})"
        )


class LevelView:
    """Judged arrays at one relevance level ℓ, computed lazily and cached.

    The convention's switches act here, as views: which ranks earn credit, gain and count
    for precision (:attr:`credit`, :attr:`distinct`, :attr:`gain_entries`,
    :attr:`precision_points`), what precision divides by (:meth:`precision_depth`), the
    default gain (:attr:`gain`) and the ideal ranking (:meth:`ideal`).
    """

    def __init__(self, judged: Judged, level: int) -> None:
        self.j = judged
        self.level = level
        self._conv = judged.options.convention

    @cached_property
    def R(self) -> np.ndarray:
        """Number of relevant units per query (grade >= ℓ), retrieved or not."""
        j = self.j
        return np.bincount(j.unit_q[j.unit_g >= self.level], minlength=j.n_queries)

    @cached_property
    def intents(self) -> IntentView:
        """Intent coverage and the diversity ideal at ℓ (diversity measures only)."""
        return IntentView(self)

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
        if self._conv.duplicates == "count":
            keep = j.e_label >= self.level
            return j.e_q[keep], j.e_rank[keep]
        hq, hr = self.hits
        if len(hq) < 2:
            return hq, hr
        new = seg.run_starts(hq, hr)
        return hq[new], hr[new]

    @cached_property
    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """(query, rank) of distinct relevant documents retrieved (repeats not counted)."""
        j = self.j
        if self._conv.duplicates == "count":
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
        above: np.ndarray = pos - start
        return above

    @cached_property
    def precision_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query, rank, relevant documents at or above it) of the ranks where average
        precision takes a precision: each relevant unit where first found, or every
        credited occurrence when the convention counts duplicates."""
        if self._conv.duplicates == "count":
            cq, cr = self.credit
            return cq, cr, self.credit_count
        hq, hr = self.hits
        return hq, hr, self.credited_at(hq, hr)

    @cached_property
    def nonrel(self) -> tuple[np.ndarray, np.ndarray]:
        """(query, rank) of judged non-relevant documents retrieved (0 <= grade < ℓ, not
        credited as relevant)."""
        j = self.j
        keep = (j.e_label >= 0) & (j.e_label < self.level)
        return j.e_q[keep], j.e_rank[keep]

    def precision_depth(self, k: int | None) -> np.ndarray:
        """What precision at k divides by, per query: k (trec_eval, even past the list's
        end), or the documents retrieved within k (``retrieved``), or the distinct ones
        (``unique_retrieved``). Without k, the documents retrieved."""
        j = self.j
        how = self._conv.precision_denominator
        if how == "k" and k is not None:
            return np.full(j.n_queries, float(k))
        depth = j.depth(k).astype(np.float64)
        if how == "unique_retrieved":
            depth = depth - seg.count_top(j.rep_q, j.rep_rank, j.n_queries, k)
        return depth

    @property
    def gain(self) -> str:
        """The convention's gain function for DCG: ``linear``, ``exp`` or ``binary``."""
        return self._conv.gain

    @cached_property
    def gain_entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query, rank, grade) of the ranks that earn gain: per rank the best unit first
        found there, or every occurrence of a relevant document when the convention counts
        duplicates."""
        j = self.j
        if self._conv.duplicates == "count":
            keep = j.e_label > 0
            q, rank, grade = j.e_q[keep], j.e_rank[keep], j.e_label[keep]
        else:
            q, rank, grade = j.g_q, j.g_rank, j.g_grade
        if self._conv.gain_level:  # only the relevant documents earn gain
            keep = self._earns(grade)
            q, rank, grade = q[keep], rank[keep], grade[keep]
        return q, rank, grade

    def _earns(self, grade: np.ndarray) -> np.ndarray:
        """Under ``gain_level``: the grades that earn gain (>= ℓ, or negative when the
        convention gives negative gain)."""
        keep = grade >= max(self.level, 1)
        if self._conv.negative_gain:
            keep |= grade < 0
        return keep

    def ideal(self, k: int | None) -> tuple[np.ndarray, np.ndarray, int | None]:
        """The ideal ranking's grades per query as ``(offsets, grades, cut)``: grades
        ``grades[off[i]:off[i+1]]`` descending, counted down to rank ``cut`` (None: all).
        trec_eval: every positive grade of the qrels, cut at k (``qrels_cut``); not cut
        (``qrels``); ``min(#ground-truth ids, #retrieved)`` ranks of gain 1
        (``min_gt_retrieved``)."""
        j = self.j
        how = self._conv.ideal
        if how == "min_gt_retrieved":
            n_gt = j.n_gt_ids
            if self._conv.gain_level and self.level > 1:
                n_gt = np.bincount(j.doc_q[j.doc_label >= self.level], minlength=j.n_queries)
            n = np.minimum(n_gt, j.depth(k)).astype(np.int64)
            off = np.concatenate(([0], np.cumsum(n))).astype(np.int64)
            return off, np.ones(int(off[-1]), dtype=np.int64), None
        off, grades = j.ideal_off, j.ideal_grade
        if self._conv.gain_level:
            keep = self._earns(grades)
            off = np.concatenate(([0], np.cumsum(seg.seg_sum(keep.astype(np.int64), off))))
            off, grades = off.astype(np.int64), grades[keep]
        return off, grades, (k if how == "qrels_cut" else None)
