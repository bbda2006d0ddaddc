"""The charts of a sweep's HTML section (see :mod:`.sweep`): quality against p95 latency
or cost with the Pareto frontier (:func:`pareto_chart`), a parameter's effect with
intervals (:func:`effect_chart`) and the significance matrix of every pair
(:func:`matrix_html`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..escape import html as escape
from ..text import clip
from .svg import BOTTOM, LEFT, RIGHT, H, Scale, W, color, frame, nice_step, tick_label, y_axis
from .table_cells import fmt_p

CHOSEN = "#d62728"
FRONTIER = "#1f77b4"
OTHER = "#9aa4ae"


def _x_axis(lo: float, hi: float, label: str) -> tuple[list[str], Scale]:
    step = nice_step(hi - lo, 5)
    lo = math.floor(lo / step + 1e-9) * step
    hi = max(math.ceil(hi / step - 1e-9) * step, lo + step)

    def x(v: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * (v - lo) / (hi - lo)

    out = []
    for i in range(round((hi - lo) / step) + 1):
        v = lo + step * i
        out.append(
            f'<text x="{x(v):.1f}" y="{H - BOTTOM + 16}" class="tick" '
            f'text-anchor="middle">{tick_label(v)}</text>'
        )
    out.append(
        f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" class="axis-label" '
        f'text-anchor="middle">{escape(label)}</text>'
    )
    return out, x


def pareto_chart(d: Mapping[str, Any], field: str = "p95", unit: str = "p95 latency (ms)") -> str:
    """Quality (the primary metric, with its interval) against ``field`` (p95 latency, or
    cost per 1,000 queries): every measured configuration a point, the frontier joined and
    blue, the chosen one red, those outside the constraint hollow."""
    m = d["metrics"][0]
    chosen = d["selection"][m].get("chosen")
    flag = "pareto" if field == "p95" else "pareto_cost"
    pts = []
    for r in d["rows"]:
        s = r["metrics"].get(m) or {}
        if r["status"] == "ok" and s.get("value") is not None and r.get(field) is not None:
            pts.append((r, float(r[field]), s["value"], s.get("ci_low"), s.get("ci_high")))
    if not pts:
        return ""
    qs = [p[2] for p in pts] + [p[3] for p in pts if p[3] is not None]
    qs += [p[4] for p in pts if p[4] is not None]
    body, y = y_axis(min(qs), max(qs), m)
    xs = [p[1] for p in pts]
    span = (max(xs) - min(xs)) or max(max(xs), 1.0)
    xb, x = _x_axis(max(0.0, min(xs) - 0.05 * span), max(xs) + 0.05 * span, unit)
    body += xb
    front = sorted((p for p in pts if p[0].get(flag)), key=lambda p: p[1])
    if len(front) > 1:
        steps = []
        for a, b in itertools.pairwise(front):
            steps += [f"{x(a[1]):.1f},{y(a[2]):.1f}", f"{x(b[1]):.1f},{y(a[2]):.1f}"]
        steps.append(f"{x(front[-1][1]):.1f},{y(front[-1][2]):.1f}")
        body.append(
            f'<polyline class="frontier" points="{" ".join(steps)}" fill="none" '
            f'stroke="{FRONTIER}" stroke-width="1.5" stroke-dasharray="5 3"/>'
        )
    for r, xv, qv, lo, hi in sorted(pts, key=lambda p: p[0]["name"] == chosen):
        col = CHOSEN if r["name"] == chosen else FRONTIER if r.get(flag) else OTHER
        if lo is not None and hi is not None:
            body.append(
                f'<line x1="{x(xv):.1f}" x2="{x(xv):.1f}" y1="{y(lo):.1f}" '
                f'y2="{y(hi):.1f}" stroke="{col}" stroke-opacity="0.5"/>'
            )
        fill = col if r.get("feasible", True) else "#fff"
        size = 6 if r["name"] == chosen else 4.5
        tip = (
            f"{r['name']}: {m} {qv:.4f}"
            + (f" [{lo:.4f}, {hi:.4f}]" if lo is not None else "")
            + f", {unit} {xv:.4g}"
            + (" (chosen)" if r["name"] == chosen else "")
            + (" (on the frontier)" if r.get(flag) else "")
        )
        body.append(
            f'<circle class="config{" chosen" if r["name"] == chosen else ""}" '
            f'data-config="{escape(r["name"])}" cx="{x(xv):.1f}" cy="{y(qv):.1f}" r="{size}" '
            f'fill="{fill}" stroke="{col}" stroke-width="2"><title>{escape(tip)}</title></circle>'
        )
        if r["name"] == chosen or r.get(flag):
            right = x(xv) > W - RIGHT - 170  # near the right edge: the label on the left
            anchor = ' text-anchor="end"' if right else ""
            body.append(
                f'<text x="{x(xv) + (-8 if right else 8):.1f}" y="{y(qv) - 6:.1f}" class="tick"'
                f"{anchor}>{escape(clip(r['name'], 34))}</text>"
            )
    legend = [("chosen", CHOSEN), ("Pareto frontier", FRONTIER), ("dominated", OTHER)]
    what = "latency" if field == "p95" else "cost"
    title = f"{m} against {what}: each configuration (bars: 95% interval)"
    return frame(title, body, "pareto" if field == "p95" else "pareto-cost", legend, solid=True)


def effect_chart(rows: Sequence[Mapping[str, Any]], metric: str, param: str) -> str:
    """One parameter's values across, the marginal mean of ``metric`` over the
    configurations with each value (with its interval), and the best configuration's."""
    xs = [r["value"] for r in rows]
    means = [r["mean"] for r in rows]
    bests = [r["best_mean"] for r in rows]
    lows = [r.get("ci_low", r["mean"]) for r in rows]
    highs = [r.get("ci_high", r["mean"]) for r in rows]
    body, y = y_axis(min(lows + bests), max(highs + bests), metric)
    n = len(xs)

    def x(i: int) -> float:
        return LEFT + (W - LEFT - RIGHT) * (i + 0.5) / n

    for i, v in enumerate(xs):
        body.append(
            f'<text x="{x(i):.1f}" y="{H - BOTTOM + 16}" class="tick" '
            f'text-anchor="middle">{escape(clip(str(v), 18))}</text>'
        )
    body.append(
        f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" class="axis-label" '
        f'text-anchor="middle">{escape(param)}</text>'
    )
    for series, vals, col, dash in (
        ("mean", means, color(0), ""),
        ("best", bests, color(1), "5 3"),
    ):
        pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(vals))
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(
            f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-width="2"{extra}/>'
        )
        for i, (r, v) in enumerate(zip(rows, vals)):
            tip = (
                f"{param}={r['value']}: mean of {r['configs']} configurations {v:.4f} "
                f"[{lows[i]:.4f}, {highs[i]:.4f}]"
                if series == "mean"
                else f"{param}={r['value']}: best {r['best']} {v:.4f}"
            )
            body.append(
                f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3.5" fill="{col}">'
                f"<title>{escape(tip)}</title></circle>"
            )
    for i in range(n):
        body.append(
            f'<line class="interval" x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(lows[i]):.1f}" '
            f'y2="{y(highs[i]):.1f}" stroke="{color(0)}" stroke-width="6" '
            f'stroke-opacity="0.25"/>'
        )
    legend = [("mean (95% interval)", color(0)), ("best configuration", color(1))]
    return frame(f"{metric} by {param}", body, "effect", legend, solid=True)


def matrix_html(mx: Mapping[str, Any], metric: str) -> str:
    names = mx["names"]
    head = "".join(f'<th title="{escape(n)}">{i + 1}</th>' for i, n in enumerate(names))
    body = []
    for i, n in enumerate(names):
        cells = []
        for j in range(len(names)):
            if i == j:
                cells.append('<td class="diag">·</td>')
                continue
            diff, p = mx["diff"][i][j], mx["p_adj"][i][j]
            sig = p is not None and p < mx["alpha"]
            cls = ("pos" if diff > 0 else "neg") if sig else ""
            tip = f"{n} − {names[j]}: {diff:+.4f}, adjusted p = {fmt_p(p)}"
            cells.append(
                f'<td class="{cls}{" sig" if sig else ""}" title="{escape(tip)}">{diff:+.3f}</td>'
            )
        body.append(
            f'<tr><td class="t">{i + 1}</td><td class="t">{escape(n)}</td>'
            + "".join(cells)
            + "</tr>"
        )
    return (
        f'<table class="sweep-matrix" data-metric="{escape(metric)}"><thead><tr>'
        f'<th class="t">#</th><th class="t">{escape(metric)}: row − column</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
        f'<p class="note">Every pair tested ({mx["tests"]} paired tests, {escape(mx["correction"])}'
        " correction over all of them); bold and coloured: significant. Ordered by mean.</p>"
    )
