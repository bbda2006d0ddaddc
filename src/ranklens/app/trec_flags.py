"""trec_eval's command-line flags on ``ranklens evaluate``: ``-J``, ``-N``, ``-n``, ``-o``,
``-R``, ``-Z``, ``--trec-version``, a run read from standard input (``-``), and the
string measures ``runid`` and ``relstring``, so a trec_eval command line runs unchanged
with ``--format trec``."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..declared import NONNEGATIVE, count, declare
from ..errors import InputError
from ..metrics import TREC_NICKNAMES, Metric, expand_metric_names, parse_metric, trec_nickname
from .trec_output import read_zscores, trec_eval_text

REL_INFO_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


TREC_FLAGS = declare(
    "ranklens evaluate (trec_eval's flags)",
    {"docs": count(None, NONNEGATIVE, "documents in the collection, for utility", none=True)},
)


def add_trec_eval_flags(p: argparse.ArgumentParser) -> None:
    """trec_eval's remaining flags, with its letters."""
    p.add_argument(
        "-J",
        "--judged-only",
        action="store_true",
        help="drop unjudged documents from each ranking before any measure (trec_eval -J; "
        "condensed lists)",
    )
    TREC_FLAGS.add_argument(
        p,
        "docs",
        "-N",
        "--docs",
        metavar="N",
        help="number of documents in the collection, for utility (trec_eval -N)",
    )
    p.add_argument(
        "-n",
        "--no-summary",
        action="store_true",
        help="print no summary line (trec_eval -n; with --format trec)",
    )
    p.add_argument(
        "-o", dest="old_format", action="store_true", help="accepted; obsolete in trec_eval too"
    )
    p.add_argument(
        "-R",
        dest="rel_format",
        default="qrels",
        metavar="FORMAT",
        help="relevance file format: qrels (default) or qrels_jg (qid jg docno rel: every "
        "measure averaged over the judgment groups of each query, as trec_eval's *_avgjg); "
        "trec_eval's prefs and qrels_prefs are refused by name",
    )
    p.add_argument(
        "-Z",
        dest="zscores",
        metavar="FILE",
        help="print z-scores against FILE's per-query means and deviations (trec_eval -Z; "
        "with --format trec)",
    )
    p.add_argument(
        "--trec-version",
        default="10",
        choices=["9", "10"],
        help="10 (default) or 9: trec_eval 9.0.8's float32 scores and recall cutoffs, as "
        "pytrec_eval computes",
    )


@contextlib.contextmanager
def run_argument(path: str) -> Iterator[str]:
    """The run file's path; ``-`` reads the run from standard input (trec_eval's rule),
    through a temporary file removed afterwards."""
    if path != "-":
        yield path
        return
    fd, tmp = tempfile.mkstemp(prefix="ranklens-stdin-", suffix=".run")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out)
        yield tmp
    finally:
        os.unlink(tmp)


@dataclass
class TrecRequest:
    """What ``-m`` asked for: the metrics to compute, and the string measures to print."""

    metrics: list[str | Metric] = field(default_factory=list)
    runid: bool = False
    relstring: int | None = None
    relstring_label: str = "relstring"

    def text(self, ev: Any, args: argparse.Namespace) -> str:
        zscores = read_zscores(args.zscores) if args.zscores else None
        return trec_eval_text(
            ev,
            per_query=args.per_query,
            summary=not args.no_summary,
            runid=self.runid,
            relstring=self.relstring if args.per_query else None,
            relstring_label=self.relstring_label,
            zscores=zscores,
        )


def trec_eval_request(args: argparse.Namespace) -> TrecRequest:
    """Read ``-m`` as trec_eval does (nicknames, ``runid``, ``relstring.N``, a bare ``P``
    meaning its default cutoffs) and check the trec_eval flags."""
    if args.rel_format not in REL_INFO_FORMATS:
        raise InputError(f"-R {args.rel_format}: the formats are {', '.join(REL_INFO_FORMATS)}")
    if args.rel_format in ("prefs", "qrels_prefs"):
        raise InputError(
            f"-R {args.rel_format}: trec_eval's preference formats and measures are not "
            "implemented in ranklens; give qrels or qrels_jg"
        )
    if args.rel_format == "qrels_jg" and args.subtopics:
        raise InputError("-R qrels_jg and --subtopics both name the second column: pick one")
    if args.format != "trec" and (args.zscores or args.no_summary):
        raise InputError("-Z and -n change trec_eval's output: add --format trec")
    names = args.metrics or (["official"] if args.format == "trec" else [])
    req = TrecRequest()
    kept: list[str] = []
    for name in names:
        low = name.strip().lower()
        head, _, tail = name.strip().partition(".")
        if low in TREC_NICKNAMES:
            measures = trec_nickname(low)
            req.runid |= "runid" in measures
            if "relstring" in measures and req.relstring is None:
                req.relstring = 10
        if low == "runid":
            req.runid = True
            continue
        if head.lower() == "relstring" and args.rel_format == "qrels_jg":
            raise InputError("-m relstring shows one set of judgments: not with -R qrels_jg")
        if head.lower() == "relstring":
            req.relstring = _relstring_depth(tail, name)
            req.relstring_label = f"relstring_{tail.strip()}" if tail.strip() else "relstring"
            continue
        kept.append(name)
    metrics = expand_metric_names(kept, trec_bare=True) if kept else []
    if args.docs is not None:
        if args.docs < 0:
            raise InputError(f"-N {args.docs}: the collection size must be >= 0")
        metrics = [_with_docs(m, args.docs) for m in metrics]
    req.metrics = metrics
    return req


def _relstring_depth(tail: str, name: str) -> int:
    if not tail.strip():
        return 10
    try:
        n = int(float(tail))
    except ValueError:
        n = -1
    if n < 0:
        raise InputError(f"-m {name}: relstring takes a number of documents, e.g. relstring.20")
    return n


def _with_docs(name: str | Metric, docs: int) -> str | Metric:
    """``utility`` with trec_eval's ``-N`` collection size."""
    mt = parse_metric(name)
    return mt.with_params(docs=docs) if mt.family == "utility" else name
