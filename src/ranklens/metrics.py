"""Ranking metrics as vectorised functions of judged arrays.

Every function takes a :class:`~ranklens.judging.LevelView` ``v`` (the judged pair at a
relevance level ℓ) and a cutoff ``k`` (``None`` = the whole ranking) and returns one value
per query. None looks up a document: matching, ties, duplicates, groups and thresholds were
settled by :func:`ranklens.judge`, whose sparse tables list the (query, rank) of each judged
document retrieved; a metric is a few ``bincount``/``searchsorted`` calls over them. The
convention's switches (:mod:`ranklens.conventions`) enter only in a few denominators and in
which ranks earn credit or gain.

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
from ._segments import count_top, seg_running_count
from .judging import LevelView


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _count(
    v: LevelView,
    pair: tuple[np.ndarray, np.ndarray],
    k: int | None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    return count_top(pair[0], pair[1], v.j.n_queries, k, weights)


def precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Precision at k: ``P@k = (Σ_{i≤k} rel_i) / k``.

    As in trec_eval's ``P_k``, the denominator stays k when fewer than k documents were
    retrieved (missing ranks count as non-relevant). Without k: ``Σ rel_i / n`` (set_P).
    The numerator counts distinct relevant documents. Conventions may divide by the list's
    length (``retrieved``: AutoRAG) or its distinct documents (``unique_retrieved``:
    LlamaIndex) instead.
    """
    j = v.j
    num = _count(v, v.distinct, k)
    how = j.convention.precision_denominator
    if how == "k" and k is not None:
        return num / float(k)
    depth = j.depth(k).astype(np.float64)
    if how == "unique_retrieved":
        depth = depth - count_top(j.rep_q, j.rep_rank, j.n_queries, k)
    return _div(num, depth)


def recall(v: LevelView, k: int | None = None) -> np.ndarray:
    """Recall at k: ``R@k = (Σ_{i≤k} h_i) / R``; 0 when R = 0 (trec_eval ``recall_k``)."""
    return _div(_count(v, v.hits, k), v.R)


def f1(v: LevelView, k: int | None = None) -> np.ndarray:
    """F1 at k: ``2·P@k·R@k / (P@k + R@k)``; 0 when both are 0 (van Rijsbergen's F, β = 1)."""
    p, r = precision(v, k), recall(v, k)
    return _div(2 * p * r, p + r)


def success(v: LevelView, k: int | None = None, granular: bool = False) -> np.ndarray:
    """Success (hit rate) at k: 1 if a relevant document is in the top k, else 0
    (trec_eval ``success_k``). ``granular=True``: LlamaIndex's granular hit rate, the
    number of credited relevant ranks in the top k (every occurrence under its convention)
    divided by R."""
    if granular:
        return _div(_count(v, v.credit, k), v.R)
    return (_count(v, v.hits, k) > 0).astype(np.float64)


def reciprocal_rank(v: LevelView, k: int | None = None, granular: bool = False) -> np.ndarray:
    """Reciprocal rank: ``1 / rank`` of the first relevant document within the top k, 0 if
    none (trec_eval ``recip_rank`` without k). Its mean over queries is MRR.

    With the ``unit_average`` convention (AutoRAG) it is the mean over ground-truth units of
    ``1 / rank`` of each unit's first retrieved member: ``(1/R) Σ_{i≤k} h_i / i``.
    ``granular=True``: LlamaIndex's granular MRR, the mean of ``1 / rank`` over the credited
    relevant ranks in the top k.
    """
    j = v.j
    if granular:
        cq, cr = v.credit
        return _div(count_top(cq, cr, j.n_queries, k, 1.0 / cr), count_top(cq, cr, j.n_queries, k))
    if j.convention.unit_average:
        hq, hr = v.hits
        return _div(count_top(hq, hr, j.n_queries, k, 1.0 / hr), v.R)
    cq, cr = v.credit
    out = np.zeros(j.n_queries)
    if len(cq):
        first = np.ones(len(cq), dtype=bool)
        first[1:] = cq[1:] != cq[:-1]
        fq, fr = cq[first], cr[first]
        if k is not None:
            fq, fr = fq[fr <= k], fr[fr <= k]
        out[fq] = 1.0 / fr
    return out


def average_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Average precision: ``AP@k = (1/R) Σ_{i≤k} h_i · P@i`` with ``P@i = Σ_{j≤i} rel_j / i``.

    Divided by R (all relevant units, retrieved or not) also with a cutoff, as trec_eval's
    ``map`` and ``map_cut_k``; 0 when R = 0. Its mean over queries is MAP. When the
    convention counts duplicates (LlamaIndex) every occurrence of a relevant document is a
    hit. With ``unit_average`` (AutoRAG): the mean over units of the mean, over the ranks of
    the unit's members, of the precision counted within the unit.
    """
    j = v.j
    if j.convention.unit_average:
        return _unit_average_precision(v, k)
    if j.convention.duplicates == "count":
        cq, cr = v.credit
        return _div(count_top(cq, cr, j.n_queries, k, v.credit_count / cr), v.R)
    hq, hr = v.hits
    at = v.credited_at(hq, hr)
    return _div(count_top(hq, hr, j.n_queries, k, at / hr), v.R)


def _unit_average_precision(v: LevelView, k: int | None) -> np.ndarray:
    j = v.j
    keep = j.m_grade >= v.level
    mq, mr, mu = j.m_q[keep], j.m_rank[keep], j.m_unit[keep]
    if k is not None:
        sel = mr <= k
        mq, mr, mu = mq[sel], mr[sel], mu[sel]
    if len(mq) == 0:
        return np.zeros(j.n_queries)
    o = seg.order_by(mu, mr)
    mq, mr, mu = mq[o], mr[o], mu[o]
    c = seg_running_count(mu)
    prec = c / mr
    starts = np.flatnonzero(np.concatenate(([True], mu[1:] != mu[:-1])))
    ap_unit = np.add.reduceat(prec, starts) / np.diff(np.append(starts, len(mu)))
    return _div(np.bincount(mq[starts], weights=ap_unit, minlength=j.n_queries), v.R)


def _gain(grades: np.ndarray, gain: str) -> np.ndarray:
    g = grades.astype(np.float64)
    if gain == "exp":
        return np.exp2(np.maximum(g, 0)) - 1.0
    if gain == "binary":
        return (g > 0).astype(np.float64)
    return g


def _gain_entries(v: LevelView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, rank, grade) of the ranks that earn gain."""
    j = v.j
    if j.convention.duplicates == "count":
        keep = j.e_label > 0
        return j.e_q[keep], j.e_rank[keep], j.e_label[keep]
    return j.g_q, j.g_rank, j.g_grade


def dcg(v: LevelView, k: int | None = None, gain: str | None = None) -> np.ndarray:
    """Discounted cumulative gain: ``DCG@k = Σ_{i≤k} gain(g_i) / log2(i + 1)``.

    ``gain="linear"`` uses the grade (trec_eval); ``"exp"`` uses ``2^g − 1`` (Burges et al.);
    ``"binary"`` 1 for any relevant document (LlamaIndex, AutoRAG); default: the
    convention's. Negative grades give no gain unless the convention says so (Haystack).
    Grades are not thresholded by ℓ.
    """
    j = v.j
    gq, gr, gg = _gain_entries(v)
    w = _gain(gg, gain or j.convention.gain) / np.log2(gr + 1.0)
    return count_top(gq, gr, j.n_queries, k, w)


def ideal_dcg(v: LevelView, k: int | None = None, gain: str | None = None) -> np.ndarray:
    """DCG of the ideal ranking. trec_eval: all positive grades of the qrels, sorted
    descending, cut at k. Conventions: not cut at k (LlamaIndex, Haystack), or
    ``min(#ground-truth ids, #retrieved)`` ones (AutoRAG)."""
    j = v.j
    g = gain or j.convention.gain
    how = j.convention.ideal
    if how == "min_gt_retrieved":
        n = np.minimum(j.n_gt_ids, j.depth(k))
        cum = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(2, n.max(initial=0) + 2)))))
        return cum[n]
    ioff = j.ideal_off
    ipos = seg.seg_positions(ioff)
    x = _gain(j.ideal_grade, g) / np.log2(ipos + 2.0)
    if k is not None and how == "qrels_cut":
        x = np.where(ipos < k, x, 0.0)
    return seg.seg_sum(x, ioff)


def ndcg(v: LevelView, k: int | None = None, gain: str | None = None) -> np.ndarray:
    """Normalised DCG: ``nDCG@k = DCG@k / IDCG@k``; 0 when IDCG@k = 0.

    trec_eval's ``ndcg_cut_k`` (and ``ndcg`` without k) with linear gain; ``gain="exp"``
    gives the exponential-gain variant (``ndcg_exp``). Reference: Järvelin & Kekäläinen,
    "Cumulated gain-based evaluation of IR techniques", TOIS 2002.
    """
    return _div(dcg(v, k, gain), ideal_dcg(v, k, gain))


def r_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """R-precision: ``Σ_{i≤R} h_i / R``, precision at rank R (÷R even when fewer than R
    documents were retrieved); 0 when R = 0 (trec_eval ``Rprec``)."""
    hq, hr = v.hits
    R = v.R
    inside = hr <= R[hq]
    return _div(np.bincount(hq[inside], minlength=v.j.n_queries), R)


def bpref(v: LevelView, k: int | None = None) -> np.ndarray:
    """Binary preference (Buckley & Voorhees, SIGIR 2004), as trec_eval computes it:

    ``bpref = (1/R) Σ_{relevant retrieved r} [1 − min(n_r, R) / min(N, R)]``, where ``n_r``
    is the number of judged non-relevant documents ranked above r and N the number of
    judged non-relevant documents in the qrels; a term is 1 when ``n_r = 0``. Documents with
    no label or a negative one are skipped.
    """
    j = v.j
    cq, cr = v.credit
    nq, nr = v.nonrel
    if k is not None:
        nq, nr = nq[nr <= k], nr[nr <= k]
    w = j.width
    nkeys = nq * w + nr
    n_above = np.searchsorted(nkeys, cq * w + cr, "left") - np.searchsorted(nkeys, cq * w, "left")
    R = v.R[cq]
    N = v.N_nonrel[cq]
    term = np.where(n_above > 0, 1.0 - _div(np.minimum(n_above, R), np.minimum(N, R)), 1.0)
    return _div(count_top(cq, cr, j.n_queries, k, term), v.R)


def err(v: LevelView, k: int | None = None, max_grade: int | None = None) -> np.ndarray:
    """Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009):

    ``ERR@k = Σ_{i≤k} (1/i) · p_i · Π_{j<i} (1 − p_j)`` with ``p_i = (2^{g_i} − 1) / 2^{g_max}``.
    ``g_max`` defaults to the highest grade in the qrels (``err(max=4)`` reproduces gdeval).
    """
    j = v.j
    gmax = j.max_grade if max_grade is None else int(max_grade)
    gq, gr, gg = _gain_entries(v)
    if gmax <= 0 or len(gq) == 0:
        return np.zeros(j.n_queries)
    if k is not None:
        sel = gr <= k
        gq, gr, gg = gq[sel], gr[sel], gg[sel]
    p = np.minimum((np.exp2(np.maximum(gg, 0).astype(np.float64)) - 1.0) / np.exp2(gmax), 1.0)
    zero = p >= 1.0
    logs = np.log1p(-np.where(zero, 0.0, p))
    cum_log = _running_sum(logs, gq) - logs
    cum_zero = _running_sum(zero.astype(np.float64), gq) - zero
    stop = np.where(cum_zero > 0, 0.0, np.exp(cum_log))
    return np.bincount(gq, weights=p * stop / gr, minlength=j.n_queries)


def _running_sum(x: np.ndarray, q_sorted: np.ndarray) -> np.ndarray:
    """Inclusive running sum of x within runs of equal q (q sorted)."""
    if len(x) == 0:
        return x
    starts = np.flatnonzero(np.concatenate(([True], q_sorted[1:] != q_sorted[:-1])))
    off = np.append(starts, len(x))
    return seg.seg_cumsum(x, off)


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
    return (1.0 - p) * count_top(eq, er, j.n_queries, k, w)


def _judged_pair(v: LevelView, nonnegative: bool) -> tuple[np.ndarray, np.ndarray]:
    j = v.j
    if nonnegative:
        keep = j.e_label >= 0
        return j.e_q[keep], j.e_rank[keep]
    return j.e_q, j.e_rank


def judged_at(v: LevelView, k: int | None = None) -> np.ndarray:
    """Judged@k: the share of the top ``min(k, n)`` documents that have a label in the qrels
    (any grade, negative included), as ir_measures' ``Judged@k``; 0 when nothing was
    retrieved."""
    return _div(_count(v, _judged_pair(v, False), k), v.j.depth(k))


def num_rel(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of relevant units in the qrels, R (trec_eval ``num_rel``; summed over queries)."""
    return v.R.astype(np.float64)


def num_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of documents retrieved, n (within the top k if given; summed over queries)."""
    return v.j.depth(k).astype(np.float64)


def num_rel_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of relevant documents retrieved (within the top k if given; summed)."""
    return _count(v, v.distinct, k)


def set_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Set precision: ``Σ rel_i / n`` over the retrieved set (trec_eval ``set_P``)."""
    return _div(num_rel_ret(v, k), num_ret(v, k))


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
    return _div(_count(v, v.distinct, k), den)


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
    and 0 when fewer than c relevant units were retrieved. (Precision only rises at a
    relevant rank, so the maximum is taken over relevant ranks.)
    """
    j = v.j
    n_q = j.n_queries
    cq, cr = v.credit
    if k is not None:
        cq, cr = cq[cr <= k], cr[cr <= k]
    out = np.zeros(n_q)
    if len(cq) == 0:
        return out
    P = v.credit_count[: len(cq)] / cr if k is None else seg_running_count(cq) / cr
    starts = np.flatnonzero(np.concatenate(([True], cq[1:] != cq[:-1])))
    off = np.append(starts, len(cq))
    iP = seg.seg_reverse_cummax(P, off)
    hq, hr = v.hits
    # cumulative units found up to each credited rank
    w = j.width
    hkeys = hq * w + hr
    units_upto = np.searchsorted(hkeys, cq * w + cr, "right") - np.searchsorted(hkeys, cq * w)
    c = _recall_cutoffs(v.R, r, legacy)
    first_q = cq[starts]
    zero_c = c[first_q] == 0
    out[first_q[zero_c]] = iP[starts[zero_c]]
    total = units_upto[off[1:] - 1]
    want = (c[first_q] > 0) & (c[first_q] <= total)
    qs = first_q[want]
    if len(qs):
        big = int(units_upto.max()) + 2
        keys = cq * big + units_upto
        at = np.searchsorted(keys, qs * big + c[qs], "left")
        out[qs] = iP[at]
    return out


RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def eleven_point_average(v: LevelView, k: int | None = None, legacy: bool = False) -> np.ndarray:
    """11-point interpolated average precision: the mean of ``iP(r)`` at r = 0, 0.1, …, 1
    (trec_eval ``11pt_avg``)."""
    return np.mean([interpolated_precision(v, k, r, legacy) for r in RECALL_POINTS], axis=0)


def r_precision_mult(v: LevelView, k: int | None = None, m: float = 1.0) -> np.ndarray:
    """Precision at a multiple of R (trec_eval ``Rprec_mult_m``): ``P@c`` with
    ``c = ⌊m·R + 0.9⌋`` (÷c even beyond the retrieved list); 0 when c = 0."""
    dq, dr = v.distinct
    c = np.floor(m * v.R + 0.9).astype(np.int64)
    inside = dr <= c[dq]
    return _div(np.bincount(dq[inside], minlength=v.j.n_queries), c)


def unjudged_at(v: LevelView, k: int | None = None) -> np.ndarray:
    """Unjudged@k: ``(Σ_{i≤k} [no label or a negative label at i]) / k`` (trec_eval
    ``unj_k``; ranks beyond the list count as judged). Without k, ÷n."""
    j = v.j
    depth = j.depth(k).astype(np.float64)
    unj = depth - _count(v, _judged_pair(v, True), k)
    return unj / float(k) if k is not None else _div(unj, depth)


def rbp_residual(v: LevelView, k: int | None = None, p: float = 0.9) -> np.ndarray:
    """RBP residual (trec_eval 10 ``rbp_resid``): the most RBP could still grow if every
    unjudged document and every rank below the list were relevant,
    ``p^n + (1 − p) Σ_{unjudged i} p^{i−1}``; trec_eval reports 0 when the list has no
    unjudged document."""
    j = v.j
    depth = j.depth(k).astype(np.float64)
    jq, jr = _judged_pair(v, True)
    judged_w = count_top(jq, jr, j.n_queries, k, np.power(p, jr - 1.0))
    all_w = (1.0 - np.power(p, depth)) / (1.0 - p)
    n_unj = depth - count_top(jq, jr, j.n_queries, k)
    return np.where(n_unj > 0, np.power(p, depth) + (1.0 - p) * (all_w - judged_w), 0.0)


def set_map(v: LevelView, k: int | None = None) -> np.ndarray:
    """Unranked set AP (trec_eval ``set_map``): ``num_rel_ret² / (n · R)`` = set precision ×
    set recall."""
    return set_precision(v, k) * set_recall(v, k)


def set_relative_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """``num_rel_ret / min(n, R)`` (trec_eval ``set_relative_P``)."""
    return _div(num_rel_ret(v, k), np.minimum(num_ret(v, k), v.R))


def num_nonrel_judged_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Judged non-relevant documents retrieved (0 ≤ grade < ℓ; summed over queries)."""
    return _count(v, v.nonrel, k)


def num_q(v: LevelView, k: int | None = None) -> np.ndarray:
    """1 per evaluated query; summed, the number of queries (trec_eval ``num_q``)."""
    return np.ones(v.j.n_queries)
