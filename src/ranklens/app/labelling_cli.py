"""``ranklens pool``, ``ranklens judge`` and ``ranklens agreement``: the unjudged pairs of
some runs, a judging page for them, and how two judges agree (:mod:`ranklens.assess`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from .fusion_cli import named_paths


def add_judgment_commands(sub: Any) -> None:
    """The ``pool``, ``judge`` and ``agreement`` subcommands."""
    p = sub.add_parser(
        "pool",
        help="the unjudged (query, document) pairs in the top K of any run, to judge",
        description="Write the unjudged pairs in the top K of any RUN (one JSON object per "
        "line: query_id, doc_id, query and document text when known, the runs and ranks).",
    )
    p.add_argument("qrels", metavar="QRELS", help="labels (TREC qrels, JSONL, or a dataset "
                   "folder: its queries and corpus give the texts)")  # fmt: skip
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files; NAME=PATH names one")
    from ..labelling.pool import POOL

    POOL.add_argument(p, "depth", default=10, help="top K pooled per run (default: 10)")
    p.add_argument("--strategy", default="topk", choices=("topk", "rrf"),
                   help="order of each query's pairs (default: topk)")  # fmt: skip
    POOL.add_argument(p, "max_pairs", help="a budget, spent level by level over queries")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")

    j = sub.add_parser(
        "judge",
        help="an offline HTML page to judge a pool with the keyboard",
        description="Write a self-contained judging page for POOL (from `ranklens pool`): "
        "grade keys, progress, undo, resume after reload, export as TREC qrels or JSONL.",
    )
    j.add_argument("pool", metavar="POOL", help="the pool (JSONL)")
    j.add_argument("--html", metavar="FILE", required=True, help="the page to write")
    j.add_argument("--grades", default="0,1,2,3", help="grades offered: 0,1,2,3 (default), "
                   "binary, or a list")  # fmt: skip
    j.add_argument("--title", help="the page's title")
    j.add_argument("--source", default="human", help="provenance in the JSONL export")

    a = sub.add_parser(
        "agreement",
        help="Cohen's kappa and the confusion matrix of two judges",
        description="How two label sets agree on the pairs both judged.",
    )
    a.add_argument("first", metavar="A", help="labels (TREC qrels, or the page's JSONL)")
    a.add_argument("second", metavar="B", help="labels to compare with A")
    a.add_argument("--weights", default="linear", choices=("none", "linear", "quadratic"),
                   help="weighted kappa's weights (default: linear)")  # fmt: skip


def cmd_pool(args: argparse.Namespace) -> int:
    from ..io import read_dataset
    from ..labelling import pool

    labels: Any = args.qrels
    if Path(labels).is_dir():
        labels = read_dataset(labels)
    result = pool(labels, named_paths(args.runs), args.depth, args.strategy,
                  max_pairs=args.max_pairs)  # fmt: skip
    if args.output:
        result.to_jsonl(args.output)
    else:
        import json

        for pair in result:
            sys.stdout.write(json.dumps(pair.to_json(), ensure_ascii=False) + "\n")
    info = result.info
    left = f", {info['left_out_by_budget']} left out by the budget" if args.max_pairs else ""
    sys.stderr.write(
        f"{len(result)} unjudged pairs in the top {args.depth} of {len(info['runs'])} runs over "
        f"{info['queries_pooled']} queries ({info['judged_in_top']} judged documents met{left})\n"
    )
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    from ..labelling import LabelPool, judging_page

    pool = LabelPool.from_jsonl(args.pool)
    grades: Any = args.grades
    if grades != "binary":
        try:
            grades = [int(g) for g in grades.split(",")]
        except ValueError:
            raise InputError(
                f"--grades takes binary or whole numbers, got {args.grades!r}"
            ) from None
    judging_page(pool, args.html, grades=grades, title=args.title, source=args.source)
    sys.stderr.write(f"wrote {args.html}: {len(pool)} pairs to judge\n")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from ..labelling import agreement, read_judgments

    a, b = read_judgments(args.first), read_judgments(args.second)
    weights = None if args.weights == "none" else args.weights
    names = (Path(args.first).name, Path(args.second).name)
    sys.stdout.write(str(agreement(a, b, weights=weights, names=names)) + "\n")
    return 0
