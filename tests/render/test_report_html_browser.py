"""The HTML report in real headless Chromium (Debian's chromium + chromedriver, driven by
Selenium): loads without console errors, shows its charts, sorts its table on a click,
switches metric, and shows hostile ids and texts as text without running them."""

from __future__ import annotations

import pytest

import ranklens
from ranklens import compare

HOSTILE_RUN = "<script>window.__pwned_run=1</script>"
HOSTILE_QUERY = '"><img src=x onerror="window.__pwned_query=1">'
HOSTILE_TEXT = "<script>window.__pwned_text=1</script> & <b>bold?</b>"


@pytest.fixture
def page(browser, tmp_path, demo_files):
    qrels, runs = demo_files
    named = {"bm25": runs["bm25"], HOSTILE_RUN: runs["bm25-short-chunks"]}
    from ranklens import read_qrels

    queries = {q: f"question about {q}" for q in read_qrels(qrels).query_ids}
    first = sorted(queries)[0]
    queries[first] = HOSTILE_TEXT
    # Rename one query id to a hostile one in both qrels and runs.
    rep = compare(
        qrels,
        named,
        ["ndcg@10", "map", "recall@10"],
        baseline="bm25",
        queries=queries,
        dataset="demo <set>",
        stats=ranklens.Statistics(test="t", ci="t"),
    )
    hostile_q = first
    rep.query_ids[rep.query_ids.index(hostile_q)] = HOSTILE_QUERY
    rep.queries[HOSTILE_QUERY] = rep.queries.pop(hostile_q)
    path = tmp_path / "report.html"
    rep.to_html(path)
    browser.get(path.as_uri())
    return browser, rep, tmp_path


@pytest.fixture
def demo_files():
    from ranklens.app.demo import demo_paths

    p = demo_paths()
    return p["qrels"], {"bm25": p["bm25"], "bm25-short-chunks": p["bm25-short-chunks"]}


def _visible(driver, css):
    return [e for e in driver.find_elements("css selector", css) if e.is_displayed()]


def test_loads_without_console_errors_and_shows_charts(page):
    driver, _rep, tmp_path = page
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    charts = _visible(driver, "svg.chart")
    kinds = {c.get_attribute("data-chart") for c in charts}
    assert kinds == {"curve", "differences", "distribution"}
    # Only the selected metric's charts are visible; the others are present but hidden
    # (ndcg@10 and recall@10 have a curve over k, map has none).
    assert len(charts) == 3
    assert len(driver.find_elements("css selector", "svg.chart")) == 3 + 2 + 3
    driver.save_screenshot(str(tmp_path / "report.png"))  # kept as the test's artifact
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_hostile_strings_are_text_and_never_run(page):
    driver, _rep, _ = page
    pwned = driver.execute_script(
        "return [window.__pwned_run, window.__pwned_query, window.__pwned_text]"
    )
    assert pwned == [None, None, None]
    assert driver.execute_script("return document.querySelectorAll('img, b').length") == 0
    body = driver.find_element("tag name", "body").text
    assert HOSTILE_RUN in body
    assert HOSTILE_QUERY in body
    assert "<b>bold?</b>" in body
    assert "demo <set>" in body


def test_table_sorts_on_header_click_and_metric_select_switches(page):
    driver, _rep, _ = page
    table = driver.find_element("id", "per-query-table")
    heads = [h for h in table.find_elements("css selector", "thead th") if h.is_displayed()]
    col_names = [h.text for h in heads]
    target = col_names.index("bm25")
    all_heads = table.find_elements("css selector", "thead th")
    col = all_heads.index(heads[target])

    def column():
        return driver.execute_script(
            "var t=document.getElementById('per-query-table');"
            "return Array.prototype.map.call(t.tBodies[0].rows,"
            f"function(r){{return parseFloat(r.cells[{col}].getAttribute('data-v'))}});"
        )

    before = column()
    assert before != sorted(before)  # the click must change something
    heads[target].click()
    assert column() == sorted(before)
    assert heads[target].get_attribute("aria-sort") == "ascending"
    heads[target].click()
    assert column() == sorted(before, reverse=True)

    from selenium.webdriver.support.ui import Select

    select = Select(driver.find_element("css selector", "select.metric-select"))
    select.select_by_value("map")
    shown = {
        e.get_attribute("data-metric")
        for e in driver.find_elements("css selector", "div[data-metric]")
        if e.is_displayed()
    }
    assert shown == {"map"}
    visible = [c.get_attribute("aria-label") for c in _visible(driver, "svg.chart")]
    assert visible and all(t.startswith("map:") for t in visible)


def test_hostile_strings_in_a_loaded_report_stay_text(browser, tmp_path, demo_files):
    """A saved report is outside data: strings planted in its JSON (metadata, run info,
    failure messages, settings) are shown as text, with bidi controls made visible."""
    import json

    from ranklens import load_report

    qrels, runs = demo_files
    rep = compare(qrels, runs, ["ndcg@10", "map"], baseline="bm25")
    data = rep.to_dict()
    evil = '<img src=x onerror="window.__pwned_loaded=1">'
    data["metadata"]["dataset"] = evil + " \u202eevil"
    data["metadata"]["versions"] = {evil: evil}
    data["metadata"]["run_info"] = {"bm25": {"queries": 3, "errors": 1, "latency_ms": {}}}
    data["counts"]["bm25"]["failures"] = {"count": 1, "types": {evil: 1}, "first": evil}
    data["counts"]["bm25"]["queries_missing"] = 1
    data["settings"]["baseline"] = "bm25"
    path = tmp_path / "planted.json"
    path.write_text(json.dumps(data))
    loaded = load_report(path)
    out = tmp_path / "planted.html"
    loaded.to_html(out)
    browser.get(out.as_uri())
    assert browser.execute_script("return window.__pwned_loaded") is None
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    body = browser.find_element("tag name", "body").text
    assert evil in body and "<U+202E>evil" in body
    # a tampered number is refused when loading, naming the field
    data["per_query"]["bm25"]["map"][0] = "<script>"
    path.write_text(json.dumps(data))
    with pytest.raises(Exception, match=r"per_query\['bm25'\]\['map'\]\[0\] must be a number"):
        load_report(path)
