"""``ranklens.Monitor``: retrieval quality in production, in windows, with drift alerts.

The Monitor subscribes to a :class:`~ranklens.Recorder` (which the framework hooks fill).
In the app's request path it does one thing: append the record to a bounded queue (a
full queue drops the record and counts it). A background thread takes the records from
the queue every ``interval`` seconds, assigns each to its window by the time the
retrieval started, and closes a window once the clock has passed its end (plus
``lateness`` for retrievals that end after it): then it scores the labelled retrievals,
lets a model judge grade a sample, compares every signal with the baseline
(:mod:`.drift`, Holm over the signals), raises an :class:`~.windows.Alert` (callbacks and a log
line) when one moved, and hands the window to the exporters. Nothing the monitor does
can raise into the app: its faults, the callbacks' and the exporters' are counted
(:meth:`Monitor.status`) and logged once.
"""

from __future__ import annotations

import copy
import itertools
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from typing import Any

import numpy as np

from ..capture import Recorder, Retrieval
from ..settings import Statistics
from .drift import compare
from .groups import DriftTests, ModelJudge, Windowing
from .intake import BAD_TIME, Intake, Rejected
from .options import each_record, rule
from .quality import Estimator, judged_values, labelled_values, uncalibrated
from .setup import (
    CLOSE,
    FLUSH,
    MONITOR,
    OBSERVE,
    REPLAY,
    SET_BASELINE,
    Labels,
    cross_checks,
    default_signals,
    grouped,
    window_of,
)
from .windows import (
    JUDGED,
    Alert,
    Event,
    Samples,
    Window,
    WindowState,
    signals_of,
    windows_frame,
)

log = logging.getLogger("ranklens")


SLICE = 50e-6
"""Seconds of the background thread's work between two moments it gives up the GIL."""

YIELD = 20e-6
"""How long it sleeps then (the operating system's timer rounds this up: tens of µs)."""


class Monitor:
    """Watch live retrievals in windows; see the module docstring and docs/monitoring.md.

    ``source``: a :class:`~ranklens.Recorder`, an Instrumentation a hook returned, or None
    (a new ``Recorder(key, spill=False)`` as ``Monitor.recorder``, to give the hooks).
    ``window``: ``"15m"`` (``"30s"``, ``"1h"``, a ``timedelta``: windows of wall time,
    aligned to the epoch) or an int (windows of that many retrievals). ``labels``: a
    Dataset or qrels: the share of labelled queries, ``metrics`` on the labelled
    retrievals (binary ones counting grades from ``relevance_level``), and (with a corpus)
    the ids the index should know (``corpus=`` ids otherwise).
    ``stats``: a :class:`~ranklens.Statistics` whose ``alpha`` is the family-wise
    false-alarm rate per window over its signals (default 0.001) and ``seed`` the
    sampling seed. ``drift``: a :class:`~.groups.DriftTests` (the signals tested, how many
    windows with traffic form the baseline, the samples behind the tests; a baseline from
    a log of retrievals: :meth:`set_baseline`). ``judge``: a :class:`~.groups.ModelJudge` (or its
    ``(query, passage) -> grade`` callable) grading the top hits of a sample of
    retrievals. ``windowing``: a :class:`~.groups.Windowing` (a background thread or
    :meth:`flush` by hand, lateness, history, queue size, flush interval, clock;
    ``Windowing(background=False)``: no thread, call :meth:`flush` yourself, as tests and
    replays do). ``on_alert``: callables taking an :class:`~.windows.Alert`.
    ``exporters``: objects with ``export(window, monitor)`` (and optionally
    ``observe(event)``, ``close()``), or callables ``f(window)``.

    The flat keywords of 0.2 (``alpha=``, ``seed=``, ``signals=``, ``min_samples=``,
    ``samples=``, ``baseline=``, ``judge_rate=``, ``judge_depth=``, ``judge_concurrency=``,
    ``judge_timeout=``, ``estimator=``, ``lateness=``, ``history=``, ``queue_size=``,
    ``interval=``, ``clock=``, ``background=``) still work for one release, with a
    ``DeprecationWarning`` showing the new spelling; one beside its group's object is a
    :class:`~ranklens.declared.ParameterError` naming both.

    Every parameter is declared in :data:`~.setup.MONITOR` and checked when the monitor is
    made (a :class:`~ranklens.declared.ParameterError` naming it). A record that is not
    well formed never stops the monitor: its unreadable fields are counted by reason
    (``status()["malformed"]``) and a record that cannot be read at all is counted in
    ``status()["rejected"]``.
    """

    @MONITOR.checks
    def __init__(
        self,
        source: Any = None,
        *,
        window: str | int | timedelta = "15m",
        labels: Any = None,
        metrics: Sequence[str] = ("ndcg@10", "recall@10"),
        corpus: Iterable[str] | None = None,
        key: Any = None,
        match: str = "auto",
        relevance_level: int = 1,
        stats: Statistics | None = None,
        drift: DriftTests | None = None,
        judge: ModelJudge | Callable[..., Any] | None = None,
        windowing: Windowing | None = None,
        on_alert: Callable[[Alert], Any] | Sequence[Callable[[Alert], Any]] = (),
        exporters: Sequence[Any] = (),
        name: str = "ranklens",
        **flat: Any,
    ):
        self.name = name
        self.stats, self.drift, self.judge, self.windowing, logged = grouped(
            stats, drift, judge, windowing, flat
        )
        if source is None:
            source = Recorder(key=key or "id", spill=False, name=name)
        rec = getattr(source, "recorder", source)
        if not isinstance(rec, Recorder):
            raise rule("Monitor", "source", "a ranklens Recorder, what a hook's instrument() "
                       "returns, or None", type(source).__name__)  # fmt: skip
        if key is not None and key != rec.key:
            raise rule("Monitor", "key", f"the recorder's key ({rec.key!r}) or None", key)
        cross_checks(labels, match)
        self.recorder: Recorder = rec
        self.size, self.count = window_of(window)
        self.lateness = self.windowing.seconds_late
        self.labels = None if labels is None else Labels(labels, match, metrics, corpus,
                                                         relevance_level)  # fmt: skip
        self.known = self.labels.known if self.labels else (None if corpus is None else set(corpus))
        chosen = self.judge.estimator if self.judge is not None else None
        self.estimator: Estimator = chosen or uncalibrated
        self.relevance_level = relevance_level
        self.signals = default_signals(self.drift.signals, self.labels, self.known, self.judge)
        self.on_alert = [on_alert] if callable(on_alert) else list(on_alert)
        self.exporters = list(exporters)
        self.clock = self.windowing.clock
        needs_ids = bool(self.labels or self.known or self.judge)
        self.intake = Intake(rec.key, rec.clock_offset, ids=needs_ids,
                             texts=self.judge is not None)  # fmt: skip
        self._rng = np.random.default_rng(self.stats.seed)
        self._queue: deque[Any] = deque()
        self._queue_size = self.windowing.queue_size
        self._drops = itertools.count()
        self._lock = threading.RLock()
        self._closed_now: list[Window] = []
        self._open: dict[int, WindowState] = {}
        now = self.clock()
        self._next = 0 if self.count else int(now // self._span)
        self.windows: deque[Window] = deque(maxlen=self.windowing.history)
        self.alerts: deque[Alert] = deque(maxlen=self.windowing.history)
        self.counters = dict.fromkeys(
            ("retrievals", "late", "skewed", "windows", "alerts", "alert_failures",
             "internal_errors", "skipped_windows", "rejected"), 0,
        )  # fmt: skip
        self.rejected: dict[str, int] = {}
        self.export_failures: dict[str, int] = {}
        self._warned: set[str] = set()
        self._baseline_parts: list[Samples] = []
        self.baseline: Samples | None = None
        self._baseline_windows = self.drift.baseline
        if logged is not None:  # the deprecated Monitor(baseline=records)
            self.set_baseline(logged)
        self._unsubscribe = rec.subscribe(self._offer)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.windowing.background:
            self._thread = threading.Thread(
                target=self._run, args=(self.windowing.interval,),
                name=f"ranklens-monitor-{name}", daemon=True,
            )  # fmt: skip
            self._thread.start()

    @property
    def _span(self) -> float:
        """A time window's seconds (0 for windows of a count, never used as a span)."""
        return self.size or 0.0

    # ------------------------------------------------------------ the request path
    def _offer(self, item: Any) -> None:
        """Called in the app's thread for each record: one bounded append, never a wait."""
        if len(self._queue) < self._queue_size:
            self._queue.append(item)
        else:
            next(self._drops)

    @OBSERVE.checks
    def observe(self, records: Iterable[Retrieval]) -> None:
        """Feed retrievals recorded elsewhere (another process, a log) through the same
        bounded queue, timed by their ``started``."""
        for rec in each_record(records, "Monitor.observe", "records"):
            self._offer(rec)

    @property
    def dropped(self) -> int:
        """Records dropped because the queue was full (the app outran the monitor)."""
        return next(copy.copy(self._drops))

    # ------------------------------------------------------------ the worker
    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self._drain()
            self.flush()

    def _drain(self) -> None:
        """The background thread's reading of the queue: records in slices of about
        :data:`SLICE` seconds of work, the GIL given up after each (a short sleep). An app
        thread that wants the GIL back (its retriever done) then waits for one slice at
        most, not for the interpreter's switch interval (5 ms) while a whole backlog is
        read. :meth:`flush` then closes the windows that are due."""
        now = self.clock()
        for _ in range(len(self._queue) + 1):  # what is queued now; later ones next time
            with self._lock:
                try:
                    self._take_queued(now, time.perf_counter() + SLICE)
                except Exception as exc:  # a fault of the monitor: counted, never the app's
                    self._fault("internal", exc)
                if not self._queue:
                    return
            time.sleep(YIELD)

    def _take_queued(self, now: float, until: float = math.inf) -> None:
        """Queued records into their windows, oldest first, until the queue is empty or
        ``time.perf_counter()`` passes ``until``."""
        while self._queue and time.perf_counter() < until:
            self._take_one(self._queue.popleft(), now)

    @FLUSH.checks
    def flush(self, close: bool = False) -> list[Window]:
        """Process what the queue holds now and close the windows that are due (all open
        windows with ``close=True``, marked partial); the windows closed."""
        with self._lock:
            self._closed_now = []
            try:
                now = self.clock()
                self._take_queued(now)
                if self.size:
                    self._tick(now)
                if close:
                    for idx in sorted(self._open):
                        self._close(self._open.pop(idx), partial=True)
                    if self.size:
                        self._next = max(self._next, int(now // self._span) + 1)
            except Exception as exc:  # a fault of the monitor: counted, never the app's
                self._fault("internal", exc)
            return self._closed_now

    def _take_one(self, item: Any, now: float) -> None:
        """One queued record into its window; a record that cannot be read is counted
        (``status()["rejected"]``), never the end of the flush."""
        try:
            ev = self._event(item)
        except Exception as exc:
            self._reject(exc)
            return
        self._assign(ev, now)
        self._observe(ev)

    def _event(self, item: Any) -> Event:
        if isinstance(item, Retrieval):
            return self.intake.from_retrieval(item)
        return self.intake.from_raw(item)

    def _reject(self, exc: BaseException) -> None:
        reason = exc.reason if isinstance(exc, Rejected) else f"unreadable ({type(exc).__name__})"
        self.counters["rejected"] += 1
        self.rejected[reason] = self.rejected.get(reason, 0) + 1
        if not isinstance(exc, Rejected):
            self._fault("reading a record", exc, "internal_errors")

    def _observe(self, ev: Event) -> None:
        for exp in self.exporters:
            observe = getattr(exp, "observe", None)
            if observe is not None:
                try:
                    observe(ev, self)
                except Exception as exc:
                    self._export_fault(exp, exc)

    def _state(self, idx: int) -> WindowState:
        st = self._open.get(idx)
        if st is None:
            start = None if self.count else idx * self._span
            end = None if self.count else (idx + 1) * self._span
            st = self._open[idx] = WindowState(idx, start, end, self.drift.samples, self._rng)
        return st

    def _assign(self, ev: Event, now: float) -> None:
        self.counters["retrievals"] += 1
        label = self.labels.lookup(ev.query_id, ev.query) if self.labels else None
        take = self.judge is not None and self._rng.random() < self.judge.rate
        depth = self.judge.depth if self.judge is not None else 0
        if self.count:
            st = self._state(self._next)
            st.add(ev, label, self.known, depth, take)
            if st.counts["retrievals"] >= self.count:
                self._close(self._open.pop(self._next))
                self._next += 1
            return
        skewed = not math.isfinite(ev.time) or ev.time > now + self.lateness
        if skewed:  # a clock ahead of ours (or no time): counted, timed by our clock
            ev.time = now
        idx = int(ev.time // self._span)
        late = idx < self._next
        if late:  # its window is closed: counted, folded into the oldest open one
            idx = self._next
        st = self._state(idx)
        st.counts["skewed"] += skewed
        st.counts["late"] += late
        self.counters["skewed"] += skewed
        self.counters["late"] += late
        st.add(ev, label, self.known, depth, take)

    def _tick(self, now: float) -> None:
        due = int((now - self.lateness) // self._span)  # windows before this one are due
        if due - self._next > (self.windows.maxlen or 0):  # asleep for long: skip the empty stretch
            for idx in sorted(self._open):
                if idx < due:
                    self._close(self._open.pop(idx))
            skipped = due - self._next - len(self._open)
            self.counters["skipped_windows"] += max(skipped, 0)
            self._next = due
        while self._next < due:
            st = self._open.pop(self._next) if self._next in self._open else None
            self._close(st or self._state_empty(self._next))
            self._next += 1

    def _state_empty(self, idx: int) -> WindowState:
        return WindowState(idx, idx * self._span, (idx + 1) * self._span, 0, self._rng)

    # ------------------------------------------------------------ closing a window
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

    @SET_BASELINE.checks
    def set_baseline(self, source: int | Iterable[Retrieval] = 1) -> None:
        """Start a new baseline: the next ``source`` windows with traffic (after an
        intended change, such as a new retriever), or retrievals (a log of a day
        known to be good) summarised at once."""
        with self._lock:
            self.baseline, self._baseline_parts = None, []
            if isinstance(source, int):
                self._baseline_windows = source
                return
            st = WindowState(-1, None, None, self.drift.samples * 4, self._rng)
            for rec in each_record(source, "Monitor.set_baseline", "source"):
                try:
                    ev = self.intake.from_retrieval(rec)
                except Exception as exc:
                    self._reject(exc)
                    continue
                label = self.labels.lookup(ev.query_id, ev.query) if self.labels else None
                st.add(ev, label, self.known, 0, False)
            values = {}
            if self.labels is not None and st.labelled.items and self.labels.metrics:
                values = labelled_values(self.labels.qrels, st.labelled.items, self.labels.metrics,
                                         self.relevance_level)  # fmt: skip
            self.baseline = Samples(dict(st.counts), st.latency_ms.array(), st.top_score.array(),
                                    values)  # fmt: skip
            self._baseline_windows = 0

    @REPLAY.checks
    def replay(self, records: Iterable[Retrieval]) -> list[Window]:
        """Run retrievals from a log (oldest first) through the windows by their own
        times (event time: a window closes when a later retrieval passes its end plus
        ``lateness``); the last windows are closed at the end. The windows closed."""
        with self._lock:
            self._closed_now = []
            watermark = -math.inf
            for rec in each_record(records, "Monitor.replay", "records"):
                try:
                    ev = self.intake.from_retrieval(rec)
                except Exception as exc:
                    self._reject(exc)
                    continue
                if self.size and not math.isfinite(ev.time) and watermark == -math.inf:
                    self._reject(Rejected(f"{BAD_TIME}, before any timed record"))
                    continue  # else timed by the latest time seen, and counted skewed
                if self.size and watermark == -math.inf and not self._open and not self.windows:
                    self._next = int(ev.time // self._span)
                watermark = max(watermark, ev.time)
                self._assign(ev, watermark)
                self._observe(ev)
                if self.size:
                    self._tick(watermark)
            for idx in sorted(self._open):
                self._close(self._open.pop(idx), partial=True)
            if self.size and math.isfinite(watermark):
                self._next = int(watermark // self._span) + 1
            return self._closed_now

    def status(self) -> dict[str, Any]:
        """Counters: retrievals seen, queued now, dropped (queue full), late and skewed
        records, windows and alerts, failures of callbacks, exporters and the monitor;
        ``malformed``: fields of records set aside, by reason; ``rejected``: records that
        could not be read at all (``rejected_reasons`` says why)."""
        return {**self.counters, "queued": len(self._queue), "dropped": self.dropped,
                "malformed": dict(self.intake.malformed),
                "rejected_reasons": dict(self.rejected),
                "export_failures": dict(self.export_failures),
                "open_windows": len(self._open), "baseline": self.baseline is not None}  # fmt: skip

    def to_pandas(self) -> Any:
        """The closed windows kept, one row each (:func:`~.windows.windows_frame`: their
        label, times, role, retrievals, drifted signals, every signal and metric)."""
        return windows_frame(self.windows)

    def summary_line(self) -> str:
        """The last closed window's line, and the monitor's counters when something was
        lost or failed."""
        last = self.windows[-1].summary_line() if self.windows else "no window closed yet"
        s = self.status()
        lost = {k: s[k] for k in ("dropped", "late", "skewed", "rejected", "internal_errors",
                                  "alert_failures") if s[k]}  # fmt: skip
        for k in ("malformed", "export_failures"):
            if s[k]:
                lost[k] = sum(s[k].values())
        extra = "; " + ", ".join(f"{k} {v}" for k, v in lost.items()) if lost else ""
        return f"ranklens Monitor {self.name!r}: {last}{extra}"

    @CLOSE.checks
    def close(self, flush: bool = True) -> None:
        """Stop watching: unsubscribe, stop the thread, process what is queued, close the
        open windows (partial) when ``flush``, and close the exporters."""
        self._unsubscribe()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if flush:
            self.flush(close=True)
        for exp in self.exporters:
            closer = getattr(exp, "close", None)
            if closer is not None:
                try:
                    closer()
                except Exception as exc:
                    self._export_fault(exp, exc)

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        c = self.counters
        return f"Monitor({self.name!r}: {c['windows']} windows, {c['alerts']} alerts)"


# the public callables the tables check (a method's table: the method, checked before self)
MONITOR.target = Monitor
for _table, _method in (
    (SET_BASELINE, Monitor.set_baseline),
    (OBSERVE, Monitor.observe),
    (REPLAY, Monitor.replay),
    (FLUSH, Monitor.flush),
    (CLOSE, Monitor.close),
):
    _table.target = _method


def _clock_text(t: float) -> str:
    return time.strftime("%H:%M", time.localtime(t)) if math.isfinite(t) else "?"
