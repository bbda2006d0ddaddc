"""The Haystack components in real pipelines: the recorder after a BM25 retriever (sync and
concurrent run_async) captures exactly the retrievals made and evaluates as the runner does;
the evaluator equals Haystack's own evaluators under the haystack convention and drops into
an evaluation pipeline."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest
from haystack import Document, Pipeline
from haystack.components.evaluators import (
    DocumentMAPEvaluator,
    DocumentMRREvaluator,
    DocumentNDCGEvaluator,
    DocumentRecallEvaluator,
)
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from ranklens_haystack import RanklensEvaluator, RanklensRecorder, run

from ranklens.errors import InputError

logging.getLogger("haystack").setLevel(logging.ERROR)
METRICS = ["ndcg@10", "recall@10"]


@pytest.fixture(scope="module")
def store(scifact_slice, store_of):
    return store_of(scifact_slice)


def pipeline(store, recorder):
    p = Pipeline()
    p.add_component("retriever", InMemoryBM25Retriever(store, top_k=10))
    p.add_component("recorder", recorder)
    p.connect("retriever.documents", "recorder.documents")
    return p


@pytest.mark.parametrize("mode", ["run", "run_async"])
def test_recorder_in_a_pipeline_equals_the_runner(store, scifact_slice, mode):
    rec_component = RanklensRecorder()
    p = pipeline(store, rec_component)

    def data(qid, text):
        return {"retriever": {"query": text}, "recorder": {"query": text, "query_id": qid}}

    items = list(scifact_slice.queries.items())
    if mode == "run":
        for qid, text in items:
            p.run(data(qid, text))
    else:

        async def all_queries():
            await asyncio.gather(*(p.run_async(data(q, t)) for q, t in items))

        asyncio.run(all_queries())
    rec = rec_component.recorder
    assert rec.total == len(items) and rec.errors == 0
    runner = run(InMemoryBM25Retriever(store, top_k=10), scifact_slice, progress=False)
    assert rec.to_run(scifact_slice).to_lists() == runner.run.to_lists()
    assert (
        rec.evaluate(scifact_slice, METRICS).aggregate
        == runner.evaluate(scifact_slice, METRICS).aggregate
    )


def _docs(ids, grades=None):
    return [
        Document(id=i, content=f"text {i}", score=None if grades is None else float(grades[i]))
        for i in ids
    ]


CASES = [
    (["a", "b", "c"], ["x", "b", "a", "b"], {"a": 2, "b": 1, "c": 3}),
    (["a"], ["a"], None),
    (["a", "b"], ["x", "y"], None),
    (["a"], [], None),
    # a ground-truth score of 0: relevant for MRR, MAP and recall (Haystack looks only at
    # presence), a gain of 0 for nDCG
    (["a", "b", "c"], ["a", "c", "b"], {"a": 0, "b": 2, "c": 0}),
]


def test_evaluator_equals_haystack_evaluators_under_the_haystack_convention():
    gt = [_docs(e, g) for e, _, g in CASES]
    ret = [_docs(r) for _, r, _ in CASES]
    pairs = {
        "mrr": DocumentMRREvaluator(document_comparison_field="id"),
        "map": DocumentMAPEvaluator(document_comparison_field="id"),
        "recall": DocumentRecallEvaluator(mode="multi_hit", document_comparison_field="id"),
        "hit_rate": DocumentRecallEvaluator(mode="single_hit", document_comparison_field="id"),
        "ndcg": DocumentNDCGEvaluator(document_comparison_field="id"),
    }
    for metric, theirs in pairs.items():
        want = theirs.run(ground_truth_documents=gt, retrieved_documents=ret)
        got = RanklensEvaluator(metric, convention="haystack").run(
            ground_truth_documents=gt, retrieved_documents=ret
        )
        assert got["individual_scores"] == pytest.approx(want["individual_scores"]), metric
        assert got["score"] == pytest.approx(want["score"]), metric
    # The trec convention differs where Haystack's duplicates and ideal differ: e.g. nDCG@10
    # with graded truth for the first case.
    trec = RanklensEvaluator("ndcg@10").run(ground_truth_documents=gt, retrieved_documents=ret)
    assert trec["individual_scores"][1] == 1.0 and trec["individual_scores"][3] == 0.0


def test_evaluator_in_an_evaluation_pipeline_and_its_errors():
    p = Pipeline()
    p.add_component("ndcg", RanklensEvaluator("ndcg@10", document_comparison_field="meta.file"))
    p.add_component("mrr", RanklensEvaluator("mrr@10", document_comparison_field="content"))
    gt = [[Document(content="alpha", meta={"file": "A"})]]
    ret = [
        [
            Document(content="beta", meta={"file": "B"}),
            Document(content="alpha", meta={"file": "A"}),
        ]
    ]
    out = p.run(
        {
            "ndcg": {"ground_truth_documents": gt, "retrieved_documents": ret},
            "mrr": {"ground_truth_documents": gt, "retrieved_documents": ret},
        }
    )
    assert out["mrr"]["score"] == 0.5
    assert out["ndcg"]["individual_scores"] == [pytest.approx(1 / 1.5849625007211562)]
    with pytest.raises(ValueError, match="1 lists and retrieved_documents 2"):
        RanklensEvaluator().run(ground_truth_documents=gt, retrieved_documents=ret * 2)
    with pytest.raises(
        InputError, match=r"retrieved_documents\[0\]\[0\]: document .* has no 'meta.file'"
    ):
        RanklensEvaluator(document_comparison_field="meta.file").run(
            ground_truth_documents=gt, retrieved_documents=[[Document(content="no meta")]]
        )
    with pytest.raises(InputError, match="document_comparison_field must be"):
        RanklensEvaluator(document_comparison_field="title")


@pytest.mark.parametrize("mode", ["run", "run_async"])
def test_tracer_captures_without_a_component(store, scifact_slice, mode):
    from haystack import tracing
    from ranklens_haystack import instrument

    p = Pipeline()
    p.add_component("retriever", InMemoryBM25Retriever(store, top_k=10))
    items = list(scifact_slice.queries.items())
    before = tracing.tracer.actual_tracer
    ids = {text: qid for qid, text in items}
    with instrument(query_ids=ids) as rec:
        assert tracing.tracer.actual_tracer is not before
        if mode == "run":
            for _, text in items:
                p.run({"retriever": {"query": text}})
        else:

            async def all_queries():
                await asyncio.gather(*(p.run_async({"retriever": {"query": t}}) for _, t in items))

            asyncio.run(all_queries())
    assert tracing.tracer.actual_tracer is before  # restored
    assert rec.total == len(items) and rec.errors == 0
    records = list(rec.records())
    assert all(r.latency_ms > 0 and r.source == "retriever" for r in records)
    assert all(r.trace_id is None and r.parent_trace_id is None for r in records)  # tracing off
    assert {r.query_id for r in records} == set(scifact_slice.queries)
    runner = run(InMemoryBM25Retriever(store, top_k=10), scifact_slice, progress=False)
    assert rec.to_run(scifact_slice).to_lists() == runner.run.to_lists()


def test_tracer_records_errors_and_keeps_the_active_tracer(store):
    from haystack import component, tracing
    from haystack.tracing import Span, Tracer
    from ranklens_haystack import instrument

    seen = []

    class Outer(Tracer):  # e.g. an OpenTelemetry tracer already in place
        def trace(self, operation_name, tags=None, parent_span=None):
            seen.append(operation_name)
            return contextlib.nullcontext(NullishSpan())

        def current_span(self):
            return None

    class NullishSpan(Span):
        def set_tag(self, key, value):
            return None

    @component
    class Broken:
        @component.output_types(documents=list[Document])
        def run(self, query: str):
            raise ConnectionError("store unreachable")

    p = Pipeline()
    p.add_component("retriever", Broken())
    original = tracing.tracer.actual_tracer
    tracing.enable_tracing(Outer())
    try:
        with instrument() as rec, pytest.raises(Exception, match="store unreachable"):
            p.run({"retriever": {"query": "anything"}})
        (r,) = list(rec.records())
        assert r.error == {"type": "ConnectionError", "message": "store unreachable"}
        assert "haystack.component.run" in seen  # the outer tracer still saw the spans
    finally:
        tracing.enable_tracing(original)


@pytest.mark.parametrize("route", ["tracer", "component"])
def test_trace_ids_come_from_the_active_tracer(store, scifact_slice, route):
    """With a tracer on (a Tracer with log-correlation ids, as OpenTelemetry's and
    Datadog's report them), each record carries its span id and the pipeline run's trace
    id; with tracing off (``test_tracer_captures_without_a_component``) both stay None."""
    import contextvars
    import itertools

    from haystack import tracing
    from haystack.tracing import Span, Tracer
    from ranklens_haystack import instrument

    ids = itertools.count()
    current: contextvars.ContextVar = contextvars.ContextVar("span", default=None)
    spans = []

    class IdSpan(Span):
        def __init__(self, name, trace):
            self.name, self.span_id, self.trace = name, f"s{next(ids)}", trace

        def set_tag(self, key, value):
            if key == "haystack.component.name":
                self.name = value

        def get_correlation_data_for_logs(self):
            return {"trace_id": self.trace, "span_id": self.span_id}

    class IdTracer(Tracer):
        @contextlib.contextmanager
        def trace(self, operation_name, tags=None, parent_span=None):
            parent = parent_span or current.get()
            span = IdSpan(operation_name, parent.trace if parent else f"t{next(ids)}")
            span.set_tags(tags or {})
            spans.append(span)
            token = current.set(span)
            try:
                yield span
            finally:
                current.reset(token)

        def current_span(self):
            return current.get()

    items = list(scifact_slice.queries.items())[:5]
    original = tracing.tracer.actual_tracer
    tracing.enable_tracing(IdTracer())
    try:
        if route == "tracer":
            p = Pipeline()
            p.add_component("retriever", InMemoryBM25Retriever(store, top_k=10))
            with instrument() as rec:
                for _, text in items:
                    p.run({"retriever": {"query": text}})
        else:
            component = RanklensRecorder()
            p = pipeline(store, component)
            for qid, text in items:
                p.run({"retriever": {"query": text}, "recorder": {"query": text, "query_id": qid}})
            rec = component.recorder
    finally:
        tracing.enable_tracing(original)
    records = list(rec.records())
    recorded_in = "retriever" if route == "tracer" else "recorder"
    expected = [(s.span_id, s.trace) for s in spans if s.name == recorded_in]
    assert [(r.trace_id, r.parent_trace_id) for r in records] == expected
    assert len({r.parent_trace_id for r in records}) == len(items)  # one trace per run


def test_every_route_keeps_the_recorder_it_is_given(store):
    """An empty, non-default Recorder passed in is the one filled (not replaced by a default
    one): the tracer route and the pipeline component."""
    from ranklens_haystack import instrument

    from ranklens import Recorder

    mine = Recorder(key="meta.file_id")
    with instrument(mine) as rec:
        assert rec is mine
        retriever_pipeline(store).run({"retriever": {"query": "cancer"}})
    assert mine.total == 1 and next(mine.records()).doc_ids

    theirs = Recorder(key="meta.file_id")
    component = RanklensRecorder(recorder=theirs)
    assert component.recorder is theirs
    pipeline(store, component).run(
        {"retriever": {"query": "cancer"}, "recorder": {"query": "cancer"}}
    )
    assert theirs.total == 1 and next(theirs.records()).doc_ids


def retriever_pipeline(store):
    p = Pipeline()
    p.add_component("retriever", InMemoryBM25Retriever(store, top_k=10))
    return p
