"""The capture floor (beside comparison, above evaluation): getting rankings out of
retrievers. The adapter contract and plugin registry (:mod:`.contract`), hits and their
mapping to labelled ids (:mod:`.hits`), one record per retrieval (:mod:`.records`), the
concurrent, resumable runner (:mod:`.runner`, :mod:`.log`, :mod:`.result`,
:mod:`.progress`), and the :class:`Recorder` for live apps with the framework hooks'
shared :class:`Instrumentation`. A pipeline's stages (:mod:`.stages`): :class:`Stage`
records in ``Retrieval.stages``, made by a :class:`Pipeline` of stage callables, handed
over by an adapter as :class:`Staged` hits, or given to ``Recorder.record(stages=...)``;
``RunResult.staged()`` and ``Recorder.staged()`` give them as a
:class:`~ranklens.StagedRun`.

The doors the floors above use: the run log (:func:`read_log`, :func:`config_diff`), the
Recorder's record tuples (:data:`RecordTuple`, :class:`RecordSlots`, :func:`light_of`),
the key (:data:`KEY`, :func:`check_key`, :func:`suggest_key`), a hit read from any form
a retriever returns (:func:`coerce_hit`), records matched to labelled
queries (:func:`label_matcher`), plain data of configurations (:func:`plain`) and an
object's adapter plugin (:func:`plugin_of`, :data:`PACKAGE_HINTS`).
"""

from __future__ import annotations

from ..settings import Calling
from .contract import (
    PACKAGE_HINTS,
    AdapterPlugin,
    FunctionRetriever,
    RetrieverAdapter,
    Staged,
    array_bytes,
    as_retriever,
    plugin_of,
    plugins,
    register_adapter,
)
from .hits import (
    ALL_FIELDS,
    KEY,
    Converter,
    Hit,
    KeyLike,
    LightHit,
    check_key,
    coerce_hit,
    key_function,
    key_name,
    map_hits,
    plain_hit,
    text_hash,
)
from .identity import fingerprint, plain, state_digest
from .instrumentation import Instrumentation, recorder_or_new
from .log import config_diff, read_log
from .matching import label_matcher, suggest_key
from .record_tuple import RecordSlots, RecordTuple, light_of, stages_of
from .recorder import Recorder
from .records import Retrieval, Stage
from .result import RunResult
from .runner import TRANSIENT, arun_retriever, run_retriever
from .stages import STAGE_KEY, STAGES_KEY, Pipeline

__all__ = [
    "ALL_FIELDS",
    "KEY",
    "PACKAGE_HINTS",
    "STAGES_KEY",
    "STAGE_KEY",
    "TRANSIENT",
    "AdapterPlugin",
    "Calling",
    "Converter",
    "FunctionRetriever",
    "Hit",
    "Instrumentation",
    "KeyLike",
    "LightHit",
    "Pipeline",
    "RecordSlots",
    "RecordTuple",
    "Recorder",
    "Retrieval",
    "RetrieverAdapter",
    "RunResult",
    "Stage",
    "Staged",
    "array_bytes",
    "arun_retriever",
    "as_retriever",
    "check_key",
    "coerce_hit",
    "config_diff",
    "fingerprint",
    "key_function",
    "key_name",
    "label_matcher",
    "light_of",
    "map_hits",
    "plain",
    "plain_hit",
    "plugin_of",
    "plugins",
    "read_log",
    "recorder_or_new",
    "register_adapter",
    "run_retriever",
    "stages_of",
    "state_digest",
    "suggest_key",
    "text_hash",
]
