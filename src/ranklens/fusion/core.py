"""Fusion's entry points: :func:`fuse` and the pieces tuning reuses (one table, many
settings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any

import numpy as np

from ..declared import ParameterError
from ..errors import InputError
from ..io import coerce_run
from ..model import Run
from .frameworks import MODES, framework_fuse
from .methods import ALIASES, METHODS, RANK_BASED, combine, normalise, reranked
from .options import FUSE, check_params
from .supervised import SUPERVISED, supervised_fuse, train
from .table import RunTable, build_table


def named_runs(
    runs: Mapping[str, Any] | Sequence[Any], where: str = "fuse"
) -> tuple[list[Run], list[str]]:
    """Runs (anything ``evaluate`` takes, a runner's result included) and their names; a
    text or a path where the runs are expected is refused (never read as one run per
    character)."""
    if isinstance(runs, (str, bytes, PathLike)) or not isinstance(runs, (Mapping, Sequence)):
        raise ParameterError(
            f"{where}: runs must be {{name: run}} or a list of runs (at least two), got "
            f"{runs!r:.80}"
        )
    items = (
        list(runs.items())
        if isinstance(runs, Mapping)
        else [(getattr(r, "name", None) or f"run{i}", r) for i, r in enumerate(runs, 1)]
    )
    if len(items) < 2:
        raise InputError("fusion needs at least two runs")
    out = []
    for name, r in items:
        r = r.run if hasattr(r, "report_info") and hasattr(r, "run") else r
        out.append(coerce_run(r, name=str(name)))
    return out, [str(n) for n, _ in items]


@FUSE.checks
def fuse(
    runs: Mapping[str, Any] | Sequence[Any],
    method: str = "rrf",
    norm: str | None = None,
    weights: Sequence[float] | Mapping[str, float] | None = None,
    *,
    labels: Any = None,
    name: str | None = None,
    **params: Any,
) -> Run:
    """Fuse ``runs`` (``{name: run}`` or a list) into one :class:`~ranklens.Run`.

    ``method``: ranx's names (:data:`METHODS`; ``combsum``, ``combmnz`` accepted) with
    their parameters (``k`` for ``rrf``, ``phi`` for ``rbc``, ``gamma`` for ``gmnz``,
    ``sigma`` for ``logn_isr``); formulas in :mod:`ranklens.fusion.methods`.
    ``norm``: a normalisation applied per query and run first (:data:`~.methods.NORMS`; None keeps
    the scores; rank-based methods rank by the normalised scores, which only
    ``min-max-inverted`` and ``borda`` reorder). ``weights``: one per run (a list, or
    ``{name: weight}``) for ``wsum``, ``wmnz``, ``mixed``, ``w_bordafuse``,
    ``w_condorcet``.

    Supervised methods (:data:`SUPERVISED`: ``posfuse``, ``probfuse`` with ``n_segments``,
    ``segfuse``, ``slidefuse`` with ``w``, ``mapfuse``, ``bayesfuse``; formulas in
    :mod:`ranklens.fusion.supervised`) learn from ``labels`` (anything ``evaluate`` takes;
    ``relevance_level`` = 1) on the runs' rankings of the labelled queries, then score
    every query. Give them training labels only: :func:`ranklens.tune_fusion` trains on
    some query folds and measures on the others.

    Framework-exact modes (:data:`MODES`, formulas in :mod:`ranklens.fusion.frameworks`):
    ``"langchain"`` (EnsembleRetriever), ``"llamaindex:reciprocal_rerank"``,
    ``"llamaindex:relative_score"``, ``"llamaindex:dist_based_score"``,
    ``"llamaindex:simple"`` (QueryFusionRetriever), ``"haystack:concatenate"``,
    ``"haystack:merge"``, ``"haystack:reciprocal_rank_fusion"``,
    ``"haystack:distribution_based_rank_fusion"`` (DocumentJoiner), each with the
    framework's weights and constants.

    Documents are matched across runs by id; a query absent from a run gets nothing from
    it (ranx requires equal query sets). Ranks follow trec order (score descending, ties
    by id descending); ranx breaks ties in its own order, so rank-based methods may differ
    from ranx's when a run has tied scores. The fused run is ranked by its fused scores.

    >>> fused = fuse({"bm25": {"q": {"a": 2.0, "b": 1.0}}, "dense": {"q": {"b": 0.9, "c": 0.8}}})
    >>> [round(s, 6) for s in fused.to_dict()["q"].values()]
    [0.032522, 0.016393, 0.016129]
    """
    low = method_name(method)
    check_params(low, params)
    the_runs, names = named_runs(runs)
    table = build_table(the_runs, names)
    fused = fused_scores(table, the_runs, low, norm, weights, params, labels)
    return table.to_run(fused, name or low)


def method_name(method: str) -> str:
    """The canonical name of a fusion method or framework mode (aliases resolved)."""
    low = method.lower()
    low = ALIASES.get(low, low)
    if low not in METHODS and low not in MODES and low not in SUPERVISED:
        raise InputError(
            f"unknown fusion method {method!r}; methods: {', '.join(METHODS + SUPERVISED)}; "
            f"framework modes: {', '.join(MODES)}"
        )
    return low


def fused_scores(
    table: RunTable, runs: list[Run], method: str, norm: str | None, weights: Any,
    params: dict[str, Any], labels: Any = None,
) -> np.ndarray:  # fmt: skip
    """One fused score per row of ``table`` (built from ``runs``): :func:`fuse` once the
    table exists, so that many settings reuse one table (``method`` canonical; a
    supervised method learns from ``labels`` on ``runs``)."""
    low = method
    if isinstance(weights, Mapping):
        missing = set(table.names) - set(map(str, weights))
        if missing:
            raise InputError(f"weights name no weight for {sorted(missing)}")
        weights = [float(weights[n]) for n in table.names]
    if low in MODES:
        if norm is not None:
            raise InputError(f"{low}: the framework's own scaling applies; give no norm")
        return framework_fuse(table, low, weights, params)
    s, present = normalise(table, norm)
    if low in RANK_BASED and norm in ("min-max-inverted", "borda"):
        table = reranked(table, s, present)  # the normalised order is the ranking
    if low in SUPERVISED:
        if labels is None:
            raise InputError(f"{low} learns from training labels: fuse(..., labels=...)")
        if norm in ("min-max-inverted", "borda"):
            raise InputError(f"{low} learns from each run's own ranking; {norm} reorders it")
        return supervised_fuse(table, low, s, train(low, labels, runs, params), params)
    return combine(table, low, s, present, weights, params)
