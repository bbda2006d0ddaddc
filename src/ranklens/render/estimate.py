"""An estimate without full labels (:class:`~ranklens.estimation.EstimateResult`, as its
``to_dict()``) as text and as HTML: per metric, each run and difference estimated by the
judge alone, the people alone, PPI and PPI++, with intervals (a table and an interval
chart), the judge's measured bias, its agreement with people per grade, and the notes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..declared import data, declare, flag
from ..escape import html as escape
from ..escape import terminal
from ..text import clip
from .svg import color

ESTIMATE_HTML = declare("estimate_html", {
    "e": data("the estimate (EstimateResult.to_dict())"),
    "page": flag(False, "a whole self-contained page instead of a section"),
})  # fmt: skip

METHODS = (("naive", "judge only"), ("human", "human only"), ("ppi", "PPI"), ("ppi++", "PPI++"))


def _iv(d: Mapping[str, float], digits: int = 3) -> str:
    return f"{d['value']:.{digits}f} [{d['lo']:.{digits}f}, {d['hi']:.{digits}f}]"


def headline(e: Mapping[str, Any]) -> str:
    """The first line: what was estimated from what."""
    j = e["judge"]
    return (
        f"Estimated on {e['dataset']!r}: {e['n'] + e['N']} queries, {e['n']} labelled by "
        f"people and {e['N']} by the judge only ({j.get('source')}, top {e['depth']}); "
        f"{e['confidence']:.0%} intervals."
    )


def judge_lines(e: Mapping[str, Any]) -> list[str]:
    """The judge's agreement with the people, per grade, and each ensemble member's."""
    j = e["judge"]
    out = []

    def agree(d: Mapping[str, Any], who: str) -> str:
        if not d.get("n"):
            return f"{who}: shares no pair with the human labels"
        grades = "; ".join(
            f"grade {g['grade']}: {g['same']:.0%} alike over {g['pairs']} (judge mean "
            f"{g['judge_mean']:.2f})"
            for g in d.get("per_grade", [])
        )
        return (
            f"{who} agrees with people on {d['observed']:.0%} of {d['n']} pairs (Cohen's kappa "
            f"{_f(d['kappa'])}, linear {_f(d['weighted_kappa'])}); {grades}"
        )

    out.append(agree(j, "The judge"))
    for m in j.get("members", []):
        out.append(agree(m, f"  member {m.get('source')}"))
    return out


def _f(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def estimate_text(e: Mapping[str, Any]) -> str:
    """The estimate as plain text: one table per metric, then the judge and the notes."""
    lines = [headline(e), ""]
    for m in e["metrics"]:
        rows = [r for r in e["rows"] if r["metric"] == m]
        targets = [terminal(r["target"]) for r in rows]
        width = max(len(t) for t in [terminal(m), *targets])
        head = f"{terminal(m):<{width}}  " + "  ".join(f"{name:<22}" for _, name in METHODS)
        lines += [head + "  λ (PPI++)   judge − human", "-" * (len(head) + 28)]
        for r, target in zip(rows, targets):
            cells = "  ".join(f"{_iv(r[k]):<22}" for k, _ in METHODS)
            bias = r["judge_bias"]
            lines.append(
                f"{target:<{width}}  {cells}  {r['ppi++'].get('lambda', 0):<11.2f} "
                f"{bias['value']:+.3f} [{bias['lo']:+.3f}, {bias['hi']:+.3f}]"
            )
        lines.append("")
    lines += judge_lines(e)
    lines += e.get("notes", [])
    return "\n".join(terminal(line) for line in lines)  # the judge's and the notes' names too


def interval_chart(e: Mapping[str, Any], metric: str) -> str:
    """Horizontal intervals: per run or difference a header line, then one bar per method
    (a dot at the estimate); a dashed line at 0 when the axis holds it."""
    rows = [r for r in e["rows"] if r["metric"] == metric]
    lows: list[float] = [r[k]["lo"] for r in rows for k, _ in METHODS]
    highs: list[float] = [r[k]["hi"] for r in rows for k, _ in METHODS]
    lo, hi = min(lows), max(highs)
    pad = (hi - lo) * 0.05 or 0.05
    lo, hi = lo - pad, hi + pad
    label_w, plot_w, row_h, head_h = 90, 470, 15, 18
    width = label_w + plot_w + 30
    height = 34 + len(rows) * (head_h + len(METHODS) * row_h + 6) + 16

    def x(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot_w

    parts = [
        f'<text x="4" y="14" font-size="12" font-weight="bold">{escape(metric)}: '
        f"{e['confidence']:.0%} intervals (dot: the estimate)</text>"
    ]
    if lo < 0 < hi:
        parts.append(
            f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="24" y2="{height - 18}" '
            'stroke="#999" stroke-dasharray="3 3"/>'
        )
    y = 24
    for r in rows:
        parts.append(
            f'<text x="4" y="{y + 13}" font-size="12" font-weight="bold">'
            f"{escape(clip(r['target'], 80))}</text>"
        )
        y += head_h
        for i, (k, name) in enumerate(METHODS):
            d, c = r[k], color(i)
            yy = y + i * row_h + 7
            parts.append(
                f"<g><title>{escape(name)}: {escape(_iv(d, 4))}</title>"
                f'<text x="{label_w - 8}" y="{yy + 4}" font-size="11" text-anchor="end">'
                f"{escape(name)}</text>"
                f'<line x1="{x(d["lo"]):.1f}" x2="{x(d["hi"]):.1f}" y1="{yy}" y2="{yy}" '
                f'stroke="{c}" stroke-width="3"/><circle cx="{x(d["value"]):.1f}" cy="{yy}" '
                f'r="3.5" fill="{c}"/></g>'
            )
        y += len(METHODS) * row_h + 6
    for v in (lo + pad, (lo + hi) / 2, hi - pad):
        parts.append(
            f'<text x="{x(v):.1f}" y="{height - 4}" font-size="10" '
            f'text-anchor="middle">{v:.3f}</text>'
        )
    return (
        f'<svg class="chart estimate" data-chart="estimate" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" xmlns="http://www.w3.org/2000/svg">'
        f"{''.join(parts)}</svg>"
    )


@ESTIMATE_HTML.checks
def estimate_html(e: Mapping[str, Any], page: bool = False) -> str:
    """The estimate as an HTML section (``page``: a whole self-contained page)."""
    blocks = [f'<h2>Estimated without full labels</h2><p class="note">{escape(headline(e))}</p>']
    for m in e["metrics"]:
        rows = [r for r in e["rows"] if r["metric"] == m]
        head = "".join(f"<th>{escape(name)}</th>" for _, name in METHODS)
        body = "".join(
            f'<tr><td class="t">{escape(r["target"])}</td>'
            + "".join(
                f'<td>{r[k]["value"]:.4f}<span class="ci">[{r[k]["lo"]:.4f}, '
                f"{r[k]['hi']:.4f}]</span></td>"
                for k, _ in METHODS
            )
            + f"<td>{r['ppi++'].get('lambda', 0):.2f}</td>"
            + f"<td>{_iv(r['judge_bias'])}</td></tr>"
            for r in rows
        )
        blocks.append(
            f'<table class="estimate"><thead><tr><th class="t">{escape(m)}</th>{head}'
            f"<th>λ</th><th>judge − human</th></tr></thead><tbody>{body}</tbody></table>"
            f"{interval_chart(e, m)}"
        )
    notes = judge_lines(e) + list(e.get("notes", []))
    blocks.append("".join(f'<p class="note">{escape(n)}</p>' for n in notes))
    section = f'<div class="rl-estimate">{"".join(blocks)}</div>'
    if not page:
        return section
    from importlib import resources

    css = (resources.files(__package__) / "assets" / "report.css").read_text(encoding="utf-8")
    title = f"ranklens estimate: {e['dataset']}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<title>{escape(title)}</title></head><body><div class="rl-report">'
        f"<style>{css}</style><h1>{escape(title)}</h1>{section}</div></body></html>\n"
    )
