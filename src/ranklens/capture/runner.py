"""``ranklens.run``: ask a retriever every query of a labelled set, concurrently, and keep
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
* Each hit is mapped to the labels' ids with ``key`` (see :mod:`ranklens.hits`); chunks
  repeating a document already ranked are dropped and counted; the raw chunk-level hits
  stay in the log.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, RanklensWarning, RunFailuresWarning
from ..judging.options import failure_note, failure_summary
from .contract import RetrieverAdapter, as_retriever
from .hits import Hit, KeyLike, key_name, map_hits
from .log import RunLog
from .progress import Progress
from .records import Retrieval
from .result import RunResult
from .threads import DaemonPool

log = logging.getLogger("ranklens")

TRANSIENT = (TimeoutError, ConnectionError)
"""Errors retried by default: timeouts and connection failures."""


def _queries(queries: Any) -> list[tuple[str, str]]:
    if hasattr(queries, "queries") and hasattr(queries, "qrels"):  # a Dataset
        queries = queries.queries
    if isinstance(queries, Mapping):
        out = [(str(k), v) for k, v in queries.items()]
    elif isinstance(queries, Iterable) and not isinstance(queries, str):
        out = []
        for i, item in enumerate(queries, 1):
            if isinstance(item, str):
                out.append((f"q{i}", item))
            elif isinstance(item, Sequence) and len(item) == 2:
                out.append((str(item[0]), item[1]))
            else:
                raise InputError(f"query {i}: expected a text or an (id, text) pair, got {item!r}")
    else:
        raise InputError("queries must be {id: text}, a list of texts or (id, text) pairs")
    seen: set[str] = set()
    for qid, text in out:
        if not isinstance(text, str):
            raise InputError(f"query {qid!r}: the text must be a string, got {type(text).__name__}")
        if qid in seen:
            raise InputError(f"query {qid!r} appears twice")
        seen.add(qid)
    return out


def run(
    retriever: Any,
    queries: Any,
    *,
    k: int | None = None,
    key: KeyLike = "id",
    concurrency: int = 8,
    timeout: float | None = None,
    retries: int = 2,
    retry_on: type[BaseException] | tuple[type[BaseException], ...] = TRANSIENT,
    backoff: float = 0.2,
    cache: str | Path | None = None,
    retry_failed: bool = True,
    progress: bool | None = None,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
    backend: str = "local",
    **ray_options: Any,
) -> RunResult:
    """Run ``retriever`` over ``queries`` and return a :class:`RunResult`.

    ``queries``: ``{id: text}``, a :class:`~ranklens.Dataset`, texts (ids ``q1``...) or
    ``(id, text)`` pairs. ``k``: hits kept per query (None keeps all; adapters ask the
    retriever for ``k`` when they can). ``key``: how a hit names a labelled document
    (:mod:`ranklens.hits`). ``concurrency``: queries in flight. ``timeout``: seconds per
    attempt. ``retries``/``retry_on``/``backoff``: retry transient errors after
    ``backoff * 2**i`` seconds (with jitter). ``cache``: the JSONL run log to write and
    resume from; ``retry_failed``: ask failed queries again on resume. ``progress``: a
    progress bar (default: when stderr is a terminal). ``config``: the facts that name
    this configuration in the log (e.g. ``{"chunk_size": 512, "index": "v3"}``); without it
    the retriever is identified by :func:`~ranklens.capture.identity.fingerprint` (a
    function's code, closure values and partial arguments, an object's attributes), and a
    retriever whose mutable state (a call counter, a cache) changes between runs needs
    ``config=`` to resume its log.

    In a running event loop (Jupyter), the work runs on a loop of its own in a thread;
    ``await arun(...)`` avoids that.

    ``backend="ray"`` runs on Ray actors (:mod:`ranklens.capture.on_ray`): give
    ``retriever_factory=`` (each actor builds its retriever once; ``retriever`` is then
    None), ``actors``, ``num_cpus``/``num_gpus`` per actor, ``address`` of a cluster, and
    ``cache=`` a folder of per-shard logs.
    """
    settings = RunSettings(
        k, key, concurrency, timeout, retries, retry_on, backoff, cache, retry_failed,
        progress, name, config,
    )  # fmt: skip
    if backend != "local" or ray_options:
        from .on_ray import run_on_ray

        if backend != "ray":
            raise InputError(f"backend must be 'local' or 'ray' (with its options): {backend!r}")
        options = dict(k=k, key=key, concurrency=concurrency, timeout=timeout, retries=retries,
                       retry_on=retry_on, backoff=backoff, retry_failed=retry_failed,
                       config=config)  # fmt: skip
        result = run_on_ray(_queries(queries), ray_options.pop("retriever_factory", None),
                            run, retriever=retriever, cache=cache, name=name, options=options,
                            **ray_options)  # fmt: skip
        _warn_at_end(result, k)
        return result
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        result = asyncio.run(_arun(retriever, queries, settings))
        _warn_at_end(result, k)
        return result
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(_arun(retriever, queries, settings))
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="ranklens-run")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    _warn_at_end(box["result"], k)
    return box["result"]


async def arun(
    retriever: Any,
    queries: Any,
    *,
    k: int | None = None,
    key: KeyLike = "id",
    concurrency: int = 8,
    timeout: float | None = None,
    retries: int = 2,
    retry_on: type[BaseException] | tuple[type[BaseException], ...] = TRANSIENT,
    backoff: float = 0.2,
    cache: str | Path | None = None,
    retry_failed: bool = True,
    progress: bool | None = None,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> RunResult:
    """The coroutine behind :func:`run` (same arguments)."""
    settings = RunSettings(
        k, key, concurrency, timeout, retries, retry_on, backoff, cache, retry_failed,
        progress, name, config,
    )  # fmt: skip
    result = await _arun(retriever, queries, settings)
    _warn_at_end(result, k)
    return result


@dataclass(frozen=True)
class RunSettings:
    """The arguments of :func:`run` after the retriever and the queries, checked once."""

    k: int | None
    key: KeyLike
    concurrency: int
    timeout: float | None
    retries: int
    retry_on: type[BaseException] | tuple[type[BaseException], ...]
    backoff: float
    cache: str | Path | None
    retry_failed: bool
    progress: bool | None
    name: str | None
    config: Mapping[str, Any] | None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.k is not None and self.k < 1:
            raise InputError(f"k must be at least 1, got {self.k}")
        if self.timeout is not None and not self.timeout > 0:
            raise InputError(
                f"timeout must be a positive number of seconds (or None), got {self.timeout}"
            )
        if self.retries < 0:
            raise InputError(f"retries must be 0 or more, got {self.retries}")

    @property
    def retry_types(self) -> tuple[type[BaseException], ...]:
        return self.retry_on if isinstance(self.retry_on, tuple) else (self.retry_on,)

    def log_config(self, adapter: RetrieverAdapter) -> dict[str, Any]:
        """What the run log hashes: the retriever's configuration (without its automatic
        fingerprint when ``config`` names the configuration), ``k``, ``key``, ``config``."""
        retriever = adapter.config()
        if self.config:
            retriever.pop("state", None)
        return {
            "retriever": retriever,
            "k": self.k,
            "key": key_name(self.key),
            **(dict(self.config) if self.config else {}),
        }


async def _arun(retriever: Any, queries: Any, s: RunSettings) -> RunResult:
    adapter = as_retriever(retriever)
    items = _queries(queries)
    full_config = s.log_config(adapter)
    name = s.name or str(
        full_config["retriever"].get("name") or full_config["retriever"].get("class") or "run"
    )
    log = RunLog(s.cache, full_config) if s.cache is not None else None
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
    session = _Session(adapter, s, log)
    bar = Progress(len(items), len(items) - len(todo), name, s.progress)
    started = time.perf_counter()
    try:
        await session.run_all(todo, bar)
    finally:
        session.close()
    records = [session.results.get(q) or done[q] for q, _ in items]
    return RunResult(
        records,
        name,
        full_config,
        resumed=len(items) - len(todo),
        requeried_changed_text=changed,
        wall_seconds=round(time.perf_counter() - started, 3),
        torn_log_lines=log.torn_lines if log is not None else 0,
    )


def _warn_at_end(result: RunResult, k: int | None) -> None:
    """Once per run: failures (count, types, first message), and a retriever that never
    returned ``k`` hits (configured for fewer?)."""
    failed = {r.query_id: r.error for r in result.records if not r.ok}
    if failed:
        msg = f"run {result.name!r}: " + failure_note(failure_summary(failed), "no hits")
        log.warning(msg)
        warnings.warn(msg, RunFailuresWarning, stacklevel=3)
    answered = [len(r.doc_ids) for r in result.records if r.ok]
    if k is not None and answered and max(answered) < k:
        msg = (
            f"run {result.name!r}: asked for k={k} but the retriever returned at most "
            f"{max(answered)} hits per query; is it configured with a smaller top-k? (metrics "
            f"at cutoffs above {max(answered)} see only what it returned)"
        )
        log.warning(msg)
        warnings.warn(msg, RanklensWarning, stacklevel=3)


class _Session:
    """One run's machinery: calls with timeout and retries, workers sharing a queue of
    queries, the log and the thread pool of a sync retriever."""

    def __init__(self, adapter: RetrieverAdapter, settings: RunSettings, log: RunLog | None):
        self.adapter, self.s = adapter, settings
        self.log = log
        self.results: dict[str, Retrieval] = {}
        self.pool: DaemonPool | None = None

    async def run_all(self, todo: list[tuple[str, str]], bar: Progress) -> None:
        """Ask every query of ``todo`` with ``concurrency`` workers."""
        concurrency = self.s.concurrency
        if not self.adapter.is_async:
            self.pool = DaemonPool(concurrency, "ranklens-retriever")
        it = iter(todo)

        async def worker() -> None:
            for qid, text in it:
                rec = await self.ask(qid, text)
                self.results[qid] = rec
                if self.log is not None:
                    self.log.append(rec)
                bar.advance(rec.ok)

        with bar:
            await asyncio.gather(*(worker() for _ in range(min(concurrency, max(len(todo), 1)))))

    async def call(self, text: str, qid: str) -> tuple[list[Hit], float]:
        """One attempt, within the timeout: ``(hits, start time)``. The timeout and the
        latency start when the retriever is called, not when the call is queued."""
        if self.adapter.is_async:
            t0 = time.perf_counter()
            coro = self.adapter.aretrieve(text, qid, self.s.k)
            if self.s.timeout is None:
                return await coro, t0
            return await asyncio.wait_for(coro, self.s.timeout), t0
        assert self.pool is not None
        return await self.pool.call(self.adapter.retrieve, (text, qid, self.s.k), self.s.timeout)

    async def ask(self, qid: str, text: str) -> Retrieval:
        """A query's record: its mapped hits, or the error of its last attempt."""
        attempt = 0
        while True:
            attempt += 1
            t0 = time.perf_counter()
            try:
                hits, t0 = await self.call(text, qid)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # recorded, never raised
                elapsed = (time.perf_counter() - getattr(exc, "started", t0)) * 1000
                timed_out = isinstance(exc, asyncio.TimeoutError | TimeoutError)
                if timed_out and self.s.timeout is not None:
                    exc = TimeoutError(f"no answer within {self.s.timeout:g} s")
                if attempt <= self.s.retries and isinstance(exc, self.s.retry_types):
                    pause = self.s.backoff * 2 ** (attempt - 1) * (0.5 + random.random())
                    await asyncio.sleep(pause)
                    continue
                return _failure(qid, text, elapsed, attempt, exc)
            elapsed = (time.perf_counter() - t0) * 1000
            try:
                mapped = map_hits(hits, self.s.key)
                raw = [h.to_json() for h in hits]
            except Exception as exc:  # a bad hit or a raising key=: this query's failure
                return _failure(qid, text, elapsed, attempt, exc)
            if self.s.k is not None:
                mapped.doc_ids, mapped.scores = (
                    mapped.doc_ids[: self.s.k],
                    mapped.scores[: self.s.k],
                )
            return Retrieval(
                qid, text, mapped.doc_ids, mapped.scores, raw,
                elapsed, attempt, None, mapped.duplicates, mapped.unmapped,
            )  # fmt: skip

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
        if self.pool is not None:
            self.pool.shutdown()


def _failure(qid: str, text: str, elapsed: float, attempts: int, exc: BaseException) -> Retrieval:
    return Retrieval(
        qid, text, latency_ms=elapsed, attempts=attempts,
        error={"type": type(exc).__name__, "message": str(exc)[:500]},
    )  # fmt: skip
