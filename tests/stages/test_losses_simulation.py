"""The loss test's claims checked by simulation with known truth: when a stage loses
nothing on average its test rejects at about alpha and its interval covers 0 at about the
confidence; when it loses, the test finds it."""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from ranklens import Statistics, evaluate_stages


def simulate(rng: np.random.Generator, n_q: int, loss: float):
    """Two stages over n_q queries of 4 relevant documents: the second swaps documents in
    and out so that its expected share held equals the first's minus ``loss``."""
    labels, first, second = {}, {}, {}
    for i in range(n_q):
        q = f"q{i}"
        rel = [f"r{i}_{j}" for j in range(4)]
        labels[q] = dict.fromkeys(rel, 1)
        held = [d for d in rel if rng.random() < 0.6]
        first[q] = [*held, *(f"n{i}_{j}" for j in range(6))]
        # each held document dropped with probability p, each missed one added with probability a
        p = 0.3 + loss
        kept = [d for d in held if rng.random() > p]
        added = [d for d in rel if d not in held and rng.random() < 0.3 * 0.6 / 0.4]
        second[q] = [*kept, *added, "n"]
    return labels, {"first": first, "second": second}


def test_no_loss_rejects_at_alpha_and_covers_zero():
    rng = np.random.default_rng(7)
    n_sim, alpha = 200, 0.05
    stats = Statistics(test="t", ci="t", alpha=alpha, correction=None)
    rejected = covered = 0
    for _ in range(n_sim):
        labels, stages = simulate(rng, 60, 0.0)
        (loss,) = evaluate_stages(labels, stages, ["recall"], stats=stats).losses
        rejected += loss.p_value < alpha
        covered += loss.ci_low <= 0.0 <= loss.ci_high
    # two-sided binomial bounds at 0.001 around the nominal rates
    lo, hi = binom.ppf([0.0005, 0.9995], n_sim, alpha)
    assert lo <= rejected <= hi, rejected
    lo, hi = binom.ppf([0.0005, 0.9995], n_sim, 0.95)
    assert lo <= covered <= hi, covered


def test_a_real_loss_is_found():
    rng = np.random.default_rng(8)
    stats = Statistics(test="randomization", n_resamples=2000, seed=1)
    found = 0
    for _ in range(20):
        labels, stages = simulate(rng, 60, 0.4)  # the share held falls by 0.24
        (loss,) = evaluate_stages(labels, stages, ["recall"], stats=stats).losses
        found += loss.p_value < 0.05 and loss.delta < 0
    assert found >= 18
