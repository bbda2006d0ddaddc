"""The HTML report's per-query views: the worst queries of a metric, where two runs
differ most, and the sortable table of every query's values (``td``: one value cell)."""

from __future__ import annotations

import math
import warnings
from types import TracebackType

import numpy as np

from ..comparison import Report
from ..escape import html as escape

TOP_QUERIES = 10
"""Queries each per-metric view lists."""


def td(value: float | None, digits: int = 4, cls: str = "") -> str:
    """One table cell: the value to ``digits`` decimals and sortable by ``data-v``."""
    if value is not None and math.isinf(value):
        sort = "Infinity" if value > 0 else "-Infinity"
        return f'<td class="{cls}" data-v="{sort}">{"∞" if value > 0 else "−∞"}</td>'
    if value is None or not math.isfinite(value):
        return f'<td class="{cls}" data-v="">–</td>'
    return f'<td class="{cls}" data-v="{value!r}">{value:.{digits}f}</td>'


def pairs_for(report: Report, metric: str) -> list[tuple[str, str]]:
    """The (run, other) pairs compared on ``metric`` (each run against the first when the
    report made no comparison)."""
    pairs = [(c.run, c.other) for c in report.comparisons if c.metric == metric]
    if pairs:
        return pairs
    if len(report.runs) > 1:
        return [(r, report.runs[0]) for r in report.runs[1:]]
    return []


def query_cells(report: Report, q: str) -> str:
    text = report.queries.get(q)
    cells_ = f'<td class="t" data-q="{escape(q)}">{escape(q)}</td>'
    if report.queries:
        cells_ += f'<td class="text">{escape(text or "")}</td>'
    return cells_


def worst_table(report: Report, metric: str) -> str:
    vals = np.vstack([report.per_query[r][metric] for r in report.runs])
    with np.errstate(invalid="ignore"), quiet():
        mean = np.nanmean(vals, axis=0)
    order = [i for i in np.argsort(mean, kind="stable") if math.isfinite(mean[i])][:TOP_QUERIES]
    head = '<th class="t">query</th>' + ('<th class="t">text</th>' if report.queries else "")
    head += "".join(f"<th>{escape(r)}</th>" for r in report.runs)
    rows = [
        "<tr>"
        + query_cells(report, report.query_ids[i])
        + "".join(td(float(report.per_query[r][metric][i])) for r in report.runs)
        + "</tr>"
        for i in order
    ]
    return (
        f"<h3>Worst queries on {escape(metric)} (lowest mean over runs)</h3>"
        f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )


def differ_table(report: Report, metric: str) -> str:
    out = []
    for a, b in pairs_for(report, metric):
        d = report.per_query[a][metric] - report.per_query[b][metric]
        order = [i for i in np.argsort(-np.abs(np.nan_to_num(d)), kind="stable") if d[i] != 0]
        order = order[:TOP_QUERIES]
        if not order:
            continue
        head = '<th class="t">query</th>' + ('<th class="t">text</th>' if report.queries else "")
        head += f"<th>{escape(a)}</th><th>{escape(b)}</th><th>difference</th>"
        rows = [
            "<tr>"
            + query_cells(report, report.query_ids[i])
            + td(float(report.per_query[a][metric][i]))
            + td(float(report.per_query[b][metric][i]))
            + td(float(d[i]), cls="pos" if d[i] > 0 else "neg")
            + "</tr>"
            for i in order
        ]
        out.append(
            f"<h3>Where {escape(a)} and {escape(b)} differ most on {escape(metric)}</h3>"
            f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(rows)
            + "</tbody></table>"
        )
    return "".join(out)


class quiet:
    """No RuntimeWarning while a mean over all-NaN columns is taken."""

    def __enter__(self) -> None:
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._w.__exit__(kind, exc, tb)


def per_query_table(report: Report, max_rows: int) -> str:
    n = len(report.query_ids)
    shown = min(n, max_rows)
    head = '<th class="t">query</th>' + ('<th class="t">text</th>' if report.queries else "")
    for m in report.metrics:
        for r in report.runs:
            head += f'<th data-metric="{escape(m)}">{escape(r)}</th>'
        if report.baseline:
            for r in report.runs:
                if r != report.baseline:
                    head += f'<th data-metric="{escape(m)}">{escape(r)} − baseline</th>'
    rows = []
    for i in range(shown):
        q = report.query_ids[i]
        tds = [query_cells(report, q)]
        for m in report.metrics:
            for r in report.runs:
                v = float(report.per_query[r][m][i])
                tds.append(td(v).replace("<td ", f'<td data-metric="{escape(m)}" ', 1))
            if report.baseline:
                base = float(report.per_query[report.baseline][m][i])
                for r in report.runs:
                    if r != report.baseline:
                        d = float(report.per_query[r][m][i]) - base
                        cls = "pos" if d > 0 else "neg" if d < 0 else ""
                        tds.append(
                            td(d, cls=cls).replace("<td ", f'<td data-metric="{escape(m)}" ', 1)
                        )
        rows.append("<tr>" + "".join(tds) + "</tr>")
    note = (
        f'<p class="note">Showing {shown} of {n} queries (by id); the JSON and CSV outputs '
        "hold them all.</p>"
        if shown < n
        else ""
    )
    return (
        '<h2>Per query</h2><p class="note">Click a column header to sort.</p>'
        '<div class="scroll"><table class="sortable per-query" id="per-query-table"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + note
    )
