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
  default; ``duplicates="first"`` keeps its highest-ranked occurrence and counts the rest.
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
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

import numpy as np

from . import _segments as seg
from ._vocab import translate
from .errors import DuplicateDocumentError, InputError
from .qrels import Qrels, QrelsLike
from .run import Run, RunLike

NOT_IN_QRELS = np.iinfo(np.int64).min
"""Label of a retrieved document that has no entry in the qrels."""


@dataclass(frozen=True)
class JudgeOptions:
    """How a (qrels, run) pair is judged.

    Attributes:
        relevance_level: ℓ, the smallest grade that counts as relevant for binary measures
            (trec_eval ``-l``; default 1). A metric may override it (``P(rel=2)@10``).
        duplicates: ``"error"`` (default) or ``"first"`` (keep the highest-ranked occurrence).
        missing: ``"zero"`` (default: a labelled query absent from the run scores 0 and
            counts in the mean, trec_eval ``-c``) or ``"skip"``.
        score_precision: ``"float64"`` (default, trec_eval 10) or ``"float32"`` (scores
            compared as float32 when ranking, as trec_eval 9 and pytrec_eval do).
    """

    relevance_level: int = 1
    duplicates: Literal["error", "first"] = "error"
    missing: Literal["zero", "skip"] = "zero"
    score_precision: Literal["float64", "float32"] = "float64"

    def __post_init__(self) -> None:
        if isinstance(self.relevance_level, bool) or not isinstance(
            self.relevance_level, (int, np.integer)
        ):
            raise InputError(f"relevance_level must be an integer, got {self.relevance_level!r}")
        if self.relevance_level < 0:
            raise InputError(f"relevance_level must be >= 0, got {self.relevance_level}")
        for name, allowed in (
            ("duplicates", ("error", "first")),
            ("missing", ("zero", "skip")),
            ("score_precision", ("float64", "float32")),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise InputError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")

    def with_(self, **changes: Any) -> JudgeOptions:
        """A copy with some options changed."""
        return replace(self, **changes)


@dataclass
class JudgeCounts:
    """What judging left out or changed, so nothing is silently dropped."""

    queries_evaluated: int = 0
    queries_missing: int = 0
    queries_ignored: int = 0
    duplicates_dropped: int = 0
    missing_ids: list[str] = field(default_factory=list)
    ignored_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "queries_evaluated": self.queries_evaluated,
            "queries_missing": self.queries_missing,
            "queries_ignored": self.queries_ignored,
            "duplicates_dropped": self.duplicates_dropped,
        }


class Judged:
    """A judged (qrels, run) pair: per-rank and per-query arrays, independent of ℓ.

    Per rank (flat, ``n`` entries): ``label`` (the document's grade, ``NOT_IN_QRELS`` when it
    has none), ``gain_grade`` (grade of the units first found there, 0 otherwise), ``qidx``
    and ``pos`` (0-based rank). Units first found: ``unit_pos``/``unit_grade``. Per query:
    ``off``, ``missing``; the qrels' units (``unit_q``, ``unit_g``), judged documents
    (``doc_q``, ``doc_label``) and the ideal grades (``ideal_off``, ``ideal_grade``, sorted
    descending, positive only).
    """

    def __init__(self, **arrays: Any) -> None:
        self.query_ids: np.ndarray = arrays["query_ids"]
        self.off: np.ndarray = arrays["off"]
        self.label: np.ndarray = arrays["label"]
        self.gain_grade: np.ndarray = arrays["gain_grade"]
        self.unit_pos: np.ndarray = arrays["unit_pos"]
        self.unit_grade: np.ndarray = arrays["unit_grade"]
        self.unit_q: np.ndarray = arrays["unit_q"]
        self.unit_g: np.ndarray = arrays["unit_g"]
        self.doc_q: np.ndarray = arrays["doc_q"]
        self.doc_label: np.ndarray = arrays["doc_label"]
        self.ideal_off: np.ndarray = arrays["ideal_off"]
        self.ideal_grade: np.ndarray = arrays["ideal_grade"]
        self.missing: np.ndarray = arrays["missing"]
        self.options: JudgeOptions = arrays["options"]
        self.counts: JudgeCounts = arrays["counts"]
        self.run_name: str = arrays.get("run_name", "run")
        self.max_grade: int = arrays["max_grade"]
        self._views: dict[int, LevelView] = {}

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @cached_property
    def lens(self) -> np.ndarray:
        """Number of documents retrieved per query."""
        return seg.lengths(self.off)

    @cached_property
    def qidx(self) -> np.ndarray:
        return seg.seg_index(self.off)

    @cached_property
    def pos(self) -> np.ndarray:
        return seg.seg_positions(self.off)

    @cached_property
    def rank(self) -> np.ndarray:
        """1-based rank of every flat entry, as float64."""
        return self.pos.astype(np.float64) + 1.0

    @cached_property
    def discount(self) -> np.ndarray:
        """log2(rank + 1) of every flat entry."""
        return np.log2(self.rank + 1.0)

    @cached_property
    def judged(self) -> np.ndarray:
        """Whether each retrieved document has an entry in the qrels."""
        return self.label != NOT_IN_QRELS

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
        return f"Judged({self.n_queries} queries, {len(self.label)} ranks, run={self.run_name!r})"


class LevelView:
    """Judged arrays at one relevance level ℓ, computed lazily and cached."""

    def __init__(self, judged: Judged, level: int) -> None:
        self.j = judged
        self.level = level

    @cached_property
    def hits(self) -> np.ndarray:
        """Number of relevant units first found at each rank (0/1 for plain labels)."""
        j = self.j
        keep = j.unit_grade >= self.level
        return np.bincount(j.unit_pos[keep], minlength=len(j.label)).astype(np.int64)

    @cached_property
    def rel(self) -> np.ndarray:
        """Whether each rank holds a relevant document (one that finds a relevant unit)."""
        return self.hits > 0

    @cached_property
    def nonrel(self) -> np.ndarray:
        """Whether each rank holds a judged non-relevant document (0 <= grade < ℓ)."""
        lab = self.j.label
        return (lab >= 0) & (lab < self.level) & ~self.rel

    @cached_property
    def R(self) -> np.ndarray:
        """Number of relevant units per query (grade >= ℓ), retrieved or not."""
        j = self.j
        keep = j.unit_g >= self.level
        return np.bincount(j.unit_q[keep], minlength=j.n_queries).astype(np.int64)

    @cached_property
    def N_nonrel(self) -> np.ndarray:
        """Number of judged non-relevant documents per query (0 <= grade < ℓ)."""
        j = self.j
        keep = (j.doc_label >= 0) & (j.doc_label < self.level)
        return np.bincount(j.doc_q[keep], minlength=j.n_queries).astype(np.int64)

    @cached_property
    def cum_hits(self) -> np.ndarray:
        return seg.seg_cumsum(self.hits, self.j.off)

    @cached_property
    def cum_rel(self) -> np.ndarray:
        return seg.seg_cumsum(self.rel.astype(np.int64), self.j.off)

    def hits_at(self, k: int | None) -> np.ndarray:
        """Relevant units found in the top k (whole list when k is None)."""
        return seg.at_cutoff(self.cum_hits, self.j.off, k)

    def rel_at(self, k: int | None) -> np.ndarray:
        """Relevant documents in the top k."""
        return seg.at_cutoff(self.cum_rel, self.j.off, k)

    def sum_top(self, x: np.ndarray, k: int | None) -> np.ndarray:
        """Per query, the sum of per-rank values ``x`` over the top k."""
        j = self.j
        if k is not None:
            x = np.where(j.pos < k, x, 0)
        return seg.seg_sum(x, j.off)


# ---------------------------------------------------------------------------- judge


def judge(
    qrels: QrelsLike,
    run: RunLike,
    options: JudgeOptions | None = None,
    **kwargs: Any,
) -> Judged:
    """Judge ``run`` against ``qrels`` into the arrays every metric works on.

    ``options`` (or keyword arguments of :class:`JudgeOptions`) set the rules; see the module
    docstring for each rule and its default.
    """
    opts = (options or JudgeOptions()).with_(**kwargs) if kwargs else (options or JudgeOptions())
    Q = Qrels.coerce(qrels)
    R = Run.coerce(run)

    # --- queries ---------------------------------------------------------------------
    rq_to_qq = translate(R.query_ids, Q.query_ids)  # run query code -> qrels query code
    present = np.zeros(len(Q.query_ids), dtype=bool)
    present[rq_to_qq[rq_to_qq >= 0]] = True
    ignored_ids = [str(x) for x in R.query_ids[rq_to_qq < 0]]
    missing_ids = [str(x) for x in Q.query_ids[~present]]
    eval_q = np.arange(len(Q.query_ids)) if opts.missing == "zero" else np.flatnonzero(present)
    qq_to_eval = np.full(len(Q.query_ids), -1, dtype=np.int64)
    qq_to_eval[eval_q] = np.arange(len(eval_q))
    n_q = len(eval_q)

    # --- run rows in ranking order, mapped to evaluated queries -------------------------
    order = R.order(opts.score_precision)
    rq = R.q[order]
    rd = R.d[order]
    ev = qq_to_eval[np.where(rq_to_qq[rq] >= 0, rq_to_qq[rq], 0)]
    ev[rq_to_qq[rq] < 0] = -1
    keep = ev >= 0
    if not keep.all():
        rq, rd, ev = rq[keep], rd[keep], ev[keep]
    # --- qrels rows of evaluated queries --------------------------------------------------
    qsel = qq_to_eval[Q.q] >= 0
    qrow_q = qq_to_eval[Q.q[qsel]]
    qrow_d = Q.d[qsel]
    qrow_g = Q.grade[qsel]
    qrow_u = Q.unit[qsel]

    # units (one per row for plain labels; group rows share a unit)
    if Q.grouped:
        first_of_unit = np.ones(len(qrow_u), dtype=bool)
        first_of_unit[1:] = qrow_u[1:] != qrow_u[:-1]
        unit_q = qrow_q[first_of_unit]
        unit_g = qrow_g[first_of_unit]
        unit_local = np.cumsum(first_of_unit) - 1  # dense unit number of each row
        # judged documents: one entry per (query, doc), the highest grade of its groups
        dk = qrow_q * np.int64(max(len(Q.doc_ids), 1)) + qrow_d
        o = np.lexsort((-qrow_g, dk))
        firsts = np.ones(len(o), dtype=bool)
        firsts[1:] = dk[o][1:] != dk[o][:-1]
        doc_q, doc_label = qrow_q[o][firsts], qrow_g[o][firsts]
    else:
        unit_q, unit_g = qrow_q, qrow_g
        unit_local = np.arange(len(qrow_q))
        doc_q, doc_label = qrow_q, qrow_g

    # --- join: run rows x qrels rows on (query, doc) -------------------------------------
    qd_to_rd = translate(Q.doc_ids, R.doc_ids)  # qrels doc code -> run doc code
    qrow_rd = qd_to_rd[qrow_d]
    in_run = qrow_rd >= 0
    qidx_rows = np.flatnonzero(in_run)
    packed = None
    if not Q.grouped:
        packed = _packed_join(ev, rd, qrow_q[in_run], qrow_rd[in_run], n_q, len(R.doc_ids),
                              check_duplicates=not R.unique_docs)
    if packed is not None:
        match, dup_first = packed
    else:
        match = None
        dup_first = None if R.unique_docs or not len(ev) else _duplicate_mask(
            ev * np.int64(max(len(R.doc_ids), 1)) + rd
        )
    dropped = 0
    if dup_first is not None:
        if opts.duplicates == "error":
            i = int(np.flatnonzero(dup_first)[0])
            raise DuplicateDocumentError(
                f"run {R.name!r}: document {R.doc_ids[rd[i]]!r} appears more than once in "
                f"query {Q.query_ids[eval_q[ev[i]]]!r}; pass duplicates='first' to keep its "
                "highest-ranked occurrence"
            )
        dropped = int(dup_first.sum())
        keep_rows = ~dup_first
        rq, rd, ev = rq[keep_rows], rd[keep_rows], ev[keep_rows]
        if match is not None:
            match = match[keep_rows]
    off = np.searchsorted(ev, np.arange(n_q + 1)).astype(np.int64)
    n = len(ev)
    if match is not None:
        m = match >= 0
        lo = np.zeros(n, dtype=np.int64)
        lo[m] = match[m]
        cnt = m.astype(np.int64)
    else:
        width = np.int64(max(len(R.doc_ids), 1))
        qkey = qrow_q[in_run] * width + qrow_rd[in_run]
        ko = np.argsort(qkey, kind="stable")
        qkey, qidx_rows = qkey[ko], qidx_rows[ko]
        rkey = ev * width + rd
        lo = np.searchsorted(qkey, rkey, "left")
        cnt = np.searchsorted(qkey, rkey, "right") - lo

    label = np.full(n, NOT_IN_QRELS, dtype=np.int64)
    gain_grade = np.zeros(n, dtype=np.int64)
    if not Q.grouped:
        m = cnt > 0
        rows = qidx_rows[lo[m]]
        label[m] = qrow_g[rows]
        unit_pos = np.flatnonzero(m)
        unit_grade = qrow_g[rows]
        gain_grade[m] = np.maximum(qrow_g[rows], 0)
    else:
        match_pos = np.repeat(np.arange(n), cnt)
        starts = np.repeat(lo, cnt)
        within = np.arange(len(match_pos)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        rows = qidx_rows[starts + within]
        g = qrow_g[rows]
        if len(match_pos):
            np.maximum.at(label, match_pos, g)
        u = unit_local[rows]
        # a unit is found at its first (lowest) matched position
        o = np.lexsort((match_pos, u))
        first = np.ones(len(o), dtype=bool)
        first[1:] = u[o][1:] != u[o][:-1]
        unit_pos = match_pos[o][first]
        unit_grade = g[o][first]
        so = np.argsort(unit_pos, kind="stable")
        unit_pos, unit_grade = unit_pos[so], unit_grade[so]
        if len(unit_pos):
            np.maximum.at(gain_grade, unit_pos, np.maximum(unit_grade, 0))

    # --- ideal gains per query ------------------------------------------------------------
    pos_units = unit_g > 0
    iq, ig = unit_q[pos_units], unit_g[pos_units]
    io = np.lexsort((-ig, iq))
    ideal_grade = ig[io]
    ideal_off = np.searchsorted(iq[io], np.arange(n_q + 1)).astype(np.int64)

    missing = ~present[eval_q]
    counts = JudgeCounts(
        queries_evaluated=n_q,
        queries_missing=len(missing_ids),
        queries_ignored=len(ignored_ids),
        duplicates_dropped=dropped,
        missing_ids=missing_ids,
        ignored_ids=ignored_ids,
    )
    return Judged(
        query_ids=Q.query_ids[eval_q],
        off=off,
        label=label,
        gain_grade=gain_grade,
        unit_pos=unit_pos.astype(np.int64),
        unit_grade=unit_grade.astype(np.int64),
        unit_q=unit_q.astype(np.int64),
        unit_g=unit_g.astype(np.int64),
        doc_q=doc_q.astype(np.int64),
        doc_label=doc_label.astype(np.int64),
        ideal_off=ideal_off,
        ideal_grade=ideal_grade.astype(np.int64),
        missing=missing,
        options=opts,
        counts=counts,
        run_name=R.name,
        max_grade=int(Q.grade.max()) if len(Q.grade) else 0,
    )


def _packed_join(
    ev: np.ndarray,
    rd: np.ndarray,
    qq: np.ndarray,
    qd: np.ndarray,
    n_q: int,
    n_docs: int,
    check_duplicates: bool,
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Sort-merge join of run rows (ev, rd) with unique qrels keys (qq, qd) in one sort.

    Each entry packs (query, doc, side, row) into one int64, so a plain ``np.sort`` (much
    faster than argsort or searchsorted on 10^7 rows) lines every run row up behind its
    qrels row. Returns, per run row, the index of its qrels row (-1 if none) and the mask of
    rows repeating an earlier (higher-ranked) row's document (None if there are none), or
    None when the keys do not fit in 63 bits.
    """
    n, m = len(ev), len(qq)
    qbits = max(int(n_q).bit_length(), 1)
    dbits = max(int(n_docs).bit_length(), 1)
    ibits = max(int(max(n, m)).bit_length(), 1)
    if qbits + dbits + ibits + 1 > 63:
        return None
    shift = np.int64(ibits + 1)
    side = np.int64(1) << np.int64(ibits)
    run_keys = (((ev << dbits) | rd) << shift) | side | np.arange(n, dtype=np.int64)
    qrel_keys = (((qq << dbits) | qd) << shift) | np.arange(m, dtype=np.int64)
    s = np.sort(np.concatenate([qrel_keys, run_keys]))
    pair = s >> shift
    is_run = (s & side) != 0
    idx = s & (side - 1)
    pos = np.where(is_run, -1, np.arange(len(s)))
    last_q = np.maximum.accumulate(pos)  # latest qrels entry at or before each position
    run_pos = np.flatnonzero(is_run)
    lq = last_q[run_pos]
    hit = lq >= 0
    hit[hit] = pair[lq[hit]] == pair[run_pos[hit]]
    match = np.full(n, -1, dtype=np.int64)
    rows = idx[run_pos]
    match[rows[hit]] = idx[lq[hit]]
    dup = None
    if check_duplicates and len(run_pos) > 1:
        again = np.zeros(len(run_pos), dtype=bool)
        again[1:] = (run_pos[1:] == run_pos[:-1] + 1) & (pair[run_pos[1:]] == pair[run_pos[:-1]])
        if again.any():
            dup = np.zeros(n, dtype=bool)
            dup[rows[again]] = True
    return match, dup


def _duplicate_mask(key: np.ndarray) -> np.ndarray | None:
    """Mask of rows whose key already occurred at an earlier row, or None if none did."""
    sk = np.sort(key)  # a plain sort settles the common no-duplicate case quickly
    if not (sk[1:] == sk[:-1]).any():
        return None
    o = np.argsort(key, kind="stable")
    ks = key[o]
    dup_sorted = np.zeros(len(ks), dtype=bool)
    dup_sorted[1:] = ks[1:] == ks[:-1]
    if not dup_sorted.any():
        return None
    mask = np.zeros(len(key), dtype=bool)
    mask[o[dup_sorted]] = True
    return mask
