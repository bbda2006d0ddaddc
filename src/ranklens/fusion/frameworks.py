"""Fusion exactly as each framework fuses: LangChain's ``EnsembleRetriever``, LlamaIndex's
``QueryFusionRetriever`` modes and Haystack's ``DocumentJoiner`` modes, as vectorised
functions of a :class:`~ranklens.fusion.table.RunTable` (raw scores, 1-based ranks).

Notation as in :mod:`.methods`; ``L`` is the number of runs, ``w_i`` the weights.

* ``langchain``: ``Σ w_i / (c + r_i)``, ``c`` = 60, ``w_i`` as given (default ``1/L``);
  the rank is the position in the retriever's list. LangChain identifies a document by
  its ``page_content`` unless ``id_key`` is set; ranklens by its id. It returns documents
  without scores, tied ones in the order they first appear.
* ``llamaindex:reciprocal_rerank``: ``Σ 1/(60 + r_i − 1)`` (its ``k`` = 60 is added to a
  0-based rank), ranks by score descending; weights ignored, as LlamaIndex does.
* ``llamaindex:relative_score``: ``Σ w_i · (s_i − min_i)/(max_i − min_i)`` with
  ``w_i`` normalised to sum 1 (default ``1/L``); a list whose scores are all equal gives
  1 (if positive) or 0. ``llamaindex:dist_based_score``: the same with
  ``min_i = μ_i − 3σ_i``, ``max_i = μ_i + 3σ_i`` (population σ).
  ``llamaindex:simple``: ``max_P s_i``. LlamaIndex identifies nodes by their content hash
  and cuts the fused list to ``similarity_top_k``.
* ``haystack:concatenate``: ``max_P s_i``. ``haystack:merge``: ``Σ w_i s_i`` with ``w_i``
  normalised to sum 1 (default ``1/L``). ``haystack:reciprocal_rank_fusion``:
  ``Σ w_i · 61/(60 + r_i)`` (``k`` = 61 on a 0-based rank, rescaled by ``k``), ``w_i``
  normalised, the rank being the position in the list as given.
  ``haystack:distribution_based_rank_fusion``: each list rescaled to
  ``(s − (μ − 3σ))/(6σ)`` when its scores vary (else kept), then ``max_P``. Haystack
  identifies documents by id and cuts to ``top_k`` when set.

Ranks are trec order (score descending, ties by id descending), which is each framework's
list order when a retriever returns its documents sorted by score without ties.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from .methods import EPS, combine, per_query_stats
from .table import RunTable

MODES = (
    "langchain", "llamaindex:reciprocal_rerank", "llamaindex:relative_score",
    "llamaindex:dist_based_score", "llamaindex:simple", "haystack:concatenate",
    "haystack:merge", "haystack:reciprocal_rank_fusion",
    "haystack:distribution_based_rank_fusion",
)  # fmt: skip


def _normalised(weights: Any, n: int) -> np.ndarray:
    if weights is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or np.any(w < 0) or w.sum() <= 0:
        raise InputError(f"weights must be {n} numbers >= 0 with a positive sum, got {weights!r}")
    out: np.ndarray = w / w.sum()
    return out


def framework_fuse(t: RunTable, mode: str, weights: Any, params: dict[str, Any]) -> np.ndarray:
    """One fused score per table row, as the framework named by ``mode`` computes it."""
    s, present, n = t.score, t.present, t.score.shape[1]
    out: np.ndarray
    if mode == "langchain":
        w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=np.float64)
        c = float(params.get("c", 60))
        out = np.where(present, w / (c + t.rank), 0.0).sum(axis=1)
    elif mode == "llamaindex:reciprocal_rerank":
        out = np.where(present, 1.0 / (59.0 + t.rank), 0.0).sum(axis=1)
    elif mode in ("llamaindex:relative_score", "llamaindex:dist_based_score"):
        lo, hi, mean, sd = per_query_stats(t, s, "min", "max", "mean", "sd")
        if mode == "llamaindex:dist_based_score":
            lo, hi = mean - 3 * sd, mean + 3 * sd
        flat = hi == lo
        scaled = np.where(flat, np.where(hi > 0, 1.0, 0.0), (s - lo) / np.where(flat, 1.0, hi - lo))
        out = np.where(present, scaled * _normalised(weights, n), 0.0).sum(axis=1)
    elif mode in ("llamaindex:simple", "haystack:concatenate"):
        out = combine(t, "max", s, present, None, {})
    elif mode == "haystack:merge":
        out = np.where(present, s * _normalised(weights, n), 0.0).sum(axis=1)
    elif mode == "haystack:reciprocal_rank_fusion":
        w = _normalised(weights, n)
        out = np.where(present, w * 61.0 / (60.0 + t.rank), 0.0).sum(axis=1)
    elif mode == "haystack:distribution_based_rank_fusion":
        lo, hi, mean, sd = per_query_stats(t, s, "min", "max", "mean", "sd")
        delta = 6 * sd
        vary = (hi != lo) & (delta != 0)
        scaled = np.where(vary, (s - (mean - 3 * sd)) / np.where(vary, delta, EPS), s)
        out = combine(t, "max", scaled, present, None, {})
    else:
        raise InputError(f"unknown framework fusion {mode!r}; modes: {', '.join(MODES)}")
    return out
