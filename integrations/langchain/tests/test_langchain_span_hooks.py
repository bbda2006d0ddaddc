"""Live LangChain retrievals scored against evidence spans: Documents cut by LangChain's own
splitter (``metadata["start_index"]`` with ``add_start_index=True``, the source in
``metadata["source"]``), captured by the callback handler in a batched chain, evaluate on
span labels exactly as the runner's result does; chunks cut without offsets are found in
their documents by their text, with the same numbers."""

from __future__ import annotations

import pytest
from _evidence_case import evidence_labels
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from langchain_text_splitters import RecursiveCharacterTextSplitter
from ranklens_langchain import RanklensCallbackHandler, run

from ranklens.errors import RanklensWarning

METRICS = ["evidence_recall@5", "evidence_precision@5", "evidence_iou@5", "ndcg@10", "recall@5"]


def retriever_of(texts, BM25sRetriever, offsets):
    splitter = RecursiveCharacterTextSplitter(chunk_size=250, chunk_overlap=50,
                                              add_start_index=offsets)  # fmt: skip
    docs = splitter.split_documents(
        [Document(page_content=t, metadata={"source": d}) for d, t in texts.items()]
    )
    assert len(docs) > 2 * len(texts)  # really chunked
    if offsets:
        assert all(texts[c.metadata["source"]][c.metadata["start_index"]:][: len(c.page_content)]
                   == c.page_content for c in docs)  # fmt: skip
    return BM25sRetriever.from_documents(docs, k=10)


@pytest.fixture(scope="module")
def case():
    return evidence_labels()


@pytest.mark.parametrize("offsets", [True, False], ids=["start_index", "located by text"])
def test_hooked_chain_scores_against_spans_as_the_runner_does(case, BM25sRetriever, offsets):
    labels, texts, queries = case
    retriever = retriever_of(texts, BM25sRetriever, offsets)
    chain = retriever | RunnableLambda(lambda docs: "\n\n".join(d.page_content for d in docs))
    handler = RanklensCallbackHandler()
    items = list(queries.items())
    chain.batch([t for _, t in items], [{"callbacks": [handler], "metadata": {"query_id": q},
                                         "max_concurrency": 4} for q, _ in items])  # fmt: skip
    rec = handler.recorder
    # splitters give chunks no id: the runner says the document run is empty under key="id",
    # and that span labels are not affected
    with pytest.warns(RanklensWarning, match="Span labels are not affected"):
        result = run(retriever, queries, progress=False)
    ours, theirs = rec.evaluate(labels, METRICS), result.evaluate(labels, METRICS)
    assert ours.aggregate == theirs.aggregate
    assert all((ours.per_query[m] == theirs.per_query[m]).all() for m in METRICS)
    assert 0.5 < ours["evidence_recall@5"] <= 1 and 0 < ours["evidence_precision@5"] < 0.6
    spans = rec.chunk_run().spans
    assert ((spans.start >= 0) == offsets).all()  # kept from the splitter, or not given
    assert not ours.counts.get("chunks_unlocated")  # every chunk placed, by offset or text
    if not offsets:
        with_offsets = retriever_of(texts, BM25sRetriever, True)
        with pytest.warns(RanklensWarning):
            same = run(with_offsets, queries, progress=False).evaluate(labels, METRICS)
        assert same.aggregate == ours.aggregate
