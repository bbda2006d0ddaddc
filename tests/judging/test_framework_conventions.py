"""The llamaindex and haystack conventions against the frameworks' own metric classes
(llama-index-core, haystack-ai) on hypothesis-generated cases: duplicates, graded truth,
more relevant ids than retrieved, lists of any length. Where a framework raises, the test
pins what ranklens does instead."""

from __future__ import annotations

import logging
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
li = pytest.importorskip("llama_index.core.evaluation.retrieval.metrics")
hs = pytest.importorskip("haystack.components.evaluators")
from haystack import Document  # noqa: E402

logging.getLogger("haystack").setLevel(logging.ERROR)

IDS = [f"n{i}" for i in range(9)]
expected_st = st.lists(st.sampled_from(IDS), min_size=1, max_size=6, unique=True)
retrieved_st = st.lists(st.sampled_from(IDS), min_size=1, max_size=10)  # duplicates allowed
SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LLAMA = {
    "hit_rate": lambda: li.HitRate(),
    "hit_rate(granular=1)": lambda: li.HitRate(use_granular_hit_rate=True),
    "mrr": lambda: li.MRR(),
    "mrr(granular=1)": lambda: li.MRR(use_granular_mrr=True),
    "P": lambda: li.Precision(),
    "recall": lambda: li.Recall(),
    "ap": lambda: li.AveragePrecision(),
    "ndcg": lambda: li.NDCG(),
    "ndcg_exp": lambda: li.NDCG(mode="exponential"),
}


@SETTINGS
@given(
    st.one_of(st.just([]), expected_st),
    st.one_of(st.just([]), retrieved_st),
)
def test_llamaindex_metric_classes(expected, retrieved):
    ev = ranklens.evaluate(
        {"q": expected, "other": ["n0"]},
        {"q": retrieved, "other": ["n0"]},
        list(LLAMA),
        convention="llamaindex",
    )
    if not expected or not retrieved:
        # LlamaIndex raises; ranklens scores an empty list 0 and leaves out (and counts) a
        # query without relevant ids
        with pytest.raises(ValueError, match="must be provided"):
            li.MRR().compute(expected_ids=expected, retrieved_ids=retrieved)
        if not expected:
            assert ev.query_ids == ["other"] and ev.counts["queries_no_relevant_skipped"] == 1
        else:
            assert all(v == 0 for v in ev.query("q").values())
        return
    for name, make in LLAMA.items():
        want = make().compute(expected_ids=expected, retrieved_ids=retrieved).score
        assert ev.query("q")[name] == pytest.approx(want, abs=1e-12), (name, expected, retrieved)


@SETTINGS
@given(expected_st, st.integers(1, 10))
def test_llamaindex_at_k_is_the_list_cut_at_k(expected, k):
    retrieved = [i for i in IDS if i not in expected][:3] + expected + ["n0"]
    ev = ranklens.evaluate(
        {"q": expected}, {"q": retrieved}, [f"ndcg@{k}", f"P@{k}"], convention="llamaindex"
    )
    cut = retrieved[:k]
    assert ev[f"ndcg@{k}"] == pytest.approx(
        li.NDCG().compute(expected_ids=expected, retrieved_ids=cut).score, abs=1e-12
    )
    assert ev[f"P@{k}"] == pytest.approx(
        li.Precision().compute(expected_ids=expected, retrieved_ids=cut).score, abs=1e-12
    )


def test_where_llamaindex_raises_ranklens_scores_and_counts():
    with pytest.raises(ValueError, match="must be provided"):
        li.MRR().compute(expected_ids=["a"], retrieved_ids=[])
    ev = ranklens.evaluate(
        {"q": ["a"], "r": ["b"]}, {"q": [], "r": ["b"]}, ["mrr"], convention="llamaindex"
    )
    assert ev.query("q")["mrr"] == 0.0  # an empty retrieval scores 0
    with pytest.raises(ValueError, match="must be provided"):
        li.MRR().compute(expected_ids=[], retrieved_ids=["a"])
    ev = ranklens.evaluate(
        {"q": {"a": 0}, "r": ["b"]}, {"q": ["a"], "r": ["b"]}, ["mrr"], convention="llamaindex"
    )
    assert ev.query_ids == ["r"]  # a query without relevant ids is left out...
    assert ev.counts["queries_no_relevant_skipped"] == 1  # ...and counted


def _docs(ids, grades=None):
    return [Document(content=i, score=None if grades is None else float(grades[i])) for i in ids]


HAYSTACK = {
    "mrr": lambda: hs.DocumentMRREvaluator(),
    "map": lambda: hs.DocumentMAPEvaluator(),
    "hit_rate": lambda: hs.DocumentRecallEvaluator(mode="single_hit"),
    "recall": lambda: hs.DocumentRecallEvaluator(mode="multi_hit"),
    "ndcg": lambda: hs.DocumentNDCGEvaluator(),
}


@SETTINGS
@given(
    st.one_of(st.just([]), expected_st),
    st.one_of(st.just([]), retrieved_st),
    st.booleans(),
    st.data(),
)
def test_haystack_evaluators(expected, retrieved, graded, data):
    grades = {i: data.draw(st.integers(1, 3)) for i in expected} if graded else None
    qrels = {"q": grades if graded else expected}
    ev = ranklens.evaluate(qrels, {"q": retrieved}, list(HAYSTACK), convention="haystack")
    gt, ret = [_docs(expected, grades)], [_docs(retrieved)]
    for name, make in HAYSTACK.items():
        out = make().run(ground_truth_documents=gt, retrieved_documents=ret)
        want = out["individual_scores"][0]
        assert ev[name] == pytest.approx(want, abs=1e-12), (name, expected, retrieved, grades)


def test_haystack_empty_lists_score_zero_as_ranklens_does():
    out = hs.DocumentMRREvaluator().run(
        ground_truth_documents=[_docs(["a"])], retrieved_documents=[[]]
    )
    ev = ranklens.evaluate({"q": ["a"]}, {"q": []}, ["mrr"], convention="haystack")
    assert out["individual_scores"] == [0.0] and ev["mrr"] == 0.0


@SETTINGS
@given(expected_st, retrieved_st, st.integers(2, 3), st.data())
def test_presets_at_a_relevance_level_are_the_frameworks_on_the_relevant_documents(
    expected, retrieved, level, data
):
    """At relevance level l, graded labels are what a framework user would give it: the
    documents graded >= l as ground truth (with their grades as Haystack's scores). Every
    metric, nDCG included, then equals the framework's (gain_level: the presets' nDCG gives no
    gain to grades below l)."""
    grades = {i: data.draw(st.integers(0, 3)) for i in expected}
    truth = [i for i in expected if grades[i] >= level]
    if not truth:
        return
    # (ndcg_exp asks for exponential gain of the grades, which LlamaIndex never sees)
    llama = {name: make for name, make in LLAMA.items() if name != "ndcg_exp"}
    ev = ranklens.evaluate(
        {"q": grades}, {"q": retrieved}, list(llama), convention="llamaindex",
        relevance_level=level,
    )  # fmt: skip
    for name, make in llama.items():
        want = make().compute(expected_ids=truth, retrieved_ids=retrieved).score
        assert ev.query("q")[name] == pytest.approx(want, abs=1e-12), (name, grades, level)
    ev = ranklens.evaluate(
        {"q": grades}, {"q": retrieved}, list(HAYSTACK), convention="haystack",
        relevance_level=level,
    )  # fmt: skip
    gt, ret = [_docs(truth, grades)], [_docs(retrieved)]
    for name, make in HAYSTACK.items():
        want = make().run(ground_truth_documents=gt, retrieved_documents=ret)
        assert ev[name] == pytest.approx(want["individual_scores"][0], abs=1e-12), (name, level)
