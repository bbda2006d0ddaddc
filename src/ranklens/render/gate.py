"""The gate's verdicts as plain text (terminal, pytest failure messages) and as Markdown (a
PR's step summary): one row per gated metric, then the queries that regressed most. A metric
better lower (``outdated@10``) says so in its reason line, its rule reads ``rise <= m`` and
its limit ``<= c`` (a ceiling); deltas and intervals are ``now − baseline`` in its units."""

from __future__ import annotations

from ..comparison.gate import GateResult, Verdict
from ..escape import markdown as md_escape
from ..text import clip, visible

MARK = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}
ICON = {"pass": "✅ pass", "fail": "❌ fail", "inconclusive": "⚠️ inconclusive"}


def _num(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "–"
    x = round(x, 4) + 0.0  # no "-0.0000" for a difference that rounds to zero
    return f"{x:+.4f}" if signed else f"{x:.4f}"


def _interval(v: Verdict) -> str:
    if v.ci_low is None:
        return ""
    return f"[{_num(v.ci_low, True)}, {_num(v.ci_high, True)}]"


def _lower(v: Verdict) -> bool:
    """Whether the verdict's metric is better lower (a rise is its regression)."""
    return v.better == "lower"


def _limit(v: Verdict) -> str:
    """``>= 0.5`` (a floor) or ``<= 0.1`` (a ceiling), with the bound's level if confident;
    empty without one."""
    for op, value, check in ((">=", v.floor, v.floor_check), ("<=", v.ceiling, v.ceiling_check)):
        if value is not None:
            return f"{op} {value:g}" + (f" ({check['confidence']:.0%} bound)" if check else "")
    return ""


def _rule(v: Verdict) -> str:
    bits = []
    if v.margin is not None:
        bits.append(f"{'rise' if _lower(v) else 'drop'} <= {v.margin:g}")
    if _limit(v):
        bits.append(_limit(v))
    return ", ".join(bits)


def _named(v: Verdict) -> str:
    """The metric as a reason line names it: ``outdated@10 (lower is better)``."""
    return visible(v.metric) + (" (lower is better)" if _lower(v) else "")


def _headline(result: GateResult) -> str:
    n = result.verdicts[0].n if result.verdicts else 0
    queries = f"{n} {'query' if n == 1 else 'queries'}"
    s = result.settings
    if result.updated:
        limits = {"floor": [v.floor for v in result.verdicts],
                  "ceiling": [v.ceiling for v in result.verdicts]}  # fmt: skip
        kinds = [k for k, values in limits.items() if any(x is not None for x in values)]
        return (
            f"ranklens gate: baseline written to {result.baseline_path} ({queries}; "
            "nothing compared: later runs are gated against these values"
            + (f"; the {' and '.join(k + 's' for k in kinds)} checked" if kinds else "")
            + ")"
        )
    head = "gate passed" if result.passed else "gate FAILED"
    return (
        f"ranklens gate: {head} ({queries}; one-sided {s['test']} test, alpha {s['alpha']}, "
        f"Holm over metrics; intervals {round(100 * (1 - 2 * s['alpha']))}% unadjusted; "
        f"inconclusive counts as {s['inconclusive']})"
    )


def _written_rows(result: GateResult) -> list[list[str]]:
    """A written baseline's table: each metric's value, and its floor's (or ceiling's)
    verdict if any."""
    ceilings = any(v.ceiling is not None for v in result.verdicts)
    rows = [["metric", "value written", "floor or ceiling" if ceilings else "floor"]]
    for v in result.verdicts:
        limit = f"{_limit(v)}: {MARK[v.status]}" if _limit(v) else ""
        rows.append([visible(v.metric), _num(v.value), limit])
    return rows


def _aligned(rows: list[list[str]]) -> list[str]:
    """Rows as aligned text columns, a rule under the first."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def gate_text(result: GateResult) -> str:
    """Plain text: a verdict table, reasons, and the regressed queries (for a baseline
    just written: the values written and any floor's verdict)."""
    if result.updated:
        lines = [_headline(result), "", *_aligned(_written_rows(result))]
        floors = [v for v in result.verdicts if v.status == "fail"]
        lines += ["", *(f"{_named(v)}: {v.reason}" for v in floors)] if floors else []
        return "\n".join(lines) + "\n"
    rows = [["metric", "verdict", "now", "baseline", "delta", "interval", "rule", "decided by"]]
    for v in result.verdicts:
        rows.append(
            [
                visible(v.metric),
                MARK[v.status],
                _num(v.value),
                _num(v.baseline),
                _num(v.delta, True),
                _interval(v),
                _rule(v),
                v.decided_by,
            ]
        )
    lines = [_headline(result), "", *_aligned(rows), ""]
    lines += [f"{_named(v)}: {v.reason}" for v in result.verdicts]
    if result.regressions:
        lines += ["", "queries that regressed most:"]
        for r in result.regressions:
            text = f" {visible(_short(r.text))!r}" if r.text else ""
            lost = (
                f"; {_lost(result)}: " + ", ".join(visible(d) for d in r.dropped)
                if r.dropped
                else ""
            )
            lines.append(
                f"  {visible(r.query_id)}{text}  {visible(r.metric)} {r.baseline:.4f} -> "
                f"{r.now:.4f}{lost}"
            )
    return "\n".join(lines) + "\n"


def gate_markdown(result: GateResult) -> str:
    """Markdown for a pull request: verdicts, deltas with intervals, regressed queries."""
    e = md_escape
    out = [f"### {e(_headline(result))}", ""]
    if result.updated:
        rows = _written_rows(result)
        out.append("| " + " | ".join(rows[0]) + " |")
        out.append("|---|---|---|")
        out += ["| " + " | ".join(e(c) for c in r) + " |" for r in rows[1:]]
        return "\n".join(out) + "\n"
    out.append("| metric | verdict | now | baseline | delta | interval | rule | decided by |")
    out.append("|---|---|---|---|---|---|---|---|")
    for v in result.verdicts:
        out.append(
            f"| {e(visible(v.metric))} | {ICON[v.status]} | {_num(v.value)} | "
            f"{_num(v.baseline)} | {_num(v.delta, True)} | {_interval(v)} | {e(_rule(v))} | "
            f"{e(v.decided_by)} |"
        )
    out.append("")
    out += [f"- **{e(_named(v))}**: {e(v.reason)}" for v in result.verdicts]
    if result.regressions:
        out += ["", "<details><summary>Queries that regressed most</summary>", ""]
        out.append(f"| query | text | metric | baseline | now | {_lost(result)} |")
        out.append("|---|---|---|---|---|---|")
        for r in result.regressions:
            out.append(
                f"| {e(visible(r.query_id))} | {e(visible(_short(r.text or '')))} | "
                f"{e(visible(r.metric))} | {r.baseline:.4f} | {r.now:.4f} | "
                f"{e(', '.join(visible(d) for d in r.dropped))} |"
            )
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


def _lost(result: GateResult) -> str:
    """What a regressed query lost: relevant documents, or evidence spans (span labels)."""
    k = result.settings["k"]
    if result.settings.get("evidence"):
        return f"evidence no longer found in the top {k}"
    return f"dropped out of the top {k}"


def _short(text: str | None, n: int = 60) -> str:
    return clip(" ".join((text or "").split()), n)
