"""``ranklens gate`` and ``ranklens power``: the CI quality gate and power analysis from the
command line. ``gate`` exits 0 when every rule passes, 1 when one fails, 2 on a usage or
input error; it prints the verdict table and the queries that regressed most, and writes
a Markdown summary to ``$GITHUB_STEP_SUMMARY`` (appended) and ``--summary FILE``."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..comparison.gate import GATE
from ..comparison.power_analysis import POWER
from ..declared import ParameterError

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
        metavar="X|METRIC=X|none",
        help="drop allowed against the baseline (the rise allowed for a metric better lower: "
        "outdated@k, undated@k, unj@k), for every metric or one; default 0 for every metric "
        "not named; 'none': no margin, the floors and ceilings alone (every metric then "
        "needs one)",
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
    GATE.add_argument(
        g,
        "floor_confidence",
        metavar="LEVEL",
        help="judge each floor and ceiling by one-sided confidence bounds at LEVEL (e.g. 0.95): "
        "pass on its right side with confidence, fail on its wrong side with confidence, "
        "inconclusive between (default: compare the mean with the limit)",
    )
    GATE.add_argument(
        g,
        "floor_method",
        default="auto",
        metavar="METHOD",
        help="bound for --floor-confidence: auto, exact, wilson, t+, t or bootstrap (default "
        "auto: exact for 0/1 values, t+ otherwise)",
    )
    g.add_argument(
        "--profile",
        metavar="NAME",
        help="use a profile's targets as limits: >= targets as floors, <= as ceilings "
        "(ranklens profiles lists them)",
    )
    g.add_argument("--update-baseline", action="store_true", help="write RUN's report as baseline")
    GATE.add_argument(g, "test", default="bootstrap", metavar="TEST",
                      help="one-sided paired test: " + ", ".join(PAIRED_TESTS)
                      + " (default: bootstrap)")  # fmt: skip
    GATE.add_argument(g, "alpha", default=0.05, help="one-sided level (default 0.05)")
    GATE.add_argument(g, "inconclusive", default="fail", metavar="fail|pass",
                      help="what an inconclusive metric does (default: fail)")  # fmt: skip
    GATE.add_argument(g, "n_resamples", "--resamples", default=10_000, metavar="N")
    GATE.add_argument(g, "seed", default=0, metavar="N")
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
    POWER.add_argument(p, "n", "-n", "--queries", metavar="N",
                       help="queries (default: the report's)")  # fmt: skip
    POWER.add_argument(p, "effect", metavar="DELTA", help="effect to detect")
    POWER.add_argument(p, "alpha", default=0.05, help="one-sided level (default 0.05)")
    POWER.add_argument(p, "power", default=0.8, help="power (default 0.8)")
    p.add_argument("--test", choices=PAIRED_TESTS)
    POWER.add_argument(
        p,
        "correlation",
        default=0.5,
        help="assumed correlation of two runs' values, for a one-run report",
    )


def _pairs(items: list[str], what: str) -> tuple[float | None, dict[str, float]]:
    """``X`` (for every metric) and ``METRIC=X`` entries, each a finite number (a
    :class:`ParameterError` naming the flag otherwise)."""
    every: float | None = None
    named: dict[str, float] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        try:
            x = float(value)
        except ValueError:
            x = float("nan")
        if not math.isfinite(x) or (sep and not name.strip()):
            raise ParameterError(
                f"ranklens gate: --{what} must be a finite number or METRIC=NUMBER, got {item!r}"
            )
        if sep:
            if name.strip() in named:
                raise ParameterError(f"ranklens gate: --{what} {name.strip()} given twice")
            named[name.strip()] = x
        else:
            if every is not None:
                raise ParameterError(f"ranklens gate: --{what} X given twice")
            every = x
    return every, named


def gate_margin(items: list[str]) -> Any:
    """The ``margin=`` that ``--margin`` entries mean, exactly as :func:`ranklens.gate`
    reads it: none given, 0 for every metric (the function's default); ``X``, X for every
    metric; ``METRIC=X`` for that metric alone (with ``X`` too, X for the rest: ``"*"``);
    ``none``, no margin."""
    if [i.strip().lower() for i in items] == ["none"]:
        return None
    if any(i.strip().lower() == "none" for i in items):
        raise ParameterError("ranklens gate: --margin none takes no other --margin")
    every, named = _pairs(items, "margin")
    if not items:
        return 0.0
    if not named:
        return every
    return {**({"*": every} if every is not None else {}), **named}


def cmd_gate(args: argparse.Namespace, judge_kwargs: dict[str, Any]) -> int:
    from ..comparison import gate
    from ..io import read_dataset
    from ..settings import Statistics

    margin = gate_margin(args.margin)
    floor_all, floors = _pairs(args.floor, "floor")
    if floor_all is not None:
        raise ParameterError("ranklens gate: --floor needs METRIC=VALUE")
    ceiling_all, ceilings = _pairs(args.ceiling, "ceiling")
    if ceiling_all is not None:
        raise ParameterError("ranklens gate: --ceiling needs METRIC=VALUE")
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
        stats=Statistics(
            test=args.test, alpha=args.alpha, n_resamples=args.resamples, seed=args.seed
        ),
        inconclusive=args.inconclusive,
        floor_confidence=args.floor_confidence,
        floor_method=args.floor_method,
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
    from ..comparison import load_report, power
    from ..settings import Statistics

    report = load_report(args.report)
    test = args.test or report.settings.get("test") or "randomization"  # None: the report's
    rows = power(
        report,
        args.metrics,
        n=args.queries,
        effect=args.effect,
        stats=Statistics(alpha=args.alpha, test=test),
        power=args.power,
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
