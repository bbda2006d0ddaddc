"""The Recorder's in-memory record: one plain tuple per retrieval (the cheapest thing to
build in the app's request path), its slots, and what is read off it."""

from __future__ import annotations

T0, QUERY, QUERY_ID, PARENT, SOURCE, LIGHT, LATER, LATENCY, ERROR, TOKEN = range(10)
"""The slots of a record: start time, query, query id, parent trace id, source hook,
hits (light tuples), a converter applied when read, latency (ms), error, token."""


def error_of(error: BaseException | None) -> tuple[str, str] | None:
    """The ``(type, message)`` a record keeps of an exception."""
    return None if error is None else (type(error).__name__, str(error)[:500])


def failure_text(raw: tuple) -> str:
    """``"q7: TimeoutError: ..."`` (the query id, else the query's start)."""
    who = raw[QUERY_ID] if raw[QUERY_ID] is not None else repr(str(raw[QUERY])[:60])
    return f"{who}: {raw[ERROR][0]}: {raw[ERROR][1]}"


def recent_of(raw: tuple) -> tuple[float, bool, int]:
    """(latency ms, ok, hits) of a record, for the rolling summary."""
    return (raw[LATENCY], raw[ERROR] is None, len(raw[LIGHT]))
