"""What every table renderer shows, computed once: formatted values, markers, best runs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..comparison import Report
from ..judging import counts_notes

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


def fmt(value: float, digits: int, count: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if count:
        return str(round(value))
    return f"{value:.{digits}f}"


def cells(report: Report, digits: int = 4) -> dict[str, dict[str, Cell]]:
    """``cells[run][metric]`` for the summary tables (every run tied for the best value of a
    column is marked best)."""
    top = {}
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
    return "".join(SUPERSCRIPT.get(c, c) for c in letters)


def legend(report: Report) -> str:
    """One sentence saying what the markers mean."""
    s = report.settings
    if len(report.runs) < 2:
        return ""
    scope = f"against {s['baseline']}" if s.get("baseline") else "between every pair of runs"
    corr = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}.get(
        s.get("correction"), "no"
    )
    test = {
        "randomization": f"Fisher's randomization test ({s.get('n_resamples')} permutations)",
        "t": "the paired t test",
        "bootstrap": f"the paired bootstrap test ({s.get('n_resamples')} resamples)",
        "wilcoxon": "the Wilcoxon signed-rank test",
    }.get(s.get("test"), str(s.get("test")))
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


def counts_note(report: Report) -> str:
    """The number of queries, and per run what judging left out or changed and how many
    retrievals failed (the wording of :func:`ranklens.judging.counts_notes`)."""
    options = report.metadata.get("options") or {}
    switches = options.get("switches") or {}
    convention = report.metadata.get("convention") or "trec"
    parts = []
    for r in report.runs:
        bits = counts_notes(
            report.counts.get(r, {}),
            switches.get("missing", "zero"),
            convention,
            switches.get("duplicates", "error"),
            evaluated=False,
        )
        # failures of labelled queries are in the counts already; say only the others
        errors = report.metadata.get("run_info", {}).get(r, {}).get("errors") or 0
        counted = (report.counts.get(r, {}).get("failures") or {}).get("count", 0)
        if errors > counted:
            bits.append(f"{errors - counted} retrieval errors on queries without labels")
        if bits:
            parts.append(f"{r}: " + ", ".join(bits))
    head = f"{len(report.query_ids)} queries."
    return head + (" " + "; ".join(parts) + "." if parts else "")


def ties_note(report: Report, digits: int = 4) -> str:
    """Per run with tied scores, how far every order of its tied documents can move each
    metric (``summary[run][metric]["tie_low"/"tie_high"]``, from ``compare``)."""
    parts = []
    for r in report.runs:
        moved = []
        for m in report.metrics:
            s = report.summary[r][m]
            lo, hi = s.get("tie_low"), s.get("tie_high")
            if lo is not None and hi is not None and hi - lo > 1e-12:
                count = report.aggregations.get(m) == "sum"
                moved.append(f"{m} {fmt(lo, digits, count)} to {fmt(hi, digits, count)}")
        if moved:
            parts.append(f"{r}: " + ", ".join(moved))
    head = "Over every order of each run's tied documents: "
    return (head + "; ".join(parts) + ".") if parts else ""


def holes_note(report: Report, digits: int = 4) -> str:
    """Per run that retrieved unjudged documents, each metric scored with them as
    relevant and on the judged-only list, and the queries with the most holes in their top
    k (``summary[run][metric]["as_relevant"/"judged_only"]``, ``metadata["holes"]``, from
    ``compare``); the range is what labelling the holes could still do."""
    meta = report.metadata.get("holes") or {}
    parts = []
    for r in report.runs:
        info = meta.get(r)
        if not isinstance(info, dict):
            continue
        moved = []
        for m in report.metrics:
            s = report.summary[r][m]
            up, cond = s.get("as_relevant"), s.get("judged_only")
            count = report.aggregations.get(m) == "sum"
            shown = []
            if up is not None:
                shown.append(f"{fmt(up, digits, count)} if relevant")
            if cond is not None:
                shown.append(f"{fmt(cond, digits, count)} judged only")
            moved.append(f"{m} {fmt(s.get('value'), digits, count)} ({', '.join(shown)})")
        worst = ", ".join(f"{q} ({n})" for q, n in (info.get("worst_queries") or [])[:5])
        where = f" (most in the top {info.get('depth')}: {worst})" if worst else ""
        parts.append(f"{r} retrieved {info.get('unjudged')} unjudged{where}: " + "; ".join(moved))
    head = "Unjudged documents (holes) count as non-relevant. "
    return (head + ". ".join(parts) + ".") if parts else ""


def power_note(report: Report, digits: int = 3) -> str:
    """The smallest difference each metric's test detects with 80% power (from
    ``compare``: ``metadata["power"]``)."""
    pw = report.metadata.get("power") or {}
    mdes = {m: v for m, v in (pw.get("mde") or {}).items() if v is not None and math.isfinite(v)}
    if not mdes:
        return ""
    shown = ", ".join(f"{m} {v:.{digits}f}" for m, v in mdes.items())
    return (
        f"With {pw.get('n')} queries a difference is detected 80% of the time (alpha "
        f"{pw.get('alpha')}, two-sided) from about: {shown}."
    )


def targets_note(report: Report, digits: int = 4) -> str:
    """Each run's verdicts against the profile's targets (``compare(..., profile=...)``):
    met, missed or not yet known, the bounds, the queries that would settle it, and the
    level and methods of the bounds."""
    verdicts = report.target_verdicts
    if not verdicts:
        return ""
    saved = report.metadata.get("targets") or {}
    name = (saved.get("profile") or {}).get("name", "targets")
    parts = []
    for run, vs in verdicts.items():
        shown = []
        for v in vs:
            more = f"; about {v.further:,} more queries would settle it" if v.further else ""
            beyond = v.attainable is not None and v.reason().startswith("cannot")
            more = f"; {v.reason()}" if beyond else more
            shown.append(
                f"{v.metric} {v.op} {v.target:g} {v.word} ({fmt(v.value, digits)}, bounds "
                f"[{fmt(v.lower, digits)}, {fmt(v.upper, digits)}]{more})"
            )
        parts.append(f"{run}: " + ", ".join(shown))
    first = next(iter(verdicts.values()))
    method = first[0].summary([v for vs in verdicts.values() for v in vs]) if first else ""
    return f"Targets of profile {name} ({method}): " + "; ".join(parts) + "."


def report_notes(report: Report) -> list[str]:
    """Every note a summary table carries, in order: the significance legend, the interval
    method, what judging counted, the range over tie orders, the power and the verdicts
    against a profile's targets."""
    notes = (legend(report), interval_note(report), counts_note(report), ties_note(report),
             holes_note(report), power_note(report), targets_note(report))  # fmt: skip
    return [n for n in notes if n]
