"""What ``ranklens compare`` and ``ranklens report`` print and write: a report in the
format asked for, and the files named by ``--html`` and ``--json``."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def emit_report(report: Any, args: argparse.Namespace) -> int:
    """Print ``report`` as ``--format`` says and write the files ``--json``/``--html`` name."""
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
