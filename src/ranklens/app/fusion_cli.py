"""``ranklens fuse``: several run files fused into one TREC run file (:func:`ranklens.fuse`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..fusion.options import FUSE, TUNE_FUSION, WEIGHT_GRID
from ..settings import Statistics


def add_fuse_command(sub: Any) -> None:
    """The ``fuse`` subcommand."""
    f = sub.add_parser(
        "fuse",
        help="fuse runs (rrf, CombSUM, ... or exactly as LangChain, LlamaIndex, Haystack)",
        description="Fuse RUN files into one run: ranx's methods and normalisations, or a "
        "framework's own fusion (langchain, llamaindex:MODE, haystack:MODE).",
    )
    f.add_argument("runs", nargs="+", metavar="RUN", help="run files; NAME=PATH names one")
    FUSE.add_argument(f, "method", default="rrf")
    FUSE.add_argument(f, "norm")
    f.add_argument("--weights", help="comma-separated weights, one per run")
    f.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="method parameter, e.g. k=60, phi=0.8, gamma=1.5")  # fmt: skip
    f.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    f.add_argument("--name", help="run tag in the output (default: the method)")

    t = sub.add_parser(
        "tune-fusion",
        help="tune fusion weights or a parameter by cross-validation over queries",
        description="Search a fusion method's weights (or parameter) with K-fold "
        "cross-validation over the labelled queries; print the held-out estimate, the "
        "in-sample best, the chosen setting and a paired test against the best single run.",
    )
    t.add_argument("qrels", metavar="QRELS", help="labels (TREC qrels, JSONL, BEIR folder...)")
    t.add_argument("runs", nargs="+", metavar="RUN", help="run files; NAME=PATH names one")
    t.add_argument("-m", "--metric", default="ndcg@10", help="metric to tune (default: ndcg@10)")
    TUNE_FUSION.add_argument(t, "method", default="wsum")
    TUNE_FUSION.add_argument(t, "norm")
    TUNE_FUSION.add_argument(t, "folds", default=5)
    TUNE_FUSION.add_argument(t, "seed", default=0)
    WEIGHT_GRID.add_argument(t, "step", default=0.1)
    t.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="values of a method parameter to search, e.g. k=20,60,100")  # fmt: skip
    TUNE_FUSION.add_argument(t, "test", default="randomization")
    t.add_argument("--html", metavar="FILE", help="write the HTML report with the grid chart")
    t.add_argument("--json", metavar="FILE", help="save the tuning as JSON")
    t.add_argument("-o", "--output", metavar="FILE",
                   help="write the run fused with the chosen setting (TREC)")  # fmt: skip


def named_paths(items: list[str]) -> dict[str, str]:
    """Run files by name: ``NAME=PATH``, or a path named by its stem; two runs of one name
    are an error."""
    runs: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or Path(item).exists():
            name, path = Path(item).stem, item
        if name in runs:
            raise InputError(f"two runs are named {name!r}; name them with NAME=PATH")
        runs[name] = path
    return runs


def cmd_fuse(args: argparse.Namespace) -> int:
    from ..fusion import fuse
    from ..io import write_run

    runs = named_paths(args.runs)
    weights = None
    if args.weights:
        try:
            weights = [float(w) for w in args.weights.split(",")]
        except ValueError:
            raise InputError(
                f"--weights {args.weights!r}: give numbers separated by commas"
            ) from None
    params: dict[str, float] = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        try:
            params[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise InputError(f"--param {item!r}: expected KEY=NUMBER")
    fused = fuse(runs, args.method, norm=args.norm, weights=weights, name=args.name, **params)
    if args.output:
        write_run(fused, args.output)
        sys.stderr.write(f"fused run written to {args.output}\n")
    else:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "fused.run"
            write_run(fused, out)
            sys.stdout.write(out.read_text(encoding="utf-8"))
    return 0


def cmd_tune_fusion(args: argparse.Namespace, judge_options: dict[str, Any]) -> int:
    import json

    from ..fusion import method_name, tune_fusion, weight_grid
    from ..fusion.tuning import WEIGHTED
    from ..io import write_run

    runs = named_paths(args.runs)
    grid: dict[str, list[Any]] | None = None
    if args.grid or (method_name(args.method) in WEIGHTED and args.step != 0.1):
        grid = {}
        for item in args.grid:
            key, sep, values = item.partition("=")
            try:
                grid[key.strip()] = [_number(v) for v in values.split(",")]
            except ValueError:
                sep = ""
            if not sep or not key.strip():
                raise InputError(f"--grid {item!r}: expected KEY=V1,V2,...")
        if method_name(args.method) in WEIGHTED:
            grid["weights"] = weight_grid(len(runs), args.step)
    stats = Statistics(test=args.test, seed=args.seed)
    tuning = tune_fusion(args.qrels, runs, args.method, args.metric, grid, args.folds,
                         norm=args.norm, stats=stats, **judge_options)  # fmt: skip
    sys.stdout.write(str(tuning) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(tuning.to_dict(), indent=2) + "\n")
        sys.stderr.write(f"tuning written to {args.json}\n")
    if args.html:
        tuning.report(args.qrels, **judge_options).to_html(args.html)
        sys.stderr.write(f"HTML report written to {args.html}\n")
    if args.output:
        write_run(tuning.fused, args.output)
        sys.stderr.write(f"fused run (chosen setting) written to {args.output}\n")
    return 0


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value
