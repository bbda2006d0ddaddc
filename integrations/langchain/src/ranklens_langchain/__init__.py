"""ranklens for LangChain: run any ``BaseRetriever`` (or a Runnable returning Documents)
over a labelled query set (:mod:`.adapter`), record live retrievals through callbacks or
:func:`instrument` (:mod:`.hooks`), a pipeline's stages seen through LangChain's callbacks
(:mod:`.stages`), and a BM25 retriever for offline tests and the demo (:mod:`.bm25`)."""

from __future__ import annotations

from ranklens.capture import Instrumentation
from ranklens.errors import UnseenStagesWarning

from .adapter import PLUGIN, LangChainRetriever, run, to_hit, to_light
from .bm25 import BM25sRetriever
from .hooks import AsyncRanklensCallbackHandler, RanklensCallbackHandler, instrument
from .interleaving import InterleavedRetriever
from .stages import ObservedStep, observe

__version__ = "0.2.0"

document_to_hit = to_hit  # the earlier name

__all__ = [
    "PLUGIN",
    "AsyncRanklensCallbackHandler",
    "BM25sRetriever",
    "Instrumentation",
    "InterleavedRetriever",
    "LangChainRetriever",
    "ObservedStep",
    "RanklensCallbackHandler",
    "UnseenStagesWarning",
    "document_to_hit",
    "instrument",
    "observe",
    "run",
    "to_hit",
    "to_light",
]
