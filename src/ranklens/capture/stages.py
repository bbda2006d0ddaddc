"""A pipeline's stages captured: each stage's output for each query, beside the
pipeline's final ranking.

A RAG pipeline passes each query through ordered stages: retrievers, fusion, a reranker,
filters and postprocessors, context packing. ranklens records every stage's output as a
:class:`~ranklens.capture.records.Stage` (its hits, its ranking in the labels' id space,
its latency, its error) in ``Retrieval.stages``, so every stage is judged
against the same labels (``RunResult.staged()``, ``Recorder.staged()``:
:class:`~ranklens.StagedRun`).

How stages reach a record:

* :class:`Pipeline` (``ranklens.Pipeline``): a retriever for ``run_retriever`` /
  ``arun_retriever`` made of plain stage callables, ``Pipeline([("bm25", f), ("rerank",
  g), ("context", h)])`` or a dict. The first takes the query text (and ``query_id`` /
  ``k`` when it names them, as a function retriever does); it may also be anything the
  runner takes as a retriever (a framework's retriever, an adapter). Each later one is
  called ``g(query_text, hits)`` with the previous stage's output (the very list and hit
  objects it returned) and returns hits in any form the runner takes (ids, ``(id,
  score)`` pairs, dicts, :class:`~ranklens.Hit`); ``async`` callables too (the sync ones
  of an async pipeline run on daemon threads). Each stage's call is timed.
* An adapter of a framework's pipeline returns :class:`~ranklens.capture.contract.Staged`
  from its retrieval: the final hits carrying ``stages``, a list of ``Stage(name,
  hits=..., latency_ms=..., kind=...)`` with hits in any form the runner takes; a plain
  function retriever may return one too.
* A live hook gives ``Recorder.record(query, hits, stages=[Stage(...), ...])`` (the hits
  converted as the final hits are, by the hook's ``convert``).

The runner maps each stage's hits with its ``key`` (:func:`map_stages`: ``doc_ids``,
``scores``, the hits' records with their chunk positions, repeats and unmapped hits
counted), exactly as it maps the final hits; each stage's list is kept whole (``k`` cuts
only the final ranking). A stage may return no hits (later stages receive ``[]``) or hits
no earlier stage had (a reranker or fusion adding documents: allowed, and counted when the
stages are judged).

A failing stage fails the query (recorded, the run goes on, retried as any failure of the
retriever): the error names the stage (``"stage 'rerank': ValueError: ..."``), and the
failed record keeps the stages before it with the failing one's error. A stage returning
None or something that is not a list of hits is such a failure, named. A timeout names the
stage that was running.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..declared import data, declare, text
from ..errors import InputError
from .contract import RetrieverAdapter, Staged, as_retriever, keywords_taken
from .hits import Hit, KeyLike, coerce_hit, key_function
from .identity import state_digest
from .records import Stage
from .threads import DaemonPool

__all__ = ["Pipeline", "Stage", "Staged", "map_stages", "stage_failure"]

PIPELINE = declare("Pipeline", {
    "stages": data("the stages in pipeline order: [(name, callable), ...], [(name, "
                   "callable, kind), ...] or {name: callable}"),
    "name": text(None, "the run's name (None: 'pipeline')", none=True),
})  # fmt: skip

STAGE_KEY = "ranklens_stage"
"""The attribute of an exception naming the stage that raised it."""
STAGES_KEY = "ranklens_stages"
"""The attribute of an exception holding the stages run before it (the failing one last)."""


class _Step:
    """One stage of a :class:`Pipeline`: its callable (or the first stage's adapter) and
    the keywords it takes."""

    __slots__ = ("adapter", "fn", "is_async", "kind", "name", "pass_id", "pass_k")

    def __init__(self, name: str, obj: Any, kind: str | None, first: bool) -> None:
        self.name, self.kind = name, kind
        self.adapter: RetrieverAdapter | None = None
        self.fn: Callable[..., Any] = obj
        if first and (isinstance(obj, RetrieverAdapter) or not _plain_callable(obj)):
            self.adapter = as_retriever(obj)  # a framework's retriever, an adapter
            self.is_async, self.pass_id, self.pass_k = self.adapter.is_async, True, True
            return
        if not callable(obj):
            raise InputError(
                f"Pipeline: stage {name!r} must be a callable (query, hits) -> hits"
                + (" or a retriever" if first else "")
                + f", got {type(obj).__name__}"
            )
        self.is_async, self.pass_id, self.pass_k = keywords_taken(obj)

    def kwargs(self, query_id: str, k: int | None) -> dict[str, Any]:
        kw: dict[str, Any] = {}
        if self.pass_id:
            kw["query_id"] = query_id
        if self.pass_k:
            kw["k"] = k
        return kw

    def config(self) -> dict[str, Any]:
        if self.adapter is not None:
            return {"name": self.name, **self.adapter.config()}
        target = getattr(self.fn, "func", self.fn)
        return {
            "name": self.name,
            "function": f"{getattr(target, '__module__', '?')}."
            f"{getattr(target, '__qualname__', type(target).__name__)}",
            "state": state_digest(self.fn),
        }


def _plain_callable(obj: Any) -> bool:
    """A function, a partial or a callable object of no framework (those go through
    :func:`~ranklens.capture.contract.as_retriever`, which finds their adapter)."""
    if not callable(obj):
        return False
    if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj):
        return True
    module = (type(getattr(obj, "func", obj)).__module__ or "").split(".")[0]
    return module not in ("llama_index", "langchain_core", "langchain", "haystack",
                          "langchain_community")  # fmt: skip


def _items(stages: Any) -> list[tuple[str, Any, str | None]]:
    """The stages as ``(name, callable, kind)``, each name checked once."""
    if isinstance(stages, Mapping):
        given: list[Any] = [(k, v) for k, v in stages.items()]
    elif isinstance(stages, (str, bytes)) or not isinstance(stages, Iterable):
        raise InputError(
            "Pipeline: stages must be a list of (name, callable) pairs or a dict {name: "
            f"callable}}, got {type(stages).__name__}"
        )
    else:
        given = list(stages)
    if not given:
        raise InputError(
            "Pipeline: no stages; give at least one, e.g. Pipeline([('bm25', retrieve), "
            "('rerank', rerank)])"
        )
    out: list[tuple[str, Any, str | None]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(given, 1):
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
            raise InputError(
                f"Pipeline: stage {i} must be a (name, callable) pair (or (name, callable, "
                f"kind)), got {item!r:.80}"
            )
        name, obj, kind = (*item, None) if len(item) == 2 else item
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"Pipeline: stage {i}'s name must be a non-empty text, got {name!r}")
        if kind is not None and not isinstance(kind, str):
            raise InputError(f"Pipeline: stage {name!r}'s kind must be a text, got {kind!r}")
        if name in seen:
            raise InputError(
                f"Pipeline: the stage name {name!r} is given twice (stages {seen[name]} and "
                f"{i}); name each stage once, e.g. {name!r} and '{name}_2'"
            )
        seen[name] = i
        out.append((name, obj, kind))
    return out


@PIPELINE.checks
class Pipeline(RetrieverAdapter):
    """A retriever made of stages, each recorded: see the module docstring.

    >>> pipe = Pipeline([("first", lambda q: ["a", "b", "c"]),
    ...                  ("keep_two", lambda q, hits: hits[:2])])
    >>> pipe.names
    ('first', 'keep_two')
    """

    def __init__(
        self,
        stages: Sequence[tuple[Any, ...]] | Mapping[str, Any],
        *,
        name: str | None = None,
    ) -> None:
        items = _items(stages)
        self._steps = [_Step(n, obj, kind, i == 0) for i, (n, obj, kind) in enumerate(items)]
        if self._steps[0].kind is None:
            self._steps[0].kind = "retriever"
        self.names: tuple[str, ...] = tuple(s.name for s in self._steps)
        self.kinds: dict[str, str | None] = {s.name: s.kind for s in self._steps}
        self._name = name
        self.is_async = any(s.is_async for s in self._steps)
        first = self._steps[0]
        self.takes_k = first.adapter.takes_k if first.adapter is not None else first.pass_k
        self._progress: dict[str, list[Any]] = {}
        self._pool: DaemonPool | None = None
        self._busy = 0
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name or "pipeline"

    def config(self) -> dict[str, Any]:
        """The stages' names and callables (each function's name; one digest of their
        code and state, under ``state`` as a function retriever's is, so that
        ``config=`` given to the runner replaces it)."""
        steps = [s.config() for s in self._steps]
        states = [s.pop("state", None) for s in steps]
        out: dict[str, Any] = {"class": "Pipeline", "stages": steps, "state": state_digest(states)}
        if self._name:
            out["name"] = self._name
        return out

    def progress(self, query_id: str) -> tuple[str | None, list[Stage]]:
        """The stage running for ``query_id`` (None when none is) and the stages it has
        finished: what a timeout's record says and keeps."""
        entry = self._progress.get(query_id)
        if entry is None:
            return None, []
        return entry[0], list(entry[1])

    # ------------------------------------------------------------------ calls
    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        stages: list[Stage] = []
        entry: list[Any] = [None, stages]
        self._progress[query_id] = entry
        prev: list[Any] = []
        hits: list[Hit] = []
        memo: dict[int, tuple[Any, Any, Hit]] = {}
        for i, step in enumerate(self._steps):
            entry[0] = step.name
            t0 = time.perf_counter()
            try:
                if step.adapter is not None:
                    out: Any = step.adapter.retrieve(query, query_id, k)
                elif i == 0:
                    out = step.fn(query, **step.kwargs(query_id, k))
                else:
                    out = step.fn(query, prev, **step.kwargs(query_id, k))
                ms = (time.perf_counter() - t0) * 1000
                prev, hits = _taken(out, step.name, query_id, memo)
            except Exception as exc:
                raise self._failed(exc, step, stages, t0, query_id, entry) from None
            stages.append(Stage(step.name, hits=hits, latency_ms=ms, kind=step.kind))
        self._done(query_id, entry)
        return Staged(hits, stages)

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        stages: list[Stage] = []
        entry: list[Any] = [None, stages]
        self._progress[query_id] = entry
        prev: list[Any] = []
        hits: list[Hit] = []
        memo: dict[int, tuple[Any, Any, Hit]] = {}
        for i, step in enumerate(self._steps):
            entry[0] = step.name
            t0 = time.perf_counter()
            try:
                out, t0 = await self._acall(step, i, query, query_id, k, prev, t0)
                ms = (time.perf_counter() - t0) * 1000
                prev, hits = _taken(out, step.name, query_id, memo)
            except Exception as exc:
                raise self._failed(exc, step, stages, t0, query_id, entry) from None
            stages.append(Stage(step.name, hits=hits, latency_ms=ms, kind=step.kind))
        self._done(query_id, entry)
        return Staged(hits, stages)

    async def _acall(
        self, step: _Step, i: int, query: str, query_id: str, k: int | None, prev: list[Any],
        t0: float,
    ) -> tuple[Any, float]:  # fmt: skip
        """One stage's answer in an async pipeline and when its call began: an async
        stage awaited, a sync one on a daemon thread (timed from when the thread runs it)."""
        if step.adapter is not None:
            if step.adapter.is_async:
                return await step.adapter.aretrieve(query, query_id, k), t0
            fn: Callable[..., Any] = step.adapter.retrieve
            args: tuple[Any, ...] = (query, query_id, k)
            return await self._on_thread(fn, args)
        kw = step.kwargs(query_id, k)
        args = (query,) if i == 0 else (query, prev)
        if step.is_async:
            return await step.fn(*args, **kw), t0
        return await self._on_thread(lambda: step.fn(*args, **kw), ())

    async def _on_thread(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, float]:
        with self._lock:
            if self._pool is None:
                self._pool = DaemonPool(1, "ranklens-stage")
            self._busy += 1
            pool = self._pool
        try:
            pool.grow_to(self._busy)
            result, t0, _ = await pool.call(fn, args, None)
            return result, t0
        finally:
            with self._lock:
                self._busy -= 1

    def _failed(
        self, exc: Exception, step: _Step, stages: list[Stage], t0: float, query_id: str,
        entry: list[Any],
    ) -> Exception:  # fmt: skip
        """``exc`` marked with the stage that raised it and the stages so far (the failing
        one last, with its error), for the runner's record."""
        ms = (time.perf_counter() - t0) * 1000
        error = {"type": type(exc).__name__, "message": str(exc)[:500] or "(no message)"}
        stages.append(Stage(step.name, latency_ms=ms, error=error, kind=step.kind))
        self._done(query_id, entry)
        try:
            setattr(exc, STAGE_KEY, step.name)
            setattr(exc, STAGES_KEY, stages)
        except AttributeError:  # an exception type without attributes: say it in the message
            return RuntimeError(f"stage {step.name!r}: {type(exc).__name__}: {exc}")
        return exc

    def _done(self, query_id: str, entry: list[Any]) -> None:
        if self._progress.get(query_id) is entry:  # not a later attempt's
            del self._progress[query_id]

    def close(self) -> None:
        """Let the threads of an async pipeline's sync stages go (they are daemons: they
        never block exit)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown()

    def __del__(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown()

    def __getstate__(self) -> dict[str, Any]:  # shipped to Ray actors: no threads, no lock
        state = dict(self.__dict__)
        state.update(_pool=None, _lock=None, _progress={}, _busy=0)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Pipeline({self.name!r}: {' -> '.join(self.names)})"


_SCALARS = (str, int, float, type(None))


def _taken(
    out: Any, stage: str, query_id: str, memo: dict[int, tuple[Any, Any, Hit]]
) -> tuple[list[Any], list[Hit]]:
    """A stage's answer: the list passed to the next stage (the one it returned, or its
    items listed) and the hits recorded. None, a text, a dict or anything that is not a
    list of hits is an error naming the stage and the query.

    The recorded hits are the pipeline's own: a :class:`~ranklens.Hit` the stage returned
    is copied (a later stage may change it in place). An item an earlier stage of the
    same call returned too (``memo``: by identity) gives the same recorded hit when it
    cannot have changed: an id or a tuple of plain values, or a ``Hit`` whose fields and
    metadata are as they were (compared with a copy taken then); dicts are read anew."""
    if (
        out is None
        or isinstance(out, (str, bytes, bytearray, Mapping))
        or not isinstance(out, Iterable)
    ):
        kind = "None" if out is None else type(out).__name__
        raise TypeError(
            f"stage {stage!r} returned {kind} for query {query_id!r}; expected a list of hits "
            "(ids, (id, score) pairs, dicts or ranklens.Hit; [] when it keeps none)"
        )
    given = out if type(out) is list else list(out)
    hits = []
    for r, x in enumerate(given, 1):
        kept = memo.get(id(x))
        if kept is not None and kept[0] is x and (kept[1] is None or kept[1] == _state(x)):
            hits.append(kept[2])
            continue
        t = type(x)
        if t is Hit:
            hit, snap = _copy(x), _state(x)
        else:
            hit = coerce_hit(x, query_id, r)
            plain = t is str or t is int or (t is tuple and all(type(v) in _SCALARS for v in x))
            if not plain:
                hits.append(hit)
                continue
            snap = None
        memo[id(x)] = (x, snap, hit)  # x kept alive: its id stays its own
        hits.append(hit)
    return given, hits


def _state(hit: Hit) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a hit holds now: its fields and a copy of its metadata."""
    return dict(hit.__dict__), dict(hit.metadata)


def _copy(hit: Hit) -> Hit:
    """A hit as it is now (its metadata copied: a later stage may change that in place)."""
    new = object.__new__(Hit)
    new.__dict__.update(hit.__dict__)
    new.metadata = dict(hit.metadata)
    return new


def map_stages(stages: Sequence[Stage], key: KeyLike, query_id: str) -> list[Stage]:
    """``stages`` with their hits mapped by ``key``: each stage's ``doc_ids``, ``scores``,
    hits' records (``Hit.to_json``: text shortened, chunk positions kept) and the repeats
    and unmapped hits counted, as :func:`~ranklens.capture.hits.map_hits` maps a ranking
    (a hit several stages hold, the same object, is read once). A hit that is not a hit,
    or a raising ``key``, is an error marked with the stage's name (the query's
    failure)."""
    fn = key_function(key)
    memo: dict[int, tuple[Any, str | None, dict[str, Any], float | None]] = {}
    out = []
    for st in stages:
        try:
            out.append(_mapped(st, fn, query_id, memo))
        except Exception as exc:
            try:
                setattr(exc, STAGE_KEY, st.name)
            except AttributeError:
                raise InputError(f"stage {st.name!r}: {exc}") from exc
            raise
    return out


def _mapped(
    st: Stage,
    fn: Callable[[Hit], str | None],
    query_id: str,
    memo: dict[int, tuple[Any, str | None, dict[str, Any], float | None]],
) -> Stage:
    """One stage mapped (see :func:`map_stages`; first rank wins, as ``map_hits``); a
    stage handed over with ``doc_ids`` keeps them (already mapped), its hits recorded."""
    if st.doc_ids:
        hits = [x if type(x) is Hit else coerce_hit(x, query_id, r)
                for r, x in enumerate(st.hits, 1)]  # fmt: skip
        return Stage(st.name, list(st.doc_ids), list(st.scores) or [None] * len(st.doc_ids),
                     [h.to_json() for h in hits], st.latency_ms, st.error, st.kind,
                     st.duplicates, st.unmapped)  # fmt: skip
    seen: set[str] = set()
    doc_ids: list[str] = []
    scores: list[float | None] = []
    raw: list[dict[str, Any]] = []
    duplicates = unmapped = 0
    for r, x in enumerate(st.hits, 1):
        kept = memo.get(id(x))
        if kept is None or kept[0] is not x:
            h = x if type(x) is Hit else coerce_hit(x, query_id, r)
            kept = memo[id(x)] = (x, fn(h), h.to_json(), h.score)
        raw.append(dict(kept[2]))
        doc = kept[1]
        if doc is None:
            unmapped += 1
        elif doc in seen:
            duplicates += 1
        else:
            seen.add(doc)
            doc_ids.append(doc)
            scores.append(kept[3])
    return Stage(st.name, doc_ids, scores, raw, st.latency_ms, st.error, st.kind,
                 duplicates, unmapped)  # fmt: skip


def stage_failure(
    exc: BaseException, adapter: Any, query_id: str, key: KeyLike
) -> tuple[str | None, list[Stage] | None]:
    """For a failed attempt: the stage to name in its error (the one that raised, or the
    one running when the runner's timeout struck) and the stages to keep in its record
    (mapped by ``key``; a stage whose hits cannot be mapped is kept with its error only).
    ``(None, None)`` for a retriever that is not a pipeline."""
    stage = getattr(exc, STAGE_KEY, None)
    stages = getattr(exc, STAGES_KEY, None)
    if stage is None and isinstance(adapter, Pipeline):
        running, stages = adapter.progress(query_id)
        adapter._progress.pop(query_id, None)  # a timed-out call never ends it itself
        if running is not None:
            stage = running
            error = {"type": type(exc).__name__, "message": str(exc)[:500] or "(no message)"}
            stages = [*stages, Stage(running, error=error, kind=adapter.kinds.get(running))]
    elif stage is None and callable(getattr(adapter, "progress", None)):
        # a framework adapter that reports its progress: the stage running at the timeout
        running, found = adapter.progress(query_id)
        if running is not None:
            stage = running
            error = {"type": type(exc).__name__, "message": str(exc)[:500] or "(no message)"}
            stages = [*found, Stage(running, error=error)]
    if stages is None:
        return (str(stage) if stage is not None else None), None
    kept = []
    fn = key_function(key)
    for st in stages:
        if not isinstance(st, Stage):
            continue
        try:
            kept.append(_mapped(st, fn, query_id, {}))
        except Exception as err:
            message = f"its hits could not be recorded: {type(err).__name__}: {err}"[:500]
            error = st.error or {"type": type(err).__name__, "message": message}
            kept.append(Stage(st.name, latency_ms=st.latency_ms, error=error, kind=st.kind))
    return (str(stage) if stage is not None else None), kept
