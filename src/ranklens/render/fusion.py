"""A fusion tuning (:class:`~ranklens.fusion.tuning.FusionTuning`, as its ``to_dict()``)
as text and as HTML with the metric over the grid: a line over one run's weight (two
runs) or one parameter, a triangular heatmap over two weights (three runs; the third is
what is left), else a line over the settings in grid order. The chosen setting is
marked; the held-out estimate is drawn beside the in-sample curve."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..escape import html as escape
from ..escape import terminal
from ..text import clip
from .svg import BOTTOM, LEFT, RIGHT, TOP, H, W, frame, line_chart


def _setting(s: Mapping[str, Any], names: list[str]) -> str:
    parts = []
    for k, v in s.items():
        if k == "weights":
            parts.append(", ".join(f"{n} {w:g}" for n, w in zip(names, v)))
        else:
            parts.append(f"{k}={v}")
    return "; ".join(parts) or "(defaults)"


def summary_rows(t: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, value)`` lines of a tuning, shared by text and HTML."""
    names, m = t["names"], t["metric"]
    lo, hi = t["cv_interval"]
    d_lo, d_hi = t["difference_interval"]
    folds = sorted({_setting(s, names) for s in t["fold_choices"]})
    return [
        ("method", f"{t['method']}" + (f" (norm {t['norm']})" if t["norm"] else "")),
        ("grid", f"{len(t['settings'])} settings, {t['folds']}-fold cross-validation over "
                 f"{t['n_queries']} queries (seed {t['seed']})"),
        ("chosen (all queries)", _setting(t["chosen"], names)),
        (f"{m} cross-validated", f"{t['cv_estimate']:.4f} [{lo:.4f}, {hi:.4f}] (95% bootstrap)"),
        (f"{m} in-sample best", f"{t['in_sample_best']:.4f} (optimistic by "
                                f"{t['in_sample_best'] - t['cv_estimate']:+.4f})"),
        ("folds chose", " | ".join(folds)),
        ("single runs", ", ".join(f"{n} {v:.4f}" for n, v in t["singles"].items())),
        (f"vs {t['best_single']}", f"{t['difference']:+.4f} [{d_lo:+.4f}, {d_hi:+.4f}], "
                                   f"p = {t['p_value']:.4g} ({t['test']}, paired)"),
    ]  # fmt: skip


def fusion_text(t: Mapping[str, Any]) -> str:
    """The tuning as plain text."""
    rows = [(terminal(k), terminal(v)) for k, v in summary_rows(t)]  # run and metric names
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def grid_chart(t: Mapping[str, Any]) -> str:
    """The metric over the grid as SVG (see the module docstring)."""
    settings, values, names = t["settings"], t["grid_values"], t["names"]
    keys = {k for s in settings for k in s}
    title = f"{t['metric']} over the {t['method']} grid (all queries; chosen marked)"
    cv = [t["cv_estimate"]] * len(values)
    if keys == {"weights"} and len(names) == 3:
        return _heatmap(t)
    if keys == {"weights"} and len(names) == 2:
        xs = [f"{s['weights'][0]:g}" for s in settings]
        xlabel = f"weight of {names[0]} ({names[1]}: 1 − it)"
    elif len(keys) == 1:
        (key,) = keys
        xs = [str(s[key]) for s in settings]
        xlabel = key
    else:
        xs = [str(i + 1) for i in range(len(settings))]
        xlabel = "setting (grid order)"
    series = [("in-sample mean", list(values)), ("cross-validated estimate", cv)]
    return line_chart(title, xs, series, t["metric"], xlabel=xlabel)


def _heatmap(t: Mapping[str, Any]) -> str:
    """Three runs' weights: ``w1`` across, ``w2`` up, each cell coloured by the metric."""
    settings, values, names = t["settings"], list(t["grid_values"]), t["names"]
    w1 = sorted({s["weights"][0] for s in settings})
    w2 = sorted({s["weights"][1] for s in settings})
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    cw = (W - LEFT - RIGHT) / len(w1)
    ch = (H - TOP - BOTTOM) / len(w2)
    best = max(range(len(values)), key=lambda i: values[i])
    body = []
    for i, (s, v) in enumerate(zip(settings, values)):
        x = LEFT + w1.index(s["weights"][0]) * cw
        y = H - BOTTOM - (w2.index(s["weights"][1]) + 1) * ch
        shade = (v - lo) / span
        fill = f"rgb({int(247 - 180 * shade)},{int(251 - 120 * shade)},{int(255 - 60 * shade)})"
        stroke = ' stroke="#d62728" stroke-width="2"' if i == best else ""
        label = ", ".join(f"{n} {w:g}" for n, w in zip(names, s["weights"]))
        body.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{cw - 1:.1f}" height="{ch - 1:.1f}" '
            f'fill="{fill}"{stroke}><title>{escape(label)}: {v:.4f}</title></rect>'
        )
    for j, w in enumerate(w1):
        if j % max(len(w1) // 5, 1) == 0:
            body.append(f'<text x="{LEFT + (j + 0.5) * cw:.1f}" y="{H - BOTTOM + 16}" '
                        f'class="tick" text-anchor="middle">{w:g}</text>')  # fmt: skip
    for j, w in enumerate(w2):
        if j % max(len(w2) // 5, 1) == 0:
            body.append(f'<text x="{LEFT - 6}" y="{H - BOTTOM - (j + 0.5) * ch + 4:.1f}" '
                        f'class="tick" text-anchor="end">{w:g}</text>')  # fmt: skip
    body.append(
        f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" class="axis-label" '
        f'text-anchor="middle">weight of {escape(clip(names[0], 24))} (cell: '
        f"{escape(t['metric'])} {lo:.3f}–{hi:.3f}; {escape(clip(names[2], 20))}: the rest)</text>"
    )
    body.append(
        f'<text x="14" y="{(TOP + H - BOTTOM) / 2:.0f}" class="axis-label" text-anchor="middle" '
        f'transform="rotate(-90 14 {(TOP + H - BOTTOM) / 2:.0f})">weight of '
        f"{escape(clip(names[1], 24))}</text>"
    )
    title = f"{t['metric']} over {t['method']} weights (all queries; best outlined)"
    return frame(title, body, "fusion-grid")


def fusion_html(t: Mapping[str, Any]) -> str:
    """The tuning as an HTML fragment: the summary and the grid chart."""
    rows = "".join(
        f'<tr><th class="t">{escape(k)}</th><td class="t">{escape(v)}</td></tr>'
        for k, v in summary_rows(t)
    )
    return (
        f'<div class="rl-fusion"><h2>Fusion tuning</h2><table>{rows}</table>'
        f'<div class="charts">{grid_chart(t)}</div></div>'
    )
