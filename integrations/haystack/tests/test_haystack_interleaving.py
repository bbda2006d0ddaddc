"""ranklens.interleave on two Haystack retrievers gives a component that runs in a
Pipeline where a retriever goes; the Haystack tracer hook feeds a Monitor meanwhile."""

from __future__ import annotations

from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from ranklens_haystack import InterleavedRetriever, instrument

import ranklens
from ranklens import Recorder
from ranklens.app.demo_data import load


def test_interleaved_component_in_a_pipeline_with_a_monitor():
    ds = load()
    stores = []
    for field in ("text", "title"):
        store = InMemoryDocumentStore()
        store.write_documents([Document(id=d, content=v[field]) for d, v in ds.corpus.items()])
        stores.append(InMemoryBM25Retriever(store, top_k=10))
    inter = ranklens.interleave(*stores, "probabilistic", names=("text", "title"), seed=0)
    assert isinstance(inter, InterleavedRetriever)
    pipeline = Pipeline()
    pipeline.add_component("retriever", inter)
    rec = Recorder()
    monitor = ranklens.Monitor(
        rec,
        window=10,
        labels=ds,
        metrics=["ndcg@10"],
        windowing=ranklens.Windowing(background=False),
    )
    with instrument(rec, components={"retriever"}):
        for qid, text in list(ds.queries.items())[:10]:
            out = pipeline.run({"retriever": {"query": text, "query_id": qid}})
            served = out["retriever"]["documents"]
            assert 0 < len(served) <= 10 and served[0].meta["ranklens_impression"]
            assert inter.record_click(served[0])
    monitor.flush()
    (w,) = monitor.windows
    assert w.retrievals == 10 and w.signals["labelled_rate"] == 1.0
    res = inter.result()
    assert res.method == "probabilistic" and res.with_clicks == 10
