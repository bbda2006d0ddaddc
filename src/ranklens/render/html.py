"""A self-contained HTML report: no network assets, inline SVG charts, a sortable per-query
table, the worst queries and the queries where two runs differ most.

Every user-supplied string (run names, metric names, query ids and texts, dataset name,
title) goes through :func:`ranklens.escape.html` (control and bidi characters shown as
escapes, then HTML's specials as entities); data embedded as JSON goes through
:func:`ranklens.text.script_json`; the script never builds markup from data (it only
reorders rows and toggles classes), so ids such as ``<script>`` show as text.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from ..comparison import Report, curve_family
from ..comparison.report import TO_HTML
from ..declared import NONNEGATIVE, count, declare, flag
from ..escape import html as escape
from ..metrics import parse_metric
from . import svg
from .drill import drill_section
from .estimate import estimate_html
from .fusion import fusion_html
from .html_queries import differ_table, pairs_for, per_query_table, td, worst_table
from .notes import notes
from .sweep import sweep_body
from .table_cells import cells, fmt_p
from .tables import REPORT

MAX_ROWS = 2000
"""Per-query rows shown in the HTML table (all values are in the JSON and CSV outputs)."""

_ids = itertools.count(1)

HTML = declare("Report.render('html')", {
    "report": REPORT,
    "title": TO_HTML["title"],
    "fragment": flag(False, "a <div> for notebooks instead of a whole page"),
    "max_rows": count(MAX_ROWS, NONNEGATIVE, "per-query rows shown in the HTML table"),
})  # fmt: skip


@cache
def _asset(name: str) -> str:
    """A file of ``ranklens/render/assets`` (the report's stylesheet and script), read once."""
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def asset(name: str) -> str:
    """A file of ``ranklens/render/assets`` (the report's stylesheet and scripts), for pages
    other rooms assemble."""
    return _asset(name)


def _summary_table(report: Report) -> str:
    cs = cells(report, 4)
    short = cells(report, 3)
    multi = len(report.runs) > 1
    head = (['<th class="t"></th>'] if multi else []) + ['<th class="t">run</th>']
    head += [f"<th>{escape(m)}</th>" for m in report.metrics]
    rows = []
    for r in report.runs:
        tds = ([f'<td class="t">({escape(report.letter(r))})</td>'] if multi else []) + [
            f'<td class="t">{escape(r)}</td>'
        ]
        for m in report.metrics:
            c = cs[r][m]
            inner = f'<span class="{"best" if c.best else ""}">{escape(c.value)}</span>'
            if c.beats:
                inner += f"<sup>{escape(c.beats)}</sup>"
            if c.interval:
                inner += f'<span class="ci">{escape(short[r][m].interval)}</span>'
            tds.append(f"<td>{inner}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return (
        '<table class="summary"><thead><tr>'
        + "".join(head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + _notes_html(report)
    )


def _notes_html(report: Report) -> str:
    """Each note's head and one short line per run; every detail (all metrics, the queries
    with the most unjudged documents) in a collapsible section. Retrieval times have their
    own section (the Retrieval table), so not a note here."""
    shown, more = [], []
    for n in (n for n in notes(report) if n.topic != "retrieval"):
        runs = "".join(f"<li>{escape(r)}</li>" for r in n.runs)
        shown.append(f"<p>{escape(n.head)}</p>" + (f"<ul>{runs}</ul>" if runs else ""))
        if n.details:
            items = "".join(f"<li>{escape(d)}</li>" for d in n.details)
            more.append(f"<p>{escape(n.head)}</p><ul>{items}</ul>")
    details = (
        f'<details class="note-details"><summary>Details</summary>{"".join(more)}</details>'
        if more
        else ""
    )
    return f'<div class="note notes">{"".join(shown)}{details}</div>' if shown else ""


def _comparisons_table(report: Report) -> str:
    if not report.comparisons:
        return ""
    head = "".join(
        f'<th class="{"t" if h in ("metric", "run", "vs") else ""}">{h}</th>'
        for h in ("metric", "run", "vs", "diff", "p", "p (adj.)", "effect size", "W/T/L")
    )
    rows = []
    for c in report.comparisons:
        cls = "pos" if c.diff > 0 else "neg" if c.diff < 0 else ""
        rows.append(
            f'<tr class="{"sig" if c.significant else ""}">'
            f'<td class="t">{escape(c.metric)}</td><td class="t">{escape(c.run)}</td>'
            f'<td class="t">{escape(c.other)}</td>'
            f'<td class="{cls}" data-v="{c.diff!r}">{c.diff:+.4f}</td>'
            f'<td data-v="{c.pvalue!r}">{fmt_p(c.pvalue)}</td>'
            f'<td data-v="{c.pvalue_adjusted!r}">{fmt_p(c.pvalue_adjusted)}'
            f"{' *' if c.significant else ''}</td>"
            f"{td(c.effect_size, 2)}<td>{c.wins}/{c.ties}/{c.losses}</td></tr>"
        )
    return (
        '<h2>Paired comparisons</h2><table class="sortable comparisons"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(rows)
        + '</tbody></table><p class="note">* significant after correction. W/T/L: queries '
        "where the run is better than, equal to, worse than the other.</p>"
    )


def _charts(report: Report, metric: str) -> str:

    out = []
    try:
        fam = curve_family(parse_metric(metric))
    except Exception:
        fam = None
    first = report.curves.get(report.runs[0], {}) if report.runs else {}
    if fam and fam in first:
        ks = sorted(first[fam])
        series = [
            (r, [report.curves.get(r, {}).get(fam, {}).get(k, math.nan) for k in ks])
            for r in report.runs
        ]
        out.append(svg.line_chart(f"{fam}@k", ks, series, fam))
    for a, b in pairs_for(report, metric):
        d = report.per_query[a][metric] - report.per_query[b][metric]
        out.append(
            svg.difference_chart(
                f"{metric}: {a} − {b}, per query",
                d.tolist(),
                "difference",
                report.query_ids,
                names=(a, b),
            )
        )
    out.append(
        svg.histogram(
            f"{metric}: distribution over queries",
            [(r, report.per_query[r][metric].tolist()) for r in report.runs],
            metric,
        )
    )
    return "".join(out)


def _run_info(report: Report) -> str:
    info = report.metadata.get("run_info") or {}
    rows = []
    for r in report.runs:
        i = info.get(r) or {}
        lat, cpu = i.get("latency_ms") or {}, i.get("cpu_ms") or {}
        if not i:
            continue
        rows.append(
            f'<tr><td class="t">{escape(r)}</td>'
            + "".join(td(lat.get(p, math.nan), 1) for p in ("p50", "p95", "p99"))
            + td(cpu.get("p50", math.nan), 1)
            + f"<td>{escape(str(i.get('concurrency', '')))}</td>"
            + f"<td>{escape(str(i.get('queries', '')))}</td>"
            + f"<td>{escape(str(i.get('errors', 0)))}</td></tr>"
        )
    if not rows:
        return ""
    return (
        '<h2>Retrieval</h2><table><thead><tr><th class="t">run</th><th>p50 ms</th>'
        "<th>p95 ms</th><th>p99 ms</th><th>CPU p50 ms</th><th>concurrency</th>"
        "<th>queries</th><th>errors</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + f'<p class="note">{escape(LATENCY_NOTE)}</p>'
    )


LATENCY_NOTE = (
    "Latency: the wall time of each call, from when the retriever was called, at the run's "
    "concurrency; a retriever that computes in Python shares the CPU and the GIL with the "
    "other calls in flight, and that wait is in its latency. CPU: the calling thread's own "
    "CPU time (sync retrievers), close to a call's latency alone when it computes rather "
    "than waits on a service."
)


def _glossary(report: Report) -> str:
    """What every metric shown and the comparison columns mean (the first paragraph of
    each metric family's docstring, which states its formula)."""
    items = []
    for m in report.metrics:
        try:
            doc = parse_metric(m).spec.doc or ""
        except Exception:  # a metric registered elsewhere, or a name from a saved report
            doc = ""
        first = " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "")
        items.append(f"<dt>{escape(m)}</dt><dd>{escape(first or 'see docs/metrics.md')}</dd>")
    items.append(
        "<dt>effect size</dt><dd>Cohen's d_z: the mean per-query difference divided by the "
        "standard deviation of the differences; about 0.2 is small, 0.5 medium, 0.8 large. "
        "A large effect on few queries can still be insignificant, a tiny one on many "
        "queries significant: read it with the p-value and the interval. ±∞: every query "
        "differs by the same amount (no spread: no query disagrees); –: fewer than two "
        "queries.</dd>"
        "<dt>W/T/L</dt><dd>queries where the run scores above, equal to, below the other."
        "</dd><dt>unjudged</dt><dd>a retrieved document with no label: counted as "
        "non-relevant; the notes give each metric with them relevant and judged only.</dd>"
    )
    return (
        '<details class="glossary"><summary>Glossary: the metrics and columns</summary>'
        f"<dl>{''.join(items)}</dl></details>"
    )


def _meta_line(report: Report) -> str:
    md = report.metadata
    bits = []
    if md.get("dataset"):
        bits.append(f"dataset {md['dataset']}")
    bits.append(f"{len(report.query_ids)} queries")
    if md.get("convention"):
        bits.append(f"convention {md['convention']}")
    level = (md.get("options") or {}).get("relevance_level")
    if level is not None:
        bits.append(f"relevance level {level}")
    if report.baseline:
        bits.append(f"baseline {report.baseline}")
    if md.get("created"):
        bits.append(f"created {md['created']}")
    versions = md.get("versions") or {}
    if versions:
        bits.append(", ".join(f"{k} {v}" for k, v in versions.items()))
    return " · ".join(escape(str(b)) for b in bits)


@HTML.checks
def to_html(
    report: Report, title: str | None = None, fragment: bool = False, max_rows: int = MAX_ROWS
) -> str:
    """The report as one HTML page (or, with ``fragment``, a ``<div>`` for notebooks)."""
    uid = f"rl-report-{next(_ids)}"
    title = title or (
        f"ranklens report: {report.metadata['dataset']}"
        if report.metadata.get("dataset")
        else "ranklens report"
    )
    metrics = report.metrics
    options = "".join(f'<option value="{escape(m)}">{escape(m)}</option>' for m in metrics)
    groups = "".join(
        f'<div data-metric="{escape(m)}"><div class="charts">{_charts(report, m)}</div>'
        f"{worst_table(report, m)}{differ_table(report, m)}</div>"
        for m in metrics
    )
    body = (
        f'<div class="rl-report" id="{uid}"><style>{_asset("report.css")}</style>'
        f'<h1>{escape(title)}</h1><p class="meta">{_meta_line(report)}</p>'
        f"{_sweep(report)}<h2>Summary</h2>{_summary_table(report)}{_glossary(report)}"
        f"{_comparisons_table(report)}"
        f"{_run_info(report)}"
        f"{fusion_html(report.metadata['fusion']) if report.metadata.get('fusion') else ''}"
        f"{estimate_html(report.metadata['estimate']) if report.metadata.get('estimate') else ''}"
        f'<h2>By metric</h2><label>Metric <select class="metric-select">{options}</select>'
        f"</label>{groups}"
        f"{drill_section(report)}{per_query_table(report, max_rows)}"
        f"<script>(function(ROOT_ID){{\n{_asset('report.js')}\n{_asset('drill.js')}}})"
        f"({json.dumps(uid)});</script></div>"
    )
    if fragment:
        return body
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title></head><body>{body}</body></html>\n"
    )


def _sweep(report: Report) -> str:
    """A sweep's section (``metadata["sweep"]``), its per-query charts linked to the
    drill-down."""
    d = report.metadata.get("sweep")
    return sweep_body(d, report.per_query, report.query_ids) if d else ""


def styled(body: str) -> str:
    """An HTML fragment inside the report's styles (a notebook's output)."""
    return f'<div class="rl-report"><style>{_asset("report.css")}</style>{body}</div>'


def sweep_fragment(sweep: Mapping[str, Any]) -> str:
    """A sweep (``SweepResult.to_dict()``) as a styled ``<div>`` for notebooks."""
    return styled(sweep_body(sweep))


def tuning_fragment(tuning: Mapping[str, Any]) -> str:
    """A fusion tuning (``FusionTuning.to_dict()``) as a styled ``<div>`` for notebooks."""
    return (
        f'<div class="rl-report"><style>{_asset("report.css")}</style>{fusion_html(tuning)}</div>'
    )


FRAGMENT = declare("Report.render('html_fragment')", {
    "report": REPORT, "title": HTML["title"], "max_rows": HTML["max_rows"],
})  # fmt: skip


@FRAGMENT.checks
def to_fragment(report: Report, title: str | None = None, max_rows: int = MAX_ROWS) -> str:
    """The report as a ``<div>`` for notebooks (``_repr_html_``)."""
    return to_html(report, title=title, fragment=True, max_rows=max_rows)
