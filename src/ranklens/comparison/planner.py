"""How many labelled queries a target needs, before labelling them.

``plan_queries("P@1 >= 0.9", expected=1.0)`` says 29: with 29 queries all answered
correctly, the exact one-sided 95% lower bound of the rate is ``0.05^(1/29) = 0.9019``,
and with 28 it is 0.8985. In general the plan is the least ``n`` at which the verdict's own
bound (:mod:`.bounds`) clears the target with probability ``power`` when the metric's true
mean is ``expected`` (or the target plus ``margin``):

* per-query 0/1 metrics (P@1, success@k; or a pilot whose values are all 0 or 1): exact
  binomial probabilities over every ``n`` (:func:`.bounds.binomial_queries`);
* graded metrics: the t bound's sample size (:func:`.power_analysis.queries_needed`; for
  the ``t+`` bound, the least ``n`` at which it clears the target with that power, its
  worst-case query included: :func:`.bounds.graded_queries`) at the standard deviation of
  a pilot's per-query values, a given ``sd``, or, for a metric in [0, 1] without either,
  the largest spread a mean of ``expected`` allows, ``√(e(1 − e))`` (a pilot usually needs
  fewer queries).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..declared import POSITIVE, ParameterError, data, declare, number
from ..errors import InputError
from ..metrics import parse_metric
from ..profiles import Profile, Target, is_binary, metric_range
from ..profiles.model import TARGET_TEXT, parse_target
from ..settings import Statistics, settled
from .bounds import BINARY_METHODS, binomial_queries, check_level, graded_queries
from .bounds import method_name as bound_method
from .settings_use import STATS_OPTION
from .targets import VERDICTS, resolve_profile
from .verdict import DESCRIPTIONS


@dataclass(frozen=True)
class Plan:
    """The labelled queries (``queries``) a target needs for its verdict to come out
    *met* with probability ``power`` when the metric's true mean is ``expected``, at the
    one-sided ``confidence`` of ``method``; ``sd`` is the spread assumed for a graded
    metric and ``basis`` where it came from."""

    metric: str
    op: str
    target: float
    expected: float
    queries: int | None
    method: str
    confidence: float
    power: float
    sd: float | None = None
    basis: str = ""

    def __str__(self) -> str:
        how = f"{DESCRIPTIONS.get(self.method, self.method)}, one-sided {self.confidence:.0%}"
        if self.queries is None:
            return (
                f"{self.metric} {self.op} {self.target:g}: a true mean of {self.expected:.4f} "
                f"does not reach it, so no number of queries would show it met ({how})"
            )
        spread = f", sd {self.sd:.3f} ({self.basis})" if self.sd is not None else ""
        chance = "certainty" if self.basis == "all correct" else f"{self.power:.0%} power"
        return (
            f"{self.metric} {self.op} {self.target:g}: {self.queries:,} labelled queries if the "
            f"true mean is {self.expected:.4g} ({how}, {chance}{spread})"
        )


PLAN_QUERIES = declare("plan_queries", {
    "targets": data("'P@1 >= 0.9' (or several), {metric: value}, a Target, a profile"),
    "expected": number(None, None, "the mean you expect the metric to have", none=True),
    "margin": number(None, None, "by how much you expect it to clear the target", none=True),
    "sd": number(None, POSITIVE, "the per-query standard deviation of a graded metric",
                 none=True),
    "pilot": data("an Evaluation, a one-run Report or {metric: values} on a few queries"),
    "stats": STATS_OPTION,
    **{k: VERDICTS[k] for k in ("confidence", "power", "method")},
})  # fmt: skip


@PLAN_QUERIES.checks
def plan_queries(
    targets: str | Target | Mapping[str, Any] | Profile | Sequence[str],
    *,
    expected: float | None = None,
    margin: float | None = None,
    sd: float | None = None,
    pilot: Any = None,
    stats: Statistics | None = None,
    power: float = 0.8,
    method: str = "auto",
    **flat: Any,
) -> list[Plan]:
    """The queries to label for each target (a ``"P@1 >= 0.9"`` string or several, a
    ``{metric: value}`` mapping, a :class:`~ranklens.profiles.Target`, or a profile by
    name or object) to come out *met* (see the module docstring).

    ``expected``: the mean you expect the metric to have; or ``margin``: by how much you
    expect it to clear the target; or a ``pilot`` (an :class:`~ranklens.Evaluation` or a
    one-run :class:`~ranklens.Report` on a few labelled queries) whose means and spreads
    are taken as the truth. ``sd``: the per-query standard deviation of a graded metric.
    ``stats``: a :class:`~ranklens.Statistics`, read for its ``confidence``: the one-sided
    level of each bound (default 0.95; above 0.5). The flat keyword ``confidence=`` still
    works for one release with a ``DeprecationWarning`` (write
    ``stats=ranklens.Statistics(confidence=0.9)``).

    >>> [p.queries for p in plan_queries("P@1 >= 0.9", expected=1.0)]
    [29]
    """
    chosen = settled("plan_queries", stats, PLAN_QUERIES.check(flat), Statistics(), "stats")
    confidence = PLAN_QUERIES.value("confidence", chosen.confidence)  # one-sided: > 0.5
    alpha = check_level(confidence)
    method = bound_method(method)
    wanted = _targets(targets)
    values = _pilot_values(pilot)
    plans = []
    for t in wanted:
        above = t.op == ">="
        pilot_values = values.get(t.metric)
        if expected is not None:
            truth = float(expected)
        elif margin is not None:  # one margin for every target: none past the range
            # (a negative margin expects the metric to fall short: no plan shows it met)
            truth = t.value + margin if above else t.value - margin
            if metric_range(parse_metric(t.metric)) is not None:
                truth = min(max(truth, 0.0), 1.0)
        elif pilot_values is not None:
            truth = float(np.mean(pilot_values))
        else:
            raise InputError(
                f"{t}: say what you expect the metric to be (expected=), by how much it "
                "clears the target (margin=), or give a pilot evaluation"
            )
        metric = parse_metric(t.metric)
        unit = metric_range(metric) is not None
        if unit and not 0 <= truth <= 1:
            raise InputError(f"{t}: an expected mean of {truth:g} lies outside [0, 1]")
        binary = method in BINARY_METHODS or (
            method == "auto" and unit and (
                is_binary(metric) if pilot_values is None
                else bool(np.all((pilot_values == 0) | (pilot_values == 1)))
            )
        )  # fmt: skip
        if binary:
            kind = method if method in BINARY_METHODS else "exact"
            n = binomial_queries(truth, t.value, alpha, power, kind, above=above)
            basis = "all correct" if truth in (0.0, 1.0) else ""
            plans.append(Plan(t.metric, t.op, t.value, truth, n, kind, confidence, power,
                              basis=basis))  # fmt: skip
            continue
        spread, basis = _spread(t, truth, sd, pilot_values, unit)
        kind = "t+" if unit and method in ("auto", "t+") else "t"
        gap = (truth - t.value) if above else (t.value - truth)
        n = graded_queries(spread, gap, alpha, power, kind, mean=truth,
                           above=above) if gap > 0 else None  # fmt: skip
        plans.append(Plan(t.metric, t.op, t.value, truth, n, kind, confidence, power, spread,
                          basis))  # fmt: skip
    return plans


def _spread(t: Target, truth: float, sd: float | None, pilot: Any, unit: bool) -> tuple[float, str]:
    if sd is not None:
        if not (math.isfinite(sd) and sd > 0):
            raise InputError(f"sd must be a positive number, got {sd!r}")
        return float(sd), "given"
    if pilot is not None and len(pilot) > 1 and float(np.std(pilot, ddof=1)) > 0:
        return float(np.std(pilot, ddof=1)), f"pilot of {len(pilot)} queries"
    if unit:
        return math.sqrt(max(truth * (1 - truth), 1e-6)), "widest spread at that mean"
    raise InputError(f"{t}: give sd= or a pilot: {t.metric} has no known range to bound it")


def _targets(targets: Any) -> list[Target]:
    if isinstance(targets, Target):
        return [targets]
    if isinstance(targets, str):
        if TARGET_TEXT.match(targets) or any(c in targets for c in "<>="):
            return [parse_target(targets, "plan_queries: target")]
        return list(resolve_profile(targets, None).targets)
    if isinstance(targets, Profile):
        return list(targets.targets)
    if isinstance(targets, Mapping):
        return list(resolve_profile(None, targets).targets)
    if isinstance(targets, Sequence):
        return [t for item in targets for t in _targets(item)]
    raise ParameterError(
        f"plan_queries: targets must be texts like 'P@1 >= 0.9', {{metric: value}}, a Target or "
        f"a profile, got {targets!r}"
    )


def _pilot_values(pilot: Any) -> dict[str, np.ndarray]:
    if pilot is None:
        return {}
    if hasattr(pilot, "per_query") and hasattr(pilot, "runs"):  # a Report
        if len(pilot.runs) != 1:
            raise InputError(
                f"a pilot report holds one run; this one has {len(pilot.runs)}: "
                "pass report.per_query[run] instead"
            )
        cols = pilot.per_query[pilot.runs[0]]
    elif hasattr(pilot, "per_query"):
        cols = pilot.per_query
    elif isinstance(pilot, Mapping):
        cols = pilot
    else:
        raise InputError(f"a pilot is an Evaluation, a Report or {{metric: values}}, got {pilot!r}")
    out = {}
    for name, vals in cols.items():
        v = np.asarray(vals, dtype=np.float64)
        out[parse_metric(name).name] = v[~np.isnan(v)]
    return out
