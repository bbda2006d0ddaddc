"""Renderers of :func:`ranklens.compare_snapshots`' outcome (its ``to_dict()``): the systems'
values per snapshot, Kendall's tau between snapshots with its interval and the swapped
pairs, and the labels whose document changed. Registered as ``snapshots_text`` and
``snapshots_markdown``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..escape import markdown, terminal
from .table_cells import fmt

HOLDS = 0.9
"""Voorhees' threshold: a tau of at least 0.9 reads as the same ranking."""


def _num(x: float | None, digits: int = 3) -> str:
    return fmt(math.nan if x is None else float(x), digits)


def _p(x: float | None) -> str:
    return "< 0.001" if x is not None and float(x) < 0.001 else _num(x)


def _verdict(row: Mapping[str, Any]) -> str:
    """``holds`` when the interval lies at or above :data:`HOLDS`, ``changes`` when it lies
    below, else ``not yet known`` (the verdicts' words elsewhere in ranklens)."""
    lo, hi, tau = row.get("low"), row.get("high"), row.get("tau")
    if tau is None or (isinstance(tau, float) and math.isnan(tau)):
        return "undefined (the systems tie)"
    if lo is not None and not math.isnan(lo) and lo >= HOLDS:
        return "holds"
    if hi is not None and not math.isnan(hi) and hi < HOLDS:
        return "changes"
    return "not yet known"


def _swaps(row: Mapping[str, Any]) -> str:
    parts = []
    for s in row["swaps"]:
        pa, pb = s.get("p_a"), s.get("p_b")
        parts.append(
            f"{terminal(s['better_on_a'])} > {terminal(s['better_on_b'])} on {terminal(row['a'])} "
            f"(p {_p(pa)}), < on {terminal(row['b'])} (p {_p(pb)})"
        )
    return "; ".join(parts)


def _changes(d: Mapping[str, Any], limit: int = 8) -> list[str]:
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for c in d["changed"]:
        by_pair.setdefault((c["a"], c["b"]), []).append(c)
    lines = []
    for (a, b), rows in by_pair.items():
        kinds: dict[str, int] = {}
        for c in rows:
            kinds[c["change"]] = kinds.get(c["change"], 0) + 1
        counts = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        queries = len({c["query"] for c in rows})
        lines.append(
            f"{terminal(a)} -> {terminal(b)}: {len(rows)} labels in {queries} queries point at "
            f"documents that changed ({counts})"
        )
        for c in rows[:limit]:
            lines.append(
                f"  query {terminal(c['query'])}: {terminal(c['doc'])} (grade {c['grade']}) "
                f"{c['change']}"
            )
        if len(rows) > limit:
            lines.append(f"  ... {len(rows) - limit} more (to_dict()['changed'])")
    return lines


def snapshots_text(d: Mapping[str, Any]) -> str:
    """Plain text: a table per metric (systems x snapshots), then tau per pair of
    snapshots, the swaps and the changed labels."""
    out = []
    width = max(len(terminal(s)) for s in d["systems"]) + 2
    conf = round(100 * d["settings"]["confidence"])
    for m in d["metrics"]:
        out.append(terminal(m))
        out.append(" " * width + "".join(f"{terminal(s):>14}" for s in d["snapshots"]))
        for sys in d["systems"]:
            vals = "".join(f"{_num(d['values'][s][sys][m], 4):>14}" for s in d["snapshots"])
            out.append(f"{terminal(sys):<{width}}{vals}")
        for row in (r for r in d["agreement"] if r["metric"] == m):
            pair = f"{terminal(row['a'])} vs {terminal(row['b'])}"
            line = (
                f"  {pair}: Kendall's tau {_num(row['tau'], 2)} "
                f"[{_num(row['low'], 2)}, {_num(row['high'], 2)}] ({conf}% bootstrap over "
                f"{row['n']} queries): the ranking {_verdict(row)}"
            )
            out.append(line)
            if row["swaps"]:
                out.append(f"    swapped: {_swaps(row)}")
        out.append("")
    if d["changed"]:
        out.extend(_changes(d))
    elif d["settings"].get("corpora"):
        out.append("No label points at a document that changed between the snapshots.")
    return "\n".join(out).rstrip() + "\n"


def snapshots_markdown(d: Mapping[str, Any]) -> str:
    """Markdown: one table of values (a row per system, a column per snapshot and metric),
    one of tau per pair of snapshots and metric, and the changed labels."""
    cols = [(s, m) for m in d["metrics"] for s in d["snapshots"]]
    head = "| system | " + " | ".join(markdown(f"{m} ({s})") for s, m in cols)
    lines = [head + " |", "|---|" + "---|" * len(cols)]
    for sys in d["systems"]:
        vals = " | ".join(_num(d["values"][s][sys][m], 4) for s, m in cols)
        lines.append(f"| {markdown(sys)} | {vals} |")
    lines += [
        "",
        "| snapshots | metric | Kendall's tau | interval | ranking | swapped |",
        "|---|---|---|---|---|---|",
    ]
    for row in d["agreement"]:
        pair = markdown(f"{row['a']} vs {row['b']}")
        lines.append(
            f"| {pair} | {markdown(row['metric'])} | {_num(row['tau'], 2)} | "
            f"[{_num(row['low'], 2)}, {_num(row['high'], 2)}] | {_verdict(row)} | "
            f"{markdown(_swaps(row)) or '–'} |"
        )
    if d["changed"]:
        lines += ["", *(f"- {markdown(x.strip())}" for x in _changes(d))]
    return "\n".join(lines) + "\n"
