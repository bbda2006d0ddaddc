"""An estimate without full labels in the HTML report, in real headless Chromium: the
section and its interval chart show, with no console error, and a hostile run name stays
text."""

from __future__ import annotations

from _nolabels_case import bm25, word_overlap

import ranklens
from ranklens.app.demo_data import load

HOSTILE = "<img src=x onerror=window.__pwned_estimate=1>"


def test_estimate_section_in_the_report(browser, tmp_path):
    demo = load()
    runs = {}
    for name, retrieve in (("bm25", bm25(demo.corpus)), (HOSTILE, word_overlap(demo.corpus, 0.4))):
        runs[name] = {q: dict(retrieve(t)) for q, t in demo.queries.items()}
    judged = {q: {d: int(i < 2) for i, d in enumerate(docs)} for q, docs in runs["bm25"].items()}
    for q, docs in runs[HOSTILE].items():
        for i, d in enumerate(docs):
            judged[q].setdefault(d, int(i < 1))
    est = ranklens.estimate(demo, runs, judged=judged, human=30, metrics=["ndcg@10", "P@5"])
    report = est.attach(ranklens.compare(demo, runs, ["ndcg@10", "P@5"], test="t", ci="t"))
    path = tmp_path / "report.html"
    report.to_html(path)
    browser.get(path.as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    charts = [c for c in browser.find_elements("css selector", "svg.estimate") if c.is_displayed()]
    assert len(charts) == 2
    assert charts[0].size["height"] > 100 and charts[0].size["width"] > 500
    tables = browser.find_elements("css selector", "table.estimate")
    assert HOSTILE in tables[0].text and "PPI++" in tables[0].text
    assert browser.execute_script("return window.__pwned_estimate") is None
    section = browser.find_element("css selector", ".rl-estimate")
    browser.execute_script("arguments[0].scrollIntoView()", section)
    browser.save_screenshot(str(tmp_path / "estimate.png"))
    assert (tmp_path / "estimate.png").stat().st_size > 10_000
    page = tmp_path / "estimate.html"
    est.to_html(page)
    browser.get(page.as_uri())
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
    assert browser.find_element("css selector", "h1").text.startswith("ranklens estimate")
