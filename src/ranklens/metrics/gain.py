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


def gain_values(grades: np.ndarray, gain: str) -> np.ndarray:
    """The gains of ``grades``: ``linear`` (the grade), ``exp`` (2^g − 1) or ``binary``."""
    g = grades.astype(np.float64)
    if gain == "exp":
        return np.exp2(np.maximum(g, 0)) - 1.0
    if gain == "binary":
        return (g > 0).astype(np.float64)
    return g


def dcg(v: LevelView, k: int | None = None, gain: str | None = None) -> np.ndarray:
    """Discounted cumulative gain: ``DCG@k = Σ_{i≤k} gain(g_i) / log2(i + 1)``.

    ``gain="linear"`` uses the grade (trec_eval); ``"exp"`` uses ``2^g − 1`` (Burges et al.);
    ``"binary"`` 1 for any relevant document (LlamaIndex, AutoRAG); default: the
    convention's. Negative grades give no gain unless the convention says so (Haystack).
    Grades are not thresholded by ℓ.
    """
    gq, gr, gg = v.gain_entries
    w = gain_values(gg, gain or v.gain) / np.log2(gr + 1.0)
    return seg.count_top(gq, gr, v.j.n_queries, k, w)


def ideal_dcg(v: LevelView, k: int | None = None, gain: str | None = None) -> np.ndarray:
    """DCG of the ideal ranking (:meth:`~ranklens.judging.LevelView.ideal`). trec_eval: all
    positive grades of the qrels, sorted descending, cut at k. Conventions: not cut at k
    (LlamaIndex, Haystack), or ``min(#ground-truth ids, #retrieved)`` ones (AutoRAG)."""
    ioff, grades, cut = v.ideal(k)
    ipos = seg.seg_positions(ioff)
    x = gain_values(grades, gain or v.gain) / np.log2(ipos + 2.0)
    if cut is not None:
        x = np.where(ipos < cut, x, 0.0)
    return seg.seg_sum(x, ioff)


def ndcg(v: LevelView, k: int | None = None, gain: str | None = None) -> np.ndarray:
    """Normalised DCG: ``nDCG@k = DCG@k / IDCG@k``; 0 when IDCG@k = 0.

    trec_eval's ``ndcg_cut_k`` (and ``ndcg`` without k) with linear gain; ``gain="exp"``
    gives the exponential-gain variant (``ndcg_exp``). Reference: Järvelin & Kekäläinen,
    "Cumulated gain-based evaluation of IR techniques", TOIS 2002.
    """
    return safe_div(dcg(v, k, gain), ideal_dcg(v, k, gain))


def err(v: LevelView, k: int | None = None, max_grade: int | None = None) -> np.ndarray:
    """Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009):

    ``ERR@k = Σ_{i≤k} (1/i) · p_i · Π_{j<i} (1 − p_j)`` with ``p_i = (2^{g_i} − 1) / 2^{g_max}``.
    ``g_max`` defaults to the highest grade in the qrels (``err(max=4)`` reproduces gdeval).
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


def rbp(v: LevelView, k: int | None = None, p: float = 0.9) -> np.ndarray:
    """Rank-biased precision (Moffat & Zobel, TOIS 2008): ``RBP = (1 − p) Σ_{i≤k} w_i p^{i−1}``.

    As in trec_eval 10's ``rbp``, the weight ``w_i`` is the grade of the document at rank i
    divided by the query's highest grade when that exceeds 1 (so weights lie in [0, 1]; binary
    labels are used as they are); ℓ plays no part. Default persistence p = 0.9.
    """
    j = v.j
    keep = j.e_label > 0
    eq, er, el = j.e_q[keep], j.e_rank[keep], j.e_label[keep].astype(np.float64)
    qmax = np.zeros(j.n_queries)
    has = j.doc_label >= 0
    np.maximum.at(qmax, j.doc_q[has], j.doc_label[has].astype(np.float64))
    scale = np.where(qmax > 1, qmax, 1.0)[eq]
    w = el / scale * np.power(p, er - 1.0)
    return (1.0 - p) * seg.count_top(eq, er, j.n_queries, k, w)


def rbp_residual(v: LevelView, k: int | None = None, p: float = 0.9) -> np.ndarray:
    """RBP residual (trec_eval 10 ``rbp_resid``): the most RBP could still grow if every
    unjudged document and every rank below the list were relevant,
    ``p^n + (1 − p) Σ_{unjudged i} p^{i−1}``; trec_eval reports 0 when the list has no
    unjudged document."""
    j = v.j
    depth = j.depth(k).astype(np.float64)
    jq, jr = judged_pair(v, True)
    judged_w = seg.count_top(jq, jr, j.n_queries, k, np.power(p, jr - 1.0))
    all_w = (1.0 - np.power(p, depth)) / (1.0 - p)
    n_unj = depth - seg.count_top(jq, jr, j.n_queries, k)
    return np.where(n_unj > 0, np.power(p, depth) + (1.0 - p) * (all_w - judged_w), 0.0)
