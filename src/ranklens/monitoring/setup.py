"""The Monitor's settings read and checked once, when it is made: window and duration
strings, the labelled set (queries matched by id or normalised text, their labels, the
ids the index should know) and which signals are tested."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from ..capture.matching import label_matcher
from ..errors import InputError
from ..io import coerce_qrels
from ..metrics import parse_metrics
from .windows import DISTRIBUTION_SIGNALS, JUDGED, RATE_SIGNALS

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)\s*$")


def parse_duration(value: str | float | timedelta, what: str) -> float:
    """Seconds in ``"30s"``, ``"15m"``, ``"1h"``, ``"1d"``, ``"250ms"``, a ``timedelta`` or
    a number of seconds."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
    else:
        raise InputError(f"{what}={value!r}: give a duration such as '30s', '15m', '1h' or '1d'")
    if seconds < 0:
        raise InputError(f"{what}={value!r} is negative")
    return seconds


def parse_window(window: str | int | timedelta) -> tuple[float | None, int | None]:
    """``(seconds, None)`` for a window of wall time, ``(None, n)`` for one of n
    retrievals."""
    if isinstance(window, int) and not isinstance(window, bool):
        if window < 1:
            raise InputError(f"window={window}: a window holds at least 1 retrieval")
        return None, window
    seconds = parse_duration(window, "window")
    if seconds <= 0:
        raise InputError(f"window={window!r} must be longer than 0")
    return seconds, None


def check_alpha(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha!r}")
    return float(alpha)


class Labels:
    """The labelled set as the monitor uses it: ``lookup(query_id, text)`` (the label
    query id of a live retrieval, by id else by normalised text; :func:`label_matcher`),
    ``qrels``, ``graded`` (``{query: {doc: grade}}``), ``metrics`` (checked names) and
    ``known`` (the ids the index should return: ``corpus`` or the Dataset's corpus,
    else None)."""

    def __init__(self, labels: Any, match: str, metrics: Sequence[str],
                 corpus: Iterable[str] | None, relevance_level: int):  # fmt: skip
        self.qrels = coerce_qrels(labels)
        self.graded = self.qrels.to_dict()
        queries = getattr(labels, "queries", None)
        self._matches = label_matcher(queries, match, ids=self.graded)
        self.metrics = [str(m) for m in metrics]
        parse_metrics(self.metrics)  # a bad name is an error now, not at the first window
        if corpus is not None:
            self.known: set[str] | None = {str(d) for d in corpus}
        elif getattr(labels, "corpus", None):
            self.known = {str(d) for d in labels.corpus}
        else:
            self.known = None
        self.relevance_level = relevance_level

    def lookup(self, query_id: str | None, text: str) -> str | None:
        """The label query id of a live retrieval (the first labelled query with its text
        when several share it), or None."""
        found = self._matches(query_id, text)
        return found[0] if found else None


def default_signals(
    signals: Sequence[str] | None, labels: Labels | None, known: Any, judge: Any
) -> list[str]:
    """The signals tested: every one the monitor can compute (rates; latency and top score;
    with labels the labelled share and each metric; with a corpus the unknown-id rate;
    with a judge its share of relevant hits), or those named (each checked)."""
    available = ["error_rate", "timeout_rate", "empty_rate"]
    if known is not None:
        available.append("unknown_rate")
    if labels is not None:
        available.append("labelled_rate")
    available += list(DISTRIBUTION_SIGNALS)
    if labels is not None:
        available += labels.metrics
    if judge is not None:
        available.append(JUDGED)
    if signals is None:
        return available
    out = []
    for s in signals:
        if s not in available:
            every = [*RATE_SIGNALS, *DISTRIBUTION_SIGNALS, "a metric of metrics=", JUDGED]
            raise InputError(
                f"signal {s!r} is not available here (available: {', '.join(available)}; "
                f"signals in general: {', '.join(every)})"
            )
        out.append(s)
    return out
