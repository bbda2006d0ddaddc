"""ranklens for Haystack: run a retriever component or a whole Pipeline over a labelled
query set (:mod:`.adapter`), record live retrievals through the tracer (:mod:`.hooks`), a
pipeline's stages as the tracer sees them (:mod:`.stages`), and recorder and evaluator
components for pipelines (:mod:`.components`)."""

from __future__ import annotations

from ranklens.capture import Instrumentation
from ranklens.errors import UnseenStagesWarning

from .adapter import PLUGIN, HaystackRetriever, run, to_hit, to_light
from .components import RanklensEvaluator, RanklensRecorder
from .hooks import RanklensTracer, instrument
from .interleaving import InterleavedRetriever
from .stages import unseen_stages

__version__ = "0.2.0"

document_to_hit = to_hit  # the earlier name

__all__ = [
    "PLUGIN",
    "HaystackRetriever",
    "Instrumentation",
    "InterleavedRetriever",
    "RanklensEvaluator",
    "RanklensRecorder",
    "RanklensTracer",
    "UnseenStagesWarning",
    "document_to_hit",
    "instrument",
    "run",
    "to_hit",
    "to_light",
    "unseen_stages",
]
