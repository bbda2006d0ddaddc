"""Closing a window (:class:`WindowCloser`, the Monitor's base): the labelled retrievals
scored, a sample graded by the model judge, every signal tested against the baseline
(or the window added to it), an :class:`Alert` raised when a signal moved (callbacks and a
log line), and the window handed to each exporter. A fault in any of these is counted and
logged once; the window still closes."""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..settings import Statistics
from .drift import compare
from .groups import DriftTests, ModelJudge
from .quality import Estimator, judged_values, labelled_values
from .setup import Labels
from .windows import JUDGED, Drift, Samples, Window, WindowState, signals_of

log = logging.getLogger("ranklens")


@dataclass
class Alert:
    """Signals of one window that moved away from the baseline: ``monitor`` (the monitor's
    name), ``window`` (its :class:`~.windows.Window`), ``drifted`` (its drifted
    :class:`~.windows.Drift` records, most significant first) and ``message``, the log line.
    :meth:`to_dict` is JSON-ready; :meth:`to_pandas` has a row per drifted signal."""

    monitor: str
    window: Window
    drifted: list[Drift]
    message: str

    def to_dict(self) -> dict[str, Any]:
        """The alert, JSON-ready: its window as :meth:`Window.to_dict` gives it."""
        return {
            "monitor": self.monitor,
            "window": self.window.to_dict(),
            "drifted": [d.to_dict() for d in self.drifted],
            "message": self.message,
        }

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame``, one row per drifted signal: the monitor, the window's
        label, start and end, and the drift test's fields."""
        import pandas as pd

        head = {"monitor": self.monitor, "window": self.window.label,
                "start": self.window.start, "end": self.window.end}  # fmt: skip
        return pd.DataFrame([{**head, **d.to_dict()} for d in self.drifted])


class WindowCloser:
    """What the :class:`~.monitor.Monitor` does when a window closes (its base; the
    attributes below are the Monitor's, set when it is made)."""

    name: str
    labels: Labels | None
    judge: ModelJudge | None
    estimator: Estimator
    relevance_level: int
    stats: Statistics
    drift: DriftTests
    signals: list[str]
    size: float | None
    counters: dict[str, int]
    baseline: Samples | None
    windows: deque[Window]
    alerts: deque[Alert]
    on_alert: list[Callable[[Alert], Any]]
    exporters: list[Any]
    export_failures: dict[str, int]
    _warned: set[str]
    _closed_now: list[Window]
    _baseline_parts: list[Samples]
    _baseline_windows: int

    def _fault(self, what: str, exc: BaseException, counter: str = "internal_errors") -> None:
        self.counters[counter] = self.counters.get(counter, 0) + 1
        if what not in self._warned:
            self._warned.add(what)
            log.warning("ranklens Monitor %r: %s failed (%s: %s); counted, the app goes on",
                        self.name, what, type(exc).__name__, exc)  # fmt: skip

    def _close(self, st: WindowState, partial: bool = False) -> Window:
        counts = dict(st.counts)
        lat, scores = st.latency_ms.array(), st.top_score.array()
        values: dict[str, np.ndarray] = {}
        metrics: dict[str, float] = {}
        if self.labels is not None and self.labels.metrics:
            items = st.labelled.items
            counts["labelled_scored"] = len(items)
            if items:
                try:
                    values.update(
                        labelled_values(
                            self.labels.qrels, items, self.labels.metrics, self.relevance_level
                        )
                    )
                except Exception as exc:
                    self._fault("scoring the labelled retrievals", exc)
            metrics = {m: float(values[m].mean()) if m in values else math.nan
                       for m in self.labels.metrics}  # fmt: skip
        judged = (self._judge(self.judge, st, values)
                  if self.judge is not None and st.judge.items else None)  # fmt: skip
        start = st.start if st.start is not None else st.first_time
        end = st.end if st.end is not None else st.last_time
        sig = signals_of(counts, lat, scores, {JUDGED: values[JUDGED]} if JUDGED in values else {})
        w = Window(st.index, start, end, counts, sig, dict(st.error_types), metrics=metrics,
                   partial=partial, judged=judged)  # fmt: skip
        w.samples = Samples(counts, lat, scores, values)
        if self.baseline is not None:
            w.role = "tested"
            w.drift = compare(w.samples, self.baseline, self.signals, self.stats.alpha,
                              self.drift.min_samples)  # fmt: skip
        elif counts["retrievals"] and self._baseline_windows:
            w.role = "baseline"
            self._baseline_parts.append(w.samples)
            if len(self._baseline_parts) >= self._baseline_windows:
                self.baseline = Samples.pooled(self._baseline_parts)
                self._baseline_parts = []
        w.samples = None
        w.label = (f"{_clock_text(start)}-{_clock_text(end)}" if self.size
                   else f"{self.counters['windows'] + 1}")  # fmt: skip
        self.windows.append(w)
        self._closed_now.append(w)
        self.counters["windows"] += 1
        if w.alert:
            self._raise(w)
        for exp in self.exporters:
            try:
                exp.export(w, self) if hasattr(exp, "export") else exp(w)
            except Exception as exc:
                self._export_fault(exp, exc)
        return w

    def _judge(self, judge: ModelJudge, st: WindowState,
               values: dict[str, np.ndarray]) -> dict[str, float] | None:  # fmt: skip
        try:
            j, h, failed = judged_values(
                judge.judge, st.judge.items, self.labels.graded if self.labels else None,
                relevance_level=self.relevance_level, calls=judge.calls,
            )  # fmt: skip
        except Exception as exc:
            self._fault("the model judge", exc)
            return None
        ok = ~np.isnan(j)
        both = ok & ~np.isnan(h)
        values[JUDGED] = j[ok]
        try:
            est, lo, hi = self.estimator(j[ok], j[both], h[both])
        except Exception as exc:
            self._fault("the estimator", exc)
            est = lo = hi = math.nan
        return {"estimate": float(est), "low": float(lo), "high": float(hi),
                "judged": int(ok.sum()), "labelled": int(both.sum()), "failed": failed}  # fmt: skip

    def _raise(self, w: Window) -> None:
        drifted = w.drifted
        message = (
            f"ranklens Monitor {self.name!r}: drift in window {w.label} ({w.retrievals} "
            "retrievals): " + "; ".join(d.describe() for d in drifted)
        )
        alert = Alert(self.name, w, drifted, message)
        self.alerts.append(alert)
        self.counters["alerts"] += 1
        log.warning(message)
        for fn in self.on_alert:
            try:
                fn(alert)
            except Exception as exc:
                self._fault("an alert callback", exc, "alert_failures")

    def _export_fault(self, exp: Any, exc: BaseException) -> None:
        name = getattr(exp, "name", None) or type(exp).__name__
        self.export_failures[name] = self.export_failures.get(name, 0) + 1
        if name not in self._warned:
            self._warned.add(name)
            log.warning("ranklens Monitor %r: exporter %s failed (%s: %s); counted, the app "
                        "goes on", self.name, name, type(exc).__name__, exc)  # fmt: skip

    # ------------------------------------------------------------ control and reading


def _clock_text(t: float) -> str:
    return time.strftime("%H:%M", time.localtime(t)) if math.isfinite(t) else "?"
