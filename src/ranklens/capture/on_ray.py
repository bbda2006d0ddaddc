"""``ranklens.run_retriever(..., backend="ray")``: retrieval on Ray actors, for labelled sets one
machine asks too slowly (embedding and ANN calls dominate at 10^5-10^6 queries).

* Each actor builds its retriever once, with ``retriever_factory()`` (an index loaded from
  disk, an embedding model on a GPU through ``num_gpus``), and answers whole shards of the
  queries by running the local runner on them: timeouts, retries, recorded errors, hit
  identity (``key=``) and the per-query record are the local backend's, unchanged.
* Shards are fixed by the queries' order (shard ``i`` holds queries ``i, i + n, ...``), so
  a run is reproducible; with ``cache=DIR`` each shard keeps its own resumable log
  (``DIR/shard-0007.jsonl``), and the records come back merged in the queries' order.
* An actor that dies (a killed process, a lost node) is replaced and its shard resumed from
  the shard's log: no finished query is asked again. ``max_restarts`` bounds the
  replacements per shard; past them the shard's queries are recorded as failed.
* Ray is connected to as found: an initialised Ray, ``address=`` (a running cluster, e.g.
  ``"auto"`` or ``"ray://head:10001"``), or a local Ray started with ``num_cpus``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..evaluation.on_ray import connect
from ..settings import Calling
from .records import Retrieval
from .result import RunResult


class ShardRunner:
    """What runs inside one Ray actor: the retriever, built once, and the local runner
    (``run``: :func:`ranklens.run_retriever`, passed in so that this module imports no runner),
    called as ``calls`` says (its ``cache`` the shard's log, no progress bar)."""

    def __init__(self, factory: Callable[[], Any], run: Callable[..., Any], calls: Calling,
                 options: dict[str, Any]):  # fmt: skip
        self.retriever = factory()
        self.run, self.calls, self.options = run, calls, options

    def run_shard(self, items: list[tuple[str, str]], log: str | None) -> list[Retrieval]:
        calls = replace(self.calls, cache=log, progress=False)
        result = self.run(self.retriever, dict(items), calls=calls, **self.options)
        records: list[Retrieval] = result.records
        return records

    def pid(self) -> int:
        return os.getpid()


class Shipped:
    """A retriever object shipped to each actor as it is (it must pickle), as a factory."""

    def __init__(self, retriever: Any):
        self.retriever = retriever
        self.__name__ = type(retriever).__name__

    def __call__(self) -> Any:
        return self.retriever


def run_on_ray(
    items: list[tuple[str, str]],
    retriever_factory: Callable[[], Any] | None,
    run: Callable[..., Any],
    *,
    retriever: Any = None,
    actors: int = 2,
    shards: int | None = None,
    num_cpus: float = 1,
    num_gpus: float = 0,
    address: str | None = None,
    calls: Calling | None = None,
    max_restarts: int = 3,
    name: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> RunResult:
    """Run the queries ``items`` (``(id, text)`` pairs) on ``actors`` Ray actors, each
    with a retriever from ``retriever_factory`` (or ``retriever`` itself, pickled; see the
    module docstring), through ``run`` (the local runner) in each. ``calls``: how each actor
    calls its retriever (a :class:`~ranklens.Calling`: ``concurrency`` per actor,
    ``timeout``, ``retries``...; its ``cache`` the folder of the shards' logs). ``options``:
    the local runner's others (``k``, ``key``, ``config``...). ``shards``: default 4 per
    actor."""
    calls = calls if calls is not None else Calling()
    cache = calls.cache
    if retriever_factory is None and retriever is not None:
        retriever_factory = Shipped(retriever)
    if not callable(retriever_factory):
        raise InputError("backend='ray' needs retriever_factory=, a function returning the "
                         "retriever each actor builds once")  # fmt: skip
    if actors < 1 or max_restarts < 0:
        raise InputError(f"actors must be >= 1 and max_restarts >= 0, got {actors}, {max_restarts}")
    ray = connect(address, max(int(actors * num_cpus), 1))
    folder = Path(cache).resolve() if cache is not None else None  # an actor's cwd is Ray's
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    n = max(1, min(shards or 4 * actors, len(items)))
    parts = [items[i::n] for i in range(n)]
    opts = dict(options or {})
    remote = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, max_restarts=0)(ShardRunner)
    started = time.perf_counter()
    pool = [remote.remote(retriever_factory, run, calls, opts) for _ in range(min(actors, n))]
    todo = list(range(n))
    restarts = dict.fromkeys(range(n), 0)
    running: dict[Any, tuple[int, int]] = {}  # future -> (shard, actor slot)
    done: dict[int, list[Retrieval]] = {}
    free = list(range(len(pool)))

    def log_of(i: int) -> str | None:
        return str(folder / f"shard-{i:04d}.jsonl") if folder is not None else None

    while todo or running:
        while todo and free:
            i, slot = todo.pop(0), free.pop(0)
            running[pool[slot].run_shard.remote(parts[i], log_of(i))] = (i, slot)
        ready, _ = ray.wait(list(running), num_returns=1)
        i, slot = running.pop(ready[0])
        try:
            done[i] = ray.get(ready[0])
            free.append(slot)
        except ray.exceptions.RayActorError as exc:  # the actor died: replace it, resume
            pool[slot] = remote.remote(retriever_factory, run, calls, opts)
            free.append(slot)
            restarts[i] += 1
            if restarts[i] <= max_restarts:
                todo.insert(0, i)
            else:
                done[i] = [_lost(q, t, exc) for q, t in parts[i]]
    for handle in pool:
        ray.kill(handle)
    order = {q: j for j, (q, _) in enumerate(items)}
    records = sorted(
        (r for recs in done.values() for r in recs), key=lambda r: order[r.query_id or ""]
    )
    config = {"retriever_factory": _name(retriever_factory), "backend": "ray",
              "k": opts.get("k"), "key": str(opts.get("key", "id"))}  # fmt: skip
    return RunResult(
        records, name or _name(retriever_factory), config,
        backend="ray", actors=len(pool), shards=n, actor_restarts=sum(restarts.values()),
        wall_seconds=round(time.perf_counter() - started, 3),
    )  # fmt: skip


def _lost(qid: str, text: str, exc: BaseException) -> Retrieval:
    message = f"actor lost (restarts exhausted): {exc}"[:500]
    return Retrieval(qid, text, error={"type": "RayActorError", "message": message})


def _name(fn: Any) -> str:
    target = getattr(fn, "func", fn)
    return str(getattr(target, "__name__", type(target).__name__))
