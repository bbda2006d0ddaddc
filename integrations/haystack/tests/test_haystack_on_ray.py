"""A Haystack pipeline loaded from YAML in each Ray actor (its document store saved to disk
and loaded into the store the YAML names, shared by index), on a real local Ray; the
records equal the local backend's."""

from __future__ import annotations

import os

import pytest
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

import ranklens
from ranklens.app.demo_data import load

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # before ray is imported
ray = pytest.importorskip("ray")


def test_a_yaml_pipeline_loaded_in_each_actor(tmp_path):
    dataset = load()
    store = InMemoryDocumentStore(index="ranklens-demo")
    store.write_documents([Document(id=d, content=v["title"] + " " + v["text"])
                           for d, v in dataset.corpus.items()])  # fmt: skip
    store.save_to_disk(str(tmp_path / "store.json"))
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=10))
    (tmp_path / "pipeline.yaml").write_text(pipe.dumps())
    paths = (str(tmp_path / "store.json"), str(tmp_path / "pipeline.yaml"))

    def factory():  # runs in each actor, once: the store's documents, then the pipeline
        from haystack import Pipeline
        from haystack.document_stores.in_memory import InMemoryDocumentStore
        from ranklens_haystack import HaystackRetriever

        InMemoryDocumentStore.load_from_disk(paths[0])  # fills the shared index
        with open(paths[1]) as f:
            return HaystackRetriever(Pipeline.load(f), component="retriever")

    assert "ranklens-demo" in (tmp_path / "pipeline.yaml").read_text()
    queries = dict(list(dataset.queries.items())[:40])
    local = ranklens.run_retriever(factory(), queries, k=10, progress=False)
    assert all(r.doc_ids for r in local.records)  # the YAML's store holds the documents
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        on_ray = ranklens.run_retriever(None, queries, backend="ray", retriever_factory=factory,
                              actors=2, k=10)  # fmt: skip
    finally:
        ray.shutdown()
    assert not on_ray.failed
    # this process's shared index was written twice (the store, then load_from_disk), which
    # moves Haystack's BM25 statistics in the last bits: same documents, scores to 1e-12
    assert [(r.query_id, r.doc_ids) for r in on_ray.records] == [
        (r.query_id, r.doc_ids) for r in local.records
    ]
    for ours, theirs in zip(on_ray.records, local.records):
        assert ours.scores == pytest.approx(theirs.scores, rel=1e-12, abs=0)
