"""The ``ranklens`` command line.

``ranklens evaluate QRELS RUN -m METRIC [-m ...] [-l LEVEL] [--skip-missing]
[--format table|json|trec] [-q]`` evaluates a run file like trec_eval (metric names may be
trec_eval's own, including ``-m P.5,10`` and ``-m all_trec``); ``ranklens demo`` runs the
offline demo.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .errors import RanklensError

DEFAULT_METRICS = ["map", "P@10", "recall@100", "ndcg@10", "mrr@10"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ranklens",
        description="Exact, fast ranking metrics for retrieval and RAG (trec_eval's numbers).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ev = sub.add_parser(
        "evaluate",
        help="evaluate a run against qrels",
        description="Evaluate RUN against QRELS (TREC, JSON or JSONL files).",
    )
    ev.add_argument("qrels", help="qrels file (TREC 'qid iter doc rel', .json or .jsonl)")
    ev.add_argument("run", help="run file (TREC 'qid Q0 doc rank score tag', .json or .jsonl)")
    ev.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="metric name, repeatable: ndcg@10, P(rel=2)@5, map, or trec_eval's "
        "ndcg_cut_10, P.5,10, all_trec (default: " + ", ".join(DEFAULT_METRICS) + ")",
    )
    ev.add_argument(
        "-l",
        "--relevance-level",
        type=int,
        default=1,
        metavar="LEVEL",
        help="smallest grade that counts as relevant for binary measures (trec_eval -l; default 1)",
    )
    ev.add_argument(
        "--skip-missing",
        action="store_true",
        help="leave out labelled queries absent from the run (default: score "
        "them 0, as trec_eval -c)",
    )
    ev.add_argument(
        "--duplicates",
        choices=["error", "first", "redundant", "count"],
        help="a document twice in one query: error (trec default), keep the first, keep it "
        "but never credit it again, or count it again",
    )
    ev.add_argument(
        "--convention",
        default="trec",
        metavar="NAME",
        help="trec (default), llamaindex, haystack or autorag: reproduce that tool's numbers",
    )
    ev.add_argument(
        "--format",
        choices=["table", "json", "trec"],
        default="table",
        help="output format (default: table)",
    )
    ev.add_argument(
        "-q",
        "--per-query",
        action="store_true",
        help="also print each query's values (table and trec formats)",
    )

    ex = sub.add_parser(
        "explain",
        help="one metric under each convention, and why they differ",
        description="Compute one metric under several conventions side by "
        "side and name the switch behind each difference.",
    )
    ex.add_argument("qrels", nargs="?", help="qrels file (default: a built-in tricky example)")
    ex.add_argument("run", nargs="?", help="run file")
    ex.add_argument("--metric", "-m", required=True, help="e.g. mrr@10, ndcg@5, map")
    ex.add_argument(
        "--conventions",
        default="trec,llamaindex,haystack,autorag",
        help="comma-separated, the first is the baseline",
    )
    ex.add_argument("-l", "--relevance-level", type=int, default=1, metavar="LEVEL")

    demo = sub.add_parser("demo", help="run the offline demo on data the package ships")
    demo.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    return parser


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .evaluation import evaluate

    metrics = args.metrics or DEFAULT_METRICS
    ev = evaluate(
        args.qrels,
        args.run,
        metrics,
        relevance_level=args.relevance_level,
        convention=args.convention,
        **({"missing": "skip"} if args.skip_missing else {}),
        **({"duplicates": args.duplicates} if args.duplicates else {}),
    )
    if args.format == "json":
        sys.stdout.write(json.dumps(ev.to_dict(), indent=2) + "\n")
    elif args.format == "trec":
        sys.stdout.write(ev.to_trec(per_query=args.per_query))
    else:
        sys.stdout.write(ev.to_table(per_query=args.per_query))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ranklens`` command."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "evaluate":
            return _cmd_evaluate(args)
        if args.command == "explain":
            from .explain import explain, format_explanation

            if (args.qrels is None) != (args.run is None):
                parser.error("explain takes both QRELS and RUN, or neither")
            result = explain(
                args.metric,
                args.qrels,
                args.run,
                [c.strip() for c in args.conventions.split(",") if c.strip()],
                relevance_level=args.relevance_level,
            )
            sys.stdout.write(format_explanation(result, args.qrels is None))
            return 0
        if args.command == "demo":
            from .demo import run_demo

            return run_demo()
    except RanklensError as exc:
        sys.stderr.write(f"ranklens: error: {exc}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
