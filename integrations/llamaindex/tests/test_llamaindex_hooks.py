"""The LlamaIndex hooks on a real query engine (BM25 retriever, no-text synthesis, no LLM
call): they capture exactly the retrievals made, concurrent ones included, and evaluating
the recorder equals running the runner on the same queries."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from llama_index.core import Settings
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.instrumentation.dispatcher import instrument_tags
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import get_response_synthesizer
from llama_index.core.schema import TextNode
from llama_index.retrievers.bm25 import BM25Retriever
from ranklens_llamaindex import RanklensCallbackHandler, instrument, run

from ranklens import Recorder

METRICS = ["ndcg@10", "recall@10", "mrr@10"]


@pytest.fixture(scope="module")
def bm25(scifact_slice):
    nodes = [TextNode(id_=d, text=v["text"]) for d, v in scifact_slice.corpus.items() if v["text"]]
    return BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)


def test_query_engine_concurrent_queries_equal_the_runner(bm25, scifact_slice, monkeypatch):
    # "no_text": the engine retrieves and skips synthesis, so no LLM is called (the
    # synthesizer still reads Settings.llm, which would otherwise import OpenAI's).
    monkeypatch.setattr(Settings, "_llm", MockLLM())
    synth = get_response_synthesizer(response_mode="no_text", llm=MockLLM())
    engine = RetrieverQueryEngine(retriever=bm25, response_synthesizer=synth)

    def ask(item):
        qid, text = item
        with instrument_tags({"query_id": qid}):
            return engine.query(text)

    with instrument(Recorder()) as rec, ThreadPoolExecutor(4) as pool:
        list(pool.map(ask, scifact_slice.queries.items()))
    assert rec.total == len(scifact_slice.queries) and rec.errors == 0 and rec.in_flight == 0
    assert {r.query_id for r in rec.records()} == set(scifact_slice.queries)
    # Each record carries its retrieve span's id (LlamaIndex's trace id for it).
    span_ids = {r.trace_id for r in rec.records()}
    assert len(span_ids) == rec.total
    assert all(s.startswith("BM25Retriever.retrieve-") for s in span_ids)
    runner = run(bm25, scifact_slice, progress=False)
    assert rec.to_run(scifact_slice).to_lists() == runner.run.to_lists()
    ours = rec.evaluate(scifact_slice, METRICS)
    theirs = runner.evaluate(scifact_slice, METRICS)
    assert ours.aggregate == theirs.aggregate
    assert ours.recorder_counts == {
        "unmatched": 0,
        "repeats": 0,
        "failed": 0,
        "ambiguous": 0,
        "matched": 60,
    }
    # Detached: nothing more is recorded.
    engine.query("after detaching")
    assert rec.total == len(scifact_slice.queries)


def test_text_matching_and_errors(bm25, scifact_slice):
    class Broken(BaseRetriever):
        def _retrieve(self, query_bundle):
            raise ConnectionError("index offline")

    items = list(scifact_slice.queries.items())[:10]
    with instrument(Recorder()) as rec:
        for _, text in items:  # no query ids: matched to labels by text
            bm25.retrieve(text.upper() + "  ")
        with pytest.raises(ConnectionError):
            Broken().retrieve("anything")
    assert rec.total == 11 and rec.errors == 1
    failed = [r for r in rec.records() if not r.ok]
    assert failed[0].error == {"type": "ConnectionError", "message": "index offline"}
    ev = rec.evaluate(scifact_slice, ["recall@10"])
    assert ev.recorder_counts["matched"] == 10
    assert ev.recorder_counts["unmatched"] == 1  # "anything" matches no labelled query
    assert len(ev.query_ids) == 10  # labelled queries never asked are left out


def test_legacy_callback_manager(scifact_slice):
    rec = Recorder()
    nodes = [TextNode(id_=d, text=v["text"]) for d, v in scifact_slice.corpus.items() if v["text"]]
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5)
    retriever.callback_manager = CallbackManager([RanklensCallbackHandler(rec)])
    q = next(iter(scifact_slice.queries.values()))
    expected = [n.node.node_id for n in retriever.retrieve(q)]
    (r,) = list(rec.records())
    assert r.query == q and r.doc_ids == expected and r.latency_ms > 0


def test_instrument_keeps_the_recorder_it_is_given(scifact_slice):
    """An empty Recorder(key="parent") passed in is the one filled: chunk hits are mapped to
    their passages (a default recorder would have scored node ids, all zero)."""
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo

    chunks = []
    for d, v in list(scifact_slice.corpus.items())[:50]:
        for i, part in enumerate(v["text"].split(". ")[:3]):
            node = TextNode(id_=f"{d}#{i}", text=part)
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=d)
            chunks.append(node)
    retriever = BM25Retriever.from_defaults(nodes=chunks, similarity_top_k=5)
    mine = Recorder(key="parent")
    with instrument(mine) as rec:
        assert rec is mine
        retriever.retrieve("cell biology")
    (r,) = list(mine.records())
    assert r.doc_ids and all("#" not in d for d in r.doc_ids)
    assert {h["id"].split("#")[0] for h in r.hits} == set(r.doc_ids)


def test_versions_from_what_the_app_retrieved_equal_the_corpus_table():
    """A recorder that keeps metadata (``Recorder(metadata=True)``) gives the documents'
    times and version groups as the app's nodes carried them: freshness measured from live
    capture, equal to the corpus's own versions table on every retrieved document. A
    recorder without it says so instead of a table of undated documents."""
    import ranklens
    from ranklens.app.demo_versions import load_versions

    dataset, versions = load_versions()
    nodes = [TextNode(id_=d, text=f"{v['title']}. {v['text']}", metadata=dict(v["metadata"]))
             for d, v in dataset.corpus.items()]  # fmt: skip
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)
    with instrument(Recorder(metadata=True)) as rec:
        for qid, text in dataset.queries.items():
            with instrument_tags({"query_id": qid}):
                retriever.retrieve(text)
    table = rec.doc_metadata()
    retrieved = {d for r in rec.records() for d in r.doc_ids}
    assert set(table) == retrieved and all("valid_from" in m for m in table.values())
    live = ranklens.Versions.from_metadata(rec, time="valid_from", group="group")
    metrics = ["outdated@1", "outdated@5", "current_first@10", "ndcg@10"]
    ours = rec.evaluate(dataset, metrics, versions=live, freshness="zero")
    whole = rec.evaluate(dataset, metrics, versions=versions, freshness="zero")
    assert ours.aggregate == whole.aggregate
    assert whole["outdated@5"] > 0  # BM25 does retrieve the planted older pages

    with instrument(Recorder()) as plain:
        retriever.retrieve(next(iter(dataset.queries.values())))
    with pytest.raises(ranklens.InputError, match=r"Recorder\(metadata=True\)"):
        ranklens.Versions.from_metadata(plain, time="valid_from", group="group")
