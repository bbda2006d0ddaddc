"""The report's drill-down: one query at a time, each run's top k side by side (rank,
document, snippet, grade or "unjudged", group), the relevant documents each run missed and
where the other runs ranked them; a filter by query id or text, keyboard navigation (j / k),
and a jump from any query cell of the other tables.

On span labels (:mod:`ranklens.comparison.spandrill`) each chunk is shown in its
document's text with the evidence it holds highlighted, where it stands (and whether it was
found by its text, moved, or has no place), the query's evidence metrics per run, and the
evidence spans each run missed with the ranks at which the others found them; the texts,
addressed by offsets, are shown as text, control and bidi characters as their codes.

The data (``Report.metadata["drilldown"]``, from :func:`ranklens.compare`) is embedded once
as JSON with the per-query values of every metric, and rendered lazily by
``assets/drill.js``: a 10k-query report renders only the query on screen."""

from __future__ import annotations

import math
from typing import Any

from ..comparison import Report
from ..escape import html as escape
from ..text import script_json


def drill_data(report: Report) -> dict[str, Any] | None:
    """What the script needs: the drill-down table, query ids and texts, the runs, the
    metrics' per-query values (rounded to 4 decimals; None where undefined) and the
    relevance level."""
    dd = report.metadata.get("drilldown")
    if not isinstance(dd, dict) or not dd.get("top"):
        return None

    def num(v: float) -> float | None:
        return round(float(v), 4) if math.isfinite(v) else None

    values = {
        r: {m: [num(v) for v in report.per_query[r][m].tolist()] for m in report.metrics}
        for r in report.runs
    }
    level = (report.metadata.get("options") or {}).get("relevance_level") or 1
    return {
        **dd,
        "queries": report.query_ids,
        "texts_q": [report.queries.get(q) for q in report.query_ids],
        "runs": [r for r in report.runs if r in dd["top"]],
        "metrics": report.metrics,
        "values": values,
        "level": level,
    }


def drill_section(report: Report) -> str:
    """The drill-down's HTML (empty when the report keeps no drill-down data)."""
    data = drill_data(report)
    if data is None:
        return ""
    depth = int(data.get("depth") or 10)
    if data.get("spans") is not None:
        what = (
            f"Each run's top {depth} chunks for one query, each in its document's text with the "
            'evidence it holds <mark class="ev">highlighted</mark>: grades by the overlap rule '
            f"<code>{escape(str(data.get('overlap') or 'any'))}</code> (grade 0: a chunk of a "
            "document with evidence that finds none; <strong>unjudged</strong>: a chunk of "
            "another document); chunks without a place in their document are marked and find "
            "no evidence. Below, the evidence a run missed, with the ranks at which the other "
            "runs found it. "
        )
    else:
        what = (
            f"Each run's top {depth} for one query: grades from the labels "
            "(<strong>unjudged</strong>: no label), groups of grouped ground truth, and the "
            "relevant documents a run missed with the ranks other runs gave them. "
        )
    return (
        '<h2 class="drill-title">Query drill-down</h2>'
        f'<p class="note">{what}'
        "Filter by query id or text; <kbd>j</kbd>/<kbd>k</kbd> move to the next or previous "
        "query; click a query in any table to open it here.</p>"
        '<div class="drill"><div class="drill-nav">'
        '<input type="search" class="drill-filter" placeholder="filter by query id or text" '
        'aria-label="filter queries">'
        '<select class="drill-list" size="8" aria-label="queries"></select>'
        '<p class="note drill-count"></p></div><div class="drill-view"></div></div>'
        f'<script type="application/json" class="drill-data">{script_json(data)}</script>'
    )
