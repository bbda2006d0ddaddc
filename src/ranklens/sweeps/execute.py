"""Running a sweep's configurations: each built (once per combination of build parameters)
and run through the runner, with its own run log under one sweep folder.

* The folder (``calls=Calling(cache=...)``, :mod:`.folder`) holds one runner log per
  configuration (``<name>-<hash of its parameters>.jsonl``, on either backend) and
  ``sweep.jsonl``, one line per build and per configuration built (build time, index
  size, a build's error).
* ``Execution(backend="ray")``: the configurations run in parallel, one Ray task each,
  a shared build made once in the cluster (:mod:`.on_ray`).
* One process at a time: the folder's ``sweep.lock`` (:mod:`.lock`) is held while the
  configurations run, so a second process never asks the queries a first one is asking.
* Resuming: a configuration whose log answers every query (failed queries are asked
  again, as the runner does, unless ``Execution(retry_failed=False)``) is read from its log and not
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

import math
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..capture import RunResult, as_retriever, fingerprint, key_name, plain, run_retriever
from ..errors import RunInterrupted
from ..escape import terminal
from .folder import Folder, finished
from .grid import Config
from .groups import Execution
from .on_ray import run_on_ray


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
        todo: list[tuple[str, list[Config]]] = []
        for key, group in groups.items():
            pending = []
            for cfg in group:
                path = folder.log_path(cfg, False)
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
                        concurrency=run_options["calls"].concurrency,
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
            if pending:
                todo.append((key, pending))
        if ray:

            def arrived(cfg: Config, result: RunResult | None, info: dict[str, Any],
                        index: dict[str, Any] | None) -> None:  # fmt: skip
                nonlocal done
                path = folder.log_path(cfg, False)
                out = Outcome(cfg, result, build=info, index=index,
                              log=str(path) if path is not None else None)  # fmt: skip
                outcomes[cfg.name] = out
                done += 1
                if say is not None:
                    say(_line(out, done, len(configs)))

            run_on_ray(todo, build, queries, folder, ident, run_options, ray_options, arrived)
        for key, pending in todo if not ray else ():
            group = groups[key]
            built: Any = None
            info: dict[str, Any] = {"shared_by": [c.name for c in group]}
            t0 = time.perf_counter()
            try:
                built = build(**group[0].build_params)
                info["seconds"] = round(time.perf_counter() - t0, 6)
            except Exception as exc:  # recorded for each configuration; the sweep goes on
                info.update(seconds=round(time.perf_counter() - t0, 6), error=_error(exc))
            folder.record({"type": "build", "key": key, "params": group[0].build_params, **info})
            if built is not None and group[0].query_params and not callable(built):
                info["error"] = {
                    "type": "InputError",
                    "message": f"with query_params=, build must return a function of "
                    f"{', '.join(group[0].query_params)} returning the retriever; it "
                    f"returned a {type(built).__name__}",
                }
            for cfg in pending:
                out = _run_one(cfg, built, dict(info), folder, identity, queries, ident(cfg),
                               run_options)  # fmt: skip
                outcomes[cfg.name] = out
                done += 1
                if say is not None:
                    say(_line(out, done, len(configs)))
            del built
    except RunInterrupted as exc:
        where = f" in {folder.path}" if folder.path is not None else ""
        keep = (
            f"; run the same sweep with calls=ranklens.Calling(cache={str(folder.path)!r}) "
            "to resume (finished configurations are read from their logs, not built or run "
            "again)"
            if folder.path is not None
            else "; nothing was saved (pass calls=ranklens.Calling(cache=FOLDER) to make a "
            "sweep resumable)"
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
    folder: Folder,
    identity: Identity,
    queries: dict[str, str],
    ident: dict[str, Any],
    run_options: dict[str, Any],
) -> Outcome:
    """One configuration: its retriever from the shared build, then the runner."""
    path = folder.log_path(cfg, False)
    log = str(path) if path is not None else None
    if info.get("error"):
        folder.record({"type": "config", "key": cfg.key, "name": cfg.name, "build": info})
        return Outcome(cfg, None, build=info, log=log)
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
    result = run_retriever(adapter, queries, name=cfg.name, config=ident,
                           **_with_cache(run_options, path))  # fmt: skip
    return Outcome(cfg, result, build=info, index=index, log=log)


def _with_cache(run_options: dict[str, Any], path: Path | None) -> dict[str, Any]:
    """The runner's keywords with this configuration's log as the calls' cache."""
    return {**run_options, "calls": replace(run_options["calls"], cache=path)}


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
