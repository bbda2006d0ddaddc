"""ranklens for LangChain: run any ``BaseRetriever`` (or a Runnable returning Documents)
over a labelled query set."""

from __future__ import annotations

from .retriever import LangChainRetriever, document_to_hit, run

__all__ = ["LangChainRetriever", "document_to_hit", "run"]
