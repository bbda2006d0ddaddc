"""Small inline SVG charts (no JavaScript, no external assets) for the HTML report.

Every text placed in a chart goes through :func:`ranklens.escape.html`.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence

from ..escape import html as escape
from ..text import clip

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)

W, H = 560, 300
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 28, 44


DASHES = ("", "7 4", "2 3", "10 3 2 3", "4 4", "1 2")
"""Line patterns by series: runs with the same values stay visible on top of each other."""


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def dash(i: int) -> str:
    d = DASHES[i % len(DASHES)]
    return f' stroke-dasharray="{d}"' if d else ""


def nice_step(span: float, ticks: int = 4, whole: bool = False) -> float:
    """A tick step of 1, 2, 2.5 or 5 times a power of ten giving about ``ticks`` intervals
    over ``span`` (a whole number, at least 1, when ``whole``)."""
    raw = span / max(ticks, 1) if span > 0 else 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return max(1.0, float(math.ceil(step))) if whole else step


def tick_label(x: float) -> str:
    """A tick label: as few digits as the value needs (0.025, 0.5, 26)."""
    return f"{round(x, 9) + 0.0:.6g}"


TITLE_CHARS = 60
"""Characters per line of a chart title; a longer title wraps (never cut)."""


def frame(
    title: str,
    body: list[str],
    kind: str,
    legend: Sequence[tuple[str, str]] = (),
    solid: bool = False,
) -> str:
    """The chart's SVG: its title on as many lines as it needs (the chart moved down by the
    lines past the first), the body, the legend."""
    lines = textwrap.wrap(title, TITLE_CHARS, break_on_hyphens=False) or [""]
    extra = 16 * (len(lines) - 1)
    parts = [
        f'<svg class="chart" data-chart="{escape(kind)}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {W} {H + extra + 18 * _legend_rows(legend)}" role="img" '
        f'aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        *(f'<text x="{LEFT}" y="{16 + 16 * i}" class="chart-title">{escape(line)}</text>'
          for i, line in enumerate(lines)),
        f'<g transform="translate(0,{extra})">' if extra else "",
        *body,
    ]  # fmt: skip
    parts += _legend(legend, solid)
    parts.append("</g></svg>" if extra else "</svg>")
    return "".join(parts)


def _legend_rows(legend: Sequence[tuple[str, str]]) -> int:
    return math.ceil(len(legend) / 3) if legend else 0


def _legend(legend: Sequence[tuple[str, str]], solid: bool = False) -> list[str]:
    out = []
    for i, (label, col) in enumerate(legend):
        x = LEFT + (i % 3) * 170
        y = H + 18 * (i // 3) + 4
        out.append(
            f'<line x1="{x}" x2="{x + 22}" y1="{y + 5}" y2="{y + 5}" stroke="{col}" '
            f'stroke-width="3"{"" if solid else dash(i)}/>'
        )
        out.append(  # a long name cut, whole in its tooltip
            f'<text x="{x + 26}" y="{y + 9}" class="legend"><title>{escape(label)}</title>'
            f"{escape(clip(label, 26))}</text>"
        )
    return out


Scale = Callable[[float], float]
"""A value's coordinate on a chart's axis."""


def y_axis(lo: float, hi: float, label: str, whole: bool = False) -> tuple[list[str], Scale]:
    """Gridlines and ticks at round values (:func:`nice_step`; whole numbers for counts),
    the axis extended to the next tick; with the scale placing a value on it."""
    step = nice_step(hi - lo, 4, whole)
    lo = math.floor(lo / step + 1e-9) * step
    hi = max(math.ceil(hi / step - 1e-9) * step, lo + step)
    span = hi - lo

    def y(v: float) -> float:
        return TOP + (H - TOP - BOTTOM) * (1 - (v - lo) / span)

    out = []
    for i in range(round(span / step) + 1):
        v = lo + step * i
        yy = y(v)
        out.append(
            f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{yy:.1f}" y2="{yy:.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{yy + 4:.1f}" class="tick" text-anchor="end">'
            f"{tick_label(v)}</text>"
        )
    out.append(
        f'<text transform="translate(14,{(TOP + H - BOTTOM) / 2:.0f}) rotate(-90)" '
        f'class="axis-label" text-anchor="middle">{escape(label)}</text>'
    )
    return out, y


def line_chart(
    title: str,
    xs: Sequence[object],
    series: Sequence[tuple[str, Sequence[float]]],
    ylabel: str,
    xlabel: str = "cutoff k",
) -> str:
    """Lines over categorical x positions (the cutoffs k), one per run."""
    vals = [v for _, ys in series for v in ys if math.isfinite(v)]
    hi = max(1.0, max(vals, default=1.0)) if vals and max(vals) > 1 else 1.0
    body, y = y_axis(0.0, hi, ylabel)
    n = max(len(xs) - 1, 1)

    def x(i: int) -> float:
        return LEFT + (W - LEFT - RIGHT) * i / n

    for i, k in enumerate(xs):
        body.append(
            f'<text x="{x(i):.1f}" y="{H - BOTTOM + 16}" class="tick" '
            f'text-anchor="middle">{escape(str(k))}</text>'
        )
    body.append(
        f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" class="axis-label" '
        f'text-anchor="middle">{escape(xlabel)}</text>'
    )
    legend = []
    for j, (name, ys) in enumerate(series):
        col = color(j)
        pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(ys) if math.isfinite(v))
        body.append(
            f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-width="2"{dash(j)}/>'
        )
        for i, v in enumerate(ys):
            if math.isfinite(v):
                body.append(
                    f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{col}">'
                    f"<title>{escape(name)} @{escape(str(xs[i]))}: {v:.4f}</title></circle>"
                )
        legend.append((name, col))
    return frame(title, body, "curve", legend)


MARKED = 40
"""Queries at each end of a difference chart given a clickable mark (all of them when
there are at most twice as many): the chart stays small for 10^4 queries."""


BETTER = "#2e7d32"
"""The colour of a query where the run scores above the other (difference charts)."""
WORSE = "#c62828"
"""The colour of a query where the run scores below the other."""


def difference_chart(title: str, diffs: Sequence[float], ylabel: str,
                     queries: Sequence[str] | None = None,
                     names: tuple[str, str] | None = None) -> str:  # fmt: skip
    """Per-query differences ``run − other`` sorted from largest to smallest, as areas
    around 0 coloured by sign (green where ``run`` is better, red where it is worse; the
    legend names both runs, ``names=(run, other)``); with ``queries`` (aligned with
    ``diffs``), the queries at both ends are marks that name the query and its difference
    and open it in the report's drill-down (``data-q``)."""
    pairs = [(v, i) for i, v in enumerate(diffs) if math.isfinite(v)]
    pairs.sort(key=lambda p: -p[0])  # stable: ties keep the queries' order
    d = [v for v, _ in pairs]
    lim = max((abs(v) for v in d), default=0.0) or 1.0
    body, y = y_axis(-lim, lim, ylabel)
    n = max(len(d), 1)
    zero = y(0.0)

    def x(i: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * i / n

    for sign, col, cls in ((1, BETTER, "better"), (-1, WORSE, "worse")):
        idx = [i for i, v in enumerate(d) if sign * v > 1e-12]
        if not idx:
            continue
        pts = [f"{x(idx[0]):.1f},{zero:.1f}"]
        for i in idx:
            pts.append(f"{x(i):.1f},{y(d[i]):.1f}")
            pts.append(f"{x(i + 1):.1f},{y(d[i]):.1f}")
        pts.append(f"{x(idx[-1] + 1):.1f},{zero:.1f}")
        body.append(
            f'<polygon class="{cls}" points="{" ".join(pts)}" fill="{col}" '
            f'fill-opacity="0.55" stroke="{col}" stroke-width="1"/>'
        )
    if queries is not None:
        ends = range(n) if n <= 2 * MARKED else [*range(MARKED), *range(n - MARKED, n)]
        for i in ends:
            v, q = d[i], str(queries[pairs[i][1]])
            top, bottom = sorted((y(v), zero))
            body.append(
                f'<rect class="qmark" data-q="{escape(q)}" x="{x(i):.1f}" y="{top - 2:.1f}" '
                f'width="{max(x(i + 1) - x(i), 3):.1f}" height="{bottom - top + 4:.1f}">'
                f"<title>{escape(q)}: {v:+.4f}</title></rect>"
            )
    up = sum(v > 1e-12 for v in d)
    down = sum(v < -1e-12 for v in d)
    body.append(
        f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{zero:.1f}" y2="{zero:.1f}" class="zero"/>'
        f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" class="axis-label" '
        f'text-anchor="middle">queries, sorted ({up} better, {len(d) - up - down} equal, '
        f"{down} worse)</text>"
    )
    legend = []
    if names is not None:
        run, other = names
        legend = [(f"{run} better than {other}", BETTER), (f"{run} worse than {other}", WORSE)]
    return frame(title, body, "differences", legend, solid=True)


def histogram(
    title: str, series: Sequence[tuple[str, Sequence[float]]], xlabel: str, bins: int = 10
) -> str:
    """Distribution of per-query values: one step line per run over shared bins."""
    vals = [v for _, vs in series for v in vs if math.isfinite(v)]
    lo = min(0.0, min(vals, default=0.0))
    hi = max(1.0, max(vals, default=1.0))
    width = (hi - lo) / bins
    counts = []
    for _, vs in series:
        c = [0] * bins
        for v in vs:
            if math.isfinite(v):
                c[min(int((v - lo) / width), bins - 1)] += 1
        counts.append(c)
    top = max((max(c) for c in counts), default=1) or 1
    body, y = y_axis(0.0, float(top), "queries", whole=True)

    def x(v: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * (v - lo) / (hi - lo)

    for i in range(bins + 1):
        if i % 2 == 0:
            body.append(
                f'<text x="{x(lo + i * width):.1f}" y="{H - BOTTOM + 16}" class="tick" '
                f'text-anchor="middle">{tick_label(lo + i * width)}</text>'
            )
    body.append(
        f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" class="axis-label" '
        f'text-anchor="middle">{escape(xlabel)}</text>'
    )
    legend = []
    for j, ((name, _), c) in enumerate(zip(series, counts)):
        col = color(j)
        off = 1.5 * j - 0.75 * (len(series) - 1)  # equal counts stay apart by a few pixels
        pts = [f"{x(lo) + off:.1f},{y(0):.1f}"]
        for i, cnt in enumerate(c):
            pts.append(f"{x(lo + i * width) + off:.1f},{y(cnt) - off:.1f}")
            pts.append(f"{x(lo + (i + 1) * width) + off:.1f},{y(cnt) - off:.1f}")
        pts.append(f"{x(hi) + off:.1f},{y(0):.1f}")
        body.append(
            f'<polyline points="{" ".join(pts)}" fill="none" stroke="{col}" stroke-width="2"'
            f"{dash(j)}/>"
        )
        legend.append((name, col))
    return frame(title, body, "distribution", legend)
