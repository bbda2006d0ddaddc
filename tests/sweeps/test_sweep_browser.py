"""A sweep's HTML report in real headless Chromium: loads without console errors, draws the
Pareto chart (every measured configuration a point, the chosen one marked, the frontier
joined), one effect chart per swept parameter with its intervals, the significance matrix,
and a query of the chosen-against-runner-up chart opens the drill-down."""

from __future__ import annotations

import time

import pytest
from _sweep_case import as_settings

import ranklens
from ranklens.app.demo_data import load


def build(field: str, boost: int, delay: float):
    ds = load()
    words = {
        d: set((v["title"] + " " + v["text"] if field == "both" else v[field]).lower().split())
        for d, v in ds.corpus.items()
    }

    def retrieve(query: str, k: int = 10):
        time.sleep(delay)
        q = set(query.lower().split())
        lift = f"lh{boost:02d}"
        scored = sorted(
            ((len(q & w) + (boost > 0 and d.startswith(lift)), d) for d, w in words.items()),
            key=lambda x: (-x[0], x[1]),
        )
        return [(d, float(s)) for s, d in scored[:k]]

    return retrieve


@pytest.fixture(scope="module")
def sweep_page(browser, tmp_path_factory):
    res = ranklens.sweep(
        build,
        {"field": ["text", "title", "both"], "boost": [0, 4], "delay": [0.0, 0.004]},
        load(),
        ["ndcg@10", "recall@10"],
        **as_settings(
            n_resamples=500, concurrency=1, cost=lambda p: 0.5 if p["field"] == "both" else 0.1
        ),
    )
    path = tmp_path_factory.mktemp("sweep") / "sweep.html"
    res.to_html(path)
    browser.get(path.as_uri())
    return browser, res, path


def _visible(driver, css):
    return [e for e in driver.find_elements("css selector", css) if e.is_displayed()]


def test_pareto_and_effect_charts_render(sweep_page):
    driver, res, path = sweep_page
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    pareto = _visible(driver, 'svg[data-chart="pareto"]')
    assert len(pareto) == 1
    points = pareto[0].find_elements("css selector", "circle.config")
    assert len(points) == len(res.rows) == 12
    chosen = pareto[0].find_elements("css selector", "circle.chosen")
    assert [c.get_attribute("data-config") for c in chosen] == [res.chosen_name()]
    assert chosen[0].get_attribute("fill") == "#d62728"
    on_front = {r["name"] for r in res.rows if r["pareto"]}
    frontier = pareto[0].find_elements("css selector", "polyline.frontier")
    assert len(frontier) == (1 if len(on_front) > 1 else 0)
    box = pareto[0].rect
    assert box["width"] > 300 and box["height"] > 150  # laid out, not collapsed
    assert len(_visible(driver, 'svg[data-chart="pareto-cost"]')) == 1
    effects = _visible(driver, 'svg[data-chart="effect"]')
    assert [e.get_attribute("aria-label") for e in effects] == [
        "ndcg@10 by field",
        "ndcg@10 by boost",
        "ndcg@10 by delay",
    ]
    intervals = effects[0].find_elements("css selector", "line.interval")
    assert len(intervals) == 3 and all(float(i.get_attribute("y2")) > 0 for i in intervals)
    matrix = driver.find_element("css selector", "table.sweep-matrix")
    assert len(matrix.find_elements("css selector", "tbody tr")) == 12
    section = driver.find_element("css selector", ".rl-sweep")
    shot = path.with_name("sweep.png")
    section.screenshot(str(shot))  # kept as the test's artifact, and looked at
    assert shot.stat().st_size > 20_000


def test_a_query_of_the_chosen_against_runner_up_chart_opens_the_drill_down(sweep_page):
    driver, res, _ = sweep_page
    charts = [
        c
        for c in _visible(driver, '.rl-sweep svg[data-chart="differences"]')
        if res.chosen_name() in c.get_attribute("aria-label")
    ]
    assert charts
    marks = charts[0].find_elements("css selector", "rect.qmark")
    assert marks
    query = marks[0].get_attribute("data-q")
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click'))", marks[0])
    heading = driver.find_element("css selector", ".drill-view h3")
    assert heading.text == query
