"""A real sweep on the shipped Merrow Isles set, shared by the sweep tests (and a child
process they kill): BM25 in LlamaIndex, LangChain and Haystack over whole passages or
sentence chunks (mapped back to their passage with ``key="parent"``), each index built
once and asked at two top-k (``query_params=["top_k"]``): 3 x 2 x 2 = 12 configurations
from 6 builds."""

from __future__ import annotations

import copy
import os
import re

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

GRID = {
    "framework": ["llamaindex", "langchain", "haystack"],
    "chunks": ["passages", "sentences"],
    "top_k": [10, 30],
}
BUILDS: list[tuple[str, str]] = []
"""Every call of :func:`build` in this process, as ``(framework, chunks)``."""


def pieces(dataset, chunks: str) -> list[tuple[str, str, str]]:
    """``(chunk id, passage id, text)``: each passage whole, or cut into sentences."""
    out = []
    for d, v in dataset.corpus.items():
        text = f"{v['title']}. {v['text']}"
        if chunks == "passages":
            out.append((d, d, text))
        else:
            for i, s in enumerate(re.split(r"(?<=[.!?])\s+", text)):
                out.append((f"{d}#{i}", d, s))
    return out


def build(framework: str, chunks: str):
    """The index of one framework over one chunking; returns ``top_k -> retriever``."""
    from ranklens.app.demo_data import load

    BUILDS.append((framework, chunks))
    parts = pieces(load(), chunks)
    if framework == "llamaindex":
        from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
        from llama_index.retrievers.bm25 import BM25Retriever

        source = NodeRelationship.SOURCE
        nodes = [
            TextNode(id_=c, text=t, relationships={source: RelatedNodeInfo(node_id=d)})
            for c, d, t in parts
        ]
        index = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)

        def llamaindex(top_k: int):
            retriever = copy.copy(index)  # the same BM25 index, its own top-k
            retriever.similarity_top_k = top_k
            return retriever

        return llamaindex
    if framework == "langchain":
        from langchain_core.documents import Document
        from ranklens_langchain import BM25sRetriever

        docs = [Document(page_content=t, id=c, metadata={"doc_id": d}) for c, d, t in parts]
        index = BM25sRetriever.from_documents(docs)
        return lambda top_k: index.model_copy(update={"k": top_k})
    if framework == "haystack":
        from haystack import Document
        from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
        from haystack.document_stores.in_memory import InMemoryDocumentStore

        store = InMemoryDocumentStore()
        store.write_documents(
            [Document(id=c, content=t, meta={"source_id": d}) for c, d, t in parts]
        )
        return lambda top_k: InMemoryBM25Retriever(store, top_k=top_k)
    raise ValueError(f"unknown framework {framework!r}")


OPTIONS = dict(
    query_params=["top_k"],
    k=10,
    key="parent",
    concurrency=4,
    metrics=["ndcg@10", "recall@10", "mrr@10"],
    n_resamples=2000,
    config={"corpus": "merrow-lighthouses"},
)
"""The sweep's settings, the same in the killed process and the one resuming it."""
