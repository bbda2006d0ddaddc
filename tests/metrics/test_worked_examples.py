"""The worked examples of ../shared/reference/worked-examples.md, with their checked answers
(the published answers marked wrong there are asserted to be wrong here too)."""

from __future__ import annotations

import math

import pytest

import ranklens

approx = pytest.approx


def flags_to_case(flags, n_relevant):
    docs = [f"r{i}" if f else f"n{i}" for i, f in enumerate(flags)]
    rel = [d for d in docs if d.startswith("r")]
    rel += [f"unretrieved{i}" for i in range(n_relevant - len(rel))]
    return {"q": {d: 1 for d in rel}}, {"q": docs}


def test_1_precision_recall_along_one_ranking():
    qrels, run = flags_to_case([1, 0, 0, 1, 0, 1, 0, 0, 0, 0], 5)
    ev = ranklens.evaluate(qrels, run, ["P@5", "recall@5", "P@10", "recall@10"])
    assert ev.aggregate == approx({"P@5": 0.4, "recall@5": 0.4, "P@10": 0.3, "recall@10": 0.6})


@pytest.mark.parametrize(("ranks", "mrr"), [((3, 1, 2), 0.6111), ((2, 1, 4), 0.5833)])
def test_2_mrr_over_three_queries(ranks, mrr):
    qrels = {f"q{i}": {"hit": 1} for i in range(3)}
    run = {f"q{i}": [f"miss{j}" for j in range(r - 1)] + ["hit"] for i, r in enumerate(ranks)}
    assert ranklens.evaluate(qrels, run, ["mrr"])["mrr"] == approx(mrr, abs=5e-5)


def test_3_ndcg_graded():
    qrels = {"q": {"A": 3, "B": 2, "C": 2, "D": 1}}
    run = {"q": ["B", "X", "A", "C", "D"]}
    ev = ranklens.evaluate(qrels, run, ["dcg@5", "idcg@5", "ndcg@5"])
    # 2 + 3/2 + 2/log2(5) + 1/log2(6) = 4.74821 exactly; the text's 4.7483 rounds its steps
    assert ev["dcg@5"] == approx(2 + 1.5 + 2 / math.log2(5) + 1 / math.log2(6), abs=1e-12)
    assert ev["dcg@5"] == approx(4.7483, abs=1e-4)
    assert ev["idcg@5"] == approx(3 + 2 / math.log2(3) + 1 + 1 / math.log2(5), abs=1e-12)
    assert ev["ndcg@5"] == approx(0.8341, abs=5e-5)
    assert round(ev["ndcg@5"], 3) != 0.833  # the published figure came from rounded steps


def test_4_three_queries_integer_ids():
    qrels = {
        "python async": [1, 4, 6, 12, 15],
        "docker networking": [2, 7, 8],
        "redis caching": [3, 9, 11, 14],
    }
    run = {
        "python async": [1, 23, 45, 4, 67, 6, 89, 12],
        "docker networking": [2, 7, 34, 56, 8],
        "redis caching": [78, 3, 9, 45, 11],
    }
    ev = ranklens.evaluate(qrels, run, ["P@5", "P@10", "recall@5", "recall@10", "mrr"])
    pa = ev.query("python async")
    assert pa["P@5"] == approx(0.4) and pa["P@5"] != approx(0.6)  # published 0.6 is wrong
    assert pa["recall@5"] == approx(0.4) and pa["recall@5"] != approx(0.6)
    assert pa["P@10"] == approx(0.4)
    assert pa["recall@10"] == approx(0.8)
    assert ev["mrr"] == approx(0.8333, abs=5e-5)
    graded = {"python async": {1: 3, 4: 2, 6: 2, 12: 1, 15: 1}}
    ev = ranklens.evaluate(graded, {"python async": run["python async"]}, ["ndcg@5", "ndcg@10"])
    assert ev["ndcg@5"] == approx(0.6352, abs=5e-5)  # not the published 0.874
    assert ev["ndcg@10"] == approx(0.8042, abs=5e-5)  # not the published 0.812
    labels = {"q": [1, 3, 8, 15, 20]}
    assert ranklens.evaluate(labels, {"q": [1, 5, 8, 12, 3]}, ["P@5"])["P@5"] == approx(0.6)
    assert ranklens.evaluate(labels, {"q": [1, 3, 8, 15, 20]}, ["P@5"])["P@5"] == approx(1.0)


def test_5_precision_denominator():
    ev = ranklens.evaluate({"q": [1, 3, 6, 7]}, {"q": [1, 2, 3, 4, 5]}, ["recall@5", "P@5"])
    assert ev.aggregate == approx({"recall@5": 0.5, "P@5": 0.4})
    qrels = {"a": [1, 4], "b": [5], "c": [7, 10]}
    run = {"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]}
    ev = ranklens.evaluate(qrels, run, ["recall@5", "P@5", "set_P"])
    assert [ev.query(q)["recall@5"] for q in "abc"] == approx([0.5, 1.0, 0.5])
    assert ev["recall@5"] == approx(0.6667, abs=5e-5)
    assert [ev.query(q)["P@5"] for q in "abc"] == approx([0.2] * 3)  # trec: ÷k
    assert [ev.query(q)["set_P"] for q in "abc"] == approx([1 / 3] * 3)  # ÷ retrieved


def test_6_grouped_ground_truth_as_units():
    qrels = ranklens.Qrels.from_groups({"q": [["test-1", "test-2"], ["test-3"]]})
    run = {"q": ["test-1", "pred-1", "test-2", "pred-3"]}
    ev = ranklens.evaluate(qrels, run, ["P@4", "recall", "rr", "ap", "ndcg@4"])
    assert ev.aggregate == approx(
        {"P@4": 0.25, "recall": 0.5, "rr": 1.0, "ap": 0.5, "ndcg@4": 0.6131}, abs=5e-5
    )


def test_6_grouped_truth_from_plain_dict_is_detected():
    ev = ranklens.evaluate(
        {"q": [["test-1", "test-2"], ["test-3"]]},
        {"q": ["test-1", "pred-1", "test-2", "pred-3"]},
        ["recall@4"],
    )
    assert ev["recall@4"] == 0.5
