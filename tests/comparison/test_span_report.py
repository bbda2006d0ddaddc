"""Reports on span labels: compare takes each runner result's chunks; the drill-down shows
each run's top chunks in their documents' text with the evidence highlighted (checked
against judging, and in real Chromium with hostile texts), the notes say what span judging
counted, and every renderer and the JSON round trip take such a report."""

from __future__ import annotations

import json

import pytest
from _evidence_case import bm25_retriever, chunks, evidence_labels
from selenium.webdriver.common.by import By

import ranklens
from ranklens.comparison.spandrill import WHOLE

EVIDENCE = ["evidence_recall@5", "evidence_precision@5", "evidence_iou@5"]


@pytest.fixture(scope="module")
def chunked():
    """Span labels on the demo set and two runner results: BM25 over 200- and 600-character
    chunks (a quarter overlapping)."""
    labels, texts, queries = evidence_labels()
    results = {
        f"c{size}": ranklens.run_retriever(bm25_retriever(chunks(texts, size, size // 4)),
                                           queries, name=f"c{size}",
                                           calls=ranklens.Calling(progress=False))
        for size in (200, 600)
    }  # fmt: skip
    return labels, texts, queries, results


def _found_in_top(dd, run, i, k):
    return {j for j, rank in dd["first"][run][i] if rank <= k}


@pytest.mark.parametrize("overlap", ["any", "evidence_all"])
def test_compare_judges_each_results_chunks_and_the_drilldown_agrees(chunked, overlap):
    labels, texts, queries, results = chunked
    metrics = [*EVIDENCE, "recall@5", "ndcg@10"]
    rep = ranklens.compare(
        labels, results, metrics, overlap=overlap, stats=ranklens.Statistics(test="t")
    )
    for name, result in results.items():  # the chunks judged, as evaluate judges them
        ev = ranklens.evaluate(labels, result, metrics, overlap=overlap)
        assert rep.summary[name]["evidence_recall@5"]["value"] == ev["evidence_recall@5"]
        assert rep.per_query[name]["ndcg@10"].tolist() == ev.per_query["ndcg@10"].tolist()
    assert rep.metadata["run_info"]["c200"]["queries"] == len(queries)  # the runner's facts
    dd = rep.metadata["drilldown"]
    assert (
        dd["overlap"]
        == rep.metadata["options"]["overlap"]
        == ("any" if overlap == "any" else "evidence>=1")
    )
    for name, result in results.items():
        hits = {r.query_id: r.hits for r in result.records}
        for i, q in enumerate(rep.query_ids):
            # the top 10 chunks as retrieved, placed where the retriever said
            assert [dd["docs"][c] for c in dd["top"][name][i]] == [h["id"] for h in hits[q]]
            for (d, a, b, how), h in zip(dd["place"][name][i], hits[q]):
                assert (dd["docs"][d], a, b, how) == (h["parent"], h["start"], h["end"], 0)
                shown = "".join(t[max(a - s, 0):b - s] for s, t in dd["pieces"][str(d)]
                                if s < b and s + len(t) > a)  # fmt: skip
                assert shown == texts[h["parent"]][a:b]  # whole: shorter than WHOLE
            # the spans each run finds by judging's rule: recall@5 from the drill-down
            spans = dd["spans"][i]
            relevant = [j for j, s in enumerate(spans) if s[3] >= 1]
            found = _found_in_top(dd, name, i, 5) & set(relevant)
            assert len(found) / len(relevant) == pytest.approx(
                rep.per_query[name]["recall@5"][i], abs=1e-12
            ), (name, q)
            # a chunk's grade: judged (>= 0) exactly in a document with evidence
            evidence_docs = {s[0] for s in spans}
            for (d, *_), g in zip(dd["place"][name][i], dd["grade"][name][i]):
                assert (g is not None) == (d in evidence_docs)
    # each document's text is embedded once, however many chunks of runs show it
    html = rep.to_html()
    sentence = "The keeper Martha Quayle rowed out and brought 27 sailors ashore"
    assert sum(sentence in t for t in texts.values()) == 1 and html.count(sentence) == 1
    assert len(json.dumps(dd)) < 120_000  # 40 queries, 2 runs x 10 chunks


def _hostile_case():
    """Labels with texts and a run of chunks that stress the page: markup and a script in
    the documents' text, bidi controls, characters outside the BMP before the evidence,
    chunks found by their text, moved, unplaced, of another document, and a long one."""
    fraktur = "\U0001d518\U0001d52b\U0001d526"  # outside the BMP: 2 UTF-16 units each
    head = (f"<b>bold</b> intro {fraktur}. A\u202egnp.exe\u202c sits here. "
            "</script><script>window.__pwned=2</script> ")  # fmt: skip
    evidence = "The EVIDENCE sentence stands here."
    filler = " ".join(f"filler{i}." for i in range(260))
    second = "Second evidence far away."
    doc = f"{head}{evidence} {filler} {second} tail."
    texts = {"h": doc, "o": "Another document entirely, with nothing of note.\n"}
    e0 = doc.index(evidence)
    labels = ranklens.SpanLabels.from_spans(
        {"q1": [{"doc_id": "h", "quote": evidence, "grade": 2}, ("h", second)],
         "q2": [{"doc_id": "h", "quote": evidence, "group": "g"},
                {"doc_id": "h", "quote": second, "group": "g"}]},
        texts,
    )  # fmt: skip
    hostile = [
        {"id": "c-head", "doc_id": "h", "start": 0, "end": e0 + len(evidence),
         "text": doc[: e0 + len(evidence)]},
        {"id": "c-moved", "doc_id": "h", "start": 3, "end": 3 + len(second), "text": second},
        {"id": "c-found", "doc_id": "h", "start": None, "end": None, "text": evidence},
        {"id": "c-nowhere", "doc_id": "h", "start": None, "end": None,
         "text": "<i>not</i> in the document \u202eeno"},
        {"id": "c-other", "doc_id": "o", "start": 0, "end": 20, "text": texts["o"][:20]},
        {"id": "c-long", "doc_id": "h", "start": 0, "end": len(doc), "text": doc},
    ]  # fmt: skip
    runs = {
        "hostile <img src=x onerror=window.__pwned=3>": ranklens.Run.from_chunks(
            {"q1": hostile, "q2": hostile[4:5]}, ranked=True),
        "other": ranklens.Run.from_chunks({"q1": hostile[4:5], "q2": hostile[:1]}),
        "tied": ranklens.Run.from_chunks(
            {"q1": [{**c, "score": 1.0} for c in hostile[:3]], "q2": [{**hostile[0], "score": 1}]}
        ),
    }  # fmt: skip
    return labels, texts, runs, (evidence, second)


def test_the_span_drilldown_in_chromium(browser, tmp_path):
    labels, texts, runs, (evidence, second) = _hostile_case()
    rep = ranklens.compare(
        labels, runs, ["evidence_recall@5", "ndcg@10"], stats=ranklens.Statistics(test="t", ci="t")
    )
    path = tmp_path / "spans.html"
    rep.to_html(path)
    browser.get(path.as_uri())
    view = browser.find_element(By.CSS_SELECTOR, ".drill-view")
    assert view.find_element(By.TAG_NAME, "h3").text == "q1"
    assert browser.execute_script("return window.__pwned") is None
    col = view.find_elements(By.CSS_SELECTOR, ".drill-col")[0]
    assert col.find_element(By.TAG_NAME, "h4").text.startswith("hostile <img src=x")
    items = col.find_elements(By.CSS_SELECTOR, "ol.drill-hits li")
    assert [li.find_element(By.CSS_SELECTOR, ".doc").text for li in items] == [
        "c-head", "c-moved", "c-found", "c-nowhere", "c-other", "c-long"]  # fmt: skip
    head, moved, found, nowhere, other, long = items
    # the evidence highlighted exactly (code points, not UTF-16 units, after the fraktur)
    assert [m.text for m in head.find_elements(By.CSS_SELECTOR, "mark.ev")] == [evidence]
    assert "grade 2" in head.text and "h [0, " in head.text
    chunk = head.find_element(By.CSS_SELECTOR, ".chunk")
    assert "<b>bold</b>" in chunk.text
    assert "</script><script>window.__pwned=2</script>" in chunk.text
    assert [c.text for c in chunk.find_elements(By.CSS_SELECTOR, ".ctl")] == ["U+202E", "U+202C"]
    assert "moved" in moved.text
    assert [m.text for m in moved.find_elements(By.CSS_SELECTOR, "mark.ev")] == [second]
    assert "found by its text" in found.text and "grade 2" in found.text
    assert "no place in its document" in nowhere.text and "unjudged" in nowhere.text
    assert "<i>not</i> in the document" in nowhere.text and "U+202E" in nowhere.text
    assert "unjudged" in other.text and not other.find_elements(By.CSS_SELECTOR, "mark.ev")
    marks = [m.get_attribute("textContent") for m in long.find_elements(By.CSS_SELECTOR, "mark.ev")]
    assert marks == [evidence, second] and "characters …" in long.text  # elided, not all kept
    assert len(texts["h"]) > WHOLE
    # the evidence each run missed, with the ranks where the others found it
    missed = view.find_element(By.CSS_SELECTOR, ".drill-missed")
    rows = missed.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [r.find_element(By.CSS_SELECTOR, ".chunk").text for r in rows] == [evidence, second]
    cells = [[td.text for td in r.find_elements(By.TAG_NAME, "td")[2:]] for r in rows]
    # (the tied run: tied chunks in trec_eval's order, by id descending: c-moved first)
    assert cells == [["#1", "not found", "#2"], ["#2", "not found", "#1"]]
    # alternatives: a group found by one of its spans
    browser.find_element(By.TAG_NAME, "body").send_keys("j")
    assert view.find_element(By.TAG_NAME, "h3").text == "q2"
    missed = view.find_element(By.CSS_SELECTOR, ".drill-missed")
    assert "group 1: any one span" in missed.text and "group found" in missed.text
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    browser.execute_script("window.ranklensDrill = document.querySelector('.rl-report')"
                           ".ranklensDrill; window.ranklensDrill.show('q1')")  # fmt: skip
    browser.execute_script("arguments[0].scrollIntoView()",
                           browser.find_element(By.CSS_SELECTOR, ".drill-title"))  # fmt: skip
    browser.save_screenshot(str(tmp_path / "span-drill.png"))


def test_a_span_report_renders_everywhere_and_round_trips(tmp_path):
    labels, _, runs, _ = _hostile_case()
    rep = ranklens.compare(
        labels, runs, ["evidence_recall@5", "ndcg@10", "P@5"], stats=ranklens.Statistics(test="t")
    )
    counts = rep.counts["hostile <img src=x onerror=window.__pwned=3>"]
    assert counts["chunks_unlocated"] == 1 and counts["chunks_relocated"] == 1
    assert counts["span_alternatives"] == 1
    # what span judging counted reaches the notes of every text renderer
    for text in (rep.to_text(), rep.to_markdown()):
        assert "1 chunk without a place in their document" in text
        assert "1 chunk whose offsets disagreed with their text" in text
        assert "1 query has groups of alternative spans" in text
        assert "chunks with tied scores, scored in one order of them" in text
    for fmt in ("text", "markdown", "csv", "latex", "pandas", "html", "html_fragment", "rich"):
        assert rep.render(fmt) is not None, fmt
    path = tmp_path / "spans.json"
    rep.to_json(path)
    back = ranklens.load_report(path)
    assert back == rep
    assert back.to_text() == rep.to_text() and back.to_html().count("mark") == rep.to_html().count(
        "mark"
    )
    # the offset texts stay as they are (an escape would shift every offset after it)
    data = json.loads(rep.to_html().split('class="drill-data">', 1)[1].split("</script>", 1)[0])
    assert "\u202egnp.exe" in json.dumps(data["pieces"], ensure_ascii=False)
    assert data["docs"][data["top"]["other"][0][0]] == "c-other"
    assert any(d.startswith("hostile") for d in data["runs"])


def test_a_saved_span_drilldown_of_the_wrong_shape_is_named(tmp_path):
    labels, _, runs, _ = _hostile_case()
    data = ranklens.compare(
        labels, runs, ["evidence_recall@5"], stats=ranklens.Statistics(test="t")
    ).to_dict()
    data["metadata"]["drilldown"]["pieces"]["0"] = [[0, 7]]  # a piece's text not a string
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ranklens.errors.InputError, match=r"drilldown.*pieces.*must be a string"):
        ranklens.load_report(path)


def _shaped(n_q: int, n_docs: int, depth: int = 50, length: int = 3000, seed: int = 0):
    """Span labels on ``n_q`` queries over ``n_docs`` random documents and two runs of
    ``depth`` chunks (300 and 1,500 characters, the first chunk of each query in its
    evidence document)."""
    import random

    rng = random.Random(seed)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
    ]
    texts = {f"d{i}": " ".join(rng.choice(words) for _ in range(length // 6))
             for i in range(n_docs)}  # fmt: skip
    spans = {}
    for q in range(n_q):
        d = f"d{rng.randrange(n_docs)}"
        s = rng.randrange(0, len(texts[d]) - 300)
        spans[f"q{q}"] = [(d, s, s + rng.randrange(50, 300))]
    labels = ranklens.SpanLabels.from_spans(spans, texts)

    def run(size):
        out = {}
        for q in range(n_q):
            rows = []
            for r in range(depth):
                d = f"d{rng.randrange(n_docs)}" if r else spans[f"q{q}"][0][0]
                s = rng.randrange(0, len(texts[d]) - size)
                rows.append({"id": f"{d}@{s}#{r}", "doc_id": d, "start": s, "end": s + size})
            out[f"q{q}"] = rows
        return ranklens.Run.from_chunks(out, ranked=True)

    return labels, texts, {"small": run(300), "large": run(1500)}


@pytest.mark.parametrize(
    "n_q, n_docs", [(300, 60), pytest.param(10_000, 2_000, marks=pytest.mark.slow)]
)
def test_the_span_drilldown_keeps_each_text_once_and_stays_cheap(n_q, n_docs):
    import time

    labels, texts, runs = _shaped(n_q, n_docs, depth=30 if n_q < 10_000 else 100)
    metrics = ["evidence_recall@10", "ndcg@10"]
    t0 = time.process_time()
    ranklens.compare(
        labels,
        runs,
        metrics,
        stats=ranklens.Statistics(test="t", ci="t"),
        contents=ranklens.ReportContents(drilldown=None),
    )
    t1 = time.process_time()
    rep = ranklens.compare(labels, runs, metrics, stats=ranklens.Statistics(test="t", ci="t"))
    t2 = time.process_time()
    dd = rep.metadata["drilldown"]
    kept = 0
    for d, pieces in dd["pieces"].items():  # sorted, apart, each the document's own text
        doc = texts[dd["docs"][int(d)]]
        for (s, t), nxt in zip(pieces, [*pieces[1:], None]):
            assert doc[s : s + len(t)] == t and (nxt is None or s + len(t) < nxt[0])
            kept += len(t)
    shown_docs = {dd["docs"][p[0]] for places in dd["place"].values() for q in places for p in q}
    assert kept <= sum(len(texts[d]) for d in shown_docs)  # never more than the documents
    # a long chunk keeps its head and its evidence with some context, not all of it
    large = [p for q in dd["place"]["large"] for p in q]
    assert all(b - a == 1500 for _, a, b, _ in large)
    size = len(json.dumps(dd, ensure_ascii=False).encode())
    per_chunk = size / (2 * 10 * n_q)
    assert per_chunk < 700, per_chunk  # ids, places, grades and the text shown
    if n_q >= 10_000:  # the drill-down costs about what judging and testing the runs cost
        assert t2 - t1 < 2.5 * (t1 - t0), (t1 - t0, t2 - t1)  # (CPU time, one process)
