"""trec_eval's experimental cumulated-gain measures: G, ndcg_rel and Rndcg.

Each reads the gains of the retrieved ranks (:func:`~ranklens.metrics.gain.graded`) and the
ideal ranking's positive gains (:func:`~ranklens.metrics.gain.ideal_gains`); ``gains``
overrides chosen grades' gains as trec_eval's ``G.1=3.5,2=9``. Notation: ``g_i`` the gain at
rank i, ``g*_i`` the i-th ideal gain (0 past the ideal list, of length L), ``n`` the
documents retrieved.

Reference: trec_eval 10.0, ``m_G.c``, ``m_ndcg_rel.c`` and ``m_Rndcg.c`` (Chris Buckley,
2008); Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", TOIS 2002.
"""

from __future__ import annotations

import numpy as np

from ..judging import LevelView
from ..model import segments as seg
from .base import running_sum, safe_div
from .gain import Gains, graded, ideal_gains


def _at(cum: np.ndarray, off: np.ndarray, q: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``cum`` (a per-query inclusive running sum over ``off``) after the first m entries
    of query q (0 for m = 0)."""
    if len(cum) == 0:
        return np.zeros(len(q))
    return np.where(m > 0, cum[np.maximum(off[q] + m - 1, 0)], 0.0)


def _ideal(v: LevelView, gains: Gains):
    off, ig, _ = ideal_gains(v, None, None, gains)
    return off, ig, np.diff(off)


def g_measure(v: LevelView, k: int | None = None, gains: Gains = None) -> np.ndarray:
    """G, normalised gain (trec_eval ``G``): ``Σ_i g_i / log2(2 + C_i − S_i) / Σ g*``, with
    ``S_i = Σ_{t≤i} g_t`` the gain gathered and ``C_i = Σ_{t≤i} max(g*_t, 1)`` the ideal's
    (at least 1 a rank); 0 when the ideal gain is 0. A document's credit depends on how
    much gain came before it."""
    j = v.j
    q, r, g = graded(v, None, gains)
    off, ig, L = _ideal(v, gains)
    excess = seg.seg_cumsum(np.maximum(ig - 1.0, 0.0), off)
    cost = r + _at(excess, off, q, np.minimum(r, L[q]))
    contrib = g / np.log2(2.0 + cost - running_sum(g, q))
    return safe_div(np.bincount(q, contrib, minlength=j.n_queries), seg.seg_sum(ig, off))


def ndcg_rel(v: LevelView, k: int | None = None, gains: Gains = None) -> np.ndarray:
    """nDCG averaged over the relevant documents (trec_eval ``ndcg_rel``):
    ``(Σ_{g_i>0} DCG@i / IDCG@min(i, L) + (L − #{g_i>0}) · DCG@n / IDCG) / L``, a relevant
    document not retrieved counting the final nDCG; 0 unless that sum is positive."""
    j = v.j
    q, r, g = graded(v, None, gains)
    off, ig, L = _ideal(v, gains)
    dcg = running_sum(g / np.log2(r + 1.0), q)
    icum = seg.seg_cumsum(ig / np.log2(seg.seg_positions(off) + 2.0), off)
    pos = g > 0
    at_rel = safe_div(dcg[pos], _at(icum, off, q[pos], np.minimum(r[pos], L[q[pos]])))
    total = np.bincount(q, g / np.log2(r + 1.0), minlength=j.n_queries)
    final = safe_div(total, seg.seg_sum(ig / np.log2(seg.seg_positions(off) + 2.0), off))
    n_pos = np.bincount(q[pos], minlength=j.n_queries)
    s = np.bincount(q[pos], at_rel, minlength=j.n_queries) + (L - n_pos) * final
    return np.where(s > 0, safe_div(s, L), 0.0)


def r_ndcg(v: LevelView, k: int | None = None, gains: Gains = None) -> np.ndarray:
    """nDCG averaged at the R levels (trec_eval ``Rndcg``): the mean of ``nDCG@b`` over the
    ranks b where the ideal gain changes (``g*_{b+1} ≠ g*_b``, the last at L), with DCG@b
    counted down to ``min(b, n)``, plus ``DCG@n / IDCG`` when n > L + 1; 0 for a query
    with no relevant document (trec_eval gives 0/0 when no ideal gain is positive; 0
    here)."""
    j = v.j
    q, r, g = graded(v, None, gains)
    off, ig, L = _ideal(v, gains)
    iq = np.repeat(np.arange(j.n_queries), L)
    ipos = seg.seg_positions(off)
    icum = seg.seg_cumsum(ig / np.log2(ipos + 2.0), off)
    last = np.zeros(len(ig), dtype=bool)
    last[off[1:][L > 0] - 1] = True
    change = last.copy()
    change[:-1] |= ig[1:] != ig[:-1]
    bq, b, idcg_b = iq[change], ipos[change] + 1, icum[change]
    n = j.lens
    dcg = running_sum(g / np.log2(r + 1.0), q)
    w = j.width
    keys = q * w + r
    depth = np.minimum(b, n[bq])
    upto = np.searchsorted(keys, bq * w + depth, "right") - np.searchsorted(keys, bq * w)
    dcg_b = _at(dcg, np.searchsorted(q, np.arange(j.n_queries + 1)), bq, upto)
    s = np.bincount(bq, safe_div(dcg_b, idcg_b), minlength=j.n_queries).astype(np.float64)
    count = np.bincount(bq, minlength=j.n_queries).astype(np.float64)
    extra = (L > 0) & (n > L + 1)
    total = np.bincount(q, g / np.log2(r + 1.0), minlength=j.n_queries)
    s += np.where(extra, safe_div(total, seg.seg_sum(ig / np.log2(ipos + 2.0), off)), 0.0)
    count += extra
    return np.where(v.R > 0, safe_div(s, count), 0.0)
