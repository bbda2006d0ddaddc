"""``ranklens snapshots``: one labelled set against several snapshots of a changing corpus
(:func:`ranklens.compare_snapshots`) from the command line.

``ranklens snapshots QRELS --snapshot 2025-01 bm25=a/bm25.txt dense=a/dense.txt
--snapshot 2025-06 bm25=b/bm25.txt dense=b/dense.txt [--corpus 2025-01=a/corpus.jsonl
--corpus 2025-06=b/corpus.jsonl] -m ndcg@10 [--format table|markdown|json] [--json FILE]``:
each snapshot's metrics per system, whether the systems' ranking holds between snapshots
(Kendall's tau with its bootstrap interval), and, with the corpora, the labels whose
document changed or went away. Snapshots are given in time order; the judging options
(``--versions``, ``--relevance-level``, ``--convention``...) are those of ``compare``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..declared import STATISTICS, declare
from ..declared import path as path_option
from ..errors import InputError
from .fusion_cli import named_paths
from .judge_args import add_judge_args, judge_kwargs

SNAPSHOTS_CLI = declare("ranklens snapshots", {
    **{k: STATISTICS[k] for k in ("confidence", "n_resamples", "seed")},
    "json": path_option(None, "save the result as JSON to this file", none=True),
})  # fmt: skip


def add_snapshots_command(sub: Any) -> None:
    p = sub.add_parser(
        "snapshots",
        help="one labelled set on several corpus snapshots: does the systems' ranking hold?",
        description="Evaluate the same labels against each snapshot's runs and report, beside "
        "each system's metrics, whether the ranking of the systems holds between snapshots "
        "(Kendall's tau with its interval) and which labels point at documents that changed "
        "(with --corpus). docs/freshness.md",
    )
    p.add_argument("qrels", help="the labels (qrels file, or a BEIR dataset folder)")
    p.add_argument(
        "--snapshot",
        action="append",
        nargs="+",
        required=True,
        metavar="NAME SYSTEM=RUN",
        help="a snapshot's name, then its systems' run files as SYSTEM=RUN (the same systems "
        "in every snapshot); repeat for each snapshot, oldest first",
    )
    p.add_argument(
        "--corpus",
        action="append",
        default=[],
        metavar="SNAPSHOT=FILE",
        help="a snapshot's documents (BEIR corpus.jsonl or dataset folder), to list the labels "
        "whose document changed between snapshots; repeat for each snapshot",
    )
    p.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="metrics (default: ndcg@10, recall@100, mrr@10)",
    )
    SNAPSHOTS_CLI.add_argument(p, "confidence", default=0.95)
    SNAPSHOTS_CLI.add_argument(p, "n_resamples", "--resamples", default=10_000)
    SNAPSHOTS_CLI.add_argument(p, "seed", default=0)
    p.add_argument(
        "--format",
        default="table",
        choices=["table", "markdown", "json", "none"],
        help="what to print (default: table)",
    )
    SNAPSHOTS_CLI.add_argument(p, "json", metavar="FILE")
    add_judge_args(p)


def snapshot_runs(items: list[list[str]]) -> dict[str, dict[str, str]]:
    """``{snapshot: {system: path}}`` from the ``--snapshot NAME SYSTEM=RUN ...`` groups; a
    snapshot without runs, a name given twice or a run file that does not exist is an
    error naming it."""
    out: dict[str, dict[str, str]] = {}
    for group in items:
        name, *runs = group
        if "=" in name:
            raise InputError(
                f"--snapshot {' '.join(group)}: start with the snapshot's name, then "
                "SYSTEM=RUN for each system (--snapshot 2025-06 bm25=bm25.txt dense=dense.txt)"
            )
        if name in out:
            raise InputError(f"--snapshot {name!r} is given twice: name each snapshot once")
        if not runs:
            raise InputError(
                f"--snapshot {name}: no runs; give SYSTEM=RUN for each system after the name"
            )
        paths = named_paths(runs)
        for system, path in paths.items():
            if not Path(path).exists():
                raise InputError(f"--snapshot {name}: {system}'s run {path!r} does not exist")
        out[name] = paths
    if len(out) < 2:
        raise InputError("ranklens snapshots needs two or more --snapshot groups, oldest first")
    return out


def snapshot_corpora(items: list[str], names: list[str]) -> dict[str, Any] | None:
    """``{snapshot: documents}`` from ``--corpus SNAPSHOT=FILE`` (None without any)."""
    if not items:
        return None
    from ..io import read_dataset
    from ..io.beir import read_corpus

    out: dict[str, Any] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--corpus {item!r}: give SNAPSHOT=FILE")
        if name not in names:
            raise InputError(
                f"--corpus {item!r}: no snapshot is named {name!r} (snapshots: {', '.join(names)})"
            )
        if name in out:
            raise InputError(f"--corpus {name}=... is given twice: give each snapshot's once")
        p = Path(path)
        if not p.exists():
            raise InputError(f"--corpus {item!r}: {path} does not exist")
        out[name] = read_dataset(p) if p.is_dir() else read_corpus(p)
    return out


def cmd_snapshots(args: argparse.Namespace) -> int:
    from ..comparison.snapshots import compare_snapshots
    from ..io import read_dataset
    from ..settings import Statistics

    if args.json and not Path(args.json).parent.is_dir():  # before the work, not after
        raise InputError(f"ranklens snapshots --json: the folder of {args.json!r} does not exist")
    snapshots = snapshot_runs(args.snapshot)
    corpora = snapshot_corpora(args.corpus, list(snapshots))
    labels: Any = read_dataset(args.qrels) if Path(args.qrels).is_dir() else args.qrels
    result = compare_snapshots(
        labels,
        snapshots,
        args.metrics or ("ndcg@10", "recall@100", "mrr@10"),
        corpora=corpora,
        stats=Statistics(confidence=args.confidence, n_resamples=args.resamples, seed=args.seed),
        **judge_kwargs(args),
    )
    if args.json:
        result.save(args.json)
    if args.format == "table":
        sys.stdout.write(result.to_text().rstrip("\n") + "\n")
    elif args.format == "markdown":
        sys.stdout.write(result.to_markdown().rstrip("\n") + "\n")
    elif args.format == "json":
        sys.stdout.write(result.to_json(indent=1) + "\n")
    return 0
