"""Statistical power of the paired tests, for gating on a margin.

A gate asks "did the metric drop by more than the margin ``m``?" of per-query differences
``d = now − baseline``. Non-inferiority (H1: ``mean(d) > −m``) is tested on ``d + m``, and a
regression beyond the margin (H1: ``mean(d) < −m``) on ``−(d + m)``, each one-sided
(:func:`ranklens.comparison.stats.one_sided`, every column at once).

Power uses the normal approximation of the paired t test with the t quantiles of the
sample size (Cohen 1988, ch. 2; Sakai, *Topic set size design*, IRJ 2016): for ``n``
queries, one-sided level ``α``, power ``1 − β`` and standard deviation ``σ_d`` of the
per-query differences, the minimum detectable effect is

``MDE(n) = (t_{1−α, n−1} + t_{1−β, n−1}) · σ_d / √n``

and the queries needed for an effect ``δ`` the least ``n`` with ``MDE(n) ≤ δ``. The
randomization and bootstrap tests have the t test's asymptotic power; Wilcoxon's signed
rank test needs ``n / (3/π)`` queries (its asymptotic relative efficiency under normal
differences). The figures are checked against simulation in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..declared import (
    AT_LEAST_ONE,
    LEVEL,
    POSITIVE,
    STATISTICS,
    ParameterError,
    Range,
    count,
    data,
    declare,
    number,
    renamed_option,
)
from ..errors import InputError, closest
from ..settings import Statistics
from .report import Report
from .settings_use import STATS_OPTION, statistics
from .stats import test_name

WILCOXON_EFFICIENCY = 3 / math.pi
"""Asymptotic relative efficiency of the signed-rank test to the t test (normal data)."""


@dataclass(frozen=True)
class Power:
    """Power figures for one metric: ``sd`` of the per-query differences, ``n`` queries,
    ``alpha`` (one-sided), ``power``; ``mde``, the smallest true difference the test
    detects with that power; ``needed``, queries to detect ``effect`` (None without one)."""

    metric: str
    sd: float
    n: int
    alpha: float
    power: float
    test: str
    mde: float
    effect: float | None = None
    needed: int | None = None


def mde(sd: float, n: int, alpha: float = 0.05, power: float = 0.8, test: str = "t") -> float:
    """Minimum detectable effect of a one-sided paired test (see the module docstring)."""
    from scipy.stats import t as student

    _check(alpha, power)
    if n < 2:
        return math.inf
    n_eff = n * WILCOXON_EFFICIENCY if test_name(test) == "wilcoxon" else n
    df = max(n_eff - 1, 1)
    return float((student.ppf(1 - alpha, df) + student.ppf(power, df)) * sd / math.sqrt(n_eff))


def queries_needed(
    sd: float, effect: float, alpha: float = 0.05, power: float = 0.8, test: str = "t"
) -> int:
    """The least number of queries whose :func:`mde` is at most ``effect``."""
    _check(alpha, power)
    if effect <= 0:
        raise InputError(f"the effect to detect must be > 0, got {effect!r}")
    if sd == 0:
        return 2
    z = _normal_quantile(1 - alpha) + _normal_quantile(power)
    n = max(2, math.ceil((z * sd / effect) ** 2) - 2)
    if test_name(test) == "wilcoxon":
        n = max(2, math.floor(n / WILCOXON_EFFICIENCY) - 2)
    while mde(sd, n, alpha, power, test) > effect:
        n += 1
    return n


def _normal_quantile(p: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(p))


def _check(alpha: float, power: float) -> None:
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha!r}")
    if not 0 < power < 1:
        raise InputError(f"power must be between 0 and 1, got {power!r}")


def difference_sd(report: Report, metric: str, correlation: float = 0.5) -> float:
    """The standard deviation of per-query differences a comparison of ``metric`` would
    see: pooled over every pair of the report's runs (on the queries both have), or, for a
    report of one run, ``sd(values) · √(2(1 − ρ))`` with the correlation ``ρ`` between two
    systems' per-query values (0.5 by default; real retrievers on one query set are often
    0.5-0.8 correlated, so this errs on the large side)."""
    runs = report.runs
    cols = [np.asarray(report.per_query[r][metric], dtype=np.float64) for r in runs]
    if len(cols) >= 2:
        variances = []
        for i in range(len(cols)):
            for j in range(i + 1, len(cols)):
                d = cols[i] - cols[j]
                d = d[~np.isnan(d)]
                if len(d) >= 2:
                    variances.append(float(d.var(ddof=1)))
        if variances:
            return math.sqrt(sum(variances) / len(variances))
    if not -1.0 <= correlation < 1.0:
        raise InputError(f"correlation must lie in [-1, 1), got {correlation!r}")
    values = cols[0][~np.isnan(cols[0])]
    if len(values) < 2:
        return 0.0
    return float(values.std(ddof=1)) * math.sqrt(2 * (1 - correlation))


POWER = declare("power", {
    "report": data("a Report, or a saved report's JSON file (a gate baseline)"),
    "metrics": data("metric names of the report (default: all of them)"),
    "n": count(None, AT_LEAST_ONE, "queries (default: the report's)", none=True),
    "effect": number(None, POSITIVE, "a difference to detect: the queries it needs", none=True),
    "stats": STATS_OPTION,
    "alpha": STATISTICS["alpha"],
    "power": number(0.8, LEVEL, "the chance of detecting the effect"),
    "test": renamed_option(STATISTICS["test"], default=None, none=True),
    "correlation": number(0.5, Range(-1, 1, "left"), "correlation of two runs' per-query "
                          "values"),
})  # fmt: skip


@POWER.checks
def power(
    report: Report | str | Path,
    metrics: str | Sequence[str] | None = None,
    *,
    n: int | None = None,
    effect: float | None = None,
    stats: Statistics | None = None,
    power: float = 0.8,
    correlation: float = 0.5,
    **flat: Any,
) -> list[Power]:
    """Power figures from a report (a baseline JSON file or a :class:`Report`): per metric,
    the minimum detectable effect of a one-sided paired test over ``n`` queries (default:
    the report's), and with ``effect`` the number of queries needed to detect it (formulas
    in the module docstring; the differences' spread from :func:`difference_sd`).

    ``stats``: a :class:`~ranklens.Statistics`, read for its ``alpha`` (one-sided) and
    ``test``; without it, alpha 0.05 and the report's own test. The flat keywords
    ``alpha=`` and ``test=`` still work for one release with a ``DeprecationWarning``
    (write ``stats=ranklens.Statistics(alpha=0.05, test="t")``).

    >>> import ranklens
    >>> rep = ranklens.compare({"q1": ["a"], "q2": ["b"], "q3": ["c"]},
    ...     {"x": {"q1": ["a"], "q2": ["z"], "q3": ["c"]}}, ["P@1"],
    ...     stats=ranklens.Statistics(ci=None))
    >>> round(power(rep, "P@1", n=100)[0].mde, 3)
    0.145
    """
    from .report import load_report

    flat = POWER.check(flat)  # alpha=, test= (deprecated): anything else is refused
    own_test = stats is not None or flat.get("test") is not None
    if flat.get("test", 0) is None:  # test=None: the report's, as before
        flat = {k: v for k, v in flat.items() if k != "test"}
        own_test = False
    st = statistics("power", stats, flat)
    rep = load_report(report) if isinstance(report, (str, Path)) else report
    if not isinstance(rep, Report):
        raise ParameterError(
            f"power: report must be a Report or a saved report's path, got {type(rep).__name__}"
        )
    if metrics is not None and not isinstance(metrics, (str, list, tuple)):
        raise ParameterError(f"power: metrics must be a name or a list of names, got {metrics!r}")
    names = [metrics] if isinstance(metrics, str) else list(metrics or rep.metrics)
    for m in names:
        if m not in rep.metrics:
            near = closest(str(m), rep.metrics)
            hint = f"; did you mean {near!r}?" if near else ""
            raise ParameterError(
                f"power: metrics must be metrics of the report ({', '.join(rep.metrics)}), "
                f"got {m!r}{hint}"
            )
    return power_rows(
        rep, names, n=n, effect=effect, alpha=st.alpha, power=power,
        test=st.test if own_test else None, correlation=correlation,
    )  # fmt: skip


def power_rows(
    rep: Report,
    names: Sequence[str],
    *,
    n: int | None = None,
    effect: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    test: str | None = None,
    correlation: float = 0.5,
) -> list[Power]:
    """:func:`power` on checked inputs (``test`` None: the report's own)."""
    kind = test_name(test or rep.settings.get("test") or "randomization")
    size = len(rep.query_ids) if n is None else int(n)
    out = []
    for m in names:
        sd = difference_sd(rep, m, correlation)
        out.append(
            Power(
                metric=m,
                sd=sd,
                n=size,
                alpha=alpha,
                power=power,
                test=kind,
                mde=mde(sd, size, alpha, power, kind),
                effect=effect,
                needed=queries_needed(sd, effect, alpha, power, kind) if effect else None,
            )
        )
    return out
