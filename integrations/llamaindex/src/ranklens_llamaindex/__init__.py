"""ranklens for LlamaIndex: run any ``BaseRetriever`` (or a ``RetrieverQueryEngine``) over
a labelled query set (:mod:`.adapter`), record live retrievals (:mod:`.hooks`), and capture a
pipeline stage by stage, its retrievers and node postprocessors (:mod:`.stages`:
``instrument(stages=True)`` live, ``LlamaIndexRetriever(engine)`` offline).

>>> import ranklens                                    # doctest: +SKIP
>>> result = ranklens.run_retriever(bm25_retriever, dataset, k=10, key="parent", cache="bm25.jsonl")
>>> result.evaluate(dataset, ["ndcg@10", "recall@10"])
"""

from __future__ import annotations

from ranklens.capture import Instrumentation
from ranklens.errors import UnseenStagesWarning

from .adapter import PLUGIN, LlamaIndexRetriever, run, to_hit, to_light
from .hooks import (
    RanklensCallbackHandler,
    RanklensEventHandler,
    RanklensSpanHandler,
    instrument,
)
from .interleaving import InterleavedRetriever

__version__ = "0.2.0"

node_to_hit = to_hit  # the earlier name

__all__ = [
    "PLUGIN",
    "Instrumentation",
    "InterleavedRetriever",
    "LlamaIndexRetriever",
    "RanklensCallbackHandler",
    "RanklensEventHandler",
    "RanklensSpanHandler",
    "UnseenStagesWarning",
    "instrument",
    "node_to_hit",
    "run",
    "to_hit",
    "to_light",
]
