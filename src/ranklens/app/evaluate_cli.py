"""``ranklens evaluate``: the command's scale options (``--memory``, ``--per-query-out``,
``--progress``, ``--ray``) and its body. A runner's log (the JSONL ``cache=`` file
``run_retriever`` writes) is read as the runner's result, so span labels judge every chunk
it recorded with its document and range, as ``ranklens.evaluate(labels, result)`` does."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .profiles_cli import target_request
from .trec_flags import run_argument, trec_eval_request

DEFAULT_METRICS = ["map", "P@10", "recall@100", "ndcg@10", "mrr@10"]


def per_query_argv(argv: list[str]) -> list[str]:
    """``--per-query=FILE`` (a file to write every query's values to) read as
    ``--per-query-out FILE``; ``-q``/``--per-query`` alone stays trec_eval's flag."""
    return [
        f"--per-query-out={a.split('=', 1)[1]}" if a.startswith("--per-query=") else a for a in argv
    ]


def add_scale_args(ev: argparse.ArgumentParser) -> None:
    ev.add_argument(
        "--memory",
        metavar="BYTES",
        help="the memory budget (e.g. 2G, 500M; default about 2 GB): a run file (TREC, "
        ".jsonl, .parquet, or a folder of shard files) too large to judge whole within it is "
        "read in chunks of whole queries; the numbers equal the in-memory evaluation's",
    )
    ev.add_argument(
        "--per-query-out",
        metavar="FILE",
        help="also write every query's values to FILE (.parquet, .csv, .tsv or .jsonl); "
        "--per-query=FILE says the same",
    )
    ev.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on standard error with --memory or --ray (default: on a terminal)",
    )
    ev.add_argument(
        "--ray",
        metavar="ADDRESS",
        nargs="?",
        const="local",
        help="score a folder of run shards on Ray tasks and merge them exactly: the "
        "cluster's address (auto, ray://head:10001), or none for a local Ray",
    )


def cmd_evaluate(args: argparse.Namespace, judge_kwargs: dict[str, Any]) -> int:
    from ..evaluation import Evaluation, evaluate
    from ..evaluation.groups import evaluate_judgment_groups

    wanted = trec_eval_request(args)
    checks = target_request(args)
    metrics: Any = wanted.metrics or ([] if checks else DEFAULT_METRICS)
    if checks:
        from ..comparison.targets import with_profile_metrics

        metrics = with_profile_metrics(metrics, checks[0])
    score: Callable[..., Evaluation] = (
        evaluate_judgment_groups if args.rel_format == "qrels_jg" else evaluate
    )
    if args.memory is not None or args.ray is not None:
        from ..evaluation.options import parse_bytes
        from ..evaluation.stream import DEFAULT_MEMORY, evaluate_file

        budget = DEFAULT_MEMORY if args.memory is None else parse_bytes(args.memory)
        if args.rel_format == "qrels_jg" or args.max_docs is not None or args.run == "-":
            raise InputError(
                "--memory and --ray read a run file by themselves: not with -R qrels_jg, -M or -"
            )
        ray = None
        if args.ray is not None:
            ray = {} if args.ray == "local" else {"address": args.ray}

        def score(q: Any, r: Any, m: Any, **kw: Any) -> Evaluation:
            backend = "local" if ray is None else "ray"
            return evaluate_file(q, r, m, memory=budget, progress=args.progress,
                                 backend=backend, ray=ray, **kw)  # fmt: skip

    qrels: Any = args.qrels
    if args.subtopics:
        from ..io import read_qrels

        qrels = read_qrels(args.qrels, subtopics=True)
    with run_argument(args.run) as run_path:
        run: Any = run_path
        if args.memory is None and args.ray is None and args.max_docs is None:
            run = runner_log(run_path) or run_path
        if args.max_docs is not None:
            from ..io import read_run

            run = read_run(run_path).top(args.max_docs)
        ev = score(
            qrels,
            run,
            metrics,
            trec_eval_version=args.trec_version,
            **judge_kwargs,
            **({"judged_only": True} if args.judged_only else {}),
        )
    if checks:
        from ..comparison.targets import check_evaluation

        check_evaluation(ev, qrels, checks[0], **checks[1], **judge_kwargs)
    if args.per_query_out:
        from ..evaluation.per_query import write_per_query

        write_per_query(ev, args.per_query_out)
    if args.format == "json":
        sys.stdout.write(json.dumps(ev.to_dict(), indent=2) + "\n")
    elif args.format == "trec":
        sys.stdout.write(wanted.text(ev, args))
        sys.stderr.write(ev.targets_text())  # trec_eval's lines stay alone on stdout
    else:
        sys.stdout.write(ev.to_table(per_query=args.per_query))
    return 0


def runner_log(path: str) -> Any:
    """A runner's log at ``path`` as the runner's result (every chunk it recorded kept),
    else None: the file is read as any other run file."""
    from pathlib import Path

    from ..io.jsonl import is_run_log

    p = Path(path)
    if not p.is_file() or not is_run_log(p):
        return None
    from ..capture.log import read_log
    from ..capture.result import RunResult

    header, records, _, _ = read_log(p)
    config = header.get("config") or {}
    retriever = config.get("retriever") or {}
    name = retriever.get("name") if isinstance(retriever, dict) else None
    return RunResult(list(records.values()), str(name or p.name.split(".")[0]), config)
