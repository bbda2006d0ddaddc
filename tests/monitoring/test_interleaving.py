"""Interleaving: team draft equals a line-by-line transcription of Radlinski et al.'s
algorithm, probabilistic interleaving's lists follow Hofmann et al.'s distribution, both
are fair under clicks that ignore the documents, and on simulated traffic with a cascade
click model the truly better ranker wins, with fewer impressions than an A/B split of
the same traffic needs. Feedback, results from a file and ranklens.run_retriever on an
interleaving."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import ranklens
from ranklens.comparison.stats import randomization
from ranklens.monitoring import NAVIGATIONAL, interleave, interleaving_result
from ranklens.monitoring.interleave import (
    probabilistic,
    probabilistic_outcome,
    team_draft,
    team_draft_outcome,
)


def team_draft_reference(a, b, k, coins):
    """Radlinski, Kurup & Joachims (CIKM 2008), Algorithm 2, transcribed."""
    shown, team_a, team_b, teams = [], set(), set(), []
    flips = iter(coins)
    while len(shown) < k and any(x not in shown for x in a) and any(x not in shown for x in b):
        coin = next(flips)
        if len(team_a) < len(team_b) or (len(team_a) == len(team_b) and coin):
            doc = next(x for x in a if x not in shown)
            team_a.add(doc)
            teams.append(0)
        else:
            doc = next(x for x in b if x not in shown)
            team_b.add(doc)
            teams.append(1)
        shown.append(doc)
    for x in [*a, *b]:  # past the draft: the rest, credited to neither
        if len(shown) < k and x not in shown:
            shown.append(x)
            teams.append(-1)
    return shown, teams


def test_team_draft_equals_the_transcription():
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 12)
        a = rng.sample(range(n), rng.randint(0, n))
        b = rng.sample(range(n), rng.randint(0, n))
        k = rng.randint(1, 10)
        coins = [rng.random() < 0.5 for _ in range(k)]
        pad = max(1, len(a), len(b))
        arr = [np.array([x + [-1] * (pad - len(x))]) for x in (a, b)]
        docs, teams = team_draft(arr[0], arr[1], k, np.array([coins]), n)
        got = [int(d) for d in docs[0] if d >= 0]
        ref_docs, ref_teams = team_draft_reference(a, b, k, coins)
        assert got == ref_docs
        assert [int(t) for t, d in zip(teams[0], docs[0]) if d >= 0] == ref_teams


def test_probabilistic_lists_follow_the_softmax_distribution():
    a, b = [0, 1, 2], [2, 0, 3]  # union of 4 documents; each ranking extended by the other's
    ranks = {"a": [1, 2, 3, 4], "b": [2, 4, 1, 3]}  # rank of documents 0..3 in each

    def exact(order):
        p_list = 1.0
        left = set(range(4))
        for d in order:
            pd = 0.0
            for r in ranks.values():
                w = {x: 1 / r[x] ** 3 for x in left}
                pd += 0.5 * w[d] / sum(w.values())
            p_list *= pd
            left.discard(d)
        return p_list

    rng = np.random.default_rng(0)
    n = 40_000
    docs, share = probabilistic(np.array([a] * n), np.array([b] * n), 2, 4, rng)
    counts = {}
    for row in map(tuple, docs):
        counts[row] = counts.get(row, 0) + 1
    for order in itertools.permutations(range(4), 2):
        expect = sum(exact((*order, x)) for x in range(4) if x not in order)
        assert counts.get(order, 0) / n == pytest.approx(expect, abs=0.01), order
    # the posterior of the first position's ranker: p_A / (p_A + p_B)
    first = docs[:, 0] == 2
    wa, wb = 1 / 3**3 / sum(1 / r**3 for r in (1, 2, 3, 4)), 1 / sum(1 / r**3 for r in (1, 2, 3, 4))
    assert share[first, 0][0] == pytest.approx(wa / (wa + wb))


def test_probabilistic_outcome_marginalises_over_assignments():
    share = np.array([[0.9, 0.2, 0.6]])
    clicks = np.array([[True, True, True]])
    expect = 0.0
    for assign in itertools.product([0, 1], repeat=3):  # brute force over 2^3 assignments
        pa = np.prod([share[0, i] if x == 0 else 1 - share[0, i] for i, x in enumerate(assign)])
        expect += pa * np.sign(assign.count(0) - assign.count(1))
    assert probabilistic_outcome(share, clicks)[0] == pytest.approx(expect)


def simulate(n, rng, method, noise_b, users=NAVIGATIONAL, docs=30, k=10):
    """Impressions of two noisy rankers over graded documents, the outcome of each, and
    an A/B split of the same traffic (reciprocal rank of the first click per impression).
    Queries differ in how many relevant documents they have, users in how readily they
    click: the variance an A/B split carries and interleaving cancels."""
    share = rng.beta(0.6, 3.0, n)[:, None]  # each query's share of relevant documents
    u = rng.random((n, docs))
    grades = (u < share).astype(int) + (u < share / 3)
    propensity = rng.uniform(0.2, 1.0, n)

    def ranker(noise):
        return np.argsort(-(grades + rng.normal(0, noise, (n, docs))), axis=1)[:, :k]

    a, b = ranker(1.0), ranker(noise_b)
    if method == "team-draft":
        shown, teams = team_draft(a, b, k, rng.random((n, k)) < 0.5, docs)
    else:
        shown, share = probabilistic(a, b, k, docs, rng)
    g = np.where(shown >= 0, np.take_along_axis(grades, np.maximum(shown, 0), 1), -1)
    clicks = users.clicks(g, rng, propensity)
    if method == "team-draft":
        outcome = team_draft_outcome(teams, clicks)
    else:
        outcome = probabilistic_outcome(share, clicks)
    arm = rng.random(n) < 0.5
    seen = np.where(arm[:, None], *(np.take_along_axis(grades, r, 1) for r in (a, b)))
    ab = users.clicks(seen, rng, propensity)
    rr = np.where(ab.any(axis=1), 1.0 / (ab.argmax(axis=1) + 1), 0.0)
    return outcome[clicks.any(axis=1)], rr[arm], rr[~arm]


def _detects(values, alpha=0.05):
    return randomization(values, 2000, 0)[0] < alpha


@pytest.mark.parametrize("method", ["team-draft", "probabilistic"])
def test_better_ranker_wins_with_fewer_impressions_than_ab(method):
    from scipy.stats import ttest_ind

    rng = np.random.default_rng(11)
    reps, n = 40, 1000
    inter = ab = agree = 0
    for _ in range(reps):
        o, rr_a, rr_b = simulate(n, rng, method, noise_b=1.5)
        inter += _detects(o) and o.mean() > 0
        agree += o.mean() > 0
        ab += ttest_ind(rr_a, rr_b).pvalue < 0.05 and rr_a.mean() > rr_b.mean()
    assert agree / reps >= 0.95  # the truly better ranker (less noise) is preferred
    assert inter / reps >= 0.85
    assert ab / reps <= inter / reps - 0.15, (inter, ab)  # A/B on the same traffic lags


@pytest.mark.parametrize("method", ["team-draft", "probabilistic"])
def test_no_preference_between_equal_rankers(method):
    rng = np.random.default_rng(12)
    reps, n = 150, 300
    false = sum(_detects(simulate(n, rng, method, noise_b=1.0)[0]) for _ in range(reps))
    assert false / reps <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)


@pytest.mark.slow
def test_sensitivity_ratio_against_ab_large():
    from scipy.stats import ttest_ind

    rng = np.random.default_rng(13)
    for n_inter, n_ab in ((500, 5000),):
        inter = ab = 0
        for _ in range(100):
            inter += _detects(simulate(n_inter, rng, "team-draft", 1.6)[0])
            _, ra, rb = simulate(n_ab, rng, "team-draft", 1.6)
            ab += ttest_ind(ra, rb).pvalue < 0.05
        assert inter >= ab - 10  # interleaving at a tenth of the traffic matches A/B


def test_live_interleaving_feedback_and_results(tmp_path):

    def good(query):
        return [(f"d{i}", 1.0 - i / 100) for i in range(10)]

    def poor(query):
        return [(f"d{i}", 1.0 - i / 100) for i in range(10, 20)]

    inter = interleave(good, poor, names=("good", "poor"), seed=0)
    rng = random.Random(0)
    for i in range(300):
        served = inter(f"question {i}", query_id=f"q{i}")
        assert len(served) == 10 and len({h.id for h in served}) == 10
        # users click the first "good" document they see (d0-d9)
        first = next(h for h in served if int(h.id[1:]) < 10)
        if rng.random() < 0.8:
            assert inter.record_click(first)  # the hit names its impression
    assert not inter.record_click("no-such-impression", "d0")
    assert inter.record_feedback(inter.latest("q299"), lambda doc, position: position == 0) == 1
    assert inter.record_click(inter.latest("q5"), "not-served") is False
    assert inter.counts["unknown_feedback"] == 2
    res = ranklens.interleaving_result(inter)
    assert res.winner == "good" and res.p < 0.001 and res.ci[0] > 0
    assert "good preferred" in str(res)
    path = inter.to_jsonl(tmp_path / "impressions.jsonl")
    assert interleaving_result(path).to_dict() == res.to_dict()
    # ranklens.run_retriever takes an interleaving as a retriever: one impression per query
    out = ranklens.run_retriever(inter, {"x": "a question"}, k=10, progress=False)
    assert out.run.to_lists()["x"][0] in {"d0", "d10"}
    assert inter.counts["impressions"] == 301


def test_probabilistic_interleaving_live_and_a_bad_method():
    inter = interleave(lambda q: ["a", "b", "c"], lambda q: ["c", "a", "d"], "probabilistic", k=3)
    served = inter("q")
    imp = inter.impression(served[0])
    assert imp["method"] == "probabilistic" and len(imp["share_a"]) == 3
    assert all(0 <= s <= 1 for s in imp["share_a"])
    with pytest.raises(ranklens.InputError, match="team-draft"):
        interleave(str, str, "balanced")
