"""One-sided confidence bounds of a mean over queries, for verdicts against a target, and
the queries a bound needs to clear it.

Each bound is one-sided at level ``1 − α`` (a verdict reads the lower bound to say *met*
and the upper bound to say *missed*, so each wrong verdict has probability at most ``α``;
together the two bounds are a ``1 − 2α`` interval). Every function takes a matrix of
per-query values, ``(n_queries, n_columns)``, and bounds every column at once.

Methods:

* ``exact`` (Clopper & Pearson 1934) for per-query values of 0 or 1 (P@1, success@k, or
  any [0, 1] metric whose every value in the sample is 0 or 1): ``L = B⁻¹(α; k, n − k + 1)``
  and ``U = B⁻¹(1 − α; k + 1, n − k)`` for ``k`` ones in ``n`` (Beta quantiles). It holds at
  every ``n``; for a [0, 1] metric it stays valid because ``P(X = 1) ≤ E[X]``. Claiming a
  rate of at least ``t`` needs ``n ≥ ln α / ln t`` all-correct queries (29 for 0.9 at 95%).
* ``wilson`` (Wilson 1927) for the same data: ``(p̂ + z²/2n ± z √(p̂(1 − p̂)/n + z²/4n²)) /
  (1 + z²/n)`` with ``z = Φ⁻¹(1 − α)``; narrower, and below its level for some rates.
* ``t+`` for graded values in [0, 1] (nDCG, RR, recall): Student's t bound of the mean of the
  values with one more query at the metric's worst value (0 for the lower bound, 1 for the
  upper): ``x̄' − t_{1−α, n} s'/√(n + 1)`` over the ``n + 1`` values. Plain t claims too much
  on left-skewed per-query values near the top of the range (a sample that has not met a
  bad query yet: 22% false "met" at 20 queries, 7% at 500, in the simulation of
  ``docs/use-cases.md``); the pseudo-query, in the spirit of Agresti & Coull (1998), keeps
  it at or below ``α`` there at the cost of a little power.
* ``t``: Student's t (:func:`ranklens.comparison.stats.t_interval`), for metrics without a
  known range (DCG, counts) and on request; ``bootstrap``: the percentile bootstrap
  (:func:`~ranklens.comparison.stats.bootstrap_interval`), on request.
* ``auto`` (default): ``exact`` where a column's values are all 0 or 1 and the metric lies
  in [0, 1], ``t+`` for other [0, 1] metrics, ``t`` otherwise.

References: Clopper & Pearson, Biometrika 1934; Wilson, JASA 1927; Agresti & Coull, The
American Statistician 1998; Brown, Cai & DasGupta, Statistical Science 2001 (why Wilson
and Wald fall below their level).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from . import stats
from .power_analysis import queries_needed

METHODS = ("auto", "exact", "wilson", "t+", "t", "bootstrap")
BINARY_METHODS = ("exact", "wilson")


def method_name(method: str) -> str:
    """The canonical name of a bound method (an error lists the choices)."""
    name = str(method).lower()
    if name not in METHODS:
        raise InputError(f"unknown bound method {method!r}; choose one of {', '.join(METHODS)}")
    return name


def check_level(confidence: float) -> float:
    """``α = 1 − confidence`` for a one-sided level in (0.5, 1)."""
    if not 0.5 < confidence < 1:
        raise InputError(f"confidence must lie between 0.5 and 1 (one-sided), got {confidence!r}")
    return 1.0 - confidence


def binomial_bounds(
    ones: np.ndarray, n: int | np.ndarray, alpha: float, method: str = "exact"
) -> tuple[np.ndarray, np.ndarray]:
    """One-sided lower and upper bounds of a rate from ``ones`` successes in ``n``."""
    from scipy.special import betaincinv, ndtri

    k, n = np.broadcast_arrays(np.asarray(ones, dtype=np.float64), np.asarray(n, dtype=np.float64))
    if method == "exact":
        with np.errstate(all="ignore"):
            lo = np.where(k > 0, betaincinv(k, n - k + 1, alpha), 0.0)
            hi = np.where(k < n, betaincinv(k + 1, n - k, 1 - alpha), 1.0)
        return lo, hi
    z = float(ndtri(1 - alpha))
    p = np.divide(k, n, out=np.zeros_like(k), where=n > 0)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def mean_bounds(
    values: np.ndarray,
    alpha: float,
    method: str = "auto",
    unit: bool | np.ndarray = True,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """One-sided bounds of each column's mean at level ``1 − α``, and the method used per
    column. ``unit``: whether each column's metric lies in [0, 1] (one flag, or one per
    column). The values must be finite (drop skipped queries first)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[:, None] if v.ndim == 1 else v
    n, m = v.shape
    if n == 0:
        raise InputError("a bound needs at least one query")
    unit_col = np.broadcast_to(np.asarray(unit, dtype=bool), (m,))
    binary = unit_col & np.all((v == 0) | (v == 1), axis=0)
    method = method_name(method)
    if method == "auto":
        used = ["exact" if b else ("t+" if u else "t") for b, u in zip(binary, unit_col)]
    elif method in BINARY_METHODS:
        if not binary.all():
            raise InputError(
                f"method {method!r} needs per-query values of 0 or 1 (P@1, success@k); use "
                "'t+' or 'auto' for graded metrics"
            )
        used = [method] * m
    elif method == "t+":
        used = ["t+" if u else "t" for u in unit_col]
    else:
        used = [method] * m
    lo, hi = np.empty(m), np.empty(m)
    for kind in set(used):
        cols = np.array([j for j, u in enumerate(used) if u == kind])
        part = v[:, cols]
        if kind in BINARY_METHODS:
            lo[cols], hi[cols] = binomial_bounds(part.sum(axis=0), n, alpha, kind)
        elif kind == "t+":
            worst, best = np.zeros((1, len(cols))), np.ones((1, len(cols)))
            lo[cols] = stats.t_interval(np.vstack([part, worst]), 1 - 2 * alpha)[0]
            hi[cols] = stats.t_interval(np.vstack([part, best]), 1 - 2 * alpha)[1]
        elif kind == "t":
            lo[cols], hi[cols] = stats.t_interval(part, 1 - 2 * alpha)
        else:
            lo[cols], hi[cols] = stats.bootstrap_interval(part, 1 - 2 * alpha, n_resamples, seed)
    lo = np.where(unit_col, np.clip(lo, 0.0, 1.0), lo)
    hi = np.where(unit_col, np.clip(hi, 0.0, 1.0), hi)
    return lo, hi, used


def settling_count(
    n: np.ndarray, target: float, alpha: float, method: str, above: bool
) -> np.ndarray:
    """Per ``n``: the least count of ones whose lower bound clears ``target`` (``above``),
    or the greatest whose upper bound falls below it; -1 / n + 1 where none does."""
    from scipy.stats import binom

    n = np.asarray(n, dtype=np.int64)
    guess = binom.isf(alpha, n, target) + 1 if above else binom.ppf(alpha, n, target) - 1
    cand = np.clip(guess[:, None] + np.arange(-2, 3)[None, :], 0, n[:, None])
    lo, hi = binomial_bounds(cand, n[:, None], alpha, method)
    ok = (lo > target) if above else (hi < target)
    if above:
        return np.where(ok.any(axis=1), np.where(ok, cand, n[:, None] + 1).min(axis=1), -1)
    return np.where(ok.any(axis=1), np.where(ok, cand, -1).max(axis=1), -1)


def binomial_queries(
    rate: float, target: float, alpha: float, power: float, method: str = "exact",
    above: bool = True, limit: int = 10_000_000,
) -> int | None:  # fmt: skip
    """The least number of queries at which a bound of ``method`` shows the rate above
    (``above``) or below ``target`` with probability at least ``power`` when the true rate
    is ``rate``; None when it never does (``rate`` on the wrong side of ``target``) or not
    within ``limit``. Exact binomial probabilities over windows of ``n`` (the chance is a
    saw-tooth in ``n``, so every ``n`` is checked from a normal-approximation guess on)."""
    from scipy.stats import binom

    if (above and rate <= target) or (not above and rate >= target):
        return None
    sd = math.sqrt(max(rate * (1 - rate), target * (1 - target), 1e-12))
    guess = graded_queries(sd, abs(rate - target), alpha, power, "t") or 1
    start = max(1, guess // 4)
    while start <= limit:
        ns = np.arange(start, min(start + max(256, start), limit) + 1)
        k = settling_count(ns, target, alpha, method, above)
        if above:
            chance = np.where(k >= 0, binom.sf(k - 1, ns, rate), 0.0)
        else:
            chance = np.where(k >= 0, binom.cdf(k, ns, rate), 0.0)
        hit = np.flatnonzero(chance >= power - 1e-12)
        if hit.size:
            first = int(ns[hit[0]])
            if first == start and start > 1:  # the guess was too high: look below it
                start = max(1, start // 4)
                continue
            return first
        start = int(ns[-1]) + 1
    return None


def graded_queries(
    sd: float,
    gap: float,
    alpha: float,
    power: float,
    method: str = "t+",
    *,
    mean: float | None = None,
    above: bool = True,
) -> int | None:
    """Queries for a t-type bound to clear a target ``gap`` away from the mean with
    probability ``power`` at standard deviation ``sd``.

    ``t``: :func:`queries_needed` of :mod:`.power_analysis`. ``t+`` (``mean`` needed: the
    pseudo-query pulls the bound by an amount that depends on it): the least ``n`` with
    ``±(m − B_n) ≥ t_{power, n−1} · s/√n``, where ``B_n`` is the value of the sample mean at
    which the ``t+`` bound of ``n`` values (and the worst-case value ``w``: 0 when the
    mean is ``above`` the target, for the lower bound; 1 otherwise) equals the target:
    ``B_n = ((n + 1)(t ± t_{1−α, n} s'/√(n + 1)) − w) / n``, ``s'`` the standard deviation
    of the ``n + 1`` values at mean ``m``. Adding one query to the plain t answer, as this
    did before, undercounts: the worst-case value also moves the mean by ``m/(n + 1)``."""
    if not math.isfinite(gap) or gap <= 0:
        return None
    n = queries_needed(sd, gap, alpha, power, "t")
    if method != "t+":
        return n
    if mean is None:
        raise InputError("graded_queries: the t+ bound's plan needs the mean (mean=)")
    from scipy.stats import t as student

    target = mean - gap if above else mean + gap
    w = 0.0 if above else 1.0

    def enough(k: int) -> bool:
        m2 = (k * mean + w) / (k + 1)
        s2 = math.sqrt(((k - 1) * sd**2 + k * (mean - m2) ** 2 + (w - m2) ** 2) / k)
        c = float(student.ppf(1 - alpha, k)) * s2 / math.sqrt(k + 1)
        edge = ((k + 1) * (target + c if above else target - c) - w) / k
        spare = (mean - edge) if above else (edge - mean)
        return spare >= float(student.ppf(power, k - 1)) * sd / math.sqrt(k)

    lo, hi = max(n, 2), max(n, 2)
    while not enough(hi):  # it holds for every n large enough when gap > 0
        lo, hi = hi + 1, hi * 2
    while lo < hi:  # the least k in [lo, hi] that is enough
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi
