"""Prediction-powered inference (ranklens.estimation.ppi) against the authors' package
(ppi_py) on generated data and its published mean example, a hand computation, and the
claim itself: 95% intervals cover the truth 95% ± 2 points of the time over many synthetic
judges with known bias (vectorised: every trial is a column), where the judge-only
interval does not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens.comparison.stats import t_interval
from ranklens.errors import InputError
from ranklens.estimation import classical, plan_labels, power_tuned_lambda, ppi
from ranklens.estimation.ppi import labels_needed, z_value

ppi_py = pytest.importorskip("ppi_py")


@st.composite
def samples(draw):
    n = draw(st.integers(2, 40))
    big_n = draw(st.integers(1, 80))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["continuous", "grades", "binary"]))
    if kind == "continuous":
        y = rng.random(n)
        f = np.clip(y + rng.normal(draw(st.floats(-0.3, 0.3)), 0.2, n), 0, 1)
        fu = rng.random(big_n)
    elif kind == "grades":  # metric values of few distinct levels, as P@5
        y = rng.integers(0, 6, n) / 5
        f = np.clip(y + rng.integers(-1, 2, n) / 5, 0, 1)
        fu = rng.integers(0, 6, big_n) / 5
    else:
        y = rng.integers(0, 2, n).astype(float)
        f = np.where(rng.random(n) < 0.8, y, 1 - y)
        fu = rng.integers(0, 2, big_n).astype(float)
    return y, f, fu


@settings(max_examples=60, deadline=None)
@given(samples(), st.sampled_from([1.0, None, 0.0, 0.4]), st.sampled_from([0.9, 0.95, 0.99]))
def test_equal_to_ppi_py(sample, lam, confidence):
    y, f, fu = sample
    ours = ppi(y, f, fu, lam=lam, confidence=confidence, interval="z")
    if lam is None and np.ptp(np.r_[f, fu]) == 0:
        # a judge whose values never vary: ppi_py divides 0 by 0 (NaN); ranklens takes
        # lambda = 0, the human-only estimate (the judge carries no information)
        assert ours.lam[0] == 0 and ours.value[0] == pytest.approx(y.mean())
        return
    lo, hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=1 - confidence, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)
    np.testing.assert_allclose(ours.value, np.ravel(point), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose([ours.lo[0], ours.hi[0]], np.ravel([lo, hi]), rtol=1e-9, atol=1e-12)
    c = classical(y, confidence, interval="z")
    np.testing.assert_allclose(
        [c.lo[0], c.hi[0]], ppi_py.classical_mean_ci(y, alpha=1 - confidence), atol=1e-12
    )
    # the default "t" interval: ddof=1 and Student's quantile, the same centre
    if len(fu) > 1:
        t = ppi(y, f, fu, lam=lam, confidence=confidence)
        assert t.value[0] == pytest.approx(ours.value[0], abs=1e-12)
        lam_ = ours.lam[0]
        se = math.sqrt((lam_ * fu).var(ddof=1) / len(fu) + (y - lam_ * f).var(ddof=1) / len(y))
        assert t.se[0] == pytest.approx(se, rel=1e-9, abs=1e-15)
    lo_t, hi_t = t_interval(y, confidence)
    c_t = classical(y, confidence)
    assert (c_t.lo[0], c_t.hi[0]) == pytest.approx((lo_t[0], hi_t[0]), abs=1e-12)


def test_columns_are_independent_estimands():
    rng = np.random.default_rng(3)
    y, f, fu = rng.random((30, 4)), rng.random((30, 4)), rng.random((200, 4))
    together = ppi(y, f, fu, lam=None)
    for j in range(4):
        alone = ppi(y[:, j], f[:, j], fu[:, j], lam=None)
        assert alone.value[0] == pytest.approx(together.value[j], abs=1e-15)
        assert alone.lam[0] == pytest.approx(together.lam[j], abs=1e-15)


def test_published_example_of_ppi_py():
    # ppi_py's tests/test_mean.py: a judge off by exactly +2 everywhere, its unlabelled
    # predictions all 2: the rectified mean is exactly 0.
    y = np.random.default_rng(0).normal(0, 1, 100)
    assert ppi(y, y + 2, np.ones(10000) * 2, lam=1.0).value[0] == pytest.approx(0, abs=1e-12)
    assert ppi_py.ppi_mean_pointestimate(y, y + 2, np.ones(10000) * 2, lam=1.0) == pytest.approx(
        0, abs=1e-12
    )


def test_hand_computed_example():
    # n = 4 labelled (Y, f), N = 4 judged only.
    y = np.array([1.0, 0.0, 1.0, 0.0])
    f = np.array([1.0, 1.0, 1.0, 0.0])
    fu = np.array([1.0, 1.0, 0.0, 1.0])
    r = ppi(y, f, fu, lam=1.0, confidence=0.95, interval="z")
    # mean(fu) = 0.75, mean(y - f) = -0.25 -> 0.5
    assert r.value[0] == pytest.approx(0.5)
    # var(fu) = 0.1875, var(y - f) = var([0, -1, 0, 0]) = 0.1875; se = sqrt(2 * 0.1875 / 4)
    assert r.se[0] == pytest.approx(math.sqrt(0.1875 / 4 + 0.1875 / 4))
    assert r.hi[0] - r.value[0] == pytest.approx(1.959963984540054 * r.se[0])
    # PPI++: cov(y, f) = 1/8 (divide by n); var(f ∪ fu, ddof=1) = 6/8 * 2/7 ... computed:
    both = np.r_[f, fu]
    lam = (np.mean((y - y.mean()) * (f - f.mean()))) / ((1 + 4 / 4) * both.var(ddof=1))
    assert power_tuned_lambda(y, f, fu)[0] == pytest.approx(lam)


def test_errors_name_what_is_missing():
    with pytest.raises(InputError, match="at least 2 human-labelled"):
        ppi([1.0], [1.0], [0.0, 1.0])
    with pytest.raises(InputError, match="confidence"):
        z_value(1.5)
    with pytest.raises(InputError, match="must align"):
        ppi(np.ones(3), np.ones(4), np.ones(5))


# ------------------------------------------------------------------ coverage simulation
JUDGES = {  # (false positive rate, false negative rate) of a judge's relevance calls
    "perfect": (0.0, 0.0),
    "lenient": (0.3, 0.05),
    "strict": (0.02, 0.5),
    "useless": (0.5, 0.5),
}


def simulate(fpr, fnr, n, big_n, trials, seed, depth=10, a=1.5, b=3.0, shrink=0.7):
    """P@depth per query for two runs (B's relevance rate ``shrink`` times A's), on true
    labels and on a judge's (flips with the given rates), for ``trials`` independent
    experiments as columns; returns the arrays and the true means (A, B − A)."""
    rng = np.random.default_rng(seed)
    total = n + big_n
    p = rng.beta(a, b, size=(total, trials, 1))
    out = []
    for rate in (p, p * shrink):
        rel = rng.random((total, trials, depth)) < rate
        flip = np.where(rel, rng.random(rel.shape) < fnr, rng.random(rel.shape) < fpr)
        out.append((rel.mean(axis=2), (rel ^ flip).mean(axis=2)))
    (ya, fa), (yb, fb) = out
    truth_a = a / (a + b)
    return ya, fa, yb - ya, fb - fa, truth_a, truth_a * (shrink - 1)


def coverage(n, big_n, trials, seed, confidence=0.95, interval="t", chunk=1000):
    """Share of ``trials`` experiments whose interval holds the truth, per (judge, target,
    method); trials simulated ``chunk`` at a time (memory stays under ~100 MB)."""
    hits: dict = {}
    for start in range(0, trials, chunk):
        m = min(chunk, trials - start)
        for name, (fpr, fnr) in JUDGES.items():
            ya, fa, yd, fd, ta, td = simulate(fpr, fnr, n, big_n, m, seed * 7919 + start)
            for target, y, f, truth in (("run", ya, fa, ta), ("difference", yd, fd, td)):
                found = {"naive": classical(f, confidence)}
                for method, lam in (("ppi", 1.0), ("ppi++", None)):
                    found[method] = ppi(y[:n], f[:n], f[n:], lam, confidence, interval)
                for method, r in found.items():
                    key = (name, target, method)
                    hits[key] = hits.get(key, 0) + int(np.sum((r.lo <= truth) & (truth <= r.hi)))
    return {k: v / trials for k, v in hits.items()}


def test_coverage_of_95_percent_intervals_over_synthetic_judges():
    got = coverage(n=40, big_n=400, trials=2000, seed=7)
    for (judge, target, method), cov in got.items():
        if method == "naive":
            continue
        assert 0.93 <= cov <= 0.97, (judge, target, method, cov)
    # the claim can fail: the judge-only interval misses the truth for a biased judge
    assert got["lenient", "run", "naive"] < 0.05
    assert got["strict", "run", "naive"] < 0.05


@pytest.mark.slow
def test_coverage_at_many_sample_sizes():
    # "t" from 30 human-labelled queries; the papers' "z" interval from 100
    for interval, sizes in (
        ("t", ((30, 300), (100, 1000), (300, 3000))),
        ("z", ((100, 1000), (300, 3000))),
    ):
        for n, big_n in sizes:
            for confidence in (0.9, 0.95):
                got = coverage(n, big_n, 10_000, n, confidence, interval)
                for key, cov in got.items():
                    if key[2] != "naive":
                        assert abs(cov - confidence) <= 0.02, (interval, n, confidence, key, cov)


def test_ppi_plus_plus_is_never_much_wider_than_human_only():
    ya, fa, *_ = simulate(0.5, 0.5, 60, 600, 400, seed=2)  # a useless judge
    human = classical(ya[:60])
    tuned = ppi(ya[:60], fa[:60], fa[60:], lam=None)
    plain = ppi(ya[:60], fa[:60], fa[60:], lam=1.0)
    assert np.median((tuned.hi - tuned.lo) / (human.hi - human.lo)) < 1.03
    assert np.median((plain.hi - plain.lo) / (human.hi - human.lo)) > 1.2


def test_plan_labels_by_hand_and_by_simulation():
    # classical: (2 z sd / w)^2 = (2 * 1.96 * 0.3 / 0.1)^2 = 138.3 -> 139
    plan = plan_labels(width=0.1, sd=0.3, corr=0.8, queries=1000)
    row = plan.rows[0]
    assert row["human_only"] == 139
    assert row["ppi_unlimited"] == math.ceil(0.09 * (1 - 0.64) / (0.05 / z_value(0.95)) ** 2)
    n = row["ppi"]
    assert n < row["human_only"]
    # the planned n gives intervals about that wide (simulated: judge = truth + noise)
    rng = np.random.default_rng(1)
    trials = 2000
    y = rng.normal(0.5, 0.3, (1000, trials))
    noise_sd = 0.3 * math.sqrt(1 / 0.64 - 1)  # corr(y, y + noise) = 0.8
    f = y + rng.normal(0, noise_sd, y.shape)
    f = 0.5 + (f - 0.5) * 0.3 / f.std()  # judge's sd 0.3 as planned
    r = ppi(y[:n], f[:n], f[n:], lam=None)
    width = float(np.median(r.hi - r.lo))
    assert 0.09 < width <= 0.103
    smaller = ppi(y[: n // 2], f[: n // 2], f[n // 2 :], lam=None)
    assert float(np.median(smaller.hi - smaller.lo)) > 0.11
    _, with_judge, _ = labels_needed(0.1, [0.3], [0.3], [0.8], 60)
    assert with_judge[0] == -1  # not reachable with 60 queries in all
    assert "not reachable" in str(plan_labels(width=0.1, sd=0.3, corr=0.8, queries=60))
