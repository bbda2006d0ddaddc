"""The judging options every scoring command shares (``evaluate``, ``compare``, ``gate``,
``tune-fusion``): the relevance level, missing queries, duplicates, ties, the convention
and document versions (:mod:`.freshness_cli`), and the keywords they give ``judge``."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from ..judging.options import JUDGE_OPTIONS
from .freshness_cli import add_freshness_args, freshness_kwargs


def add_judge_args(p: argparse.ArgumentParser) -> None:
    JUDGE_OPTIONS.add_argument(
        p,
        "relevance_level",
        "-l",
        "--relevance-level",
        default=1,
        metavar="LEVEL",
        help="smallest grade that counts as relevant for binary measures (trec_eval -l; default 1)",
    )
    p.add_argument(
        "--skip-missing",
        action="store_true",
        help="leave out labelled queries absent from the run (default: score "
        "them 0, as trec_eval -c)",
    )
    p.add_argument(
        "-c",
        dest="complete",
        action="store_true",
        help="accepted as trec_eval's -c: labelled queries absent from the run are scored 0, "
        "which is already the default",
    )
    p.add_argument(
        "--duplicates",
        choices=["error", "first", "redundant", "count"],
        help="a document twice in one query: error (trec default), keep the first, keep it "
        "but never credit it again, or count it again",
    )
    p.add_argument(
        "--ties",
        choices=["trec", "input", "expected", "best", "worst"],
        default="trec",
        help="documents with equal scores: by id descending (trec_eval), in the file's "
        "order, each metric's expected value over every order (McSherry & Najork), or "
        "the order most (best) or least (worst) favourable to the run",
    )
    p.add_argument(
        "--convention",
        default="trec",
        metavar="NAME",
        help="trec (default), llamaindex, haystack, autorag or chroma (span labels): reproduce "
        "that tool's numbers",
    )
    add_freshness_args(p)


def judge_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    if args.complete and args.skip_missing:
        raise InputError("-c scores missing queries 0 and --skip-missing leaves them out: pick one")
    return {
        "relevance_level": args.relevance_level,
        "convention": args.convention,
        **({"ties": args.ties} if args.ties != "trec" else {}),
        **({"missing": "skip"} if args.skip_missing else {}),
        **({"duplicates": args.duplicates} if args.duplicates else {}),
        **freshness_kwargs(args),
    }
