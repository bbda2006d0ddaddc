"""Diversity and intent-aware measures, with ndeval's definitions and defaults.

A query has intents s = 1..S (subtopics, or groups of grouped ground truth; S counts those
with a relevant document). The document at rank i covers the intents it is relevant to;
``c_{s,i}`` is how often intent s was covered above rank i. Its novelty gain is
``g_i = Σ_{s covered at i} (1−α)^{c_{s,i}}`` (α = 0.5 by default). The ideal gains ``g*_i``
come from ndeval's greedy ideal ranking (:mod:`ranklens.judging.intents`).

* alpha-DCG@k = Σ_{i≤k} g_i / log2(i+1) ÷ Σ_{i≤k} S (1−α)^{i−1} / log2(i+1) (ndeval's
  collection-independent "ideal ideal" normalisation); alpha-nDCG@k divides by the
  ideal ranking's Σ_{i≤k} g*_i / log2(i+1) instead (Clarke et al., SIGIR 2008).
* ERR-IA@k = Σ_{i≤k} g_i / i ÷ Σ_{i≤k} S (1−α)^{i−1} / i; nERR-IA@k divides by
  Σ_{i≤k} g*_i / i (Chapelle et al., CIKM 2009, intent-aware as Agrawal et al., WSDM 2009,
  in ndeval's form).
* NRBP = (1 − (1−α)β) / S · Σ_i g_i β^{i−1}; nNRBP divides by the ideal's value (Clarke,
  Kolla & Vechtomova, ICTIR 2009; β = 0.5).
* P-IA@k = Σ_{i≤k} #intents covered at i ÷ (k·S); AP-IA = (1/S) Σ_s AP_s, the average
  precision of each intent over its relevant documents; S-recall@k (subtopic recall,
  Zhai, Cohen & Lafferty, SIGIR 2003) = #intents covered in the top k ÷ S.

Without a cutoff the whole list counts (and the ideal-ideal normaliser runs to the list's
length). A query with S = 0 scores 0 on every measure. Where ndeval differs (it leaves
ERR-IA@1 and alpha-DCG@1 unnormalised; nNRBP is 0/0 when S = 0) docs/metrics.md lists it.

Reference: ndeval 4.5 (TREC Web track 2009-2014), checked against pyndeval.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..judging import LevelView
from ..model import segments as seg
from .base import safe_div

Weight = Callable[[np.ndarray], np.ndarray]
"""A rank's weight ``w(i)`` (the discount), vectorised over ranks."""


def _discount(rank: np.ndarray) -> np.ndarray:
    """ndeval's log(2)/log(i+1)."""
    w: np.ndarray = np.log(2.0) / np.log(rank + 1.0)
    return w


def _ideal_ideal(v: LevelView, k: int | None, alpha: float, weight: Weight) -> np.ndarray:
    """Σ_{i≤k} S (1−α)^{i−1} w(i) per query (k: the list's length when None)."""
    span = v.j.depth(None) if k is None else np.full(v.j.n_queries, k)
    i = np.arange(1, int(span.max(initial=0)) + 1, dtype=np.float64)
    cum = np.concatenate(([0.0], np.cumsum(np.power(1.0 - alpha, i - 1) * weight(i))))
    out: np.ndarray = v.intents.S * cum[span]
    return out


def _ideal_sum(v: LevelView, k: int | None, alpha: float, weight: Weight) -> np.ndarray:
    """Σ_{i≤k} g*_i w(i) over the greedy ideal ranking, per query."""
    off, gains = v.intents.ideal_scores(alpha)
    q = np.repeat(np.arange(v.j.n_queries), np.diff(off))
    rank = seg.seg_positions(off) + 1
    return seg.count_top(q, rank, v.j.n_queries, k, gains * weight(rank.astype(np.float64)))


def _run_sum(v: LevelView, k: int | None, alpha: float, weight: Weight) -> np.ndarray:
    q, rank, g = v.intents.rank_gain(alpha)
    return seg.count_top(q, rank, v.j.n_queries, k, g * weight(rank.astype(np.float64)))


def _inverse(rank: np.ndarray) -> np.ndarray:
    return 1.0 / rank


def alpha_dcg(v: LevelView, k: int | None = None, alpha: float = 0.5) -> np.ndarray:
    """alpha-DCG@k as ndeval reports it: Σ_{i≤k} g_i / log2(i+1) normalised by the
    "ideal ideal" Σ_{i≤k} S (1−α)^{i−1} / log2(i+1) (Clarke et al., SIGIR 2008).

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> alpha_dcg(v, 3)
    array([0.45661123])
    """
    return safe_div(_run_sum(v, k, alpha, _discount), _ideal_ideal(v, k, alpha, _discount))


def alpha_ndcg(v: LevelView, k: int | None = None, alpha: float = 0.5) -> np.ndarray:
    """alpha-nDCG@k = Σ_{i≤k} g_i / log2(i+1) ÷ Σ_{i≤k} g*_i / log2(i+1), the ideal by
    ndeval's greedy approximation (Clarke et al., SIGIR 2008).

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> alpha_ndcg(v, 3)
    array([0.69936949])
    """
    return safe_div(_run_sum(v, k, alpha, _discount), _ideal_sum(v, k, alpha, _discount))


def err_ia(v: LevelView, k: int | None = None, alpha: float = 0.5) -> np.ndarray:
    """ERR-IA@k as ndeval: Σ_{i≤k} g_i / i ÷ Σ_{i≤k} S (1−α)^{i−1} / i (Chapelle et al.,
    CIKM 2009; collection-independent normalisation).

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> err_ia(v, 3)
    array([0.46875])
    """
    return safe_div(_run_sum(v, k, alpha, _inverse), _ideal_ideal(v, k, alpha, _inverse))


def nerr_ia(v: LevelView, k: int | None = None, alpha: float = 0.5) -> np.ndarray:
    """nERR-IA@k = Σ_{i≤k} g_i / i ÷ Σ_{i≤k} g*_i / i (ndeval's collection-dependent
    normalisation by the greedy ideal ranking).

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> nerr_ia(v, 3)
    array([0.75])
    """
    return safe_div(_run_sum(v, k, alpha, _inverse), _ideal_sum(v, k, alpha, _inverse))


def _rbp_weight(beta: float) -> Weight:
    return lambda rank: np.power(beta, rank - 1.0)


def nrbp(v: LevelView, k: int | None = None, alpha: float = 0.5, beta: float = 0.5) -> np.ndarray:
    """NRBP = (1 − (1−α)β) / S · Σ_i g_i β^{i−1} (Clarke, Kolla & Vechtomova, ICTIR 2009).

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> nrbp(v)
    array([0.515625])
    """
    total = _run_sum(v, k, alpha, _rbp_weight(beta))
    return safe_div(total * (1.0 - (1.0 - alpha) * beta), v.intents.S.astype(np.float64))


def nnrbp(v: LevelView, k: int | None = None, alpha: float = 0.5, beta: float = 0.5) -> np.ndarray:
    """nNRBP = Σ_i g_i β^{i−1} ÷ Σ_i g*_i β^{i−1}: NRBP normalised by the greedy ideal
    ranking's NRBP.

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> nnrbp(v)
    array([0.84615385])
    """
    w = _rbp_weight(beta)
    return safe_div(_run_sum(v, k, alpha, w), _ideal_sum(v, k, alpha, w))


def precision_ia(v: LevelView, k: int | None = None) -> np.ndarray:
    """P-IA@k = Σ_{i≤k} #intents covered at i ÷ (k·S) (Agrawal et al., WSDM 2009, as
    ndeval; without k, k is the list's length).

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> precision_ia(v, 2)
    array([0.5])
    """
    q, rank, _, _ = v.intents.cover
    hits = seg.count_top(q, rank, v.j.n_queries, k)
    depth = np.full(v.j.n_queries, float(k)) if k is not None else v.j.lens.astype(np.float64)
    return safe_div(hits, depth * v.intents.S)


def ap_ia(v: LevelView, k: int | None = None) -> np.ndarray:
    """AP-IA = (1/S) Σ_s (1/n_s) Σ_{i covers s} (c_{s,i} + 1) / i: each intent's average
    precision over its n_s relevant documents, averaged over the S intents (ndeval's
    MAP-IA).

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> ap_ia(v)
    array([0.625])
    """
    iv = v.intents
    q, rank, intent, seen = iv.cover
    ap = safe_div((seen + 1.0) / rank, iv.per_intent[intent].astype(np.float64))
    return safe_div(seg.count_top(q, rank, v.j.n_queries, k, ap), iv.S.astype(np.float64))


def subtopic_recall(v: LevelView, k: int | None = None) -> np.ndarray:
    """S-recall@k = #intents covered in the top k ÷ S (Zhai, Cohen & Lafferty, SIGIR
    2003; ndeval's strec).

    >>> from ranklens import judge
    >>> v = judge({"q": [["a", "b"], ["c"]]}, {"q": ["a", "b", "x", "c"]}).view()
    >>> subtopic_recall(v, 2)
    array([0.5])
    """
    q, rank, _, seen = v.intents.cover
    first = seen == 0
    covered = seg.count_top(q[first], rank[first], v.j.n_queries, k)
    return safe_div(covered, v.intents.S.astype(np.float64))
