"""ranklens for LangChain: run any ``BaseRetriever`` (or a Runnable returning Documents)
over a labelled query set."""

from __future__ import annotations

from .bm25 import BM25sRetriever
from .hooks import AsyncRanklensCallbackHandler, RanklensCallbackHandler
from .retriever import LangChainRetriever, document_to_hit, run

__all__ = [
    "AsyncRanklensCallbackHandler",
    "BM25sRetriever",
    "LangChainRetriever",
    "RanklensCallbackHandler",
    "document_to_hit",
    "run",
]
