"""Graded metrics: DCG, ideal DCG, nDCG, ERR, RBP and its residual.

References: Järvelin & Kekäläinen (2002) for DCG; Burges et al. (2005) for exponential
gain; Chapelle et al. (2009) for ERR; Moffat & Zobel (2008) for RBP; trec_eval 10.0 for
the defaults reproduced.
"""

from __future__ import annotations

import numpy as np

from ..judging import LevelView
from ..model import segments as seg
from .base import judged_pair, running_sum, safe_div

Gains = tuple[tuple[int, float], ...] | None
"""Custom gains ``((grade, gain), ...)`` sorted by grade (trec_eval's ``ndcg.1=3.5,2=9``);
grades not listed keep the gain function's value."""


def gain_values(grades: np.ndarray, gain: str, gains: Gains = None) -> np.ndarray:
    """The gains of ``grades``: ``linear`` (the grade), ``exp`` (2^g − 1) or ``binary``;
    ``gains`` overrides listed grades (trec_eval: "gains are allowed to be 0 or negative,
    and relevance level 0 can be given a gain").

    >>> import numpy as np
    >>> gain_values(np.array([0, 1, 2]), "exp", gains=((2, 9.0),))
    array([0., 1., 9.])
    """
    g = grades.astype(np.float64)
    if gain == "exp":
        g = np.exp2(np.maximum(g, 0)) - 1.0
    elif gain == "binary":
        g = (g > 0).astype(np.float64)
    if gains:
        keys = np.array([k for k, _ in gains], dtype=np.int64)
        at = np.minimum(np.searchsorted(keys, grades), len(keys) - 1)
        listed = keys[at] == grades
        g = np.where(listed, np.array([x for _, x in gains])[at], g)
    return g


def _level_zero(gains: Gains) -> float:
    return dict(gains or ()).get(0, 0.0)


def graded(
    v: LevelView, gain: str | None = None, gains: Gains = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, rank, gain) of the retrieved ranks that earn a non-zero gain: the
    convention's gain entries, plus the judged grade-0 documents when ``gains`` gives grade
    0 a gain.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> graded(v, "linear")  # (query, rank, gain) of a and b
    (array([0, 0]), array([1, 4]), array([2., 1.]))
    """
    q, rank, grade = v.gain_entries
    if _level_zero(gains) != 0:
        j = v.j
        zero = (j.e_label == 0) & ~j.e_repeat
        q = np.concatenate((q, j.e_q[zero]))
        rank = np.concatenate((rank, j.e_rank[zero]))
        grade = np.concatenate((grade, j.e_label[zero]))
        order = np.lexsort((rank, q))
        q, rank, grade = q[order], rank[order], grade[order]
    g = gain_values(grade, gain or v.gain, gains)
    nz = g != 0
    return q[nz], rank[nz], g[nz]


def ideal_gains(
    v: LevelView, k: int | None = None, gain: str | None = None, gains: Gains = None
) -> tuple[np.ndarray, np.ndarray, int | None]:
    """The ideal ranking's positive gains per query, descending, as ``(offsets, gains,
    cut)`` (:meth:`~ranklens.judging.LevelView.ideal`); with ``gains``, the qrels' grades
    ordered by their gain (grade 0 included when it has one), as trec_eval's
    ``setup_gains``.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> ideal_gains(v, 3, "linear")  # offsets, gains, cut
    (array([0, 3]), array([2., 1., 1.]), 3)
    """
    off, grades, cut = v.ideal(k)
    g = gain_values(grades, gain or v.gain, gains)
    if not gains:
        return off, g, cut
    j = v.j
    q = np.repeat(np.arange(j.n_queries), np.diff(off))
    if _level_zero(gains) > 0:
        zero = j.doc_label == 0
        q = np.concatenate((q, j.doc_q[zero]))
        g = np.concatenate((g, np.full(int(zero.sum()), _level_zero(gains))))
    keep = g > 0
    q, g = q[keep], g[keep]
    order = np.lexsort((-g, q))
    off = np.searchsorted(q[order], np.arange(j.n_queries + 1)).astype(np.int64)
    return off, g[order], cut


def dcg(
    v: LevelView, k: int | None = None, gain: str | None = None, gains: Gains = None
) -> np.ndarray:
    """Discounted cumulative gain: ``DCG@k = Σ_{i≤k} gain(g_i) / log2(i + 1)``.

    ``gain="linear"`` uses the grade (trec_eval); ``"exp"`` uses ``2^g − 1`` (Burges et al.);
    ``"binary"`` 1 for any relevant document (LlamaIndex, AutoRAG); default: the
    convention's. Negative grades give no gain unless the convention says so (Haystack).
    Grades are not thresholded by ℓ. ``gains={grade: gain}`` sets the gain of listed grades
    (trec_eval's ``dcg.1=3.5,2=9``).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> dcg(v, 4)
    array([2.43067656])
    """
    gq, gr, gg = graded(v, gain, gains)
    return seg.count_top(gq, gr, v.j.n_queries, k, gg / np.log2(gr + 1.0))


def ideal_dcg(
    v: LevelView, k: int | None = None, gain: str | None = None, gains: Gains = None
) -> np.ndarray:
    """DCG of the ideal ranking (:meth:`~ranklens.judging.LevelView.ideal`). trec_eval: all
    positive grades of the qrels, sorted descending, cut at k (with ``gains``: the positive
    gains, sorted descending). Conventions: not cut at k (LlamaIndex, Haystack), or
    ``min(#ground-truth ids, #retrieved)`` ones (AutoRAG).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> ideal_dcg(v, 4)
    array([3.13092975])
    """
    ioff, g, cut = ideal_gains(v, k, gain, gains)
    ipos = seg.seg_positions(ioff)
    x = g / np.log2(ipos + 2.0)
    if cut is not None:
        x = np.where(ipos < cut, x, 0.0)
    return seg.seg_sum(x, ioff)


def ndcg(
    v: LevelView, k: int | None = None, gain: str | None = None, gains: Gains = None
) -> np.ndarray:
    """Normalised DCG: ``nDCG@k = DCG@k / IDCG@k``; 0 when IDCG@k = 0.

    trec_eval's ``ndcg_cut_k`` (and ``ndcg`` without k) with linear gain; ``gain="exp"``
    gives the exponential-gain variant (``ndcg_exp``); ``gains`` sets chosen grades' gains
    (trec_eval's ``ndcg.1=3.5,2=9``). Reference: Järvelin & Kekäläinen,
    "Cumulated gain-based evaluation of IR techniques", TOIS 2002.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> ndcg(v, 4), ndcg(v, 4, gain="exp")
    (array([0.77634337]), array([0.83048533]))
    """
    return safe_div(dcg(v, k, gain, gains), ideal_dcg(v, k, gain, gains))


def err(v: LevelView, k: int | None = None, max_grade: int | None = None) -> np.ndarray:
    """Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009):

    ``ERR@k = Σ_{i≤k} (1/i) · p_i · Π_{j<i} (1 − p_j)`` with ``p_i = (2^{g_i} − 1) / 2^{g_max}``.
    ``g_max`` defaults to the highest grade in the qrels (``err(max=4)`` reproduces gdeval).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> err(v, 4)
    array([0.765625])
    """
    j = v.j
    gmax = j.max_grade if max_grade is None else int(max_grade)
    gq, gr, gg = v.gain_entries
    if gmax <= 0 or len(gq) == 0:
        return np.zeros(j.n_queries)
    if k is not None:
        sel = gr <= k
        gq, gr, gg = gq[sel], gr[sel], gg[sel]
    p = np.minimum((np.exp2(np.maximum(gg, 0).astype(np.float64)) - 1.0) / np.exp2(gmax), 1.0)
    zero = p >= 1.0
    logs = np.log1p(-np.where(zero, 0.0, p))
    cum_log = running_sum(logs, gq) - logs
    cum_zero = running_sum(zero.astype(np.float64), gq) - zero
    stop = np.where(cum_zero > 0, 0.0, np.exp(cum_log))
    return np.bincount(gq, weights=p * stop / gr, minlength=j.n_queries)


def rbp(v: LevelView, k: int | None = None, p: float = 0.9, gains: Gains = None) -> np.ndarray:
    """Rank-biased precision (Moffat & Zobel, TOIS 2008): ``RBP = (1 − p) Σ_{i≤k} w_i p^{i−1}``.

    As in trec_eval 10's ``rbp``, the weight ``w_i`` is the gain of the grade at rank i
    (the grade, or ``gains`` for listed grades), rescaled to [0, 1] as
    ``(w − min) / (max − min)`` over the query's grades 0..max and the listed ones when any
    lies outside [0, 1] (binary labels are used as they are); unjudged documents weigh 0;
    ℓ plays no part. Default persistence p = 0.9.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> rbp(v, p=0.5)
    array([0.53125])
    """
    j = v.j
    keep = j.e_label >= 0 if gains else j.e_label > 0
    eq, er, el = j.e_q[keep], j.e_rank[keep], j.e_label[keep]
    qmax = np.zeros(j.n_queries, dtype=j.doc_label.dtype)
    has = j.doc_label >= 0
    np.maximum.at(qmax, j.doc_q[has], j.doc_label[has])
    listed_grades = [g for g, _ in gains or ()]
    levels = np.arange(max(j.max_grade, 0, *listed_grades) + 1)
    lg = gain_values(levels, "linear", gains)
    listed = np.isin(levels, listed_grades)
    present = (levels[None, :] <= qmax[:, None]) | listed[None, :]
    lo = np.where(present, lg, np.inf).min(axis=1, initial=np.inf)
    hi = np.where(present, lg, -np.inf).max(axis=1, initial=-np.inf)
    hi = np.maximum(hi, gain_values(qmax, "linear", gains))  # a fractional top grade too
    rescale = (lo < 0) | (hi > 1)
    span = np.where(rescale & (hi > lo), hi - lo, 1.0)
    w = gain_values(el, "linear", gains)  # the grades' gains (fractions: by freshness)
    w = np.where(rescale[eq], (w - lo[eq]) / span[eq], w) * np.power(p, er - 1.0)
    return (1.0 - p) * seg.count_top(eq, er, j.n_queries, k, w)


def rbp_residual(v: LevelView, k: int | None = None, p: float = 0.9) -> np.ndarray:
    """RBP residual (trec_eval 10 ``rbp_resid``): the most RBP could still grow if every
    unjudged document and every rank below the list were relevant,
    ``p^n + (1 − p) Σ_{unjudged i} p^{i−1}``; trec_eval reports 0 when the list has no
    unjudged document.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> rbp_residual(v, p=0.5)
    array([0.3125])
    """
    j = v.j
    depth = j.depth(k).astype(np.float64)
    jq, jr = judged_pair(v, True)
    judged_w = seg.count_top(jq, jr, j.n_queries, k, np.power(p, jr - 1.0))
    all_w = (1.0 - np.power(p, depth)) / (1.0 - p)
    n_unj = depth - seg.count_top(jq, jr, j.n_queries, k)
    return np.where(n_unj > 0, np.power(p, depth) + (1.0 - p) * (all_w - judged_w), 0.0)
