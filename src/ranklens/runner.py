"""``ranklens.run``: ask a retriever every query of a labelled set, concurrently, and keep
everything it answered in a resumable log.

* A retriever is a plain function (sync or ``async``) of the query text (and optionally
  ``query_id`` and ``k``) returning ranked hits, or a :class:`RetrieverAdapter` (the
  ``ranklens-llamaindex``, ``-langchain`` and ``-haystack`` packages wrap each framework's
  retrievers in one).
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
import hashlib
import inspect
import json
import math
import random
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError
from .hits import Hit, KeyLike, coerce_hit, key_name, map_hits

LOG_FORMAT = 1
TRANSIENT = (TimeoutError, ConnectionError)
"""Errors retried by default: timeouts and connection failures."""


class RetrieverAdapter:
    """Base of framework adapters. Implement :meth:`retrieve` (sync) and/or
    :meth:`aretrieve` (truly async; set ``is_async = True``), and :meth:`config`, whose
    value is hashed into the run log to refuse mixing configurations."""

    is_async: bool = False

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        raise NotImplementedError

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        raise NotImplementedError

    def config(self) -> dict[str, Any]:
        return {"class": type(self).__name__}


class FunctionRetriever(RetrieverAdapter):
    """A plain function as a retriever: ``f(query)``, ``f(query, query_id)`` or with ``k``
    (by parameter name), sync or ``async``, returning hits as ids, ``(id, score)`` pairs,
    dicts or :class:`~ranklens.hits.Hit`."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
        )
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}
        var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        self._pass_id = var_kw or "query_id" in params
        self._pass_k = var_kw or "k" in params

    def _kwargs(self, query_id: str, k: int | None) -> dict[str, Any]:
        kw: dict[str, Any] = {}
        if self._pass_id:
            kw["query_id"] = query_id
        if self._pass_k:
            kw["k"] = k
        return kw

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        return _hits(self.fn(query, **self._kwargs(query_id, k)), query_id)

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        return _hits(await self.fn(query, **self._kwargs(query_id, k)), query_id)

    def config(self) -> dict[str, Any]:
        fn = self.fn
        return {
            "function": f"{getattr(fn, '__module__', '?')}."
            f"{getattr(fn, '__qualname__', type(fn).__name__)}"
        }


def _hits(items: Any, query_id: str) -> list[Hit]:
    if items is None:
        return []
    return [coerce_hit(x, query_id, i + 1) for i, x in enumerate(items)]


def as_retriever(obj: Any) -> RetrieverAdapter:
    """An adapter for ``obj``: itself if it is one, a :class:`FunctionRetriever` for a
    callable. Framework retrievers need their package's adapter (the error says which)."""
    if isinstance(obj, RetrieverAdapter):
        return obj
    mod = type(obj).__module__.split(".")[0]
    hint = {
        "llama_index": "ranklens_llamaindex.LlamaIndexRetriever",
        "langchain_core": "ranklens_langchain.LangChainRetriever",
        "langchain_community": "ranklens_langchain.LangChainRetriever",
        "haystack": "ranklens_haystack.HaystackRetriever",
    }.get(mod)
    if hint:
        raise InputError(
            f"a {type(obj).__name__} needs its adapter: wrap it in {hint} "
            f"(pip install {hint.split('.')[0].replace('_', '-')})"
        )
    if callable(obj):
        return FunctionRetriever(obj)
    raise InputError(f"not a retriever: {type(obj).__name__} is neither callable nor an adapter")


# --------------------------------------------------------------------------- records
@dataclass
class QueryRecord:
    """What happened to one query: the mapped ranking, the raw hits, latency, error."""

    query_id: str
    query: str
    doc_ids: list[str] = field(default_factory=list)
    scores: list[float | None] = field(default_factory=list)
    hits: list[dict[str, Any]] = field(default_factory=list)
    latency_ms: float = math.nan
    attempts: int = 1
    error: dict[str, str] | None = None
    duplicates: int = 0
    unmapped: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> str:
        return json.dumps(
            {
                "type": "query",
                "query_id": self.query_id,
                "query": self.query,
                "doc_ids": self.doc_ids,
                "scores": self.scores,
                "hits": self.hits,
                "latency_ms": round(self.latency_ms, 3),
                "attempts": self.attempts,
                "error": self.error,
                "duplicates": self.duplicates,
                "unmapped": self.unmapped,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueryRecord:
        data = {k: v for k, v in data.items() if k != "type"}
        return cls(**data)


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of the configuration, JSON with sorted keys."""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class RunLog:
    """The append-only JSONL log: a header line with the configuration and its hash, then
    one line per finished query (the last line for a query wins)."""

    def __init__(self, path: str | Path, config: dict[str, Any]):
        self.path = Path(path)
        self.config = config
        self.hash = config_hash(config)
        self.records: dict[str, QueryRecord] = {}
        self.torn_lines = 0
        if self.path.exists() and self.path.stat().st_size > 0:
            self._read()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {"type": "header", "format": LOG_FORMAT, "hash": self.hash, "config": config}
            self.path.write_text(json.dumps(header, default=str) + "\n", encoding="utf-8")
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def _read(self) -> None:
        lines = self.path.read_text(encoding="utf-8").split("\n")
        try:
            header = json.loads(lines[0])
        except json.JSONDecodeError:
            raise InputError(f"{self.path}:1: not a ranklens run log (no header line)") from None
        if header.get("type") != "header":
            raise InputError(f"{self.path}:1: not a ranklens run log (no header line)")
        if header.get("hash") != self.hash:
            raise InputError(
                f"{self.path}: this log was written by another configuration "
                f"(hash {header.get('hash')}, now {self.hash}); differences: "
                f"{_config_diff(header.get('config') or {}, self.config)}. Use another cache "
                "path or delete the log."
            )
        for i, line in enumerate(lines[1:], 2):
            if not line.strip():
                continue
            try:
                rec = QueryRecord.from_json(json.loads(line))
            except (json.JSONDecodeError, TypeError):
                if i >= len(lines) - 1:  # the last line, cut by a kill mid-write
                    self.torn_lines += 1
                    continue
                raise InputError(f"{self.path}:{i}: unreadable log line") from None
            self.records[rec.query_id] = rec
        if self.torn_lines:
            # Cut the torn tail so new lines start on a line of their own.
            good = "\n".join(x for x in lines[:-1] if x.strip()) + "\n"
            self.path.write_text(good, encoding="utf-8")

    def append(self, record: QueryRecord) -> None:
        self._fh.write(record.to_json() + "\n")
        self._fh.flush()
        self.records[record.query_id] = record

    def close(self) -> None:
        self._fh.close()


def _config_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
    return "; ".join(diffs) or "(none visible)"


# --------------------------------------------------------------------------- result
class RunResult:
    """The outcome of :func:`run`: one :class:`QueryRecord` per query, in query order.

    * ``run``: a :class:`~ranklens.Run` of the answered queries, in the order the
      retriever ranked them (failed queries are absent, so evaluation scores them 0 as
      missing, unless ``evaluate(..., skip_failed=True)``);
    * ``failed``: the failed records; ``report_info()``: latency percentiles and counts,
      which :func:`ranklens.compare` puts in the report.
    """

    def __init__(self, records: list[QueryRecord], name: str, config: dict[str, Any], **info):
        self.records = records
        self.name = name
        self.config = config
        self.info = info
        self._run = None

    @property
    def run(self):
        if self._run is None:
            from .runs import Run

            self._run = Run.from_dict(
                {r.query_id: r.doc_ids for r in self.records if r.ok}, name=self.name
            )
        return self._run

    @property
    def failed(self) -> list[QueryRecord]:
        return [r for r in self.records if not r.ok]

    @property
    def latencies_ms(self) -> np.ndarray:
        return np.array([r.latency_ms for r in self.records if r.ok], dtype=np.float64)

    def report_info(self) -> dict[str, Any]:
        """Counts and latency percentiles (ms) for reports."""
        lat = self.latencies_ms
        pct = (
            {p: float(np.percentile(lat, int(p[1:]))) for p in ("p50", "p95", "p99")}
            if len(lat)
            else {}
        )
        if len(lat):
            pct["mean"] = float(lat.mean())
        errors: dict[str, int] = {}
        for r in self.failed:
            errors[r.error["type"]] = errors.get(r.error["type"], 0) + 1
        return {
            "queries": len(self.records),
            "errors": len(self.failed),
            "error_types": errors,
            "latency_ms": pct,
            "duplicates_dropped": sum(r.duplicates for r in self.records),
            "unmapped_hits": sum(r.unmapped for r in self.records),
            "retries": sum(max(r.attempts - 1, 0) for r in self.records),
            **{k: v for k, v in self.info.items() if isinstance(v, int | float | str)},
            "retriever": self.config.get("retriever"),
        }

    def evaluate(self, qrels: Any, metrics: Any, *, skip_failed: bool = False, **kwargs: Any):
        """Evaluate the run; failed queries score 0 unless ``skip_failed`` (then they are
        left out of the labels too)."""
        from .evaluation import evaluate
        from .qrels import Qrels

        q = Qrels.coerce(qrels.qrels if hasattr(qrels, "qrels") else qrels)
        if skip_failed and self.failed:
            failed = {r.query_id for r in self.failed}
            q = q.subset(x for x in map(str, q.query_ids) if x not in failed)
        return evaluate(q, self.run, metrics, **kwargs)

    def to_trec(self, path: str | Path) -> None:
        """Write the run as a TREC run file (scores that keep the retriever's order)."""
        from .io.trec import write_run

        write_run(self.run, path, name=self.name)

    def __repr__(self) -> str:
        info = self.report_info()
        p50 = info["latency_ms"].get("p50", math.nan)
        return (
            f"RunResult({self.name!r}: {info['queries']} queries, {info['errors']} errors, "
            f"p50 {p50:.1f} ms)"
        )


# --------------------------------------------------------------------------- running
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
    done: dict[str, QueryRecord] = {}
    if log is not None:
        done = {q: r for q, r in log.records.items() if r.ok or not retry_failed}
    todo = [(q, t) for q, t in items if q not in done]
    resumed = len(items) - len(todo)

    bar = _Progress(len(items), resumed, name, progress)
    executor = None if adapter.is_async else ThreadPoolExecutor(concurrency, "ranklens-retriever")
    loop = asyncio.get_running_loop()
    retry_types = retry_on if isinstance(retry_on, tuple) else (retry_on,)
    results: dict[str, QueryRecord] = {}
    it = iter(todo)

    async def call(text: str, qid: str) -> list[Hit]:
        if adapter.is_async:
            coro = adapter.aretrieve(text, qid, k)
        else:
            coro = loop.run_in_executor(executor, adapter.retrieve, text, qid, k)
        if timeout is None:
            return await coro
        return await asyncio.wait_for(coro, timeout)

    async def ask(qid: str, text: str) -> QueryRecord:
        attempt = 0
        while True:
            attempt += 1
            t0 = time.perf_counter()
            try:
                hits = await call(text, qid)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # recorded, never raised
                elapsed = (time.perf_counter() - t0) * 1000
                if isinstance(exc, asyncio.TimeoutError | TimeoutError) and timeout is not None:
                    exc = TimeoutError(f"no answer within {timeout:g} s")
                if attempt <= retries and isinstance(exc, retry_types):
                    await asyncio.sleep(backoff * 2 ** (attempt - 1) * (0.5 + random.random()))
                    continue
                return QueryRecord(
                    qid, text, latency_ms=elapsed, attempts=attempt,
                    error={"type": type(exc).__name__, "message": str(exc)[:500]},
                )  # fmt: skip
            elapsed = (time.perf_counter() - t0) * 1000
            mapped = map_hits(hits, key)
            if k is not None:
                mapped.doc_ids, mapped.scores = mapped.doc_ids[:k], mapped.scores[:k]
            return QueryRecord(
                qid, text, mapped.doc_ids, mapped.scores, [h.to_json() for h in hits],
                elapsed, attempt, None, mapped.duplicates, mapped.unmapped,
            )  # fmt: skip

    async def worker() -> None:
        for qid, text in it:
            rec = await ask(qid, text)
            results[qid] = rec
            if log is not None:
                log.append(rec)
            bar.advance(rec.ok)

    started = time.perf_counter()
    try:
        with bar:
            await asyncio.gather(*(worker() for _ in range(min(concurrency, max(len(todo), 1)))))
    finally:
        if log is not None:
            log.close()
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
    wall = time.perf_counter() - started
    records = [results.get(q) or done[q] for q, _ in items]
    return RunResult(
        records,
        name,
        full_config,
        resumed=resumed,
        wall_seconds=round(wall, 3),
        torn_log_lines=log.torn_lines if log is not None else 0,
    )


class _Progress:
    """A rich progress bar with throughput, ETA and the error count; silent when not a
    terminal (or on request)."""

    def __init__(self, total: int, completed: int, name: str, enabled: bool | None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.errors = 0
        self.total, self.completed, self.name = total, completed, name
        self._bar = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TextColumn("[red]{task.fields[errors]} errors"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(
                self.name, total=self.total, completed=self.completed, errors=0, rate=""
            )
            self._t0 = time.perf_counter()
            self._n = 0
        return self

    def advance(self, ok: bool) -> None:
        if not ok:
            self.errors += 1
        if self._bar is not None:
            self._n += 1
            rate = self._n / max(time.perf_counter() - self._t0, 1e-9)
            self._bar.update(self._task, advance=1, errors=self.errors, rate=f"{rate:,.1f} q/s")

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
