"""Counts, set measures, judged/unjudged shares and interpolated precision.

References: trec_eval 10.0; Manning, Raghavan & Schütze (2008), ch. 8.
"""

from __future__ import annotations

import numpy as np

from ..judging import LevelView
from ..model import segments as seg
from .base import count_pair, judged_pair, safe_div
from .ranking import recall


def judged_at(v: LevelView, k: int | None = None) -> np.ndarray:
    """Judged@k: the share of the top ``min(k, n)`` documents that have a label in the qrels
    (any grade, negative included), as ir_measures' ``Judged@k``; 0 when nothing was
    retrieved.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> judged_at(v, 4)
    array([0.75])
    """
    return safe_div(count_pair(v, judged_pair(v, False), k), v.j.depth(k))


def num_rel(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of relevant units in the qrels, R (trec_eval ``num_rel``; summed over queries).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> num_rel(v)
    array([3.])
    """
    return v.R.astype(np.float64)


def num_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of documents retrieved, n (within the top k if given; summed over queries).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> num_ret(v)
    array([4.])
    """
    return v.j.depth(k).astype(np.float64)


def num_rel_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Number of relevant documents retrieved (within the top k if given; summed).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> num_rel_ret(v)
    array([2.])
    """
    return count_pair(v, v.distinct, k)


def set_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Set precision: ``Σ rel_i / n`` over the retrieved set (trec_eval ``set_P``).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> set_precision(v)
    array([0.5])
    """
    return safe_div(num_rel_ret(v, k), num_ret(v, k))


def set_recall(v: LevelView, k: int | None = None) -> np.ndarray:
    """Set recall: ``Σ h_i / R`` over the retrieved set (trec_eval ``set_recall``).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> set_recall(v)
    array([0.66666667])
    """
    return recall(v, k)


def set_f(v: LevelView, k: int | None = None, beta: float = 1.0) -> np.ndarray:
    """Set F: ``(1 + β²)·P·R / (β²·P + R)`` of set precision and set recall; 0 when both
    are 0 (trec_eval ``set_F``, β = 1).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> set_f(v, beta=1.0)
    array([0.57142857])
    """
    p, r = set_precision(v, k), set_recall(v, k)
    b2 = beta * beta
    return safe_div((1 + b2) * p * r, b2 * p + r)


def set_map(v: LevelView, k: int | None = None) -> np.ndarray:
    """Unranked set AP (trec_eval ``set_map``): ``num_rel_ret² / (n · R)`` = set precision ×
    set recall, computed as trec_eval does (one division, so a 4-decimal tie prints as
    trec_eval prints it).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> set_map(v)
    array([0.33333333])
    """
    found = count_pair(v, v.hits, k)  # set recall's numerator (units found)
    return safe_div(num_rel_ret(v, k) * found, num_ret(v, k) * v.R)


def set_relative_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """``num_rel_ret / min(n, R)`` (trec_eval ``set_relative_P``).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> set_relative_precision(v)
    array([0.66666667])
    """
    return safe_div(num_rel_ret(v, k), np.minimum(num_ret(v, k), v.R))


def num_nonrel_judged_ret(v: LevelView, k: int | None = None) -> np.ndarray:
    """Judged non-relevant documents retrieved (0 ≤ grade < ℓ; summed over queries).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> num_nonrel_judged_ret(v)
    array([1.])
    """
    return count_pair(v, v.nonrel, k)


def num_q(v: LevelView, k: int | None = None) -> np.ndarray:
    """1 per evaluated query; summed, the number of queries (trec_eval ``num_q``).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> num_q(v)
    array([1.])
    """
    return np.ones(v.j.n_queries)


def unjudged_at(v: LevelView, k: int | None = None) -> np.ndarray:
    """Unjudged@k: ``(Σ_{i≤k} [no label or a negative label at i]) / k`` (trec_eval
    ``unj_k``; ranks beyond the list count as judged). Without k, ÷n.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> unjudged_at(v, 4)
    array([0.25])
    """
    j = v.j
    depth = j.depth(k).astype(np.float64)
    unj = depth - count_pair(v, judged_pair(v, True), k)
    return unj / float(k) if k is not None else safe_div(unj, depth)


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

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> interpolated_precision(v, r=0.5)
    array([0.5])
    """
    j = v.j
    n_q = j.n_queries
    cq, cr = v.credit
    if k is not None:
        cq, cr = cq[cr <= k], cr[cr <= k]
    out = np.zeros(n_q)
    if len(cq) == 0:
        return out
    P = v.credit_count[: len(cq)] / cr if k is None else seg.seg_running_count(cq) / cr
    starts = seg.run_start_index(cq)
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


def eleven_point_average(
    v: LevelView,
    k: int | None = None,
    legacy: bool = False,
    points: tuple[float, ...] | None = None,
) -> np.ndarray:
    """11-point interpolated average precision: the mean of ``iP(r)`` at r = 0, 0.1, …, 1
    (trec_eval ``11pt_avg``), or at the recall levels ``points`` (trec_eval's
    ``11pt_avg.0.2,0.5,0.8``, the 3-point average of trec_eval 8).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> eleven_point_average(v)
    array([0.63636364])
    """
    at = RECALL_POINTS if points is None else points
    mean: np.ndarray = np.mean([interpolated_precision(v, k, r, legacy) for r in at], axis=0)
    return mean


def utility(
    v: LevelView,
    k: int | None = None,
    a: float = 1.0,
    b: float = -1.0,
    c: float = 0.0,
    d: float = 0.0,
    docs: int = 0,
) -> np.ndarray:
    """Set utility (trec_eval ``utility``): ``a·RR + b·NR + c·RN + d·NN`` over the
    contingency table of relevant/non-relevant × retrieved/not, where NN uses ``docs``, the
    collection size (trec_eval ``-N``, default 0): ``NN = docs + RR − n − R``. Defaults
    1, −1, 0, 0 (one point per relevant document retrieved, minus one per other).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> utility(v, a=2.0, b=-1.0)
    array([2.])
    """
    n = num_ret(v, k)
    rr = num_rel_ret(v, k)
    R = v.R.astype(np.float64)
    out: np.ndarray = a * rr + b * (n - rr) + c * (R - rr) + d * (docs + rr - n - R)
    return out
