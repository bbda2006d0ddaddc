"""A real LlamaIndex app (BM25 query engine over the demo passages, no LLM call) under
concurrent simulated traffic with a Monitor attached through the hooks: stationary windows
raise no alert, and when the retriever is swapped (BM25 over sentence chunks whose ids the
labels do not know, as after a botched re-index) the alert fires in the first window
after the swap. Then two retrievers interleaved into one BaseRetriever in the engine."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from llama_index.core import Settings
from llama_index.core.instrumentation.dispatcher import instrument_tags
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import get_response_synthesizer
from llama_index.core.schema import TextNode
from llama_index.retrievers.bm25 import BM25Retriever
from ranklens_llamaindex import InterleavedRetriever, instrument

import ranklens
from ranklens import Recorder
from ranklens.app.demo_data import load


@pytest.fixture(scope="module")
def app():
    ds = load()
    nodes = [TextNode(id_=d, text=f"{v['title']}. {v['text']}") for d, v in ds.corpus.items()]
    chunks = [TextNode(id_=f"{d}#{i}", text=s) for d, v in ds.corpus.items()
              for i, s in enumerate(v["text"].split(". ")) if s]  # fmt: skip
    good = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)
    stale = BM25Retriever.from_defaults(nodes=chunks, similarity_top_k=10)
    return ds, good, stale


def no_text(monkeypatch):
    """Retrieval without synthesis: no LLM is called (the synthesizer still reads
    Settings.llm, which would otherwise import OpenAI's)."""
    monkeypatch.setattr(Settings, "_llm", MockLLM())
    return get_response_synthesizer(response_mode="no_text", llm=MockLLM())


def test_drift_caught_in_a_live_app(app, monkeypatch):
    ds, good, stale = app
    synth = no_text(monkeypatch)
    engine = RetrieverQueryEngine(retriever=good, response_synthesizer=synth)
    rng = np.random.default_rng(0)
    items = list(ds.queries.items())
    alerts = []
    rec = Recorder(spill=False, max_records=500)
    monitor = ranklens.Monitor(
        rec, window=120, labels=ds, metrics=["ndcg@10"], on_alert=alerts.append,
        stats=ranklens.Statistics(alpha=0.001, seed=0),
        drift=ranklens.DriftTests(signals=[
            "error_rate", "empty_rate", "unknown_rate", "labelled_rate", "top_score", "ndcg@10",
        ]),  # latency left out: this machine's load is not the app's drift
        windowing=ranklens.Windowing(interval=0.05),
    )  # fmt: skip

    def ask(item):
        qid, text = item
        if qid.startswith("x"):  # unlabelled traffic: questions no label covers
            return engine.query(text)
        with instrument_tags({"query_id": qid}):
            return engine.query(text)

    def window_of_traffic():
        batch = [items[i] for i in rng.integers(len(items), size=80)]
        batch += [(f"x{i}", f"who kept the light at {w}?") for i, w in
                  enumerate(rng.choice(["dawn", "the harbour", "storm tide"], 40))]  # fmt: skip
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(ask, batch))

    with instrument(rec):
        for _ in range(4):  # a baseline window and three stationary ones
            window_of_traffic()
        engine._retriever = stale  # the drift: a retriever swap
        window_of_traffic()
    monitor.close()
    windows = list(monitor.windows)
    assert [w.retrievals for w in windows] == [120] * 5
    assert [w.role for w in windows] == ["baseline", "tested", "tested", "tested", "tested"]
    assert not any(w.alert for w in windows[:4]), [w.summary_line() for w in windows]
    assert len(alerts) == 1 and alerts[0].window is windows[4]
    moved = {d.signal for d in alerts[0].drifted}
    assert {"unknown_rate", "ndcg@10"} <= moved
    assert windows[4].signals["unknown_rate"] == 1.0 and windows[0].signals["unknown_rate"] == 0
    assert windows[0].signals["labelled_rate"] == pytest.approx(80 / 120)
    assert monitor.status()["dropped"] == 0 and monitor.status()["internal_errors"] == 0


def test_interleaved_retriever_in_a_query_engine(app, monkeypatch):
    ds, good, stale = app
    synth = no_text(monkeypatch)
    inter = ranklens.interleave(good, stale, names=("passages", "sentences"), seed=1)
    assert isinstance(inter, InterleavedRetriever)
    engine = RetrieverQueryEngine(retriever=inter, response_synthesizer=synth)
    for qid, text in list(ds.queries.items())[:20]:
        with instrument_tags({"query_id": qid}):
            response = engine.query(text)
        nodes = response.source_nodes
        assert len(nodes) == 10
        assert "ranklens_impression" not in nodes[0].node.get_content(metadata_mode="llm")
        labelled = ds.qrels.to_dict()[qid]
        for n in nodes:  # "the answer cited" the first passage the labels call relevant
            if n.node.metadata["ranklens_doc"] in labelled:
                assert inter.record_click(n)
                break
    core = inter.interleaving
    assert core.counts["impressions"] == 20 and core.latest("q01") is not None
    res = inter.result()
    assert res.names == ("passages", "sentences") and res.wins > res.losses
    # the runner takes it too (through the LlamaIndex adapter)
    out = ranklens.run_retriever(inter, ds, k=10, calls=ranklens.Calling(progress=False))
    assert len(out.run.to_lists()) == len(ds.queries) and core.counts["impressions"] == 60
