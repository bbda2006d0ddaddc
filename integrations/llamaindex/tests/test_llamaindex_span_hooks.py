"""Live LlamaIndex retrievals scored against evidence spans: nodes cut by LlamaIndex's own
splitter (``start_char_idx``/``end_char_idx`` into their ``ref_doc_id``), captured by the
instrumentation hook and by the legacy callback handler, evaluate on span labels exactly as
the runner's result does, and compare takes the recorder's chunks beside it."""

from __future__ import annotations

import re

import pytest
from _evidence_case import evidence_labels
from llama_index.core import Document
from llama_index.core.callbacks import CallbackManager
from llama_index.core.instrumentation.dispatcher import instrument_tags
from llama_index.core.node_parser import SentenceSplitter
from llama_index.retrievers.bm25 import BM25Retriever
from ranklens_llamaindex import RanklensCallbackHandler, instrument, run

import ranklens
from ranklens import Recorder

METRICS = ["evidence_recall@5", "evidence_precision@5", "evidence_iou@5", "ndcg@10", "recall@5"]


def sentences(text: str) -> list[str]:
    """A regex sentence split that keeps the whitespace, so each node's text stands in its
    document and LlamaIndex records its offsets (the default split needs NLTK data)."""
    return re.split(r"(?<=[.!?]\s)", text)


@pytest.fixture(scope="module")
def case():
    labels, texts, queries = evidence_labels()
    splitter = SentenceSplitter(chunk_size=80, chunk_overlap=0, chunking_tokenizer_fn=sentences)
    nodes = splitter.get_nodes_from_documents([Document(id_=d, text=t) for d, t in texts.items()])
    assert len(nodes) > 2 * len(texts)  # really chunked
    assert all(texts[n.ref_doc_id][n.start_char_idx : n.end_char_idx] == n.text for n in nodes)
    return labels, queries, nodes, BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)


def test_hooked_retrievals_score_against_spans_as_the_runner_does(case):
    labels, queries, nodes, bm25 = case
    with instrument(Recorder()) as rec:
        for q, text in queries.items():
            with instrument_tags({"query_id": q}):
                bm25.retrieve(text)
    result = run(bm25, queries, progress=False)
    ours, theirs = rec.evaluate(labels, METRICS), result.evaluate(labels, METRICS)
    assert ours.aggregate == theirs.aggregate
    assert all((ours.per_query[m] == theirs.per_query[m]).all() for m in METRICS)
    assert 0.3 < ours["evidence_recall@5"] < 1 and 0 < ours["evidence_precision@5"] < 0.5
    # every hit kept its node's place: nothing located by text, nothing unplaced
    assert not ours.counts.get("chunks_unlocated") and not ours.counts.get("chunks_relocated")
    spans = rec.chunk_run().spans
    by_id = {n.node_id: n for n in nodes}
    rows = list(zip(rec.chunk_run().docs.strings(range(len(spans.start))), spans.start))
    assert all(by_id[c].start_char_idx == s for c, s in rows)
    rep = ranklens.compare(labels, {"hooks": rec.chunk_run(), "runner": result}, METRICS,
                           test="t")  # fmt: skip
    assert all(rep.value("hooks", m) == rep.value("runner", m) for m in METRICS)
    assert (
        rep.metadata["drilldown"]["place"]["hooks"] == rep.metadata["drilldown"]["place"]["runner"]
    )


def test_the_legacy_callback_handler_scores_spans_by_query_text(case):
    labels, queries, nodes, bm25 = case
    rec = Recorder()
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)
    retriever.callback_manager = CallbackManager([RanklensCallbackHandler(rec)])
    for text in queries.values():  # no query ids: matched to the labels by text
        retriever.retrieve(text)
    dataset = ranklens.Dataset(queries, labels, name="evidence")
    ours = rec.evaluate(dataset, METRICS)
    theirs = run(bm25, queries, progress=False).evaluate(labels, METRICS)
    assert ours.aggregate == theirs.aggregate
    assert ours.recorder_counts["matched"] == len(queries)
