"""The Recorder's in-memory record: one plain tuple per retrieval (the cheapest thing to
build in the app's request path), its slots, and what is read off it."""

from __future__ import annotations

from typing import Any

from .hits import Hit, KeyLike, Mapped, key_name, map_hits
from .records import Retrieval, Stage

RecordTuple = tuple[Any, ...]
"""A record as the Recorder keeps it: one plain tuple, its slots named below."""

T0, QUERY, QUERY_ID, PARENT, SOURCE, LIGHT, LATER, LATENCY, ERROR, TOKEN, STAGES = range(11)
"""The slots of a record: start time, query, query id, parent trace id, source hook,
hits (light tuples), a converter applied when read, latency (ms), error, token; and, on a
record with a pipeline's stages only (an eleventh slot: the others stay ten slots long),
the stages as ``(name, light hits, latency ms, error, kind, given)`` tuples (``given``:
``(doc_ids, scores, duplicates, unmapped)`` of a stage handed over already mapped, else
None)."""


class RecordSlots:
    """Where each field of a :data:`RecordTuple` sits, for code that reads the Recorder's
    records as they are kept (a :class:`~ranklens.monitoring.Monitor`'s intake): ``raw[
    RecordSlots.LATENCY]``. ``T0`` is the ``perf_counter`` start, ``LIGHT`` the hits as
    light tuples (read them with :func:`light_of`, which applies a hook's deferred
    conversion), ``ERROR`` ``None`` or ``(type, message)``. ``STAGES``: present only on
    a record made with a pipeline's stages (read them with :func:`stages_of`)."""

    T0, QUERY, QUERY_ID, PARENT, SOURCE, LIGHT, LATER, LATENCY, ERROR, TOKEN, STAGES = range(11)


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
    t0, query, query_id, parent, source, light, later, latency_ms, err, token = raw[:STAGES]
    if later is not None:
        light = later(light)
    hits = [Hit.from_light(t) for t in light]
    stages = None
    try:
        if len(raw) > STAGES:
            stages = [_stage(s, key) for s in raw[STAGES]]
        if stages and raw[LIGHT] is raw[STAGES][-1][1]:  # no hits given: the last stage's
            last = stages[-1]
            mapped = Mapped(list(last.doc_ids), list(last.scores), last.duplicates, last.unmapped)
        else:
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
        stages=stages,
    )


def _stage(kept: tuple[Any, ...], key: KeyLike) -> Stage:
    """A :class:`Stage` record of a stage as a record tuple keeps it (a stage handed over
    already mapped keeps its ranking)."""
    name, light, latency_ms, error, kind, given = kept
    hits = [Hit.from_light(t) for t in light]
    if given is not None:
        doc_ids, scores, duplicates, unmapped = given
        return Stage(name, doc_ids, scores, [h.to_json() for h in hits], latency_ms, error,
                     kind, duplicates, unmapped)  # fmt: skip
    m = map_hits(hits, key)
    return Stage(name, m.doc_ids, m.scores, [h.to_json() for h in hits], latency_ms,
                 error, kind, m.duplicates, m.unmapped)  # fmt: skip


def stages_of(raw: RecordTuple) -> tuple[tuple[Any, ...], ...] | None:
    """A record's stages as ``(name, light hits, latency ms, error, kind, given)`` tuples
    (see :data:`STAGES`), or None when it has none."""
    return raw[STAGES] if len(raw) > STAGES else None


def light_of(raw: RecordTuple) -> list[Any]:
    """A record's hits as light tuples (a hook's deferred conversion applied)."""
    light, later = raw[LIGHT], raw[LATER]
    out: list[Any] = later(light) if later is not None else light
    return out
