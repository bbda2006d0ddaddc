"""Running a sweep's configurations: each built (once per combination of build parameters)
and run through the runner, with its own run log under one sweep folder.

* The folder (``cache=``) holds one runner log per configuration
  (``<name>-<hash of its parameters>.jsonl``; with ``backend="ray"`` a folder of shard
  logs and ``builds.jsonl``, each actor's own build timed) and ``sweep.jsonl``, one line
  per build and per configuration built (build time, index size, a build's error).
* One process at a time: the folder's ``sweep.lock`` (:mod:`.lock`) is held while the
  configurations run, so a second process never asks the queries a first one is asking.
* Resuming: a configuration whose log answers every query (failed queries are asked
  again, as the runner does, unless ``retry_failed=False``) is read from its log and not
  built; one with part of its queries is built and its log resumed by the runner, so no
  finished query is asked again. A log written for other parameters, another ``build``
  (its name and code) or other run settings is refused, naming the differences.
* Builds are timed apart from queries (wall clock, the call to ``build`` and, with
  ``query_params``, the call to the factory it returned); a build that raises is recorded
  for each configuration it would have served, and the sweep goes on. So is a build that
  returns an object already serving another configuration (the same retriever would be
  run twice under two names: a parameter ``build`` ignores).
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..capture import RunResult, as_retriever, key_name, run_retriever
from ..capture.identity import fingerprint, plain
from ..capture.log import config_diff, read_log
from ..capture.records import Retrieval
from ..errors import InputError, RunInterrupted
from ..escape import terminal
from .grid import Config
from .groups import Execution

EVENTS = "sweep.jsonl"
"""The sweep folder's record of builds and configurations (one JSON object a line)."""


@dataclass
class Outcome:
    """One configuration after the sweep ran it: its ``result`` (None when it was not
    run: its build failed), ``build`` facts (``seconds``: the shared build's wall time,
    ``factory_seconds``: the retriever made from it for this configuration's query
    parameters, ``shared_by``: configurations the build served, ``error``), the index's
    ``index`` info where the framework exposes it, and whether it was ``resumed`` whole
    from its log."""

    config: Config
    result: RunResult | None
    build: dict[str, Any] = field(default_factory=dict)
    index: dict[str, Any] | None = None
    resumed: bool = False
    log: str | None = None

    @property
    def error(self) -> dict[str, str] | None:
        return self.build.get("error")


def build_identity(build: Callable[..., Any]) -> dict[str, Any]:
    """What names ``build`` in each log: its qualified name and a hash of its code (not
    the data it closes over: give ``config=`` facts, e.g. a corpus version, for that)."""
    fp = fingerprint(build)
    if isinstance(fp, dict) and "function" in fp:
        return {"function": fp["function"], "code": fp.get("code")}
    if isinstance(fp, dict) and "partial" in fp:
        inner = fp["partial"]
        return {
            "partial": inner.get("function"),
            "code": inner.get("code"),
            "keywords": fp.get("keywords"),
        }
    return {"object": fp.get("class") if isinstance(fp, dict) else str(fp)}


def slug(name: str) -> str:
    """A file-name-safe short form of a configuration's name."""
    out = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    return "-".join(p for p in out.split("-") if p)[:60] or "config"


class Folder:
    """The sweep folder: configurations' logs and the events file (nothing on disk when
    ``path`` is None)."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path).resolve() if path is not None else None  # Ray workers' cwd differs
        self.events: list[dict[str, Any]] = []
        if self.path is not None:
            if self.path.exists() and not self.path.is_dir():
                raise InputError(
                    f"sweep: cache must be a folder (the sweep's logs go in it), got the file "
                    f"{self.path}"
                )
            self.path.mkdir(parents=True, exist_ok=True)

    def load(self) -> None:
        """The events file read (once the folder's lock is held: another process's
        events are then complete)."""
        self.events = []
        events = self.path / EVENTS if self.path is not None else None
        if events is not None and events.exists():
            for line in events.read_text(encoding="utf-8").splitlines():
                try:
                    self.events.append(json.loads(line))
                except json.JSONDecodeError:  # a line torn by a kill: the build is redone
                    continue

    def log_path(self, cfg: Config, ray: bool) -> Path | None:
        if self.path is None:
            return None
        name = f"{slug(cfg.name)}-{cfg.key}"
        return self.path / (name if ray else f"{name}.jsonl")

    def record(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if self.path is not None:
            with open(self.path / EVENTS, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(plain(event), default=str) + "\n")

    def last(self, kind: str, key: str) -> dict[str, Any] | None:
        """The folder's last event of ``kind`` for the configuration or build ``key``."""
        for e in reversed(self.events):
            if e.get("type") == kind and e.get("key") == key:
                found: dict[str, Any] = e
                return found
        return None


def finished(
    path: Path | None,
    ident: Mapping[str, Any],
    settings: Mapping[str, Any],
    queries: Mapping[str, str],
    retry_failed: bool,
) -> tuple[list[Retrieval], dict[str, Any]] | None:
    """The records of a configuration's log when it answers every query (and its header
    names this configuration), else None; a log of another configuration is an error."""
    if path is None or not path.exists():
        return None
    files = sorted(path.glob("shard-*.jsonl")) if path.is_dir() else [path]
    records: dict[str, Retrieval] = {}
    config: dict[str, Any] = {}
    for f in files:
        if f.stat().st_size == 0:
            return None
        header, recs, _, _ = read_log(f)
        config = header.get("config") or {}
        mine = {k: config.get(k) for k in ident}
        if mine != plain(dict(ident)):
            raise InputError(
                f"{f}: this log was written by another sweep configuration; differences: "
                f"{config_diff(mine, plain(dict(ident)))}. Use another cache= folder, or "
                "delete the log to run this configuration afresh"
            )
        for k, v in settings.items():
            if k in config and config.get(k) != v:
                return None  # other run settings: the runner refuses it, naming them
        records.update(recs)
    ordered = []
    for q, text in queries.items():
        rec = records.get(q)
        if rec is None or rec.query != text or (retry_failed and not rec.ok):
            return None
        ordered.append(rec)
    return ordered, config


class Identity:
    """Objects already serving a configuration, to catch a build returning one of them
    again (held weakly where the object allows it, so an id is never matched after its
    object is gone)."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[str, Any]] = {}

    def check(self, obj: Any, name: str) -> str | None:
        prior = self.seen.get(id(obj))
        if prior is not None:
            other, ref = prior
            held = ref() if isinstance(ref, weakref.ref) else ref
            if held is obj:
                return other
        try:
            ref = weakref.ref(obj)
        except TypeError:
            ref = obj
        self.seen[id(obj)] = (name, ref)
        return None


def _error(exc: BaseException) -> dict[str, str]:
    return {"type": type(exc).__name__, "message": str(exc)[:500] or "(no message)"}


class BuiltRetriever:
    """A configuration's retriever made where it runs (each Ray actor): ``build`` on its
    build parameters, then the factory it returned on its query parameters, each call
    timed and, with ``report`` (a file the driver reads), written there as one line with
    the index's info."""

    def __init__(self, build: Callable[..., Any], cfg: Config, report: str | None = None):
        self.build, self.cfg, self.report = build, cfg, report
        self.__name__ = cfg.name

    def __call__(self) -> Any:
        t0 = time.perf_counter()
        built = self.build(**self.cfg.build_params)
        t1 = time.perf_counter()
        made = built(**self.cfg.query_params) if self.cfg.query_params else built
        if self.report is not None:
            fact: dict[str, Any] = {"seconds": round(t1 - t0, 6), "index": None}
            if self.cfg.query_params:
                fact["factory_seconds"] = round(time.perf_counter() - t1, 6)
            with contextlib.suppress(Exception):  # the runner names what is wrong with it
                fact["index"] = as_retriever(made).index_info()
            with open(self.report, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(plain(fact), default=str) + "\n")
        return made


def execute(
    configs: list[Config],
    build: Callable[..., Any],
    queries: dict[str, str],
    folder: Folder,
    ident_extra: Mapping[str, Any],
    run_options: dict[str, Any],
    execution: Execution | None = None,
    say: Callable[[str], None] | None = None,
) -> list[Outcome]:
    """Build and run every configuration (see the module docstring), in grid order of
    their first configuration per build. ``run_options``: the keywords of
    :func:`ranklens.run_retriever` (``k``, ``key``, ``fetch_k``, the
    :class:`~ranklens.Calling` settings but its ``cache``, ``retry_failed``);
    ``execution``: the backend and its options."""
    execution = execution if execution is not None else Execution()
    ray = execution.backend == "ray"
    ray_options = execution.ray_options or {}
    build_id = build_identity(build)
    settings = {"k": run_options.get("k"), "key": key_name(run_options.get("key", "id"))}
    if run_options.get("fetch_k") is not None:
        settings["fetch_k"] = run_options["fetch_k"]
    groups: dict[str, list[Config]] = {}
    for cfg in configs:
        groups.setdefault(cfg.build_key, []).append(cfg)
    outcomes: dict[str, Outcome] = {}
    identity = Identity()
    done = 0

    def ident(cfg: Config) -> dict[str, Any]:
        return {
            "sweep_params": plain(cfg.params),
            "sweep_build": build_id,
            **plain(dict(ident_extra)),
        }

    try:
        for key, group in groups.items():
            pending = []
            for cfg in group:
                path = folder.log_path(cfg, ray)
                found = finished(path, ident(cfg), settings, queries, execution.retry_failed)
                if found is None:
                    pending.append(cfg)
                    continue
                records, config = found
                made = folder.last("config", cfg.key) or {}
                outcomes[cfg.name] = Outcome(
                    cfg,
                    RunResult(
                        records,
                        cfg.name,
                        config,
                        resumed=len(records),
                        concurrency=run_options.get("concurrency"),
                    ),
                    build=made.get("build") or {},
                    index=made.get("index"),
                    resumed=True,
                    log=str(path),
                )
                done += 1
                if say is not None:
                    name = terminal(cfg.name)
                    say(f"[{done}/{len(configs)}] {name}: read from its log (finished)")
            if not pending:
                continue
            built: Any = None
            info: dict[str, Any] = {"shared_by": [c.name for c in group]}
            if not ray:
                t0 = time.perf_counter()
                try:
                    built = build(**group[0].build_params)
                    info["seconds"] = round(time.perf_counter() - t0, 6)
                except Exception as exc:  # recorded for each configuration; the sweep goes on
                    info.update(seconds=round(time.perf_counter() - t0, 6), error=_error(exc))
                folder.record(
                    {"type": "build", "key": key, "params": group[0].build_params, **info}
                )
                if built is not None and group[0].query_params and not callable(built):
                    info["error"] = {
                        "type": "InputError",
                        "message": f"with query_params=, build must return a function of "
                        f"{', '.join(group[0].query_params)} returning the retriever; it "
                        f"returned a {type(built).__name__}",
                    }
            for cfg in pending:
                out = _run_one(cfg, built, dict(info), build, folder, identity, queries,
                               ident(cfg), run_options, ray, ray_options)  # fmt: skip
                outcomes[cfg.name] = out
                done += 1
                if say is not None:
                    say(_line(out, done, len(configs)))
            del built
    except RunInterrupted as exc:
        where = f" in {folder.path}" if folder.path is not None else ""
        keep = (
            f"; run the same sweep with cache={str(folder.path)!r} to resume (finished "
            "configurations are read from their logs, not built or run again)"
            if folder.path is not None
            else "; nothing was saved (pass cache=FOLDER to make a sweep resumable)"
        )
        raise RunInterrupted(
            f"ranklens.sweep interrupted: {done} of {len(configs)} configurations finished"
            f"{where}{keep}. {exc}"
        ) from None
    return [outcomes[c.name] for c in configs]


def _run_one(
    cfg: Config,
    built: Any,
    info: dict[str, Any],
    build: Callable[..., Any],
    folder: Folder,
    identity: Identity,
    queries: dict[str, str],
    ident: dict[str, Any],
    run_options: dict[str, Any],
    ray: bool,
    ray_options: Mapping[str, Any],
) -> Outcome:
    """One configuration: its retriever from the shared build, then the runner."""
    path = folder.log_path(cfg, ray)
    log = str(path) if path is not None else None
    if info.get("error"):
        folder.record({"type": "config", "key": cfg.key, "name": cfg.name, "build": info})
        return Outcome(cfg, None, build=info, log=log)
    if ray:
        return _run_on_ray(cfg, info, build, folder, path, queries, ident, run_options, ray_options)
    retriever = built
    if cfg.query_params:
        t0 = time.perf_counter()
        try:
            retriever = built(**cfg.query_params)
        except Exception as exc:
            info["error"] = _error(exc)
        info["factory_seconds"] = round(time.perf_counter() - t0, 6)
    index = None
    if not info.get("error"):
        other = identity.check(retriever, cfg.name)
        if other is not None:
            info["error"] = {
                "type": "InputError",
                "message": f"build returned the object that serves {other!r} again, so both "
                "would be the same retriever under two names: does build ignore a parameter "
                "(or return a cached object)? Return a new retriever per configuration",
            }
    if not info.get("error"):
        try:
            adapter = as_retriever(retriever)
            index = adapter.index_info()
        except Exception as exc:  # not a retriever at all: recorded for this configuration
            info["error"] = _error(exc)
    folder.record(
        {"type": "config", "key": cfg.key, "name": cfg.name, "build": info, "index": index}
    )
    if info.get("error"):
        return Outcome(cfg, None, build=info, index=index, log=log)
    result = run_retriever(adapter, queries, cache=path, name=cfg.name, config=ident, **run_options)
    return Outcome(cfg, result, build=info, index=index, log=log)


def _run_on_ray(
    cfg: Config,
    info: dict[str, Any],
    build: Callable[..., Any],
    folder: Folder,
    path: Path | None,
    queries: dict[str, str],
    ident: dict[str, Any],
    run_options: dict[str, Any],
    ray_options: Mapping[str, Any],
) -> Outcome:
    """One configuration on Ray actors, each building its own retriever and reporting the
    build's time and index (:class:`BuiltRetriever`; the slowest build counts), or saying
    that no report reached the driver."""
    with tempfile.TemporaryDirectory() as spare:
        report = (path or Path(spare)) / "builds.jsonl"
        report.parent.mkdir(parents=True, exist_ok=True)
        report.unlink(missing_ok=True)  # this run's builds only
        result = run_retriever(
            None, queries, backend="ray", retriever_factory=BuiltRetriever(build, cfg, str(report)),
            cache=path, name=cfg.name, config=ident, **run_options, **ray_options,
        )  # fmt: skip
        facts = [json.loads(x) for x in report.read_text().splitlines()] if report.exists() else []
    info.update(on="ray actors (built on each)", shared_by=[cfg.name], actor_builds=len(facts))
    info.update({k: max(f[k] for f in facts if k in f) for k in ("seconds", "factory_seconds")
                 if any(k in f for f in facts)})  # fmt: skip
    if not facts:
        info["not_measured"] = (
            "build time and index size not measured: no Ray actor's report reached the "
            "driver (a cache= folder that the actors' nodes share brings them)"
        )
    index = facts[0]["index"] if facts else None
    folder.record({"type": "config", "key": cfg.key, "name": cfg.name, "build": info,
                   "index": index})  # fmt: skip
    return Outcome(cfg, result, build=info, index=index, log=str(path) if path else None)


def _line(out: Outcome, done: int, total: int) -> str:
    """A configuration's line as it finishes (its name made safe for the terminal)."""
    name = terminal(out.config.name)
    if out.result is None:
        kind = (out.error or {}).get("type", "no result")
        return f"[{done}/{total}] {name}: build failed ({terminal(kind)})"
    info = out.result.report_info()
    p50 = (info.get("latency_ms") or {}).get("p50", math.nan)
    return (
        f"[{done}/{total}] {name}: {info['queries']} queries, {info['errors']} "
        f"errors, p50 {p50:.1f} ms, build {out.build.get('seconds', math.nan):.2f} s"
    )
