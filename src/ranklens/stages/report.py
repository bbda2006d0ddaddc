"""A stage evaluation shown: the numbers every rendering reads (the stage table's cells, the
losses, the waterfall's columns), the terminal table, Markdown and one query's path as text;
the HTML page with the waterfall chart and the per-query drill-down is :mod:`.report_html`.

Every rendering shows the same numbers, read from the :class:`StageEvaluation` and never
recomputed apart:

* per stage (and the context, with a budget): each metric's mean, ``held`` (the mean over
  queries with a relevant unit of the share of its relevant units the stage's list holds,
  ``H_s = mean_q |{u in R_q : u in L_{q,s}}| / |R_q|``), the relevant units whose fate
  happened there (:data:`~ranklens.judging.stages.FATES`), the units it added, latency;
* per transition, the recall lost (:class:`~ranklens.stages.StageLoss`): ``Δ = H_s −
  H_{s−1}`` with its interval and corrected p-value;
* the **waterfall** (:func:`waterfall`): from all relevant units (1) down to what the last
  stage (or the context) holds, each transition's drop split by what happened there,
  ``H_s = H_{s−1} − cut_s − filtered_s + added_s`` per query and so in the mean
  (``cut_s``: the share present at s−1 at a rank r, absent at s, with r beyond both stage
  s's list length n_s and m_s, the deepest rank at s−1 of a document s kept: the rule of
  :mod:`ranklens.judging.stages`; ``filtered_s``: the other units absent at s; ``added_s``:
  absent at s−1, present at s; for the context, ``outside the budget``; for the first
  stage, what it did not retrieve). A unit
  dropped and brought back later is in both a drop and a rise here, while the fates count it
  at its last loss only.

User text (the pipeline's and stages' names, metric names, query ids, labels) goes through
:mod:`ranklens.escape`: :func:`~ranklens.escape.terminal` into rich ``Text`` (never read as
markup), :func:`~ranklens.escape.markdown` into table cells, :func:`~ranklens.escape.html`
into the page; the page's script never builds markup from data (it only hides rows, opens
a query's section and sorts tables with the report's own script). The page loads nothing
from the network and its chart and tables read without JavaScript.
"""

from __future__ import annotations

import io
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..declared import Range, count, data, declare, flag, text
from ..escape import markdown as md
from ..escape import terminal as term
from ..judging.stages import FATES, Attribution
from ..render import fmt, fmt_p, svg
from ..settings import Statistics


class StageResult(Protocol):
    """What the renderers read of a :class:`~ranklens.stages.StageEvaluation` (named here
    so that this module need not import the one whose methods call it)."""

    name: str
    stages: tuple[str, ...]
    evaluations: dict[str, Any]
    attribution: Attribution
    losses: tuple[Any, ...]
    latency: dict[str, dict[str, float]]
    counts: dict[str, dict[str, int]]
    budget: str | None
    straddle: str
    stats: Statistics

    @property
    def metrics(self) -> list[str]: ...

    def table_rows(self) -> list[dict[str, Any]]: ...

    def query(self, query_id: str) -> list[dict[str, Any]]: ...


DIGITS = count(4, Range(1, 10), "decimals of the values shown")
EVALUATION = data("a StageEvaluation (ranklens.evaluate_stages)")
TERMINAL = declare("StageEvaluation.table", {
    "ev": EVALUATION,
    "digits": DIGITS,
    "color": flag(None, "colours (None: when standard output is a terminal)", none=True),
})  # fmt: skip
MARKDOWN = declare("StageEvaluation.to_markdown", {"ev": EVALUATION, "digits": DIGITS})
QUERY = declare("StageEvaluation.query_text", {
    "ev": EVALUATION,
    "query_id": text(None, "the query whose relevant units are shown"),
})  # fmt: skip

FOUND, OUTSIDE = FATES.index("found"), FATES.index("outside the budget")
"""The fate codes the renderers read (``Attribution.fate`` indexes
:data:`~ranklens.judging.stages.FATES`)."""
NOT_RETRIEVED = "not retrieved"
"""The first stage's drop in the waterfall: relevant units its list does not hold."""
DROPS = (NOT_RETRIEVED, "cut by rank", "filtered", "outside the budget")
"""The parts a waterfall's drop is split into, in the order they are stacked."""
COLORS = {
    "held": "#1f77b4",
    "added": svg.BETTER,
    NOT_RETRIEVED: "#7f7f7f",
    "cut by rank": "#ff7f0e",
    "filtered": "#d62728",
    "outside the budget": "#9467bd",
}
CONTEXT = "context"
"""The place after the last stage when a budget is given: what fits in the context."""


@dataclass(frozen=True)
class Step:
    """One column of the waterfall: at ``place`` (a stage, or ``"context"``), ``before`` and
    ``held`` (mean shares of relevant units held, over queries with one), ``drops`` (the
    share dropped here by what happened: :data:`DROPS`) and ``added`` (the share brought);
    ``held = before − Σ drops + added`` up to rounding. A stage reading several others
    (parallel retrievers fused) starts from what they held together; a first-stage
    retriever from all relevant units."""

    place: str
    before: float
    held: float
    drops: dict[str, float]
    added: float


def waterfall(ev: StageResult) -> list[Step]:
    """The waterfall's columns (see the module docstring): one per stage, and the context
    with a budget. Shares are means over the queries with a relevant unit of per-query
    shares, so ``held`` equals the stage table's and the losses' ``held_before/after``."""
    att = ev.attribution
    n_q = len(att.query_ids)
    R = np.bincount(att.unit_q, minlength=n_q)
    has = R > 0
    R_has = R[has].astype(np.float64)

    def share(mask: np.ndarray) -> float:
        if not has.any():
            return 0.0
        return float((np.bincount(att.unit_q[mask], minlength=n_q)[has] / R_has).mean())

    present = att.rank > 0
    before = att.before  # each unit's best rank in the stages a stage reads (0: none)
    kept = att.kept
    filters = att.filters
    start = 1.0 if has.any() else 0.0
    steps: list[Step] = []
    for s, stage in enumerate(ev.stages):
        if not (att.inputs or ())[s]:  # a first-stage retriever: from all relevant units
            steps.append(Step(stage, start, share(present[:, s]),
                              {NOT_RETRIEVED: share(~present[:, s])}, 0.0))  # fmt: skip
            continue
        read = before[:, s] > 0
        dropped = read & ~present[:, s]
        room = att.lens[att.unit_q, s]
        if kept is not None:  # the deepest rank in what s reads of a document s kept
            room = np.maximum(room, kept[att.unit_q, s])
        cut = dropped & (before[:, s] > room)
        if filters is not None and filters[s]:  # a declared filter: every loss filtered
            cut &= False
        steps.append(Step(
            stage, share(read), share(present[:, s]),
            {"cut by rank": share(cut), "filtered": share(dropped & ~cut)},
            share(present[:, s] & ~read),
        ))  # fmt: skip
    if ev.budget and att.cutoff is not None:
        steps.append(Step(
            CONTEXT, steps[-1].held, share(att.fate == FOUND),
            {"outside the budget": share(att.fate == OUTSIDE)}, 0.0,
        ))  # fmt: skip
    return steps


# ---------------------------------------------------------------------------- the numbers
def fates_shown(ev: StageResult) -> list[str]:
    """The fate columns of the stage table: every loss, "outside the budget" with a budget."""
    return [f for f in FATES if f != "found" and (ev.budget or f != "outside the budget")]


def has_latency(ev: StageResult) -> bool:
    return any(ev.latency.get(s) for s in ev.stages)


def stage_header(ev: StageResult) -> list[str]:
    head = ["stage", *ev.metrics, "held", *fates_shown(ev), "added"]
    return head + (["p50 ms", "p95 ms"] if has_latency(ev) else [])


def stage_cells(ev: StageResult, digits: int) -> list[list[str]]:
    """The stage table's cells (user text raw: each renderer escapes it)."""
    rows = []
    latency = has_latency(ev)
    for row in ev.table_rows():
        cells = [str(row["stage"])]
        cells += [fmt(row["metrics"][m], digits) if m in row["metrics"] else "–"
                  for m in ev.metrics]  # fmt: skip
        cells.append(fmt(row["held"], digits))
        cells += [str(row["lost"].get(f, 0)) for f in fates_shown(ev)]
        cells.append(str(row["added"]))
        if latency:
            lat = row["latency"] or {}
            cells += [fmt(lat.get("p50", math.nan), 1), fmt(lat.get("p95", math.nan), 1)]
        rows.append(cells)
    return rows


LOSS_HEADER = ["transition", "held before", "held after", "Δ", "interval", "p",
               "units lost", "added", "queries"]  # fmt: skip


def loss_cells(ev: StageResult, digits: int) -> list[list[str]]:
    return [
        [f"{loss.before} → {loss.stage}", fmt(loss.held_before, digits),
         fmt(loss.held_after, digits), f"{loss.delta:+.{digits}f}",
         f"[{fmt(loss.ci_low, digits)}, {fmt(loss.ci_high, digits)}]", fmt_p(loss.p_value),
         str(loss.units_lost), str(loss.units_added), str(loss.queries)]
        for loss in ev.losses
    ]  # fmt: skip


def notes(ev: StageResult) -> list[str]:
    """The lines under the tables: what the columns mean and what was counted."""
    q = ev.counts.get("queries", {})
    total, without = q.get("total", len(ev.attribution.query_ids)), q.get("without relevant", 0)
    lines = [
        f"{total} quer{'y' if total == 1 else 'ies'}"
        + (f", {without} without a relevant unit (left out of held and the losses)"
           if without else "")
        + (f"; context budget {ev.budget} (straddling chunk: {ev.straddle})" if ev.budget else "")
        + ".",
        "held: the mean share of each query's relevant units in the stage's list; the fate "
        "columns count relevant units where their fate happened (never retrieved: not in "
        "the first stage; cut by rank: below the stage's cut; filtered: removed while the "
        "stage kept as many documents as its rank, or one ranked below it"
        + ("; outside the budget: beyond the context's cutoff" if ev.budget else "")
        + "); added: relevant units no earlier stage had.",
    ]  # fmt: skip
    empty = [f"{s} {n}" for s in ev.stages if (n := ev.counts.get(s, {}).get("empty", 0))]
    if empty:
        lines.append("Queries with an empty list: " + ", ".join(empty) + ".")
    if ev.losses:
        st = ev.stats
        how = {"bootstrap": "percentile bootstrap", "t": "Student t"}.get(str(st.ci), "")
        corr = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}.get(
            str(st.correction), "no"
        )
        lines.append(
            "Δ: held after − held before, mean over the queries with a relevant unit"
            + (f"; {round(100 * st.confidence)}% {how} interval" if how else "")
            + f"; p: paired {st.test} test, {corr} correction over the transitions."
        )
    return lines


# ---------------------------------------------------------------------------- terminal
@TERMINAL.checks
def terminal(ev: StageResult, digits: int = 4, color: bool | None = None) -> str:
    """The stage table and the losses as text (rich tables; colours only when ``color``,
    by default when standard output is a terminal)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    color = sys.stdout.isatty() if color is None else color
    head = stage_header(ev)
    title = f"{ev.name}: " + " → ".join(ev.stages) + (f" → {CONTEXT}" if ev.budget else "")
    table = Table(title=Text(term(title)), caption=Text("\n".join(term(n) for n in notes(ev))),
                  caption_justify="left")  # fmt: skip
    for i, h in enumerate(head):
        table.add_column(Text(term(h)), justify="left" if i == 0 else "right", no_wrap=i > 0)
    fates = set(fates_shown(ev))
    for cells in stage_cells(ev, digits):
        row = [Text(term(cells[0]), style="bold")]
        for h, c in zip(head[1:], cells[1:]):
            lost = h in fates and c != "0"
            row.append(Text(c, style="red" if lost else "green" if h == "added" and c != "0"
                            else "bold" if h == "held" else ""))  # fmt: skip
        table.add_row(*row)
    width = max(100, 11 * len(head) + max(len(s) for s in [*ev.stages, CONTEXT]) + 20)
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, width=width,
                      color_system="standard" if color else None)  # fmt: skip
    console.print(table)
    if ev.losses:
        losses = Table(title="change per transition (Δ < 0: relevant units lost)")
        for i, h in enumerate(LOSS_HEADER):
            losses.add_column(h, justify="left" if i == 0 else "right", no_wrap=i > 0)
        for loss, cells in zip(ev.losses, loss_cells(ev, digits)):
            style = "red" if loss.delta < 0 else "green" if loss.delta > 0 else ""
            losses.add_row(Text(term(cells[0])), *(Text(c) for c in cells[1:]), style=style)
        console.print(losses)
    return buf.getvalue()


# ---------------------------------------------------------------------------- Markdown
def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = [
        "| " + " | ".join(md(h) for h in head) + " |",
        "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(head))) + " |",
    ]
    out += ["| " + " | ".join(md(c) for c in r) + " |" for r in rows]
    return out  # fmt: skip


@MARKDOWN.checks
def markdown(ev: StageResult, digits: int = 4) -> str:
    """The stage table, the losses and the notes as Markdown (every cell escaped)."""
    chain = " → ".join(md(s) for s in ev.stages) + (f" → {CONTEXT}" if ev.budget else "")
    lines = [f"**{md(ev.name)}**: {chain}", ""]
    lines += _md_table(stage_header(ev), stage_cells(ev, digits))
    if ev.losses:
        lines += ["", *_md_table(LOSS_HEADER, loss_cells(ev, digits))]
    lines += ["", *(f"- {md(n)}" for n in notes(ev))]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- one query
def rank_text(r: int | None) -> str:
    return "–" if r is None else f"#{r}"


@QUERY.checks
def query_text(ev: StageResult, query_id: str) -> str:
    """One query's drill-down as text: each relevant unit's rank at every stage and its
    fate (:meth:`StageEvaluation.query`), a line each."""
    units = ev.query(query_id)
    head = f"query {query_id}: {len(units)} relevant unit{'s' if len(units) != 1 else ''}"
    lines = [term(head)]
    for u in units:
        path = "  ".join(f"{s} {rank_text(r)}" for s, r in u["ranks"].items())
        where = f" at {u['where']}" if u["where"] else ""
        lines.append(term(f"  {u['unit']} (grade {u['grade']}): {path}  -> {u['fate']}{where}"))
    return "\n".join(lines) + "\n"


__all__ = [
    "COLORS",
    "CONTEXT",
    "DROPS",
    "FOUND",
    "LOSS_HEADER",
    "StageResult",
    "Step",
    "fates_shown",
    "has_latency",
    "loss_cells",
    "markdown",
    "notes",
    "query_text",
    "rank_text",
    "stage_cells",
    "stage_header",
    "terminal",
    "waterfall",
]
