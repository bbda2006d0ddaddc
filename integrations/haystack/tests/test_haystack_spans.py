"""Where Haystack's chunks stand: ``DocumentSplitter``'s (and ``RecursiveDocumentSplitter``'s)
``meta["split_idx_start"]`` and ``meta["source_id"]`` read by the adapter, checked against
the text, through the runner and the tracer hook, and judged against span labels as a
brute-force oracle judges them; offsets into a cleaned copy of the text
(``DocumentCleaner`` before the splitter) found again in the original; chunks without
offsets found by their text; a chunk that cannot be found counted, never dropped."""

from __future__ import annotations

import re

import pytest
from _span_case import (
    assert_equals_brute_force,
    corpus,
    cover_faults,
    dataset,
    offset_faults,
    overlapping,
)
from haystack import Document, Pipeline, component
from haystack.components.preprocessors import (
    DocumentCleaner,
    DocumentSplitter,
    RecursiveDocumentSplitter,
)
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from ranklens_haystack import instrument, to_hit

import ranklens
from ranklens import Recorder
from ranklens.judging.spanmatch import place_chunks


def split(texts, splitter, cleaner=None):
    docs = [Document(id=d, content=t) for d, t in texts.items()]
    if cleaner is not None:
        docs = cleaner.run(docs)["documents"]
    if hasattr(splitter, "warm_up"):
        splitter.warm_up()
    return splitter.run(docs)["documents"]


def positions(chunks):
    out = []
    for c in chunks:
        h = to_hit(c)
        out.append((h.parent, h.start, h.end, h.text))
    return out


def bm25(chunks, top_k=10):
    store = InMemoryDocumentStore()
    store.write_documents(chunks)
    return InMemoryBM25Retriever(store, top_k=top_k)


@pytest.mark.parametrize(
    "splitter",
    [
        DocumentSplitter(split_by="word", split_length=30, split_overlap=10),
        DocumentSplitter(split_by="passage", split_length=1, split_overlap=0),
        DocumentSplitter(split_by="period", split_length=2, split_overlap=1),
        RecursiveDocumentSplitter(
            split_length=150, split_overlap=40, split_unit="char", separators=["\n\n", ". ", " "]
        ),  # "sentence" needs NLTK data
    ],
    ids=["word-overlap", "passage", "period-overlap", "recursive-overlap"],
)
def test_split_idx_start_reads_its_text(splitter):
    texts, _, _ = corpus()
    found = positions(split(texts, splitter))
    assert len(found) > len(texts) and not offset_faults(found, texts)
    assert all(f[1] is not None for f in found)
    assert not cover_faults(found, texts)  # in order, the repeated sentence's copies apart
    if splitter.split_overlap:
        assert overlapping(found) > len(texts)


def test_runner_and_hooks_keep_positions_and_judge_as_brute_force():
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    chunks = split(texts, DocumentSplitter(split_by="word", split_length=30, split_overlap=10))
    by_id = {c.id: (c.meta["source_id"], c.meta["split_idx_start"]) for c in chunks}
    retriever = bm25(chunks)
    result = ranklens.run_retriever(retriever, data, key="parent", name="hs", progress=False)
    for rec in result.records:
        for h in rec.hits:
            assert (h["parent"], h["start"]) == by_id[h["id"]]
            assert h["end"] == h["start"] + h["chars"]
    ev = ranklens.evaluate(data.qrels, result, ["evidence_recall@5"])
    assert ev.counts.get("chunks_unlocated", 0) == ev.counts.get("chunks_relocated", 0) == 0
    assert_equals_brute_force(data.qrels, result)
    assert_equals_brute_force(data.qrels, result, k=3, evidence=1.0)
    assert_equals_brute_force(data.qrels, result, k=3, evidence=0.5, chunk=0.2)

    pipeline = Pipeline()
    pipeline.add_component("retriever", retriever)
    with instrument(Recorder()) as rec:
        for q in data.queries.values():
            pipeline.run({"retriever": {"query": q}})
    names = ["evidence_recall@5", "evidence_iou@5", "P@5"]
    again = ranklens.evaluate(data.qrels, rec.chunk_run(data), names)
    assert again.aggregate == ranklens.evaluate(data.qrels, result, names).aggregate


def test_offsets_into_a_cleaned_text_are_found_again_in_the_original():
    """``DocumentCleaner`` (blank lines and runs of spaces removed) before the splitter:
    ``split_idx_start`` counts in the cleaned text, so past the first change it points
    elsewhere in the original the labels use. ranklens sees the text disagree, finds the
    chunk in the original (whitespace normalised) and counts it; the units it finds are the
    ones it finds when the labels are made on the cleaned text itself."""
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    cleaner = DocumentCleaner(keep_id=True)  # keep_id: source_id must stay the label's id
    splitter = DocumentSplitter(split_by="word", split_length=30, split_overlap=10)
    chunks = split(texts, splitter, cleaner)
    moved = [
        c
        for c in chunks
        if texts[c.meta["source_id"]][c.meta["split_idx_start"] :][: len(c.content)] != c.content
    ]
    assert len(moved) > len(texts)
    result = ranklens.run_retriever(
        bm25(chunks), data, key="parent", name="cleaned", progress=False
    )
    metrics = ["P@5", "recall@5", "ndcg@10", "mrr@10"]
    ev = ranklens.evaluate(data.qrels, result, metrics)
    assert ev.counts["chunks_relocated"] > 0 and ev.counts.get("chunks_unlocated", 0) == 0

    cleaned = {
        d.id: d.content
        for d in cleaner.run([Document(id=d, content=t) for d, t in texts.items()])["documents"]
    }
    quotes = {r["query_id"]: [] for r in data.qrels.span_records()}
    for r in data.qrels.span_records():
        quotes[r["query_id"]].append(
            {"doc_id": r["doc_id"], "quote": r["text"], "group": r["group"]}
        )
    on_cleaned = ranklens.SpanLabels.from_spans(quotes, cleaned)
    ref = ranklens.evaluate(on_cleaned, result, metrics)
    assert ref.counts.get("chunks_relocated", 0) == 0
    for m in metrics:
        assert (ev.per_query[m] == ref.per_query[m]).all(), m

    run = ranklens.Run.from_chunks(
        {
            "all": [  # as the adapter reads them
                {
                    "id": c.id,
                    "doc_id": c.meta["source_id"],
                    "start": to_hit(c).start,
                    "end": to_hit(c).end,
                    "text": c.content,
                }
                for c in moved
            ]
        }
    )
    placed, unlocated, relocated = place_chunks(run, data.qrels)
    assert unlocated == 0 and relocated > len(moved) / 2
    for c, a, b in zip(moved, placed.spans.start, placed.spans.end):
        original = texts[c.meta["source_id"]][a:b]
        assert re.sub(r"\s+", " ", original).strip() == re.sub(r"\s+", " ", c.content).strip()


def test_chunks_without_offsets_are_found_by_their_text():
    """Chunks written to the store without ``split_idx_start`` (made by other code) judge
    exactly as the splitter's."""
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    chunks = split(texts, DocumentSplitter(split_by="word", split_length=30, split_overlap=10))
    bare = [
        Document(id=c.id, content=c.content, meta={"source_id": c.meta["source_id"]})
        for c in chunks
    ]
    with_offsets = ranklens.run_retriever(
        bm25(chunks), data, key="parent", name="split", progress=False
    )
    without = ranklens.run_retriever(bm25(bare), data, key="parent", name="bare", progress=False)
    assert all(h.get("start") is None for r in without.records for h in r.hits)
    metrics = ["P@5", "recall@5", "ndcg@10", "evidence_recall@5", "evidence_precision@5"]
    a = ranklens.evaluate(data.qrels, with_offsets, metrics)
    b = ranklens.evaluate(data.qrels, without, metrics)
    assert b.counts.get("chunks_unlocated", 0) == 0
    for m in metrics:
        assert (a.per_query[m] == b.per_query[m]).all(), m


def test_a_whole_float_offset_is_an_offset():
    doc = Document(content="Plasma levels", meta={"split_idx_start": 72.0, "source_id": "s"})
    assert (to_hit(doc).start, to_hit(doc).end, to_hit(doc).parent) == (72, 85, "s")
    assert to_hit(Document(content="x", meta={"split_idx_start": -1})).start is None


@component
class WithSummary:
    """A retriever that puts a model-written summary (in no document) first."""

    def __init__(self, inner):
        self.inner = inner

    @component.output_types(documents=list[Document])
    def run(self, query: str, top_k: int | None = None):
        found = self.inner.run(query=query)["documents"]
        summary = Document(
            id="summary", content="Otters: rare; a summary by a model.", meta={"source_id": "short"}
        )
        return {"documents": [summary, *found]}


def test_a_chunk_not_in_its_document_is_counted_never_dropped():
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    chunks = split(texts, DocumentSplitter(split_by="word", split_length=30, split_overlap=0))
    retriever = WithSummary(bm25(chunks))
    result = ranklens.run_retriever(retriever, data, key="parent", name="summary", progress=False)
    ev = ranklens.evaluate(data.qrels, result, ["P@5"])
    assert ev.counts["chunks_unlocated"] == len(data.queries)
    assert ev.counts["hits_retrieved"] == sum(len(r.hits) for r in result.records)
    assert all(r.hits[0]["id"] == "summary" for r in result.records)  # kept at rank 1
    assert_equals_brute_force(data.qrels, result)
