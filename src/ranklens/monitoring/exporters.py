"""Where closed windows go: OpenTelemetry metrics (:class:`OTelExporter`), Prometheus text
(:class:`PrometheusExporter`: a file for node_exporter's textfile collector and/or a tiny
``/metrics`` endpoint), MLflow (:class:`MlflowExporter`). Each turns the same
:func:`~.points.window_points` into its own form. They run in the monitor's thread; a
failure is counted by the monitor (``status()["export_failures"]``) and never reaches
the app.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..declared import POSITIVE, Range, count, data, declare, path, text
from ..errors import require
from ..version import __version__
from .options import numbers_list
from .points import COUNTERS, DURATION, prometheus_text, window_points
from .windows import Event, Window

log = logging.getLogger("ranklens")

DURATION_BUCKETS: tuple[float, ...] = (
    0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008,
    0.01, 0.0125, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.08,
    0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8,
    1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 60.0,
)  # fmt: skip
"""Bucket bounds (seconds) of the retrieval duration histogram: from 0.5 ms to a minute,
1 ms apart up to 3 ms, then each at most a third above the one before up to 10 s, so any
quantile from 3 ms to 10 s read from the buckets is within a third of its value. The SDK's
default bounds (0, 5, 10, 25, ..., 10000) are meant for milliseconds: in seconds every
retrieval under 5 s would share one bucket. Given as OpenTelemetry's advisory bounds
(``explicit_bucket_boundaries_advisory``, OpenTelemetry API >= 1.23), which a View the app
configures still overrides."""

OTEL = declare("OTelExporter", {
    "meter_provider": data("an OpenTelemetry MeterProvider (None: the global one)"),
    "boundaries": numbers_list(DURATION_BUCKETS, POSITIVE, "bucket bounds (seconds) of the "
                               "retrieval duration histogram", increasing=True),
})  # fmt: skip
"""Every parameter of :class:`OTelExporter`."""

PROMETHEUS = declare("PrometheusExporter", {
    "path": path(None, "the file written for node_exporter's textfile collector", none=True),
    "port": count(None, Range(0, 65535), "the /metrics endpoint's port (0: a free one)",
                  none=True),
    "host": text("127.0.0.1", "the endpoint's address"),
})  # fmt: skip
"""Every parameter of :class:`PrometheusExporter`."""

MLFLOW = declare("MlflowExporter", {
    "run_id": text(None, "the MLflow run logged into (None: a new run)", none=True),
    "experiment": text(None, "the new run's experiment (None: the default)", none=True),
    "run_name": text("ranklens-monitor", "the new run's name"),
})  # fmt: skip
"""Every parameter of :class:`MlflowExporter`."""


def duration_view(boundaries: Sequence[float] = DURATION_BUCKETS) -> Any:
    """An OpenTelemetry SDK ``View`` giving the retrieval duration histogram
    ``boundaries`` (seconds): for a ``MeterProvider(views=[...])`` where the API is older
    than advisory bounds, or to override them."""
    from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View

    return View(instrument_name=DURATION[0],
                aggregation=ExplicitBucketHistogramAggregation(list(boundaries)))  # fmt: skip


class OTelExporter:
    """Window gauges and running counters as OpenTelemetry metrics, and every retrieval's
    latency in the ``ranklens.retrieval.duration`` histogram (unit ``s``, bucket bounds
    ``boundaries``: :data:`DURATION_BUCKETS`; ``error.type`` on failures), through
    ``meter_provider`` (default: the global one your app configures, e.g. with an OTLP
    exporter). Needs ``ranklens[otel]``."""

    name = "opentelemetry"

    @OTEL.checks
    def __init__(self, meter_provider: Any = None,
                 boundaries: Sequence[float] = DURATION_BUCKETS):  # fmt: skip
        metrics: Any = require("opentelemetry.metrics", "otel", "OTelExporter")
        provider = meter_provider or metrics.get_meter_provider()
        self.meter = provider.get_meter("ranklens", __version__)
        self.boundaries = tuple(boundaries)
        name, unit, description = DURATION
        try:
            self.duration = self.meter.create_histogram(
                name, unit=unit, description=description,
                explicit_bucket_boundaries_advisory=list(self.boundaries),
            )  # fmt: skip
        except TypeError:  # an API before advisory bounds (< 1.23): the SDK's defaults
            self.duration = self.meter.create_histogram(name, unit=unit, description=description)
            log.warning(
                "ranklens OTelExporter: this OpenTelemetry API cannot advise bucket bounds; "
                "add ranklens.monitoring.exporters.duration_view() to your MeterProvider's "
                "views, else %s has the SDK's millisecond bounds",
                name,
            )
        self._instruments: dict[str, Any] = {}
        self._sent: dict[str, float] = {}

    def _instrument(self, name: str, kind: str, unit: str, description: str) -> Any:
        inst = self._instruments.get(name)
        if inst is None:
            make = self.meter.create_counter if kind == "counter" else self.meter.create_gauge
            inst = self._instruments[name] = make(name, unit=unit, description=description)
        return inst

    def observe(self, ev: Event, monitor: Any) -> None:
        attrs = {"ranklens.monitor": monitor.name}
        if ev.error is not None:
            attrs["error.type"] = ev.error
        if math.isfinite(ev.latency_ms) and ev.latency_ms >= 0:  # a bad one was counted
            self.duration.record(ev.latency_ms / 1000, attrs)

    def export(self, window: Window, monitor: Any) -> None:
        for p in window_points(window, monitor.status(), monitor.name):
            inst = self._instrument(p.name, p.kind, p.unit, p.description)
            if p.kind == "counter":  # counters take the increase since the last export
                key = p.name
                delta = p.value - self._sent.get(key, 0.0)
                if delta > 0:
                    inst.add(delta, p.attributes)
                    self._sent[key] = p.value
            else:
                inst.set(p.value, p.attributes)


class PrometheusExporter:
    """The last closed window and the running counters in Prometheus' text format:
    written to ``path`` (atomically, for node_exporter's textfile collector) and/or served
    at ``http://host:port/metrics`` (``port=0`` picks a free port: see :attr:`url`)."""

    name = "prometheus"

    @PROMETHEUS.checks
    def __init__(self, path: str | Path | None = None, port: int | None = None,
                 host: str = "127.0.0.1"):  # fmt: skip
        self.path = None if path is None else Path(path)
        self.text = ""
        self._server: ThreadingHTTPServer | None = None
        if port is not None:
            exporter = self

            class Handler(BaseHTTPRequestHandler):
                def do_GET(self) -> None:
                    if str(self.path).split("?")[0] not in ("/metrics", "/"):
                        self.send_error(404)
                        return
                    body = exporter.text.encode("utf-8")
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

                def log_message(self, *args: Any) -> None:
                    return None

            self._server = ThreadingHTTPServer((host, port), Handler)
            self._server.daemon_threads = True
            threading.Thread(target=self._server.serve_forever, daemon=True,
                             name="ranklens-prometheus").start()  # fmt: skip

    @property
    def url(self) -> str | None:
        """The endpoint's address, or None without one."""
        if self._server is None:
            return None
        host, port = self._server.server_address[:2]
        shown_host = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown_host}:{port}/metrics"

    def export(self, window: Window, monitor: Any) -> None:
        self.text = prometheus_text(window_points(window, monitor.status(), monitor.name))
        if self.path is not None:
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(self.text, encoding="utf-8")
            os.replace(tmp, self.path)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class MlflowExporter:
    """Each closed window's signals, metrics and drift flags logged to an MLflow run as
    metrics at step = the window's number (keys made MLflow-safe as
    :func:`ranklens.render.mlflow.mlflow_key` makes them: ``ndcg@10`` -> ``ndcg_10``).
    ``run_id``: log into that run; else a new run named ``run_name`` in ``experiment``.
    Needs ``ranklens[mlflow]``."""

    name = "mlflow"

    @MLFLOW.checks
    def __init__(self, run_id: str | None = None, experiment: str | None = None,
                 run_name: str = "ranklens-monitor"):  # fmt: skip
        mlflow: Any = require("mlflow", "mlflow", "MlflowExporter")
        self.client = mlflow.tracking.MlflowClient()
        if run_id is None:
            exp_id = "0"
            if experiment is not None:
                found = self.client.get_experiment_by_name(experiment)
                exp_id = found.experiment_id if found else self.client.create_experiment(experiment)
            run_id = self.client.create_run(exp_id, run_name=run_name).info.run_id
        self.run_id = run_id
        self.step = 0

    def export(self, window: Window, monitor: Any) -> None:
        from mlflow.entities import Metric

        from ..render.mlflow import mlflow_key

        values = {**window.signals, **window.metrics, "retrievals": window.retrievals}
        values.update({f"drift/{k}": float(d.drifted) for k, d in window.drift.items()})
        status = monitor.status()
        values.update({f"monitor/{k}": _total(status[k]) for k in COUNTERS})
        now = int(time.time() * 1000)
        metrics = [Metric(mlflow_key(k), float(v), now, self.step) for k, v in values.items()
                   if v == v]  # fmt: skip
        self.client.log_batch(self.run_id, metrics=metrics)
        self.step += 1


def _total(value: Any) -> float:
    """A counter's value: a number, or the sum of a dict of counts by reason."""
    return float(sum(value.values()) if isinstance(value, dict) else value)


# the public callables the tables check
OTEL.target, PROMETHEUS.target, MLFLOW.target = OTelExporter, PrometheusExporter, MlflowExporter
