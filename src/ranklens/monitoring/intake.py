"""From what the app recorded to the monitor's :class:`~.windows.Event`: a Recorder's record
tuple (handed over in the request path, read here off it), or a
:class:`~ranklens.Retrieval` (replayed from a log, or observed from another process).
Hits are mapped to document ids with the recorder's key, as the Recorder maps them.

A record is never trusted to be well formed: a field that cannot be read (a query that is
not a text, a NaN or negative latency, a NaN score, a hit without an id, a start time that
is not a number) is set aside, counted by reason in ``Intake.malformed`` and the rest
of the record is used; a record that cannot be read at all (ids given as one text, not a
record) raises :class:`Rejected`, which the monitor counts (``status()["rejected"]``)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..capture import Hit, RecordSlots, Retrieval, key_function, light_of
from .windows import Event

QUERY_NOT_TEXT = "query not a text"
QUERY_ID_NOT_TEXT = "query id not a text or whole number"
NO_LATENCY = "latency missing (NaN)"
BAD_LATENCY = "latency not a finite number >= 0"
BAD_SCORE = "top score not a finite number"
NO_ID = "hit without a document id"
BAD_TIME = "start time not a finite number"


class Rejected(Exception):
    """A record the monitor cannot read at all (``reason`` says why): counted, never used."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _real(value: Any) -> bool:
    t = type(value)
    if t is float or t is int:  # the usual case, before the abstract classes' checks
        return True
    return isinstance(value, numbers.Real) and t is not bool


class Intake:
    """Turns records into events: ``key`` maps hits to document ids (only when ``ids`` is
    True: a corpus, labels or a judge need them; else the hits' own ids are counted);
    ``texts``: keep each document's text (a judge reads it); ``offset``: the recorder's
    :attr:`~ranklens.Recorder.clock_offset`. ``malformed``: fields set aside, by reason."""

    def __init__(self, key: Any, offset: float, ids: bool, texts: bool):
        self.key_fn: Callable[[Hit], str | None] = key_function(key)
        self.by_id = isinstance(key, str) and key == "id"
        self.offset, self.ids, self.texts = offset, ids, texts
        self.malformed: dict[str, int] = {}

    def note(self, reason: str) -> None:
        self.malformed[reason] = self.malformed.get(reason, 0) + 1

    # ---------------------------------------------------------------- fields
    def _query(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        self.note(QUERY_NOT_TEXT)  # never str(None): "None" would be matched as a text
        return ""

    def _query_id(self, value: Any) -> str | None:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return str(int(value))
        self.note(QUERY_ID_NOT_TEXT)
        return None

    def _latency(self, value: Any) -> float:
        if _real(value) and math.isfinite(value) and value >= 0:
            return float(value)
        self.note(NO_LATENCY if _real(value) and math.isnan(value) else BAD_LATENCY)
        return math.nan

    def _time(self, value: Any) -> float:
        if _real(value) and math.isfinite(value):
            return float(value)
        self.note(BAD_TIME)
        return math.nan

    def _score(self, value: Any) -> float | None:
        if value is None:
            return None
        if _real(value) and math.isfinite(value):
            return float(value)
        self.note(BAD_SCORE)
        return None

    def _doc_ids(self, values: Iterable[Any]) -> list[str]:
        out = []
        for d in values:
            if isinstance(d, str) and d:
                out.append(d)
            elif isinstance(d, numbers.Integral) and not isinstance(d, bool):
                out.append(str(int(d)))
            else:
                self.note(NO_ID)
        return out

    def _map(
        self, hits: list[Hit], count: bool = True
    ) -> tuple[list[str], list[str | None] | None]:
        if not self.ids:
            return self._doc_ids(h.id for h in hits), None
        seen: set[str] = set()
        docs, texts = [], []
        for h in hits:
            d = self.key_fn(h)
            if d is None:
                if count:
                    self.note(NO_ID)
                continue
            if d in seen:
                continue
            seen.add(d)
            docs.append(d)
            texts.append(h.text)
        return docs, (texts if self.texts else None)

    def _map_light(self, light: list[Any]) -> tuple[list[str], list[str | None] | None] | None:
        """:meth:`_map` of light hits keyed by ``id``, read as they are: each an id that is
        a text, a finite float score or None, a text, parent and metadata of their usual
        types or None, and no character range, so that :meth:`Hit.from_light` would make
        the same hit without a change or an error. None when a hit is anything else (each
        is then made a Hit and checked)."""
        seen: set[str] = set()
        docs: list[str] = []
        texts: list[str | None] = []
        missing = 0
        for x in light:
            if type(x) is not tuple or len(x) != 6:
                return None
            d, sc, text, parent, meta, span = x
            if type(d) is not str:
                return None
            if sc is not None and (type(sc) is not float or sc - sc != 0):
                return None
            if text is not None and type(text) is not str:
                return None
            if (parent is not None and type(parent) is not str) or (
                meta is not None and type(meta) is not dict
            ):
                return None
            if span is not None and span != (None, None):
                return None
            if not d:
                missing += 1
            elif not self.ids:
                docs.append(d)  # the hits' own ids, counted as they are (_doc_ids)
            elif d not in seen:
                seen.add(d)
                docs.append(d)
                texts.append(text)
        for _ in range(missing):
            self.note(NO_ID)
        return docs, (texts if self.ids and self.texts else None)

    # ---------------------------------------------------------------- records
    def from_raw(self, raw: tuple[Any, ...]) -> Event:
        """The event of a Recorder's record tuple."""
        if not isinstance(raw, tuple) or len(raw) < 10:
            raise Rejected("not a ranklens record")
        at = RecordSlots
        t = self._time(raw[at.T0] + self.offset if _real(raw[at.T0]) else None)
        query, qid = self._query(raw[at.QUERY]), self._query_id(raw[at.QUERY_ID])
        latency = self._latency(raw[at.LATENCY])
        if raw[at.ERROR] is not None:
            return Event(t, query, qid, latency, str(raw[at.ERROR][0]), [], None)
        try:
            light = light_of(raw)
            top = self._score(light[0][1]) if light else None
            mapped = self._map_light(light) if self.by_id else None
            docs, texts = mapped or self._map([Hit.from_light(x) for x in light])
        except Exception as exc:  # a raising key= or converter: this retrieval's failure
            return Event(t, query, qid, latency, type(exc).__name__, [], None)
        return Event(t, query, qid, latency, None, docs, top, texts)

    def from_retrieval(self, rec: Retrieval) -> Event:
        """The event of a :class:`~ranklens.Retrieval` (its ids are mapped already; its
        hits are mapped again only when a judge needs their texts)."""
        if not isinstance(rec, Retrieval):
            raise Rejected(f"not a ranklens Retrieval ({type(rec).__name__})")
        for name in ("doc_ids", "scores", "hits"):
            value = getattr(rec, name)
            if value is not None and not _listlike(value):
                raise Rejected(f"{name} not a list ({type(value).__name__})")
        t = self._time(rec.started)
        query, qid = self._query(rec.query), self._query_id(rec.query_id)
        latency = self._latency(rec.latency_ms)
        if rec.error is not None:
            kind = rec.error.get("type", "Error") if isinstance(rec.error, Mapping) else rec.error
            return Event(t, query, qid, latency, str(kind), [], None)
        scores = list(rec.scores or ())
        top = self._score(scores[0]) if scores else None
        docs = self._doc_ids(rec.doc_ids or ())
        texts = None
        if self.texts and rec.hits:
            hits = [Hit(h.get("id"), h.get("score"), h.get("text"), h.get("metadata") or {},
                        h.get("parent")) for h in rec.hits if isinstance(h, Mapping)]  # fmt: skip
            mapped, texts = self._map(hits, count=False)
            if mapped != docs:  # a different key made these ids: no texts
                texts = None
        return Event(t, query, qid, latency, None, docs, top, texts)


def _listlike(value: Any) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))
