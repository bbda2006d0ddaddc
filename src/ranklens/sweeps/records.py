"""The typed records of a sweep: one :class:`SweepRow` per configuration, one
:class:`Choice` per metric (the selection), one :class:`Effect` per parameter value and one
:class:`PairMatrix` per metric (every pair tested). Each has attributes and ``to_dict()``,
the plain JSON data the renderers, the saved JSON file and ``Report.metadata["sweep"]``
read (the layout of :data:`ranklens.sweeps.result.FORMAT` 1, unchanged).

Reading a record as a dict (``row["p95"]``, ``"cost" in row``, ``row.get("p95")``) still
works for one release, with a ``DeprecationWarning`` naming the attribute; a ``constraint=``
function still receives the row as a dict (:meth:`SweepRow.to_dict`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..records import DictReading

FloatArray = npt.NDArray[np.float64]


@dataclass
class MetricValue:
    """A configuration's mean on one metric with its interval (None where unknown)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass
class SweepRow(DictReading):
    """One configuration's facts: ``name``, ``params`` (as text), ``status`` (``"ok"``,
    ``"failed"``, ``"unmatched"``) with ``message``, ``metrics`` (each metric's
    :class:`MetricValue`), latency ``p50``/``p95``/``p99`` and ``cpu_p50`` (ms),
    ``build_s``, ``factory_s``, ``shared_build``, ``index_size``/``index_bytes``,
    ``build_note`` (why the build facts are missing), ``queries``, ``errors``, ``cost`` per
    1,000 queries, ``resumed``, ``log``; and, once selected, ``feasible``, ``pareto``,
    ``pareto_cost`` (None: no costs given) and ``tied``."""

    name: str
    params: dict[str, str]
    status: str = "failed"
    message: str | None = None
    metrics: dict[str, MetricValue] = field(default_factory=dict)
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    cpu_p50: float | None = None
    build_s: float | None = None
    factory_s: float | None = None
    shared_build: int = 0
    index_size: int | None = None
    index_bytes: int | None = None
    build_note: str | None = None
    queries: int | None = None
    errors: int | None = None
    cost: float | None = None
    resumed: bool = False
    log: str | None = None
    feasible: bool | None = None
    pareto: bool | None = None
    pareto_cost: bool | None = None
    tied: bool | None = None

    def value(self, metric: str) -> float | None:
        """The configuration's mean on ``metric`` (None when not measured)."""
        got = self.metrics.get(metric)
        return got.value if got is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The row as plain data (the layout the renderers and the JSON file read)."""
        out: dict[str, Any] = {
            "name": self.name,
            "params": dict(self.params),
            "status": self.status,
            "message": self.message,
            "metrics": {m: v.to_dict() for m, v in self.metrics.items()},
        }
        for key in ("p50", "p95", "p99", "cpu_p50", "build_s", "factory_s", "shared_build",
                    "index_size", "index_bytes", "build_note", "queries", "errors", "cost",
                    "resumed", "log"):  # fmt: skip
            out[key] = getattr(self, key)
        for key in ("feasible", "pareto", "pareto_cost", "tied"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


@dataclass
class HeldOutTest:
    """The held-out values minus the baseline's: ``diff`` (mean), its bootstrap
    ``interval`` and the paired test's ``pvalue``."""

    diff: float
    interval: list[float] | None = None
    pvalue: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"diff": self.diff}
        if self.interval is not None:
            out["interval"] = self.interval
        if self.pvalue is not None:
            out["pvalue"] = self.pvalue
        return out


@dataclass
class PairTest:
    """The chosen configuration against another: mean ``diff``, raw and corrected
    p-values, ``significant`` after the correction, the ``effect_size``."""

    diff: float
    pvalue: float
    pvalue_adjusted: float
    significant: bool
    effect_size: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "diff": self.diff,
            "pvalue": self.pvalue,
            "pvalue_adjusted": self.pvalue_adjusted,
            "significant": self.significant,
            "effect_size": self.effect_size,
        }


@dataclass
class Choice(DictReading):
    """The selection on one metric (:func:`ranklens.sweeps.select.select`): ``n_queries``,
    every configuration's mean (``means``), the ``feasible`` ones, the ``chosen`` one (None:
    none feasible; ``reason`` says why), its ``in_sample_best`` mean, the ``runner_up``, the
    ``ranking``; the held-out estimate (``folds`` used, ``seed``, ``cv_estimate``,
    ``cv_interval``, ``fold_choices``, the per-query ``cv_values``); ``tests`` of the chosen
    one against every other, the ``tied`` set, the ``baseline`` and ``cv_vs_baseline``
    (:class:`HeldOutTest`); ``queries_left_out`` (the metric undefined on them for some
    configuration), ``matrix_note``. ``held_out_diffs``/``held_out_pvalue`` are the
    held-out differences and their p-value on their way to ``cv_vs_baseline`` (not in
    :meth:`to_dict`)."""

    n_queries: int
    means: list[float]
    feasible: list[str]
    chosen: str | None = None
    in_sample_best: float | None = None
    runner_up: str | None = None
    ranking: list[str] = field(default_factory=list)
    folds: int | None = None
    seed: int | None = None
    cv_estimate: float | None = None
    cv_interval: list[float] = field(default_factory=lambda: [math.nan, math.nan])
    fold_choices: list[str] = field(default_factory=list)
    cv_values: list[float] = field(default_factory=list)
    queries_left_out: int | None = None
    tests: dict[str, PairTest] | None = None
    tied: list[str] | None = None
    baseline: str | None = None
    cv_vs_baseline: HeldOutTest | None = None
    matrix_note: str | None = None
    reason: str | None = None
    held_out_diffs: FloatArray | None = field(default=None, repr=False)
    held_out_pvalue: float | None = field(default=None, repr=False)
    cross_validated: bool = field(default=False, repr=False)

    def to_dict(self, values: bool = True) -> dict[str, Any]:
        """Plain data (``values=False``: without the per-query ``cv_values``, as the
        sweep's JSON keeps it)."""
        out: dict[str, Any] = {
            "n_queries": self.n_queries,
            "means": list(self.means),
            "feasible": list(self.feasible),
            "chosen": self.chosen,
        }
        if self.chosen is not None:
            out.update(in_sample_best=self.in_sample_best, runner_up=self.runner_up,
                       ranking=list(self.ranking), folds=self.folds)  # fmt: skip
            if self.cross_validated:
                out["seed"] = self.seed
            out.update(cv_estimate=self.cv_estimate)
            if self.cross_validated:
                out.update(cv_interval=list(self.cv_interval),
                           fold_choices=list(self.fold_choices))  # fmt: skip
            else:
                out.update(fold_choices=list(self.fold_choices))
            if values:
                out["cv_values"] = list(self.cv_values)
            if not self.cross_validated:
                out["cv_interval"] = list(self.cv_interval)
        if self.queries_left_out is not None:
            out["queries_left_out"] = self.queries_left_out
        if self.tests is not None:
            out["tests"] = {n: t.to_dict() for n, t in self.tests.items()}
        if self.tied is not None:
            out["tied"] = list(self.tied)
        if self.baseline is not None:
            out["baseline"] = self.baseline
        if self.cv_vs_baseline is not None:
            out["cv_vs_baseline"] = self.cv_vs_baseline.to_dict()
        if self.matrix_note is not None:
            out["matrix_note"] = self.matrix_note
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass
class Effect(DictReading):
    """One parameter value's effect on one metric: the ``configs`` with it, the marginal
    ``mean`` of their per-query values with a bootstrap interval (``ci_low``/``ci_high``),
    the ``best`` of them and its ``best_mean``; ``column``: the per-query marginal values
    the interval is drawn from (not in :meth:`to_dict`)."""

    param: str
    value: str
    configs: int
    mean: float
    best: str
    best_mean: float
    ci_low: float | None = None
    ci_high: float | None = None
    column: FloatArray | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "param": self.param,
            "value": self.value,
            "configs": self.configs,
            "mean": self.mean,
            "best": self.best,
            "best_mean": self.best_mean,
        }
        if self.ci_low is not None or self.ci_high is not None:
            out.update(ci_low=self.ci_low, ci_high=self.ci_high)
        return out


@dataclass
class PairMatrix(DictReading):
    """Every pair of configurations on one metric, best first: ``diff[i][j]`` (row minus
    column), ``p_adj`` (corrected over all ``tests`` pairs with ``correction``; None on
    the diagonal), the ``alpha`` they are read at."""

    names: list[str]
    diff: list[list[float]]
    p_adj: list[list[float | None]]
    alpha: float
    correction: str | None
    tests: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "diff": [list(r) for r in self.diff],
            "p_adj": [list(r) for r in self.p_adj],
            "alpha": self.alpha,
            "correction": self.correction,
            "tests": self.tests,
        }
