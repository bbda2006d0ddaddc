"""The notes under a report's tables, computed once and rendered everywhere: what the
significance letters and intervals mean, what judging counted per run, how far tied scores
and unjudged documents could move each metric, and the test's power.

Each :class:`Note` has a one-line ``head``, at most one short line per run, and
``details`` (every metric, the queries with the most unjudged documents) that renderers
show only when asked (``details=True``, ``--details``) or behind a collapsible section
(HTML). Query ids in notes are written ``query <id>``, so a numeric id never reads as a
number of the sentence."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..comparison import Report
from ..judging import counts_notes
from .table_cells import fmt, interval_note, legend


@dataclass(frozen=True)
class Note:
    """One note: ``topic`` (a word: ``significance``, ``queries``, ``retrieval``, ``ties``,
    ``unjudged``, ``power``), its ``head`` line, one short line per run concerned, and
    ``details``."""

    topic: str
    head: str
    runs: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    def lines(self, details: bool = False) -> list[str]:
        """The head, then each run's line indented (its full details, when asked)."""
        body = self.details if details and self.details else self.runs
        return [self.head, *(f"  {r}" for r in body)]


def significance_note(report: Report) -> Note | None:
    text = " ".join(x for x in (legend(report), interval_note(report)) if x)
    return Note("significance", text) if text else None


def counts_note(report: Report) -> Note:
    """The number of queries and, per run, what judging left out or changed and how many
    retrievals failed (the wording of :func:`ranklens.judging.counts_notes`)."""
    options = report.metadata.get("options") or {}
    switches = options.get("switches") or {}
    convention = report.metadata.get("convention") or "trec"
    runs: list[str] = []
    for r in report.runs:
        bits = counts_notes(
            report.counts.get(r, {}),
            switches.get("missing", "zero"),
            convention,
            switches.get("duplicates", "error"),
            evaluated=False,
            freshness=options.get("freshness"),
        )
        errors = (report.metadata.get("run_info") or {}).get(r, {}).get("errors") or 0
        failures: object = report.counts.get(r, {}).get("failures")  # {"count": n, ...}
        counted = failures.get("count", 0) if isinstance(failures, dict) else 0
        if errors > counted:  # failures of labelled queries are in the counts already
            bits.append(f"{errors - counted} retrieval errors on queries without labels")
        if bits:
            runs.append(f"{r}: " + "; ".join(bits))
    n = len(report.query_ids)
    return Note("queries", f"{n:,} {'query' if n == 1 else 'queries'}.", runs)


def retrieval_note(report: Report) -> Note | None:
    """Per run from the runner, its latency percentiles at the concurrency it ran with and,
    for a sync retriever, each call's own CPU time: at concurrency above the cores a
    CPU-bound retriever's wall time is mostly waiting, which the CPU time tells apart."""
    info = report.metadata.get("run_info") or {}
    runs = []
    for r in report.runs:
        i = info.get(r) or {}
        lat, cpu = i.get("latency_ms") or {}, i.get("cpu_ms") or {}
        if not isinstance(lat, dict) or "p50" not in lat:
            continue
        line = f"{r}: p50 {lat['p50']:.1f} ms, p95 {lat.get('p95', math.nan):.1f} ms"
        where = []
        if isinstance(i.get("concurrency"), int):
            where.append(f"concurrency {i['concurrency']}")
        if isinstance(cpu, dict) and "p50" in cpu:
            where.append(f"CPU p50 {cpu['p50']:.1f} ms")
        runs.append(line + (f" ({'; '.join(where)})" if where else ""))
    if not runs:
        return None
    head = ("Retrieval time per query: wall time at the run's concurrency (waiting for the CPU "
            "included); CPU: each call's own cost.")  # fmt: skip
    return Note("retrieval", head, runs)


def ties_note(report: Report, digits: int = 4) -> Note | None:
    """Per run with tied scores, how far every order of its tied documents can move each
    metric (``summary[run][metric]["tie_low"/"tie_high"]``, from ``compare``): the first
    metric that moves on the run's line, all of them in the details."""
    runs, details, unbounded = [], [], []
    spans = "overlap" in (report.metadata.get("options") or {})  # a report on span labels
    for r in report.runs:
        moved = []
        for m in report.metrics:
            s = report.summary[r][m]
            lo, hi = s.get("tie_low"), s.get("tie_high")
            if lo is not None and hi is not None and hi - lo > 1e-12:
                count = report.aggregations.get(m) == "sum"
                moved.append(f"{m} {fmt(lo, digits, count)} to {fmt(hi, digits, count)}")
        if moved:
            runs.append(f"{r}: {moved[0]}" + _more(len(moved) - 1))
            details.append(f"{r}: " + ", ".join(moved))
        elif spans and (report.counts.get(r) or {}).get("tied_documents"):
            n = report.counts[r]["tied_documents"]
            unbounded.append(f"{r}: {n:,} chunks with tied scores, scored in one order of them")
    if not runs and not unbounded:
        return None
    if not runs:
        return Note("ties", "Tied chunks keep one order (the range over every order is not "
                    "computed on span labels):", unbounded)  # fmt: skip
    return Note("ties", "Over every order of each run's tied documents:", runs + unbounded,
                details + unbounded)  # fmt: skip


def holes_note(report: Report, digits: int = 4) -> Note | None:
    """Per run that retrieved unjudged documents, each metric scored with them as
    relevant and on the judged-only list (``summary[run][metric]["as_relevant"/
    "judged_only"]``, ``metadata["holes"]``, from ``compare``): the range that labelling
    them could still move the metric in, and the queries with the most of them."""
    meta = report.metadata.get("holes") or {}
    runs, details = [], []
    for r in report.runs:
        info = meta.get(r)
        if not isinstance(info, dict):
            continue
        moved = []
        for m in report.metrics:
            s = report.summary[r][m]
            up, cond = s.get("as_relevant"), s.get("judged_only")
            count = report.aggregations.get(m) == "sum"
            shown = [f"{fmt(up, digits, count)} if relevant"] if up is not None else []
            if cond is not None:
                shown.append(f"{fmt(cond, digits, count)} judged only")
            moved.append(f"{m} {fmt(s.get('value'), digits, count)} ({', '.join(shown)})")
        head = f"{r}: {info.get('unjudged')} unjudged"
        runs.append(f"{head}; {moved[0]}" + _more(len(moved) - 1) if moved else head)
        worst = info.get("worst_queries") or []
        where = ", ".join(f"{n} in query {q}" for q, n in worst[:5])
        details.append(
            f"{head}: " + "; ".join(moved)
            + (f". Most in the top {info.get('depth')}: {where}" if where else "")
        )  # fmt: skip
    if not runs:
        return None
    return Note(
        "unjudged",
        "Unjudged documents count as non-relevant; labels could move each metric to its "
        "value with them relevant or judged only:",
        runs,
        details,
    )


def power_note(report: Report, digits: int = 3) -> Note | None:
    """The smallest difference each metric's test detects with 80% power (from
    ``compare``: ``metadata["power"]``)."""
    pw = report.metadata.get("power") or {}
    mdes = {m: v for m, v in (pw.get("mde") or {}).items() if v is not None and math.isfinite(v)}
    if not mdes:
        return None
    span = pw.get("span") or {}
    # a detectable difference wider than the metric's whole range is no difference at all
    beyond = [m for m, v in mdes.items() if span.get(m) is not None and v >= span[m]]
    shown = ", ".join(f"{m} {v:.{digits}f}" for m, v in mdes.items() if m not in beyond)
    lead = f"Power: with {pw.get('n')} queries "
    if not shown:
        return Note(
            "power",
            f"{lead}no difference within the range of {', '.join(beyond)} is detected 80% "
            f"of the time (alpha {pw.get('alpha')}, two-sided): too few queries to tell runs "
            "apart.",
        )
    tail = f"; {', '.join(beyond)}: none within its range (too few queries)" if beyond else ""
    return Note(
        "power",
        f"{lead}a difference is detected 80% of the time (alpha {pw.get('alpha')}, "
        f"two-sided) from about: {shown}{tail}.",
    )


def estimate_note(report: Report, digits: int = 3) -> Note | None:
    """An estimate without full labels attached to the report (``metadata["estimate"]``,
    :meth:`ranklens.estimation.EstimateResult.attach`): per run, each metric's judge-only value
    beside the calibrated PPI++ one, with intervals."""
    e = report.metadata.get("estimate") or {}
    rows = [r for r in e.get("rows", []) if r.get("kind") == "run"]
    if not rows:
        return None

    def iv(d: Mapping[str, float]) -> str:
        return f"{d['value']:.{digits}f} [{d['lo']:.{digits}f}, {d['hi']:.{digits}f}]"

    runs = [
        f"{r['target']} {r['metric']}: judge only {iv(r['naive'])}, PPI++ {iv(r['ppi++'])}"
        for r in rows
    ]
    return Note(
        "estimate",
        f"Estimated without full labels ({e.get('n')} human-labelled queries calibrating "
        f"{(e.get('judge') or {}).get('source')} on {e.get('N')} more; "
        f"{e.get('confidence', 0.95):.0%} intervals):",
        runs,
    )


def targets_note(report: Report, digits: int = 4) -> Note | None:
    """Each run's verdicts against the profile's targets (``compare(..., profile=...)``):
    met, missed or not yet known, on one line per run; the bounds, the queries that would
    settle each and the level and methods of the bounds in the details."""
    verdicts = report.target_verdicts
    if not verdicts:
        return None
    saved = report.metadata.get("targets") or {}
    name = (saved.get("profile") or {}).get("name", "targets")
    runs, details = [], []
    for run, vs in verdicts.items():
        short, shown = [], []
        for v in vs:
            more = f"; about {v.further:,} more queries would settle it" if v.further else ""
            beyond = v.attainable is not None and v.reason().startswith("cannot")
            more = f"; {v.reason()}" if beyond else more
            short.append(f"{v.metric} {v.op} {v.target:g} {v.word}")
            shown.append(
                f"{v.metric} {v.op} {v.target:g} {v.word} ({fmt(v.value, digits)}, bounds "
                f"[{fmt(v.lower, digits)}, {fmt(v.upper, digits)}]{more})"
            )
        runs.append(f"{run}: " + ", ".join(short))
        details.append(f"{run}: " + "; ".join(shown))
    first = next(iter(verdicts.values()))
    method = first[0].summary([v for vs in verdicts.values() for v in vs]) if first else ""
    return Note("targets", f"Targets of profile {name} ({method}):", runs, details)


def _more(n: int) -> str:
    return f" (and {n} more {'metric' if n == 1 else 'metrics'})" if n > 0 else ""


def notes(report: Report) -> list[Note]:
    """Every note of a report, in order: significance and intervals, what judging counted,
    the retrieval time of runs from the runner, the range over tie orders, the unjudged
    documents, the power and an estimate without full labels."""
    found = (significance_note(report), counts_note(report), retrieval_note(report),
             ties_note(report),
             holes_note(report), power_note(report), estimate_note(report),
             targets_note(report))  # fmt: skip
    return [n for n in found if n is not None]


def report_notes(report: Report, details: bool = False) -> list[str]:
    """The notes as lines (a head, then one indented line per run; the details too when
    ``details``): what the terminal, Markdown and LaTeX renderers print."""
    return [line for n in notes(report) for line in n.lines(details)]


def has_details(report: Report) -> bool:
    """Whether any note has more to show than its short lines."""
    return any(n.details for n in notes(report))
