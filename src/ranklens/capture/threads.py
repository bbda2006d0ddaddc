"""A pool of daemon threads for synchronous retrievers (:class:`DaemonPool`).

``concurrent.futures.ThreadPoolExecutor`` does not fit a runner with timeouts: its threads
are joined at interpreter exit (a hung retriever keeps the process alive after ``run()``
returned), and a call waiting in its queue behind hung calls is timed as if it were running
(then recorded as a retriever timeout though it never ran). Here the timeout and the
latency start when a thread picks the call up, and a call that times out gives its thread
up for lost: a fresh thread takes its place, so ``size`` calls can always run.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from typing import Any


class DaemonPool:
    """``size`` daemon threads running blocking calls for an asyncio loop."""

    def __init__(self, size: int, name: str = "ranklens-worker"):
        self.size = size
        self.name = name
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._live = 0  # threads serving the pool (a timed-out call's thread leaves it)
        self._closed = False
        for _ in range(size):
            self._spawn()

    def _spawn(self) -> None:
        with self._lock:
            self._threads += 1
            self._live += 1
            n = self._threads
        threading.Thread(target=self._work, name=f"{self.name}-{n}", daemon=True).start()

    def grow_to(self, n: int) -> None:
        """At least ``n`` threads serving the pool (a caller whose calls in flight may
        outnumber its threads: a pipeline's sync stages under an async runner)."""
        while self._live < n and not self._closed:
            self._spawn()

    def _work(self) -> None:
        try:
            self._serve()
        finally:
            with self._lock:
                self._live -= 1

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, args, loop, started, done, abandoned = job
            if abandoned.is_set():
                continue
            t0 = time.perf_counter()
            try:
                loop.call_soon_threadsafe(_resolve, started, t0, None)
            except RuntimeError:  # the loop has closed: the run is over
                return
            c0 = time.thread_time()
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # handed to the caller
                result, error = None, exc
            cpu_ms = (time.thread_time() - c0) * 1000
            if abandoned.is_set():
                return  # timed out: a replacement thread already serves the pool
            try:
                loop.call_soon_threadsafe(_resolve, done, (result, cpu_ms), error)
            except RuntimeError:
                return

    async def call(
        self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float | None
    ) -> tuple[Any, float, float]:
        """``(fn(*args), start time, CPU ms)``: the CPU time is the worker thread's own
        (``time.thread_time``), what the call cost without the waits for the CPU and the
        GIL that concurrent calls add to its wall time; ``TimeoutError`` (with
        ``.started``) when ``fn`` has not returned ``timeout`` seconds after it started."""
        loop = asyncio.get_running_loop()
        started: asyncio.Future[float] = loop.create_future()
        done: asyncio.Future[Any] = loop.create_future()
        abandoned = threading.Event()
        self._jobs.put((fn, args, loop, started, done, abandoned))
        try:
            t0 = await asyncio.shield(started)
        except asyncio.CancelledError:
            abandoned.set()
            raise
        try:
            if timeout is None:
                result, cpu_ms = await done
            else:
                result, cpu_ms = await asyncio.wait_for(asyncio.shield(done), timeout)
            return result, t0, cpu_ms
        except (asyncio.TimeoutError, TimeoutError) as exc:
            if done.done():  # the retriever's own TimeoutError, not the runner's timeout
                raise
            abandoned.set()
            self._spawn()  # the hung thread is lost to the pool; keep `size` working
            err = TimeoutError(f"no answer within {timeout:g} s")
            err.started = t0  # type: ignore[attr-defined]
            raise err from exc
        except asyncio.CancelledError:  # a timeout around the caller: its thread is lost
            abandoned.set()
            if not self._closed:
                self._spawn()
            raise

    def shutdown(self) -> None:
        """Let idle threads exit (busy ones are daemons: they never block exit)."""
        if self._closed:
            return
        self._closed = True
        for _ in range(max(self._live, 0)):
            self._jobs.put(None)


def _resolve(fut: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if fut.done():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(value)
