"""The LangChain callback handlers on a real chain (bm25s retriever | formatter), under
``batch``'s thread pool and ``abatch``: they capture exactly the retrievals made, and
evaluating the recorder equals the runner on the same queries."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from ranklens_langchain import AsyncRanklensCallbackHandler, RanklensCallbackHandler, run

METRICS = ["ndcg@10", "recall@10"]


@pytest.fixture(scope="module")
def retriever(scifact_slice, BM25sRetriever, documents):
    return BM25sRetriever.from_documents(documents(scifact_slice), k=10)


def chain_of(retriever):
    return retriever | RunnableLambda(lambda docs: "\n\n".join(d.page_content for d in docs))


@pytest.mark.parametrize("mode", ["batch", "abatch"])
def test_chain_batch_equals_the_runner(retriever, scifact_slice, mode):
    handler = (RanklensCallbackHandler if mode == "batch" else AsyncRanklensCallbackHandler)()
    chain = chain_of(retriever)
    items = list(scifact_slice.queries.items())
    configs = [
        {"callbacks": [handler], "metadata": {"query_id": q}, "max_concurrency": 4}
        for q, _ in items
    ]
    texts = [t for _, t in items]
    if mode == "batch":
        outs = chain.batch(texts, configs)
    else:
        outs = asyncio.run(chain.abatch(texts, configs))
    assert len(outs) == len(items)
    rec = handler.recorder
    assert rec.total == len(items) and rec.in_flight == 0 and rec.errors == 0
    records = list(rec.records())
    assert {r.query_id for r in records} == set(scifact_slice.queries)
    assert all(r.parent_trace_id is not None for r in records)  # inside the chain's run
    runner = run(retriever, scifact_slice, progress=False)
    assert rec.to_run(scifact_slice).to_lists() == runner.run.to_lists()
    assert (
        rec.evaluate(scifact_slice, METRICS).aggregate
        == runner.evaluate(scifact_slice, METRICS).aggregate
    )


def test_errors_and_bare_retriever(retriever, scifact_slice):
    class Broken(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            raise TimeoutError("vector store timed out")

    handler = RanklensCallbackHandler()
    q = next(iter(scifact_slice.queries.values()))
    retriever.invoke(q, config={"callbacks": [handler]})
    with pytest.raises(TimeoutError):
        Broken().invoke("x", config={"callbacks": [handler]})
    ok, bad = list(handler.recorder.records())
    assert ok.query == q and ok.query_id is None and len(ok.doc_ids) == 10
    assert ok.parent_trace_id is None  # a bare retriever run
    assert bad.error == {"type": "TimeoutError", "message": "vector store timed out"}


def test_scores_read_from_any_score_field_and_stray_ends():
    from langchain_core.documents import Document

    class Scored(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            return [
                Document(page_content="a", id="a", metadata={"relevance_score": 0.7}),
                Document(page_content="b", id="b", metadata={"score": 0.0}),
                Document(page_content="c", id="c"),
            ]

    for key in ("id", "meta.missing"):  # the inline path and the full conversion
        handler = RanklensCallbackHandler(key=key)
        Scored().invoke("q", config={"callbacks": [handler]})
        (r,) = list(handler.recorder.records())
        if key == "id":
            assert r.doc_ids == ["a", "b", "c"] and r.scores == [0.7, 0.0, None]
        else:
            assert r.doc_ids == [] and r.unmapped == 3
    assert handler.recorder.end_light("never-started", []) is False


@pytest.mark.parametrize("mode", ["batch", "abatch"])
def test_instrument_records_every_run_without_callbacks(retriever, scifact_slice, mode):
    from ranklens_langchain import instrument

    from ranklens import Recorder

    chain = chain_of(retriever)
    items = list(scifact_slice.queries.items())[:20]
    configs = [{"metadata": {"query_id": q}, "max_concurrency": 4} for q, _ in items]
    texts = [t for _, t in items]
    mine = Recorder(name="mine")  # empty: it must still be the one filled
    with instrument(mine) as rec:
        assert rec is mine
        if mode == "batch":
            chain.batch(texts, configs)
        else:
            asyncio.run(chain.abatch(texts, configs))
    assert mine.total == len(items) and mine.errors == 0
    assert {r.query_id for r in mine.records()} == {q for q, _ in items}
    runner = run(retriever, dict(items), progress=False)
    assert mine.to_run().to_lists() == runner.run.to_lists()
    chain.invoke(texts[0])  # detached: nothing more is recorded
    assert mine.total == len(items)


def test_handlers_keep_the_recorder_they_are_given(retriever):
    from ranklens import Recorder

    for cls in (RanklensCallbackHandler, AsyncRanklensCallbackHandler):
        mine = Recorder(key="meta.doc_id")
        handler = cls(mine)
        assert handler.recorder is mine
        retriever.invoke("cancer", config={"callbacks": [handler]})
        assert mine.total == 1 and next(mine.records()).doc_ids
