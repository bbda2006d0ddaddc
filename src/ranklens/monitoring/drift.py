"""Drift tests: is a window's signal distributed as in the baseline window?

Each function tests many windows at once against one baseline (``(n_windows, ...)``
arrays), so a simulation of thousands of stationary windows runs the same code the
:class:`~ranklens.Monitor` runs on one window. Every test is two-sided and valid for
independent retrievals; the family of one window's signals is corrected by Holm
(:func:`ranklens.comparison.stats.correct`).

* **Rates** (failures, timeouts, empty results, unknown ids, labelled queries):
  :func:`rate_test`, the conditional exact test of two binomial proportions (Fisher's
  test: given the ``x1 + x2`` events, ``x1`` is hypergeometric), two-sided by doubling the
  smaller tail, ``p = min(1, 2·min(P(X ≤ x1), P(X ≥ x1)))`` (valid, slightly
  conservative; Agresti, *Categorical Data Analysis*, 2013, §3.5.4).
* **Distributions** (latency, top score): :func:`ks_test`, the two-sample
  Kolmogorov-Smirnov statistic ``D = sup_x |F_w(x) − F_b(x)|`` with the p-value of
  ``scipy.stats.ks_2samp(method="asymp")``: ``P(D_n ≥ D)`` of the one-sample exact
  distribution at ``n = round(n_w·n_b / (n_w + n_b))`` (Hodges 1957). With ties (scores
  rounded, latencies of equal value) the test is conservative.
* **Means of per-retrieval values** (a labelled metric, a model judge's grade):
  :func:`mean_test`, Welch's unequal-variance t test.

The false-alarm rate of the whole family (at most ``alpha`` per window) is measured on
simulated stationary traffic in ``tests/monitoring/test_monitor_drift.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..comparison import stats
from .windows import DISTRIBUTION_SIGNALS, RATE_SIGNALS, Drift, Samples


def rate_test(x: np.ndarray, n: np.ndarray, x0: int, n0: int) -> np.ndarray:
    """Two-sided p-values that windows with ``x`` events in ``n`` trials (arrays) have the
    baseline's rate (``x0`` events in ``n0``); see the module docstring. A window or
    baseline with no trial, or no event on either side, gives p = 1."""
    from scipy.stats import hypergeom

    x = np.asarray(x, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    total = n + n0
    events = x + x0
    lower = hypergeom.cdf(x, total, events, n)  # P(X <= x)
    upper = hypergeom.sf(x - 1, total, events, n)  # P(X >= x)
    p = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    return np.where((n == 0) | (n0 == 0) | (events == 0), 1.0, p)


def ks_statistic(samples: np.ndarray, counts: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """``D`` of each row of ``samples`` (``(w, m)``, row ``i`` holding ``counts[i]`` values
    first, the rest ignored) against ``baseline``. One ``searchsorted`` on the sorted
    baseline serves every row: ``D+ = max_i (i/n − G(r_i))`` over the row's sorted values
    (``G``: the baseline's ECDF) and ``D− = max_i (G(r_i−) − (i−1)/n)``."""
    base = np.sort(np.asarray(baseline, dtype=np.float64))
    rows = np.asarray(samples, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    m = rows.shape[1]
    valid = np.arange(m)[None, :] < counts[:, None]
    rows = np.sort(np.where(valid, rows, np.inf), axis=1)
    n = np.maximum(counts, 1)[:, None].astype(np.float64)
    i = np.arange(1, m + 1)[None, :]
    g_right = np.searchsorted(base, rows, side="right") / len(base)
    g_left = np.searchsorted(base, rows, side="left") / len(base)
    d_plus = np.where(valid, i / n - g_right, -np.inf).max(axis=1)
    d_minus = np.where(valid, g_left - (i - 1) / n, -np.inf).max(axis=1)
    out: np.ndarray = np.maximum(np.maximum(d_plus, d_minus), 0.0)
    return out


def ks_test(samples: np.ndarray, counts: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Two-sided p-values of the two-sample Kolmogorov-Smirnov test of each row of
    ``samples`` against ``baseline`` (equal to ``scipy.stats.ks_2samp(row, baseline,
    method="asymp").pvalue``)."""
    from scipy.stats import kstwo

    counts = np.asarray(counts, dtype=np.int64)
    n0 = len(baseline)
    if n0 == 0:
        return np.ones(len(counts))
    d = ks_statistic(samples, counts, baseline)
    en = np.round(counts * n0 / np.maximum(counts + n0, 1))
    p = np.clip(kstwo.sf(d, np.maximum(en, 1)), 0.0, 1.0)
    return np.where(counts == 0, 1.0, p)


def mean_test(
    mean: np.ndarray, var: np.ndarray, n: np.ndarray, mean0: float, var0: float, n0: int
) -> np.ndarray:
    """Two-sided Welch t-test p-values of windows' means (``mean``, sample variance
    ``var``, size ``n``) against the baseline's: ``t = (m − m0) / sqrt(v/n + v0/n0)`` with
    Welch-Satterthwaite degrees of freedom. Fewer than two values on a side gives p = 1;
    two constant samples give p = 0 when their means differ."""
    from scipy.special import stdtr

    mean, var, n = (np.asarray(a, dtype=np.float64) for a in (mean, var, n))
    se2 = var / np.maximum(n, 1) + var0 / max(n0, 1)
    diff = mean - mean0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff / np.sqrt(se2)
        a, b = var / np.maximum(n, 1), var0 / max(n0, 1)
        df = se2**2 / (a**2 / np.maximum(n - 1, 1) + b**2 / max(n0 - 1, 1))
        p = 2 * stdtr(np.where(np.isfinite(df), df, 1.0), -np.abs(t))
    p = np.where(se2 > 0, p, np.where(np.abs(diff) > 1e-12, 0.0, 1.0))
    return np.where((n < 2) | (n0 < 2), 1.0, np.clip(p, 0.0, 1.0))


def family(
    pvalues: np.ndarray, alpha: float, method: str = "holm"
) -> tuple[np.ndarray, np.ndarray]:
    """Each row a window's family of signals: the adjusted p-values (Holm by default) and
    which signals drifted (adjusted p ≤ ``alpha``). NaN marks a signal not tested in that
    window (too few values): it stays out of the family."""
    p = np.atleast_2d(np.asarray(pvalues, dtype=np.float64))
    adjusted = np.full_like(p, np.nan)
    for i, row in enumerate(p):
        tested = ~np.isnan(row)
        if tested.any():
            adjusted[i, tested] = stats.correct(row[tested], method)
    return adjusted, np.nan_to_num(adjusted, nan=1.0) <= alpha


def compare(window: Samples, baseline: Samples, signals: Iterable[str], alpha: float,
            min_samples: int = 30) -> dict[str, Drift]:  # fmt: skip
    """Each of ``signals`` of one window tested against the baseline, corrected by Holm over
    those tested (a distribution or mean with fewer than ``min_samples`` values on either
    side is left out: its :class:`Drift` has ``p = NaN``)."""
    out: dict[str, Drift] = {}
    wc, bc = window.counts, baseline.counts
    for name in signals:
        if name in RATE_SIGNALS:
            events, trials, _ = RATE_SIGNALS[name]
            x, n, x0, n0 = wc[events], wc[trials], bc[events], bc[trials]
            p = float(rate_test(np.array([x]), np.array([n]), x0, n0)[0]) if n and n0 else math.nan
            out[name] = Drift(name, "exact", x / n if n else math.nan, x0 / n0 if n0 else math.nan,
                              math.nan, p, n=n, n_baseline=n0)  # fmt: skip
        elif name in DISTRIBUTION_SIGNALS:
            field = DISTRIBUTION_SIGNALS[name][0]
            a, b = getattr(window, field), getattr(baseline, field)
            p = d = math.nan
            if min(len(a), len(b)) >= min_samples:
                d = float(ks_statistic(a[None, :], np.array([len(a)]), b)[0])
                p = float(ks_test(a[None, :], np.array([len(a)]), b)[0])
            va = float(np.median(a)) if len(a) else math.nan
            vb = float(np.median(b)) if len(b) else math.nan
            out[name] = Drift(name, "ks", va, vb, d, p, n=len(a), n_baseline=len(b))
        else:
            a = window.values.get(name, np.empty(0))
            b = baseline.values.get(name, np.empty(0))
            p = t = math.nan
            ma = float(a.mean()) if len(a) else math.nan
            mb = float(b.mean()) if len(b) else math.nan
            if min(len(a), len(b)) >= min(min_samples, 10):
                va, vb = float(a.var(ddof=1)), float(b.var(ddof=1))
                p = float(mean_test(np.array([ma]), np.array([va]), np.array([len(a)]), mb, vb,
                                    len(b))[0])  # fmt: skip
                se = math.sqrt(va / len(a) + vb / len(b))
                t = (ma - mb) / se if se > 0 else math.copysign(math.inf, ma - mb)
            out[name] = Drift(name, "welch", ma, mb, t, p, n=len(a), n_baseline=len(b))
    names = list(out)
    adjusted, drifted = family(np.array([[out[s].p for s in names]]), alpha)
    for j, signal in enumerate(names):
        out[signal].p_adjusted = float(adjusted[0, j])
        out[signal].drifted = bool(drifted[0, j])
    return out
