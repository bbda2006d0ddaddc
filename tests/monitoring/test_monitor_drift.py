"""The Monitor's drift tests: each equals its scipy counterpart, and on simulated stationary
traffic the whole family of a window's signals (Holm over them) alarms at most at rate
alpha, while the uncorrected family would alarm more often; a real drift is caught."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

from ranklens.monitoring.drift import family, ks_statistic, ks_test, mean_test, rate_test


def test_each_test_equals_scipy():
    rng = np.random.default_rng(0)
    for trial in range(60):
        n0 = int(rng.integers(5, 300))
        tied = trial % 2 == 1
        draw = (
            (lambda n, shift: rng.integers(0, 15, n).astype(float))
            if tied
            else (lambda n, shift: rng.normal(shift, 1, n))
        )
        base = draw(n0, 0.0)
        m = int(rng.integers(2, 200))
        rows = np.stack([draw(m, 0.3) for _ in range(3)])
        counts = np.array([m, m - 1, 1])
        d, p = ks_statistic(rows, counts, base), ks_test(rows, counts, base)
        for i in range(3):
            ref = st.ks_2samp(rows[i, : counts[i]], base, method="asymp")
            assert d[i] == pytest.approx(ref.statistic, abs=1e-12)
            assert p[i] == pytest.approx(ref.pvalue, abs=1e-9)
        x, n, x0, total0 = (int(v) for v in rng.integers(0, 40, 4) + np.array([0, 40, 0, 40]))
        fisher_two_sided_doubled = min(
            1.0,
            2
            * min(
                st.hypergeom.cdf(x, n + total0, x + x0, n),
                st.hypergeom.sf(x - 1, n + total0, x + x0, n),
            ),
        )
        expect = 1.0 if x + x0 == 0 else fisher_two_sided_doubled
        assert rate_test(np.array([x]), np.array([n]), x0, total0)[0] == pytest.approx(expect)
        a, b = rng.normal(0.5, 1, m + 2), rng.normal(0.4, 2, n0 + 2)
        ref = st.ttest_ind(a, b, equal_var=False).pvalue
        got = mean_test([a.mean()], [a.var(ddof=1)], [len(a)], b.mean(), b.var(ddof=1), len(b))
        assert got[0] == pytest.approx(ref, rel=1e-9)


def _traffic(rng, n, drift=0.0):
    """Counts and samples of ``n`` simulated retrievals (one window), columns as the
    Monitor tests them; ``drift`` moves the top scores and the failure rate."""
    err = rng.random(n) < 0.01 * (1 + 3 * drift)
    timeouts = err & (rng.random(n) < 0.3)
    ok = ~err
    empty = ok & (rng.random(n) < 0.04)
    unknown = ok & ~empty & (rng.random(n) < 0.02)
    labelled = rng.random(n) < 0.3
    latency = np.round(rng.lognormal(3, 0.5, ok.sum()), 3)  # ms, to the µs: ties
    score = np.round(rng.gamma(4, 2.5, (ok & ~empty).sum()) - 2 * drift, 1)  # heavy ties
    metric = np.where(
        rng.random(labelled.sum()) < 0.4, 0.0, np.round(rng.random(labelled.sum()), 2)
    )
    return {
        "rates": [
            (err.sum(), n),
            (timeouts.sum(), n),
            (empty.sum(), ok.sum()),
            (unknown.sum(), (ok & ~empty).sum()),
            (labelled.sum(), n),
        ],
        "latency": latency,
        "score": score,
        "metric": metric,
    }


def _family_pvalues(rng, replicates, windows, n0, n, drift=0.0):
    """``(replicates * windows, 8)`` p-values: every window of a replicate against that
    replicate's own baseline (so the rate is the marginal one, not one baseline's)."""
    rows = []
    for _ in range(replicates):
        base = _traffic(rng, n0)
        ws = [_traffic(rng, n, drift) for _ in range(windows)]
        cols = []
        for j, (x0, t0) in enumerate(base["rates"]):
            x = np.array([w["rates"][j][0] for w in ws])
            t = np.array([w["rates"][j][1] for w in ws])
            cols.append(rate_test(x, t, x0, t0))
        for name in ("latency", "score"):
            m = max(len(w[name]) for w in ws)
            mat = np.zeros((windows, m))
            for i, w in enumerate(ws):
                mat[i, : len(w[name])] = w[name]
            cols.append(ks_test(mat, np.array([len(w[name]) for w in ws]), base[name]))
        b = base["metric"]
        cols.append(
            mean_test(
                [w["metric"].mean() for w in ws],
                [w["metric"].var(ddof=1) for w in ws],
                [len(w["metric"]) for w in ws],
                b.mean(),
                b.var(ddof=1),
                len(b),
            )
        )
        rows.append(np.stack(cols, axis=1))
    return np.concatenate(rows)


def _check_false_alarms(replicates, windows, alpha=0.05):
    rng = np.random.default_rng(7)
    p = _family_pvalues(rng, replicates, windows, n0=600, n=300)
    _, alarms = family(p, alpha)
    rate = alarms.any(axis=1).mean()
    total = len(p)
    upper = alpha + 3 * np.sqrt(alpha * (1 - alpha) / total)
    assert rate <= upper, f"false-alarm rate {rate:.4f} over {total} stationary windows"
    # the simulation can see a violation: without the correction the family alarms more
    uncorrected = (p <= alpha).any(axis=1).mean()
    assert uncorrected > 2 * alpha, uncorrected
    return rate, uncorrected


def test_stationary_false_alarm_rate_stays_within_alpha():
    rate, uncorrected = _check_false_alarms(replicates=250, windows=10)
    assert rate < uncorrected


@pytest.mark.slow
def test_stationary_false_alarm_rate_large():
    _check_false_alarms(replicates=1500, windows=10)
    _check_false_alarms(replicates=1500, windows=10, alpha=0.01)


def test_a_real_drift_is_caught():
    rng = np.random.default_rng(3)
    p = _family_pvalues(rng, replicates=20, windows=5, n0=600, n=300, drift=1.0)
    _, alarms = family(p, 0.001)
    assert alarms.any(axis=1).mean() > 0.85  # a shift of 0.4 sd in 300 retrievals
    assert alarms[:, 6].mean() > 0.85  # the top score's KS test moved


def test_family_leaves_untested_signals_out():
    adjusted, drifted = family(np.array([[0.001, np.nan, 0.5]]), 0.01)
    assert np.isnan(adjusted[0, 1]) and adjusted[0, 0] == pytest.approx(0.002)
    assert drifted.tolist() == [[True, False, False]]
