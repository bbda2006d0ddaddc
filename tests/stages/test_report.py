"""The stage reports: every number the terminal table, the Markdown table and the HTML
waterfall show equals an independent walk over the labels and the stages' lists; hostile
names are shown as text in every format; the page works in real Chromium (no console
error, one bar per stage, the drill-down filtered and opened)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Statistics, evaluate_stages
from ranklens.escape import html as esc
from ranklens.stages.report import markdown, query_text, terminal, waterfall
from ranklens.stages.report_html import PLOT_H, html, waterfall_svg
from ranklens.text import visible

DOCS = [f"d{i}" for i in range(12)]
TEXTS = {d: "x" * (2 + 3 * i) for i, d in enumerate(DOCS)}
"""Each document's text: a context budget counts its characters."""
STRADDLE = ("exclude", "include")
METRICS = ["recall", "ndcg@5"]
STATS = Statistics(n_resamples=200, test="t", ci="t")
SVG = "{http://www.w3.org/2000/svg}"


@st.composite
def cases(draw):
    queries = [f"q{i}" for i in range(draw(st.integers(2, 6)))]
    labels = {
        q: {
            d: draw(st.integers(0, 2))
            for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
        }
        for q in queries
    }
    stages = {
        f"s{s}": {
            q: draw(st.lists(st.sampled_from(DOCS), max_size=8, unique=True)) for q in queries
        }
        for s in range(draw(st.integers(1, 4)))
    }
    budget = draw(st.one_of(st.none(), st.tuples(st.integers(1, 40), st.sampled_from(STRADDLE))))
    return labels, stages, budget


def context_cutoff(docs, chars, straddle):
    """The ranks of ``docs`` whose texts fit ``chars`` characters together; under
    ``include`` also the one straddling the end (begun before it, ended past it)."""
    used, n = 0, 0
    for d in docs:
        if used + len(TEXTS[d]) > chars:
            return n + (straddle == "include" and used < chars)
        used += len(TEXTS[d])
        n += 1
    return n


def cut_or_filtered(prev, cur, r):
    """A unit at rank r of ``prev`` that ``cur`` left out: cut by rank when ``cur`` kept
    fewer documents than r and none that ``prev`` ranked below r, else filtered."""
    deepest = max((prev.index(d) + 1 for d in cur if d in prev), default=0)
    return "cut by rank" if r > len(cur) and r > deepest else "filtered"


def brute(labels, stages, cutoff=None):
    """The numbers a report shows, walked unit by unit: per place the mean share held and
    the shares dropped by kind and added (the waterfall), per place the units whose fate
    (their last loss) happened there. ``cutoff``: {query: rank} of a context budget."""
    names = list(stages)
    places = names + (["context"] if cutoff is not None else [])
    held = {p: [] for p in places}
    drops = {p: Counter() for p in places}
    fates = {p: Counter() for p in places}
    found = 0
    for q in sorted(labels):
        rel = [d for d, g in labels[q].items() if g >= 1]
        if not rel:
            continue
        lists = [stages[s].get(q, []) for s in names]
        n = len(rel)
        for s, L in enumerate(lists):
            held[names[s]].append(sum(d in L for d in rel) / n)
            if s == 0:
                drops[names[0]]["not retrieved"] += sum(d not in L for d in rel) / n
                continue
            prev = lists[s - 1]
            for d in rel:
                if d in prev and d not in L:
                    kind = cut_or_filtered(prev, L, prev.index(d) + 1)
                    drops[names[s]][kind] += 1 / n
                if d not in prev and d in L:
                    drops[names[s]]["added"] += 1 / n
        for d in rel:
            present = [d in L for L in lists]
            if present[-1]:
                if cutoff is not None and lists[-1].index(d) + 1 > cutoff[q]:
                    fates["context"]["outside the budget"] += 1
                else:
                    found += 1
                continue
            losses = [s for s in range(1, len(lists)) if present[s - 1] and not present[s]]
            if not losses:
                fates[names[0]]["never retrieved"] += 1
                continue
            s = losses[-1]
            kind = cut_or_filtered(lists[s - 1], lists[s], lists[s - 1].index(d) + 1)
            fates[names[s]][kind] += 1
        if cutoff is not None:
            last = lists[-1]
            inside = sum(d in last and last.index(d) + 1 <= cutoff[q] for d in rel)
            held["context"].append(inside / n)
            drops["context"]["outside the budget"] += sum(d in last for d in rel) / n - inside / n
    n_q = len(held[places[0]])
    mean_held = {p: (float(np.mean(v)) if v else 0.0) for p, v in held.items()}
    shares = {p: {k: v / n_q for k, v in c.items()} if n_q else {} for p, c in drops.items()}
    return mean_held, shares, fates, found


def md_rows(text):
    """The Markdown tables' rows as lists of unescaped cells."""
    tables, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            current.append([re.sub(r"\\(.)", r"\1", c.strip()) for c in cells])
        elif current:
            tables.append(current)
            current = []
    return tables


def term_rows(text):
    """The rich tables' rows (lines with │) as lists of cells, each table apart."""
    tables, current = [], []
    for line in text.splitlines():
        if "│" in line:
            current.append([c.strip() for c in line.split("│")[1:-1]])
        elif line.startswith("└") and current:
            tables.append(current)
            current = []
    heads = [
        [c.strip() for c in line.split("┃")[1:-1]] for line in text.splitlines() if "┃" in line
    ]
    return heads, tables


def bars(svg_text):
    """``{(class, stage, fate): height / plot height}`` of the waterfall's rectangles."""
    root = ET.fromstring(svg_text)
    out = {}
    for r in root.iter(f"{SVG}rect"):
        key = (r.get("class"), r.get("data-stage"), r.get("data-fate"))
        out[key] = float(r.get("height")) / PLOT_H
    return out


def check_stage_table(head, rows, ev, mean_held, fates):
    """A stage table (header and rows of cells) against the brute-force numbers."""
    col = {h: i for i, h in enumerate(head)}
    places = [*ev.stages, *(["context"] if ev.budget else [])]
    assert [r[0] for r in rows] == places
    for row, place in zip(rows, places):
        assert float(row[col["held"]]) == pytest.approx(mean_held[place], abs=5e-5)
        for fate in ("never retrieved", "cut by rank", "filtered", "outside the budget"):
            if fate in col:
                assert int(row[col[fate]]) == fates[place][fate], (place, fate)
        for m in ev.metrics:
            if place in ev.evaluations:
                assert float(row[col[m]]) == pytest.approx(ev.evaluations[place][m], abs=5e-5)
            else:
                assert row[col[m]] == "–"


@settings(max_examples=40, deadline=None)
@given(cases())
@example(  # d8 fills the budget exactly: d7 begins at its end, so it does not straddle it
    ({"q0": {"d7": 2}, "q1": {"d1": 1}}, {"s0": {"q0": ["d8", "d7"], "q1": ["d1"]}},
     (26, "include"))
)  # fmt: skip
def test_every_rendering_shows_the_walked_numbers(case):
    labels, stages, budget = case
    cutoff = None
    if budget is None:
        ev = evaluate_stages(labels, stages, METRICS, stats=STATS)
    else:
        chars, straddle = budget
        ev = evaluate_stages(labels, stages, METRICS, stats=STATS, budget=f"{chars}char",
                             straddle=straddle, texts=TEXTS)  # fmt: skip
        last = stages[ev.stages[-1]]
        cutoff = {q: context_cutoff(docs, chars, straddle) for q, docs in last.items()}
    mean_held, shares, fates, found = brute(labels, stages, cutoff)
    assert ev.attribution.fate_counts()["found"] == found
    # Markdown: the stage table and the losses
    tables = md_rows(markdown(ev))
    check_stage_table(tables[0][0], tables[0][2:], ev, mean_held, fates)
    if len(stages) > 1 or budget:
        losses = tables[1][2:]
        assert len(losses) == len(stages) - 1 + (budget is not None)
        for row, loss in zip(losses, ev.losses):
            assert row[0] == f"{loss.before} → {loss.stage}"
            assert float(row[1]) == pytest.approx(mean_held[loss.before], abs=5e-5)
            assert float(row[2]) == pytest.approx(mean_held[loss.stage], abs=5e-5)
            assert float(row[3]) == pytest.approx(loss.delta, abs=5e-5)
    # terminal: the same table
    heads, ttables = term_rows(terminal(ev, color=False))
    check_stage_table(heads[0], ttables[0], ev, mean_held, fates)
    # the waterfall: bar heights read back
    steps = waterfall(ev)
    got = bars(waterfall_svg(ev))
    held_bars = [k for k in got if k[0] == "held"]
    assert [k[1] for k in held_bars] == list(stages) + (["context"] if budget else [])
    for step in steps:
        assert step.held == pytest.approx(mean_held[step.place])
        assert step.before - sum(step.drops.values()) + step.added == pytest.approx(step.held)
        assert got[("held", step.place, None)] == pytest.approx(mean_held[step.place], abs=1e-4)
        want = shares[step.place]
        for kind in ("not retrieved", "cut by rank", "filtered", "outside the budget"):
            height = got.get(("drop", step.place, kind), 0.0)
            assert height == pytest.approx(want.get(kind, 0.0), abs=1e-4), (step.place, kind)
        assert got.get(("added", step.place, None), 0.0) == pytest.approx(
            want.get("added", 0.0), abs=1e-4
        )


HOSTILE_STAGE = "<script>window.__pwned_stage=1</script>"
MARKUP_STAGE = "new\nline `tick` [bold]b[/bold]"
HOSTILE_QUERY = '"><img src=x onerror="window.__pwned_query=1">|`q`'
HOSTILE_DOC = "doc|with`ticks`\nand a [bold]tag[/bold]\x1b[31m"


@pytest.fixture(scope="module")
def hostile():
    labels = {HOSTILE_QUERY: {HOSTILE_DOC: 1, "b": 1}, "plain": {"c": 1, "d": 1, "e": 1}}
    stages = {
        "bm25 | first": {HOSTILE_QUERY: [HOSTILE_DOC, "x", "b"], "plain": ["c", "d", "e", "z"]},
        HOSTILE_STAGE: {HOSTILE_QUERY: ["b"], "plain": ["d", "c", "z"]},
        MARKUP_STAGE: {HOSTILE_QUERY: ["b"], "plain": ["z", "d"]},
    }
    name = "<b>pipe</b>|line\x1b[31m"
    return evaluate_stages(labels, stages, METRICS, stats=STATS, name=name)


def test_hostile_names_are_escaped_in_markdown(hostile):
    text = markdown(hostile)
    assert "<script>" not in text and "<b>" not in text and "<img" not in text
    tables = md_rows(text)
    head = tables[0][0]
    assert all(len(r) == len(head) for r in tables[0])  # no name split a row
    assert [r[0] for r in tables[0][2:]] == [
        "bm25 | first",
        HOSTILE_STAGE,
        MARKUP_STAGE.replace("\n", " "),
    ]
    assert "\\`tick\\`" in text  # backticks escaped: no code span
    q = query_text(hostile, HOSTILE_QUERY)
    assert "\x1b" not in q and "\\x1b" in q  # the escape sequence shown, not sent


def test_hostile_names_are_text_in_the_terminal(hostile):
    out = terminal(hostile, color=False)
    assert "[bold]b[/bold]" in out  # shown, not read as markup
    assert "\x1b" not in out and "\\x1b[31m" in out  # the name's escape shown, not sent
    assert "\x1b[31m" not in query_text(hostile, HOSTILE_QUERY)
    assert HOSTILE_STAGE in out
    coloured = terminal(hostile, color=True)
    assert "\x1b[" in coloured and "[bold]b[/bold]" in coloured


def test_hostile_names_are_escaped_in_html(hostile):
    page = html(hostile)
    assert HOSTILE_STAGE not in page and "&lt;script&gt;window.__pwned_stage" in page
    assert "<img" not in page and "<b>pipe" not in page
    assert page.count("<script>") == 1  # the page's own script only
    ET.fromstring(waterfall_svg(hostile))  # the chart is well-formed XML


def _visible(driver, css):
    return [e for e in driver.find_elements("css selector", css) if e.is_displayed()]


def test_the_page_in_chromium(browser, tmp_path, hostile):
    path = tmp_path / "stages.html"
    path.write_text(html(hostile), encoding="utf-8")
    browser.get(path.as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    pwned = browser.execute_script("return [window.__pwned_stage, window.__pwned_query]")
    assert pwned == [None, None]
    assert browser.execute_script("return document.querySelectorAll('img, b').length") == 0
    # the waterfall: one bar per stage, drawn
    held = browser.find_elements("css selector", "svg.chart[data-chart=waterfall] rect.held")
    assert [r.get_attribute("data-stage") for r in held] == [visible(s) for s in hostile.stages]
    assert all(r.is_displayed() for r in held)
    body = browser.find_element("tag name", "body").text
    assert HOSTILE_STAGE in body
    # the drill-down: filter to one query, click it, its units show
    rows = _visible(browser, "tr.qrow")
    assert len(rows) == 2 and not _visible(browser, "details.trail table")
    box = browser.find_element("css selector", "input.stage-filter")
    box.send_keys("onerror")
    rows = _visible(browser, "tr.qrow")
    assert [r.get_attribute("data-q") for r in rows] == [HOSTILE_QUERY]
    assert "1 of 2 queries" in browser.find_element("css selector", ".shown-count").text
    rows[0].click()
    opened = _visible(browser, "details.trail[open]")
    assert [d.get_attribute("data-q") for d in opened] == [HOSTILE_QUERY]
    units = [c.text for c in opened[0].find_elements("css selector", "td.unit")]
    want = [u["unit"] for u in hostile.query(HOSTILE_QUERY)]
    assert len(units) == len(want) == 2
    assert units[1] == "b" and "doc|with`ticks`" in units[0]
    fates = [c.text for c in opened[0].find_elements("css selector", "td.fate")]
    assert fates == [u["fate"] for u in hostile.query(HOSTILE_QUERY)]
    # the fate filter: the queries with a unit filtered
    box.clear()
    box.send_keys(" ")  # an input event with an empty filter
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("css selector", "select.fate-filter")).select_by_visible_text(
        "with a unit filtered"
    )
    with_filtered = {q for q in ("plain", HOSTILE_QUERY)
                     if any(u["fate"] == "filtered" for u in hostile.query(q))}  # fmt: skip
    assert {r.get_attribute("data-q") for r in _visible(browser, "tr.qrow")} == with_filtered


def test_the_drill_down_keeps_the_queries_with_most_lost(hostile):
    page = html(hostile, max_queries=1)
    assert page.count('class="qrow"') == 1 and page.count('class="trail"') == 1
    lost = {
        q: sum(u["fate"] != "found" for u in hostile.query(q)) for q in ("plain", HOSTILE_QUERY)
    }
    top = max(lost, key=lost.get)
    assert f'data-q="{esc(top)}"' in page and "The 1 query with the most" in page


def test_the_evaluation_shows_itself_through_these_renderers(hostile, tmp_path):
    assert hostile.table(color=False) == terminal(hostile, color=False)
    assert hostile.to_markdown() == markdown(hostile)
    path = tmp_path / "page.html"
    page = hostile.to_html(path)
    assert path.read_text(encoding="utf-8") == page and page.startswith("<!DOCTYPE html>")
    div = html(hostile, fragment=True)
    assert div.startswith('<div class="rl-report">') and "<!DOCTYPE" not in div
    assert hostile.query_text("plain") == query_text(hostile, "plain")


def test_a_fused_stage_starts_from_what_its_retrievers_held_together():
    staged = ranklens.StagedRun(
        {
            "bm25": {"q": ["a", "x"], "r": ["c"]},
            "dense": {"q": ["b"], "r": ["y"]},
            "fused": {"q": ["a", "b", "x"], "r": ["y", "c"]},
            "cut": {"q": ["b"], "r": ["y"]},
        },
        kinds={"bm25": "retriever", "dense": "retriever", "fused": "fusion"},
    )
    ev = evaluate_stages({"q": {"a": 1, "b": 1}, "r": {"c": 1}}, staged, ["recall"], stats=STATS)
    steps = {s.place: s for s in waterfall(ev)}
    assert steps["dense"].before == 1.0  # a retriever of its own: from all relevant units
    assert steps["fused"].before == pytest.approx(1.0)  # a and b (q), c (r): all held together
    assert steps["fused"].added == 0.0
    for s in steps.values():
        assert s.held == pytest.approx(s.before - sum(s.drops.values()) + s.added)
    (bm25_to_dense,) = [x for x in ev.losses if x.stage == "dense"] or [None]
    assert bm25_to_dense is None  # parallel retrievers are not a transition
    assert [x.before for x in ev.losses] == ["bm25 + dense", "fused"]
