"""Real sweeps shared by the sweep tests (and the child process they kill): BM25 in real
frameworks over whole passages or sentence chunks (mapped back to their passage with
``key="parent"``), each index built once and asked at several top-k
(``query_params=["top_k"]``).

* SciFact (``../shared/data/scifact``, BEIR, the real abstracts): :data:`SCIFACT_QUERIES`
  labelled test queries and a corpus of every abstract they label plus others up to
  :data:`SCIFACT_DOCS`, drawn with a fixed seed (:func:`scifact`); LangChain and
  LlamaIndex, 2 x 2 x 3 = 12 configurations from 4 builds (:func:`build_scifact`).
* Merrow Isles (the set ranklens ships, generated): LlamaIndex, LangChain and Haystack,
  3 x 2 x 2 = 12 configurations from 6 builds (:func:`build`), the fallback where the
  shared data is absent.
"""

from __future__ import annotations

import copy
import functools
import os
import re
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
"""``../shared/data`` beside the repository (as the root ``conftest.py`` finds it)."""

GRID = {
    "framework": ["llamaindex", "langchain", "haystack"],
    "chunks": ["passages", "sentences"],
    "top_k": [10, 30],
}
SCIFACT_GRID = {
    "framework": ["langchain", "llamaindex"],
    "chunks": ["passages", "sentences"],
    "top_k": [10, 20, 30],
}
SCIFACT_QUERIES, SCIFACT_DOCS = 40, 3000
BUILDS: list[tuple[str, str]] = []
"""Every index built in this process, as ``(framework, chunks)``."""
INDEXES: dict[tuple[str, str], Any] = {}
"""The last index built of each ``(framework, chunks)``: its ``top_k -> retriever``."""


@functools.cache
def scifact() -> Any:
    """The SciFact slice the sweep runs on (the same in every process): 40 labelled test
    queries drawn with seed 0, every abstract they label and others up to 3,000."""
    from ranklens import read_dataset

    full = read_dataset(SHARED_DATA / "scifact")
    return full.sample(SCIFACT_QUERIES, SCIFACT_DOCS, seed=0)


def pieces(dataset: Any, chunks: str) -> list[tuple[str, str, str]]:
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
    """The index of one framework over one chunking of the Merrow Isles passages;
    returns ``top_k -> retriever``."""
    from ranklens.app.demo_data import load

    return index(load(), framework, chunks)


def build_scifact(framework: str, chunks: str):
    """The index of one framework over one chunking of the SciFact slice; returns
    ``top_k -> retriever``."""
    return index(scifact(), framework, chunks)


def index(dataset: Any, framework: str, chunks: str):
    """BM25 of ``framework`` over ``dataset``'s corpus cut by ``chunks``; returns
    ``top_k -> retriever`` (one index, a retriever of its own per top-k)."""
    BUILDS.append((framework, chunks))
    parts = pieces(dataset, chunks)
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

        INDEXES[framework, chunks] = llamaindex
        return llamaindex
    if framework == "langchain":
        from langchain_core.documents import Document
        from ranklens_langchain import BM25sRetriever

        docs = [Document(page_content=t, id=c, metadata={"doc_id": d}) for c, d, t in parts]
        index = BM25sRetriever.from_documents(docs)
        INDEXES[framework, chunks] = lambda top_k: index.model_copy(update={"k": top_k})
        return INDEXES[framework, chunks]
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

SCIFACT_OPTIONS = {**OPTIONS, "config": {"corpus": "scifact-test-40q-3000d-seed0"}}
"""The SciFact sweep's settings."""


def as_settings(**given: Any) -> dict[str, Any]:
    """The sweep's keywords with the flat settings among them grouped into their objects
    (as a TOML file's keys are, without a warning); settings objects given as they are."""
    from ranklens.sweeps import grouped
    from ranklens.sweeps.params import GROUPED

    objects = {k: v for k, v in given.items() if k in GROUPED}
    rest = {k: v for k, v in given.items() if k not in objects}
    settings = grouped("sweep", objects, rest, warn=False)._asdict()  # takes its keys
    return {**settings, **rest}
