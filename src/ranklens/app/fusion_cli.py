"""``ranklens fuse``: several run files fused into one TREC run file (:func:`ranklens.fuse`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError


def add_fuse_command(sub: Any) -> None:
    """The ``fuse`` subcommand."""
    f = sub.add_parser(
        "fuse",
        help="fuse runs (rrf, CombSUM, ... or exactly as LangChain, LlamaIndex, Haystack)",
        description="Fuse RUN files into one run: ranx's methods and normalisations, or a "
        "framework's own fusion (langchain, llamaindex:MODE, haystack:MODE).",
    )
    f.add_argument("runs", nargs="+", metavar="RUN", help="run files; NAME=PATH names one")
    f.add_argument("--method", default="rrf", help="fusion method (default: rrf)")
    f.add_argument("--norm", help="normalisation: min-max, min-max-inverted, max, sum, zmuv, "
                   "rank, borda")  # fmt: skip
    f.add_argument("--weights", help="comma-separated weights, one per run")
    f.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="method parameter, e.g. k=60, phi=0.8, gamma=1.5")  # fmt: skip
    f.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    f.add_argument("--name", help="run tag in the output (default: the method)")


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
