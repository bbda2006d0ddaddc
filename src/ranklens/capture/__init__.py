"""The capture floor (beside comparison, above evaluation): getting rankings out of
retrievers. The adapter contract and plugin registry (:mod:`.contract`), hits and their
mapping to labelled ids (:mod:`.hits`), one record per retrieval (:mod:`.records`), the
concurrent, resumable runner (:mod:`.runner`, :mod:`.log`, :mod:`.result`,
:mod:`.progress`), and the :class:`Recorder` for live apps with the framework hooks'
shared :class:`Instrumentation`.
"""

from __future__ import annotations

from ..settings import Calling
from .contract import (
    AdapterPlugin,
    FunctionRetriever,
    RetrieverAdapter,
    array_bytes,
    as_retriever,
    plugins,
    register_adapter,
)
from .hits import (
    ALL_FIELDS,
    Converter,
    Hit,
    KeyLike,
    LightHit,
    key_function,
    key_name,
    map_hits,
    text_hash,
)
from .identity import fingerprint, state_digest
from .instrumentation import Instrumentation, recorder_or_new
from .recorder import Recorder
from .records import Retrieval
from .result import RunResult
from .runner import TRANSIENT, arun_retriever, run_retriever

__all__ = [
    "ALL_FIELDS",
    "TRANSIENT",
    "AdapterPlugin",
    "Calling",
    "Converter",
    "FunctionRetriever",
    "Hit",
    "Instrumentation",
    "KeyLike",
    "LightHit",
    "Recorder",
    "Retrieval",
    "RetrieverAdapter",
    "RunResult",
    "array_bytes",
    "arun_retriever",
    "as_retriever",
    "fingerprint",
    "key_function",
    "key_name",
    "map_hits",
    "plugins",
    "recorder_or_new",
    "register_adapter",
    "run_retriever",
    "state_digest",
    "text_hash",
]
