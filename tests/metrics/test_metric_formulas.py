"""Metrics that trec_eval 9 lacks, checked against their published definitions computed by
hand on small cases: ERR (Chapelle et al. 2009), exponential-gain nDCG (Burges et al. 2005),
RBP with p != 0.9 (Moffat & Zobel 2008), judged@k (ir_measures), F1."""

from __future__ import annotations

import math

import pytest

import ranklens

approx = pytest.approx
QRELS = {"q": {"a": 3, "b": 0, "c": 1, "d": 2, "e": 2}}
RUN = {"q": ["a", "x", "c", "b", "d", "y"]}


def test_err_against_its_definition():
    ev = ranklens.evaluate(QRELS, RUN, ["err@5", "err", "err(max=4)@5"])
    grades = [3, 0, 1, 0, 2]  # a, x, c, b, d

    def err(gmax, depth):
        total, stop = 0.0, 1.0
        for i, g in enumerate(grades[:depth], 1):
            p = (2**g - 1) / 2**gmax
            total += stop * p / i
            stop *= 1 - p
        return total

    assert ev["err@5"] == approx(err(3, 5), abs=1e-12)
    assert ev["err"] == approx(err(3, 5), abs=1e-12)  # nothing relevant after rank 5
    assert ev["err(max=4)@5"] == approx(err(4, 5), abs=1e-12)


def test_ndcg_exponential_gain():
    ev = ranklens.evaluate(QRELS, RUN, ["ndcg_exp@5", "dcg_exp@5"])
    dcg = 7 / 1 + 1 / math.log2(4) + 3 / math.log2(6)
    ideal = 7 + 3 / math.log2(3) + 3 / 2 + 1 / math.log2(5)
    assert ev["dcg_exp@5"] == approx(dcg, abs=1e-12)
    assert ev["ndcg_exp@5"] == approx(dcg / ideal, abs=1e-12)


def test_rbp_persistence_and_cutoff():
    ev = ranklens.evaluate(QRELS, RUN, ["rbp(p=0.5)", "rbp(p=0.5)@3"])
    w = [1.0, 0, 1 / 3, 0, 2 / 3, 0]  # grade / highest grade (3)
    assert ev["rbp(p=0.5)"] == approx(0.5 * sum(x * 0.5**i for i, x in enumerate(w)))
    assert ev["rbp(p=0.5)@3"] == approx(0.5 * sum(x * 0.5**i for i, x in enumerate(w[:3])))


def test_judged_f1_and_hit_rate():
    ev = ranklens.evaluate(QRELS, RUN, ["judged@4", "judged@10", "f1@5", "hit_rate@1"])
    assert ev["judged@4"] == approx(3 / 4)
    assert ev["judged@10"] == approx(4 / 6)  # ÷ min(k, retrieved)
    p, r = 3 / 5, 3 / 4
    assert ev["f1@5"] == approx(2 * p * r / (p + r))
    assert ev["hit_rate@1"] == 1.0
