"""Retrieval quality in production (floor 9, above capture and comparison): live windows
of what a Recorder captures, with drift alerts against a baseline (:class:`Monitor`),
exports to OpenTelemetry, Prometheus and MLflow, and online comparison of two retrievers
by interleaving (:func:`interleave`, :func:`interleaving_result`)."""

from .monitor import Alert, Monitor
from .windows import Drift, Window

__all__ = ["Alert", "Drift", "Monitor", "Window"]
