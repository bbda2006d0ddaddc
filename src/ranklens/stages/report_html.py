"""The stage evaluation as a self-contained HTML page: the waterfall chart (inline SVG), the
stage and loss tables, and the per-query drill-down (:mod:`.report` computes the numbers and
the text renderings; this module lays them out as HTML).

User text goes through :func:`ranklens.escape.html`; the page's script never builds markup
from data, loads nothing from the network, and the chart and tables read without it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..declared import AT_LEAST_ONE, count, declare, flag, text
from ..escape import html as esc
from ..judging.stages import FATES
from ..render import asset, styled, svg
from ..text import clip
from .report import (
    COLORS,
    CONTEXT,
    DROPS,
    EVALUATION,
    FOUND,
    LOSS_HEADER,
    StageResult,
    fates_shown,
    loss_cells,
    notes,
    rank_text,
    stage_cells,
    stage_header,
    waterfall,
)

HTML = declare("StageEvaluation.to_html", {
    "ev": EVALUATION,
    "title": text(None, "the page's title (None: the pipeline's name)", none=True),
    "fragment": flag(False, "a <div> for notebooks instead of a whole page"),
    "max_queries": count(2000, AT_LEAST_ONE, "queries in the drill-down (those with the most "
                         "units lost first)"),
})  # fmt: skip
_ids = itertools.count(1)


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
    fates = fates_shown(ev)
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
        ranks = "".join(f"<td>{esc(rank_text(r))}</td>" for r in u["ranks"].values())
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
    return asset("report.js")


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
    noted = "".join(f'<p class="note">{esc(n)}</p>' for n in notes(ev))
    losses = (
        "<h2>Change per transition</h2>" + _html_table(LOSS_HEADER, loss_cells(ev, 4))
        if ev.losses else ""
    )  # fmt: skip
    body = (
        f'<div class="rl-stages" id="{uid}"><style>{CSS}</style>'
        f'<h1>{esc(title)}</h1><p class="meta">{esc(chain)}</p>'
        f"<h2>Stages</h2>{_html_table(stage_header(ev), stage_cells(ev, 4), 'stages')}{noted}"
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


__all__ = ["PLOT_H", "html", "waterfall_svg"]
