"""``ranklens check``: leakage and label-quality findings of a labelled set
(:func:`ranklens.check_dataset`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .fusion_cli import named_paths


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
    p.add_argument("--split", default="test", help="a BEIR folder's split (default: test)")
    p.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="another split to find contamination with (repeatable); for a BEIR "
        "folder, NAME alone names its own split",
    )
    p.add_argument(
        "--containment",
        type=float,
        default=0.8,
        help="share of a query's word bigrams in a passage that counts as contained (default 0.8)",
    )
    p.add_argument("--near", type=float, default=0.9, help="near-duplicate Jaccard (default 0.9)")
    p.add_argument("--json", metavar="FILE", help="write the findings as JSON")
    p.add_argument("--strict", action="store_true", help="exit 1 when anything is found")


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
