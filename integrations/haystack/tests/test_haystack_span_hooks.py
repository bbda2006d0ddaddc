"""Live Haystack retrievals scored against evidence spans: Documents cut by Haystack's own
``DocumentSplitter`` (``meta["source_id"]`` and ``meta["split_idx_start"]``), captured by
the tracer and by the recorder component in a pipeline, evaluate on span labels exactly as
the runner's result does."""

from __future__ import annotations

import logging

import pytest
from _evidence_case import evidence_labels
from haystack import Document, Pipeline
from haystack.components.preprocessors import DocumentSplitter
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from ranklens_haystack import RanklensRecorder, instrument, run

logging.getLogger("haystack").setLevel(logging.ERROR)
METRICS = ["evidence_recall@5", "evidence_precision@5", "evidence_iou@5", "ndcg@10", "recall@5"]


@pytest.fixture(scope="module")
def case():
    labels, texts, queries = evidence_labels()
    splitter = DocumentSplitter(split_by="word", split_length=40, split_overlap=10)
    docs = splitter.run([Document(id=d, content=t) for d, t in texts.items()])["documents"]
    assert len(docs) > 2 * len(texts)  # really chunked, with overlaps
    for c in docs:  # each chunk's place in its source, as the splitter recorded it
        start = c.meta["split_idx_start"]
        assert texts[c.meta["source_id"]][start : start + len(c.content)] == c.content
    store = InMemoryDocumentStore()
    store.write_documents(docs)
    expected = run(InMemoryBM25Retriever(store, top_k=10), queries, progress=False)
    return labels, queries, store, expected.evaluate(labels, METRICS)


@pytest.mark.parametrize("route", ["tracer", "component"])
def test_hooked_pipeline_scores_against_spans_as_the_runner_does(case, route):
    labels, queries, store, theirs = case
    p = Pipeline()
    p.add_component("retriever", InMemoryBM25Retriever(store, top_k=10))
    if route == "tracer":
        with instrument(query_ids={t: q for q, t in queries.items()}) as rec:
            for text in queries.values():
                p.run({"retriever": {"query": text}})
    else:
        component = RanklensRecorder()
        p.add_component("recorder", component)
        p.connect("retriever.documents", "recorder.documents")
        for q, text in queries.items():
            p.run({"retriever": {"query": text}, "recorder": {"query": text, "query_id": q}})
        rec = component.recorder
    ours = rec.evaluate(labels, METRICS)
    assert ours.aggregate == theirs.aggregate
    assert all((ours.per_query[m] == theirs.per_query[m]).all() for m in METRICS)
    assert 0.5 < ours["evidence_recall@5"] <= 1 and 0 < ours["evidence_precision@5"] < 0.6
    assert (rec.chunk_run().spans.start >= 0).all()  # the splitter's offsets, kept
    assert not ours.counts.get("chunks_unlocated") and not ours.counts.get("chunks_relocated")
