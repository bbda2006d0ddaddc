"""``ranklens check-labels``: span labels checked against a corpus and, when their old text
is known, relocated in it (:func:`ranklens.reanchor`); exits 1 when spans are lost, so it
can gate CI.

The span labels file is JSONL, one span per line: ``{"query_id", "doc_id", "start", "end",
"grade", "group", "text"}`` (``text``, the quoted evidence, optional: without it and
without ``--old-corpus`` only the offsets are checked). :func:`read_span_records` is the
one place that reads it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..declared import NONNEGATIVE, Range, count, declare, number
from ..errors import InputError

CHECK_LABELS = declare("ranklens check-labels", {
    "min_quality": number(0.9, Range(0, 1, "right"), "least quality of a fuzzy match, "
                          "1 - edits / length"),
    "limit": count(50, NONNEGATIVE, "changed spans listed in the table (0: all)"),
})  # fmt: skip


def add_check_labels_command(sub: Any) -> None:
    p = sub.add_parser(
        "check-labels",
        help="check span labels against a corpus and relocate them after edits",
        description="Check evidence spans (JSONL: query_id, doc_id, start, end, grade, group, "
        "text) against CORPUS: offsets within the documents, the quoted text still there. "
        "With the old corpus (or the spans' own text), each span is found again where the "
        "documents changed: unchanged, moved, normalised (whitespace, case, Unicode), fuzzy "
        "(with its quality), ambiguous or lost. Exits 1 when spans are lost or left out.",
    )
    p.add_argument("labels", metavar="LABELS", help="span labels, a JSONL file")
    p.add_argument(
        "corpus",
        metavar="CORPUS",
        help="the documents now: a corpus.jsonl ({'_id' or 'doc_id', 'text'}) or a dataset "
        "folder (BEIR...)",
    )
    p.add_argument(
        "--old-corpus",
        metavar="OLD",
        help="the documents the labels were made on (their text and context locate each span)",
    )
    p.add_argument("--write", metavar="NEW_LABELS", help="write the relocated labels (JSONL)")
    CHECK_LABELS.add_argument(
        p,
        "min_quality",
        default=0.9,
        metavar="Q",
        help="least quality of a fuzzy match, 1 - edits / length (default 0.9)",
    )
    p.add_argument(
        "--keep",
        choices=["fuzzy", "exact"],
        default="fuzzy",
        help="whether fuzzy matches go into the new labels (default: fuzzy, they do)",
    )
    p.add_argument(
        "--ambiguous",
        choices=["report", "nearest", "first"],
        default="report",
        help="a span that fits several places equally: leave it out and report it (default), "
        "or take the place nearest where it was, or the first",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when any span is not unchanged (the labels no longer match the corpus "
        "as they are), not only when spans are lost",
    )
    p.add_argument("--format", choices=["table", "json", "markdown"], default="table")
    CHECK_LABELS.add_argument(
        p,
        "limit",
        default=50,
        metavar="N",
        help="changed spans listed in the table (default 50; 0: all)",
    )


def read_span_records(path: str | Path) -> list[dict[str, Any]]:
    """The span records of a JSONL file; a line without ``query_id``, ``doc_id``,
    ``start`` or ``end`` is an error naming it."""
    from ..io.records import json_records

    p = Path(path)
    if not p.exists():
        raise InputError(f"span labels: {p} does not exist")
    out = []
    for lineno, rec in json_records(p):
        missing = [k for k in ("query_id", "doc_id", "start", "end") if rec.get(k) is None]
        if missing:
            raise InputError(
                f"{p}:{lineno}: a span needs {', '.join(map(repr, missing))} (fields: "
                "query_id, doc_id, start, end, grade, group, text)"
            )
        out.append(rec)
    if not out:
        raise InputError(f"{p}: no spans")
    return out


def write_span_records(labels: Any, path: str | Path) -> None:
    """``labels`` (:class:`~ranklens.SpanLabels`) as JSONL span records, with each span's
    text when the labels carry the documents."""
    with Path(path).open("w", encoding="utf-8") as f:
        for rec in labels.span_records():
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def cmd_check_labels(args: argparse.Namespace) -> int:
    from ..judging.reanchor import reanchor

    records = read_span_records(args.labels)
    result = reanchor(
        records,
        args.corpus,
        old_corpus=args.old_corpus,
        min_quality=args.min_quality,
        keep=args.keep,
        ambiguous=args.ambiguous,
    )
    if args.format == "json":
        sys.stdout.write(result.to_json(indent=1) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(result.to_markdown())
    else:
        sys.stdout.write(result.to_text(limit=args.limit or None) + "\n")
    if result.counts["unverified"]:
        sys.stderr.write(
            f"{result.counts['unverified']} span(s) carry no text and no --old-corpus was "
            "given: only their offsets were checked\n"
        )
    if args.write:
        write_span_records(result.labels, args.write)
        sys.stderr.write(f"{result.kept} spans written to {args.write}\n")
    if args.strict:
        return 1 if result.changed else 0
    return 0 if result.ok else 1
