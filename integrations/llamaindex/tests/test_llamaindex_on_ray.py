"""A LlamaIndex retriever as a Ray actor's factory: a BM25 index persisted to a folder and
loaded once in each actor (``BM25Retriever.from_persist_dir``), on a real local Ray; the
records equal the local backend's on the same persisted index."""

from __future__ import annotations

import os

import pytest
from llama_index.core.schema import TextNode
from llama_index.retrievers.bm25 import BM25Retriever

import ranklens
from ranklens.app.demo_data import load

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # before ray is imported
ray = pytest.importorskip("ray")


def test_a_persisted_index_loaded_in_each_actor(tmp_path):
    dataset = load()
    nodes = [TextNode(id_=d, text=v["title"] + " " + v["text"]) for d, v in dataset.corpus.items()]
    folder = str(tmp_path / "bm25")
    BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10).persist(folder)

    def factory():  # runs in each actor, once
        from llama_index.retrievers.bm25 import BM25Retriever

        return BM25Retriever.from_persist_dir(folder)

    queries = dict(list(dataset.queries.items())[:40])
    local = ranklens.run_retriever(factory(), queries, k=10, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        on_ray = ranklens.run_retriever(None, queries, backend="ray", retriever_factory=factory,
                              actors=2, k=10, cache=tmp_path / "logs")  # fmt: skip
    finally:
        ray.shutdown()
    assert not on_ray.failed and on_ray.info["backend"] == "ray"
    assert [(r.query_id, r.doc_ids, r.scores) for r in on_ray.records] == [
        (r.query_id, r.doc_ids, r.scores) for r in local.records
    ]
    assert sorted(p.name for p in (tmp_path / "logs").iterdir())[0] == "shard-0000.jsonl"
    ev = ranklens.evaluate(dataset, on_ray, ["ndcg@10"])
    assert ev["ndcg@10"] == ranklens.evaluate(dataset, local, ["ndcg@10"])["ndcg@10"] > 0
