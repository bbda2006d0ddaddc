"""``ranklens check``: leakage and label-quality findings of a labelled set
(:func:`ranklens.check_dataset`).

Exit codes: 0 when the report is printed, findings or not (it is a report: a generated
test set has its copies by construction, and ``synthesize && check`` reads them); with
``--strict``, 1 when anything is found (for CI; unlabelled queries are counted, never a
finding, so they never fail it); 2 on bad input (a bad flag value, a file that cannot be
read, a query without text)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..declared import declare, flag, text
from ..synthesis.check import CHECK_DATASET
from .fusion_cli import named_paths

CHECK_CLI = declare(
    "ranklens check",
    {
        "split": text("test", "a BEIR folder's split"),
        "containment": CHECK_DATASET["containment"],
        "near": CHECK_DATASET["near"],
        "strict": flag(False, "exit 1 when anything is found (for CI; else 0 with the report)"),
    },
)


def add_check_command(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="leakage and label checks of a labelled set",
        description="Queries contained in their relevant passage or elsewhere in the corpus, "
        "duplicate queries (and across splits), labels pointing at missing documents, "
        "queries with no relevant label: one report, each finding naming its queries.",
    )
    p.add_argument("dataset", metavar="DATASET", help="a dataset folder (BEIR...) or file")
    p.add_argument("--corpus", metavar="CORPUS", help="the documents (default: the dataset's)")
    CHECK_CLI.add_argument(p, "split", default="test")
    p.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="another split to find contamination with (repeatable); for a BEIR "
        "folder, NAME alone names its own split",
    )
    CHECK_CLI.add_argument(p, "containment", default=0.8)
    CHECK_CLI.add_argument(p, "near", default=0.9)
    p.add_argument("--json", metavar="FILE", help="write the findings as JSON")
    CHECK_CLI.add_argument(p, "strict", action="store_true")


def _read(path: str, split: str) -> tuple[Any, Any]:
    """The dataset, and its corpus file when a BEIR folder (read apart, so labels pointing
    at missing documents are reported instead of refused)."""
    from ..io import read_dataset
    from ..io.beir import read_beir

    p = Path(path)
    if p.is_dir() and (p / "qrels").is_dir() and (p / "queries.jsonl").exists():
        corpus = p / "corpus.jsonl"
        return read_beir(p, split, corpus=False), corpus if corpus.exists() else None
    return read_dataset(p), None


def cmd_check(args: argparse.Namespace) -> int:
    from ..synthesis import check_dataset

    dataset, corpus = _read(args.dataset, args.split)
    against: dict[str, Any] = {}
    for spec in args.against:
        if "=" in spec:
            against.update(named_paths([spec]))
        else:
            against[spec] = _read(args.dataset, spec)[0]
    result = check_dataset(
        dataset,
        args.corpus or corpus,
        against=against,
        containment=args.containment,
        near=args.near,
    )
    sys.stdout.write(str(result) + "\n")
    if args.json:
        Path(args.json).write_text(result.to_json(indent=1), encoding="utf-8")
    return 1 if args.strict and result.findings else 0
