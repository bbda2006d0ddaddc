"""``ranklens estimate``: metrics from a model judge calibrated on a human-labelled sample
by prediction-powered inference (:func:`ranklens.estimate`)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from ..declared import AT_LEAST_ONE, POSITIVE, count, declare, number
from ..estimation import ESTIMATE, MIN_HUMAN
from .callables import load_callable
from .evaluate_cli import DEFAULT_METRICS
from .fusion_cli import named_paths

ESTIMATE_CLI = declare(
    "ranklens estimate",
    {
        "human_sample": count(
            None,
            AT_LEAST_ONE,
            f"N of the dataset's labelled queries drawn at random (at least {MIN_HUMAN}), standing "
            "in for people",
        ),
        **{
            k: ESTIMATE[k]
            for k in ("depth", "confidence", "interval", "seed", "concurrency", "timeout",
                      "retries")
        },
        "plan": number(None, POSITIVE, "also say how many human labels a width this wide takes"),
    },
)  # fmt: skip


def add_estimate_command(sub: Any) -> None:
    p = sub.add_parser(
        "estimate",
        help="metrics from a model judge calibrated on a few human labels (PPI, PPI++)",
        description="Grade every RUN's top k with a judge (or read its labels), calibrate it "
        "on the human-labelled queries, and print each metric of each run and each "
        "difference from the baseline four ways: judge only, human only, PPI and PPI++, "
        "with intervals that stay valid when the judge is biased.",
    )
    p.add_argument("dataset", metavar="DATASET", help="a dataset folder with its corpus (BEIR)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files; NAME=PATH names one")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--judge",
        metavar="SPEC",
        help="offline (a word-overlap stand-in), "
        "module:name or file.py:name of a callable (query, passage) -> grade",
    )
    who.add_argument("--judge-labels", metavar="FILE", help="labels a judge already gave")
    human = p.add_mutually_exclusive_group(required=True)
    human.add_argument("--human", metavar="FILE", help="the human labels (TREC qrels, JSONL)")
    ESTIMATE_CLI.add_argument(human, "human_sample", metavar="N")
    p.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="repeatable (default: " + ", ".join(DEFAULT_METRICS) + ")",
    )
    ESTIMATE_CLI.add_argument(p, "depth")
    p.add_argument("--baseline", metavar="NAME", help="differences are taken from this run")
    ESTIMATE_CLI.add_argument(p, "confidence", default=0.95)
    ESTIMATE_CLI.add_argument(p, "interval", default="t")
    ESTIMATE_CLI.add_argument(p, "seed", default=0)
    p.add_argument("--cache", metavar="LOG", help="the judge's resumable log")
    ESTIMATE_CLI.add_argument(p, "concurrency", default=8)
    ESTIMATE_CLI.add_argument(p, "timeout")
    ESTIMATE_CLI.add_argument(p, "retries", default=2)
    ESTIMATE_CLI.add_argument(p, "plan", metavar="WIDTH")
    p.add_argument("--html", metavar="FILE", help="write the estimate as an HTML page")
    p.add_argument("--json", metavar="FILE", help="write the estimate as JSON")


def cmd_estimate(args: argparse.Namespace) -> int:
    from ..estimation import estimate, plan_labels
    from ..io import read_dataset
    from ..labelling.judges import CALLS
    from ..settings import Statistics
    from .demo import overlap_judge

    options: dict[str, Any] = {}
    if args.judge:
        options["judge"] = load_callable(args.judge, overlap_judge)
    else:
        options["judged"] = args.judge_labels
    human = args.human if args.human else args.human_sample
    result = estimate(
        read_dataset(args.dataset),
        named_paths(args.runs),
        human=human,
        metrics=args.metrics or DEFAULT_METRICS,
        depth=args.depth,
        baseline=args.baseline,
        interval=args.interval,
        stats=Statistics(confidence=args.confidence, seed=args.seed),
        calls=replace(
            CALLS,
            concurrency=args.concurrency,
            timeout=args.timeout,
            retries=args.retries,
            cache=args.cache,
        ),
        **options,
    )
    sys.stdout.write(str(result) + "\n")
    if args.plan is not None:
        sys.stdout.write("\n" + str(plan_labels(result, args.plan)) + "\n")
    if args.html:
        result.to_html(args.html)
        sys.stderr.write(f"HTML written to {args.html}\n")
    if args.json:
        result.save(args.json)
        sys.stderr.write(f"JSON written to {args.json}\n")
    return 0
