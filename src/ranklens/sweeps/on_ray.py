"""A sweep's configurations in parallel on Ray (``Execution(backend="ray")``).

* Each configuration is one Ray task: its retriever made and every query asked through
  the local runner (``calls.concurrency`` threads, timeouts, retries, the per-query
  record), its log the same file a local sweep writes, so a sweep resumes on either
  backend. Ray runs as many configurations at once as its CPUs allow
  (``ray_options={"num_cpus": ...}`` per configuration, ``"actors"``: at most that many
  at once).
* ``query_params``: the configurations that share a build share it once per cluster: one
  Ray task builds (timed) and its result goes to Ray's object store, from which each of
  the group's configuration tasks reads it (numpy arrays without a copy). A build whose
  result does not pickle is made again by each configuration's task, and its rows say so.
* A configuration whose worker is killed (a lost process or node) is run again by Ray
  (``ray_options={"max_retries": 3}``, the default) and its log resumed: no finished query
  is asked again, and the driver takes each configuration's result once. Past the retries
  the configuration is recorded as failed and the sweep goes on; run the sweep again to
  resume it.
* The driver alone writes the sweep folder's ``sweep.jsonl`` (builds and configurations),
  as each result arrives.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..capture import RunResult, as_retriever, run_retriever
from ..errors import RunInterrupted
from ..evaluation.on_ray import connect
from .folder import Folder
from .grid import Config

RAY_OPTIONS = ("address", "num_cpus", "num_gpus", "max_retries", "actors")
"""The keys of ``ray_options`` a sweep on Ray reads."""

NOT_SHARED = (
    "build time not the shared build's: its result could not be read from Ray's object "
    "store ({why}; a result that does not pickle cannot be shipped), so this "
    "configuration built its own"
)


def build_task(build: Callable[..., Any], params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """One Ray task: ``build(**params)``, timed; its error recorded, not raised."""
    t0 = time.perf_counter()
    try:
        built = build(**params)
    except Exception as exc:
        return None, {"seconds": round(time.perf_counter() - t0, 6), "error": _error(exc)}
    return built, {"seconds": round(time.perf_counter() - t0, 6)}


def config_task(
    build: Callable[..., Any],
    cfg: Config,
    shared: list[Any] | None,
    queries: dict[str, str],
    ident: dict[str, Any],
    run_options: dict[str, Any],
    log: str | None,
) -> tuple[RunResult | None, dict[str, Any], dict[str, Any] | None]:
    """One Ray task: a configuration's retriever (from the shared build in ``shared``, a
    one-element list holding its object reference, or built here) and the local runner
    over ``queries`` with ``log`` as its resumable log. ``(result, build facts, index)``;
    a build or retriever that fails is recorded in the facts (result None)."""
    import ray

    built: Any = None
    info: dict[str, Any] = {}
    if shared:
        try:
            built, info = ray.get(shared[0])
            info = dict(info)
        except Exception as exc:  # e.g. the build's result did not pickle: built here
            built, info = None, {"not_shared": NOT_SHARED.format(why=type(exc).__name__)}
    if built is None and not info.get("error"):
        built, own = build_task(build, cfg.build_params)
        info.update(own)
    if info.get("error"):
        return None, info, None
    retriever = built
    if cfg.query_params:
        t0 = time.perf_counter()
        if not callable(built):
            info["error"] = {
                "type": "InputError",
                "message": f"with query_params=, build must return a function of "
                f"{', '.join(cfg.query_params)} returning the retriever; it returned a "
                f"{type(built).__name__}",
            }
            return None, info, None
        try:
            retriever = built(**cfg.query_params)
        except Exception as exc:
            info["error"] = _error(exc)
        info["factory_seconds"] = round(time.perf_counter() - t0, 6)
        if info.get("error"):
            return None, info, None
    try:
        adapter = as_retriever(retriever)
        index = adapter.index_info()
    except Exception as exc:  # not a retriever at all: recorded for this configuration
        info["error"] = _error(exc)
        return None, info, None
    calls = replace(run_options["calls"], cache=Path(log) if log is not None else None)
    options = {k: v for k, v in run_options.items() if k != "calls"}
    result = run_retriever(adapter, queries, name=cfg.name, config=ident, calls=calls, **options)
    result.info["backend"] = "ray"
    return result, info, index


def run_on_ray(
    pending: list[tuple[str, list[Config]]],
    build: Callable[..., Any],
    queries: dict[str, str],
    folder: Folder,
    ident: Callable[[Config], dict[str, Any]],
    run_options: dict[str, Any],
    ray_options: Mapping[str, Any],
    finish: Callable[[Config, RunResult | None, dict[str, Any], dict[str, Any] | None], None],
) -> None:
    """Run the ``pending`` configurations (per build key, the group's configurations not
    read from their logs) as Ray tasks; ``finish(config, result, build facts, index)`` is
    called for each as it arrives."""
    options = dict(ray_options)
    for old in ("shards",):
        if options.pop(old, None) is not None:
            warnings.warn(
                f"sweep: ray_options[{old!r}] is no longer used: each configuration runs "
                "as one Ray task (its queries with calls.concurrency threads) and "
                "configurations run in parallel",
                DeprecationWarning,
                stacklevel=2,
            )
    unknown = sorted(set(options) - set(RAY_OPTIONS))
    if unknown:
        from ..declared import ParameterError

        raise ParameterError(
            f"sweep: ray_options takes {', '.join(RAY_OPTIONS)}, got {', '.join(unknown)}"
        )
    per_task = float(options.get("num_cpus", 1))
    resources = {"num_cpus": per_task, "num_gpus": float(options.get("num_gpus", 0))}
    retries = int(options.get("max_retries", 3))
    ray = connect(options.get("address"), None)
    remote_build = ray.remote(max_retries=retries, **resources)(build_task)
    remote_config = ray.remote(max_retries=retries, **resources)(config_task)
    limit = options.get("actors")
    todo: list[tuple[Config, list[Any] | None, dict[str, Any]]] = []
    for key, group in pending:
        shared = None
        facts: dict[str, Any] = {"shared_by": [c.name for c in group], "on": "ray"}
        if len(group) > 1 and group[0].query_params:
            shared = [remote_build.remote(build, group[0].build_params)]
        todo += [(cfg, shared, {**facts, "key": key}) for cfg in group]
    running: dict[Any, tuple[Config, dict[str, Any]]] = {}
    recorded: set[str] = set()

    def submit() -> None:
        while todo and (limit is None or len(running) < int(limit)):
            cfg, shared, facts = todo.pop(0)
            path = folder.log_path(cfg, False)
            ref = remote_config.remote(build, cfg, shared, queries, ident(cfg), run_options,
                                       str(path) if path is not None else None)  # fmt: skip
            running[ref] = (cfg, facts)

    try:
        submit()
        while running:
            ready, _ = ray.wait(list(running), num_returns=1)
            cfg, facts = running.pop(ready[0])
            build_key = facts.pop("key")
            try:
                result, info, index = ray.get(ready[0])
            except ray.exceptions.RayError as exc:  # retries exhausted: recorded, goes on
                result, info, index = None, {"error": _lost(exc)}, None
            info = {**facts, **info}
            if build_key not in recorded and "seconds" in info:  # one line per build
                recorded.add(build_key)
                made = {k: v for k, v in info.items() if k != "factory_seconds"}
                folder.record({"type": "build", "key": build_key, "params": cfg.build_params,
                               **made})  # fmt: skip
            note = info.pop("not_shared", None)
            if note:
                info["shared_by"] = [cfg.name]
                info["not_measured"] = note
            folder.record(
                {"type": "config", "key": cfg.key, "name": cfg.name, "build": info, "index": index}
            )
            finish(cfg, result, info, index)
            submit()
    except KeyboardInterrupt:
        for ref in running:
            ray.cancel(ref, force=True)
        raise RunInterrupted("interrupted on Ray") from None


def _error(exc: BaseException) -> dict[str, str]:
    return {"type": type(exc).__name__, "message": str(exc)[:500] or "(no message)"}


def _lost(exc: BaseException) -> dict[str, str]:
    """A configuration whose task failed past its retries (a worker lost each time)."""
    return {
        "type": type(exc).__name__,
        "message": (
            "the configuration's Ray task failed past its retries (ray_options max_retries); "
            f"run the sweep again to resume it from its log: {exc}"
        )[:500],
    }
