"""A LangChain retriever built by a function in each Ray actor (the bm25s retriever this
package ships, from Documents), on a real local Ray; the records equal the local backend's."""

from __future__ import annotations

import os

import pytest

import ranklens
from ranklens.app.demo_data import load

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # before ray is imported
ray = pytest.importorskip("ray")


def build_retriever():
    """The factory: builds the retriever from the shipped demo corpus, once per actor."""
    from langchain_core.documents import Document
    from ranklens_langchain import BM25sRetriever

    corpus = load().corpus
    docs = [Document(page_content=v["title"] + " " + v["text"], id=d, metadata={"doc_id": d})
            for d, v in corpus.items()]  # fmt: skip
    return BM25sRetriever.from_documents(docs, k=10)


def test_a_retriever_built_by_a_function_in_each_actor(tmp_path):
    queries = dict(list(load().queries.items())[:40])
    local = ranklens.run_retriever(build_retriever(), queries, k=10, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        on_ray = ranklens.run_retriever(
            None, queries, backend="ray", retriever_factory=build_retriever, actors=2, k=10
        )
    finally:
        ray.shutdown()
    assert not on_ray.failed and on_ray.info["actors"] == 2
    assert [(r.query_id, r.doc_ids, r.scores) for r in on_ray.records] == [
        (r.query_id, r.doc_ids, r.scores) for r in local.records
    ]
    assert on_ray.config["retriever_factory"] == "build_retriever"
