"""Table renderers of a report: pandas, Markdown, CSV and LaTeX (booktabs)."""

from __future__ import annotations

import csv
import io
import math
from typing import TYPE_CHECKING, Any

from ..comparison import Report
from ..comparison.report import TO_CSV, TO_LATEX, TO_MARKDOWN, TO_PANDAS
from ..declared import data, declare
from ..errors import InputError, require
from ..escape import csv_cell, latex, markdown
from .notes import notes as report_note_list
from .table_cells import cells, fmt, fmt_p, legend

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("summary", "per_query", "comparisons")

REPORT = data("the report (a copy with every string made visible, but for pandas)")
"""The report a renderer is given (its options declared as the ``Report`` method's)."""
MARKDOWN = declare("Report.render('markdown')", {"report": REPORT, **TO_MARKDOWN.options})
CSV = declare("Report.render('csv')", {"report": REPORT, "kind": TO_CSV["kind"]})
LATEX = declare("Report.render('latex')", {"report": REPORT, **TO_LATEX.options})
PANDAS = declare("Report.render('pandas')", {"report": REPORT, **TO_PANDAS.options})


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


def records(report: Report, kind: str = "summary") -> tuple[list[str], list[list[object]]]:
    """Header and rows of one of the long tables (``summary``, ``per_query``,
    ``comparisons``), shared by CSV and pandas."""
    _check_kind(kind)
    if kind == "summary":
        header = ["run", "metric", "value", "ci_low", "ci_high", "n"]
        if report.baseline:
            header += ["diff_vs_baseline", "pvalue", "pvalue_adjusted", "significant"]
        rows: list[list[object]] = []
        for r in report.runs:
            for m in report.metrics:
                s = report.summary[r][m]
                row = [r, m, s["value"], s["ci_low"], s["ci_high"], s["n"]]
                if report.baseline:
                    c = report.comparison(r, report.baseline, m)
                    row += (
                        [c.diff, c.pvalue, c.pvalue_adjusted, c.significant]
                        if c
                        else [math.nan, math.nan, math.nan, None]
                    )
                rows.append(row)
        return header, rows
    if kind == "per_query":
        header = ["query_id", "run", *report.metrics]
        if report.queries:
            header.insert(1, "query")
        rows = []
        for i, q in enumerate(report.query_ids):
            for r in report.runs:
                vals = [float(report.per_query[r][m][i]) for m in report.metrics]
                lead = [q, report.queries.get(q, "")] if report.queries else [q]
                rows.append([*lead, r, *vals])
        return header, rows
    header = [
        "metric",
        "run",
        "other",
        "diff",
        "pvalue",
        "pvalue_adjusted",
        "significant",
        "effect_size",
        "wins",
        "ties",
        "losses",
        "n",
    ]
    rows = [
        [
            c.metric,
            c.run,
            c.other,
            c.diff,
            c.pvalue,
            c.pvalue_adjusted,
            c.significant,
            c.effect_size,
            c.wins,
            c.ties,
            c.losses,
            c.n,
        ]
        for c in report.comparisons
    ]
    return header, rows


@PANDAS.checks
def to_pandas(report: Report, kind: str = "summary") -> pd.DataFrame:
    """One of the long tables (:func:`records`) as a DataFrame (needs ``ranklens[pandas]``)."""
    pandas: Any = require("pandas", "pandas", "Report.to_pandas()")

    header, rows = records(report, kind)
    frame: pd.DataFrame = pandas.DataFrame(rows, columns=header)
    return frame


@CSV.checks
def to_csv(report: Report, kind: str = "summary") -> str:
    header, rows = records(report, kind)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(h) for h in header])
    w.writerows([[csv_cell(x) for x in row] for row in rows])
    return buf.getvalue()


@MARKDOWN.checks
def to_markdown(report: Report, digits: int = 4, details: bool = False) -> str:
    """Runs as rows, metrics as columns; the best value of each column in bold and
    superscript letters for the runs a value is significantly better than; the notes a
    paragraph each with a bullet per run (``details``: every metric and query)."""
    cs = cells(report, digits)
    multi = len(report.runs) > 1
    header = (["", "run"] if multi else ["run"]) + [markdown(m) for m in report.metrics]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for r in report.runs:
        row = ([f"({report.letter(r)})"] if multi else []) + [markdown(r)]
        for m in report.metrics:
            c = cs[r][m]
            v = f"**{c.value}**" if c.best else c.value
            if c.beats:
                v += f"<sup>{c.beats}</sup>"
            if c.interval:
                v += f" <small>{c.interval}</small>"
            row.append(v)
        lines.append("| " + " | ".join(row) + " |")
    out = "\n".join(lines) + "\n"
    for note in report_note_list(report):  # a paragraph each, a bullet per run
        out += "\n" + markdown(note.head) + "\n"
        body = note.details if details and note.details else note.runs
        if body:
            out += "\n" + "".join(f"- {markdown(r)}\n" for r in body)
    if report.comparisons:
        out += "\n" + comparisons_markdown(report, digits)
    return out


def comparisons_markdown(report: Report, digits: int = 4) -> str:
    lines = [
        "| metric | run | vs | diff | p | p (adj.) | effect size | W/T/L |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in report.comparisons:
        sig = " *" if c.significant else ""
        lines.append(
            f"| {markdown(c.metric)} | {markdown(c.run)} | {markdown(c.other)} | "
            f"{c.diff:+.{digits}f} | {fmt_p(c.pvalue)} | {fmt_p(c.pvalue_adjusted)}{sig} | "
            f"{fmt(c.effect_size, 2)} | {c.wins}/{c.ties}/{c.losses} |"
        )
    return "\n".join(lines) + "\n"


@LATEX.checks
def to_latex(report: Report, digits: int = 4, caption: str | None = None) -> str:
    """A booktabs table (``\\usepackage{booktabs}``): best values in bold, superscript
    letters for significance, the legend as a table note."""
    cs = cells(report, digits)
    multi = len(report.runs) > 1
    ncols = len(report.metrics)
    spec = ("l" if multi else "") + "l" + "r" * ncols
    lines = [r"\begin{table}[t]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{latex(caption)}}}")
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    head = ([""] if multi else []) + ["Run"] + [latex(m) for m in report.metrics]
    lines.append(" & ".join(head) + r" \\")
    lines.append(r"\midrule")
    for r in report.runs:
        row = ([f"({report.letter(r)})"] if multi else []) + [latex(r)]
        for m in report.metrics:
            c = cs[r][m]
            v = rf"\textbf{{{c.value}}}" if c.best else c.value
            if c.beats:
                v += rf"$^{{\mathrm{{{c.beats}}}}}$"
            row.append(v)
        lines.append(" & ".join(row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    note = legend(report)
    if note:
        lines.append(rf"\par\smallskip{{\footnotesize {latex(note)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
