"""``ranklens.run_retriever``: ask a retriever every query of a labelled set, concurrently, and keep
everything it answered in a resumable log.

* A retriever is a plain function (sync or ``async``) of the query text (and optionally
  ``query_id`` and ``k``) returning ranked hits, a
  :class:`~ranklens.capture.contract.RetrieverAdapter`, or a LlamaIndex, LangChain or
  Haystack object, wrapped by the ``ranklens-llamaindex``, ``-langchain`` or ``-haystack``
  package through the adapter entry points (:mod:`ranklens.capture.contract`).
* Concurrency is bounded: ``concurrency`` workers on an asyncio loop; sync retrievers run in
  a thread pool of that size. Each attempt has a ``timeout``; errors of the ``retry_on``
  types are retried ``retries`` times with exponential backoff; any other failure is
  recorded (type and message) and the run goes on.
* With ``cache=PATH`` every finished query is appended to a JSONL log at once (one
  ``write`` of one line). Running again with the same log resumes: queries already answered
  are not asked again (failed ones are), and a log written by another configuration (its
  hash is in the first line) is refused. A process killed with SIGKILL loses only the
  queries in flight.
* Each hit is mapped to the labels' ids with ``key`` (see :mod:`ranklens.capture.hits`); chunks
  repeating a document already ranked are dropped and counted; the raw chunk-level hits
  stay in the log.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import declared as d
from ..declared import AT_LEAST_ONE, CALLING, ParameterError, choice, count, data, declare
from ..errors import InputError, RunInterrupted, UnknownOptionError, suggest
from ..settings import TRANSIENT, Calling, settled
from .contract import RetrieverAdapter, as_retriever
from .hits import KEY, KeyLike, check_key, key_name
from .identity import plain
from .log import RunLog
from .progress import Progress
from .records import Retrieval
from .result import RunResult
from .run_checks import warn_at_end
from .session import Session

log = logging.getLogger("ranklens")

__all__ = ["CALLS", "TRANSIENT", "RunSettings", "arun_retriever", "run_retriever"]

CALLS = Calling()
"""How the runner calls a retriever by default (:data:`~ranklens.settings.TRANSIENT` errors
retried twice, 8 in flight)."""

CALLS_OPTION = data("how the retriever is called: a ranklens.Calling (None: the defaults)")


def _queries(queries: Any) -> list[tuple[str, str]]:
    if hasattr(queries, "queries") and hasattr(queries, "qrels"):  # a Dataset
        queries = queries.queries
    if isinstance(queries, Mapping):
        out = [(_query_id(k), v) for k, v in queries.items()]
    elif isinstance(queries, Iterable) and not isinstance(queries, str):
        out = []
        for i, item in enumerate(queries, 1):
            if isinstance(item, str):
                out.append((f"q{i}", item))
            elif isinstance(item, Sequence) and len(item) == 2:
                out.append((_query_id(item[0]), item[1]))
            else:
                raise InputError(f"query {i}: expected a text or an (id, text) pair, got {item!r}")
    else:
        raise InputError("queries must be {id: text}, a list of texts or (id, text) pairs")
    seen: set[str] = set()
    for i, (qid, text) in enumerate(out, 1):
        if not qid.strip():
            raise InputError(f"query {i}: the query id must be a non-empty text, got {qid!r}")
        if not isinstance(text, str):
            raise InputError(f"query {qid!r}: the text must be a string, got {type(text).__name__}")
        if qid in seen:
            raise InputError(f"query {qid!r} appears twice")
        seen.add(qid)
    return out


_RUN_OPTIONS = {
    "retriever": data("a function, a RetrieverAdapter or a framework's retriever"),
    "queries": data("{id: text}, a Dataset, texts or (id, text) pairs"),
    "k": count(None, AT_LEAST_ONE, "documents kept per query (None: all)", none=True),
    "key": KEY,
    "fetch_k": count(None, AT_LEAST_ONE, "hits asked of the retriever, at least k", none=True),
    "calls": CALLS_OPTION,
    **CALLING,
    "retry_failed": d.flag(True, "ask failed queries again when resuming a log"),
    "name": d.text(None, "the run's name (None: the retriever's)", none=True),
    "config": d.mapping(None, "the facts naming this configuration in the log", none=True,
                        empty=True),
}  # fmt: skip
RUN = declare("run_retriever", {
    **_RUN_OPTIONS,
    "backend": choice("local", ("local", "ray"), "where the queries run"),
    "ray_options": data("the Ray backend's options (retriever_factory, actors, ...)"),
})  # fmt: skip
ARUN = declare("arun_retriever", _RUN_OPTIONS)

RESERVED = ("retriever", "k", "key", "fetch_k")
"""The run log's own configuration fields: a ``config=`` fact of one of these names is kept
under ``"config"`` instead of replacing the runner's own."""


def _query_id(value: Any) -> str:
    """A query id as a text: a text or a whole number (None, containers and floats are
    refused: ``str()`` would make ``"None"`` or ``"['x']"`` of them)."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    raise InputError(f"queries: a query id must be a text or a whole number, got {value!r:.80}")


RUNNER_GIVES_RAY = frozenset({"items", "run", "retriever", "calls", "name", "options"})
"""What :func:`run_retriever` hands the Ray backend itself: never a user's option."""


@RUN.checks
def run_retriever(
    retriever: Any,
    queries: Any,
    *,
    k: int | None = None,
    key: KeyLike = "id",
    fetch_k: int | None = None,
    calls: Calling | None = None,
    retry_failed: bool = True,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
    backend: str = "local",
    **options: Any,
) -> RunResult:
    """Run ``retriever`` over ``queries`` and return a :class:`RunResult`.

    ``queries``: ``{id: text}``, a :class:`~ranklens.Dataset`, texts (ids ``q1``...) or
    ``(id, text)`` pairs. ``k``: documents kept per query (None keeps all; adapters ask
    the retriever for ``k`` when they can). ``key``: how a hit names a labelled document
    (:mod:`ranklens.capture.hits`). ``fetch_k``: how many hits to ask the retriever for when that
    should be more than ``k`` (chunks of one document merged by ``key="parent"`` leave
    fewer documents than chunks; the first ``k`` documents are kept).
    ``calls=Calling(concurrency=..., timeout=..., retries=..., retry_on=..., backoff=...,
    cache=..., progress=...)``: how the retriever is called (:class:`~ranklens.Calling`):
    ``concurrency`` queries in flight; ``timeout`` seconds per attempt;
    ``retries``/``retry_on``/``backoff``: retry transient errors after ``backoff * 2**i``
    seconds (with jitter); ``cache``: the JSONL run log to write and resume from (an
    interrupted run, Ctrl-C included, resumes there with no finished query asked again);
    ``progress``: a progress bar (default: when stderr is a terminal). The same keywords
    given flat (``run_retriever(r, ds, concurrency=4)``) still work for one release, with a
    ``DeprecationWarning`` showing the new spelling; flat keywords beside ``calls=`` are an
    error naming both. ``retry_failed``: ask failed queries again on resume. ``name``: the
    run's name (default: the retriever's, a function's own name). ``config``: the facts
    that name this configuration in the log (e.g. ``{"chunk_size": 512, "index": "v3"}``;
    any plain values); without it the retriever is identified by
    :func:`~ranklens.capture.identity.fingerprint` (a function's code, closure values and
    partial arguments, an object's attributes), and a retriever whose mutable state (a call
    counter, a cache) changes between runs needs ``config=`` to resume its log.

    Each record keeps the call's wall-clock ``latency_ms`` and, for a sync retriever, its
    thread's ``cpu_ms`` (see :mod:`~ranklens.capture.session`: at a concurrency above one
    a retriever computing in Python waits for the CPU and the GIL, which its latency
    includes and its CPU time does not).

    In a running event loop (Jupyter), the work runs on a loop of its own in a thread;
    ``await arun_retriever(...)`` avoids that.

    ``backend="ray"`` runs on Ray actors (:mod:`ranklens.capture.on_ray`): give
    ``retriever_factory=`` (each actor builds its retriever once; ``retriever`` is then
    None), ``actors``, ``num_cpus``/``num_gpus`` per actor, ``address`` of a cluster, and
    ``Calling(cache=...)`` a folder of per-shard logs.
    """
    flat = RUN.check({n: options.pop(n) for n in CALLING if n in options}, "run_retriever")
    calls = settled("run_retriever", calls, flat, CALLS, "calls")
    settings = RunSettings(k, key, calls, retry_failed, name, config, fetch_k)
    ray_options = options
    if backend != "local" or ray_options:
        from .on_ray import run_on_ray

        ray_keys = [*inspect.signature(run_on_ray).parameters]
        unknown = [o for o in ray_options if o not in ray_keys or o in RUNNER_GIVES_RAY]
        if unknown:  # a misspelled option, never blamed on the backend
            raise UnknownOptionError(
                f"run_retriever() got an unexpected keyword {unknown[0]!r}"
                + suggest(
                    unknown[0], [*inspect.signature(run_retriever).parameters, *CALLING, *ray_keys]
                )
            )

        if backend != "ray":
            raise InputError(f"backend must be 'local' or 'ray' (with its options): {backend!r}")
        local = dict(k=k, key=key, retry_failed=retry_failed, config=config, fetch_k=fetch_k)
        result = run_on_ray(_queries(queries), ray_options.pop("retriever_factory", None),
                            run_retriever, retriever=retriever, calls=calls, name=name,
                            options=local, **ray_options)  # fmt: skip
        warn_at_end(result, k, key, fetch_k)
        return result
    state: dict[str, Any] = {}
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        try:
            result = asyncio.run(_arun(retriever, queries, settings, state))
        except KeyboardInterrupt:
            raise interrupted(state) from None
        warn_at_end(result, k, key, fetch_k, state.get("takes_k"))
        return result
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(_arun(retriever, queries, settings, state))
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="ranklens-run", daemon=True)
    t.start()
    try:
        while t.is_alive():
            t.join(0.1)
    except KeyboardInterrupt:  # a notebook's interrupt: stop the run's loop, then say so
        loop, task = state.get("loop"), state.get("task")
        if loop is not None and task is not None:
            loop.call_soon_threadsafe(task.cancel)
            t.join(10)
        raise interrupted(state) from None
    if "error" in box:
        raise box["error"]
    done: RunResult = box["result"]
    warn_at_end(done, k, key, fetch_k, state.get("takes_k"))
    return done


def interrupted(state: Mapping[str, Any]) -> RunInterrupted:
    """What an interrupted run kept: finished queries, and where to resume."""
    total, finished = state.get("total", 0), state.get("finished", lambda: 0)()
    cache = state.get("cache")
    where = (
        f"{finished:,} of {total:,} queries are saved in {cache}; run again with the same "
        "cache= to resume (finished queries are not asked again)"
        if cache is not None
        else f"{finished:,} of {total:,} queries had finished; nothing was saved (pass "
        "cache=PATH to make a run resumable)"
    )
    msg = f"ranklens.run_retriever interrupted: {where}"
    log.warning(msg)
    return RunInterrupted(msg)


@ARUN.checks
async def arun_retriever(
    retriever: Any,
    queries: Any,
    *,
    k: int | None = None,
    key: KeyLike = "id",
    fetch_k: int | None = None,
    calls: Calling | None = None,
    retry_failed: bool = True,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
    **flat: Any,
) -> RunResult:
    """The coroutine behind :func:`run_retriever` (same arguments: ``calls=Calling(...)``;
    the flat calling keywords are deprecated)."""
    calls = settled("arun_retriever", calls, ARUN.check(flat), CALLS, "calls")
    settings = RunSettings(k, key, calls, retry_failed, name, config, fetch_k)
    state: dict[str, Any] = {}
    result = await _arun(retriever, queries, settings, state)
    warn_at_end(result, k, key, fetch_k, state.get("takes_k"), depth=4)
    return result


@dataclass(frozen=True)
class RunSettings:
    """The arguments of :func:`run_retriever` after the retriever and the queries, checked once."""

    k: int | None
    key: KeyLike
    calls: Calling
    retry_failed: bool
    name: str | None
    config: Mapping[str, Any] | None
    fetch_k: int | None = None

    def __post_init__(self) -> None:
        # each value was checked by its declaration (RUN, CALLING); what no one says:
        RUN.check({n: getattr(self, n) for n in ("k", "key", "fetch_k", "retry_failed", "name",
                   "config")}, "run_retriever")  # fmt: skip
        check_key(self.key, "run_retriever")
        if self.fetch_k is not None and (self.k or 0) > self.fetch_k:
            raise ParameterError(
                f"run_retriever: fetch_k must be at least k ({self.k}), got {self.fetch_k}"
            )
        types = self.retry_types
        if not types or not all(isinstance(t, type) and issubclass(t, BaseException)
                                for t in types):  # fmt: skip
            raise ParameterError(
                "run_retriever: retry_on must be an exception type or a tuple of them "
                f"(the errors retried), got {self.calls.retry_on!r}"
            )

    @property
    def retry_types(self) -> tuple[type[BaseException], ...]:
        retry_on = self.calls.retry_on
        return tuple(retry_on) if isinstance(retry_on, tuple) else (retry_on,)

    def log_config(self, adapter: RetrieverAdapter) -> dict[str, Any]:
        """What the run log hashes: the retriever's configuration (without its automatic
        fingerprint when ``config`` names the configuration), ``k``, ``key``,
        ``fetch_k`` (when given) and ``config`` (as plain JSON values:
        :func:`~ranklens.capture.identity.plain`)."""
        retriever = adapter.config()
        if self.config:
            retriever.pop("state", None)
        out: dict[str, Any] = {"retriever": retriever, "k": self.k, "key": key_name(self.key)}
        if self.fetch_k is not None:
            out["fetch_k"] = self.fetch_k
        for fact, value in plain(dict(self.config or {})).items():
            if fact in RESERVED:  # never over the runner's own fields (still hashed)
                out.setdefault("config", {})[fact] = value
            else:
                out[fact] = value
        return out

    def run_name(self, full_config: Mapping[str, Any], adapter: RetrieverAdapter) -> str:
        """The run's name: ``name``, else a ``config=`` naming the retriever with a text
        (``{"retriever": "bm25-v2"}``), else the retriever's own name or class."""
        named = (self.config or {}).get("retriever")
        retriever = full_config["retriever"]
        return str(
            self.name
            or (named if isinstance(named, str) and named.strip() else None)
            or (retriever.get("name") if isinstance(retriever, Mapping) else None)
            or (retriever.get("class") if isinstance(retriever, Mapping) else None)
            or getattr(adapter, "name", None)
            or "run"
        )


async def _arun(retriever: Any, queries: Any, s: RunSettings, state: dict[str, Any]) -> RunResult:
    adapter = as_retriever(retriever)
    state["takes_k"] = adapter.takes_k
    if s.fetch_k is not None and not adapter.takes_k:
        raise InputError(
            f"fetch_k={s.fetch_k}: this {type(adapter).__name__} is not asked for a number of "
            "hits (its own top-k setting decides): set that instead, e.g. a LlamaIndex "
            "retriever's similarity_top_k or a LangChain retriever's k / search_kwargs"
        )
    items = _queries(queries)
    full_config = s.log_config(adapter)
    name = s.run_name(full_config, adapter)
    cache = s.calls.cache
    log = RunLog(cache, full_config) if cache is not None else None
    done: dict[str, Retrieval] = {}
    changed = 0
    if log is not None:
        texts = dict(items)
        done = {
            q: r
            for q, r in log.records.items()
            if (r.ok or not s.retry_failed) and q in texts and r.query == texts[q]
        }
        changed = sum(1 for q, r in log.records.items() if q in texts and r.query != texts[q])
    todo = [(q, t) for q, t in items if q not in done]
    session = Session(adapter, s, log)
    state.update(loop=asyncio.get_running_loop(), task=asyncio.current_task(),
                 total=len(items), cache=cache,
                 finished=lambda: len(done) + len(session.results))  # fmt: skip
    bar = Progress(len(items), len(items) - len(todo), name, s.calls.progress)
    started = time.perf_counter()
    try:
        await session.run_all(todo, bar)
    finally:
        session.close()
    records = [session.results.get(q) or done[q] for q, _ in items]
    result = RunResult(
        records,
        name,
        full_config,
        resumed=len(items) - len(todo),
        requeried_changed_text=changed,
        wall_seconds=round(time.perf_counter() - started, 3),
        torn_log_lines=log.torn_lines if log is not None else 0,
        concurrency=s.calls.concurrency,
    )
    result.key = s.key
    return result
