"""Retrieval quality in production (floor 9, above capture, comparison and judgments):
live windows of what a Recorder captures, with drift alerts against a baseline
(:class:`Monitor`, :mod:`.drift`), exports to OpenTelemetry, Prometheus and MLflow
(:mod:`.exporters`), and the online comparison of two retrievers by interleaving
(:func:`interleave`, :func:`interleaving_result`, simulated users in :mod:`.clicks`).
The Monitor's settings come in groups (:class:`DriftTests`, :class:`ModelJudge`,
:class:`Windowing`, and :class:`ranklens.Statistics` for its false-alarm rate and seed)."""

from .clicks import INFORMATIONAL, NAVIGATIONAL, CascadeUser
from .exporters import MlflowExporter, OTelExporter, PrometheusExporter
from .groups import DriftTests, ModelJudge, Windowing
from .interleaving import Interleaving, interleave
from .monitor import Monitor
from .preference import InterleavingResult, interleaving_result
from .windows import Alert, Drift, Window, windows_frame

__all__ = [
    "INFORMATIONAL", "NAVIGATIONAL", "Alert", "CascadeUser", "Drift", "DriftTests",
    "Interleaving", "InterleavingResult", "MlflowExporter", "ModelJudge", "Monitor",
    "OTelExporter", "PrometheusExporter", "Window", "Windowing", "interleave",
    "interleaving_result", "windows_frame",
]  # fmt: skip
