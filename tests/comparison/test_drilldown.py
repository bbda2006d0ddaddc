"""The report's query drill-down: the data compare keeps (against the runs themselves), the
page in real Chromium (filter, j/k, a jump from the worst-queries table, hostile ids and
texts shown as text), and its size for 10k queries."""

from __future__ import annotations

import json
import random
import re

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

import ranklens

HOSTILE_DOC = "<img src=x onerror=window.__pwned=1>"
HOSTILE_TEXT = "</script><script>window.__pwned=2</script> & text"


def test_compare_keeps_each_runs_top_k_labels_and_ranks():
    qrels = {"q1": {"a": 2, "b": 0}, "q2": [["c", "d"], ["e"]]}
    runs = {"r1": {"q1": ["x", "a", "y"], "q2": ["d", "z"]}, "r2": {"q1": ["a"], "q2": ["z", "e"]}}
    rep = ranklens.compare(
        ranklens.Qrels.coerce({"q1": {"a": 2, "b": 0}}),
        runs,
        ["P@2"],
        stats=ranklens.Statistics(test="t"),
        contents=ranklens.ReportContents(drilldown=2),
    )
    dd = rep.metadata["drilldown"]
    docs = dd["docs"]
    i = rep.query_ids.index("q1")
    assert [docs[d] for d in dd["top"]["r1"][i]] == ["x", "a"]  # cut at depth 2
    assert {docs[d]: r for d, r in dd["found"]["r1"][i]} == {"a": 2}
    assert sorted((docs[d], g) for d, g, _ in dd["labels"][i]) == [("a", 2), ("b", 0)]
    grouped = ranklens.compare(
        ranklens.Qrels.from_groups({"q2": qrels["q2"]}),
        runs,
        ["P@2"],
        stats=ranklens.Statistics(test="t"),
    )
    labels = {grouped.metadata["drilldown"]["docs"][d]: grp
              for d, _, grp in grouped.metadata["drilldown"]["labels"][0]}  # fmt: skip
    assert labels == {"c": 0, "d": 0, "e": 1}
    assert (
        "drilldown"
        not in ranklens.compare(
            {"q1": ["a"]},
            runs,
            ["P@2"],
            stats=ranklens.Statistics(test="t"),
            contents=ranklens.ReportContents(drilldown=None),
        ).metadata
    )


def test_the_drilldown_in_chromium(browser, tmp_path, demo_bm25):
    ds, runs = demo_bm25
    runs = {name: dict(r) for name, r in runs.items()}
    q0 = sorted(ds.queries)[0]
    runs["bm25"][q0] = {HOSTILE_DOC: 99.0, **runs["bm25"][q0]}  # a hostile id ranked first
    queries = dict(ds.queries)
    queries[q0] = HOSTILE_TEXT
    rep = ranklens.compare(
        ds, runs, ["ndcg@10", "P@5"], queries=queries, stats=ranklens.Statistics(test="t")
    )
    path = tmp_path / "report.html"
    rep.to_html(path)
    browser.get(path.as_uri())
    view = browser.find_element(By.CSS_SELECTOR, ".drill-view")
    assert view.find_element(By.TAG_NAME, "h3").text == q0
    assert HOSTILE_TEXT in view.text and HOSTILE_DOC in view.text
    assert browser.execute_script("return window.__pwned") is None
    cols = view.find_elements(By.CSS_SELECTOR, ".drill-col")
    assert [c.find_element(By.TAG_NAME, "h4").text.split(" · ")[0] for c in cols] == list(runs)
    first = cols[0].find_elements(By.CSS_SELECTOR, "ol.drill-hits li")
    assert len(first) == 10 and "unjudged" in first[0].text
    # grades and groups shown as the labels say
    labelled = dict(ds.qrels.to_dict()[q0])
    for li in first[1:]:
        doc = li.find_element(By.CSS_SELECTOR, ".doc").text
        assert (f"grade {labelled[doc]}" in li.text) if doc in labelled else "unjudged" in li.text
    # j / k move through the queries
    ActionChains(browser).send_keys("j").perform()
    second = sorted(ds.queries)[1]
    assert view.find_element(By.TAG_NAME, "h3").text == second
    ActionChains(browser).send_keys("k").perform()
    assert view.find_element(By.TAG_NAME, "h3").text == q0
    # the filter narrows the list (by text)
    box = browser.find_element(By.CSS_SELECTOR, ".drill-filter")
    box.send_keys("designed")
    options = browser.find_elements(By.CSS_SELECTOR, ".drill-list option")
    assert options and all("designed" in o.text.lower() for o in options)
    box.clear()
    box.send_keys("\b")
    # a click on a worst-query cell opens that query
    cell = browser.find_elements(By.CSS_SELECTOR, "td[data-q]")[0]
    target = cell.get_attribute("data-q")
    browser.execute_script("arguments[0].click()", cell)
    assert view.find_element(By.TAG_NAME, "h3").text == target
    missed = view.find_element(By.CSS_SELECTOR, ".drill-missed")
    assert "Relevant documents missed" in missed.text
    # a click on a query's mark in a difference chart opens that query too
    marks = browser.find_elements(By.CSS_SELECTOR, "svg[data-chart=differences] rect.qmark")
    assert len(marks) == 2 * len(ds.queries)  # every query, in each metric's chart
    first_chart = marks[: len(ds.queries)]  # ndcg@10's, sorted from the largest gain down
    text = [m.find_element(By.TAG_NAME, "title").get_attribute("textContent") for m in first_chart]
    assert all(t.startswith(m.get_attribute("data-q") + ": ") for t, m in zip(text, first_chart))
    diffs = [float(t.rsplit(": ", 1)[1]) for t in text]
    assert diffs == sorted(diffs, reverse=True) and diffs[0] > 0
    last = first_chart[0]  # the largest gain
    browser.execute_script("arguments[0].scrollIntoView()", last)
    ActionChains(browser).move_to_element(last).click().perform()
    assert view.find_element(By.TAG_NAME, "h3").text == last.get_attribute("data-q")
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    browser.save_screenshot(str(tmp_path / "drill.png"))


def test_the_drilldown_stays_small_for_10k_queries(tmp_path):
    rng = random.Random(0)
    n_q, depth = 10_000, 100
    qrels = {f"q{i}": {f"{rng.randrange(8_800_000)}": 1} for i in range(n_q)}
    runs = {
        name: {f"q{i}": {f"{rng.randrange(8_800_000)}": float(depth - r) for r in range(depth)}
               for i in range(n_q)}
        for name in ("bm25", "dense")
    }  # fmt: skip
    rep = ranklens.compare(
        qrels, runs, ["ndcg@10", "recall@100"], stats=ranklens.Statistics(test="t", ci="t")
    )
    html = rep.to_html(tmp_path / "big.html")
    data = html.split('class="drill-data">', 1)[1].split("</script>", 1)[0]
    size = len(data.encode())
    # 2 runs x 10k queries x 10 ids (MS MARCO-shaped, each once in a table): about 3.5 MB
    assert size < 5_000_000, size
    assert len(html.encode()) < size + 3_000_000  # the data is embedded once
    drill = json.loads(data)
    assert drill["depth"] == 10
    # every document shown is kept once in one table, and runs and queries index into it
    shown = {d for r in runs.values() for hits in r.values() for d in list(hits)[:10]}
    shown |= {d for labels in qrels.values() for d in labels}
    assert len(drill["docs"]) == len(set(drill["docs"])) == len(shown)
    assert all(len(top) == 10 for tops in drill["top"].values() for top in tops)


def test_the_demo_report_drills_down_and_its_judging_page_opens(browser, tmp_path, monkeypatch):
    """``ranklens demo`` end to end: its HTML report's drill-down in Chromium (the four
    framework runs side by side, unjudged passages marked, a jump from the worst queries)
    and the judging page it writes for the pooled holes."""
    import io

    pytest_ = __import__("pytest")
    pytest_.importorskip("ranklens_llamaindex")
    from ranklens.app.demo import run_demo

    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert run_demo(out, html=tmp_path / "demo.html") == 0
    text = out.getvalue()
    assert "Judgment holes" in text and "conclusions changed" in text
    browser.get((tmp_path / "demo.html").as_uri())
    view = browser.find_element(By.CSS_SELECTOR, ".drill-view")
    cols = view.find_elements(By.CSS_SELECTOR, ".drill-col")
    assert len(cols) >= 3  # one column per framework run
    assert view.find_elements(By.CSS_SELECTOR, "li.unjudged") and view.find_elements(
        By.CSS_SELECTOR, "li.rel"
    )
    assert all(li.find_elements(By.CSS_SELECTOR, ".snippet")
               for li in view.find_elements(By.CSS_SELECTOR, "li")[:5])  # fmt: skip
    cell = browser.find_elements(By.CSS_SELECTOR, "td[data-q]")[3]
    browser.execute_script("arguments[0].click()", cell)
    assert view.find_element(By.TAG_NAME, "h3").text == cell.get_attribute("data-q")
    glossary = browser.find_element(By.CSS_SELECTOR, "details.glossary")
    glossary.click()
    assert "Cohen's d_z" in glossary.text and "ndcg@10" in glossary.text
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    browser.get((tmp_path / "ranklens-demo" / "judge.html").as_uri())
    assert browser.find_element(By.ID, "progress").text.endswith("judged")
    assert browser.find_element(By.ID, "passage").text


def test_chart_titles_wrap_and_difference_marks_stay_few():
    from ranklens.render import svg

    long = "ndcg@10: " + " − ".join(["a-run-with-a-very-long-descriptive-name"] * 3) + ", per q"
    chart = svg.difference_chart(long, [0.5, -0.25, 0.0], "difference", ["a", "b<", "c"])
    titles = re.findall(r'class="chart-title">([^<]*)<', chart)
    assert len(titles) > 1 and "…" not in "".join(titles)
    assert " ".join(titles).replace("  ", " ") == long  # every word shown, none cut
    assert chart.count('class="qmark"') == 3 and 'data-q="b&lt;"' in chart
    many = svg.difference_chart("t", [i / 1000 for i in range(10_000)], "d",
                                [f"q{i}" for i in range(10_000)])  # fmt: skip
    assert many.count('class="qmark"') == 2 * svg.MARKED
    assert 'data-q="q9999"' in many and 'data-q="q0"' in many  # both ends
