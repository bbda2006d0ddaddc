"""Confident verdicts against targets: the bounds equal scipy's (exact and Wilson) on
generated counts, 29 all-correct queries are what it takes to claim P@1 >= 0.9, the
planner's binomial counts equal a brute-force search, and a simulation with known truth
shows false "met" (and "missed") verdicts at or below the stated level where a plain t
bound and a point-estimate floor exceed it. Then every surface: evaluate, compare and its
renderers and JSON, the gate's --floor-confidence, the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, binomtest

import ranklens
from ranklens.app.cli import main
from ranklens.app.demo import demo_paths
from ranklens.comparison import stats
from ranklens.comparison.bounds import binomial_bounds, binomial_queries, mean_bounds
from ranklens.comparison.simulation import SHAPES, reciprocal_ranks, wrong_verdicts
from ranklens.errors import InputError

ALPHA = 0.05


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))  # fmt: skip
def test_binomial_bounds_equal_scipys_exact_and_wilson_intervals(kn, confidence):
    k, n = kn
    alpha = 1 - confidence
    for method in ("exact", "wilson"):
        lo, hi = binomial_bounds(np.array([k]), n, alpha, method)
        ci = binomtest(k, n).proportion_ci(1 - 2 * alpha, method)
        assert math.isclose(lo[0], ci.low, abs_tol=1e-9) and math.isclose(
            hi[0], ci.high, abs_tol=1e-9
        )


def test_29_all_correct_queries_claim_p_at_1_of_0_9_and_28_do_not():
    lo, _ = binomial_bounds(np.array([28, 29]), np.array([28, 29]), ALPHA)
    assert lo[0] < 0.9 < lo[1] and math.isclose(lo[1], 0.05 ** (1 / 29))
    assert math.ceil(math.log(0.05) / math.log(0.9)) == 29
    assert [p.queries for p in ranklens.plan_queries("P@1 >= 0.9", expected=1.0)] == [29]
    qrels = {f"q{i}": ["a"] for i in range(29)}
    for n, status in ((28, "unknown"), (29, "met")):
        ev = ranklens.evaluate(dict(list(qrels.items())[:n]), {q: ["a"] for q in qrels},
                               targets={"P@1": 0.9})  # fmt: skip
        assert ev.verdicts[0].status == status and ev.verdicts[0].method == "exact"


@pytest.mark.parametrize(("rate", "target", "method", "above"),
                         [(0.95, 0.9, "exact", True), (0.8, 0.7, "wilson", True),
                          (0.6, 0.7, "exact", False), (1.0, 0.8, "exact", True)])  # fmt: skip
def test_the_planners_binomial_count_is_the_least_n_a_brute_force_search_finds(
    rate, target, method, above
):
    found = binomial_queries(rate, target, ALPHA, 0.8, method, above)
    for n in range(1, found + 1):  # brute force: every count of every n
        k = np.arange(n + 1)
        lo, hi = binomial_bounds(k, n, ALPHA, method)
        settles = (lo > target) if above else (hi < target)
        chance = binom.pmf(k, n, rate)[settles].sum()
        assert (chance >= 0.8 - 1e-12) == (n == found), (n, chance)


def test_t_plus_is_the_t_interval_with_one_worst_case_query_and_stays_in_range():
    v = np.random.default_rng(0).random((40, 3)) ** 0.2
    lo, hi, used = mean_bounds(v, ALPHA, "t+")
    assert used == ["t+"] * 3
    ref_lo = stats.t_interval(np.vstack([v, np.zeros((1, 3))]), 0.9)[0]
    ref_hi = np.minimum(stats.t_interval(np.vstack([v, np.ones((1, 3))]), 0.9)[1], 1.0)
    assert np.allclose(lo, ref_lo) and np.allclose(hi, ref_hi) and (hi <= 1).all()
    _, _, auto = mean_bounds(np.array([[1.0, 0.5], [0.0, 1.0]]), ALPHA, "auto", [True, True])
    assert auto == ["exact", "t+"]
    _, _, unbounded = mean_bounds(np.array([[3.0], [5.0]]), ALPHA, "auto", False)
    assert unbounded == ["t"]
    with pytest.raises(InputError, match="needs per-query values of 0 or 1"):
        mean_bounds(np.array([[0.5], [1.0]]), ALPHA, "exact")
    with pytest.raises(InputError, match="unknown bound method"):
        mean_bounds(v, ALPHA, "z")


@pytest.mark.parametrize(
    ("mean", "sd", "target", "above"),
    [(0.9375, 0.072, 0.9, True), (0.75, 0.15, 0.7, True), (0.5, 0.2, 0.55, False)],
)
def test_the_t_plus_plan_gives_its_power_in_a_simulation(mean, sd, target, above):
    """The planned n, drawn from a Beta of that mean and spread, clears the target with
    the t+ bound about 80% of the time. The plain t count plus one query (the plan before)
    gave 26 queries for the first case, where the t+ bound never clears: the worst-case
    query moves the mean by m/(n + 1) as well as the spread."""
    from ranklens.comparison.bounds import graded_queries

    n = graded_queries(sd, abs(mean - target), ALPHA, 0.8, "t+", mean=mean, above=above)
    draws = 2000
    shape = mean * (1 - mean) / sd**2 - 1
    x = np.random.default_rng(3).beta(mean * shape, (1 - mean) * shape, (n, draws))
    lo, hi, _ = mean_bounds(x, ALPHA, "t+")
    power = float(np.mean(lo > target) if above else np.mean(hi < target))
    assert 0.74 <= power <= 0.86, (n, power)
    x = x[: n - 1]  # one query fewer falls short of the planned power less often than not
    tiny = graded_queries(0.5, 3e-5, ALPHA, 0.8, "t+", mean=0.50003, above=True)
    assert tiny is not None and tiny > 10**9  # very many, never "no number of queries"
    lo, hi, _ = mean_bounds(x, ALPHA, "t+")
    assert float(np.mean(lo > target) if above else np.mean(hi < target)) < power + 0.02


SIZES = (20, 50, 100, 200, 500)
DRAWS = 4000
TOLERANCE = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / DRAWS)  # three Monte Carlo errors


def test_simulation_false_verdicts_stay_at_or_below_the_level_where_t_and_floors_do_not():
    worst_t = worst_point = 0.0
    for i, shape in enumerate(SHAPES):
        for n in SIZES:
            r = wrong_verdicts(shape, n, ("auto", "t"), draws=DRAWS, seed=10 * i + n)
            assert r.met["auto"] <= TOLERANCE, (shape.name, n, r.met)
            assert r.missed["auto"] <= TOLERANCE, (shape.name, n, r.missed)
            worst_t, worst_point = max(worst_t, r.met["t"]), max(worst_point, r.point)
    # the check can fail: the plain t bound and the point-estimate floor exceed the level
    assert worst_t > 0.15 and worst_point > 0.5


@pytest.mark.slow
def test_simulation_at_twenty_thousand_draws_and_off_the_target():
    for i, shape in enumerate((*SHAPES, reciprocal_ranks(0.95, "RR@10, 95% first"))):
        for n in (20, 30, 50, 75, 100, 200, 300, 500):
            r = wrong_verdicts(shape, n, ("auto",), draws=20_000, seed=7 * i + n)
            limit = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / 20_000)
            assert r.met["auto"] <= limit and r.missed["auto"] <= limit, (shape.name, n, r)


def test_simulation_on_real_per_query_values(shared):
    """TREC DL 2019's BM25 run: its 43 per-query nDCG@10 values as the population."""
    path = shared("trec_dl19_passage_bm25")
    run = path / "run.msmarco-v1-passage.bm25-default.dl19.txt"
    ev = ranklens.evaluate(path / "qrels.dl19-passage.txt", run, ["ndcg@10"])
    pop = ev.per_query["ndcg@10"]
    rng = np.random.default_rng(3)
    for n in (20, 50, 200):
        x = rng.choice(pop, size=(n, DRAWS))
        lo, hi, _ = mean_bounds(x, ALPHA, "auto")
        assert np.mean(lo > pop.mean()) <= TOLERANCE and np.mean(hi < pop.mean()) <= TOLERANCE


def test_evaluate_with_a_profile_carries_verdicts_in_every_output():
    p = demo_paths()
    ev = ranklens.evaluate(p["qrels"], p["bm25"], ["ndcg@10"], profile="faq")
    assert list(ev.aggregate) == ["ndcg@10", "mrr@10", "P@1", "success@5"]
    statuses = {v.metric: v.status for v in ev.verdicts}
    assert statuses == {"mrr@10": "unknown", "P@1": "unknown", "success@5": "unknown"}
    v = ev.verdicts[0]
    assert v.lower < 0.8 < v.upper and v.method == "t+" and v.needed > v.n == 12
    assert "targets of profile faq (one-sided 95% bounds" in ev.to_table()
    assert "mrr@10 >= 0.8: not yet known" in ev.to_table() and "not yet known" in repr(ev)
    data = json.loads(ev.to_json())
    assert data["profile"]["name"] == "faq" and data["verdicts"][1]["method"] == "exact"
    assert "not yet known" in ev._repr_html_()
    met = ranklens.evaluate(p["qrels"], p["bm25"], targets={"P@1": 0.3, "mrr@10": ("<=", 0.95)})
    assert [v.status for v in met.verdicts] == ["met", "unknown"]
    assert ranklens.evaluate(p["qrels"], p["bm25"], "P@1").verdicts == ()


def test_a_target_above_what_the_labels_allow_says_so():
    qrels = {f"q{i}": ["a"] for i in range(40)}  # one answer per question: P@5 <= 0.2
    ev = ranklens.evaluate(qrels, {q: ["a", "b", "c", "d", "e"] for q in qrels},
                           targets={"P@5": 0.95})  # fmt: skip
    v = ev.verdicts[0]
    assert v.attainable == pytest.approx(0.2) and v.status == "missed"
    assert "cannot be met on these labels: an ideal ranking scores 0.2000" in v.line()


def test_bad_verdict_requests_are_named_errors():
    with pytest.raises(InputError, match=r"confidence must be a finite number in \(0\.5, 1\)"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, targets={"P@1": 0.5}, confidence=1.5)
    with pytest.raises(InputError, match="outside the metric's range"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, targets={"recall@5": 2})
    with pytest.raises(InputError, match="unknown profile 'fqa'"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, profile="fqa")
    with pytest.raises(InputError, match="say what you expect the metric to be"):
        ranklens.plan_queries("ndcg@10 >= 0.7")


def test_a_plain_evaluation_leaves_the_comparison_floor_unloaded_and_verdicts_load_it():
    """``ranklens.evaluate`` is the evaluation floor's: without a profile or targets it never
    imports ``ranklens.comparison`` (a first call's cost); with them it finds the verdicts
    through the ``ranklens.hooks`` entry point, in a fresh process."""
    import subprocess
    import sys

    code = (
        "import sys, ranklens\n"
        "ev = ranklens.evaluate({'q': ['a']}, {'q': ['a', 'b']}, ['P@1'])\n"
        "print(any(m.startswith('ranklens.comparison') for m in sys.modules))\n"
        "ev = ranklens.evaluate({'q': ['a']}, {'q': ['a', 'b']}, ['P@1'], targets={'P@1': 0.5})\n"
        "print(ev.verdicts[0].metric, ev.verdicts[0].value, 'ranklens.comparison' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "P@1", "1.0", "True"]


def test_one_evaluate_with_one_table_whatever_the_path_it_is_reached_by():
    import ranklens.comparison.targets as targets
    import ranklens.evaluation as evaluation
    from ranklens.comparison.bounds import METHODS
    from ranklens.declared import DECLARED

    assert ranklens.evaluate is evaluation.evaluate is targets.evaluate
    table = DECLARED["evaluate"]
    assert table.target is ranklens.evaluate and "ranklens.evaluate" not in DECLARED
    for name in ("profile", "targets", "confidence", "method", "power", "options", "memory",
                 "trec_eval_version", "relevance_level"):  # fmt: skip
        assert name in table.options, name
    assert table["method"].choices == METHODS  # the bounds' methods, declared once below them
    qrels, run = {"q1": ["a"], "q2": ["b"], "q3": ["c"]}, {"q1": ["a"], "q2": ["x"], "q3": ["c"]}
    floor = evaluation.evaluate(qrels, run, ["mrr"], targets={"P@1": 0.5}, method="wilson")
    top = ranklens.evaluate(qrels, run, ["mrr"], targets={"P@1": 0.5}, method="wilson")
    assert floor.to_dict() == top.to_dict() and list(top.aggregate) == ["mrr", "P@1"]
    assert top.verdicts[0].method == "wilson" and top["P@1"] == pytest.approx(2 / 3)


def test_the_evaluation_floor_alone_names_what_verdicts_need(monkeypatch):
    """Where the verdicts cannot be found (no ``ranklens.hooks`` entry point: ranklens run
    from sources that were never installed), a profile is refused with the fix."""
    import ranklens.evaluation as evaluation
    import ranklens.plugins as plugins

    monkeypatch.setattr(evaluation, "HOOKS", {})
    monkeypatch.setattr(plugins, "entry_point_table", lambda group: {})
    assert evaluation.evaluate({"q": ["a"]}, {"q": ["a", "b"]}, ["P@2"])["P@2"] == 0.5
    with pytest.raises(InputError, match=r"ranklens\.comparison, which is not loaded; call"):
        evaluation.evaluate({"q": ["a"]}, {"q": ["a"]}, targets={"P@1": 0.5})


def test_compare_with_a_profile_renders_verdicts_everywhere_and_round_trips(tmp_path):
    p = demo_paths()
    report = ranklens.compare(p["qrels"], {"bm25": p["bm25"], "short": p["bm25-short-chunks"]},
                              ["ndcg@10"], baseline="bm25", profile="faq")  # fmt: skip
    assert report.metrics == ["ndcg@10", "mrr@10", "P@1", "success@5"]
    assert {v.status for v in report.target_verdicts["short"]} == {"missed"}
    head = "Targets of profile faq (one-sided 95% bounds"
    for text in (report.to_text(), report.to_markdown(), report.to_html()):
        assert head in text.replace("\\", "") and "not yet known" in text
    report.save(tmp_path / "r.json")
    again = ranklens.load_report(tmp_path / "r.json")
    assert again == report and again.target_verdicts == report.target_verdicts


def test_gate_floor_confidence_judges_floors_by_their_bounds_and_is_off_by_default(tmp_path):
    p = demo_paths()
    base = tmp_path / "b.json"
    ranklens.gate(p["qrels"], p["bm25"], base, ["mrr@10"], update_baseline=True)
    point = ranklens.gate(p["qrels"], p["bm25"], base, ["mrr@10"], floors={"mrr@10": 0.8})
    assert point.verdicts[0].status == "pass" and point.verdicts[0].floor_check is None
    assert "floor_confidence" not in point.settings
    cases = {("bm25", 0.5): "pass", ("bm25", 0.8): "inconclusive",
             ("bm25-short-chunks", 0.8): "fail"}  # fmt: skip
    for (run, floor), status in cases.items():
        r = ranklens.gate(p["qrels"], p[run], base, ["mrr@10"], floors={"mrr@10": floor},
                          floor_confidence=0.95, margin=None)  # fmt: skip
        v = r.verdicts[0]
        assert v.status == status and v.floor == floor, (floor, v)
        assert v.floor_check["method"] == "t+" and f">= {floor:g} (95% bound)" in r.to_text()
        if status == "inconclusive":
            assert v.needed > v.n and "more queries would settle it" in r.to_markdown()
    faq = tmp_path / "faq.json"  # a profile's target metrics join the gated ones
    ranklens.gate(p["qrels"], p["bm25"], faq, ["mrr@10"], update_baseline=True, profile="faq")
    r = ranklens.gate(p["qrels"], p["bm25"], faq, ["mrr@10"], profile="faq",
                      floor_confidence=0.95, margin=None)  # fmt: skip
    assert [(v.metric, v.floor) for v in r.verdicts] == [
        ("mrr@10", 0.8), ("P@1", 0.7), ("success@5", 0.95)]  # fmt: skip
    assert {v.status for v in r.verdicts} == {"inconclusive"}


def test_the_command_line_checks_plans_and_gates(capsys, tmp_path):
    p = demo_paths()
    assert main(["evaluate", str(p["qrels"]), str(p["bm25"]), "--profile", "faq"]) == 0
    assert "mrr@10 >= 0.8: not yet known" in capsys.readouterr().out
    assert main(["evaluate", str(p["qrels"]), str(p["bm25"]), "-m", "P@1", "--format", "trec",
                 "--target", "P@1>=0.3"]) == 0  # fmt: skip
    out = capsys.readouterr()
    assert out.out.strip().startswith("P@1") and "P@1 >= 0.3: met" in out.err
    assert main(["compare", str(p["qrels"]), f"a={p['bm25']}", f"b={p['bm25-short-chunks']}",
                 "--profile", "rag-context", "--format", "markdown"]) == 0  # fmt: skip
    assert "Targets of profile rag-context" in capsys.readouterr().out
    assert main(["plan", "P@1>=0.9", "--expected", "1"]) == 0
    assert "P@1 >= 0.9: 29 labelled queries" in capsys.readouterr().out
    assert main(["plan", "--profile", "research", "--margin", "0.05"]) == 0
    assert "recall@50 >= 0.9" in capsys.readouterr().out
    base = tmp_path / "b.json"
    args = ["gate", str(p["qrels"]), str(p["bm25"]), "--baseline", str(base), "-m", "mrr@10"]
    assert main([*args, "--update-baseline"]) == 0
    assert main([*args, "--floor", "mrr@10=0.8"]) == 0  # the point estimate 0.87 passes
    assert main([*args, "--floor", "mrr@10=0.8", "--floor-confidence", "0.95"]) == 1
    assert "the floor 0.8 lies within" in capsys.readouterr().out
    capsys.readouterr()
    assert main([*args, "--profile", "faq", "--floor-confidence", "0.95"]) == 2
    assert "P@1" in capsys.readouterr().err  # the baseline holds mrr@10 only: named
    assert main([*args, "--profile", "faq", "--update-baseline"]) == 1  # written; 0.92 < 0.95
    assert "baseline written" in capsys.readouterr().out
    assert main([*args, "--profile", "faq", "--floor-confidence", "0.95"]) == 1
    assert "success@5" in capsys.readouterr().out
    assert main(["plan"]) == 2 and "plan needs targets" in capsys.readouterr().err


def test_ranklens_without_arguments_says_what_to_do_next(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "ranklens demo" in out and "ranklens profiles" in out and "usage:" not in out
