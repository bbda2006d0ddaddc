"""ranklens for LlamaIndex: run any ``BaseRetriever`` over a labelled query set.

>>> from ranklens_llamaindex import run               # doctest: +SKIP
>>> result = run(bm25_retriever, dataset, k=10, key="parent", cache="bm25.jsonl")
>>> result.evaluate(dataset, ["ndcg@10", "recall@10"])
"""

from __future__ import annotations

from .hooks import (
    Instrumentation,
    RanklensCallbackHandler,
    RanklensEventHandler,
    RanklensSpanHandler,
    instrument,
)
from .retriever import LlamaIndexRetriever, node_to_hit, run

__all__ = [
    "Instrumentation",
    "LlamaIndexRetriever",
    "RanklensCallbackHandler",
    "RanklensEventHandler",
    "RanklensSpanHandler",
    "instrument",
    "node_to_hit",
    "run",
]
