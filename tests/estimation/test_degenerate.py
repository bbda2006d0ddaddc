"""Degenerate human samples (all one value, or nearly): warned, noted, the interval never
a point, every estimate inside the metric's range; the fallback bound checked against
scipy's exact and Wilson intervals and its coverage simulated with known truth."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import binomtest

import ranklens
from ranklens.app.demo_data import load
from ranklens.errors import RanklensWarning

METHODS = ("human", "ppi", "ppi++")


@pytest.fixture(scope="module")
def case():
    demo = load()
    others = sorted(demo.corpus)
    labels = demo.qrels.to_dict()
    runs = {"a": {}, "b": {}}
    for i, q in enumerate(sorted(demo.queries)):
        rel = sorted(labels.get(q, {}))
        rest = [d for d in others[i % 20 :] if d not in rel][:6]
        runs["a"][q] = rel + rest
        runs["b"][q] = rest[:2] + rel + rest[2:]
    return demo, runs


@pytest.mark.parametrize("grade", [0, 1])
def test_a_human_sample_all_one_value_is_warned_and_never_a_point(case, grade):
    demo, runs = case
    labelled = sorted(demo.queries)[:30]
    # people graded every retrieved passage of 30 queries alike: no spread at all
    human = {q: {d: grade for r in runs.values() for d in r[q][:10]} for q in labelled}
    rng = np.random.default_rng(0)
    judged = {
        q: {d: int(rng.random() < 0.5) for r in runs.values() for d in r[q][:10]}
        for q in demo.queries
    }
    with pytest.warns(RanklensWarning, match=f"all 30 human values are {grade}"):
        est = ranklens.estimate(demo, runs, judged=judged, human=human, metrics=["P@5"])
    assert est.info["degenerate"] and any("degenerate for a P@5" in n for n in est.notes())
    for target, low, high in (("a", 0, 1), ("b", 0, 1), ("b − a", -1, 1)):
        row = est.row(target, "P@5")
        assert row["degenerate"].startswith("all 30 human values")
        for m in ("naive", *METHODS):
            r = row[m]
            assert low <= r["lo"] <= r["value"] <= r["hi"] <= high, (target, m, r)
        for m in METHODS:
            assert row[m]["hi"] - row[m]["lo"] > 0.05, (target, m)  # never a point


def test_an_ordinary_sample_is_left_alone(case):
    from ranklens.estimation import DegenerateSampleWarning

    demo, runs = case
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateSampleWarning)
        est = ranklens.estimate(demo, runs, judged=demo.qrels, human=30, metrics=["ndcg@10"])
    assert not est.info["degenerate"]


def test_which_columns_are_degenerate():
    from ranklens.estimation.ppi import FEW_DIFFERENT, degenerate

    y = np.zeros((30, 5))
    y[:1, 1] = 1  # one differs
    y[:FEW_DIFFERENT, 2] = 0.5  # enough differ
    y[:, 3] = np.linspace(0, 1, 30)
    y[:, 4] = 0.7  # all one interior value
    assert degenerate(y).tolist() == [True, True, False, False, True]


@pytest.mark.parametrize("k", [0, 1, 2, 5, 29, 30])
def test_two_point_values_get_the_exact_clopper_pearson_interval(k):
    from ranklens.estimation.ppi import bounded_interval

    y = np.r_[np.ones(k), np.zeros(30 - k)]
    lo, hi = bounded_interval(y, 0, 1, 0.95)
    want = binomtest(k, 30).proportion_ci(0.95, method="exact")
    assert lo[0] == pytest.approx(want.low, abs=1e-12) and hi[0] == pytest.approx(want.high)
    # the same on a range [-1, 1] (a paired difference), rescaled
    lo2, hi2 = bounded_interval(2 * y - 1, -1, 1, 0.95)
    assert lo2[0] == pytest.approx(2 * want.low - 1) and hi2[0] == pytest.approx(2 * want.high - 1)


def test_other_values_get_wilson_with_the_largest_variance_the_range_allows():
    from ranklens.estimation.ppi import bounded_interval

    y = np.full(30, 0.5)  # mean 0.5: Wilson of 15 of 30
    lo, hi = bounded_interval(y, 0, 1, 0.95)
    want = binomtest(15, 30).proportion_ci(0.95, method="wilson")
    assert lo[0] == pytest.approx(want.low) and hi[0] == pytest.approx(want.high)
    lo, hi = bounded_interval(y, 0, np.inf, 0.95)  # a count: no bound from the range
    assert np.isnan(lo[0]) and np.isnan(hi[0])


def _simulate(p, rng, n=30, big_n=300, reps=800, graded=False):
    """``reps`` samples as columns: human values of ``n`` queries and a noisy judge's of
    ``n + big_n``; returns each method's coverage of the truth and the degenerate share."""
    total = n + big_n
    y = (rng.random((total, reps)) < p).astype(float)
    truth = p
    if graded:  # values 0.25, 0.5 or 1 where relevant: not two-point
        y *= rng.choice([0.25, 0.5, 1.0], (total, reps))
        truth = p * (0.25 + 0.5 + 1.0) / 3
    from ranklens.estimation.ppi import calibrated

    flip = rng.random((total, reps))
    f = np.where(y > 0, np.where(flip < 0.2, 0.0, y), (flip < 0.1).astype(float))
    out, weak = calibrated(y[:n], f, np.arange(n), np.zeros(reps), np.ones(reps))
    cover = {m: float(np.mean((out[m].lo <= truth) & (truth <= out[m].hi))) for m in METHODS}
    points = {m: int(np.sum(out[m].hi - out[m].lo <= 0)) for m in METHODS}
    return cover, points, float(weak.mean())


@pytest.mark.parametrize(
    "p, graded", [(0.0, False), (0.01, False), (0.03, False), (0.1, False), (0.03, True)]
)
def test_coverage_with_known_truth_when_people_rarely_find_anything(p, graded):
    """Rare relevance: many human samples are all 0 (or nearly). Before, such a sample
    gave the interval [0, 0] (coverage far below 95% at p = 0.03); now every interval
    covers the truth at least at the nominal level less 2 points, and none is a point."""
    cover, points, weak = _simulate(p, np.random.default_rng(7), graded=graded)
    assert weak > 0  # the case is exercised
    for m in METHODS:
        assert cover[m] >= 0.93, (m, cover)
        assert points[m] == 0, (m, points)


def test_a_plan_from_a_degenerate_pilot_says_it_is_a_floor(case):
    demo, runs = case
    labelled = sorted(demo.queries)[:30]
    human = {q: {d: 0 for r in runs.values() for d in r[q][:10]} for q in labelled}
    judged = {q: {d: 1 for r in runs.values() for d in r[q][:10]} for q in demo.queries}
    with pytest.warns(RanklensWarning):
        est = ranklens.estimate(demo, runs, judged=judged, human=human, metrics=["P@5"])
    with pytest.warns(RanklensWarning, match="plan_labels: the pilot's human sample is degenerate"):
        plan = ranklens.plan_labels(est, 0.1, target="a")
    assert plan.rows[0]["degenerate"] and "at least: the pilot's human sample" in str(plan)
