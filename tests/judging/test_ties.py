"""Ties as a parameter: ``ties="trec"`` (by id descending), ``"input"`` (as given) and
``"expected"`` (the mean over every order of the tied documents, McSherry & Najork 2008),
checked against brute-force enumeration of those orders on generated cases."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError, MetricNameError
from ranklens.model import Run

METRICS = [
    "P@1", "P@3", "P(rel=2)@2", "recall@2", "recall", "success@1", "success@3", "rr",
    "rr@2", "ap", "ap@3", "ndcg", "ndcg@3", "ndcg(gain=exp)@3", "dcg@2", "dcg",
    "num_ret", "num_rel_ret", "set_F",
]  # fmt: skip


@st.composite
def tied_case(draw):
    docs = [f"d{i}" for i in range(draw(st.integers(1, 6)))]
    scores = {d: float(draw(st.integers(1, 3))) for d in docs}
    labelled = draw(st.lists(st.sampled_from([*docs, "m1", "m2"]), min_size=1, unique=True))
    qrels = {d: draw(st.integers(0, 2)) for d in labelled}
    return qrels, scores


def orders(scores):
    """Every ranking the ties allow: each score's documents in every order."""
    groups = [
        [d for d in scores if scores[d] == s] for s in sorted(set(scores.values()), reverse=True)
    ]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [d for group in combo for d in group]


def every_order(qrels, scores, metrics, level):
    """Each metric's values over every order of the tied documents, each order one query of
    a run without ties."""
    ranked = list(orders(scores))
    every = {f"o{i}": {d: float(len(o) - j) for j, d in enumerate(o)} for i, o in enumerate(ranked)}
    ev = ranklens.evaluate({q: qrels for q in every}, every, metrics, relevance_level=level)
    return {name: ev.per_query[name].tolist() for name in ev.names}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_case(), st.sampled_from([1, 2]))
def test_expected_equals_the_mean_over_every_tie_order(case, level):
    qrels, scores = case
    brute = every_order(qrels, scores, METRICS, level)
    ev = ranklens.evaluate(
        {"q": qrels}, {"q": scores}, METRICS, relevance_level=level, ties="expected"
    )
    for m in METRICS:  # the mean over every order (sums too: one query here)
        want = sum(brute[m]) / len(brute[m])
        assert math.isclose(ev[m], want, rel_tol=1e-12, abs_tol=1e-12), (m, ev[m], want)


BOUNDED = [*METRICS, "bpref", "err@3", "rbp", "map_cut_2", "Rprec", "infAP", "11pt_avg"]
"""Measures that reward higher grades earlier: best and worst are their max and min."""


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_case(), st.sampled_from([1, 2]))
def test_best_and_worst_are_the_max_and_min_over_every_tie_order(case, level):
    qrels, scores = case
    brute = every_order(qrels, scores, BOUNDED, level)
    for ties, pick in (("best", max), ("worst", min)):
        ev = ranklens.evaluate(
            {"q": qrels}, {"q": scores}, BOUNDED, relevance_level=level, ties=ties
        )
        for m in BOUNDED:
            want = pick(brute[m])
            assert math.isclose(ev[m], want, rel_tol=1e-12, abs_tol=1e-12), (ties, m, ev[m], want)


def test_best_and_worst_move_only_tied_rows_and_keep_grouped_truth():
    run = {"q": {"a": 0.9, "x": 0.5, "b": 0.5, "c": 0.5, "y": 0.1}}
    qrels = {"q": {"a": 0, "b": 1, "c": 2, "y": 1}}
    best = ranklens.evaluate(qrels, run, ["rr", "P@2", "P@4"], ties="best")
    worst = ranklens.evaluate(qrels, run, ["rr", "P@2", "P@4"], ties="worst")
    assert (best["rr"], best["P@2"], best["P@4"]) == (0.5, 0.5, 0.5)  # a, c, b, x, y
    assert (worst["rr"], worst["P@2"], worst["P@4"]) == (1 / 3, 0.0, 0.5)  # a, x, b, c, y
    grouped = {"q": [["b", "c"], ["y"]]}
    assert ranklens.evaluate(grouped, run, ["rr"], ties="best")["rr"] == 0.5
    assert ranklens.evaluate(grouped, run, ["rr"], ties="worst")["rr"] == 1 / 3
    # a repeated document dropped first (trec order: b, a, a): the rest is reordered
    dup = Run.from_arrays(["q"] * 4, ["a", "a", "b", "c"], [1.0, 1.0, 1.0, 0.5])
    for ties, want in (("best", (1 + 2 / 3) / 2), ("worst", (1 / 2 + 2 / 3) / 2)):
        ev = ranklens.evaluate({"q": {"a": 1, "c": 1}}, dup, ["ap"], ties=ties, duplicates="first")
        assert ev["ap"] == pytest.approx(want)  # a, b, c and b, a, c


def test_without_ties_expected_is_trec():
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = {"q": {"a": 0.3, "b": 0.9, "c": 0.5, "x": 0.1}}
    want = ranklens.evaluate(qrels, run, METRICS).aggregate
    assert ranklens.evaluate(qrels, run, METRICS, ties="expected").aggregate == pytest.approx(
        want, abs=1e-15
    )


def test_input_keeps_the_given_order_of_ties():
    qrels = {"q": {"a": 1}}
    run = Run.from_arrays(["q", "q", "q"], ["a", "b", "c"], [1.0, 1.0, 1.0])
    assert ranklens.evaluate(qrels, run, ["rr"], ties="input")["rr"] == 1.0
    assert ranklens.evaluate(qrels, run, ["rr"], ties="trec")["rr"] == pytest.approx(
        1 / 3
    )  # c, b, a
    assert ranklens.evaluate(qrels, run, ["rr"], ties="expected")["rr"] == pytest.approx(
        (1 + 1 / 2 + 1 / 3) / 3
    )
    # the order of tied rows in a dict is the input order too
    assert ranklens.evaluate(qrels, {"q": {"b": 1.0, "a": 1.0}}, ["rr"], ties="input")["rr"] == 0.5


def test_order_dependent_measures_without_an_expected_form_are_refused():
    with pytest.raises(MetricNameError, match="bpref has no tie-aware expected value"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["bpref"], ties="expected")
    with pytest.raises(InputError, match="grouped ground truth"):
        ranklens.evaluate({"q": [["a", "b"]]}, {"q": {"a": 1.0}}, ["P@1"], ties="expected")
    with pytest.raises(InputError, match="ties must be one of"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1"], ties="random")


def test_cli_ties(tmp_path, capsys):
    from ranklens.app.cli import main

    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 a 1\n")
    run.write_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 1.0 r\n")
    for ties, want in (("trec", "0.5000"), ("input", "1.0000"), ("expected", "0.7500")):
        assert main(["evaluate", str(qrels), str(run), "-m", "rr", "--ties", ties]) == 0
        assert want in capsys.readouterr().out, ties


def test_explain_shows_how_far_ties_move_the_metric():
    from ranklens.app.explain import explain, format_explanation

    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.9}}
    ex = explain("rr", qrels, run, conventions=("trec",))
    assert ex.rows[0].value == pytest.approx(1 / 4)  # d, c, b, a
    assert ex.rows[0].tie_range == pytest.approx((1 / 4, 1 / 2))
    text = format_explanation(ex, example=False)
    assert (
        "ties: 0.2500 to 0.5000 over every order of the 3 documents with tied scores (1 query)"
        in text
    )
    untied = explain("rr", qrels, {"q": {"a": 0.5, "b": 0.4}}, conventions=("trec",))
    assert untied.rows[0].tie_range is None
    assert "ties:" not in format_explanation(untied, example=False)


def test_the_report_shows_each_tied_runs_range_in_every_medium():
    qrels = {"q1": {"a": 1}, "q2": {"x": 1}}
    runs = {
        "tied<b>": {"q1": {"a": 1.0, "b": 1.0}, "q2": {"x": 2.0, "y": 1.0}},
        "untied": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"x": 2.0}},
    }
    rep = ranklens.compare(qrels, runs, ["P@1", "num_ret"], ci=None, n_resamples=100)
    s = rep.summary["tied<b>"]["P@1"]
    assert (s["value"], s["tie_low"], s["tie_high"]) == (0.5, 0.5, 1.0)  # q1: b, a
    assert "tie_low" not in rep.summary["untied"]["P@1"]
    assert rep.counts["tied<b>"]["tied_documents"] == 2
    want = "Over every order of each run's tied documents: tied<b>: P@1 0.5000 to 1.0000"
    assert want in " ".join(rep.to_text().split())
    assert "tied\\<b\\>: P@1 0.5000 to 1.0000" in rep.to_markdown()
    assert "tied&lt;b&gt;: P@1 0.5000 to 1.0000" in rep.to_html()
    again = ranklens.Report.from_dict(rep.to_dict())
    assert again.summary["tied<b>"]["P@1"]["tie_high"] == 1.0
    off = ranklens.compare(qrels, runs, ["P@1"], ci=None, n_resamples=100, tie_range=False)
    assert "tie_low" not in off.summary["tied<b>"]["P@1"]
