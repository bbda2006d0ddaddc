"""A sweep (:class:`~ranklens.sweeps.result.SweepResult`, as its ``to_dict()``) as text,
Markdown and HTML: the honest selection per metric, the table of configurations (quality,
latency, build, index, errors, cost), the Pareto chart of quality against p95 latency (and
cost), the per-parameter effect charts with intervals, and the significance matrix. In a
comparison report (``metadata["sweep"]``) the section also draws the chosen configuration
against the runner-up and the baseline query by query, each query a link into the
report's drill-down."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..escape import html as escape
from ..escape import markdown, terminal
from ..metrics import lower_is_better
from ..text import clip
from .svg import difference_chart
from .sweep_charts import effect_chart, matrix_html, pareto_chart
from .table_cells import fmt_p


def _f(v: float | None, digits: int = 4) -> str:
    return (
        "–" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"
    )


def _ms(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else f"{v:.2f}"


def _size(r: Mapping[str, Any]) -> str:
    n, b = r.get("index_size"), r.get("index_bytes")
    if n is None:
        return "–"
    if b is None:
        return f"{n:,}"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{n:,} ({b / scale:.1f} {unit})"
    return f"{n:,} ({b} B)"


def summary_rows(d: Mapping[str, Any], metric: str | None = None) -> list[tuple[str, str]]:
    """``(label, value)`` lines of a sweep's selection on ``metric`` (default: the first),
    shared by text, Markdown and HTML."""
    m = metric or d["metrics"][0]
    s = d["selection"][m]
    rows = d["rows"]
    ok = sum(r["status"] == "ok" for r in rows)
    lines = [
        (
            "configurations",
            f"{len(rows)} ({ok} measured"
            + (f", {len(rows) - ok} not: see below)" if ok < len(rows) else ")")
            + f" on {s['n_queries']} queries"
            + (f" of {d['dataset']}" if d.get("dataset") else ""),
        )
    ]
    if d.get("constraint"):
        lines.append(
            ("constraint", f"{d['constraint']} ({len(s.get('feasible') or [])} satisfy it)")
        )
    for note in d.get("notes") or []:
        lines.append(("note", note))
    if s.get("chosen") is None:
        why = s.get("reason") or "no configuration satisfies the constraint"
        lines.append(("chosen", f"none: {why}"))
        for r in rows:
            if r["status"] != "ok":
                lines.append((f"{r['status']}: {r['name']}", str(r.get("message") or "")))
        return lines
    lines.append(("chosen (all queries)", s["chosen"]))
    lo, hi = s.get("cv_interval") or (None, None)
    if s.get("folds"):
        lines.append(
            (
                f"{m} cross-validated",
                f"{_f(s['cv_estimate'])} [{_f(lo)}, {_f(hi)}] "
                f"({s['folds']}-fold over queries, seed {s.get('seed')}; what choosing "
                "by this sweep delivers on new queries)",
            )
        )
    lines.append(
        (
            f"{m} in-sample best",
            f"{_f(s['in_sample_best'])} (optimistic by "
            f"{round(s['in_sample_best'] - s['cv_estimate'], 4) + 0.0:+.4f}: the best of "
            f"{len(s.get('feasible') or [])} noisy means)",
        )
    )
    folds = sorted(set(s.get("fold_choices") or []))
    if folds:
        lines.append(("folds chose", " | ".join(folds)))
    tests = s.get("tests") or {}
    for label, other in (("vs runner-up", s.get("runner_up")), ("vs baseline", s.get("baseline"))):
        t = tests.get(other) if other else None
        if t is not None:
            lines.append(
                (
                    f"{label} {other}",
                    f"{t['diff']:+.4f}, p = {fmt_p(t['pvalue'])}, "
                    f"adjusted {fmt_p(t['pvalue_adjusted'])}"
                    f"{' (significant)' if t['significant'] else ' (not significant)'}",
                )
            )
    held = s.get("cv_vs_baseline")
    if held:
        a, b = held["interval"]
        lines.append(
            (
                "held-out vs baseline",
                f"{held['diff']:+.4f} [{_f(a)}, {_f(b)}], p = "
                f"{fmt_p(held['pvalue'])} (the selection procedure itself, paired)",
            )
        )
    n = len(tests)
    tied = s.get("tied") or []
    lines.append(
        (
            "statistically tied",
            f"{len(tied)}: "
            + "; ".join(tied)
            + f" (not significantly worse than the chosen one; {n} paired tests, corrected)",
        )
    )
    bad = [r for r in rows if r["status"] != "ok"]
    for r in bad:
        lines.append((f"{r['status']}: {r['name']}", str(r.get("message") or "")))
    return lines


def _table_rows(
    d: Mapping[str, Any],
) -> tuple[list[str], list[list[str]], list[Mapping[str, Any]]]:
    """The configurations' table as header and text cells (best first by the primary
    metric, failed ones last)."""
    metrics, rows = d["metrics"], d["rows"]
    m = metrics[0]
    chosen = d["selection"][m].get("chosen")
    has_cost = any(r.get("cost") is not None for r in rows)
    head = ["", "configuration", *metrics, "p50 ms", "p95 ms", "build s", "indexed", "errors"]
    head += ["cost / 1k"] if has_cost else []

    sign = 1.0 if lower_is_better(m) else -1.0  # best first: a rate of the unwanted lowest

    def order(r: Mapping[str, Any]) -> tuple[bool, float]:
        v = (r["metrics"].get(m) or {}).get("value")
        return (r["status"] != "ok", sign * v if v is not None else math.inf)

    ranked = sorted(rows, key=order)
    cells = []
    for r in ranked:
        flags = (
            ("★" if r["name"] == chosen else "")
            + ("=" if r.get("tied") else "")
            + ("◆" if r.get("pareto") else "")
            + ("✗" if r["status"] != "ok" else "")
            + ("" if r.get("feasible", True) or r["status"] != "ok" else "⊘")
        )
        line = [flags, r["name"]]
        line += [_f((r["metrics"].get(x) or {}).get("value")) for x in metrics]
        line += [
            _ms(r.get("p50")),
            _ms(r.get("p95")),
            _f(r.get("build_s"), 2),
            _size(r),
            "–" if r.get("errors") is None else str(r["errors"]),
        ]
        if has_cost:
            line.append("–" if r.get("cost") is None else f"{r['cost']:.4g}")
        cells.append(line)
    return head, cells, ranked


LEGEND = (
    "★ chosen, = statistically tied with it, ◆ on the quality/latency Pareto frontier, "
    "⊘ outside the constraint, ✗ not measured"
)


def sweep_text(d: Mapping[str, Any]) -> str:
    """The sweep as plain text: the selection on each metric, then the table."""
    out = []
    for m in d["metrics"]:
        rows = summary_rows(d, m)
        if m != d["metrics"][0]:
            rows = [
                r
                for r in rows
                if not r[0].startswith(
                    ("configurations", "failed", "unmatched", "constraint", "note")
                )
            ]
            out.append("")
        rows = [(terminal(k), terminal(v)) for k, v in rows]  # names of metrics, configurations
        width = max(len(k) for k, _ in rows)
        out += [f"{k:<{width}}  {v}" for k, v in rows]
    head, cells, _ = _table_rows(d)
    head, cells = [terminal(h) for h in head], [[terminal(c) for c in line] for line in cells]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *cells)]
    out.append("")
    for line in (head, *cells):
        out.append(
            "  ".join(
                str(x).ljust(w) if i < 2 else str(x).rjust(w)
                for i, (x, w) in enumerate(zip(line, widths))
            ).rstrip()
        )
    out.append(LEGEND)
    return "\n".join(out)


def sweep_markdown(d: Mapping[str, Any]) -> str:
    """The sweep as Markdown: the selection on the primary metric and the table."""
    out = ["| | |", "|---|---|"]
    out += [f"| {markdown(k)} | {markdown(v)} |" for k, v in summary_rows(d)]
    head, cells, _ = _table_rows(d)
    out += ["", "| " + " | ".join(map(markdown, head)) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(map(markdown, line)) + " |" for line in cells]
    return "\n".join(out) + f"\n\n{markdown(LEGEND)}\n"


def _summary_html(d: Mapping[str, Any]) -> str:
    out = []
    for m in d["metrics"]:
        rows = "".join(
            f'<tr><th class="t">{escape(k)}</th><td class="t">{escape(v)}</td></tr>'
            for k, v in summary_rows(d, m)
        )
        out.append(f'<table class="sweep-summary" data-metric="{escape(m)}">{rows}</table>')
    return out[0] + (
        "<details><summary>The selection on the other metrics</summary>"
        + "".join(out[1:])
        + "</details>"
        if len(out) > 1
        else ""
    )


def _table_html(d: Mapping[str, Any]) -> str:
    head, cells, ranked = _table_rows(d)
    th = "".join(f'<th class="{"t" if i < 2 else ""}">{escape(h)}</th>' for i, h in enumerate(head))
    trs = []
    for r, line in zip(ranked, cells):
        tds = "".join(
            f'<td class="{"t" if i < 2 else ""}">{escape(c)}</td>' for i, c in enumerate(line)
        )
        tip = escape(str(r.get("message") or ""))
        trs.append(f'<tr data-config="{escape(r["name"])}" title="{tip}">{tds}</tr>')
    return (
        f'<table class="sortable sweep-table"><thead><tr>{th}</tr></thead>'
        f'<tbody>{"".join(trs)}</tbody></table><p class="note">{escape(LEGEND)}. Latency: '
        "wall time per call at the sweep's concurrency; build: the build call's wall time "
        "(shared by the configurations of one build).</p>"
    )


def sweep_body(
    d: Mapping[str, Any],
    per_query: Mapping[str, Any] | None = None,
    queries: Sequence[str] | None = None,
) -> str:
    """The sweep's HTML section (``per_query``: a report's per-query values over
    ``queries``, for the chosen-against-others charts whose query marks open the
    drill-down)."""
    m = d["metrics"][0]
    charts = [pareto_chart(d)]
    if any(r.get("cost") is not None for r in d["rows"]):
        charts.append(pareto_chart(d, "cost", "cost per 1,000 queries"))
    effects = d.get("effects", {}).get(m) or []
    for param in dict.fromkeys(e["param"] for e in effects):
        charts.append(effect_chart([e for e in effects if e["param"] == param], m, param))
    s = d["selection"][m]
    if per_query is not None and s.get("chosen") in per_query:
        for other in dict.fromkeys(x for x in (s.get("runner_up"), s.get("baseline")) if x):
            if other == s["chosen"] or other not in per_query:
                continue
            a, b = per_query[s["chosen"]][m], per_query[other][m]
            charts.append(
                difference_chart(
                    f"{m}: {s['chosen']} − {other}, per query",
                    [x - y for x, y in zip(a, b)],
                    "difference",
                    queries,
                    names=(clip(s["chosen"], 40), clip(other, 40)),
                )
            )
    mx = (d.get("matrices") or {}).get(m)
    return (
        '<div class="rl-sweep"><h2>Sweep: the configurations compared</h2>'
        f"{_summary_html(d)}{_table_html(d)}"
        f'<div class="charts">{"".join(c for c in charts if c)}</div>'
        + (f"<h3>Significance matrix</h3>{matrix_html(mx, m)}" if mx else "")
        + "</div>"
    )
