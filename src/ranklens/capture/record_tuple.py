"""The Recorder's in-memory record: one plain tuple per retrieval (the cheapest thing to
build in the app's request path), its slots, and what is read off it."""

from __future__ import annotations

from typing import Any

from .hits import Hit, KeyLike, Mapped, key_name, map_hits
from .records import Retrieval

RecordTuple = tuple[Any, ...]
"""A record as the Recorder keeps it: one plain tuple, its slots named below."""

T0, QUERY, QUERY_ID, PARENT, SOURCE, LIGHT, LATER, LATENCY, ERROR, TOKEN = range(10)
"""The slots of a record: start time, query, query id, parent trace id, source hook,
hits (light tuples), a converter applied when read, latency (ms), error, token."""


class RecordSlots:
    """Where each field of a :data:`RecordTuple` sits, for code that reads the Recorder's
    records as they are kept (a :class:`~ranklens.monitoring.Monitor`'s intake): ``raw[
    RecordSlots.LATENCY]``. ``T0`` is the ``perf_counter`` start, ``LIGHT`` the hits as
    light tuples (read them with :func:`light_of`, which applies a hook's deferred
    conversion), ``ERROR`` ``None`` or ``(type, message)``."""

    T0, QUERY, QUERY_ID, PARENT, SOURCE, LIGHT, LATER, LATENCY, ERROR, TOKEN = range(10)


def error_of(error: BaseException | None) -> tuple[str, str] | None:
    """The ``(type, message)`` a record keeps of an exception."""
    return None if error is None else (type(error).__name__, str(error)[:500])


def failure_text(raw: RecordTuple) -> str:
    """``"q7: TimeoutError: ..."`` (the query id, else the query's start)."""
    who = raw[QUERY_ID] if raw[QUERY_ID] is not None else repr(str(raw[QUERY])[:60])
    return f"{who}: {raw[ERROR][0]}: {raw[ERROR][1]}"


def recent_of(raw: RecordTuple) -> tuple[float, bool, int]:
    """(latency ms, ok, hits) of a record, for the rolling summary."""
    return (raw[LATENCY], raw[ERROR] is None, len(raw[LIGHT]))


def materialise(raw: RecordTuple, key: KeyLike, clock: float) -> Retrieval:
    """The :class:`~ranklens.Retrieval` of a record: its hits mapped by ``key`` (a raising
    key is this retrieval's failure, not the app's), ``started`` as wall time (``clock``:
    wall time minus ``perf_counter`` when the recorder was made)."""
    t0, query, query_id, parent, source, light, later, latency_ms, err, token = raw
    if later is not None:
        light = later(light)
    hits = [Hit.from_light(t) for t in light]
    try:
        mapped = map_hits(hits, key)
    except Exception as exc:
        err = (type(exc).__name__, f"key={key_name(key)}: {exc}"[:500])
        mapped = Mapped([], [], 0, 0)
    return Retrieval(
        query=str(query),
        query_id=None if query_id is None else str(query_id),
        doc_ids=mapped.doc_ids,
        scores=mapped.scores,
        hits=[h.to_json() for h in hits],
        latency_ms=latency_ms,
        error=None if err is None else {"type": err[0], "message": err[1]},
        trace_id=None if token is None else str(token),
        parent_trace_id=None if parent is None else str(parent),
        source=source,
        started=t0 + clock,
        duplicates=mapped.duplicates,
        unmapped=mapped.unmapped,
    )


def light_of(raw: RecordTuple) -> list[Any]:
    """A record's hits as light tuples (a hook's deferred conversion applied)."""
    light, later = raw[LIGHT], raw[LATER]
    out: list[Any] = later(light) if later is not None else light
    return out
