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

**Degenerate human samples** (:func:`degenerate`, :func:`bounded_interval`,
:func:`kept_in_range`). When a column's human values are all one value, or fewer than
:data:`FEW_DIFFERENT` of them differ from the most common one (all 0 but two, say), the
sample shows (almost) no spread: ``σ̂_Y`` is 0 or tiny, the human interval is a point and
PPI++ (``λ̂ = 0`` when ``Y`` does not vary) with it; the central-limit interval of a mean
needs a spread it can estimate. Such a column's interval is widened to hold a bound that
needs no variance estimate, using only that a metric's values lie in its range
``[a, b]``:

* values at ``a`` and ``b`` only (a 0/1 metric): the exact **Clopper-Pearson** interval of
  ``k`` of ``n`` (Clopper & Pearson, *Biometrika* 26, 1934); with all ``n`` at ``a`` its
  upper end ``a + (b − a)(1 − (α/2)^{1/n})`` holds for *any* variable in ``[a, b]``
  (``P(X = a) ≤ 1 − μ'`` with ``μ'`` the rescaled mean, so all ``n`` at ``a`` has
  probability at most ``(1 − μ')^n``);
* other values: the **Wilson** score interval (Wilson, *JASA* 22, 1927) on the rescaled
  mean with the Bhatia-Davis bound ``Var(X) ≤ (b − μ)(μ − a)`` (Bhatia & Davis, *Amer.
  Math. Monthly* 107, 2000) as the variance, the largest any variable of that range and
  mean can have, so it is no narrower than the normal interval with the true variance.

The widened interval is the hull of the computed one and that bound (both hold ``θ`` at
their level, so the hull does too). Coverage with known truth is simulated in
tests/estimation/test_degenerate.py (at least the nominal level less 2 points, for
samples all 0, all 1 and rare). A metric without an upper bound (a count) has no such
bound: its interval is left as computed and the note says so.

Every estimate is then kept inside the metric's range: the point clipped to ``[a, b]``
(a paired difference: ``[a − b, b − a]``), the interval intersected with it
(:func:`kept_in_range`).
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


def _cols(x: np.ndarray, what: str = "values") -> np.ndarray:
    """``x`` as a float matrix (one column per estimand); values that are not finite
    numbers (NaN, infinities, texts) are a named error, never averaged."""
    try:
        x = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be numbers, got {x!r:.60}") from None
    if x.ndim not in (1, 2):
        raise InputError(f"{what} must be a vector or a matrix (queries x estimands)")
    bad = ~np.isfinite(x)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{what} must be finite numbers, got {x[at]} at {at}")
    out: np.ndarray = x[:, None] if x.ndim == 1 else x
    return out


INTERVALS = ("t", "z")


def _ddof(interval: str) -> int:
    if interval not in INTERVALS:
        raise InputError(f"interval must be 't' or 'z', got {interval!r}")
    return 1 if interval == "t" else 0


def _interval(
    value: np.ndarray,
    se: np.ndarray,
    confidence: float,
    interval: str,
    n: int,
    lam: np.ndarray | None = None,
) -> Interval:
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
    y = _cols(y, "classical: the values")
    n = y.shape[0]
    ddof = _ddof(interval)
    if n <= ddof:
        raise InputError(f"{n} values: an interval of a mean needs at least {ddof + 1}")
    se = y.std(axis=0, ddof=ddof) / np.sqrt(n)
    return _interval(y.mean(axis=0), se, confidence, interval, n)


def power_tuned_lambda(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray) -> np.ndarray:
    """PPI++'s ``λ̂ = Cov̂(Y, f) / ((1 + n/N) V̂ar(f ∪ f̃))`` per column, clipped to
    ``[0, 1]`` (0 where the judge's values do not vary)."""
    y, f = _cols(y, "human values"), _cols(f, "judge values")
    fu = _cols(f_unlabelled, "judge values")
    n, big_n = y.shape[0], fu.shape[0]
    cov = ((y - y.mean(axis=0)) * (f - f.mean(axis=0))).mean(axis=0)
    both = np.concatenate([f, fu])
    var = both.var(axis=0, ddof=1) if len(both) > 1 else np.zeros(y.shape[1])
    denom = (1 + n / big_n) * var
    lam = np.divide(cov, denom, out=np.zeros_like(cov), where=denom > 0)
    clipped: np.ndarray = np.clip(lam, 0.0, 1.0)
    return clipped


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
    y, f = _cols(y, "ppi: human values"), _cols(f, "ppi: judge values")
    fu = _cols(f_unlabelled, "ppi: judge values of the unlabelled")
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
        else np.broadcast_to(_cols(np.atleast_1d(lam), "ppi: lam")[:, 0], (y.shape[1],)).copy()
    )
    rect = y - lam_arr * f
    value = lam_arr * fu.mean(axis=0) + rect.mean(axis=0)
    se = np.sqrt((lam_arr * fu).var(axis=0, ddof=ddof) / big_n + rect.var(axis=0, ddof=ddof) / n)
    return _interval(value, se, confidence, interval, n, lam_arr)


FEW_DIFFERENT = 3
"""A column of human values is degenerate when fewer than this many differ from its most
common value (none: all one value). The normal approximation of a mean wants several
values on each side of it (the textbook ``n·p ≥ 5`` rule for a proportion; Brown, Cai &
DasGupta, *Statist. Sci.* 16, 2001, on the poor coverage of the Wald interval there)."""


def degenerate(y: np.ndarray) -> np.ndarray:
    """Per column: True when fewer than :data:`FEW_DIFFERENT` of the human values differ
    from the column's most common value (all one value included)."""
    y = _cols(y)
    n = y.shape[0]
    if n == 0:
        return np.ones(y.shape[1], dtype=bool)
    s = np.sort(y, axis=0)
    new = np.vstack([np.ones((1, y.shape[1]), dtype=bool), s[1:] != s[:-1]])
    at = np.arange(n)[:, None]
    start = np.maximum.accumulate(np.where(new, at, 0), axis=0)
    mode = (at - start + 1).max(axis=0)  # the longest run of equal values
    weak: np.ndarray = n - mode < FEW_DIFFERENT
    return weak


def bounded_interval(
    y: np.ndarray, low: np.ndarray, high: np.ndarray, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Per column, an interval of the mean that needs no variance estimate, from the
    values' range ``[low, high]`` alone (see the module docstring): Clopper-Pearson for
    values at the two ends only, else Wilson's score interval with the Bhatia-Davis
    variance bound. NaN where the range is unbounded."""
    from scipy.stats import beta

    y = _cols(y)
    n = y.shape[0]
    z = z_value(confidence)
    alpha = 1 - confidence
    a = np.broadcast_to(np.asarray(low, dtype=np.float64), (y.shape[1],))
    b = np.broadcast_to(np.asarray(high, dtype=np.float64), (y.shape[1],))
    bounded = np.isfinite(a) & np.isfinite(b) & (b > a)
    span = np.where(bounded, b - a, 1.0)
    u = np.clip((y - np.where(bounded, a, 0.0)) / span, 0.0, 1.0)
    two_point = np.all((u == 0) | (u == 1), axis=0)
    k = u.sum(axis=0)
    with np.errstate(invalid="ignore"):  # the ends k = 0 and k = n are set below
        cp_lo = np.where(k == 0, 0.0, beta.ppf(alpha / 2, k, n - k + 1))
        cp_hi = np.where(k == n, 1.0, beta.ppf(1 - alpha / 2, k + 1, n - k))
    m = u.mean(axis=0)  # Wilson with the largest variance the range allows
    centre = (m + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(m * (1 - m) / n + z * z / (4 * n * n))
    p_lo = np.where(two_point, cp_lo, np.maximum(centre - half, 0.0))
    p_hi = np.where(two_point, cp_hi, np.minimum(centre + half, 1.0))
    lo = np.where(bounded, a + span * p_lo, np.nan)
    hi = np.where(bounded, a + span * p_hi, np.nan)
    return lo, hi


def widened(r: Interval, lo: np.ndarray, hi: np.ndarray, where: np.ndarray) -> Interval:
    """``r`` with the columns ``where`` widened to hold ``[lo, hi]`` too (the hull)."""
    use = where & np.isfinite(lo) & np.isfinite(hi)
    return Interval(
        r.value,
        r.se,
        np.where(use, np.minimum(r.lo, lo), r.lo),
        np.where(use, np.maximum(r.hi, hi), r.hi),
        r.lam,
    )


def kept_in_range(r: Interval, low: np.ndarray, high: np.ndarray) -> Interval:
    """``r`` inside ``[low, high]`` per column: the point clipped, the interval
    intersected with the range (an end past the range moved to it)."""
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    return Interval(
        np.clip(r.value, low, high),
        r.se,
        np.clip(r.lo, low, high),
        np.clip(r.hi, low, high),
        r.lam,
    )


def calibrated(
    y: np.ndarray,
    f: np.ndarray,
    labelled: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    confidence: float = 0.95,
    interval: str = "t",
) -> tuple[dict[str, Interval], np.ndarray]:
    """Every estimate of each column: ``naive`` (the mean of the judge's values ``f`` over
    all queries), ``human`` (of the human values ``y`` of the queries at ``labelled``, an
    index into ``f``'s rows), ``ppi``, ``ppi++`` and ``judge_bias`` (``f − y`` on the
    labelled queries); columns whose human values are :func:`degenerate` widened by
    :func:`bounded_interval` (human, PPI, PPI++), and every estimate but the bias kept in
    ``[low, high]`` (:func:`kept_in_range`). Returns the estimates and the degenerate mask."""
    y, f = _cols(y), _cols(f)
    labelled = np.asarray(labelled, dtype=np.intp)
    rest = np.setdiff1d(np.arange(f.shape[0]), labelled)
    fl, fu = f[labelled], f[rest]
    out = {
        "naive": classical(f, confidence, interval),
        "human": classical(y, confidence, interval),
        "judge_bias": classical(fl - y, confidence, interval),
    }
    if len(rest) > 1:
        out["ppi"] = ppi(y, fl, fu, 1.0, confidence, interval)
        out["ppi++"] = ppi(y, fl, fu, None, confidence, interval)
    else:  # (almost) every query is human-labelled: the human estimate is the answer
        out["ppi"] = out["ppi++"] = out["human"]
    weak = degenerate(y)
    if weak.any():
        lo, hi = bounded_interval(y, low, high, confidence)
        for method in ("human", "ppi", "ppi++"):
            out[method] = widened(out[method], lo, hi, weak)
    for method in ("naive", "human", "ppi", "ppi++"):
        out[method] = kept_in_range(out[method], low, high)
    return out, weak


def correlation(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Pearson's correlation of human and judge values per column (NaN where either is
    constant)."""
    y, f = _cols(y), _cols(f)
    yc, fc = y - y.mean(axis=0), f - f.mean(axis=0)
    den = np.sqrt((yc**2).sum(axis=0) * (fc**2).sum(axis=0))
    num = (yc * fc).sum(axis=0)
    corr: np.ndarray = np.divide(num, den, out=np.full(y.shape[1], np.nan), where=den > 0)
    return corr


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
