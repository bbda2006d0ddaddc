"""What every table renderer shows, computed once: formatted values, markers, best runs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..comparison import Report

SUPERSCRIPT = dict(
    zip("abcdefghijklmnoprstuvwxyz0123456789", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ⁰¹²³⁴⁵⁶⁷⁸⁹")
)


@dataclass(frozen=True)
class Cell:
    """One (run, metric) cell: the value text, its interval text, the letters of the runs it
    is significantly better than, and whether it is the best value of its column."""

    value: str
    interval: str
    beats: str
    best: bool


def fmt(value: float | None, digits: int, count: bool = False) -> str:
    """A value for tables: ``–`` when undefined, ``∞``/``−∞`` when unbounded (an effect
    size of differences that do not vary), else to ``digits`` decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if count:
        return str(round(value))
    return f"{value:.{digits}f}"


def cells(report: Report, digits: int = 4) -> dict[str, dict[str, Cell]]:
    """``cells[run][metric]`` for the summary tables (every run tied for the best value of a
    column is marked best)."""
    top: dict[str, float] = {}
    for m in report.metrics:
        b = report.best(m)
        top[m] = report.value(b, m) if b is not None else math.nan
    out: dict[str, dict[str, Cell]] = {}
    for r in report.runs:
        out[r] = {}
        for m in report.metrics:
            s = report.summary[r][m]
            count = report.aggregations.get(m) == "sum"
            lo, hi = s.get("ci_low"), s.get("ci_high")
            interval = (
                f"[{fmt(lo, digits)}, {fmt(hi, digits)}]"
                if lo is not None and not math.isnan(lo)
                else ""
            )
            out[r][m] = Cell(
                value=fmt(s["value"], digits, count),
                interval=interval,
                beats="".join(report.letter(o) for o in report.beats(r, m)),
                best=len(report.runs) > 1 and math.isclose(s["value"], top[m], abs_tol=1e-12),
            )
    return out


def superscript(letters: str) -> str:
    """Letters (``ab``) as superscripts (``ᵃᵇ``); one without a superscript stays as it is."""
    return "".join(SUPERSCRIPT.get(c, c) for c in letters)


def legend(report: Report) -> str:
    """One sentence saying what the markers mean."""
    s = report.settings
    if len(report.runs) < 2:
        return ""
    scope = f"against {s['baseline']}" if s.get("baseline") else "between every pair of runs"
    corr = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}.get(
        str(s.get("correction")), "no"
    )
    test = {
        "randomization": f"Fisher's randomization test ({s.get('n_resamples')} permutations)",
        "t": "the paired t test",
        "bootstrap": f"the paired bootstrap test ({s.get('n_resamples')} resamples)",
        "wilcoxon": "the Wilcoxon signed-rank test",
    }.get(str(s.get("test")), str(s.get("test")))
    return (
        f"Letters mark the runs a value is significantly better than ({test} {scope}, "
        f"{corr} correction per metric, alpha = {s.get('alpha')})."
    )


def interval_note(report: Report) -> str:
    s = report.settings
    if not s.get("ci"):
        return ""
    how = "percentile bootstrap" if s["ci"] == "bootstrap" else "Student t"
    return f"Intervals: {round(100 * s.get('confidence', 0.95))}% {how} of the mean."


def fmt_p(p: float) -> str:
    """A p-value for tables: 4 decimals, ``<0.0001`` below that, ``–`` when undefined."""
    if math.isnan(p):
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"
