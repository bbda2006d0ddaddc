"""``ranklens gate`` and ``ranklens power``: the CI quality gate and power analysis from the
command line. ``gate`` exits 0 when every rule passes, 1 when one fails, 2 on a usage or
input error; it prints the verdict table and the queries that regressed most, and writes
a Markdown summary to ``$GITHUB_STEP_SUMMARY`` (appended) and ``--summary FILE``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError

PAIRED_TESTS = ("randomization", "t", "bootstrap", "wilcoxon")
"""The paired tests the commands offer (``ranklens.comparison.stats.TESTS``, named here so
that parsing arguments imports no numerics)."""


def add_gate_commands(sub: Any, add_judge_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """The ``gate`` and ``power`` subcommands."""
    g = sub.add_parser(
        "gate",
        help="gate a run against a baseline report (CI: exit 1 on a regression)",
        description="Gate RUN against a saved baseline: per metric a floor (a ceiling for a "
        "metric better lower, such as outdated@10) and/or a margin (non-inferiority, one-sided "
        "paired test, Holm over metrics: the drop allowed, or the rise allowed for a metric "
        "better lower); each metric passes, fails or is inconclusive.",
    )
    g.add_argument("qrels", metavar="QRELS_OR_DATASET", help="qrels file or dataset folder/file")
    g.add_argument("run", metavar="RUN", help="run file")
    g.add_argument("--baseline", required=True, metavar="BASELINE.json", help="baseline report")
    g.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        required=True,
        help="gated metric, repeatable",
    )
    g.add_argument(
        "--margin",
        action="append",
        default=[],
        metavar="X|METRIC=X",
        help="drop allowed against the baseline (the rise allowed for a metric better lower: "
        "outdated@k, undated@k, unj@k), for every metric or one (default 0)",
    )
    g.add_argument(
        "--floor",
        action="append",
        default=[],
        metavar="METRIC=V",
        help="least mean allowed for METRIC (a metric better higher)",
    )
    g.add_argument(
        "--ceiling",
        action="append",
        default=[],
        metavar="METRIC=V",
        help="greatest mean allowed for METRIC (a metric better lower: outdated@k, undated@k, "
        "unj@k)",
    )
    g.add_argument(
        "--floor-confidence",
        type=float,
        metavar="LEVEL",
        help="judge each floor and ceiling by one-sided confidence bounds at LEVEL (e.g. 0.95): "
        "pass on its right side with confidence, fail on its wrong side with confidence, "
        "inconclusive between (default: compare the mean with the limit)",
    )
    g.add_argument(
        "--floor-method",
        default="auto",
        choices=["auto", "exact", "wilson", "t+", "t", "bootstrap"],
        help="bound for --floor-confidence (default auto: exact for 0/1 values, t+ otherwise)",
    )
    g.add_argument(
        "--profile",
        metavar="NAME",
        help="use a profile's targets as limits: >= targets as floors, <= as ceilings "
        "(ranklens profiles lists them)",
    )
    g.add_argument("--update-baseline", action="store_true", help="write RUN's report as baseline")
    g.add_argument(
        "--test",
        default="bootstrap",
        choices=PAIRED_TESTS,
        help="one-sided paired test (default: bootstrap)",
    )
    g.add_argument("--alpha", type=float, default=0.05, help="one-sided level (default 0.05)")
    g.add_argument(
        "--inconclusive",
        choices=["fail", "pass"],
        default="fail",
        help="what an inconclusive metric does to the gate (default: fail)",
    )
    g.add_argument("--resamples", type=int, default=10_000, metavar="N")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--summary", metavar="FILE", help="also write the Markdown summary here")
    g.add_argument("--mlflow", action="store_true", help="log the result to MLflow")
    g.add_argument("--mlflow-experiment", metavar="NAME", help="MLflow experiment")
    add_judge_args(g)

    p = sub.add_parser(
        "power",
        help="minimum detectable effect and queries needed, from a report",
        description="Power of the paired tests from a saved (baseline) report: the "
        "smallest difference detectable with the given power over N queries, and the "
        "queries needed to detect EFFECT.",
    )
    p.add_argument("report", metavar="REPORT.json")
    p.add_argument("-m", "--metric", action="append", dest="metrics", metavar="METRIC")
    p.add_argument("-n", "--queries", type=int, metavar="N", help="queries (default: the report's)")
    p.add_argument("--effect", type=float, metavar="DELTA", help="effect to detect")
    p.add_argument("--alpha", type=float, default=0.05, help="one-sided level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="power (default 0.8)")
    p.add_argument("--test", choices=PAIRED_TESTS)
    p.add_argument(
        "--correlation",
        type=float,
        default=0.5,
        help="assumed correlation of two runs' values, for a one-run report",
    )


def _pairs(items: list[str], what: str) -> tuple[float | None, dict[str, float]]:
    """``X`` (for every metric) and ``METRIC=X`` entries."""
    every: float | None = None
    named: dict[str, float] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        try:
            x = float(value)
        except ValueError:
            raise InputError(f"--{what} {item!r}: expected a number or METRIC=NUMBER") from None
        if sep:
            named[name.strip()] = x
        else:
            every = x
    return every, named


def cmd_gate(args: argparse.Namespace, judge_kwargs: dict[str, Any]) -> int:
    from ..comparison import gate
    from ..io import read_dataset

    every, margins = _pairs(args.margin, "margin")
    floor_all, floors = _pairs(args.floor, "floor")
    if floor_all is not None:
        raise InputError("--floor needs METRIC=VALUE")
    ceiling_all, ceilings = _pairs(args.ceiling, "ceiling")
    if ceiling_all is not None:
        raise InputError("--ceiling needs METRIC=VALUE")
    margin: Any = margins or None
    if every is not None or not (margins or floors or ceilings or args.profile):
        base = 0.0 if every is None else every
        margin = {**{m: base for m in args.metrics}, **margins}
    labels: Any = args.qrels
    if Path(labels).is_dir() or Path(labels).suffix in (".parquet", ".csv", ".tsv"):
        labels = read_dataset(labels)
    result = gate(
        labels,
        args.run,
        args.baseline,
        args.metrics,
        margin=margin,
        floors=floors or None,
        ceilings=ceilings or None,
        update_baseline=args.update_baseline,
        test=args.test,
        alpha=args.alpha,
        inconclusive=args.inconclusive,
        n_resamples=args.resamples,
        seed=args.seed,
        **({"floor_confidence": args.floor_confidence} if args.floor_confidence else {}),
        **({"floor_method": args.floor_method} if args.floor_confidence else {}),
        **({"profile": args.profile} if args.profile else {}),
        **judge_kwargs,
    )
    sys.stdout.write(result.to_text())
    write_summaries(result, args.summary)
    if args.mlflow:
        from ..render.mlflow import log_mlflow

        run_id = log_mlflow(result, experiment=args.mlflow_experiment)
        sys.stderr.write(f"logged to MLflow run {run_id}\n")
    return result.exit_code


def write_summaries(result: Any, path: str | None) -> None:
    """The Markdown summary, appended to ``$GITHUB_STEP_SUMMARY`` when set and written to
    ``path`` when given."""
    text = result.to_markdown()
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:
        with open(step, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
    if path:
        Path(path).write_text(text, encoding="utf-8")


def cmd_power(args: argparse.Namespace) -> int:
    from ..comparison import power

    rows = power(
        args.report,
        args.metrics,
        n=args.queries,
        effect=args.effect,
        alpha=args.alpha,
        power=args.power,
        test=args.test,
        correlation=args.correlation,
    )
    first = rows[0]
    sys.stdout.write(
        f"one-sided {first.test} test, alpha {first.alpha}, power {first.power}, "
        f"{first.n} queries\n"
    )
    for r in rows:
        line = f"  {r.metric}: sd of differences {r.sd:.4f}, detects {r.mde:.4f}"
        if r.needed is not None:
            line += f"; {r.needed} queries detect {r.effect:g}"
        sys.stdout.write(line + "\n")
    return 0
