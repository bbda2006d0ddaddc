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
import random
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import InputError
from .contract import RetrieverAdapter, as_retriever
from .hits import Hit, KeyLike, key_name, map_hits
from .log import RunLog
from .progress import Progress
from .records import Retrieval
from .result import RunResult

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
) -> RunResult:
    """Run ``retriever`` over ``queries`` and return a :class:`RunResult`.

    ``queries``: ``{id: text}``, a :class:`~ranklens.Dataset`, texts (ids ``q1``...) or
    ``(id, text)`` pairs. ``k``: hits kept per query (None keeps all; adapters ask the
    retriever for ``k`` when they can). ``key``: how a hit names a labelled document
    (:mod:`ranklens.hits`). ``concurrency``: queries in flight. ``timeout``: seconds per
    attempt. ``retries``/``retry_on``/``backoff``: retry transient errors after
    ``backoff * 2**i`` seconds (with jitter). ``cache``: the JSONL run log to write and
    resume from; ``retry_failed``: ask failed queries again on resume. ``progress``: a
    progress bar (default: when stderr is a terminal). ``config``: more facts for the
    configuration hash (e.g. chunk size).

    In a running event loop (Jupyter), the work runs on a loop of its own in a thread;
    ``await arun(...)`` avoids that.
    """
    kwargs = dict(
        k=k, key=key, concurrency=concurrency, timeout=timeout, retries=retries,
        retry_on=retry_on, backoff=backoff, cache=cache, retry_failed=retry_failed,
        progress=progress, name=name, config=config,
    )  # fmt: skip
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun(retriever, queries, **kwargs))
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(arun(retriever, queries, **kwargs))
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="ranklens-run")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
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
    adapter = as_retriever(retriever)
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, got {concurrency}")
    if k is not None and k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    items = _queries(queries)
    full_config = {
        "retriever": adapter.config(),
        "k": k,
        "key": key_name(key),
        **(dict(config) if config else {}),
    }
    name = name or str(
        full_config["retriever"].get("name") or full_config["retriever"].get("class") or "run"
    )
    log = RunLog(cache, full_config) if cache is not None else None
    done: dict[str, Retrieval] = {}
    if log is not None:
        done = {q: r for q, r in log.records.items() if r.ok or not retry_failed}
    todo = [(q, t) for q, t in items if q not in done]
    retry_types = retry_on if isinstance(retry_on, tuple) else (retry_on,)
    session = _Session(adapter, k, key, timeout, retries, retry_types, backoff, log)
    bar = Progress(len(items), len(items) - len(todo), name, progress)
    started = time.perf_counter()
    try:
        await session.run_all(todo, concurrency, bar)
    finally:
        session.close()
    records = [session.results.get(q) or done[q] for q, _ in items]
    return RunResult(
        records,
        name,
        full_config,
        resumed=len(items) - len(todo),
        wall_seconds=round(time.perf_counter() - started, 3),
        torn_log_lines=log.torn_lines if log is not None else 0,
    )


class _Session:
    """One run's machinery: calls with timeout and retries, workers sharing a queue of
    queries, the log and the thread pool of a sync retriever."""

    def __init__(
        self,
        adapter: RetrieverAdapter,
        k: int | None,
        key: KeyLike,
        timeout: float | None,
        retries: int,
        retry_on: tuple[type[BaseException], ...],
        backoff: float,
        log: RunLog | None,
    ):
        self.adapter, self.k, self.key = adapter, k, key
        self.timeout, self.retries = timeout, retries
        self.retry_on, self.backoff = retry_on, backoff
        self.log = log
        self.results: dict[str, Retrieval] = {}
        self.executor: ThreadPoolExecutor | None = None

    async def run_all(self, todo: list[tuple[str, str]], concurrency: int, bar: Progress) -> None:
        """Ask every query of ``todo`` with ``concurrency`` workers."""
        if not self.adapter.is_async:
            self.executor = ThreadPoolExecutor(concurrency, "ranklens-retriever")
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

    async def call(self, text: str, qid: str) -> list[Hit]:
        """One attempt, within the timeout."""
        if self.adapter.is_async:
            coro = self.adapter.aretrieve(text, qid, self.k)
        else:
            loop = asyncio.get_running_loop()
            coro = loop.run_in_executor(self.executor, self.adapter.retrieve, text, qid, self.k)
        if self.timeout is None:
            return await coro
        return await asyncio.wait_for(coro, self.timeout)

    async def ask(self, qid: str, text: str) -> Retrieval:
        """A query's record: its mapped hits, or the error of its last attempt."""
        attempt = 0
        while True:
            attempt += 1
            t0 = time.perf_counter()
            try:
                hits = await self.call(text, qid)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # recorded, never raised
                elapsed = (time.perf_counter() - t0) * 1000
                timed_out = isinstance(exc, asyncio.TimeoutError | TimeoutError)
                if timed_out and self.timeout is not None:
                    exc = TimeoutError(f"no answer within {self.timeout:g} s")
                if attempt <= self.retries and isinstance(exc, self.retry_on):
                    pause = self.backoff * 2 ** (attempt - 1) * (0.5 + random.random())
                    await asyncio.sleep(pause)
                    continue
                return Retrieval(
                    qid, text, latency_ms=elapsed, attempts=attempt,
                    error={"type": type(exc).__name__, "message": str(exc)[:500]},
                )  # fmt: skip
            elapsed = (time.perf_counter() - t0) * 1000
            mapped = map_hits(hits, self.key)
            if self.k is not None:
                mapped.doc_ids, mapped.scores = mapped.doc_ids[: self.k], mapped.scores[: self.k]
            return Retrieval(
                qid, text, mapped.doc_ids, mapped.scores, [h.to_json() for h in hits],
                elapsed, attempt, None, mapped.duplicates, mapped.unmapped,
            )  # fmt: skip

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
