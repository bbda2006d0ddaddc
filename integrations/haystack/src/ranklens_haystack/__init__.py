"""ranklens for Haystack: run a retriever component or a whole Pipeline over a labelled
query set."""

from __future__ import annotations

from .components import RanklensEvaluator, RanklensRecorder
from .retriever import HaystackRetriever, document_to_hit, run
from .tracing import RanklensTracer, instrument

__all__ = [
    "HaystackRetriever",
    "RanklensEvaluator",
    "RanklensRecorder",
    "RanklensTracer",
    "document_to_hit",
    "instrument",
    "run",
]
