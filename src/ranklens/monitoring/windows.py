"""What one window of live traffic holds while it is open (:class:`WindowState`), and what
is kept of it once closed (:class:`Window`).

An open window counts events (retrievals, failures, timeouts, empty results, retrievals
with an id the index does not know, retrievals of a labelled query) and keeps uniform
reservoir samples (Vitter's algorithm R) of the latencies, the top scores, the labelled
retrievals and the retrievals a model judge will grade, so its memory is bounded whatever
the traffic. A closed :class:`Window` keeps the summary and, until it has been tested
(or while it is part of the baseline), the samples.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RATE_SIGNALS = {
    "error_rate": ("errors", "retrievals", "retrievals that failed"),
    "timeout_rate": ("timeouts", "retrievals", "retrievals that timed out"),
    "empty_rate": ("empty", "ok", "successful retrievals with no hit"),
    "unknown_rate": ("unknown", "with_hits", "retrievals with an id the index does not know"),
    "labelled_rate": ("labelled", "retrievals", "retrievals of a labelled query"),
}
"""Rate signals: ``name -> (event count, trials count, meaning)``."""

DISTRIBUTION_SIGNALS = {
    "latency": ("latency_ms", "latency of successful retrievals (ms)"),
    "top_score": ("top_score", "score of the first hit"),
}
"""Distribution signals: ``name -> (reservoir, meaning)``."""

JUDGED = "judged_relevance"
"""The model judge's signal: per judged retrieval, the share of its top hits graded
relevant."""


class Reservoir:
    """A uniform sample of at most ``size`` of the values added (algorithm R)."""

    __slots__ = ("items", "rng", "seen", "size")

    def __init__(self, size: int, rng: np.random.Generator):
        self.size, self.rng, self.seen = size, rng, 0
        self.items: list[Any] = []

    def add(self, item: Any) -> None:
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(item)
        else:
            j = int(self.rng.integers(self.seen))
            if j < self.size:
                self.items[j] = item

    def array(self) -> np.ndarray:
        return np.asarray(self.items, dtype=np.float64)


@dataclass
class Event:
    """One retrieval as the monitor sees it: wall time, query, query id, latency (ms),
    error type (None when it succeeded), mapped document ids, top score, hit texts (for
    a judge; None unless one is set)."""

    time: float
    query: str
    query_id: str | None
    latency_ms: float
    error: str | None
    doc_ids: list[str]
    top_score: float | None
    texts: list[str | None] | None = None


class WindowState:
    """An open window (see the module docstring)."""

    def __init__(self, index: int, start: float | None, end: float | None, samples: int,
                 rng: np.random.Generator):  # fmt: skip
        self.index, self.start, self.end = index, start, end
        self.counts = dict.fromkeys(
            ("retrievals", "ok", "errors", "timeouts", "empty", "with_hits", "unknown",
             "labelled", "hits", "unknown_hits", "late", "skewed"), 0,
        )  # fmt: skip
        self.error_types: dict[str, int] = {}
        self.first_time = math.inf
        self.last_time = -math.inf
        self.latency_ms = Reservoir(samples, rng)
        self.top_score = Reservoir(samples, rng)
        self.labelled = Reservoir(samples, rng)  # (label query id, doc ids)
        self.judge = Reservoir(samples, rng)  # (query, label query id or None, [(doc, text)])

    def add(self, ev: Event, label: str | None, known: Any, judge_depth: int,
            judge_take: bool) -> None:  # fmt: skip
        c = self.counts
        c["retrievals"] += 1
        self.first_time = min(self.first_time, ev.time)
        self.last_time = max(self.last_time, ev.time)
        if label is not None:
            c["labelled"] += 1
        if ev.error is not None:
            c["errors"] += 1
            self.error_types[ev.error] = self.error_types.get(ev.error, 0) + 1
            if "timeout" in ev.error.lower():
                c["timeouts"] += 1
        else:
            c["ok"] += 1
            if math.isfinite(ev.latency_ms):
                self.latency_ms.add(ev.latency_ms)
        if ev.error is not None or not ev.doc_ids:
            c["empty"] += ev.error is None
            if label is not None:  # a labelled query that failed or found nothing scores 0
                self.labelled.add((label, ()))
            return
        c["with_hits"] += 1
        c["hits"] += len(ev.doc_ids)
        if known is not None:
            unknown = sum(d not in known for d in ev.doc_ids)
            c["unknown_hits"] += unknown
            c["unknown"] += unknown > 0
        if ev.top_score is not None and math.isfinite(ev.top_score):
            self.top_score.add(ev.top_score)
        if label is not None:
            self.labelled.add((label, tuple(ev.doc_ids)))
        if judge_take and ev.texts is not None:
            top = [(d, t) for d, t in zip(ev.doc_ids, ev.texts) if t][:judge_depth]
            if top:
                self.judge.add((ev.query, label, top))


@dataclass
class Samples:
    """What the drift tests compare: counts and samples of one window or of the baseline
    (``values``: per-retrieval values of each labelled metric and of the judge)."""

    counts: dict[str, int]
    latency_ms: np.ndarray
    top_score: np.ndarray
    values: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def pooled(cls, parts: list[Samples]) -> Samples:
        counts = {k: sum(p.counts.get(k, 0) for p in parts) for k in parts[0].counts}
        names = {n for p in parts for n in p.values}
        return cls(
            counts,
            np.concatenate([p.latency_ms for p in parts]),
            np.concatenate([p.top_score for p in parts]),
            {n: np.concatenate([p.values[n] for p in parts if n in p.values]) for n in names},
        )


@dataclass
class Drift:
    """One signal of one window against the baseline: the window's and the baseline's
    value, the test (``"exact"`` rate test, ``"ks"``, ``"welch"``) and its statistic, the
    p-value, the Holm-adjusted p-value over the window's signals, and whether it drifted
    (``direction``: ``"up"`` or ``"down"``). ``n``/``n_baseline``: the sample sizes."""

    signal: str
    test: str
    value: float
    baseline: float
    statistic: float
    p: float
    p_adjusted: float = math.nan
    drifted: bool = False
    n: int = 0
    n_baseline: int = 0

    @property
    def direction(self) -> str:
        """``"up"`` when the window's value is above the baseline's, else ``"down"``."""
        return "up" if self.value > self.baseline else "down"

    def describe(self) -> str:
        """``top_score 12.31 -> 7.02 (KS D=0.41, p=3e-12)``."""
        stat = {"exact": "exact test", "ks": f"KS D={self.statistic:.2f}",
                "welch": f"Welch t={self.statistic:.1f}"}[self.test]  # fmt: skip
        return (
            f"{self.signal} {_num(self.baseline)} -> {_num(self.value)} "
            f"({stat}, p={self.p_adjusted:.2g} Holm)"
        )

    def to_dict(self) -> dict[str, Any]:
        """The test's fields, JSON-ready."""
        return {
            "signal": self.signal, "test": self.test, "value": self.value,
            "baseline": self.baseline, "statistic": self.statistic, "p": self.p,
            "p_adjusted": self.p_adjusted, "drifted": self.drifted, "n": self.n,
            "n_baseline": self.n_baseline,
        }  # fmt: skip


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "nan"
    return f"{x:.4g}" if x == 0 or abs(x) >= 1e-3 else f"{x:.2e}"


@dataclass
class Window:
    """A closed window: ``index``; ``start``/``end`` (wall time for time windows, else the
    first and last retrieval's times); ``counts`` (retrievals, ok, errors, timeouts,
    empty, with_hits, unknown, labelled, hits, unknown_hits, late, skewed); ``signals``
    (rates, latency and top-score quantiles, each labelled metric's mean and the judged
    estimate); ``drift`` (signal -> :class:`Drift`, empty for baseline windows or before
    a baseline exists); ``role``: ``"baseline"`` or ``"tested"`` (``"untested"`` while no
    baseline exists); ``partial``: closed early (by ``close()``/``flush(close=True)``)."""

    index: int
    start: float
    end: float
    counts: dict[str, int]
    signals: dict[str, float]
    error_types: dict[str, int] = field(default_factory=dict)
    drift: dict[str, Drift] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    role: str = "untested"
    partial: bool = False
    judged: dict[str, float] | None = None
    samples: Samples | None = field(default=None, repr=False)
    label: str = ""

    @property
    def retrievals(self) -> int:
        return self.counts["retrievals"]

    @property
    def drifted(self) -> list[Drift]:
        """The signals that drifted, most significant first."""
        return sorted((d for d in self.drift.values() if d.drifted), key=lambda d: d.p_adjusted)

    @property
    def alert(self) -> bool:
        return bool(self.drifted)

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` of this window's drift tests, one row per signal (as
        :meth:`Drift.to_dict`; empty before a baseline exists)."""
        import pandas as pd

        return pd.DataFrame([d.to_dict() for d in self.drift.values()])

    def to_dict(self) -> dict[str, Any]:
        """Everything but the samples, JSON-ready."""
        return {
            "index": self.index, "label": self.label, "start": self.start, "end": self.end,
            "role": self.role,
            "partial": self.partial, "counts": dict(self.counts), "signals": dict(self.signals),
            "error_types": dict(self.error_types), "metrics": dict(self.metrics),
            "judged": self.judged,
            "drift": {k: d.to_dict() for k, d in self.drift.items()},
        }  # fmt: skip

    def summary_line(self) -> str:
        """One line: the window's size, rates, latency and quality, and any drift."""
        s, c = self.signals, self.counts
        parts = [f"window {self.label or self.index}: {c['retrievals']} retrievals"]
        if c["retrievals"]:
            parts.append(f"{s['error_rate']:.1%} failed")
            if c["ok"]:  # the empty share is of successful retrievals: none, no share
                parts.append(f"{s['empty_rate']:.1%} empty")
            if math.isfinite(s.get("latency_p95", math.nan)):
                parts.append(f"p95 {s['latency_p95']:.1f} ms")
            for name, value in self.metrics.items():
                if math.isfinite(value):
                    parts.append(f"{name} {value:.3f} (n={c.get('labelled_scored', 0)})")
        if self.drifted:
            parts.append("DRIFT: " + "; ".join(d.describe() for d in self.drifted))
        return ", ".join(parts)


def windows_frame(windows: Iterable[Window]) -> Any:
    """A ``pandas.DataFrame`` of closed windows, one row each: ``index``, ``label``,
    ``start``, ``end``, ``role``, ``partial``, ``retrievals``, ``alert``, ``drifted`` (the
    drifted signals, most significant first, comma-separated), then every signal and
    labelled metric of the window as a column."""
    import pandas as pd

    rows = []
    for w in windows:
        rows.append({
            "index": w.index, "label": w.label, "start": w.start, "end": w.end,
            "role": w.role, "partial": w.partial, "retrievals": w.retrievals,
            "alert": w.alert, "drifted": ", ".join(d.signal for d in w.drifted),
            **w.signals, **w.metrics,
        })  # fmt: skip
    return pd.DataFrame(rows)


def signals_of(counts: dict[str, int], latency: np.ndarray, scores: np.ndarray,
               values: dict[str, np.ndarray]) -> dict[str, float]:  # fmt: skip
    """The summary values of a window: every rate (NaN without trials), latency p50, p95,
    p99, top-score p10, p50, p90 and mean, and each per-retrieval mean."""
    out: dict[str, float] = {}
    for name, (events, trials, _) in RATE_SIGNALS.items():
        out[name] = counts[events] / counts[trials] if counts[trials] else math.nan
    out["unknown_hit_share"] = (
        counts["unknown_hits"] / counts["hits"] if counts["hits"] else math.nan
    )
    for q in (50, 95, 99):
        out[f"latency_p{q}"] = float(np.percentile(latency, q)) if len(latency) else math.nan
    for q in (10, 50, 90):
        out[f"top_score_p{q}"] = float(np.percentile(scores, q)) if len(scores) else math.nan
    out["top_score_mean"] = float(scores.mean()) if len(scores) else math.nan
    for name, v in values.items():
        out[name] = float(v.mean()) if len(v) else math.nan
    return out


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
