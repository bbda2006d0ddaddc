"""Chunkings compared with span labels, end to end: SciFact's rationale sentences as
evidence spans (examples/scifact_spans.py), and one labelled SciFact set against BM25
retrievers of LlamaIndex, LangChain and Haystack at three chunk sizes each, with each
framework's own splitter (examples/chunking_comparison.py), compared with paired tests,
offline. Every position is checked against the text, every judged number against a
brute-force oracle, and whole-document chunks against document labels."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import numpy as np
import pytest
from _span_case import assert_equals_brute_force, example

import ranklens
from ranklens.errors import InputError

pytest.importorskip("ranklens_llamaindex")
pytest.importorskip("ranklens_langchain")
pytest.importorskip("ranklens_haystack")


BUILT: dict[str, object] = {}  # built once for the module (the fixtures skip without data)


@pytest.fixture
def scifact(shared):
    root = shared("scifact", "raw", "scifact.zip").parent.parent
    if "dev" not in BUILT:
        BUILT["dev"] = example("scifact_spans").read_scifact_spans(root, split="dev")
    return root, BUILT["dev"]


@pytest.fixture
def nine(scifact):
    """The labelled slice (60 claims with evidence, their abstracts and distractors up to
    280), the nine chunkings' setups, their runs, and the comparison of every pair."""
    if "nine" not in BUILT:
        spans, cc = example("scifact_spans"), example("chunking_comparison")
        data = spans.sample(scifact[1], 60, 280, seed=0)
        setups = cc.chunkings({d: v["text"] for d, v in data.corpus.items()})
        results = cc.run_all(data, setups)
        report = ranklens.compare(data, results, cc.METRICS, n_resamples=4000)
        BUILT["nine"] = data, setups, results, report
    return BUILT["nine"]


# ---------------------------------------------------------------- the SciFact reader
def test_rationale_sentences_become_spans_in_beir_texts(scifact):
    root, data = scifact
    labels = data.qrels
    assert isinstance(labels, ranklens.SpanLabels) and labels.texts is not None
    counts = len(data.queries), labels.n_spans, len(data.info["without_evidence"])
    assert counts == (188, 366, 112)
    with open(root / "corpus.jsonl", encoding="utf-8") as fh:  # BEIR's text of each abstract
        beir = {d["_id"]: d["text"] for d in map(json.loads, fh)}
    assert {d: v["text"] for d, v in data.corpus.items()} == beir
    # every (claim, abstract, sentence) BEIR's queries.jsonl lists for the dev claims, and
    # each span exactly that sentence of the release's list, edges' whitespace left out
    with zipfile.ZipFile(root / "raw" / "scifact.zip") as z:
        rows = csv.DictReader(io.TextIOWrapper(z.open("corpus_train.csv"), encoding="utf-8"))
        sentences, _ = example("scifact_spans").read_abstracts(rows)
    with open(root / "queries.jsonl", encoding="utf-8") as fh:
        meta = {q["_id"]: q["metadata"] for q in map(json.loads, fh) if q["_id"] in data.queries}
    want = {
        (q, d, i)
        for q, m in meta.items()
        for d, sets in m.items()
        for s in sets
        for i in s["sentences"]
    }
    got = set()
    for r in labels.span_records():
        i = next(i for i, s in enumerate(sentences[r["doc_id"]]) if s.strip() == r["text"])
        got.add((r["query_id"], r["doc_id"], i))
        assert r["text"] == r["text"].strip() and r["grade"] == 1
    assert got == want
    assert set(labels.unit) == set(range(labels.n_spans))  # each sentence its own unit
    assert {data.info["stance"][k] for k in data.info["stance"]} == {"SUPPORT", "CONTRADICT"}


def test_reader_offsets_splits_and_errors(scifact, tmp_path):
    spans = example("scifact_spans")
    sentences = ["  First one. ", "Second.", " Third has  spaces.\n"]
    text = " ".join(sentences)
    for i, s in enumerate(sentences):
        a, b = spans.sentence_span(sentences, i)
        assert text[a:b] == s.strip()
    printed = "['It\\'s one.' \"He said \\\"two.\\\"\"\n 'Three.']"  # numpy's printed array
    assert spans._literals(printed, "d") == ["It's one.", 'He said "two."', "Three."]
    with pytest.raises(ValueError, match="not a printed list"):
        spans._literals("['a' + 'b']", "d")
    train = spans.read_scifact_spans(scifact[0] / "raw" / "scifact.zip", split="train")
    assert (len(train.queries), train.qrels.n_spans) == (505, 1025)
    assert not set(train.queries) & set(scifact[1].queries)
    with pytest.raises(ValueError, match="split='dev'"):
        spans.read_scifact_spans(scifact[0], split="test")
    with pytest.raises(FileNotFoundError, match=r"raw/scifact\.zip"):
        spans.read_scifact_spans(tmp_path)


# ---------------------------------------------------------------- the nine chunkings
def test_every_framework_records_where_its_chunks_stand(nine):
    data, setups, results, report = nine
    texts = {d: v["text"] for d, v in data.corpus.items()}
    assert {s["framework"] for s in setups.values()} == {"llamaindex", "langchain", "haystack"}
    for name, result in results.items():
        assert not result.failed
        for rec in result.records:
            assert len(rec.hits) == 20
            for h in rec.hits:  # the offsets each framework recorded read the chunk's text
                assert h["end"] - h["start"] == h["chars"]
                assert texts[h["parent"]][h["start"] : h["start"] + len(h["text"])] == h["text"]
        counts = report.counts[name]
        assert counts.get("chunks_relocated", 0) == counts.get("chunks_unlocated", 0) == 0
    sizes = [s["mean_chars"] for s in setups.values()]
    assert sizes[0] < sizes[1] < sizes[2] and sizes[3] < sizes[4] < sizes[5]


def test_span_judging_equals_the_brute_force_oracle(nine):
    data, _, results, _ = nine
    for result in results.values():
        assert_equals_brute_force(data.qrels, result, k=5)
        assert_equals_brute_force(data.qrels, result, k=10, evidence=1.0)


def test_smaller_chunks_hold_denser_evidence_significantly(nine):
    """The comparison's claim, with its tests: within each framework evidence precision and
    IoU at 5 rise significantly from whole abstracts to medium to small chunks, and
    evidence recall at 5 falls significantly from whole abstracts to small chunks."""
    report = nine[3]
    assert report.settings["baseline"] is None and report.settings["correction"] == "holm"
    for fw in ("llamaindex", "langchain", "haystack"):
        small, medium, whole = (f"{fw} {x}" for x in ("small", "medium", "whole"))
        for m in ("evidence_precision@5", "evidence_iou@5"):
            for better, worse in ((small, medium), (medium, whole)):
                c = report.comparison(better, worse, m)
                assert c.diff > 0 and c.significant, (m, better, worse, c)
                assert worse in report.beats(better, m)
        c = report.comparison(whole, small, "evidence_recall@5")
        assert c.diff > 0 and c.significant
        assert report.value(small, "evidence_precision@5") > 3 * report.value(
            whole, "evidence_precision@5"
        )
    text = report.render("text", comparisons=False)
    assert "llamaindex small" in text and "Holm" in text


def test_whole_document_chunks_judge_as_document_labels(nine):
    """A chunk that is a whole abstract finds every evidence sentence in it: by span labels
    it is relevant exactly when its abstract is, so P, success and MRR equal the document
    labels' per query; with each abstract's sentences one group (any sentence finds the
    abstract), every ranking metric does."""
    data, _, results, _ = nine
    spans = example("scifact_spans")
    documents = spans.to_document_labels(data.qrels)
    grouped = ranklens.SpanLabels.from_records(
        [{**r, "group": r["doc_id"]} for r in data.qrels.span_records()], data.qrels.texts
    )
    alike = ["P@5", "success@5", "mrr@10"]
    every = [*alike, "recall@5", "ndcg@10", "map", "P@10"]
    for fw in ("llamaindex", "langchain", "haystack"):
        result = results[f"{fw} whole"]
        by_doc = ranklens.evaluate(documents, result.run, every)
        for labels, names in ((data.qrels, alike), (grouped, every)):
            by_span = ranklens.evaluate(labels, result, names)
            assert list(by_span.query_ids) == list(by_doc.query_ids)
            for m in names:
                np.testing.assert_allclose(
                    by_span.per_query[m], by_doc.per_query[m], atol=1e-12, err_msg=f"{fw} {m}"
                )
        # and chunks that are not whole documents do not reduce to them
        small = ranklens.evaluate(data.qrels, results[f"{fw} small"], ["P@5"])
        assert (
            small["P@5"] != ranklens.evaluate(documents, results[f"{fw} small"].run, ["P@5"])["P@5"]
        )


def test_compare_takes_runner_results_and_tied_chunks():
    """compare() judges a runner's result by its chunks under span labels (not its merged
    documents), and chunks with tied scores need no tie range (an id-level idea)."""
    labels = ranklens.SpanLabels.from_spans({"q": [("d", 10, 30)], "r": [("d", 0, 5)]})

    def tied(query):
        return [
            {"id": "c1", "parent": "d", "start": 0, "end": 20, "score": 1.0},
            {"id": "c2", "parent": "d", "start": 20, "end": 40, "score": 1.0},
        ]

    result = ranklens.run_retriever(
        tied, {"q": "a", "r": "b"}, key="parent", name="tied", progress=False
    )
    report = ranklens.compare(labels, {"tied": result, "again": result}, ["evidence_recall@2"])
    assert report.value("tied", "evidence_recall@2") == 1.0  # both chunks, not one document
    with pytest.raises(InputError, match="not defined for span labels"):
        ranklens.evaluate(labels, result, ["P@1"], ties="best")
