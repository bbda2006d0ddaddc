"""ranklens.interleave on two LangChain retrievers gives a LangChain BaseRetriever: in a
chain, with callbacks seeing both inner retrievers, a query id from the run's metadata,
clicks credited from the served Documents; and a Monitor fed by the LangChain hooks."""

from __future__ import annotations

from langchain_core.documents import Document
from ranklens_langchain import BM25sRetriever, InterleavedRetriever, RanklensCallbackHandler

import ranklens
from ranklens import Recorder
from ranklens.app.demo_data import load


def test_interleaved_langchain_retriever_and_a_monitor():
    ds = load()
    docs = [Document(page_content=f"{v['title']}. {v['text']}", id=d) for d, v in ds.corpus.items()]
    titles = [Document(page_content=v["title"], id=d) for d, v in ds.corpus.items()]
    full, title = (
        BM25sRetriever.from_documents(docs, k=10),
        BM25sRetriever.from_documents(titles, k=10),
    )
    inter = ranklens.interleave(full, title, names=("text", "title"), seed=0)
    assert isinstance(inter, InterleavedRetriever)
    rec = Recorder()
    monitor = ranklens.Monitor(
        rec,
        window=20,
        labels=ds,
        metrics=["ndcg@10"],
        windowing=ranklens.Windowing(background=False),
    )
    handler = RanklensCallbackHandler(rec)
    for qid, text in list(ds.queries.items())[:20]:
        served = inter.invoke(text, {"metadata": {"query_id": qid}, "callbacks": [handler]})
        assert len(served) == 10 and served[0].metadata["ranklens_impression"]
        labelled = ds.qrels.to_dict()[qid]
        hit = next((d for d in served if d.metadata["ranklens_doc"] in labelled), None)
        if hit is not None:
            assert inter.record_click(hit)
    core = inter.interleaving
    assert core.latest("q01") is not None and core.counts["impressions"] == 20
    assert inter.result().impressions == 20
    # the callbacks saw the interleaved retriever and both inner ones: 60 retrievals
    monitor.flush(close=True)
    assert sum(w.retrievals for w in monitor.windows) == 60
