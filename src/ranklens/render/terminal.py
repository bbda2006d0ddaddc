"""The terminal table, drawn with rich when it is installed (plain text otherwise). Every
user text reaches rich as a ``Text`` (never read as markup) made
:func:`~ranklens.escape.terminal` (ESC sequences and bidi controls shown as escapes)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from ..comparison import Report
from ..comparison.report import PRINT, TO_TEXT
from ..declared import declare, flag
from ..escape import terminal
from .notes import has_details, report_notes
from .table_cells import cells, fmt, fmt_p, superscript
from .tables import REPORT

if TYPE_CHECKING:
    from rich.table import Table

COMPARISONS = flag(True, "the table of paired comparisons too")
TEXT = declare("Report.render('text')", {"report": REPORT, **TO_TEXT.options,
                                          "comparisons": COMPARISONS})  # fmt: skip
PRINTED = declare("Report.render('print')", {"report": REPORT, **PRINT.options,
                                             "comparisons": COMPARISONS})  # fmt: skip
RICH = declare("Report.render('rich')", {"report": REPORT, "digits": TO_TEXT["digits"],
                                         "details": TO_TEXT["details"]})  # fmt: skip


@RICH.checks
def rich_table(report: Report, digits: int = 4, details: bool = False) -> Table:
    """A ``rich.table.Table``: best value bold, superscript letters for significance, and
    the notes below it, a line each (``details``: every metric and the queries behind
    them)."""
    from rich.table import Table
    from rich.text import Text

    cs = cells(report, digits)
    cells_short = cells(report, max(digits - 1, 2))
    multi = len(report.runs) > 1
    title = report.metadata.get("dataset") or None
    lines = report_notes(report, details)
    if not details and has_details(report):
        lines.append("(details: to_text(details=True), or --details on the command line)")
    caption = "\n".join(terminal(line) for line in lines)
    table = Table(
        title=Text(terminal(title)) if title else None,  # Text: never read as markup
        caption=Text(caption),
        caption_justify="left",
    )
    if multi:
        table.add_column("", style="dim")
    table.add_column("run", style="bold", no_wrap=True)
    for m in report.metrics:
        table.add_column(Text(terminal(m)), justify="right", no_wrap=True)
    for r in report.runs:
        row = ([Text(f"({report.letter(r)})")] if multi else []) + [Text(terminal(r))]
        for m in report.metrics:
            c = cs[r][m]
            t = Text(c.value, style="bold green" if c.best else "")
            if c.beats:
                t.append(superscript(c.beats), style="cyan")
            if c.interval:
                t.append("\n" + cells_short[r][m].interval, style="dim")
            row.append(t)
        table.add_row(*row)
    return table


def comparisons_table(report: Report, digits: int = 4) -> Table:
    """The paired comparisons as a ``rich.table.Table`` (significant rows bold)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="paired comparisons")
    for h in ("metric", "run", "vs", "diff", "p", "p (adj.)", "effect", "W/T/L"):
        table.add_column(h, justify="left" if h in ("metric", "run", "vs") else "right")
    for c in report.comparisons:
        style = "bold" if c.significant else "dim"
        table.add_row(
            Text(terminal(c.metric)),
            Text(terminal(c.run)),
            Text(terminal(c.other)),
            f"{c.diff:+.{digits}f}",
            fmt_p(c.pvalue),
            fmt_p(c.pvalue_adjusted) + (" *" if c.significant else ""),
            fmt(c.effect_size, 2),
            f"{c.wins}/{c.ties}/{c.losses}",
            style=style,
        )
    return table


@TEXT.checks
def to_text(
    report: Report,
    digits: int = 4,
    color: bool = False,
    comparisons: bool = True,
    details: bool = False,
) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=color,
        width=max(100, 17 * len(report.metrics) + max(map(len, report.runs)) + 14),
        color_system="standard" if color else None,
    )
    console.print(rich_table(report, digits, details))
    if comparisons and report.comparisons:
        console.print(comparisons_table(report, digits))
    return buf.getvalue()


@PRINTED.checks
def print_report(
    report: Report, digits: int = 4, comparisons: bool = True, details: bool = False
) -> None:
    from rich.console import Console

    console = Console()
    console.print(rich_table(report, digits, details))
    if comparisons and report.comparisons:
        console.print(comparisons_table(report, digits))
