"""From what the app recorded to the monitor's :class:`~.windows.Event`: a Recorder's record
tuple (handed over in the request path, read here off it), or a
:class:`~ranklens.Retrieval` (replayed from a log, or observed from another process).
Hits are mapped to document ids with the recorder's key, as the Recorder maps them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..capture import Hit, Retrieval, key_function
from ..capture.record_tuple import ERROR, LATENCY, QUERY, QUERY_ID, T0, light_of
from .windows import Event


class Intake:
    """Turns records into events: ``key`` maps hits to document ids (only when ``ids`` is
    True: a corpus, labels or a judge need them; else the hits' own ids are counted);
    ``texts``: keep each document's text (a judge reads it); ``offset``: the recorder's
    :attr:`~ranklens.Recorder.clock_offset`."""

    def __init__(self, key: Any, offset: float, ids: bool, texts: bool):
        self.key_fn: Callable[[Hit], str | None] = key_function(key)
        self.offset, self.ids, self.texts = offset, ids, texts

    def _map(self, hits: list[Hit]) -> tuple[list[str], list[str | None] | None]:
        if not self.ids:
            return [h.id for h in hits], None
        seen: set[str] = set()
        docs, texts = [], []
        for h in hits:
            d = self.key_fn(h)
            if d is None or d in seen:
                continue
            seen.add(d)
            docs.append(d)
            texts.append(h.text)
        return docs, (texts if self.texts else None)

    def from_raw(self, raw: tuple) -> Event:
        """The event of a Recorder's record tuple."""
        t = raw[T0] + self.offset
        query, qid = str(raw[QUERY]), None if raw[QUERY_ID] is None else str(raw[QUERY_ID])
        latency = raw[LATENCY]
        if raw[ERROR] is not None:
            return Event(t, query, qid, latency, raw[ERROR][0], [], None)
        try:
            light = light_of(raw)
            top = _score(light[0][1]) if light else None
            docs, texts = self._map([Hit.from_light(x) for x in light])
        except Exception as exc:  # a raising key= or converter: this retrieval's failure
            return Event(t, query, qid, latency, type(exc).__name__, [], None)
        return Event(t, query, qid, latency, None, docs, top, texts)

    def from_retrieval(self, rec: Retrieval) -> Event:
        """The event of a :class:`~ranklens.Retrieval` (its ids are mapped already; its
        hits are mapped again only when a judge needs their texts)."""
        latency = rec.latency_ms if isinstance(rec.latency_ms, (int, float)) else math.nan
        if rec.error is not None:
            kind = str(rec.error.get("type", "Error"))
            return Event(rec.started, rec.query, rec.query_id, latency, kind, [], None)
        top = _score(rec.scores[0]) if rec.scores else None
        texts = None
        if self.texts and rec.hits:
            hits = [Hit(h.get("id"), h.get("score"), h.get("text"), h.get("metadata") or {},
                        h.get("parent")) for h in rec.hits]  # fmt: skip
            docs, texts = self._map(hits)
            if docs != list(rec.doc_ids):  # a different key made these ids: no texts
                texts = None
        return Event(rec.started, rec.query, rec.query_id, latency, None, list(rec.doc_ids), top,
                     texts)  # fmt: skip


def _score(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None
