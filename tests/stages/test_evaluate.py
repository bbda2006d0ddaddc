"""evaluate_stages: every stage's metrics equal evaluating its run alone, the losses equal
the per-query differences of the shares held, and bad input is named."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import StagedRun, Statistics, evaluate, evaluate_stages
from ranklens.comparison import stats as cstats
from ranklens.errors import InputError

DOCS = [f"d{i}" for i in range(15)]


@st.composite
def cases(draw):
    queries = [f"q{i}" for i in range(draw(st.integers(2, 6)))]
    labels = {
        q: {
            d: draw(st.integers(0, 2))
            for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
        }
        for q in queries
    }
    stages = {}
    for s in range(draw(st.integers(1, 4))):
        stages[f"s{s}"] = {
            q: draw(st.lists(st.sampled_from(DOCS), max_size=8, unique=True)) for q in queries
        }
    return labels, stages


@settings(max_examples=60, deadline=None)
@given(cases())
def test_each_stage_equals_its_run_alone_and_losses_equal_the_differences(case):
    labels, stages = case
    metrics = ["recall", "P@5", "ndcg@10", "recip_rank"]
    ev = evaluate_stages(labels, stages, metrics, stats=Statistics(n_resamples=200, test="t"))
    assert ev.stages == tuple(stages)
    held = []
    for name, run in stages.items():
        mine = ev.evaluations[name]
        for q in labels:  # each query evaluated alone; an empty list scores 0
            alone = evaluate({q: labels[q]}, {q: run[q]}, metrics) if run[q] else None
            at = mine.query_ids.index(q)
            for m in metrics:
                want = alone[m] if alone is not None else 0.0
                assert mine.per_query[m][at] == pytest.approx(want), (name, m, q)
        # the share of relevant units held, per query with a relevant unit
        row = []
        for q in sorted(labels):
            rel = [d for d, g in labels[q].items() if g >= 1]
            if rel:
                row.append(sum(d in run[q] for d in rel) / len(rel))
        held.append(row)
    held = np.array(held).T.reshape(-1, len(stages))
    diffs = held[:, 1:] - held[:, :-1]

    def mean(x):  # no query with a relevant unit: nothing lost, 0
        return x.mean() if len(x) else 0.0

    assert len(ev.losses) == len(stages) - 1
    for t, loss in enumerate(ev.losses):
        assert loss.delta == pytest.approx(mean(diffs[:, t]))
        assert loss.held_before == pytest.approx(mean(held[:, t]))
        assert loss.held_after == pytest.approx(mean(held[:, t + 1]))
        assert loss.queries == len(held)
        assert 0.0 <= loss.p_value <= 1.0
        assert loss.ci_low <= loss.delta + 1e-12 <= loss.ci_high + 2e-12
    if len(diffs) >= 2 and len(stages) > 1:  # the test and correction are comparison's own
        p = cstats.correct(cstats.paired_test(np.ascontiguousarray(diffs), "t"), "holm")
        assert [x.p_value for x in ev.losses] == pytest.approx(list(p))
    # fates partition the relevant units
    fates = ev.attribution.fate_counts()
    assert sum(fates.values()) == sum(1 for q in labels for g in labels[q].values() if g >= 1)


def test_labels_name_documents_groups_and_spans():
    ev = evaluate_stages({"q": [["a", "b"], ["c"]]}, {"s1": {"q": ["b", "x"]}, "s2": {"q": ["x"]}})
    rows = {r["unit"]: r for r in ev.query("q")}
    assert set(rows) == {"a|b", "c"}
    assert rows["a|b"]["fate"] == "filtered" and rows["c"]["fate"] == "never retrieved"
    spans = ranklens.SpanLabels.from_records(
        [{"query_id": "q", "doc_id": "D", "start": 3, "end": 9}], texts={"D": "x" * 40}
    )
    chunks = {"q": [{"doc_id": "D", "start": 0, "end": 5}, {"doc_id": "D", "start": 20, "end": 30}]}
    later = {"q": [{"doc_id": "D", "start": 20, "end": 30}]}
    ev = evaluate_stages(
        spans,
        {"first": ranklens.Run.from_chunks(chunks), "second": ranklens.Run.from_chunks(later)},
        ["recall"],
    )
    (row,) = ev.query("q")
    assert row["unit"] == "D[3:9]" and row["fate"] == "filtered"


def test_a_reranker_that_adds_documents_is_counted_and_shown():
    ev = evaluate_stages({"q": {"a": 1, "b": 1}}, {"bm25": {"q": ["a"]}, "fuse": {"q": ["b", "a"]}})
    assert ev.counts["fuse"]["added"] == 1
    assert ev.losses[0].units_added == 1 and ev.losses[0].delta == pytest.approx(0.5)
    assert ev.table_rows()[1]["added"] == 1


def test_stages_with_no_hits_and_absent_queries_are_counted():
    ev = evaluate_stages(
        {"q1": {"a": 1}, "q2": {"b": 1}}, {"s1": {"q1": ["a"], "q2": ["b"]}, "s2": {"q1": ["a"]}}
    )
    assert ev.counts["s2"]["empty"] == 1
    assert {r["fate"] for r in ev.query("q2")} == {"cut by rank"}


def test_as_evaluation_names_stage_and_metric():
    ev = evaluate_stages(
        {"q": {"a": 1}}, {"bm25": {"q": ["a"]}, "rerank": {"q": ["x"]}}, ["recall@10"]
    )
    flat = ev.as_evaluation()
    assert flat["bm25/recall@10"] == 1.0 and flat["rerank/recall@10"] == 0.0
    assert ev.to_dict()["fates"]["filtered"] == 1


def test_latency_from_the_staged_run():
    staged = StagedRun(
        {"bm25": {"q": ["a"]}, "rerank": {"q": ["a"]}},
        latency_ms={"bm25": {"q": 2.0}, "rerank": {"q": 30.0}},
        kinds={"rerank": "reranker"},
    )
    ev = evaluate_stages({"q": {"a": 1}}, staged)
    assert ev.latency["rerank"]["p50"] == 30.0 and ev.table_rows()[1]["kind"] == "reranker"


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: StagedRun({}), "at least one stage"),
        (lambda: StagedRun([("a", {}), ("a", {})]), "given twice"),
        (lambda: StagedRun([("", {"q": ["a"]})]), "non-empty"),
        (lambda: StagedRun({"a": {"q": ["d"]}}, kinds={"b": "filter"}), "does not have"),
        (lambda: evaluate_stages({"q": {"a": 1}}, 42), "StagedRun"),
        (lambda: evaluate_stages({"q": {"a": 1}}, {"s": {"q": ["a"]}}, stats="t"), "Statistics"),
        (
            lambda: evaluate_stages({"q": {"a": 1}}, {"s": {"q": ["a"]}}, relevance_levle=2),
            "relevance_level",
        ),
        (
            lambda: evaluate_stages({"q": {"a": 1}}, {"s": {"q": ["a"]}}, straddle="half"),
            "straddle",
        ),
        (
            lambda: evaluate_stages(
                {"q": {"a": 1}}, {"s": {"q": ["a"]}}, budget="1024tok", straddle="partial"
            ),
            "partial",
        ),
        (lambda: evaluate_stages({"q": {"a": 1}}, {"s": "nope.trec"}), "nope.trec"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises((InputError, ValueError, TypeError)) as info:
        call()
    assert words in str(info.value)


def test_a_pipeline_of_chunks_judged_on_span_labels():
    text = "The lighthouse was lit in 1803. Its keeper lived on the rock. It was rebuilt in 1881."
    spans = ranklens.SpanLabels.from_records(
        [{"query_id": "q", "doc_id": "D", "start": 0, "end": 31}], texts={"D": text}
    )

    def chunks(query: str) -> list[dict]:
        cuts = [(0, 31), (31, 62), (62, len(text))]
        return [{"id": f"D#{a}", "parent": "D", "start": a, "end": b, "score": 3.0 - i}
                for i, (a, b) in enumerate(cuts)]  # fmt: skip

    def keeper_first(query: str, hits: list[dict]) -> list[dict]:
        return [hits[1], hits[2]]  # drops the chunk with the evidence

    pipeline = ranklens.Pipeline([("bm25", chunks), ("rerank", keeper_first, "reranker")])
    result = ranklens.run_retriever(pipeline, {"q": "when was it lit?"}, key="parent",
                                    calls=ranklens.Calling(progress=False))  # fmt: skip
    ev = evaluate_stages(spans, result, ["recall"])
    (row,) = ev.query("q")
    assert row["unit"] == "D[0:31]" and row["ranks"] == {"bm25": 1, "rerank": None}
    assert row["fate"] == "filtered"  # the reranker kept the chunks ranked below it
