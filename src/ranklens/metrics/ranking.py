"""Binary-relevance ranking metrics: precision, recall, F, success, RR, AP, R-precision,
bpref, relative precision.

Every function takes a :class:`~ranklens.judging.LevelView` ``v`` (the judged pair at a
relevance level ℓ) and a cutoff ``k`` (``None`` = the whole ranking) and returns one value
per query. None looks up a document: matching, ties, duplicates, groups and thresholds were
settled by :func:`ranklens.judge`, whose sparse tables list the (query, rank) of each judged
document retrieved; a metric is a few ``bincount``/``searchsorted`` calls over them. The
convention's switches (:mod:`ranklens.judging.conventions`) enter only in a few denominators and in
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

from ..judging import LevelView
from ..model import segments as seg
from .base import count_pair, running_sum, safe_div


def precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Precision at k: ``P@k = (Σ_{i≤k} rel_i) / k``.

    As in trec_eval's ``P_k``, the denominator stays k when fewer than k documents were
    retrieved (missing ranks count as non-relevant). Without k: ``Σ rel_i / n`` (set_P).
    The numerator counts distinct relevant documents. Conventions may divide by the list's
    length (``retrieved``: AutoRAG) or its distinct documents (``unique_retrieved``:
    LlamaIndex) instead (:meth:`~ranklens.judging.LevelView.precision_depth`).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> precision(v, 2)
    array([0.5])
    """
    return safe_div(count_pair(v, v.distinct, k), v.precision_depth(k))


def recall(v: LevelView, k: int | None = None) -> np.ndarray:
    """Recall at k: ``R@k = (Σ_{i≤k} h_i) / R``; 0 when R = 0 (trec_eval ``recall_k``).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> recall(v, 4)
    array([0.66666667])
    """
    return safe_div(count_pair(v, v.hits, k), v.R)


def f1(v: LevelView, k: int | None = None) -> np.ndarray:
    """F1 at k: ``2·P@k·R@k / (P@k + R@k)``; 0 when both are 0 (van Rijsbergen's F, β = 1).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> f1(v, 4)
    array([0.57142857])
    """
    p, r = precision(v, k), recall(v, k)
    return safe_div(2 * p * r, p + r)


def success(v: LevelView, k: int | None = None, granular: bool = False) -> np.ndarray:
    """Success (hit rate) at k: 1 if a relevant document is in the top k, else 0
    (trec_eval ``success_k``). ``granular=True``: LlamaIndex's granular hit rate, the
    number of credited relevant ranks in the top k (every occurrence under its convention)
    divided by R.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> success(v, 1)
    array([1.])
    """
    if granular:
        return safe_div(count_pair(v, v.credit, k), v.R)
    return (count_pair(v, v.hits, k) > 0).astype(np.float64)


def reciprocal_rank(v: LevelView, k: int | None = None, granular: bool = False) -> np.ndarray:
    """Reciprocal rank: ``1 / rank`` of the first relevant document within the top k, 0 if
    none (trec_eval ``recip_rank`` without k). Its mean over queries is MRR.

    ``granular=True``: LlamaIndex's granular MRR, the mean of ``1 / rank`` over the credited
    relevant ranks in the top k. (AutoRAG's per-group RR is
    :func:`ranklens.metrics.grouped.unit_reciprocal_rank`.)

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> reciprocal_rank(v)
    array([1.])
    """
    j = v.j
    cq, cr = v.credit
    if granular:
        return safe_div(
            seg.count_top(cq, cr, j.n_queries, k, 1.0 / cr), seg.count_top(cq, cr, j.n_queries, k)
        )
    out = np.zeros(j.n_queries)
    if len(cq):
        first = seg.run_starts(cq)
        fq, fr = cq[first], cr[first]
        if k is not None:
            fq, fr = fq[fr <= k], fr[fr <= k]
        out[fq] = 1.0 / fr
    return out


def average_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Average precision: ``AP@k = (1/R) Σ_{i≤k} h_i · P@i`` with ``P@i = Σ_{j≤i} rel_j / i``.

    Divided by R (all relevant units, retrieved or not) also with a cutoff, as trec_eval's
    ``map`` and ``map_cut_k``; 0 when R = 0. Its mean over queries is MAP. The ranks where
    precision is taken are the view's :attr:`~ranklens.judging.LevelView.precision_points`
    (every occurrence of a relevant document when the convention counts duplicates, as
    LlamaIndex). (AutoRAG's per-group AP is
    :func:`ranklens.metrics.grouped.unit_average_precision`.)

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> average_precision(v)
    array([0.5])
    """
    pq, pr, above = v.precision_points
    return safe_div(seg.count_top(pq, pr, v.j.n_queries, k, above / pr), v.R)


def r_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """R-precision: ``Σ_{i≤R} h_i / R``, precision at rank R (÷R even when fewer than R
    documents were retrieved); 0 when R = 0 (trec_eval ``Rprec``).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> r_precision(v)
    array([0.33333333])
    """
    hq, hr = v.hits
    R = v.R
    inside = hr <= R[hq]
    return safe_div(np.bincount(hq[inside], minlength=v.j.n_queries), R)


def bpref(v: LevelView, k: int | None = None) -> np.ndarray:
    """Binary preference (Buckley & Voorhees, SIGIR 2004), as trec_eval computes it:

    ``bpref = (1/R) Σ_{relevant retrieved r} [1 − min(n_r, R) / min(N, R)]``, where ``n_r``
    is the number of judged non-relevant documents ranked above r and N the number of
    judged non-relevant documents in the qrels; a term is 1 when ``n_r = 0``. Documents with
    no label or a negative one are skipped.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> bpref(v)
    array([0.33333333])
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
    term = np.where(n_above > 0, 1.0 - safe_div(np.minimum(n_above, R), np.minimum(N, R)), 1.0)
    return safe_div(seg.count_top(cq, cr, j.n_queries, k, term), v.R)


def relative_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Relative precision at k: ``Σ_{i≤k} rel_i / min(k, R)`` (trec_eval ``relative_P_k``);
    0 when R = 0.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> relative_precision(v, 2)
    array([0.5])
    """
    R = v.R
    den = R if k is None else np.minimum(R, k)
    return safe_div(count_pair(v, v.distinct, k), den)


def r_precision_mult(v: LevelView, k: int | None = None, m: float = 1.0) -> np.ndarray:
    """Precision at a multiple of R (trec_eval ``Rprec_mult_m``): ``P@c`` with
    ``c = ⌊m·R + 0.9⌋`` (÷c even beyond the retrieved list); 0 when c = 0.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> r_precision_mult(v, m=2.0)
    array([0.33333333])
    """
    dq, dr = v.distinct
    c = np.floor(m * v.R + 0.9).astype(np.int64)
    inside = dr <= c[dq]
    return safe_div(np.bincount(dq[inside], minlength=v.j.n_queries), c)


def bin_g(v: LevelView, k: int | None = None) -> np.ndarray:
    """Binary G (trec_eval ``binG``): ``(1/R) Σ_{relevant retrieved i} 1 / log2(2 + u_i)``,
    ``u_i`` the documents above i that are not relevant (judged or not); 0 when no relevant
    document is retrieved.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> bin_g(v)
    array([0.5])
    """
    cq, cr = v.credit
    term = 1.0 / np.log2(2.0 + cr - v.credit_count)
    return safe_div(seg.count_top(cq, cr, v.j.n_queries, k, term), v.R)


INFAP_EPSILON = 0.00001
"""trec_eval's smoothing constant in infAP's precision estimate."""


def inferred_ap(v: LevelView, k: int | None = None) -> np.ndarray:
    """Inferred AP (Yilmaz & Aslam, CIKM 2006), as trec_eval's ``infAP``: the documents the
    qrels do not list are skipped; a negative label marks a pooled but unjudged document.
    A relevant document at 0-based index j > 0, with ``r`` relevant, ``s`` judged
    non-relevant and ``u`` pooled-unjudged documents above it, contributes

    ``1/(j+1) + j/(j+1) · (r+s+u)/j · (r+ε) / (r+s+2ε)`` (1 at j = 0; ε = 10⁻⁵),

    and the sum is divided by R.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> inferred_ap(v)
    array([0.5])
    """
    j = v.j
    keep = ~j.e_repeat
    if k is not None:
        keep &= j.e_rank <= k
    q, rank, lab = j.e_q[keep], j.e_rank[keep], j.e_label[keep]
    rel = lab >= v.level
    non = (lab >= 0) & ~rel
    rel_b = running_sum(rel.astype(np.float64), q) - 1.0
    non_b = running_sum(non.astype(np.float64), q)
    unj_b = running_sum((lab < 0).astype(np.float64), q)
    fj = (rank - 1.0)[rel]
    r, s, u = rel_b[rel], non_b[rel], unj_b[rel]
    safe_j = np.where(fj > 0, fj, 1.0)
    term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r + s + u) / safe_j) * (
        (r + INFAP_EPSILON) / (r + s + 2 * INFAP_EPSILON)
    )
    term = np.where(fj == 0, 1.0, term)
    return safe_div(np.bincount(q[rel], term, minlength=j.n_queries), v.R)


def yaap(v: LevelView, k: int | None = None) -> np.ndarray:
    """Yet another AP (Robertson, ECIR 2012; trec_eval ``yaap``):
    ``log((1 + S) / (1 + R − S))`` with ``S = Σ_{relevant retrieved i} P@i`` (AP's sum).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> yaap(v)
    array([0.])
    """
    pq, pr, above = v.precision_points
    s = seg.count_top(pq, pr, v.j.n_queries, k, above / pr)
    out: np.ndarray = np.log((1.0 + s) / (1.0 + v.R - s))
    return out
