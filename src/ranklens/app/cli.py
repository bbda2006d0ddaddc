"""The ``ranklens`` command line.

``ranklens evaluate QRELS RUN -m METRIC [-m ...] [-l LEVEL] [--skip-missing]
[--format table|json|trec] [-q]`` evaluates a run file like trec_eval (metric names may be
trec_eval's own, including ``-m P.5,10`` and ``-m all_trec``);
``ranklens compare QRELS RUN [RUN ...] -m ... [--baseline NAME] [--test ...] [--html FILE]
[--json FILE]`` compares runs with paired significance tests; ``ranklens report SAVED.json
--html FILE`` renders a saved report; ``ranklens explain`` shows why conventions differ;
``ranklens stages LABELS --stage NAME=RUN ...`` measures every stage of a pipeline and says
where the evidence was lost; ``ranklens demo`` runs the offline demo.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..comparison.compare import COMPARE
from ..declared import AT_LEAST_ONE, count, declare
from ..errors import MissingDependencyError, RanklensError
from ..judging.options import JUDGE_OPTIONS
from ..settings import Statistics
from ..text import visible
from .check_labels_cli import add_check_labels_command, cmd_check_labels
from .evaluate_cli import DEFAULT_METRICS, add_scale_args, cmd_evaluate, per_query_argv
from .fusion_cli import add_fuse_command, cmd_fuse, cmd_tune_fusion, named_paths
from .gate_cli import PAIRED_TESTS, add_gate_commands, cmd_gate, cmd_power
from .judge_args import add_judge_args as _add_judge_args
from .judge_args import judge_kwargs as _judge_kwargs
from .labelling_cli import add_judgment_commands, cmd_agreement, cmd_judge, cmd_pool
from .next_steps import next_steps
from .nolabels_cli import NOLABELS_COMMANDS, add_nolabels_commands
from .profiles_cli import (
    add_profile_commands,
    add_target_args,
    cmd_plan,
    cmd_profiles,
    target_request,
)
from .report_cli import emit_report as _emit_report
from .snapshots_cli import add_snapshots_command, cmd_snapshots
from .stages_cli import add_stages_command, cmd_stages
from .sweep_cli import add_sweep_command, cmd_sweep
from .trec_flags import add_trec_eval_flags

EVALUATE_CLI = declare(
    "ranklens evaluate",
    {"max_docs": count(None, AT_LEAST_ONE, "each query's first N documents only", none=True)},
)
"""The flags of ``ranklens evaluate`` that no function of the library takes."""


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
        "ndcg_cut_10, P.5,10, all_trec; as in trec_eval, a bare P, recall or success "
        "means its default cutoffs (default: " + ", ".join(DEFAULT_METRICS) + ")",
    )
    _add_judge_args(ev)
    EVALUATE_CLI.add_argument(
        ev,
        "max_docs",
        "-M",
        dest="max_docs",
        metavar="N",
        help="evaluate each query's first N documents in ranking order only (trec_eval -M)",
    )
    ev.add_argument(
        "--format",
        choices=["table", "json", "trec"],
        default="table",
        help="output format (default: table; trec: trec_eval's lines, in its order)",
    )
    ev.add_argument(
        "-q",
        "--per-query",
        action="store_true",
        help="also print each query's values (table and trec formats)",
    )
    ev.add_argument(
        "--subtopics",
        action="store_true",
        help="QRELS are TREC diversity qrels ('topic subtopic doc judgment', as ndeval reads): "
        "each subtopic is an intent for alpha-nDCG, ERR-IA, NRBP, P-IA, AP-IA and strec",
    )
    add_scale_args(ev)
    add_trec_eval_flags(ev)
    add_target_args(ev)

    ex = sub.add_parser(
        "explain",
        help="one metric under each convention, and why they differ",
        description="Compute one metric under several conventions side by "
        "side and name the switch behind each difference.",
    )
    ex.add_argument("qrels", nargs="?", help="qrels file (default: a built-in tricky example)")
    ex.add_argument("run", nargs="?", help="run file")
    ex.add_argument("--metric", "-m", help="e.g. mrr@10, ndcg@5, map")
    ex.add_argument(
        "--use-case",
        metavar="NAME",
        help="which metrics fit a use case (faq, product-search, research, first-stage, "
        "rag-context) and why, with a worked example",
    )
    ex.add_argument(
        "--conventions",
        default="trec,llamaindex,haystack,autorag",
        help="comma-separated, the first is the baseline",
    )
    JUDGE_OPTIONS.add_argument(ex, "relevance_level", "-l", "--relevance-level", default=1,
                               metavar="LEVEL")  # fmt: skip

    cmp = sub.add_parser(
        "compare",
        help="compare runs with significance tests and write reports",
        description="Evaluate several runs on the same labels, test their differences "
        "(paired, with multiple-comparison correction) and print or save the report.",
    )
    cmp.add_argument("qrels", help="qrels file (TREC, .json, .jsonl) or a dataset folder (BEIR...)")
    cmp.add_argument("runs", nargs="+", metavar="RUN", help="run files; NAME=PATH names one")
    cmp.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="metric name, repeatable (default: " + ", ".join(DEFAULT_METRICS) + ")",
    )
    cmp.add_argument("--baseline", metavar="NAME", help="compare each run with this one")
    cmp.add_argument(
        "--test",
        default="randomization",
        choices=PAIRED_TESTS,
        help="paired test (default: randomization)",
    )
    cmp.add_argument(
        "--correction",
        default="holm",
        choices=["holm", "bonferroni", "bh", "none"],
        help="multiple-comparison correction per metric (default: holm)",
    )
    COMPARE.add_argument(cmp, "alpha", default=0.05, help="significance level (default 0.05)")
    COMPARE.add_argument(
        cmp,
        "n_resamples",
        "--resamples",
        default=10_000,
        metavar="N",
        help="permutations / bootstrap resamples (default: 10000)",
    )
    cmp.add_argument(
        "--ci",
        default="bootstrap",
        choices=["bootstrap", "t", "none"],
        help="confidence interval of each mean (default: bootstrap)",
    )
    COMPARE.add_argument(cmp, "seed", default=0, metavar="N", help="random seed (default: 0)")
    cmp.add_argument(
        "--queries", metavar="FILE", help="query texts for the report (TREC topics, TSV or SGML)"
    )
    _add_judge_args(cmp)
    _add_report_outputs(cmp)
    add_target_args(cmp)

    rep = sub.add_parser(
        "report",
        help="render a saved report",
        description="Render a report saved with compare --json (or Report.save).",
    )
    rep.add_argument("saved", metavar="SAVED.json", help="a saved report")
    _add_report_outputs(rep)

    cmp.add_argument("--mlflow", action="store_true", help="log the report to MLflow")
    cmp.add_argument("--mlflow-experiment", metavar="NAME", help="MLflow experiment")
    add_gate_commands(sub, _add_judge_args)
    add_fuse_command(sub)
    add_judgment_commands(sub)
    add_nolabels_commands(sub)
    _add_judge_args(sub.choices["tune-fusion"])
    add_sweep_command(sub)
    add_profile_commands(sub)
    add_check_labels_command(sub)

    add_snapshots_command(sub)
    add_stages_command(sub)
    demo = sub.add_parser("demo", help="run the offline demo on data the package ships")
    demo.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    demo.add_argument(
        "--out",
        metavar="DIR",
        default="ranklens-demo",
        help="folder for the demo's files: HTML report, judging page (default: ranklens-demo)",
    )
    return parser


def _add_report_outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--html", metavar="FILE", help="write the self-contained HTML report")
    p.add_argument("--json", metavar="FILE", help="save the report as JSON")
    p.add_argument(
        "--format",
        default="table",
        choices=["table", "markdown", "csv", "latex", "json", "none"],
        help="what to print (default: table)",
    )
    p.add_argument(
        "--details",
        action="store_true",
        help="notes with every metric and the queries behind them (default: a line per run)",
    )


def _cmd_compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..comparison import compare
    from ..io import read_dataset
    from ..io.topics import read_topics

    runs = named_paths(args.runs)
    qrels = args.qrels
    queries = None
    if Path(qrels).is_dir():
        qrels = read_dataset(qrels)
    if args.queries:
        queries = read_topics(args.queries)
    checks = target_request(args)
    profile, target_options = checks if checks else (None, {})
    report = compare(
        qrels,
        runs,
        args.metrics or ([] if profile else DEFAULT_METRICS),
        profile=profile,
        target_confidence=target_options.get("confidence", 0.95),
        target_method=target_options.get("method", "auto"),
        baseline=args.baseline,
        stats=Statistics(
            test=args.test,
            correction=args.correction,
            alpha=args.alpha,
            n_resamples=args.resamples,
            ci=None if args.ci == "none" else args.ci,
            seed=args.seed,
        ),
        queries=queries,
        **_judge_kwargs(args),
    )
    if args.mlflow:
        run_id = report.log_mlflow(experiment=args.mlflow_experiment)
        sys.stderr.write(f"logged to MLflow run {run_id}\n")
    return _emit_report(report, args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ranklens`` command."""
    parser = _build_parser()
    argv = per_query_argv(sys.argv[1:] if argv is None else list(argv))
    if not argv:
        sys.stdout.write(next_steps())
        return 0
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "evaluate":
            return cmd_evaluate(args, _judge_kwargs(args))
        if args.command == "explain" and args.use_case:
            from .use_case import explain_use_case

            if args.metric or args.qrels:
                parser.error("explain --use-case takes no metric and no files")
            sys.stdout.write(explain_use_case(args.use_case))
            return 0
        if args.command == "explain":
            from .explain import explain, format_explanation

            if not args.metric:
                parser.error("explain needs --metric METRIC (or --use-case NAME)")
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
        if args.command == "compare":
            return _cmd_compare(args)
        if args.command == "gate":
            return cmd_gate(args, _judge_kwargs(args))
        if args.command == "power":
            return cmd_power(args)
        if args.command == "fuse":
            return cmd_fuse(args)
        if args.command == "tune-fusion":
            return cmd_tune_fusion(args, _judge_kwargs(args))
        if args.command in ("pool", "judge", "agreement"):
            return {"pool": cmd_pool, "judge": cmd_judge, "agreement": cmd_agreement}[args.command](
                args
            )
        if args.command == "sweep":
            return cmd_sweep(args)
        if args.command == "snapshots":
            return cmd_snapshots(args)
        if args.command == "stages":
            return cmd_stages(args)
        if args.command in NOLABELS_COMMANDS:
            return NOLABELS_COMMANDS[args.command](args)
        if args.command == "report":
            from ..comparison import Report

            return _emit_report(Report.load(args.saved), args)
        if args.command == "demo":
            from .demo import run_demo

            return run_demo(outputs=args.out)
        if args.command == "check-labels":
            return cmd_check_labels(args)
        if args.command == "profiles":
            return cmd_profiles(args)
        if args.command == "plan":
            return cmd_plan(args)
    except (RanklensError, MissingDependencyError) as exc:
        sys.stderr.write(f"ranklens: error: {visible(str(exc))}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
