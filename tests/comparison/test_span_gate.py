"""The gate on span labels: a runner's result judged by its chunks, a baseline whose
fingerprint holds every span (a relabelled span, an edited evidence text, another overlap
rule or labels of documents are named), and regressed queries listing the evidence spans
they no longer find."""

from __future__ import annotations

import pytest
from _evidence_case import bm25_retriever, chunks, evidence_labels

import ranklens
from ranklens.errors import InputError

METRICS = ["evidence_recall@5", "ndcg@10"]


@pytest.fixture(scope="module")
def case():
    labels, texts, queries = evidence_labels()
    items = chunks(texts, 400, 100)
    retrieve = bm25_retriever(items, k=20)
    good = ranklens.run_retriever(
        lambda q: retrieve(q)[:10], queries, name="now", calls=ranklens.Calling(progress=False)
    )
    worse = ranklens.run_retriever(
        lambda q: retrieve(q)[4:14], queries, name="now", calls=ranklens.Calling(progress=False)
    )
    return labels, texts, good, worse


def test_the_gate_passes_the_same_chunks_and_fails_a_worse_retriever(case, tmp_path):
    labels, _, good, worse = case
    base = tmp_path / "baseline.json"
    written = ranklens.gate(labels, good, base, METRICS, update_baseline=True)
    assert written.updated and written.report.value("now", "evidence_recall@5") > 0.9
    found = ranklens.load_report(base).metadata["gate"]["found"]
    assert all(found[q] for q in found)  # the evidence each query found in the top 10
    assert ranklens.gate(labels, good, base, METRICS).passed
    failed = ranklens.gate(labels, worse, base, METRICS)
    assert not failed.passed
    assert {v.metric: v.status for v in failed.verdicts}["evidence_recall@5"] == "fail"
    assert failed.regressions and failed.settings["evidence"] is True
    records = {(r["query_id"], r["doc_id"], r["start"], r["end"]): r["text"]
               for r in labels.span_records()}  # fmt: skip
    for reg in failed.regressions:  # the spans lost: each named by its place and text
        assert reg.dropped and set(reg.dropped) <= set(found[reg.query_id])
        for d in reg.dropped:
            doc, rest = d.split(" [", 1)
            start, end = map(int, rest.split(")", 1)[0].split(", "))
            text = records[(reg.query_id, doc, start, end)]
            assert d.startswith(f"{doc} [{start}, {end}) '{text[:40]}")
    for out in (failed.to_text(), failed.to_markdown()):
        assert "evidence no longer found in the top 10" in out
        assert failed.regressions[0].dropped[0].split(" [")[0] in out


def test_the_gate_names_what_changed_in_span_labels(case, tmp_path):
    labels, texts, good, _ = case
    base = tmp_path / "baseline.json"
    ranklens.gate(labels, good, base, METRICS, update_baseline=True)
    records = labels.span_records()
    moved = [dict(r) for r in records]
    moved[3]["start"] += 1  # one span relabelled by a character
    with pytest.raises(InputError, match=r"evidence spans: one moved.*differ"):
        ranklens.gate(ranklens.SpanLabels.from_records(moved, texts), good, base, METRICS)
    edited = dict(texts)
    d, s = records[3]["doc_id"], records[3]["start"]
    edited[d] = edited[d][:s] + edited[d][s:].replace("e", "E", 1)  # its evidence edited
    relabelled = ranklens.SpanLabels.from_records(records, edited)
    assert [r["start"] for r in relabelled.span_records()] == [r["start"] for r in records]
    with pytest.raises(InputError, match="evidence spans"):
        ranklens.gate(relabelled, good, base, METRICS)
    with pytest.raises(InputError, match=r"options: .*'overlap': 'any'.*'evidence>=0.5'"):
        ranklens.gate(labels, good, base, METRICS, overlap="evidence_half")
    documents = {r["query_id"]: {r["doc_id"]: r["grade"]} for r in records}
    with pytest.raises(InputError, match="evidence spans in the baseline, documents now"):
        ranklens.gate(documents, good, base, METRICS[1:])
