"""Where LangChain's chunks stand: text splitters' ``metadata["start_index"]``
(``add_start_index=True``) read by the adapter, checked against the text, through the
runner and the hooks, and judged against span labels as a brute-force oracle judges them;
a ``start_index`` of -1 (a chunk the splitter could not find) is no offset, and the chunk
is found by its text; a chunk that cannot be found is counted, never dropped."""

from __future__ import annotations

import random
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
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from langchain_text_splitters import CharacterTextSplitter, RecursiveCharacterTextSplitter
from ranklens_langchain import BM25sRetriever, instrument, to_hit

import ranklens
from ranklens import Recorder
from ranklens.judging.spanmatch import place_chunks


def split(texts, splitter):
    docs = [Document(page_content=t, metadata={"doc_id": d}) for d, t in texts.items()]
    return splitter.split_documents(docs)


def positions(chunks):
    out = []
    for c in chunks:
        h = to_hit(c)
        out.append((h.parent, h.start, h.end, h.text))
    return out


@pytest.mark.parametrize(
    "splitter",
    [
        RecursiveCharacterTextSplitter(chunk_size=120, chunk_overlap=40, add_start_index=True),
        RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=0, add_start_index=True),
        CharacterTextSplitter(separator=" ", chunk_size=90, chunk_overlap=30, add_start_index=True),
    ],
    ids=["recursive-overlap", "recursive", "character-overlap"],
)
def test_start_index_reads_its_text(splitter):
    texts, _, _ = corpus()
    found = positions(split(texts, splitter))
    assert len(found) > len(texts) and not offset_faults(found, texts)
    # no offset only where the splitter rejoined pieces over collapsed separators
    assert all(f[3] not in texts[f[0]] for f in found if f[1] is None)
    assert all(f[1] is not None for f in found if f[0] != "spaces")
    assert not cover_faults(found, texts)  # in order, the repeated sentence's copies apart
    if splitter._chunk_overlap:
        assert overlapping(found) > len(texts)


def test_start_index_on_repeated_passages_with_separators_kept():
    """LangChain finds each chunk from where the last one should end, minus the overlap:
    with the separators kept (the default), a passage repeated many times is never put on
    an earlier copy (200 texts of repeated sentences, double spaces, sizes and overlaps)."""
    rng = random.Random(0)
    pieces = [
        "The cohort had 412 patients.",
        "Mortality fell.",
        "Plasma  levels rose.",
        "No events.",
        "Doses were  doubled.",
        "We  measured it.",
    ]
    for _ in range(200):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randrange(3, 12)))
        size = rng.randrange(20, 90)
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=size, chunk_overlap=rng.randrange(0, size // 2), add_start_index=True
        )
        found = positions(split({"d": text}, splitter))
        assert not offset_faults(found, {"d": text}) and not cover_faults(found, {"d": text})


def test_runner_log_and_hooks_keep_positions_and_judge_as_brute_force(tmp_path):
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    chunks = split(
        texts,
        RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=50, add_start_index=True),
    )
    retriever = BM25sRetriever.from_documents(chunks, k=10)
    log = tmp_path / "lc.jsonl"
    result = ranklens.run_retriever(
        retriever, data, key="parent", name="lc", progress=False, cache=log
    )
    resumed = ranklens.run_retriever(
        retriever, data, key="parent", name="lc", progress=False, cache=log
    )
    assert [r.hits for r in resumed.records] == [r.hits for r in result.records]  # the log
    placed = {
        (c.metadata["doc_id"], c.page_content[:200]): c.metadata["start_index"] for c in chunks
    }
    for rec in result.records:
        for h in rec.hits:
            assert h["start"] == placed[(h["parent"], h["text"])]
            assert h["end"] == h["start"] + h["chars"]
    ev = ranklens.evaluate(data.qrels, result, ["evidence_recall@5"])
    assert ev.counts.get("chunks_unlocated", 0) == ev.counts.get("chunks_relocated", 0) == 0
    assert_equals_brute_force(data.qrels, result)
    assert_equals_brute_force(data.qrels, result, k=3, evidence=0.5)
    assert_equals_brute_force(data.qrels, result, k=3, chunk=0.5)

    with instrument(Recorder()) as rec:
        for q in data.queries.values():
            retriever.invoke(q)
    names = ["evidence_recall@5", "evidence_iou@5", "P@5"]
    again = ranklens.evaluate(data.qrels, rec.chunk_run(data), names)
    assert again.aggregate == ranklens.evaluate(data.qrels, result, names).aggregate


def test_minus_one_is_no_offset_and_the_chunk_is_found_by_its_text():
    """Splitting on single line breaks without keeping them (``keep_separator=False``)
    rejoins pieces with one "\\n" where the document had three: the chunk is not verbatim
    in its document and LangChain records ``start_index=-1``. The adapter passes no range
    (not -1, nor an end), and ranklens finds the chunk with whitespace normalised."""
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    splitter = CharacterTextSplitter(
        separator="\n", chunk_size=300, chunk_overlap=0, add_start_index=True
    )
    chunks = split(texts, splitter)
    lost = [c for c in chunks if c.metadata["start_index"] == -1]
    assert lost and all(c.page_content not in texts[c.metadata["doc_id"]] for c in lost)
    assert all(to_hit(c).start is None and to_hit(c).end is None for c in lost)
    run = ranklens.Run.from_chunks(
        {
            "all": [
                {"id": str(i), "doc_id": c.metadata["doc_id"], "text": c.page_content}
                for i, c in enumerate(lost)
            ]
        }
    )
    placed, unlocated, _ = place_chunks(run, data.qrels)
    assert unlocated == 0
    for c, a, b in zip(lost, placed.spans.start, placed.spans.end):
        doc = texts[c.metadata["doc_id"]]
        assert re.sub(r"\s+", " ", doc[a:b]) == re.sub(r"\s+", " ", c.page_content)
    result = ranklens.run_retriever(
        BM25sRetriever.from_documents(chunks, k=10), data, key="parent", name="lost", progress=False
    )
    ev = ranklens.evaluate(data.qrels, result, ["evidence_recall@5"])
    assert ev.counts.get("chunks_unlocated", 0) == 0


def test_a_whole_float_start_index_is_an_offset():
    """A vector store that keeps metadata as JSON numbers may hand start_index back as a
    float: a whole one is still the offset (and the end follows the text)."""
    hit = to_hit(Document(page_content="Plasma levels", metadata={"start_index": 72.0}))
    assert (hit.start, hit.end) == (72, 85)
    assert to_hit(Document(page_content="x", metadata={"start_index": 7.5})).start is None
    assert to_hit(Document(page_content="x", metadata={"start_index": True})).start is None


def test_a_chunk_not_in_its_document_is_counted_never_dropped():
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    chunks = split(
        texts, RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=0, add_start_index=True)
    )
    bm25 = BM25sRetriever.from_documents(chunks, k=10)
    summary = Document(
        page_content="Otters: rare, a summary by a model.", metadata={"doc_id": "short"}
    )
    chain = bm25 | RunnableLambda(lambda docs: [summary, *docs])
    result = ranklens.run_retriever(chain, data, key="parent", name="summary", progress=False)
    ev = ranklens.evaluate(data.qrels, result, ["P@5"])
    assert ev.counts["chunks_unlocated"] == len(data.queries)
    assert ev.counts["hits_retrieved"] == 11 * len(data.queries)
    assert_equals_brute_force(data.qrels, result)
