"""Helpers shared by the metric functions (no metric lives here)."""

from __future__ import annotations

import numpy as np

from ..judging import LevelView
from ..model import segments as seg


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` element-wise, 0 where ``den`` is 0 (the convention of every trec_eval
    measure with an empty denominator).

    >>> import numpy as np
    >>> safe_div(np.array([1.0, 3.0]), np.array([2.0, 0.0]))
    array([0.5, 0. ])
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def count_pair(
    v: LevelView,
    pair: tuple[np.ndarray, np.ndarray],
    k: int | None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Per query, the number (or weighted sum) of the (query, rank) ``pair`` entries ranked
    within the top k.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> count_pair(v, v.distinct, 3)  # relevant documents in the top 3
    array([1.])
    """
    return seg.count_top(pair[0], pair[1], v.j.n_queries, k, weights)


def running_sum(x: np.ndarray, q_sorted: np.ndarray) -> np.ndarray:
    """Inclusive running sum of x within runs of equal q (q sorted). Whole numbers are
    summed at once (exactly); fractions query by query
    (:func:`~ranklens.model.segments.seg_cumsum_exact`), so a query's values never depend on
    the queries evaluated with it.

    >>> import numpy as np
    >>> running_sum(np.array([1, 2, 3, 4]), np.array([0, 0, 1, 1]))
    array([1, 3, 3, 7])
    """
    if len(x) == 0:
        return x
    off = np.append(seg.run_start_index(q_sorted), len(x))
    if x.dtype.kind == "f" and not np.array_equal(x, np.round(x)):
        return seg.seg_cumsum_exact(x, off)
    return seg.seg_cumsum(x, off)


def judged_pair(v: LevelView, nonnegative: bool) -> tuple[np.ndarray, np.ndarray]:
    """(query, rank) of the retrieved documents with a label (a non-negative one when
    ``nonnegative``).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> judged_pair(v, nonnegative=True)  # (query, rank) of a, n and b
    (array([0, 0, 0]), array([1, 3, 4]))
    """
    j = v.j
    if nonnegative:
        keep = j.e_label >= 0
        return j.e_q[keep], j.e_rank[keep]
    return j.e_q, j.e_rank
