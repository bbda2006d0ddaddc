"""The judging page in real headless Chromium (Selenium): key presses give the exact export
file, undo works, a reload resumes from localStorage, hostile texts show as text; and the
whole loop on the shipped demo set: evaluate two runs, pool their top 10, judge the pool by
a callable and by key presses on the page, merge, re-evaluate, and see the change in the
report."""

from __future__ import annotations

import json
import time

from selenium.webdriver.common.by import By

import ranklens
from ranklens import Qrels
from ranklens.labelling import (
    LabelPool,
    PoolPair,
    assess,
    judging_page,
    pool,
    read_judgments,
    rescore,
)

HOSTILE = '<img src=x onerror="window.__pwned=1"> & </script><script>window.__pwned=2</script>'


def press(driver, keys):
    from selenium.webdriver.common.action_chains import ActionChains

    for k in keys:  # to the focused page (a click to focus could land on a grade button)
        ActionChains(driver).send_keys(k).perform()


def export(driver, kind):
    press(driver, ["t" if kind == "trec" else "j"])
    return driver.find_element(By.ID, "export").get_attribute("value")


def open_page(driver, path):
    driver.get(path.as_uri())
    driver.execute_script("window.localStorage.clear()")
    driver.get(path.as_uri())


def test_key_presses_give_the_exact_export_and_a_reload_resumes(browser, tmp_path):
    pairs = [
        PoolPair("q1", "a", {"bm25": 1}, "first question", "passage a"),
        PoolPair("q1", "b", {"bm25": 2}, "first question", HOSTILE),
        PoolPair("q2", "c", {"dense": 1}, HOSTILE, "passage c"),
    ]
    path = tmp_path / "judge.html"
    judging_page(LabelPool(pairs), path, source="human:test")
    open_page(browser, path)
    assert browser.find_element(By.ID, "progress").text == "0 / 3 judged"
    press(browser, ["2", "0"])  # a -> 2, b -> 0
    assert browser.find_element(By.ID, "progress").text == "2 / 3 judged"
    assert HOSTILE in browser.find_element(By.ID, "query").text  # pair 3's query, as text
    press(browser, ["u"])  # undo b's grade: back on b
    assert browser.find_element(By.ID, "passage").text == HOSTILE
    press(browser, ["1", "3"])  # b -> 1, c -> 3
    assert export(browser, "trec") == "q1 0 a 2\nq1 0 b 1\nq2 0 c 3\n"
    for _ in range(20):  # reload: the judgments are still there (the browser commits
        browser.refresh()  # localStorage asynchronously: a reload may come before it)
        if browser.find_element(By.ID, "progress").text == "3 / 3 judged":
            break
        time.sleep(0.5)
    assert browser.find_element(By.ID, "progress").text == "3 / 3 judged"
    lines = [json.loads(x) for x in export(browser, "jsonl").splitlines()]
    assert lines == [
        {"query_id": "q1", "doc_id": "a", "grade": 2, "source": "human:test"},
        {"query_id": "q1", "doc_id": "b", "grade": 1, "source": "human:test"},
        {"query_id": "q2", "doc_id": "c", "grade": 3, "source": "human:test"},
    ]
    assert browser.execute_script("return window.__pwned") is None
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    browser.save_screenshot(str(tmp_path / "judge.png"))


def test_binary_grades_and_navigation(browser, tmp_path):
    pairs = [PoolPair("q", d, {"r": i}, "q text", f"text {d}") for i, d in enumerate("xyz", 1)]
    path = tmp_path / "judge.html"
    judging_page(pairs, path, grades="binary")
    open_page(browser, path)
    buttons = browser.find_elements(By.CSS_SELECTOR, "#grades button")
    assert [b.text for b in buttons] == ["0not relevant", "1relevant"]
    press(browser, ["2", "\ue014", "1"])  # 2 is no grade here; → skips x; y -> 1
    assert export(browser, "trec") == "q 0 y 1\n"
    press(browser, ["\ue012", "\ue012", "0"])  # ← ← back to x; x -> 0
    assert export(browser, "trec") == "q 0 x 0\nq 0 y 1\n"


def test_the_whole_loop_on_the_demo_set(browser, tmp_path, demo_bm25):
    ds, runs = demo_bm25
    before = ranklens.compare(
        ds, runs, ["P@10", "ndcg@10"], stats=ranklens.Statistics(test="t", ci="t")
    )
    assert before.metadata["holes"]["bm25"]["unjudged"] > 0
    p = pool(ds, runs, depth=10, max_pairs=12)
    assert len(p) == 12 and p.info["left_out_by_budget"] > 0
    # a model judge grades the first half, a person the second half on the page
    model_part, human_part = LabelPool(p.pairs[:6]), LabelPool(p.pairs[6:])
    words = lambda s: {w.strip(".,?!").lower() for w in s.split() if len(w) > 3}  # noqa: E731

    def overlap_judge(query, passage):
        return int(len(words(query) & words(passage)) >= 2)

    model = assess(model_part, overlap_judge, calls=ranklens.Calling(progress=False))
    page = tmp_path / "judge.html"
    judging_page(human_part, page, grades="binary")
    open_page(browser, page)
    press(browser, list("111111"))
    (tmp_path / "human.jsonl").write_text(export(browser, "jsonl"))
    human = read_judgments(tmp_path / "human.jsonl")
    assert len(human.to_dict()) >= 1 and set(human.sources.values()) == {"human"}
    merged = Qrels.merge(ds.qrels, human, model, sources=["demo", "human", model.source])
    assert {v for v in merged.sources.values()} == {"demo", "human", "model:overlap_judge"}
    after = ranklens.compare(
        merged,
        runs,
        ["P@10", "ndcg@10"],
        queries=ds.queries,
        stats=ranklens.Statistics(test="t", ci="t"),
    )
    for name in runs:  # the six human "relevant" grades raise P@10 of whichever run found them
        assert (
            after.metadata["holes"][name]["unjudged"] < before.metadata["holes"][name]["unjudged"]
        )
    assert any(after.value(r, "P@10") > before.value(r, "P@10") for r in runs)
    r = rescore(ds, merged, runs, ["P@10", "ndcg@10"], stats=ranklens.Statistics(test="t", ci="t"))
    assert any(c.kind == "value" for c in r.changed())
    html = after.to_html(tmp_path / "after.html")
    assert "if relevant, " in html
