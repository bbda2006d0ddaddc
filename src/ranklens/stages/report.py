"""A stage evaluation shown: a terminal table, Markdown, and a self-contained HTML page with
the waterfall chart and the per-query drill-down.

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
import itertools
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol

import numpy as np

from ..declared import AT_LEAST_ONE, Range, count, data, declare, flag, text
from ..escape import html as esc
from ..escape import markdown as md
from ..escape import terminal as term
from ..judging.stages import FATES, Attribution
from ..render import svg
from ..render.html import styled
from ..render.table_cells import fmt, fmt_p
from ..settings import Statistics
from ..text import clip


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
HTML = declare("StageEvaluation.to_html", {
    "ev": EVALUATION,
    "title": text(None, "the page's title (None: the pipeline's name)", none=True),
    "fragment": flag(False, "a <div> for notebooks instead of a whole page"),
    "max_queries": count(2000, AT_LEAST_ONE, "queries in the drill-down (those with the most "
                         "units lost first)"),
})  # fmt: skip
QUERY = declare("StageEvaluation.query_text", {
    "ev": EVALUATION,
    "query_id": text(None, "the query whose relevant units are shown"),
})  # fmt: skip

FOUND, OUTSIDE = FATES.index("found"), FATES.index("outside the budget")
"""The fate codes the renderers read (:attr:`Attribution.fate` indexes :data:`FATES`)."""
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
_ids = itertools.count(1)


@dataclass(frozen=True)
class Step:
    """One column of the waterfall: at ``place`` (a stage, or ``"context"``), ``before`` and
    ``held`` (mean shares of relevant units held, over queries with one), ``drops`` (the
    share dropped here by what happened: :data:`DROPS`) and ``added`` (the share brought);
    ``held = before − Σ drops + added`` up to rounding."""

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
    kept = getattr(att, "kept", None)
    start = 1.0 if has.any() else 0.0
    steps = [
        Step(ev.stages[0], start, share(present[:, 0]), {NOT_RETRIEVED: share(~present[:, 0])}, 0.0)
    ]
    for s in range(1, len(ev.stages)):
        dropped = present[:, s - 1] & ~present[:, s]
        room = att.lens[att.unit_q, s]
        if kept is not None:  # the deepest rank at s-1 of a document s kept
            room = np.maximum(room, kept[att.unit_q, s])
        cut = dropped & (att.rank[:, s - 1] > room)
        steps.append(Step(
            ev.stages[s], steps[-1].held, share(present[:, s]),
            {"cut by rank": share(cut), "filtered": share(dropped & ~cut)},
            share(present[:, s] & ~present[:, s - 1]),
        ))  # fmt: skip
    if ev.budget and att.cutoff is not None:
        steps.append(Step(
            CONTEXT, steps[-1].held, share(att.fate == FOUND),
            {"outside the budget": share(att.fate == OUTSIDE)}, 0.0,
        ))  # fmt: skip
    return steps


# ---------------------------------------------------------------------------- the numbers
def _fates_shown(ev: StageResult) -> list[str]:
    """The fate columns of the stage table: every loss, "outside the budget" with a budget."""
    return [f for f in FATES if f != "found" and (ev.budget or f != "outside the budget")]


def _has_latency(ev: StageResult) -> bool:
    return any(ev.latency.get(s) for s in ev.stages)


def _stage_header(ev: StageResult) -> list[str]:
    head = ["stage", *ev.metrics, "held", *_fates_shown(ev), "added"]
    return head + (["p50 ms", "p95 ms"] if _has_latency(ev) else [])


def _stage_cells(ev: StageResult, digits: int) -> list[list[str]]:
    """The stage table's cells (user text raw: each renderer escapes it)."""
    rows = []
    latency = _has_latency(ev)
    for row in ev.table_rows():
        cells = [str(row["stage"])]
        cells += [fmt(row["metrics"][m], digits) if m in row["metrics"] else "–"
                  for m in ev.metrics]  # fmt: skip
        cells.append(fmt(row["held"], digits))
        cells += [str(row["lost"].get(f, 0)) for f in _fates_shown(ev)]
        cells.append(str(row["added"]))
        if latency:
            lat = row["latency"] or {}
            cells += [fmt(lat.get("p50", math.nan), 1), fmt(lat.get("p95", math.nan), 1)]
        rows.append(cells)
    return rows


LOSS_HEADER = ["transition", "held before", "held after", "Δ", "interval", "p",
               "units lost", "added", "queries"]  # fmt: skip


def _loss_cells(ev: StageResult, digits: int) -> list[list[str]]:
    return [
        [f"{loss.before} → {loss.stage}", fmt(loss.held_before, digits),
         fmt(loss.held_after, digits), f"{loss.delta:+.{digits}f}",
         f"[{fmt(loss.ci_low, digits)}, {fmt(loss.ci_high, digits)}]", fmt_p(loss.p_value),
         str(loss.units_lost), str(loss.units_added), str(loss.queries)]
        for loss in ev.losses
    ]  # fmt: skip


def _notes(ev: StageResult) -> list[str]:
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
    head = _stage_header(ev)
    title = f"{ev.name}: " + " → ".join(ev.stages) + (f" → {CONTEXT}" if ev.budget else "")
    table = Table(title=Text(term(title)), caption=Text("\n".join(term(n) for n in _notes(ev))),
                  caption_justify="left")  # fmt: skip
    for i, h in enumerate(head):
        table.add_column(Text(term(h)), justify="left" if i == 0 else "right", no_wrap=i > 0)
    fates = set(_fates_shown(ev))
    for cells in _stage_cells(ev, digits):
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
        for loss, cells in zip(ev.losses, _loss_cells(ev, digits)):
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
    lines += _md_table(_stage_header(ev), _stage_cells(ev, digits))
    if ev.losses:
        lines += ["", *_md_table(LOSS_HEADER, _loss_cells(ev, digits))]
    lines += ["", *(f"- {md(n)}" for n in _notes(ev))]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- one query
def _rank(r: int | None) -> str:
    return "–" if r is None else f"#{r}"


@QUERY.checks
def query_text(ev: StageResult, query_id: str) -> str:
    """One query's drill-down as text: each relevant unit's rank at every stage and its
    fate (:meth:`StageEvaluation.query`), a line each."""
    units = ev.query(query_id)
    head = f"query {query_id}: {len(units)} relevant unit{'s' if len(units) != 1 else ''}"
    lines = [term(head)]
    for u in units:
        path = "  ".join(f"{s} {_rank(r)}" for s, r in u["ranks"].items())
        where = f" at {u['where']}" if u["where"] else ""
        lines.append(term(f"  {u['unit']} (grade {u['grade']}): {path}  -> {u['fate']}{where}"))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- HTML
PLOT_H = svg.H - svg.TOP - svg.BOTTOM
"""The chart's plot height in pixels: a share v is a bar ``v * PLOT_H`` tall."""


def waterfall_svg(ev: StageResult) -> str:
    """The waterfall as an inline SVG chart (see :func:`waterfall`): per place a bar of
    the share held (``rect.held``, ``data-stage``; the part the stage added on its top,
    ``rect.added``), before it the drop from the previous level stacked by what happened
    (``rect.drop``, ``data-fate``), a dashed step from one level to the next."""
    steps = waterfall(ev)
    body, y = svg.y_axis(0.0, 1.0, "share of relevant units held")
    n = len(steps)
    slot = (svg.W - svg.LEFT - svg.RIGHT) / n
    chars = max(int(slot / 6.5), 4)
    used: set[str] = set()

    def rect(cls: str, x: float, top: float, bottom: float, w: float, fill: str, tip: str,
             attrs: str = "") -> str:  # fmt: skip
        y0, y1 = y(top), y(bottom)
        return (
            f'<rect class="{cls}"{attrs} x="{x:.2f}" y="{y0:.2f}" width="{w:.2f}" '
            f'height="{y1 - y0:.2f}" fill="{fill}"><title>{esc(tip)}</title></rect>'
        )

    for i, st in enumerate(steps):
        x0 = svg.LEFT + slot * i
        dx, dw = x0 + 0.08 * slot, 0.3 * slot
        bx, bw = x0 + 0.44 * slot, 0.46 * slot
        level = st.before
        for fate in DROPS:
            v = st.drops.get(fate, 0.0)
            if v <= 0:
                continue
            used.add(fate)
            tip = f"{st.place}: {fate} {v:.4f} of the relevant units"
            body.append(rect("drop", dx, level, level - v, dw, COLORS[fate], tip,
                             f' data-stage="{esc(st.place)}" data-fate="{esc(fate)}" '
                             f'data-value="{v!r}"'))  # fmt: skip
            level -= v
        body.append(
            f'<line class="step" x1="{x0 - 0.54 * slot if i else x0:.2f}" x2="{dx + dw:.2f}" '
            f'y1="{y(st.before):.2f}" y2="{y(st.before):.2f}" stroke="#444" '
            'stroke-dasharray="3 2"/>'
        )
        tip = f"{st.place}: held {st.held:.4f} of the relevant units (mean over queries)"
        body.append(rect("held", bx, st.held, 0.0, bw, COLORS["held"], tip,
                         f' data-stage="{esc(st.place)}" data-held="{st.held!r}"'))  # fmt: skip
        if st.added > 0:
            used.add("added")
            tip = f"{st.place}: added {st.added:.4f} of the relevant units"
            attrs = f' data-stage="{esc(st.place)}" data-value="{st.added!r}"'
            body.append(
                rect("added", bx, st.held, st.held - st.added, bw, COLORS["added"], tip, attrs)
            )
        body.append(
            f'<text x="{bx + bw / 2:.2f}" y="{y(st.held) - 4:.2f}" class="tick" '
            f'text-anchor="middle">{st.held:.2f}</text>'
            f'<text x="{x0 + slot / 2:.2f}" y="{svg.H - svg.BOTTOM + 16}" class="tick" '
            f'text-anchor="middle"><title>{esc(st.place)}</title>'
            f"{esc(clip(st.place, chars))}</text>"
        )
    legend = [("held", COLORS["held"])] + [(f, COLORS[f]) for f in (*DROPS, "added") if f in used]
    title = f"{ev.name}: relevant units held, stage by stage"
    return svg.frame(title, body, "waterfall", legend, solid=True)


def _thead(head: Sequence[str], left: Sequence[int] = (0,)) -> str:
    """A table's head row, the columns ``left`` aligned left (text), the others right."""
    th = "".join(
        f'<th class="{"t" if i in left else ""}">{esc(h)}</th>' for i, h in enumerate(head)
    )
    return f"<thead><tr>{th}</tr></thead>"


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    trs = "".join(
        "<tr>" + "".join(f'<td class="{"t" if i == 0 else ""}">{esc(c)}</td>'
                         for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )  # fmt: skip
    return f'<table class="{cls}">{_thead(head)}<tbody>{trs}</tbody></table>'


def _waterfall_table(ev: StageResult) -> str:
    steps = waterfall(ev)
    shown = [f for f in DROPS if any(st.drops.get(f, 0) > 0 for st in steps)]
    head = ["place", "held before", *shown, "added", "held"]
    rows = [[st.place, f"{st.before:.4f}", *(f"{st.drops.get(f, 0.0):.4f}" for f in shown),
             f"{st.added:.4f}", f"{st.held:.4f}"] for st in steps]  # fmt: skip
    return _html_table(head, rows, "waterfall")


def _query_rows(ev: StageResult, max_queries: int) -> tuple[list[int], int]:
    """The queries of the drill-down (indices into the attribution's queries): those with a
    relevant unit, the most units lost first, at most ``max_queries``; and how many there
    are in all."""
    att = ev.attribution
    R = np.bincount(att.unit_q, minlength=len(att.query_ids))
    lost = np.bincount(att.unit_q[att.fate != FOUND], minlength=len(att.query_ids))
    with_units = np.flatnonzero(R > 0)
    order = with_units[np.argsort(-lost[with_units], kind="stable")]
    return [int(i) for i in order[:max_queries]], len(with_units)


def _drill(ev: StageResult, uid: str, max_queries: int) -> str:
    """The per-query drill-down: a sortable, filterable list of the queries, and each
    query's relevant units (rank per stage, fate) in a ``<details>`` section."""
    att = ev.attribution
    per = att.per_query()
    held = att.recall()
    places = [*ev.stages, *([CONTEXT] if ev.budget and att.cutoff is not None else [])]
    fates = _fates_shown(ev)
    shown, total = _query_rows(ev, max_queries)
    head = ["query", "relevant", *(f"held at {p}" for p in places), "found", *fates]
    rows, trails = [], []
    for i in shown:
        qid = str(att.query_ids[i])
        units = ev.query(qid)
        codes = sorted({FATES.index(u["fate"]) for u in units})
        where = sorted({places.index(u["where"]) for u in units if u["where"] in places})
        lost = ["lost"] if any(c != FOUND for c in codes) else []
        marks = [*(f"fate:{c}" for c in codes), *(f"at:{w}" for w in where), *lost]
        tags = "|" + "|".join(marks) + "|"
        cells = [
            f'<td class="t qlink"><a href="#{uid}-q{i}">{esc(qid)}</a></td>',
            f'<td data-v="{int(per["relevant"][i])}">{int(per["relevant"][i])}</td>',
        ]
        cells += [f'<td data-v="{held[i, s]!r}">{held[i, s]:.3f}</td>' for s in range(len(places))]
        cells += [f'<td data-v="{int(per[f][i])}">{int(per[f][i])}</td>' for f in ("found", *fates)]
        rows.append(f'<tr class="qrow" data-i="{i}" data-q="{esc(qid)}" data-tags="{tags}">'
                    + "".join(cells) + "</tr>")  # fmt: skip
        trails.append(_trail(ev, uid, i, qid, units))
    options = [
        '<option value="">every query</option>',
        '<option value="lost">with a relevant unit lost</option>',
    ]
    options += [
        f'<option value="fate:{FATES.index(f)}">with a unit {esc(f)}</option>'
        for f in FATES
        if f in ("found", *fates)
    ]
    options += [f'<option value="at:{s}">with a unit lost at {esc(p)}</option>'
                for s, p in enumerate(places)]  # fmt: skip
    capped = (
        f'<p class="note">The {len(shown)} quer{"y" if len(shown) == 1 else "ies"} with the '
        "most relevant units lost, of "
        f"{total} with a relevant unit (to_html(max_queries=...) shows more).</p>"
        if len(shown) < total else ""
    )  # fmt: skip
    return (
        '<h2>Queries</h2><p class="note">Each query with a relevant unit: how many it has, the '
        "share each stage holds and their fates. Click a query (or follow its link) for its "
        "units' ranks at every stage.</p>"
        '<div class="stage-nav"><label>Filter <input type="search" class="stage-filter" '
        'placeholder="query id" autocomplete="off"></label> '
        f'<select class="fate-filter" aria-label="fate">{"".join(options)}</select> '
        f'<span class="shown-count">{len(shown)} of {len(shown)} queries</span></div>'
        f"{capped}"
        f'<div class="scroll"><table class="sortable queries">{_thead(head)}'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<div class="trails">{"".join(trails)}</div>'
    )


def _trail(ev: StageResult, uid: str, i: int, qid: str, units: list[dict[str, Any]]) -> str:
    lost = sum(u["fate"] != "found" for u in units)
    head = ["unit", "grade", *ev.stages, "fate", "where"]
    trs = []
    for u in units:
        ranks = "".join(f"<td>{esc(_rank(r))}</td>" for r in u["ranks"].values())
        cls = "found" if u["fate"] == "found" else "lost"
        trs.append(
            f'<tr class="{cls}"><td class="t unit">{esc(u["unit"])}</td>'
            f'<td>{esc(u["grade"])}</td>{ranks}<td class="t fate">{esc(u["fate"])}</td>'
            f'<td class="t">{esc(u["where"] or "")}</td></tr>'
        )
    return (
        f'<details class="trail" id="{uid}-q{i}" data-i="{i}" data-q="{esc(qid)}">'
        f'<summary><span class="doc">{esc(qid)}</span>: {len(units)} relevant, {lost} lost'
        f"</summary><table>{_thead(head, (0, len(head) - 2, len(head) - 1))}"
        f"<tbody>{''.join(trs)}</tbody>"
        "</table></details>"
    )


CSS = (
    ".rl-stages .stage-nav{display:flex;gap:10px;align-items:center;margin:.4em 0}"
    ".rl-stages .stage-nav input,.rl-stages .stage-nav select{font:inherit}"
    ".rl-stages details.trail{margin:.3em 0;border-left:3px solid #ccc;padding-left:8px}"
    ".rl-stages details.trail summary{cursor:pointer}"
    ".rl-stages details.trail[open]{border-left-color:#0a58ca}"
    ".rl-stages tr.lost td.fate{color:#b3261e}.rl-stages tr.found td.fate{color:#137333}"
    ".rl-stages td.unit,.rl-stages .doc{font-family:ui-monospace,monospace;"
    "overflow-wrap:anywhere;unicode-bidi:isolate}"
    ".rl-stages tr.qrow{cursor:pointer}.rl-stages tr.qrow.selected{background:#e3ecfb}"
)

SCRIPT = """(function(root){
  var input = root.querySelector('input.stage-filter');
  var select = root.querySelector('select.fate-filter');
  var count = root.querySelector('.shown-count');
  var rows = Array.prototype.slice.call(root.querySelectorAll('tr.qrow'));
  var trails = {};
  root.querySelectorAll('details.trail').forEach(function(d){
    trails[d.getAttribute('data-i')] = d;
  });
  function apply(){
    var t = input.value.trim().toLowerCase(), f = select.value, n = 0;
    rows.forEach(function(r){
      var ok = (!t || r.getAttribute('data-q').toLowerCase().indexOf(t) >= 0) &&
               (!f || r.getAttribute('data-tags').indexOf('|' + f + '|') >= 0);
      r.classList.toggle('hidden', !ok);
      trails[r.getAttribute('data-i')].classList.toggle('hidden', !ok);
      if (ok) n += 1;
    });
    count.textContent = n + ' of ' + rows.length + ' queries';
  }
  input.addEventListener('input', apply);
  select.addEventListener('change', apply);
  rows.forEach(function(r){
    r.addEventListener('click', function(ev){
      rows.forEach(function(o){ o.classList.remove('selected'); });
      r.classList.add('selected');
      var d = trails[r.getAttribute('data-i')];
      d.classList.remove('hidden');
      d.open = true;
      if (ev.target.tagName !== 'A') { d.scrollIntoView({block: 'nearest'}); }
    });
  });
})(document.getElementById(ROOT_ID));"""
"""The drill-down's filter and click (no markup is built from data)."""


def _report_js() -> str:
    """The HTML report's script (sortable tables), read from the render floor's assets."""
    return (resources.files("ranklens.render") / "assets" / "report.js").read_text("utf-8")


@HTML.checks
def html(
    ev: StageResult, title: str | None = None, fragment: bool = False, max_queries: int = 2000
) -> str:
    """The stage evaluation as one self-contained HTML page: the stage table, the waterfall
    (inline SVG, with its numbers as a table), the losses, and the per-query drill-down
    (filter by query id or fate, sort by any column, click a query for its units); with
    ``fragment``, the same as one ``<div>`` for a notebook."""
    uid = f"rl-stages-{next(_ids)}"
    title = title or f"ranklens stages: {ev.name}"
    chain = " → ".join([*ev.stages, *([CONTEXT] if ev.budget else [])])
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in _notes(ev))
    losses = (
        "<h2>Change per transition</h2>" + _html_table(LOSS_HEADER, _loss_cells(ev, 4))
        if ev.losses else ""
    )  # fmt: skip
    body = (
        f'<div class="rl-stages" id="{uid}"><style>{CSS}</style>'
        f'<h1>{esc(title)}</h1><p class="meta">{esc(chain)}</p>'
        f"<h2>Stages</h2>{_html_table(_stage_header(ev), _stage_cells(ev, 4), 'stages')}{notes}"
        f'<h2>Waterfall</h2><div class="charts">{waterfall_svg(ev)}</div>'
        f"{_waterfall_table(ev)}"
        '<p class="note">From all relevant units (1) to what each stage holds: each drop is '
        "split by what happened there; a rise is what a stage added. Shares are means over "
        "the queries with a relevant unit.</p>"
        f"{losses}{_drill(ev, uid, max_queries)}"
        f"<script>(function(ROOT_ID){{\n{_report_js()}\n{SCRIPT}}})({json.dumps(uid)});"
        "</script></div>"
    )
    if fragment:
        return styled(body)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title></head><body>{styled(body)}</body></html>\n"
    )


__all__ = [
    "DROPS",
    "StageResult",
    "Step",
    "html",
    "markdown",
    "query_text",
    "terminal",
    "waterfall",
    "waterfall_svg",
]
