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
which is also put on ``sys.path`` for ``module:function``. Every other key is checked by
the declaration of :func:`ranklens.sweep` (:data:`ranklens.sweeps.params.SWEEP`): its type
as written (``folds = "5"`` is refused, not read as 5), its range, and a misspelled key
names the closest. ``cost`` may be a number or a table of configuration name to number.
The file keeps the flat keys (``n_resamples``, ``concurrency``, ``cache``, ``folds``,
``constraint``, ``cost``, ``backend``...): they become the settings objects
(``ranklens.Statistics``, ``ranklens.Calling``, ``Selection``, ``Costs``, ``Execution``)
that ``ranklens.sweep`` takes.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from ..declared import ParameterError
from ..errors import InputError, closest
from ..escape import terminal
from ..sweeps import CLI, FILE_KEYS, NOT_IN_FILE, SWEEP, grouped

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
    CLI.add_argument(s, "config", "config", metavar="CONFIG.toml")
    CLI.add_argument(s, "html", metavar="FILE")
    CLI.add_argument(s, "json", metavar="FILE")
    CLI.add_argument(s, "cache", metavar="DIR")
    CLI.add_argument(s, "lock_timeout", metavar="SECONDS")
    CLI.add_argument(s, "format", default="text")
    CLI.add_argument(s, "quiet", "-q", "--quiet", action="store_true")


def load_config(path: str | Path) -> tuple[dict[str, Any], Path]:
    """The TOML file's content and its folder; a missing or unreadable file is named."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        try:
            import tomli as tomllib
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
        if module_spec is None or module_spec.loader is None:
            raise InputError(f"{source}: cannot import build file {file}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[file.stem] = module
        module_spec.loader.exec_module(module)
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


def sweep_arguments(
    data: dict[str, Any],
    folder: Path,
    source: str,
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of :func:`ranklens.sweep` described by the file's content:
    every key but ``build`` and ``grid`` checked by :data:`~ranklens.sweeps.params.SWEEP`
    (types as written, not coerced); the file's flat keys of the settings objects
    (``n_resamples``, ``cache``, ``folds``, ``constraint``, ``cost``, ``backend``...) given
    as ``stats=``, ``calls=``, ``selection=``, ``costs=``, ``execution=`` (the file's own
    spelling: no warning). ``overrides``: keys the command line gives (``cache``,
    ``lock_timeout``), over the file's."""
    for key in FILE_KEYS:
        if key not in data:
            raise InputError(f"{source}: the file has no {key!r}")
    takes = [k for k in SWEEP.options if k not in NOT_IN_FILE or k == "cost"]
    for key in data:
        if key not in takes and key not in ("build", "grid"):
            near = closest(key, takes)
            raise ParameterError(
                f"{source}: unknown key {key!r}"
                + (f"; did you mean {near!r}?" if near else "")
                + f" (the file takes: {', '.join(takes)})"
            )
    args = SWEEP.check({k: v for k, v in data.items() if k not in ("build", "grid")}, source)
    for key in PATHS:
        if isinstance(args.get(key), str):
            args[key] = str(folder / args[key])
    args.update(overrides or {})
    settings = grouped(source, {}, args, warn=False)
    args.update(settings._asdict())
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
    overrides: dict[str, Any] = {}
    if args.cache:
        overrides["cache"] = args.cache
    if args.lock_timeout is not None:
        overrides["lock_timeout"] = args.lock_timeout
    kwargs = sweep_arguments(data, folder, args.config, overrides)
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
        sys.stderr.write(f"sweep written to {terminal(args.json)}\n")
    if args.html:
        result.to_html(args.html)
        sys.stderr.write(f"HTML report written to {terminal(args.html)}\n")
    return 0
