"""Tie-aware expected values (``ties="expected"``): each metric averaged over every order
of the documents that share a score (McSherry & Najork, "Computing information retrieval
performance measures efficiently in the presence of tied scores", ECIR 2008), in closed
form, never by enumeration.

A run of tied documents occupies ranks s+1 .. s+n (s ranks above it), holds r relevant
documents and R_b relevant documents lie above it; every order of the run is equally
likely. Then each tied document sits at each of the n ranks with probability 1/n, so:

* P@k, recall@k, DCG@k (and nDCG@k, whose ideal does not depend on the run): each
  document's contribution averaged over the n ranks;
* AP: a relevant document at rank s+t has, on average, (t−1)(r−1)/(n−1) of the run's other
  relevant documents above it, so E[AP] = (1/R) Σ_runs (r/n) Σ_{t=1..n} (R_b + 1 +
  (t−1)(r−1)/(n−1)) / (s+t);
* RR: in the first run holding a relevant document, the first relevant one is at s+j with
  probability C(n−j, r−1) / C(n, r);
* success@k: 1 − C(n−r, m) / C(n, m) when the cutoff leaves m ranks of the first run
  holding a relevant document (1 when it lies wholly above k).

Singletons are runs of length 1, so with no ties each value equals the trec_eval one.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ..errors import MetricNameError
from ..judging import LevelView
from ..model import segments as seg
from .base import safe_div
from .gain import Gains, graded, ideal_dcg


def _runs_of(v: LevelView, q: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first rank, size) of the run of ties holding each (query, rank); (rank, 1) for a
    document tied with none."""
    # set under ties="expected", the only judging that picks these implementations
    tq, tr, tn = cast("tuple[np.ndarray, np.ndarray, np.ndarray]", v.j.ties)
    if len(tq) == 0:
        return rank.copy(), np.ones(len(rank), dtype=np.int64)
    w = np.int64(v.j.width)
    at = np.searchsorted(tq * w + tr, q * w + rank, "right") - 1
    c = np.maximum(at, 0)
    inside = (at >= 0) & (tq[c] == q) & (rank < tr[c] + tn[c])
    return np.where(inside, tr[c], rank), np.where(inside, tn[c], 1)


def _relevant_runs(
    v: LevelView,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per run holding relevant documents, in (query, rank) order: query, first rank s+1,
    size n, relevant count r and relevant documents above it R_b."""
    cq, cr = v.credit
    start, size = _runs_of(v, cq, cr)
    w = np.int64(v.j.width)
    _keys, first, r = np.unique(cq * w + start, return_index=True, return_counts=True)
    q, s1, n = cq[first], start[first], size[first]
    before = np.cumsum(r) - r  # relevant in earlier runs, within the query
    qstart = np.searchsorted(q, q, "left")
    return q, s1, n, r.astype(np.float64), (before - before[qstart]).astype(np.float64)


def _inside(s1: np.ndarray, n: np.ndarray, k: int | None) -> np.ndarray:
    """How many of each run's ranks are within the cutoff."""
    return n if k is None else np.clip(k - s1 + 1, 0, n)


def _expected_hits(v: LevelView, k: int | None) -> np.ndarray:
    """E[relevant documents within k] = Σ_runs r·m/n per query."""
    q, s1, n, r, _ = _relevant_runs(v)
    return np.bincount(q, weights=r * _inside(s1, n, k) / n, minlength=v.j.n_queries)


def _expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, t): for each entry i, ``counts[i]`` rows numbered t = 1..counts[i]."""
    counts = counts.astype(np.int64)
    off = np.concatenate(([0], np.cumsum(counts)))
    return np.repeat(np.arange(len(counts)), counts), seg.seg_positions(off) + 1.0


def expected_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """E[P@k] = Σ_runs r·m/n ÷ k, m the run's ranks within k (McSherry & Najork 2008).

    >>> from ranklens import judge
    >>> run = {"q": {"a": 0.5, "x": 0.5, "b": 0.2}}  # a and x tied
    >>> v = judge({"q": {"a": 1, "b": 2}}, run, ties="expected").view()
    >>> expected_precision(v, 1)  # a or x first, each half the time
    array([0.5])
    """
    return safe_div(_expected_hits(v, k), v.precision_depth(k))


def expected_recall(v: LevelView, k: int | None = None) -> np.ndarray:
    """E[recall@k] = Σ_runs r·m/n ÷ R.

    >>> from ranklens import judge
    >>> run = {"q": {"a": 0.5, "x": 0.5, "b": 0.2}}  # a and x tied
    >>> v = judge({"q": {"a": 1, "b": 2}}, run, ties="expected").view()
    >>> expected_recall(v, 1)
    array([0.25])
    """
    return safe_div(_expected_hits(v, k), v.R)


def _first_runs(v: LevelView) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    q, s1, n, r, _ = _relevant_runs(v)
    first = np.unique(q, return_index=True)[1]
    return q[first], s1[first], n[first], r[first]


def _log_comb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln  # only ties="expected" needs scipy

    out: np.ndarray = gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)
    return out


def expected_success(v: LevelView, k: int | None = None, granular: bool = False) -> np.ndarray:
    """E[success@k] = 1 − C(n−r, m) / C(n, m) for the first run holding a relevant
    document, m its ranks within k (1 when m = n, 0 when m = 0).

    >>> from ranklens import judge
    >>> run = {"q": {"a": 0.5, "x": 0.5, "b": 0.2}}  # a and x tied
    >>> v = judge({"q": {"a": 1, "b": 2}}, run, ties="expected").view()
    >>> expected_success(v, 1)
    array([0.5])
    """
    _granular_refused(granular)
    q, s1, n, r = _first_runs(v)
    m = _inside(s1, n, k).astype(np.float64)
    none = np.where(
        n - r >= m, np.exp(_log_comb(n - r, np.minimum(m, n - r)) - _log_comb(n, m)), 0.0
    )
    out = np.zeros(v.j.n_queries)
    out[q] = np.where(m > 0, 1.0 - none, 0.0)
    return out


def expected_reciprocal_rank(
    v: LevelView, k: int | None = None, granular: bool = False
) -> np.ndarray:
    """E[RR@k] = Σ_{j=1}^{n−r+1} [C(n−j, r−1) / C(n, r)] / (s+j), over the first run
    holding a relevant document (ranks beyond k give 0).

    >>> from ranklens import judge
    >>> run = {"q": {"a": 0.5, "x": 0.5, "b": 0.2}}  # a and x tied
    >>> v = judge({"q": {"a": 1, "b": 2}}, run, ties="expected").view()
    >>> expected_reciprocal_rank(v)
    array([0.75])
    """
    _granular_refused(granular)
    q, s1, n, r = _first_runs(v)
    owner, j = _expand(n - r + 1)
    nn, rr = n[owner].astype(np.float64), r[owner]
    p = np.exp(_log_comb(nn - j, rr - 1) - _log_comb(nn, rr))
    rank = s1[owner] + j - 1
    return seg.count_top(q[owner], rank, v.j.n_queries, k, p / rank)


def expected_average_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """E[AP@k] = (1/R) Σ_runs (r/n) Σ_{t ≤ m} (R_b + 1 + (t−1)(r−1)/(n−1)) / (s+t), m the
    run's ranks within k (McSherry & Najork 2008).

    >>> from ranklens import judge
    >>> run = {"q": {"a": 0.5, "x": 0.5, "b": 0.2}}  # a and x tied
    >>> v = judge({"q": {"a": 1, "b": 2}}, run, ties="expected").view()
    >>> expected_average_precision(v)
    array([0.70833333])
    """
    q, s1, n, r, before = _relevant_runs(v)
    owner, t = _expand(_inside(s1, n, k))
    nn, rr = n[owner].astype(np.float64), r[owner]
    above = np.where(nn > 1, (t - 1) * (rr - 1) / np.maximum(nn - 1, 1), 0.0)
    x = rr / nn * (before[owner] + 1 + above) / (s1[owner] + t - 1)
    return safe_div(np.bincount(q[owner], weights=x, minlength=v.j.n_queries), v.R)


def expected_dcg(
    v: LevelView, k: int | None = None, gain: str | None = None, gains: Gains = None
) -> np.ndarray:
    """E[DCG@k] = Σ_i g_i · (1/n) Σ_{ranks ρ of i's run, ρ ≤ k} 1 / log2(ρ + 1).

    >>> from ranklens import judge
    >>> run = {"q": {"a": 0.5, "x": 0.5, "b": 0.2}}  # a and x tied
    >>> v = judge({"q": {"a": 1, "b": 2}}, run, ties="expected").view()
    >>> expected_dcg(v, 2)
    array([0.81546488])
    """
    gq, gr, gg = graded(v, gain, gains)
    s1, n = _runs_of(v, gq, gr)
    last = s1 + n - 1 if k is None else np.minimum(s1 + n - 1, k)
    top = int((s1 + n - 1).max(initial=0))
    disc = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(2, top + 2)))))
    span = np.where(last >= s1, disc[np.maximum(last, 0)] - disc[s1 - 1], 0.0)
    return np.bincount(gq, weights=gg * span / n, minlength=v.j.n_queries)


def expected_ndcg(
    v: LevelView, k: int | None = None, gain: str | None = None, gains: Gains = None
) -> np.ndarray:
    """E[nDCG@k] = E[DCG@k] / IDCG@k (the ideal does not depend on the run's order).

    >>> from ranklens import judge
    >>> run = {"q": {"a": 0.5, "x": 0.5, "b": 0.2}}  # a and x tied
    >>> v = judge({"q": {"a": 1, "b": 2}}, run, ties="expected").view()
    >>> expected_ndcg(v, 2)
    array([0.30995312])
    """
    return safe_div(expected_dcg(v, k, gain, gains), ideal_dcg(v, k, gain, gains))


def _granular_refused(granular: bool) -> None:
    if granular:
        raise MetricNameError("granular=True has no tie-aware expected value")
