"""Paired tests, intervals and corrections against scipy (and textbook values)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ranklens.comparison import stats
from ranklens.errors import InputError

values = st.lists(st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 0.75, 1.0]), min_size=3, max_size=12)


def paired(data) -> tuple[np.ndarray, np.ndarray]:
    """Two systems' per-query values on the same queries (ties and zeros likely)."""
    a = np.array(data.draw(values))
    others = st.sampled_from([0.0, 0.2, 0.5, 1.0])
    return a, np.array(data.draw(st.lists(others, min_size=len(a), max_size=len(a))))


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_t_test_equals_ttest_rel(data):
    a, b = paired(data)
    d = a - b
    ours = stats.paired_t(d)[0]
    if np.std(d) == 0:
        assert ours == (1.0 if np.all(d == 0) else 0.0)
        return
    # scipy warns when the differences are equal up to rounding (its value is still the one
    # compared); only the oracle's call is silenced, so a warning of ours would still show.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        expected = sps.ttest_rel(a, b).pvalue
    assert ours == pytest.approx(expected, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_exact_randomization_equals_permutation_test(data):
    a, b = paired(data)
    ours = stats.randomization(a - b, n_permutations=10_000)[0]
    d = a - b
    if abs(d.sum()) <= 1e-9 * max(1.0, float(np.abs(d).sum())):
        # The observed mean difference is 0: every sign flip is at least as extreme, so the
        # exact p-value is 1. scipy compares float sums and may count a few flips as less
        # extreme by rounding (0.992 or 0.996 instead of 1): the oracle is the definition.
        assert ours == 1.0
        return
    ref = sps.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
        alternative="two-sided",
    ).pvalue
    assert ours == pytest.approx(ref, abs=1e-12)


def test_sampled_randomization_agrees_with_permutation_test_within_monte_carlo_error():
    rng = np.random.default_rng(3)
    a = rng.random(200)
    b = np.clip(a - 0.03 + rng.normal(0, 0.2, 200), 0, 1)
    ours = stats.randomization(a - b, n_permutations=20_000, seed=1)[0]
    ref = sps.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=20_000,
        alternative="two-sided",
        random_state=2,
    ).pvalue
    assert 0.01 < ref < 0.5  # a case with a p-value worth comparing
    # Both are estimates from 20,000 draws: standard error <= sqrt(p(1-p)/20000) each.
    assert abs(ours - ref) < 5 * np.sqrt(2 * ref * (1 - ref) / 20_000)


def test_randomization_many_columns_equal_one_at_a_time():
    rng = np.random.default_rng(0)
    d = rng.normal(0.02, 0.3, size=(300, 5))
    together = stats.randomization(d, 5000, seed=7)
    alone = [stats.randomization(d[:, j], 5000, seed=7)[0] for j in range(5)]
    np.testing.assert_allclose(together, alone)


@settings(max_examples=20, deadline=None)  # scipy enumerates signs exactly: slow per call
@given(st.data())
def test_wilcoxon_equals_scipy(data):
    a, b = paired(data)
    d = a - b
    ours = stats.wilcoxon(d)[0]
    if np.count_nonzero(d) == 0:
        assert ours == 1.0
        return
    assert ours == pytest.approx(sps.wilcoxon(a, b).pvalue, rel=1e-9)


def test_bootstrap_test_detects_a_shift_and_not_noise():
    rng = np.random.default_rng(5)
    noise = rng.normal(0, 0.2, 500)
    assert stats.paired_bootstrap(noise - noise.mean(), 4000)[0] > 0.5
    assert stats.paired_bootstrap(noise + 0.1, 4000)[0] < 0.001
    # Against the t test on a moderate effect: same conclusion, similar size.
    d = noise + 0.02
    assert stats.paired_bootstrap(d, 20_000)[0] == pytest.approx(stats.paired_t(d)[0], abs=0.03)


def test_intervals():
    rng = np.random.default_rng(1)
    v = rng.random(400)
    lo, hi = stats.t_interval(v)
    ref = sps.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=sps.sem(v))
    assert (lo[0], hi[0]) == pytest.approx(ref, rel=1e-12)
    blo, bhi = stats.bootstrap_interval(v, n_resamples=20_000)
    ref_b = sps.bootstrap((v,), np.mean, method="percentile", n_resamples=20_000, random_state=0)
    assert blo[0] == pytest.approx(ref_b.confidence_interval.low, abs=0.004)
    assert bhi[0] == pytest.approx(ref_b.confidence_interval.high, abs=0.004)
    assert lo[0] < v.mean() < hi[0]


def test_bootstrap_weights_are_resamples():
    for w in stats.bootstrap_weights(50, 300, seed=1):
        assert w.shape[1] == 50
        assert np.all(w.sum(axis=1) == 50)


def test_corrections_match_statsmodels_definitions():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.2])
    # Hand-computed (statsmodels multipletests gives the same).
    np.testing.assert_allclose(stats.correct(p, "bonferroni"), [0.05, 0.2, 0.15, 0.025, 1.0])
    np.testing.assert_allclose(stats.correct(p, "holm"), [0.04, 0.09, 0.09, 0.025, 0.2])
    np.testing.assert_allclose(stats.correct(p, "bh"), [0.025, 0.05, 0.05, 0.025, 0.2])
    np.testing.assert_allclose(stats.correct(p, "none"), p)
    with pytest.raises(InputError, match="unknown correction 'sidak'"):
        stats.correct(p, "sidak")


def test_effect_size_and_win_tie_loss():
    d = np.array([0.5, 0.0, -0.25, 0.5])
    assert stats.effect_size(d)[0] == pytest.approx(d.mean() / d.std(ddof=1))
    assert stats.win_tie_loss(d).tolist() == [[2, 1, 1]]
    # no variation: a definite effect, never NaN nor float noise (0.1 - 0.2 + 0.1 ...)
    assert stats.effect_size(np.zeros(4))[0] == 0.0
    assert stats.effect_size(np.full(5, 0.1))[0] == np.inf
    assert stats.effect_size(np.full(5, -0.1))[0] == -np.inf
    noisy = np.array([0.30000000000000004, 0.3, 0.3, 0.30000000000000004]) - 0.1
    assert stats.effect_size(noisy)[0] == np.inf
    assert np.isnan(stats.effect_size(np.array([0.2]))[0])  # one query: no spread to measure
    assert stats.paired_t(np.full(5, 0.1))[0] == 0.0


def test_unknown_test_is_named():
    with pytest.raises(InputError, match="unknown test 'z'"):
        stats.paired_test(np.zeros(3), "z")


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("test", ["randomization", "bootstrap", "t", "wilcoxon"])
def test_pairs_equal_their_differences_tested_directly(seed, test):
    # one product over the columns (pairs=) against the straightforward test of each
    # difference: the same p-values (the sums round differently, far inside the tolerance)
    rng = np.random.default_rng(seed)
    n = (12, 300)[seed % 2]
    x = rng.random((n, 6))
    x[:, 3] = x[:, 2]  # a pair with no difference at all
    x[:, 5] = np.round(x[:, 4] + 0.05, 1) if seed else x[:, 4] + 0.05  # discrete values
    pairs = [(i, j) for i in range(6) for j in range(i + 1, 6)]
    d = np.column_stack([x[:, a] - x[:, b] for a, b in pairs])
    got = stats.paired_test(x, test, 2000, seed, pairs=pairs)
    np.testing.assert_array_equal(got, stats.paired_test(d, test, 2000, seed))


def test_bootstrap_weights_count_the_drawn_indices():
    # the blocked tally equals the plain one over the same draws
    for n, b, seed in [(7, 50, 0), (300, 10_000, 3), (40_000, 250, 1)]:
        rng = np.random.default_rng(seed)
        rows = max(1, stats._CHUNK_ELEMENTS // n)
        got = np.concatenate(list(stats.bootstrap_weights(n, b, seed)))
        ref = []
        for done in range(0, b, rows):
            idx = rng.integers(0, n, size=(min(rows, b - done), n), dtype=np.int64)
            ref.append(np.array([np.bincount(r, minlength=n) for r in idx], dtype=np.float64))
        np.testing.assert_array_equal(got, np.concatenate(ref))
