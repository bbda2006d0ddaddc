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


class _Curves:
    """What the three measures read, computed once: the retrieved ranks with a gain
    (``q``, ``r``, ``g``) and their running DCG (``dcg``, total ``dcg_total``), and the
    ideal gains per query (``off``, ``ig``, length ``L``, positions ``ipos``) with their
    running ideal DCG (``icum``, total ``idcg_total``)."""

    def __init__(self, v: LevelView, gains: Gains) -> None:
        n_q = v.j.n_queries
        self.q, self.r, self.g = graded(v, None, gains)
        disc = self.g / np.log2(self.r + 1.0)
        self.dcg = running_sum(disc, self.q)
        self.dcg_total = np.bincount(self.q, disc, minlength=n_q)
        self.off, self.ig, _ = ideal_gains(v, None, None, gains)
        self.L = np.diff(self.off)
        self.ipos = seg.seg_positions(self.off)
        idisc = self.ig / np.log2(self.ipos + 2.0)
        self.icum = seg.seg_cumsum_exact(idisc, self.off)
        self.idcg_total = seg.seg_sum(idisc, self.off)

    def idcg_at(self, q: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """Ideal DCG of query q down to ``rank`` (the ideal list stops growing at L)."""
        return _at(self.icum, self.off, q, np.minimum(rank, self.L[q]))


def g_measure(v: LevelView, k: int | None = None, gains: Gains = None) -> np.ndarray:
    """G, normalised gain (trec_eval ``G``): ``Σ_i g_i / log2(2 + C_i − S_i) / Σ g*``, with
    ``S_i = Σ_{t≤i} g_t`` the gain gathered and ``C_i = Σ_{t≤i} max(g*_t, 1)`` the ideal's
    (at least 1 a rank); 0 when the ideal gain is 0. A document's credit depends on how
    much gain came before it.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> g_measure(v)
    array([0.625])
    """
    c = _Curves(v, gains)
    excess = seg.seg_cumsum_exact(np.maximum(c.ig - 1.0, 0.0), c.off)
    cost = c.r + _at(excess, c.off, c.q, np.minimum(c.r, c.L[c.q]))
    contrib = c.g / np.log2(2.0 + cost - running_sum(c.g, c.q))
    total = np.bincount(c.q, contrib, minlength=v.j.n_queries)
    return safe_div(total, seg.seg_sum(c.ig, c.off))


def ndcg_rel(v: LevelView, k: int | None = None, gains: Gains = None) -> np.ndarray:
    """nDCG averaged over the relevant documents (trec_eval ``ndcg_rel``):
    ``(Σ_{g_i>0} DCG@i / IDCG@min(i, L) + (L − #{g_i>0}) · DCG@n / IDCG) / L``, a relevant
    document not retrieved counting the final nDCG; 0 unless that sum is positive.

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> ndcg_rel(v)
    array([0.85089558])
    """
    c = _Curves(v, gains)
    n_q = v.j.n_queries
    pos = c.g > 0
    q = c.q[pos]
    at_rel = safe_div(c.dcg[pos], c.idcg_at(q, c.r[pos]))
    final = safe_div(c.dcg_total, c.idcg_total)
    n_pos = np.bincount(q, minlength=n_q)
    s = np.bincount(q, at_rel, minlength=n_q) + (c.L - n_pos) * final
    return np.where(s > 0, safe_div(s, c.L), 0.0)


def r_ndcg(v: LevelView, k: int | None = None, gains: Gains = None) -> np.ndarray:
    """nDCG averaged at the R levels (trec_eval ``Rndcg``): the mean of ``nDCG@b`` over the
    ranks b where the ideal gain changes (``g*_{b+1} ≠ g*_b``, the last at L), with DCG@b
    counted down to ``min(b, n)``, plus ``DCG@n / IDCG`` when n > L + 1; 0 for a query
    with no relevant document (trec_eval gives 0/0 when no ideal gain is positive; 0
    here).

    >>> from ranklens import judge
    >>> v = judge({"q": {"a": 2, "b": 1, "c": 1, "n": 0}}, {"q": ["a", "x", "n", "b"]}).view()
    >>> r_ndcg(v)
    array([0.81939394])
    """
    j = v.j
    c = _Curves(v, gains)
    change = np.zeros(len(c.ig), dtype=bool)
    change[c.off[1:][c.L > 0] - 1] = True  # the last ideal rank of each query
    change[:-1] |= c.ig[1:] != c.ig[:-1]
    bq = np.repeat(np.arange(j.n_queries), c.L)[change]
    b, idcg_b = c.ipos[change] + 1, c.icum[change]
    w = j.width
    keys = c.q * w + c.r
    depth = np.minimum(b, j.lens[bq])
    upto = np.searchsorted(keys, bq * w + depth, "right") - np.searchsorted(keys, bq * w)
    entry_off = np.searchsorted(c.q, np.arange(j.n_queries + 1))
    dcg_b = _at(c.dcg, entry_off, bq, upto)
    s = np.bincount(bq, safe_div(dcg_b, idcg_b), minlength=j.n_queries).astype(np.float64)
    count = np.bincount(bq, minlength=j.n_queries).astype(np.float64)
    extra = (c.L > 0) & (j.lens > c.L + 1)
    s += np.where(extra, safe_div(c.dcg_total, c.idcg_total), 0.0)
    count += extra
    return np.where(v.R > 0, safe_div(s, count), 0.0)
