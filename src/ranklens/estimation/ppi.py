"""Prediction-powered inference for the mean of a per-query metric, vectorised over many
estimands at once (one column per run, metric, or paired difference of runs).

A query's metric computed on human labels is ``Y``; on the model judge's labels ``f``.
``n`` queries carry both (``Y_i, f_i``); ``N`` more carry the judge's only (``f̃_j``).
The estimand is ``θ = E[Y]``, the metric's mean over the population of queries.

* **classical** (human labels only): ``θ̂ = Ȳ``, standard error ``σ̂_Y / √n``.
* **naive** (judge only, all ``n + N`` queries): the mean of ``f``: what the judge's
  labels say; its interval is about the judge's own mean, not ``θ``, so it misses ``θ``
  by the judge's bias ``E[f − Y]``.
* **PPI** (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, *Prediction-powered
  inference*, Science 382, 2023): ``θ̂ = mean(f̃) + mean(Y − f)`` (the judge's mean,
  rectified by its measured error); standard error ``√(σ̂²_f̃ / N + σ̂²_{Y−f} / n)``.
* **PPI++** (Angelopoulos, Duchi, Zrnic, *PPI++: Efficient prediction-powered inference*,
  2023, §2 and Example 1): ``θ̂_λ = λ·mean(f̃) + mean(Y − λ·f)``, standard error
  ``√(λ² σ̂²_f̃ / N + σ̂²_{Y−λf} / n)``, with the power-tuned
  ``λ̂ = Cov̂(Y, f) / ((1 + n/N) · V̂ar(f))`` (the variance over all ``n + N`` judge
  values), clipped to ``[0, 1]``: ``λ = 0`` is the classical estimate, ``λ = 1`` PPI,
  so a useless judge costs (asymptotically) nothing.

Intervals, ``interval=``:

* ``"z"``: ``θ̂ ± z_{(1+c)/2} · se`` with population standard deviations (``ddof=0``),
  the central-limit interval of the papers, equal to the authors' ``ppi_py``
  (``ppi_mean_ci``, ``classical_mean_ci``) to rounding;
* ``"t"`` (default): ``θ̂ ± t_{(1+c)/2, n−1} · se`` with sample standard deviations
  (``ddof=1``): the same estimator with the usual small-sample correction. Simulated over
  synthetic judges with known bias (tests/estimation/test_ppi.py), PPI++'s ``"z"`` interval covers
  about 93% at ``n = 50`` human-labelled queries, the ``"t"`` one 94-96% from ``n = 30``.

``λ̂``'s ``Cov̂`` divides by ``n`` in both, as ``ppi_py`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError


@dataclass
class Interval:
    """Estimates of several estimands: ``value``, standard error ``se``, ``lo``/``hi``
    (arrays, one entry per column), and ``lam`` for PPI/PPI++."""

    value: np.ndarray
    se: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    lam: np.ndarray | None = None


def z_value(confidence: float) -> float:
    """``z_{(1+c)/2}``: the standard normal quantile of a two-sided interval."""
    if not 0 < confidence < 1:
        raise InputError(f"confidence must be between 0 and 1, got {confidence}")
    from scipy.special import ndtri

    return float(ndtri((1 + confidence) / 2))


def _cols(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x[:, None] if x.ndim == 1 else x


INTERVALS = ("t", "z")


def _ddof(interval: str) -> int:
    if interval not in INTERVALS:
        raise InputError(f"interval must be 't' or 'z', got {interval!r}")
    return 1 if interval == "t" else 0


def _interval(value, se, confidence: float, interval: str, n: int, lam=None) -> Interval:
    if interval == "t":
        from scipy.special import stdtrit

        z_value(confidence)  # checks the level
        half = stdtrit(max(n - 1, 1), (1 + confidence) / 2) * se
    else:
        half = z_value(confidence) * se
    return Interval(value, se, value - half, value + half, lam)


def classical(y: np.ndarray, confidence: float = 0.95, interval: str = "t") -> Interval:
    """The mean of each column and its interval: ``Ȳ ± q · σ̂ / √n`` (``"t"``: Student's
    quantile and ``ddof=1``, equal to :func:`ranklens.comparison.stats.t_interval`;
    ``"z"``: the normal quantile and ``ddof=0``, equal to ``ppi_py.classical_mean_ci``)."""
    y = _cols(y)
    n = y.shape[0]
    ddof = _ddof(interval)
    if n <= ddof:
        raise InputError(f"{n} values: an interval of a mean needs at least {ddof + 1}")
    se = y.std(axis=0, ddof=ddof) / np.sqrt(n)
    return _interval(y.mean(axis=0), se, confidence, interval, n)


def power_tuned_lambda(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray) -> np.ndarray:
    """PPI++'s ``λ̂ = Cov̂(Y, f) / ((1 + n/N) V̂ar(f ∪ f̃))`` per column, clipped to
    ``[0, 1]`` (0 where the judge's values do not vary)."""
    y, f, fu = _cols(y), _cols(f), _cols(f_unlabelled)
    n, big_n = y.shape[0], fu.shape[0]
    cov = ((y - y.mean(axis=0)) * (f - f.mean(axis=0))).mean(axis=0)
    both = np.concatenate([f, fu])
    var = both.var(axis=0, ddof=1) if len(both) > 1 else np.zeros(y.shape[1])
    denom = (1 + n / big_n) * var
    lam = np.divide(cov, denom, out=np.zeros_like(cov), where=denom > 0)
    return np.clip(lam, 0.0, 1.0)


def ppi(
    y: np.ndarray,
    f: np.ndarray,
    f_unlabelled: np.ndarray,
    lam: float | np.ndarray | None = 1.0,
    confidence: float = 0.95,
    interval: str = "t",
) -> Interval:
    """The prediction-powered mean of each column (see the module docstring): ``lam=1``
    is PPI, ``lam=None`` PPI++ (power-tuned), ``lam=0`` the classical mean.

    ``y``, ``f``: ``(n, m)`` human and judge values of the labelled queries;
    ``f_unlabelled``: ``(N, m)`` judge values of the others (``N ≥ 2``); ``interval``:
    ``"t"`` or ``"z"`` (see the module docstring)."""
    ddof = _ddof(interval)
    y, f, fu = _cols(y), _cols(f), _cols(f_unlabelled)
    if y.shape != f.shape:
        raise InputError(f"human values {y.shape} and judge values {f.shape} must align")
    n, big_n = y.shape[0], fu.shape[0]
    if n < 2 or big_n < 1 + ddof:
        raise InputError(
            f"prediction-powered inference needs at least 2 human-labelled queries and "
            f"{1 + ddof} judged only (have {n} and {big_n})"
        )
    lam_arr = (
        power_tuned_lambda(y, f, fu)
        if lam is None
        else np.broadcast_to(np.asarray(lam, dtype=np.float64), (y.shape[1],)).copy()
    )
    rect = y - lam_arr * f
    value = lam_arr * fu.mean(axis=0) + rect.mean(axis=0)
    se = np.sqrt((lam_arr * fu).var(axis=0, ddof=ddof) / big_n + rect.var(axis=0, ddof=ddof) / n)
    return _interval(value, se, confidence, interval, n, lam_arr)


def correlation(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Pearson's correlation of human and judge values per column (NaN where either is
    constant)."""
    y, f = _cols(y), _cols(f)
    yc, fc = y - y.mean(axis=0), f - f.mean(axis=0)
    den = np.sqrt((yc**2).sum(axis=0) * (fc**2).sum(axis=0))
    num = (yc * fc).sum(axis=0)
    return np.divide(num, den, out=np.full(y.shape[1], np.nan), where=den > 0)


def labels_needed(
    width: float,
    sd_human: np.ndarray,
    sd_judge: np.ndarray,
    corr: np.ndarray,
    queries: int | None,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human labels for an interval of total ``width`` (``hi − lo``), per column:
    ``(classical, ppi++, ppi++ with unlimited judged queries)``.

    Classical: ``n = (2 z σ_Y / w)²``. PPI++ with ``T = queries`` queries of which ``n`` are
    labelled (``N = T − n``): the smallest ``n`` whose variance
    ``λ² σ_f² / N + (σ_Y² − 2λρσ_Yσ_f + λ²σ_f²) / n`` at the optimal
    ``λ = clip(ρσ_Y / ((1 + n/N) σ_f), 0, 1)`` gives the width (-1 when no ``n < T``
    does). As ``N → ∞``: ``n = (2z/w)² σ_Y² (1 − ρ̄²)`` with ``ρ̄ = ρ`` capped where
    ``λ`` would exceed 1 (``σ_Y² − 2ρσ_Yσ_f + σ_f²`` then)."""
    if not width > 0:
        raise InputError(f"width must be positive, got {width}")
    sy, sf, r = (np.atleast_1d(np.asarray(a, dtype=np.float64)) for a in (sd_human, sd_judge, corr))
    r = np.nan_to_num(r)
    z = z_value(confidence)
    target = (width / (2 * z)) ** 2
    classic = np.ceil(sy**2 / target)
    lam_inf = np.clip(np.divide(r * sy, sf, out=np.zeros_like(sy), where=sf > 0), 0, 1)
    resid = sy**2 - 2 * lam_inf * r * sy * sf + lam_inf**2 * sf**2
    unlimited = np.ceil(np.maximum(resid, 0) / target)
    if queries is None:
        return classic, np.full_like(sy, -1), unlimited
    ns = np.arange(2, max(queries, 3), dtype=np.float64)[:, None]
    big_n = queries - ns
    lam = np.clip(
        np.divide(r * sy, (1 + ns / big_n) * sf, out=np.zeros((len(ns), len(sy))), where=sf > 0),
        0,
        1,
    )
    var = lam**2 * sf**2 / big_n + (sy**2 - 2 * lam * r * sy * sf + lam**2 * sf**2) / ns
    ok = var <= target
    first = np.where(ok.any(axis=0), ns[np.argmax(ok, axis=0), 0], -1)
    return classic, first, unlimited
