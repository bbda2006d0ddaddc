"""Ranking metrics as vectorised functions of judged arrays.

Every function takes a :class:`~ranklens.judging.LevelView` ``v`` (the judged pair at a
relevance level ℓ) and a cutoff ``k`` (``None`` = the whole ranking) and returns one value
per query. None looks up a document: matching, ties, duplicates, groups and thresholds were
settled by :func:`ranklens.judge`.

Notation: ``rel_i`` is 1 when the document at rank i is relevant (grade ≥ ℓ); ``h_i`` the
number of relevant units first found at rank i (equal to ``rel_i`` for plain labels; see
grouped ground truth in :mod:`ranklens.judging`); ``R`` the number of relevant units in the
qrels; ``n`` the number of documents retrieved; ``g_i`` the grade (gain) at rank i; ``g*_i``
the i-th largest positive grade in the qrels (the ideal ranking).

References: trec_eval 10.0 (usnistgov/trec_eval), whose numbers these reproduce to 1e-9 by
default; Järvelin & Kekäläinen (2002) for DCG; Burges et al. (2005) for exponential gain;
Chapelle et al. (2009) for ERR; Moffat & Zobel (2008) for RBP; Buckley & Voorhees (2004) for
bpref; Manning, Raghavan & Schütze (2008), ch. 8, for precision, recall, F and interpolated
precision.
"""

from __future__ import annotations

import numpy as np

from . import _segments as seg
from .judging import LevelView


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Precision at k: ``P@k = (Σ_{i≤k} rel_i) / k``.

    As in trec_eval's ``P_k``, the denominator stays k when fewer than k documents were
    retrieved (missing ranks count as non-relevant). Without k: ``Σ rel_i / n`` (set_P).
    """
    if k is None:
        return set_precision(v, None)
    return v.rel_at(k) / float(k)


def recall(v: LevelView, k: int | None = None) -> np.ndarray:
    """Recall at k: ``R@k = (Σ_{i≤k} h_i) / R``; 0 when R = 0 (trec_eval ``recall_k``)."""
    return _div(v.hits_at(k), v.R)


def f1(v: LevelView, k: int | None = None) -> np.ndarray:
    """F1 at k: ``2·P@k·R@k / (P@k + R@k)``; 0 when both are 0 (van Rijsbergen's F, β = 1)."""
    p, r = precision(v, k), recall(v, k)
    return _div(2 * p * r, p + r)


def success(v: LevelView, k: int | None = None) -> np.ndarray:
    """Success (hit rate) at k: 1 if a relevant document is in the top k, else 0
    (trec_eval ``success_k``)."""
    return (v.hits_at(k) > 0).astype(np.float64)


def reciprocal_rank(v: LevelView, k: int | None = None) -> np.ndarray:
    """Reciprocal rank: ``1 / rank`` of the first relevant document within the top k, 0 if
    none (trec_eval ``recip_rank`` without k). Its mean over queries is MRR."""
    j = v.j
    x = np.where(v.rel, 1.0 / j.rank, 0.0)
    if k is not None:
        x = np.where(j.pos < k, x, 0.0)
    return seg.seg_max(x, j.off)


def average_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Average precision: ``AP@k = (1/R) Σ_{i≤k} h_i · P@i`` with ``P@i = Σ_{j≤i} rel_j / i``.

    Divided by R (all relevant units, retrieved or not) also with a cutoff, as trec_eval's
    ``map`` and ``map_cut_k``; 0 when R = 0. Its mean over queries is MAP.
    """
    j = v.j
    contrib = np.where(v.hits > 0, v.hits * (v.cum_rel / j.rank), 0.0)
    return _div(v.sum_top(contrib, k), v.R)


def _gain(grades: np.ndarray, gain: str) -> np.ndarray:
    g = np.maximum(grades, 0).astype(np.float64)
    if gain == "exp":
        return np.exp2(g) - 1.0
    return g


def dcg(v: LevelView, k: int | None = None, gain: str = "linear") -> np.ndarray:
    """Discounted cumulative gain: ``DCG@k = Σ_{i≤k} gain(g_i) / log2(i + 1)``.

    ``gain="linear"`` uses the grade (trec_eval); ``gain="exp"`` uses ``2^g − 1`` (Burges
    et al.). Negative grades give no gain. Grades are not thresholded by ℓ.
    """
    j = v.j
    return v.sum_top(_gain(j.gain_grade, gain) / j.discount, k)


def ideal_dcg(v: LevelView, k: int | None = None, gain: str = "linear") -> np.ndarray:
    """DCG of the ideal ranking: all positive grades of the qrels, sorted descending, cut
    at k (trec_eval's ``ndcg_cut`` ideal)."""
    j = v.j
    ioff = j.ideal_off
    ipos = seg.seg_positions(ioff)
    x = _gain(j.ideal_grade, gain) / np.log2(ipos + 2.0)
    if k is not None:
        x = np.where(ipos < k, x, 0.0)
    return seg.seg_sum(x, ioff)


def ndcg(v: LevelView, k: int | None = None, gain: str = "linear") -> np.ndarray:
    """Normalised DCG: ``nDCG@k = DCG@k / IDCG@k``; 0 when IDCG@k = 0.

    trec_eval's ``ndcg_cut_k`` (and ``ndcg`` without k) with linear gain; ``gain="exp"``
    gives the exponential-gain variant (``ndcg_exp``). Reference: Järvelin & Kekäläinen,
    "Cumulated gain-based evaluation of IR techniques", TOIS 2002.
    """
    return _div(dcg(v, k, gain), ideal_dcg(v, k, gain))


def r_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """R-precision: ``Σ_{i≤R} h_i / R``, precision at rank R (÷R even when fewer than R
    documents were retrieved); 0 when R = 0 (trec_eval ``Rprec``)."""
    j = v.j
    R = v.R
    lens = j.lens
    take = np.minimum(R, lens)
    got = np.zeros(j.n_queries, dtype=np.float64)
    ok = take > 0
    got[ok] = v.cum_hits[j.off[:-1][ok] + take[ok] - 1]
    return _div(got, R)


def bpref(v: LevelView, k: int | None = None) -> np.ndarray:
    """Binary preference (Buckley & Voorhees, SIGIR 2004), as trec_eval computes it:

    ``bpref = (1/R) Σ_{relevant retrieved r} [1 − min(n_r, R) / min(N, R)]``, where ``n_r``
    is the number of judged non-relevant documents ranked above r and N the number of
    judged non-relevant documents in the qrels; a term is 1 when ``n_r = 0``. Documents with
    no label or a negative one are skipped.
    """
    j = v.j
    nonrel = v.nonrel
    if k is not None:
        nonrel = nonrel & (j.pos < k)
    n_above = seg.seg_cumsum(nonrel.astype(np.int64), j.off) - nonrel
    R = v.R[j.qidx]
    N = v.N_nonrel[j.qidx]
    denom = np.minimum(N, R).astype(np.float64)
    num = np.minimum(n_above, R).astype(np.float64)
    term = np.where(n_above > 0, 1.0 - _div(num, denom), 1.0)
    contrib = np.where(v.rel, term, 0.0)
    return _div(v.sum_top(contrib, k), v.R)


def err(v: LevelView, k: int | None = None, max_grade: int | None = None) -> np.ndarray:
    """Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009):

    ``ERR@k = Σ_{i≤k} (1/i) · p_i · Π_{j<i} (1 − p_j)`` with ``p_i = (2^{g_i} − 1) / 2^{g_max}``.
    ``g_max`` defaults to the highest grade in the qrels (``err(max=4)`` reproduces gdeval).
    """
    j = v.j
    gmax = j.max_grade if max_grade is None else int(max_grade)
    if gmax <= 0:
        return np.zeros(j.n_queries)
    p = (np.exp2(np.maximum(j.gain_grade, 0).astype(np.float64)) - 1.0) / np.exp2(gmax)
    p = np.minimum(p, 1.0)
    # Π_{j<i}(1 − p_j) within each query, exactly: count factors equal to 0 separately.
    zero = p >= 1.0
    logs = np.where(zero, 0.0, np.log1p(-np.where(zero, 0.0, p)))
    cum_log = seg.seg_cumsum(logs, j.off) - logs
    cum_zero = seg.seg_cumsum(zero.astype(np.int64), j.off) - zero
    stop = np.where(cum_zero > 0, 0.0, np.exp(cum_log))
    return v.sum_top(p * stop / j.rank, k)


def rbp(v: LevelView, k: int | None = None, p: float = 0.9) -> np.ndarray:
    """Rank-biased precision (Moffat & Zobel, TOIS 2008): ``RBP = (1 − p) Σ_{i≤k} w_i p^{i−1}``.

    As in trec_eval 10's ``rbp``, the weight ``w_i`` is the grade of the document at rank i
    divided by the query's highest grade when that exceeds 1 (so weights lie in [0, 1]; binary
    labels are used as they are); ℓ plays no part. Default persistence p = 0.9.
    """
    j = v.j
    lab = np.where(j.label >= 0, j.label, 0).astype(np.float64)
    qmax = np.zeros(j.n_queries)
    has = j.doc_label >= 0
    if has.any():
        np.maximum.at(qmax, j.doc_q[has], j.doc_label[has].astype(np.float64))
    scale = np.where(qmax > 1, qmax, 1.0)[j.qidx]
    w = lab / scale
    return (1.0 - p) * v.sum_top(w * np.power(p, j.pos.astype(np.float64)), k)


def judged_at(v: LevelView, k: int | None = None) -> np.ndarray:
    """Judged@k: the share of the top ``min(k, n)`` documents that have a label in the qrels
    (any grade, negative included), as ir_measures' ``Judged@k``; 0 when nothing was
    retrieved."""
    j = v.j
    got = v.sum_top(j.judged.astype(np.float64), k)
    depth = j.lens if k is None else np.minimum(j.lens, k)
    return _div(got, depth)


def num_rel(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of relevant units in the qrels, R (trec_eval ``num_rel``; summed over queries)."""
    return v.R.astype(np.float64)


def num_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of documents retrieved, n (within the top k if given; summed over queries)."""
    lens = v.j.lens
    return (lens if k is None else np.minimum(lens, k)).astype(np.float64)


def num_rel_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of relevant documents retrieved (within the top k if given; summed)."""
    return v.rel_at(k).astype(np.float64)


def set_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Set precision: ``Σ rel_i / n`` over the retrieved set (trec_eval ``set_P``)."""
    return _div(v.rel_at(k), num_ret(v, k))


def set_recall(v: LevelView, k: int | None = None) -> np.ndarray:
    """Set recall: ``Σ h_i / R`` over the retrieved set (trec_eval ``set_recall``)."""
    return recall(v, k)


def set_f(v: LevelView, k: int | None = None, beta: float = 1.0) -> np.ndarray:
    """Set F: ``(1 + β²)·P·R / (β²·P + R)`` of set precision and set recall; 0 when both
    are 0 (trec_eval ``set_F``, β = 1)."""
    p, r = set_precision(v, k), set_recall(v, k)
    b2 = beta * beta
    return _div((1 + b2) * p * r, b2 * p + r)


def relative_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Relative precision at k: ``Σ_{i≤k} rel_i / min(k, R)`` (trec_eval ``relative_P_k``);
    0 when R = 0."""
    R = v.R
    den = R if k is None else np.minimum(R, k)
    return _div(v.rel_at(k), den)


def _recall_cutoffs(R: np.ndarray, r: float, legacy: bool) -> np.ndarray:
    if legacy:  # trec_eval 9 and pytrec_eval: (long)(r·R + 0.9)
        return np.floor(r * R + 0.9).astype(np.int64)
    return np.floor(r * R + 0.5).astype(np.int64)  # trec_eval 10: lround(r·R)


def interpolated_precision(
    v: LevelView, k: int | None = None, r: float = 0.0, legacy: bool = False
) -> np.ndarray:
    """Interpolated precision at recall level r (trec_eval ``iprec_at_recall_r``):

    ``iP(r) = max_{i ≥ i_c} P@i`` where ``i_c`` is the rank at which c relevant units have
    been found, ``c = round(r·R)`` (trec_eval 10; ``legacy=True`` uses trec_eval 9's
    ``⌊r·R + 0.9⌋``, as pytrec_eval does); c = 0 gives the maximum precision at any rank,
    and 0 when fewer than c relevant units were retrieved.
    """
    j = v.j
    R = v.R
    c = _recall_cutoffs(R, r, legacy)
    P = _div(v.cum_rel.astype(np.float64), j.rank)
    if k is not None:
        P = np.where(j.pos < k, P, 0.0)
    iP = seg.seg_reverse_cummax(P, j.off)
    found = v.hits_at(k)
    out = np.zeros(j.n_queries)
    nonempty = j.lens > 0
    zero_c = (c == 0) & nonempty
    out[zero_c] = iP[j.off[:-1][zero_c]]
    want = (c > 0) & (c <= found)
    if want.any():
        g = np.cumsum(v.hits)
        before = np.concatenate(([0], g))[j.off[:-1]]
        at = np.searchsorted(g, before[want] + c[want], "left")
        out[want] = iP[at]
    return out


RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def eleven_point_average(v: LevelView, k: int | None = None, legacy: bool = False) -> np.ndarray:
    """11-point interpolated average precision: the mean of ``iP(r)`` at r = 0, 0.1, …, 1
    (trec_eval ``11pt_avg``)."""
    return np.mean([interpolated_precision(v, k, r, legacy) for r in RECALL_POINTS], axis=0)


def r_precision_mult(v: LevelView, k: int | None = None, m: float = 1.0) -> np.ndarray:
    """Precision at a multiple of R (trec_eval ``Rprec_mult_m``): ``P@c`` with
    ``c = ⌊m·R + 0.9⌋`` (÷c even beyond the retrieved list); 0 when c = 0."""
    j = v.j
    c = np.floor(m * v.R + 0.9).astype(np.int64)
    take = np.minimum(c, j.lens)
    got = np.zeros(j.n_queries, dtype=np.float64)
    ok = take > 0
    got[ok] = v.cum_rel[j.off[:-1][ok] + take[ok] - 1]
    return _div(got, c)


def unjudged_at(v: LevelView, k: int | None = None) -> np.ndarray:
    """Unjudged@k: ``(Σ_{i≤k} [no label or a negative label at i]) / k`` (trec_eval
    ``unj_k``; ranks beyond the list count as judged). Without k, ÷n."""
    j = v.j
    unj = (j.label < 0).astype(np.float64)  # NOT_IN_QRELS is negative too
    got = v.sum_top(unj, k)
    return got / float(k) if k is not None else _div(got, j.lens)


def rbp_residual(v: LevelView, k: int | None = None, p: float = 0.9) -> np.ndarray:
    """RBP residual (trec_eval 10 ``rbp_resid``): the most RBP could still grow if every
    unjudged document and every rank below the list were relevant,
    ``p^n + (1 − p) Σ_{unjudged i} p^{i−1}``; trec_eval reports 0 when the list has no
    unjudged document."""
    j = v.j
    unj = j.label < 0
    if k is not None:
        unj = unj & (j.pos < k)
    weights = np.power(p, j.pos.astype(np.float64))
    s = v.sum_top(np.where(unj, weights, 0.0), k)
    depth = j.lens if k is None else np.minimum(j.lens, k)
    n_unj = v.sum_top(unj.astype(np.float64), k)
    return np.where(n_unj > 0, np.power(p, depth) + (1.0 - p) * s, 0.0)


def set_map(v: LevelView, k: int | None = None) -> np.ndarray:
    """Unranked set AP (trec_eval ``set_map``): ``num_rel_ret² / (n · R)`` = set precision ×
    set recall."""
    return set_precision(v, k) * set_recall(v, k)


def set_relative_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """``num_rel_ret / min(n, R)`` (trec_eval ``set_relative_P``)."""
    return _div(v.rel_at(k), np.minimum(num_ret(v, k), v.R))


def num_nonrel_judged_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Judged non-relevant documents retrieved (0 ≤ grade < ℓ; summed over queries)."""
    return v.sum_top(v.nonrel.astype(np.float64), k)


def num_q(v: LevelView, k: int | None = None) -> np.ndarray:
    """1 per evaluated query; summed, the number of queries (trec_eval ``num_q``)."""
    return np.ones(v.j.n_queries)
