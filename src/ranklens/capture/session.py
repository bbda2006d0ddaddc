"""One run's machinery (:class:`Session`): each query asked with a timeout and retries
by workers sharing a queue, its hits mapped to the labels' ids, every finished query
appended to the log at once, a sync retriever's calls on a pool of daemon threads.

Two times are kept per query: ``latency_ms``, the wall time of the call that answered
(from when the retriever was called, never while the call waited for a free worker), and,
for a sync retriever, ``cpu_ms``, the CPU time of the thread that ran it. At a concurrency
above one, a retriever that computes in Python (an in-memory BM25) shares the CPU and the
GIL with the other calls in flight: its latency then includes those waits and its CPU time
is close to what one call costs alone."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Protocol

from ..settings import Calling
from .contract import RetrieverAdapter, Staged
from .hits import Hit, KeyLike, map_hits
from .log import RunLog
from .progress import Progress
from .records import Retrieval, Stage
from .stages import map_stages, stage_failure
from .threads import DaemonPool


class CallSettings(Protocol):
    """What a session reads of the runner's ``RunSettings`` (a protocol, so that this module
    need not import the runner that imports it)."""

    @property
    def calls(self) -> Calling: ...

    @property
    def k(self) -> int | None: ...

    @property
    def fetch_k(self) -> int | None: ...

    @property
    def key(self) -> KeyLike: ...

    @property
    def retry_types(self) -> tuple[type[BaseException], ...]: ...


class Session:
    """One run's machinery: calls with timeout and retries, workers sharing a queue of
    queries, the log and the thread pool of a sync retriever. ``settings`` is the
    runner's :class:`~ranklens.capture.runner.RunSettings`, whose ``calls`` (a
    :class:`~ranklens.Calling`) say how the retriever is called."""

    def __init__(self, adapter: RetrieverAdapter, settings: CallSettings, log: RunLog | None):
        self.adapter, self.s = adapter, settings
        calls = settings.calls  # read once, not on each call
        self.concurrency: int = calls.concurrency
        self.timeout: float | None = calls.timeout
        self.retries: int = calls.retries
        self.backoff: float = calls.backoff
        self.retry_types = settings.retry_types
        self.log = log
        self.results: dict[str, Retrieval] = {}
        self.pool: DaemonPool | None = None

    @property
    def ask_k(self) -> int | None:
        """How many hits the retriever is asked for: ``fetch_k`` when given (more chunks
        than the ``k`` documents kept, when chunks of one document are merged), else
        ``k``."""
        return self.s.fetch_k or self.s.k

    async def run_all(self, todo: list[tuple[str, str]], bar: Progress) -> None:
        """Ask every query of ``todo`` with ``concurrency`` workers."""
        concurrency = self.concurrency
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

    async def call(self, text: str, qid: str) -> tuple[list[Hit], float, float | None]:
        """One attempt, within the timeout: ``(hits, start time, CPU ms or None)``. The
        timeout and the latency start when the retriever is called, not when the call is
        queued; a TimeoutError the retriever raises itself is its own error, retried as
        any transient one."""
        if self.adapter.is_async:
            t0 = time.perf_counter()
            coro = self.adapter.aretrieve(text, qid, self.ask_k)
            if self.timeout is None:
                return await coro, t0, None
            task = asyncio.ensure_future(coro)
            try:
                return await asyncio.wait_for(task, self.timeout), t0, None
            except (asyncio.TimeoutError, TimeoutError) as exc:
                if task.done() and not task.cancelled():  # the retriever's own TimeoutError
                    raise
                err = TimeoutError(f"no answer within {self.timeout:g} s")
                err.started = t0  # type: ignore[attr-defined]
                raise err from exc
        assert self.pool is not None
        args = (text, qid, self.ask_k)
        return await self.pool.call(self.adapter.retrieve, args, self.timeout)

    async def ask(self, qid: str, text: str) -> Retrieval:
        """A query's record: its mapped hits, or the error of its last attempt."""
        attempt = 0
        while True:
            attempt += 1
            t0 = time.perf_counter()
            try:
                hits, t0, cpu_ms = await self.call(text, qid)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # recorded, never raised
                elapsed = (time.perf_counter() - getattr(exc, "started", t0)) * 1000
                if attempt <= self.retries and isinstance(exc, self.retry_types):
                    stage_failure(exc, self.adapter, qid, self.s.key)  # its progress let go
                    pause = self.backoff * 2 ** (attempt - 1) * (0.5 + random.random())
                    await asyncio.sleep(pause)
                    continue
                return self.failed(qid, text, elapsed, attempt, exc)
            elapsed = (time.perf_counter() - t0) * 1000
            try:
                mapped = map_hits(hits, self.s.key)
                raw = [h.to_json() for h in hits]
                # a pipeline's stages (contract.Staged), each mapped as the hits are
                stages = map_stages(hits.stages, self.s.key, qid) if type(hits) is Staged else None
            except Exception as exc:  # a bad hit or a raising key=: this query's failure
                return self.failed(qid, text, elapsed, attempt, exc)
            if self.s.k is not None:
                mapped.doc_ids, mapped.scores = (
                    mapped.doc_ids[: self.s.k],
                    mapped.scores[: self.s.k],
                )
            return Retrieval(
                qid, text, mapped.doc_ids, mapped.scores, raw,
                elapsed, attempt, None, mapped.duplicates, mapped.unmapped, cpu_ms=cpu_ms,
                stages=stages,
            )  # fmt: skip

    def failed(
        self, qid: str, text: str, elapsed: float, attempts: int, exc: BaseException
    ) -> Retrieval:
        """The record of a failed query; for a pipeline, its error names the stage that
        failed (or was running at the timeout) and the record keeps the stages so far."""
        stage, stages = stage_failure(exc, self.adapter, qid, self.s.key)
        return failure_record(qid, text, elapsed, attempts, exc, stage, stages)

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
        if self.pool is not None:
            self.pool.shutdown()


def failure_record(
    qid: str, text: str, elapsed: float, attempts: int, exc: BaseException,
    stage: str | None = None, stages: list[Stage] | None = None,
) -> Retrieval:  # fmt: skip
    """The record of a query whose last attempt raised ``exc`` (in pipeline stage
    ``stage``, when known, after ``stages``)."""
    message = str(exc) or "(no message)"
    if stage is not None and not message.startswith(f"stage {stage!r}"):
        message = f"stage {stage!r}: {message}"
    return Retrieval(
        qid, text, latency_ms=elapsed, attempts=attempts,
        error={"type": type(exc).__name__, "message": message[:500]}, stages=stages,
    )  # fmt: skip
