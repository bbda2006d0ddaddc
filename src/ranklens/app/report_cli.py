"""How a command prints and saves a :class:`~ranklens.Report` (``ranklens compare``,
``ranklens report``): the output options and their rendering."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_report_outputs(p: argparse.ArgumentParser) -> None:
    """The options of a command that prints and saves a report: ``--html``, ``--json``,
    ``--format``, ``--details``."""
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


def emit_report(report: Any, args: argparse.Namespace) -> int:
    """Save and print ``report`` as the options of :func:`add_report_outputs` ask."""
    if args.json:
        report.save(args.json)
    if args.html:
        report.to_html(args.html)
    details = bool(getattr(args, "details", False))
    if args.format == "table":
        report.print(details=details)
    elif args.format == "markdown":
        sys.stdout.write(report.to_markdown(details=details))
    elif args.format == "csv":
        sys.stdout.write(report.to_csv())
    elif args.format == "latex":
        sys.stdout.write(report.to_latex())
    elif args.format == "json":
        sys.stdout.write(report.to_json() + "\n")
    for label, path in (("HTML report", args.html), ("JSON report", args.json)):
        if path:
            sys.stderr.write(f"{label} written to {path}\n")
    return 0
