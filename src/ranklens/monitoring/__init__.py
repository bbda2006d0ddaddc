"""Retrieval quality in production (floor 9, above capture, comparison and judgments):
live windows of what a Recorder captures, with drift alerts against a baseline
(:class:`Monitor`, :mod:`.drift`), exports to OpenTelemetry, Prometheus and MLflow
(:mod:`.exporters`), and the online comparison of two retrievers by interleaving
(:func:`interleave`, :func:`interleaving_result`, simulated users in :mod:`.clicks`)."""

from .clicks import INFORMATIONAL, NAVIGATIONAL, CascadeUser
from .closing import Alert
from .exporters import MlflowExporter, OTelExporter, PrometheusExporter
from .interleaving import Interleaving, interleave
from .monitor import Monitor
from .preference import InterleavingResult, interleaving_result
from .windows import Drift, Window

__all__ = [
    "INFORMATIONAL", "NAVIGATIONAL", "Alert", "CascadeUser", "Drift", "Interleaving",
    "InterleavingResult", "MlflowExporter", "Monitor", "OTelExporter", "PrometheusExporter",
    "Window", "interleave", "interleaving_result",
]  # fmt: skip
