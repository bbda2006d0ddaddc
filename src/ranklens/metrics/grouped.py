"""AutoRAG's per-group reciprocal rank and average precision: the implementations of the
``rr`` and ``ap`` families under the ``unit_average`` convention (registered as their
``unit_average`` variants in :mod:`ranklens.metrics.registry`).

Reference: AutoRAG (Marker-Inc-Korea/AutoRAG), ``autorag/evaluation/metric/retrieval.py``.
"""

from __future__ import annotations

import numpy as np

from ..judging import LevelView
from ..model import segments as seg
from .base import safe_div
from .ranking import reciprocal_rank


def unit_reciprocal_rank(v: LevelView, k: int | None = None, granular: bool = False) -> np.ndarray:
    """AutoRAG's RR: the mean over ground-truth units of ``1 / rank`` of each unit's first
    retrieved member, ``(1/R) Σ_{i≤k} h_i / i``. ``granular=True`` is LlamaIndex's granular
    MRR, as in :func:`~ranklens.metrics.ranking.reciprocal_rank`.

    >>> from ranklens import judge
    >>> labels = {"q": [["a", "b"], ["c"]]}
    >>> v = judge(labels, {"q": ["x", "b", "c"]}, convention="autorag").view()
    >>> unit_reciprocal_rank(v)  # each group's first hit: (1/2 + 1/3) / 2
    array([0.41666667])
    """
    if granular:
        return reciprocal_rank(v, k, granular=True)
    hq, hr = v.hits
    return safe_div(seg.count_top(hq, hr, v.j.n_queries, k, 1.0 / hr), v.R)


def unit_average_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """AutoRAG's AP: the mean over ground-truth units of the mean, over the ranks of the
    unit's retrieved members, of the precision counted within the unit,
    ``(1/R) Σ_u mean_{i ∈ ranks(u), i≤k} (#members of u at or above i) / i``.

    >>> from ranklens import judge
    >>> labels = {"q": [["a", "b"], ["c"]]}
    >>> v = judge(labels, {"q": ["x", "b", "c"]}, convention="autorag").view()
    >>> unit_average_precision(v)
    array([0.41666667])
    """
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
    c = seg.seg_running_count(mu)
    prec = c / mr
    starts = seg.run_start_index(mu)
    ap_unit = np.add.reduceat(prec, starts) / np.diff(np.append(starts, len(mu)))
    return safe_div(np.bincount(mq[starts], weights=ap_unit, minlength=j.n_queries), v.R)
