"""A closed window as metric points, computed once for every exporter (OpenTelemetry,
Prometheus, MLflow).

Names follow the OpenTelemetry semantic-convention style (there is no convention for
retrieval yet): a ``ranklens.`` namespace, dotted lower-case names, ratios in unit ``1``
named ``*.ratio``, durations in seconds named ``*.duration``, counts in ``{retrieval}``,
and the standard ``error.type`` attribute on failed retrievals. Every point carries
``ranklens.monitor`` (the monitor's name). Prometheus names are derived as the
OpenTelemetry-to-Prometheus compatibility rules say: dots become underscores, unit
``s`` adds ``_seconds``, counters end in ``_total``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .windows import JUDGED, Window


@dataclass(frozen=True)
class Point:
    """One value: ``name``, ``unit``, ``kind`` (``"gauge"`` or ``"counter"``, a counter's
    value being the running total), ``description``, ``attributes``."""

    name: str
    unit: str
    kind: str
    description: str
    value: float
    attributes: dict[str, Any] = field(default_factory=dict)


RATES = {
    "error_rate": ("ranklens.window.error.ratio", "share of retrievals that failed"),
    "timeout_rate": ("ranklens.window.timeout.ratio", "share of retrievals that timed out"),
    "empty_rate": ("ranklens.window.empty.ratio", "share of successful retrievals with no hit"),
    "unknown_rate": (
        "ranklens.window.unknown.ratio",
        "share of retrievals returning an id the index should not hold",
    ),
    "labelled_rate": ("ranklens.window.labelled.ratio", "share of retrievals of a labelled query"),
}

DURATION = ("ranklens.retrieval.duration", "s", "duration of a retrieval")
"""The histogram of every retrieval's duration: name, unit, description."""

COUNTERS = {
    "retrievals": ("ranklens.monitor.retrievals", "{retrieval}", "retrievals the monitor saw"),
    "dropped": ("ranklens.monitor.dropped", "{retrieval}", "retrievals dropped: queue full"),
    "late": ("ranklens.monitor.late", "{retrieval}", "retrievals whose window had closed"),
    "skewed": ("ranklens.monitor.skewed", "{retrieval}", "retrievals timed ahead of the clock"),
    "alerts": ("ranklens.monitor.alerts", "{alert}", "windows with a drifted signal"),
    "export_failures": ("ranklens.monitor.export.failures", "{failure}", "failed exports"),
    "malformed": ("ranklens.monitor.malformed", "{field}",
                  "fields of records that could not be read, set aside"),
    "rejected": ("ranklens.monitor.rejected", "{retrieval}", "records that could not be read"),
}  # fmt: skip


def window_points(window: Window, status: dict[str, Any], monitor: str) -> list[Point]:
    """The gauges of ``window`` and the monitor's running counters (``status``: what
    :meth:`~ranklens.Monitor.status` returns). NaN values (a rate without trials, a
    quantile without samples) are left out."""
    base = {"ranklens.monitor": monitor}
    out = [Point("ranklens.window.retrievals", "{retrieval}", "gauge",
                 "retrievals in the last closed window", window.retrievals, base)]  # fmt: skip
    s = window.signals
    for key, (name, desc) in RATES.items():
        out.append(Point(name, "1", "gauge", desc, s.get(key, math.nan), base))
    for q in (50, 95, 99):
        value = s.get(f"latency_p{q}", math.nan) / 1000
        desc = "latency quantile of successful retrievals"
        out.append(Point("ranklens.window.duration", "s", "gauge", desc, value,
                         {**base, "quantile": q / 100}))  # fmt: skip
    for q in (10, 50, 90):
        value, desc = s.get(f"top_score_p{q}", math.nan), "quantile of the top hit's score"
        out.append(Point("ranklens.window.top_score", "1", "gauge", desc, value,
                         {**base, "quantile": q / 100}))  # fmt: skip
    for metric, value in window.metrics.items():
        out.append(Point("ranklens.window.metric", "1", "gauge",
                         "mean of a metric over the window's labelled retrievals", value,
                         {**base, "ranklens.metric": metric}))  # fmt: skip
    if window.judged:
        out.append(Point(f"ranklens.window.{JUDGED}", "1", "gauge",
                         "estimated share of top hits a model judge grades relevant",
                         window.judged["estimate"], base))  # fmt: skip
    for signal, d in window.drift.items():
        out.append(Point("ranklens.window.drift", "1", "gauge",
                         "1 when the signal drifted from the baseline (Holm-adjusted test)",
                         float(d.drifted), {**base, "ranklens.signal": signal}))  # fmt: skip
    for key, (name, unit, desc) in COUNTERS.items():
        value = status.get(key, 0)
        value = sum(value.values()) if isinstance(value, dict) else value
        out.append(Point(name, unit, "counter", desc, float(value), base))
    return [p for p in out if math.isfinite(p.value)]


def prometheus_name(point: Point) -> str:
    """``ranklens.window.duration`` (s) -> ``ranklens_window_duration_seconds``; counters
    end in ``_total``."""
    name = point.name.replace(".", "_")
    if point.unit == "s" and not name.endswith("_seconds"):
        name += "_seconds"
    if point.kind == "counter":
        name += "_total"
    return name


def _label(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(points: list[Point]) -> str:
    """The Prometheus text exposition format (version 0.0.4) of ``points``: one ``# HELP``
    and ``# TYPE`` per name, then its samples."""
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(prometheus_name(p), []).append(p)
    lines = []
    for name, pts in groups.items():
        lines.append(f"# HELP {name} {pts[0].description}")
        lines.append(f"# TYPE {name} {pts[0].kind}")
        for p in pts:
            labels = ",".join(
                f'{k.replace(".", "_")}="{_label(v)}"' for k, v in p.attributes.items()
            )
            lines.append(f"{name}{{{labels}}} {p.value!r}")
    return "\n".join(lines) + "\n"
