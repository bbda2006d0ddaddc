"""Where LlamaIndex's chunks stand: the node parsers' ``start_char_idx``/``end_char_idx``
read by the adapter, checked against the text, through the runner and the hooks, and
judged against span labels as a brute-force oracle judges them; chunks without offsets
found by their text, and a chunk that cannot be found counted, never dropped."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import pytest
from _span_case import (
    assert_equals_brute_force,
    corpus,
    cover_faults,
    dataset,
    offset_faults,
    overlapping,
)
from llama_index.core import Document
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.node_parser import SentenceSplitter, TokenTextSplitter
from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode
from llama_index.retrievers.bm25 import BM25Retriever
from ranklens_llamaindex import instrument, to_hit

import ranklens
from ranklens import Recorder
from ranklens.judging.spanmatch import place_chunks


def keep_spaces(text):
    """Sentences with the whitespace after them: no character lost."""
    return [s for s in re.split(r"(?<=[.!?]\s)", text) if s]


def drop_spaces(text):
    """Sentences without the whitespace between them (a common regex): chunks glue them."""
    return re.split(r"(?<=[.!?])\s+", text)


def nodes_of(texts, parser):
    return parser.get_nodes_from_documents([Document(id_=d, text=t) for d, t in texts.items()])


def positions(nodes):
    out = []
    for n in nodes:
        h = to_hit(NodeWithScore(node=n, score=1.0))
        out.append((h.parent, h.start, h.end, h.text))
    return out


def bm25(nodes, k=10):
    with redirect_stdout(io.StringIO()):  # bm25s's progress
        return BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k)


@pytest.mark.parametrize(
    "parser",
    [
        SentenceSplitter(chunk_size=64, chunk_overlap=12, chunking_tokenizer_fn=keep_spaces),
        SentenceSplitter(chunk_size=128, chunk_overlap=0, chunking_tokenizer_fn=keep_spaces),
        TokenTextSplitter(chunk_size=24, chunk_overlap=8),
    ],
    ids=["sentences-overlap", "sentences", "tokens-overlap"],
)
def test_node_offsets_read_their_text(parser):
    texts, _, _ = corpus()
    found = positions(nodes_of(texts, parser))
    assert len(found) > len(texts) and not offset_faults(found, texts)
    assert all(f[1] is not None for f in found)
    if parser.chunk_overlap:
        assert overlapping(found) > len(texts)  # overlapping chunks, each placed right
    assert not cover_faults(found, texts)  # in order, the repeated sentence's copies apart


def test_runner_and_hooks_keep_positions_and_judge_as_brute_force():
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    parser = SentenceSplitter(chunk_size=64, chunk_overlap=12, chunking_tokenizer_fn=keep_spaces)
    nodes = nodes_of(texts, parser)
    by_id = {n.node_id: (n.ref_doc_id, n.start_char_idx, n.end_char_idx) for n in nodes}
    retriever = bm25(nodes)
    result = ranklens.run_retriever(retriever, data, name="li", progress=False)
    for rec in result.records:
        assert [(h["parent"], h["start"], h["end"]) for h in rec.hits] == [
            by_id[h["id"]] for h in rec.hits
        ]
    ev = ranklens.evaluate(data.qrels, result, ["evidence_recall@5"])
    assert ev.counts.get("chunks_unlocated", 0) == ev.counts.get("chunks_relocated", 0) == 0
    assert_equals_brute_force(data.qrels, result)
    assert_equals_brute_force(data.qrels, result, k=3, evidence=1.0)  # the whole span
    assert_equals_brute_force(data.qrels, result, k=3, chunk=0.5)

    with instrument(Recorder()) as rec:
        for q in data.queries.values():
            retriever.retrieve(q)
    recorded = rec.chunk_run(data)
    again = ranklens.evaluate(data.qrels, recorded, ["evidence_recall@5", "evidence_iou@5"])
    direct = ranklens.evaluate(data.qrels, result, ["evidence_recall@5", "evidence_iou@5"])
    assert again.aggregate == direct.aggregate


def test_glued_sentences_are_found_without_offsets():
    """A sentence split that drops the whitespace glues sentences ("dose.No"): the chunk is
    not verbatim in its document, LlamaIndex records no offsets, and ranklens finds it with
    the whitespace ignored: each placed range holds the chunk's characters, and only
    whitespace besides."""
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    parser = SentenceSplitter(chunk_size=64, chunk_overlap=0, chunking_tokenizer_fn=drop_spaces)
    nodes = nodes_of(texts, parser)
    glued = [n for n in nodes if n.start_char_idx is None]
    assert glued and all(n.text not in texts[n.ref_doc_id] for n in glued)
    run = ranklens.Run.from_chunks(
        {"all": [{"id": n.node_id, "doc_id": n.ref_doc_id, "text": n.text} for n in glued]}
    )
    placed, unlocated, _ = place_chunks(run, data.qrels)
    assert unlocated == 0
    for n, a, b in zip(glued, placed.spans.start, placed.spans.end):
        assert re.sub(r"\s", "", texts[n.ref_doc_id][a:b]) == re.sub(r"\s", "", n.text)
    result = ranklens.run_retriever(bm25(nodes, 20), data, name="glued", progress=False)
    ev = ranklens.evaluate(data.qrels, result, ["P@5", "evidence_recall@5"])
    assert ev.counts.get("chunks_unlocated", 0) == 0  # every retrieved chunk placed


def test_a_chunk_starting_where_the_last_one_did_is_found_by_its_text():
    """LlamaIndex searches each chunk from one past the previous chunk's start, so a chunk
    starting at the same place (a short sentence under a large overlap) gets no offsets."""
    doc = (
        "alpha cell.    gamma beta\ny!  beta\n\n \t y! \n   cell. A.\nthe é   the \t alpha  y! "
        "gamma \n\n \n\n gamma \t \n\ngamma ﬁne gamma\nbeta é \t y!é \n\n alpha \n        "
        "beta \n\n \n\n x.    x.beta \t       beta the the beta   \n\tbetagamma\n\n \n    x. "
        "beta beta\ny!\n\n  \t  gammaﬁne y! A.  alpha \n\ny!\nbeta cell. A.  gamma y! "
        "ﬁne  the "
    )

    def split(text):
        return re.findall(r".+?(?:[.!?](?:\s+|$)|$)", text, re.S) or [text]

    with redirect_stdout(io.StringIO()):
        parser = SentenceSplitter(chunk_size=26, chunk_overlap=6, chunking_tokenizer_fn=split)
        nodes = nodes_of({"d": doc}, parser)
    missing = [n for n in nodes if n.start_char_idx is None]
    assert len(missing) == 1 and missing[0].text in doc
    labels = ranklens.SpanLabels.from_spans({"q": [("d", 0, len(doc))]}, texts={"d": doc})
    run = ranklens.Run.from_chunks(
        {
            "q": [
                {
                    "id": n.node_id,
                    "doc_id": "d",
                    "start": n.start_char_idx,
                    "end": n.end_char_idx,
                    "text": n.text,
                }
                for n in nodes
            ]
        }
    )
    placed, unlocated, relocated = place_chunks(run, labels)
    assert unlocated == relocated == 0
    for n, a, b in zip(nodes, placed.spans.start, placed.spans.end):
        assert doc[a:b] == n.text


def _bare(nodes):
    source = NodeRelationship.SOURCE
    return [
        TextNode(
            id_=n.node_id,
            text=n.text,
            relationships={source: RelatedNodeInfo(node_id=n.ref_doc_id)},
        )
        for n in nodes
    ]


def test_nodes_without_offsets_are_found_by_their_text():
    """Nodes made by hand (no parser, so no offsets) judge exactly as the parser's nodes."""
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    parsed = nodes_of(
        texts, SentenceSplitter(chunk_size=64, chunk_overlap=10, chunking_tokenizer_fn=keep_spaces)
    )
    with_offsets = ranklens.run_retriever(bm25(parsed), data, name="parsed", progress=False)
    without = ranklens.run_retriever(bm25(_bare(parsed)), data, name="bare", progress=False)
    assert all(h.get("start") is None for r in without.records for h in r.hits)
    metrics = ["P@5", "recall@5", "ndcg@10", "evidence_recall@5", "evidence_precision@5"]
    a = ranklens.evaluate(data.qrels, with_offsets, metrics)
    b = ranklens.evaluate(data.qrels, without, metrics)
    assert b.counts.get("chunks_unlocated", 0) == 0
    for m in metrics:
        assert (a.per_query[m] == b.per_query[m]).all(), m


class WithSummary(BaseRetriever):
    """A retriever that puts a model-written summary (not in any document) first."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def _retrieve(self, query_bundle):
        node = TextNode(
            id_="summary",
            text="Otters are rare; summary written by a model.",
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="short")},
        )
        return [NodeWithScore(node=node, score=99.0), *self.inner.retrieve(query_bundle)]


def test_a_chunk_not_in_its_document_is_counted_never_dropped():
    data = dataset()
    texts = {d: v["text"] for d, v in data.corpus.items()}
    parsed = nodes_of(
        texts, SentenceSplitter(chunk_size=64, chunk_overlap=0, chunking_tokenizer_fn=keep_spaces)
    )
    result = ranklens.run_retriever(WithSummary(bm25(parsed)), data, name="summary", progress=False)
    ev = ranklens.evaluate(data.qrels, result, ["P@5"])
    assert ev.counts["chunks_unlocated"] == len(data.queries)  # one a query, counted
    assert ev.counts["hits_retrieved"] == 11 * len(data.queries)  # and kept at rank 1
    assert_equals_brute_force(data.qrels, result)  # read, matching nothing
