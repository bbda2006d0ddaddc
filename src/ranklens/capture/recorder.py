"""``Recorder``: capture the retrievals a live app makes, then evaluate or export them.

Framework hooks (``ranklens_llamaindex.instrument``, ``ranklens_langchain``'s callback
handler, ``ranklens_haystack``'s recorder component) call :meth:`Recorder.start` and
:meth:`Recorder.end` (or :meth:`Recorder.record` in one go); subscribers (a
:class:`~ranklens.Monitor`) are handed each record as it is made
(:meth:`Recorder.subscribe`). The recorder is thread- and asyncio-safe (the request path
is a dict insert and pop and one deque append, each atomic; a lock guards spilling and
reading; no awaits), maps hits to document ids with the same ``key`` as the runner
(:mod:`ranklens.capture.hits`), and keeps memory bounded: past ``max_records`` the oldest
records go to a JSONL spill file and are read back by ``to_run``, ``records`` and
``evaluate`` (:class:`~.recorded.RecordedRetrievals`; or, with ``spill=False``, are let go
and counted).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..declared import AT_LEAST_ONE, count, declare, flag, path, text
from ..judging.options import failure_note
from .hits import KEY, Converter, Hit, KeyLike, LightHit, check_key, coerce_hit
from .record_tuple import ERROR, RecordTuple, error_of, failure_text, materialise, recent_of
from .recorded import RecordedRetrievals
from .records import Retrieval, Stage
from .spill import SpillFile

_NO_SPAN = (None, None)
"""A light hit's ``(start, end)`` when it has no character range."""

RECORDER = declare("Recorder", {
    "key": KEY,
    "max_records": count(10_000, AT_LEAST_ONE, "records kept in memory before spilling"),
    "spill": path(None, "the JSONL spill file (None: a temporary file; False: let the oldest "
                  "go, counted)", none=True, also=flag(None)),
    "window": count(1000, AT_LEAST_ONE, "recent retrievals the summary describes"),
    "name": text("recorded", "the run's name"),
    "metadata": flag(False, "keep each hit's metadata even when key does not read it"),
})  # fmt: skip


@RECORDER.checks
class Recorder(RecordedRetrievals):
    """Captures retrievals; see the module docstring.

    ``key``: how a hit names a labelled document. ``max_records``: records kept in memory
    before the oldest spill to ``spill`` (a JSONL path; a temporary file when None).
    ``spill=False`` keeps only the last ``max_records`` (older ones are let go and counted
    in ``evicted``: a long-running app watched by a :class:`~ranklens.Monitor`).
    ``window``: how many recent retrievals :meth:`summary` describes. ``metadata``: keep
    each hit's metadata (its string and integer fields, copied in the request path) even
    when ``key`` does not read it, so that ``doc_metadata()`` gives what
    ``ranklens.Versions.from_metadata`` reads document times and version groups from.
    """

    def __init__(
        self,
        key: KeyLike = "id",
        *,
        max_records: int = 10_000,
        spill: str | Path | bool | None = None,
        window: int = 1000,
        name: str = "recorded",
        metadata: bool = False,
    ):
        check_key(key, "Recorder")
        self.key = key
        self.name = name
        self.max_records = max_records
        self._evict = spill is False
        self._spill_file = SpillFile(self, None if isinstance(spill, bool) else spill)
        self._listeners: tuple[Callable[[RecordTuple], None], ...] = ()
        self.evicted = 0  # records let go with spill=False
        self.listener_errors = 0
        self._lock = threading.Lock()
        self._memory: deque[RecordTuple] = deque()
        self._pending: dict[Any, tuple[float, str, str | None, object, str | None]] = {}
        self.window = window
        self._recent_spilled: deque[tuple[float, bool, int]] = deque(maxlen=window)
        self._spilled = 0
        self._spilled_errors: dict[str, int] = {}  # error type -> count, of spilled records
        self._first_error: str | None = None  # the first spilled failure, as a summary shows it
        self._unmatched_ends = 0
        self._clock = time.time() - time.perf_counter()  # perf_counter -> wall time
        # What the hooks must copy in the request path: metadata only when the key reads
        # it; the parent id and the chunk's character range always (a string and two
        # ints), so that chunk hits scored against document labels can be told apart and
        # key="parent" suggested, and span labels can judge the chunks.
        needs = {"parent", "positions"}
        if metadata or callable(key) or str(key).startswith(("meta.", "metadata.")):
            needs.add("metadata")
        self.needs = frozenset(needs)

    # ------------------------------------------------------------------ capture
    # A record is one tuple: (t0, query, query_id, parent, source, hits, later, latency ms,
    # error, token), t0 from perf_counter. The request path builds it from the start tuple
    # with one concatenation and appends it to a deque; dict insert/pop and deque append
    # are atomic, so it takes no lock. Counters and the rolling summary are derived when
    # read.
    def start(
        self,
        token: Any,
        query: str,
        query_id: str | None = None,
        parent: object = None,
        source: str | None = None,
    ) -> None:
        """A retrieval began; ``token`` pairs it with :meth:`end`, ``parent`` is its trace."""
        self._pending[token] = (time.perf_counter(), query, query_id, parent, source)

    def end(
        self,
        token: Any,
        hits: Sequence[Any] = (),
        error: BaseException | None = None,
        convert: Converter | None = None,
    ) -> bool:
        """The retrieval ``token`` ended with ``hits`` (or ``error``); False if the token
        was never started (counted in ``unmatched_ends``). ``hits`` are
        :class:`~ranklens.Hit` objects, or framework objects that ``convert`` (a
        :data:`~ranklens.capture.hits.Converter`) turns into light tuples."""
        now = time.perf_counter()
        began = self._take(token)
        if began is None:
            return False
        latency = (now - began[0]) * 1000
        self._append((*began, self._light(hits, convert), None, latency, error_of(error), token))
        return True

    def end_light(
        self, token: Any, light: Any, later: Callable[[Any], list[LightHit]] | None = None
    ) -> bool:
        """:meth:`end` for a successful retrieval whose hits a hook already turned into
        :data:`~ranklens.capture.hits.LightHit` tuples, or, with ``later``, kept as they
        came and turned into those tuples by ``later(light)`` when read (the cheapest
        request path: no conversion). False if the token was never started."""
        now = time.perf_counter()
        began = self._pending.pop(token, None)
        if began is None:
            return self._unmatched()
        raw = (*began, light, later, (now - began[0]) * 1000, None, token)
        self._memory.append(raw)
        if len(self._memory) > self.max_records:
            self._spill_excess()
        for fn in self._listeners:
            self._notify(fn, raw)
        return True

    def _take(self, token: Any) -> RecordTuple | None:
        """The start record of ``token``, removed; None (and counted) if never started."""
        began = self._pending.pop(token, None)
        if began is None:
            self._unmatched()
        return began

    def _unmatched(self) -> bool:
        with self._lock:
            self._unmatched_ends += 1
        return False

    def abort(self, token: Any, error: BaseException) -> bool:
        """End the retrieval ``token`` with ``error`` if it is in flight (hooks that see
        every failing span call this; other tokens are left alone). True if it was."""
        if token not in self._pending:
            return False
        return self.end(token, (), error)

    def record(
        self,
        query: str,
        hits: Sequence[Any] = (),
        *,
        query_id: str | None = None,
        latency_ms: float = math.nan,
        error: BaseException | None = None,
        trace_id: str | None = None,
        parent_trace_id: str | None = None,
        source: str | None = None,
        convert: Converter | None = None,
        stages: Sequence[Stage] | None = None,
    ) -> None:
        """Record a whole retrieval at once (``convert`` as in :meth:`end`); ``trace_id``
        names the retrieval's own span, ``parent_trace_id`` the trace it belongs to. Never
        raises into the app: an unreadable hit or a ``latency_ms`` that is not a number is
        recorded as this retrieval's error (counted in :attr:`errors`), with no hits.

        ``stages``: what a hook saw of a pipeline's stages, in order, as
        :class:`~ranklens.capture.Stage` records (``Stage("rerank", hits=nodes,
        latency_ms=3.1, kind="reranker")``), their hits converted as ``hits`` are (by
        ``convert``) and mapped by the recorder's ``key`` when read; ``hits`` empty then
        means the last stage's (with no hits given at all, a stage handed over already
        mapped, ``Stage("rerank", doc_ids, scores)``, gives its ``doc_ids`` as the final
        hits). A stage that is not a ``Stage`` or holds an unreadable hit is this
        retrieval's error, as a bad hit is."""
        now = time.perf_counter()
        kept = None
        try:
            light = self._light(hits, convert)
            t0 = now if math.isnan(latency_ms) else now - latency_ms / 1000
            if stages is not None:
                kept = self._stages(stages, convert)
                if not light and not hits and kept:  # the last stage's are the final hits
                    light = kept[-1][1]  # (the same list: read as that stage's ranking)
        except Exception as exc:  # the app's bad input: this retrieval's error, not the app's
            light, error, kept = [], exc, None
            good = isinstance(latency_ms, (int, float)) and not math.isnan(latency_ms)
            latency_ms, t0 = (latency_ms, now - latency_ms / 1000) if good else (math.nan, now)
        err = error_of(error)
        raw: RecordTuple
        if kept is None:
            raw = (t0, query, query_id, parent_trace_id, source, light, None, latency_ms, err,
                   trace_id)  # fmt: skip
        else:  # the pipeline's stages in an eleventh slot (record_tuple.STAGES)
            raw = (t0, query, query_id, parent_trace_id, source, light, None, latency_ms, err,
                   trace_id, kept)  # fmt: skip
        self._append(raw)

    def _stages(self, stages: Sequence[Stage], convert: Converter | None) -> tuple[Any, ...]:
        """The stages as the record keeps them: ``(name, light hits, latency, error, kind,
        given)`` tuples, the hits copied in the request path as the final hits are
        (``given``: the ranking of a stage handed over already mapped, else None)."""
        if isinstance(stages, (str, bytes)) or not isinstance(stages, Sequence):
            raise TypeError(f"stages must be a list of Stage records, got {type(stages).__name__}")
        out = []
        for i, st in enumerate(stages, 1):
            if not isinstance(st, Stage):
                raise TypeError(f"stage {i} must be a ranklens.capture.Stage, got "
                                f"{type(st).__name__}")  # fmt: skip
            given = None  # a stage handed over already mapped keeps its ranking
            if st.doc_ids:
                given = (list(st.doc_ids), list(st.scores) or [None] * len(st.doc_ids),
                         st.duplicates, st.unmapped)  # fmt: skip
            out.append((st.name, self._light(st.hits, convert), st.latency_ms, st.error, st.kind,
                        given))  # fmt: skip
        return tuple(out)

    def _light(self, hits: Sequence[Any], convert: Converter | None) -> list[LightHit]:
        # The request path copies light tuples of plain values (which the garbage collector
        # soon stops tracking); Hit objects and id mapping wait for retrieval(). Keeping the
        # framework objects themselves instead measured +19% instructions per LlamaIndex
        # retrieval (valgrind), against +3.8% for these tuples.
        needs = self.needs
        if convert is not None:
            return [convert(h, needs) for h in hits]
        meta = "metadata" in needs  # copied as it stands now: the app may change it later
        if type(hits) is not list and type(hits) is not tuple:
            hits = list(hits)  # read once: a generator is read by one of the two loops below
        if not hits or (type(hits[0]) is not tuple and type(hits[0]) is not str):
            try:
                return [(h.id, h.score, h.text, h.parent, dict(h.metadata) if meta else None,
                         (h.start, h.end)) for h in hits]  # fmt: skip
            except AttributeError:
                pass
        # plain ids, (id, score) pairs or dicts, as the runner takes them: a pair of a
        # non-empty text (numpy's str_ too) and a finite float (numpy's float64 too), or a
        # text id, gives the light tuple coerce_hit's hit would give without making the hit
        out: list[LightHit] = []
        for i, h in enumerate(hits):
            t = type(h)
            if t is tuple and len(h) == 2:
                d, sc = h
                if isinstance(d, str) and d and isinstance(sc, float) and sc - sc == 0:
                    out.append((str(d), float(sc), None, None, {} if meta else None, _NO_SPAN))
                    continue
            elif isinstance(h, str):
                out.append((str(h), None, None, None, {} if meta else None, _NO_SPAN))
                continue
            hit = h if isinstance(h, Hit) else coerce_hit(h, "recorded", i + 1)
            out.append((hit.id, hit.score, hit.text, hit.parent,
                        dict(hit.metadata) if meta else None, (hit.start, hit.end)))  # fmt: skip
        return out

    def _append(self, raw: RecordTuple) -> None:
        self._memory.append(raw)
        if len(self._memory) > self.max_records:
            self._spill_excess()
        for fn in self._listeners:
            self._notify(fn, raw)

    def _notify(self, fn: Callable[[RecordTuple], None], raw: RecordTuple) -> None:
        try:
            fn(raw)
        except Exception:  # a subscriber's fault never reaches the app
            self.listener_errors += 1

    def subscribe(self, fn: Callable[[RecordTuple], None]) -> Callable[[], None]:
        """Call ``fn(record)`` in the request path after each retrieval is recorded (the
        record tuple: slots in :mod:`ranklens.capture.record_tuple`; :meth:`retrieval` reads it).
        ``fn`` must be cheap and must not block (a :class:`~ranklens.Monitor` appends to a
        bounded queue); its exceptions are counted in ``listener_errors``, never raised.
        Returns the function that unsubscribes."""
        with self._lock:
            self._listeners = (*self._listeners, fn)

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = tuple(f for f in self._listeners if f is not fn)

        return unsubscribe

    def _spill_excess(self) -> None:
        """Past ``max_records``, move the oldest half of memory to the spill file."""
        with self._lock:
            excess = len(self._memory) - self.max_records // 2
            if len(self._memory) > self.max_records and excess > 0:
                if self._evict:
                    self._let_go([self._memory.popleft() for _ in range(excess)])
                    self.evicted += excess
                else:
                    self._spill(excess)

    def retrieval(self, raw: RecordTuple) -> Retrieval:
        """The :class:`~ranklens.Retrieval` of a record tuple a subscriber received."""
        return materialise(raw, self.key, self._clock)

    @property
    def clock_offset(self) -> float:
        """Wall time minus ``perf_counter``: a record's start (slot ``T0``) plus this is
        its wall-clock start time."""
        return self._clock

    def _spill(self, n: int) -> None:
        """Move the ``n`` oldest records to the spill file (:mod:`.spill`: never raises
        into the app; records it cannot write are dropped and counted)."""
        raws = [self._memory.popleft() for _ in range(n)]
        if self._spill_file.write([self.retrieval(raw).to_json() for raw in raws]):
            self._let_go(raws)
            self._spilled += n

    def _let_go(self, raws: list[RecordTuple]) -> None:
        """Keep what the summary needs of records leaving memory (spilled or evicted)."""
        for raw in raws:
            self._recent_spilled.append(recent_of(raw))
            if raw[ERROR] is not None:
                kind = raw[ERROR][0]
                self._spilled_errors[kind] = self._spilled_errors.get(kind, 0) + 1
                self._first_error = self._first_error or failure_text(raw)

    @property
    def _spill_path(self) -> Path | None:
        return self._spill_file.path

    def close(self) -> None:
        """Delete the temporary spill file (a ``spill=`` path you gave is left for you).
        Also done when the recorder is garbage-collected and at interpreter exit."""
        self._spill_file.close()

    # ------------------------------------------------------------------ read
    @property
    def in_flight(self) -> int:
        """Retrievals started and not ended."""
        return len(self._pending)

    @property
    def dropped(self) -> int:
        """Records lost because the spill file could not be written (disk full)."""
        return self._spill_file.dropped

    @property
    def unmatched_ends(self) -> int:
        return self._unmatched_ends

    @property
    def total(self) -> int:
        """Retrievals recorded (ended, with or without an error; evicted ones included)."""
        return self._spilled + self.evicted + len(self._memory)

    @property
    def errors(self) -> int:
        """Retrievals that ended with an error."""
        with self._lock:
            memory = list(self._memory)
            spilled = sum(self._spilled_errors.values())
        return spilled + sum(raw[ERROR] is not None for raw in memory)

    def __len__(self) -> int:
        return self.total

    def records(self) -> Iterator[Retrieval]:
        """Every captured retrieval, oldest first (spilled ones read back; with
        ``spill=False``, the last ``max_records``)."""
        with self._lock:
            memory = list(self._memory)
            spilled = self._spilled
        yield from self._spill_file.read(spilled)
        for raw in memory:
            yield self.retrieval(raw)

    def clear(self) -> None:
        """Forget everything captured so far."""
        with self._lock:
            self._memory.clear()
            self._pending.clear()
            self._recent_spilled.clear()
            self._spilled = self.evicted = 0
            self._spilled_errors = {}
            self._first_error = None
            self._spill_file.reset()  # the next spill rewrites the file from its start

    def summary(self) -> dict[str, Any]:
        """Totals (with the failures' error types and the first failure) and, over the last
        ``window`` retrievals, error rate, latency p50/p95 and mean documents per
        retrieval: for a dashboard or a log line."""
        with self._lock:
            memory = list(self._memory)
            older = list(self._recent_spilled)
            spilled, types, first, pending = (
                self._spilled,
                dict(self._spilled_errors),
                self._first_error,
                len(self._pending),
            )
        total = spilled + self.evicted + len(memory)
        for raw in memory:
            if raw[ERROR] is not None:
                types[raw[ERROR][0]] = types.get(raw[ERROR][0], 0) + 1
                first = first or failure_text(raw)
        errors = sum(types.values())
        recent = [recent_of(raw) for raw in memory[-self.window :]] if self.window else []
        if len(recent) < self.window:  # the rest of the window from spilled records
            recent = older[max(0, len(older) - (self.window - len(recent))) :] + recent
        lat = np.array([x[0] for x in recent if x[1] and math.isfinite(x[0])])
        return {
            "retrievals": total,
            "dropped": self._spill_file.dropped,
            "evicted": self.evicted,
            "errors": errors,
            "error_types": types,
            "first_error": first,
            "in_flight": pending,
            "window": len(recent),
            "window_error_rate": (sum(not x[1] for x in recent) / len(recent)) if recent else 0.0,
            "latency_ms_p50": float(np.percentile(lat, 50)) if len(lat) else math.nan,
            "latency_ms_p95": float(np.percentile(lat, 95)) if len(lat) else math.nan,
            "docs_per_retrieval": float(np.mean([x[2] for x in recent])) if recent else 0.0,
        }

    def summary_line(self) -> str:
        """:meth:`summary` as one log line."""
        s = self.summary()
        errors = f"{s['errors']} errors"
        if s["errors"]:
            summary = {"count": s["errors"], "types": s["error_types"], "first": s["first_error"]}
            errors = failure_note(summary, "no hits")
        return (
            f"ranklens: {s['retrievals']} retrievals, {errors}, "
            f"p50 {s['latency_ms_p50']:.1f} ms, p95 {s['latency_ms_p95']:.1f} ms "
            f"(last {s['window']}), {s['docs_per_retrieval']:.1f} docs each"
        )

    def __repr__(self) -> str:
        return (
            f"Recorder({self.total} retrievals, {self.errors} errors, {self.in_flight} in flight)"
        )
