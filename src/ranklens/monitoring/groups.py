"""The Monitor's settings in groups, as :class:`ranklens.Statistics` and
:class:`ranklens.Calling` group the shared ones: each a frozen dataclass whose fields are
declared (:mod:`ranklens.declared`) and checked once, when it is made.

* :class:`DriftTests`: which signals are tested, against how many baseline windows, and
  the samples behind the tests;
* :class:`ModelJudge`: the model judge, the share of retrievals it grades, how deep, how it
  is called (:class:`~ranklens.Calling`) and the estimate of its share of relevant hits;
* :class:`Windowing`: how windows are filled, closed and kept (by a background thread or
  by ``flush()``, the queue before them, the flush interval, the clock, the lateness
  allowed, the history kept).

``Monitor(alpha=..., judge_rate=..., lateness=..., baseline=..., background=...)`` (the
flat keywords of 0.2) still work
for one release: :func:`regrouped` applies them with a ``DeprecationWarning`` that shows the
new spelling, and refuses a flat keyword beside its group's object.

>>> from ranklens.monitoring import DriftTests
>>> DriftTests(min_samples=50, samples=1000).min_samples
50
>>> DriftTests(min_samples=50, samples=10)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ranklens.declared.ParameterError: DriftTests: samples must be at least min_samples (50)...
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import timedelta
from typing import Any, TypeVar

from ..declared import (
    AT_LEAST_ONE,
    CALLING,
    POSITIVE,
    PROBABILITY,
    ParameterError,
    Range,
    count,
    declare,
    flag,
    function,
    names,
    number,
    renamed_option,
    shown,
)
from ..settings import Calling, Statistics, outside_stacklevel
from .options import duration, group, rule
from .quality import Estimator

G = TypeVar("G", Statistics, "DriftTests", "ModelJudge", "Windowing")

DRIFT_TESTS = declare("DriftTests", {
    "signals": names(None, "the signals tested (None: every one available)", single=True,
                     none=True),
    "min_samples": count(30, Range(2, None), "values on each side before a distribution is "
                         "tested"),
    "samples": count(2000, AT_LEAST_ONE, "reservoir size of each window's samples (at least "
                     "min_samples)"),
    "baseline": count(1, AT_LEAST_ONE, "windows with traffic that form the baseline (a log "
                      "of retrievals: Monitor.set_baseline)"),
})  # fmt: skip
"""Every field of :class:`DriftTests`."""

JUDGE_CALLS = Calling(concurrency=4, timeout=30.0)
"""How the monitor calls its judge unless told: 4 calls in flight, 30 s each."""

MODEL_JUDGE = declare("ModelJudge", {
    "judge": function("a (query, passage) -> grade model judge"),
    "rate": number(0.05, PROBABILITY, "share of retrievals the judge grades"),
    "depth": count(3, AT_LEAST_ONE, "top hits of a sampled retrieval the judge grades"),
    "calls": group(JUDGE_CALLS, (Calling,), "a ranklens.Calling",
                   "how the judge is called (its progress bar is always off)"),
    "estimator": function("(judged, judged_on_labelled, labels) -> (estimate, low, high)",
                          none=True),
})  # fmt: skip
"""Every field of :class:`ModelJudge`."""

WINDOWING = declare("Windowing", {
    "lateness": duration("30s", "how long after its end a window waits for late records",
                         positive=False),
    "history": count(672, AT_LEAST_ONE, "closed windows and alerts kept"),
    "queue_size": count(10_000, AT_LEAST_ONE, "records queued before new ones are dropped"),
    "interval": number(1.0, POSITIVE, "seconds between the background thread's flushes"),
    "clock": function("the wall clock, () -> seconds since the epoch"),
    "background": flag(True, "a thread flushes every interval (False: call flush())"),
})  # fmt: skip
"""Every field of :class:`Windowing`."""


@DRIFT_TESTS.checks
@dataclass(frozen=True)
class DriftTests:
    """Which signals each window tests against the baseline, and the samples behind the
    tests: ``signals`` (None: every one the monitor can compute), ``min_samples`` (values
    on each side before a distribution is tested), ``samples`` (each window's reservoir of
    latencies, top scores, labelled and judged retrievals; at least ``min_samples``),
    ``baseline`` (how many windows with traffic form the baseline the others are tested
    against; a baseline from a log of retrievals known to be good is
    :meth:`Monitor.set_baseline(records) <ranklens.Monitor.set_baseline>`). The
    false-alarm rate and the seed are the monitor's ``stats=Statistics(alpha=..., seed=...)``.
    """

    signals: tuple[str, ...] | None = None
    min_samples: int = 30
    samples: int = 2000
    baseline: int = 1

    def __post_init__(self) -> None:
        if self.signals is not None:
            object.__setattr__(self, "signals", tuple(self.signals))
        if self.samples < self.min_samples:
            raise rule("DriftTests", "samples", f"at least min_samples ({self.min_samples}): "
                       "a smaller reservoir never tests latency or top scores",
                       self.samples)  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@MODEL_JUDGE.checks
@dataclass(frozen=True)
class ModelJudge:
    """A model judge grading a sample of live retrievals off the request path: ``judge``
    (``(query, passage) -> grade``, as for :func:`ranklens.assess`), the ``rate`` of
    retrievals sampled, the top ``depth`` hits graded, ``calls`` (how it is called:
    concurrency, timeout, retries, back-off; default 4 in flight, 30 s each) and the
    ``estimator`` of its share of relevant hits (:data:`~.quality.Estimator`; None: the
    judge's own mean with a t interval). ``Monitor(judge=f)`` is ``ModelJudge(f)``."""

    judge: Callable[..., Any]
    rate: float = 0.05
    depth: int = 3
    calls: Calling = JUDGE_CALLS
    estimator: Estimator | None = None

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@WINDOWING.checks
@dataclass(frozen=True)
class Windowing:
    """How windows are filled, closed and kept: ``lateness`` (how long after its end a
    window of time waits for late records: ``"30s"``, a ``timedelta`` or seconds),
    ``history`` (closed windows and alerts kept), ``queue_size`` (records queued in the
    request path before new ones are dropped and counted), ``interval`` (seconds between
    the background thread's flushes), ``clock`` (``() -> seconds since the epoch``) and
    ``background`` (a thread flushes every ``interval`` and closes the windows that are
    due; ``False``: no thread, call :meth:`~ranklens.Monitor.flush` yourself, as tests and
    replays do)."""

    lateness: float | str | timedelta = "30s"
    history: int = 672
    queue_size: int = 10_000
    interval: float = 1.0
    clock: Callable[[], float] = field(default=time.time)
    background: bool = True

    def __post_init__(self) -> None:  # the default's text in seconds, as a given one is
        object.__setattr__(self, "lateness", float(WINDOWING.value("lateness", self.lateness)))

    @property
    def seconds_late(self) -> float:
        """``lateness`` in seconds."""
        return float(WINDOWING.value("lateness", self.lateness))

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


FLAT: dict[str, tuple[str, str]] = {
    "alpha": ("stats", "alpha"),
    "seed": ("stats", "seed"),
    "signals": ("drift", "signals"),
    "min_samples": ("drift", "min_samples"),
    "samples": ("drift", "samples"),
    "baseline": ("drift", "baseline"),
    "judge_rate": ("judge", "rate"),
    "judge_depth": ("judge", "depth"),
    "judge_concurrency": ("judge", "calls.concurrency"),
    "judge_timeout": ("judge", "calls.timeout"),
    "estimator": ("judge", "estimator"),
    "lateness": ("windowing", "lateness"),
    "history": ("windowing", "history"),
    "queue_size": ("windowing", "queue_size"),
    "interval": ("windowing", "interval"),
    "clock": ("windowing", "clock"),
    "background": ("windowing", "background"),
}
"""The Monitor's flat keywords of 0.2: ``name -> (group keyword, field)`` (``calls.x``: the
field of the judge's :class:`~ranklens.Calling`)."""

FLAT_OPTIONS = {
    "signals": DRIFT_TESTS["signals"],
    "min_samples": DRIFT_TESTS["min_samples"],
    "samples": DRIFT_TESTS["samples"],
    "baseline": DRIFT_TESTS["baseline"],
    "judge_rate": MODEL_JUDGE["rate"],
    "judge_depth": MODEL_JUDGE["depth"],
    "judge_concurrency": renamed_option(CALLING["concurrency"], default=4,
                                        description="judge calls in flight"),
    "judge_timeout": renamed_option(CALLING["timeout"], default=30.0,
                                    description="seconds per judge call (None: no limit)"),
    "estimator": MODEL_JUDGE["estimator"],
    **WINDOWING.options,
}  # fmt: skip
"""The flat keywords' declarations (still checked; ``alpha`` and ``seed`` are the
statistics' own)."""


def _spelled(value: Any) -> str:
    return getattr(value, "__name__", None) or shown(value)


def regrouped(
    where: str,
    attribute: str,
    given: G | None,
    flat: Mapping[str, Any],
    default: G,
    fields: Mapping[str, str] | None = None,
) -> G:
    """The settings group ``attribute`` an entry point runs with: ``given`` (or
    ``default``) with the flat keywords of the group that were passed (``flat``: only those
    the caller gave, each named in ``fields`` as ``flat name -> field``, ``"calls.x"`` for a
    field of the group's :class:`~ranklens.Calling`; default :data:`FLAT`'s) applied on
    top, warned once with the new spelling; a flat keyword beside ``given`` is an error
    naming both. As :func:`ranklens.settings.settled`, for groups whose fields are renamed
    from their flat keywords; the warning points at the caller's line
    (:func:`ranklens.settings.outside_stacklevel`)."""
    named = fields if fields is not None else {k: f for k, (g, f) in FLAT.items() if g == attribute}
    mine = {k: v for k, v in flat.items() if k in named}
    if not mine:
        return given if given is not None else default
    kind = type(default).__name__
    if given is not None:
        both = ", ".join(sorted(mine))
        raise ParameterError(
            f"{where}: both {attribute}= and {both}= were given; put "
            f"{'them' if len(mine) > 1 else 'it'} in {attribute}={kind}(...)"
        )
    direct: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    for k, v in mine.items():
        target = named[k]
        if target.startswith("calls."):
            calls[target.removeprefix("calls.")] = v
        else:
            direct[target] = v
    shown = [f"{k}={_spelled(v)}" for k, v in direct.items()]
    if calls:
        direct["calls"] = replace(getattr(default, "calls", JUDGE_CALLS), **calls)
        inner = ", ".join(f"{k}={v!r}" for k, v in calls.items())
        shown.append(f"calls=ranklens.Calling({inner})")
    warnings.warn(
        f"{where}({', '.join(f'{k}=' for k in mine)}...) is deprecated: write "
        f"{where}(..., {attribute}=ranklens.{kind}({', '.join(shown)}))",
        DeprecationWarning,
        stacklevel=outside_stacklevel(),
    )
    return replace(default, **direct)
