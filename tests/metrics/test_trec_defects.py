"""trec_eval 10's own defects (docs/metrics.md, "trec_eval 10's own defects"): hand-checked
cases where ranklens gives the sensible value, one test per row of that table."""

from __future__ import annotations

import math

import pytest

import ranklens


def _q(ev, qid):
    return ev.query(qid)


def test_a_query_with_only_negative_labels_has_its_own_ideal_ranking():
    qrels = {"q1": {"a": 3, "b": 1}, "q2": {"c": -1}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "d": 1.0}}
    ev = ranklens.evaluate(qrels, run, ["ndcg", "ideal_dcg", "G", "ndcg_rel", "Rndcg"])
    assert _q(ev, "q1")["ndcg"] == 1.0
    assert all(v == 0.0 for v in _q(ev, "q2").values())


def test_num_rel_of_missing_queries_follows_the_relevance_level():
    qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}}
    ev = ranklens.evaluate(qrels, {"q1": {"a": 1.0}}, ["num_rel"], relevance_level=2)
    assert ev["num_rel"] == 2  # one grade-2 document in each query; trec_eval -c says 3


def test_interpolated_precision_with_nothing_judged_left_is_zero_not_nan():
    ev = ranklens.evaluate(
        {"q": {"a": 1}}, {"q": {"x": 1.0, "y": 0.5}}, ["iprec_at_recall_0.00", "11pt_avg"],
        judged_only=True,
    )  # fmt: skip
    assert ev["iprec_at_recall_0.00"] == 0.0 and ev["11pt_avg"] == 0.0
    assert not any(math.isnan(v) for v in ev.aggregate.values())


def test_a_first_query_with_only_negative_labels_is_evaluated():
    qrels = {"q1": {"a": -1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    ev = ranklens.evaluate(qrels, run, ["map", "P_5"])
    assert _q(ev, "q1") == {"map": 0.0, "P_5": 0.0}
    assert ev["map"] == 0.5


def test_rbp_rescales_gains_by_their_own_minimum_and_maximum():
    # grades 0..1 with gain 2 for grade 1: min 0, max 2 -> grade 1 weighs 2/2 = 1
    ev = ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0}}, ["rbp(gains={1:2})"])
    assert ev["rbp(gains={1:2})"] == pytest.approx(0.1, abs=1e-15)


def test_custom_gains_less_than_one_apart_are_sorted_exactly():
    # the ideal ranking puts grade 2 (gain 3) before grade 1 (gain 2.5): this run is ideal
    qrels = {"q": {"a": 1, "b": 2}}
    ev = ranklens.evaluate(qrels, {"q": {"b": 2.0, "a": 1.0}}, ["ndcg.1=2.5,2=3"])
    assert ev["ndcg_1=2.5,2=3"] == pytest.approx(1.0, abs=1e-15)


def test_zero_over_zero_cases_are_zero():
    ev = ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["Rndcg(gains={1:0})"])
    assert ev["Rndcg(gains={1:0})"] == 0.0
    ev = ranklens.evaluate({"q": {"a": 0}}, {"q": {"a": 1.0}}, ["rbp(gains={0:-1})"])
    assert ev["rbp(gains={0:-1})"] == 0.0
