"""``ranklens sweep CONFIG.toml``: a sweep (:func:`ranklens.sweep`) described by a TOML file.

The file names the build function, the grid and the dataset; every other key is a keyword
of :func:`ranklens.sweep`::

    build = "retrievers:build"        # module:function, or path/to/file.py:function
    dataset = "data/scifact"          # anything read_dataset reads
    metrics = ["ndcg@10", "recall@10"]
    query_params = ["top_k"]
    cache = "sweep-cache"             # resumable: run the command again after a crash
    constraint = "p95 <= 200"

    [grid]
    framework = ["llamaindex", "haystack"]
    top_k = [5, 10]

``grid`` may instead be an array of tables (``[[grid]]``, one configuration each). Paths
(the dataset, the cache, a ``file.py`` build) are read relative to the TOML file's folder,
which is also put on ``sys.path`` for ``module:function``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError

SETTINGS = ("build", "dataset", "grid", "metrics", "labels")
"""Keys of the file read here; the others go to :func:`ranklens.sweep` as keywords."""

PATHS = ("dataset", "labels", "cache")
"""Keys whose values are paths, read relative to the file."""


def add_sweep_command(sub: Any) -> None:
    """The ``sweep`` subcommand."""
    s = sub.add_parser(
        "sweep",
        help="build, run and compare retriever configurations; choose by cross-validation",
        description="Run every configuration of the grid in CONFIG.toml (the build function, "
        "the grid, the dataset, and any ranklens.sweep keyword), compare them and choose "
        "honestly: the held-out estimate beside the in-sample best, tests against the "
        "runner-up and the baseline, the tied set, latency, build time, a Pareto view.",
    )
    s.add_argument("config", metavar="CONFIG.toml", help="the sweep's description (TOML)")
    s.add_argument("--html", metavar="FILE", help="write the HTML report (charts, drill-down)")
    s.add_argument("--json", metavar="FILE", help="save the sweep as JSON")
    s.add_argument("--cache", metavar="DIR", help="the sweep folder (overrides the file's cache)")
    s.add_argument(
        "--format",
        default="text",
        choices=["text", "markdown", "json", "none"],
        help="what to print (default: text)",
    )
    s.add_argument("-q", "--quiet", action="store_true", help="no line per configuration")


def load_config(path: str | Path) -> tuple[dict[str, Any], Path]:
    """The TOML file's content and its folder; a missing or unreadable file is named."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise InputError(
                "reading CONFIG.toml on Python 3.10 needs tomli: pip install tomli"
            ) from None
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such sweep file")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{p}: not valid TOML ({exc})") from None
    return data, p.resolve().parent


def resolve_build(spec: Any, folder: Path, source: str) -> Any:
    """``module:function`` or ``file.py:function`` as the function it names."""
    if not isinstance(spec, str) or ":" not in spec:
        raise InputError(
            f"{source}: build must be 'module:function' or 'path/to/file.py:function', got {spec!r}"
        )
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        file = (folder / target).resolve()
        if not file.is_file():
            raise InputError(f"{source}: build file {file} does not exist")
        module_spec = importlib.util.spec_from_file_location(file.stem, file)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[file.stem] = module
        module_spec.loader.exec_module(module)  # type: ignore[union-attr]
    else:
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise InputError(f"{source}: cannot import {target!r} for build ({exc})") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"{source}: {target} has no function {attr!r}")
    return fn


def sweep_arguments(data: dict[str, Any], folder: Path, source: str) -> dict[str, Any]:
    """The keyword arguments of :func:`ranklens.sweep` described by the file's content."""
    from ..sweeps import sweep

    for key in ("build", "dataset", "grid"):
        if key not in data:
            raise InputError(f"{source}: the file has no {key!r}")
    allowed = set(inspect.signature(sweep).parameters) - {"build", "grid", "dataset"}
    allowed -= {"name", "cost", "cost_per_token", "count_tokens", "verbose", "retry_on"}
    unknown = sorted(k for k in data if k not in SETTINGS and k not in allowed)
    if unknown:
        raise InputError(
            f"{source}: unknown key {', '.join(map(repr, unknown))}; the file takes build, "
            f"dataset, grid and the keywords of ranklens.sweep: {', '.join(sorted(allowed))}"
        )
    args = {k: v for k, v in data.items() if k not in ("build", "grid")}
    for key in PATHS:
        if isinstance(args.get(key), str):
            args[key] = str(folder / args[key])
    args["build"] = resolve_build(data["build"], folder, source)
    grid = data["grid"]
    if isinstance(grid, list) and not grid:
        raise InputError(f"{source}: the grid is empty")
    args["grid"] = grid
    return args


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run the sweep the file describes; print and save what was asked."""
    from ..sweeps import sweep

    data, folder = load_config(args.config)
    kwargs = sweep_arguments(data, folder, args.config)
    if args.cache:
        kwargs["cache"] = args.cache
    kwargs.setdefault("verbose", not args.quiet)
    result = sweep(**kwargs)
    if args.format == "text":
        sys.stdout.write(str(result) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(result.to_markdown())
    elif args.format == "json":
        sys.stdout.write(result.to_json() + "\n")
    if args.json:
        result.save(args.json)
        sys.stderr.write(f"sweep written to {args.json}\n")
    if args.html:
        result.to_html(args.html)
        sys.stderr.write(f"HTML report written to {args.html}\n")
    return 0
