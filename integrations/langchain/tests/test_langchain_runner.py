"""LangChain retrievers through the ranklens runner: a bm25s-backed BaseRetriever defined
here (langchain-community's BM25Retriever is sunset and unscored), and InMemoryVectorStore
with a deterministic embedding through a Runnable that returns (Document, score) pairs."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore
from ranklens_langchain import LangChainRetriever, document_to_hit, run


def test_bm25s_retriever_on_cranfield_equals_trec_eval(
    assert_equals_trec_eval, cranfield, tmp_path, BM25sRetriever, documents
):
    retriever = BM25sRetriever.from_documents(documents(cranfield), k=100)
    adapter = LangChainRetriever(retriever)
    assert adapter.is_async is False and adapter.config()["k"] == 100
    result = run(retriever, cranfield, k=100, concurrency=4, name="bm25s", progress=False)
    assert not result.failed
    ev = assert_equals_trec_eval(result, cranfield, tmp_path)
    assert 0.2 < ev["map"] < 0.35  # SOURCE.md: bm25s gives MAP 0.279
    # Scores came from metadata and are kept in the log records.
    assert all(s is not None for s in result.records[0].scores)


def test_vector_store_runnable_with_scores(
    assert_equals_trec_eval, scifact_slice, tmp_path, BM25sRetriever, documents
):
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    store.add_documents(documents(scifact_slice))
    search = RunnableLambda(lambda q: store.similarity_search_with_score(q, k=10))
    result = run(search, scifact_slice, k=10, name="fake-dense", progress=False)
    assert not result.failed
    first = result.records[0]
    assert len(first.doc_ids) == 10 and all(isinstance(s, float) for s in first.scores)
    assert first.scores == sorted(first.scores, reverse=True)
    assert_equals_trec_eval(result, scifact_slice, tmp_path)


def test_chunks_map_by_metadata_and_parent(scifact_slice, BM25sRetriever, documents):
    # Split each document in two chunks whose ids are new: map back through metadata.
    chunks = []
    for d in documents(scifact_slice):
        half = len(d.page_content) // 2
        for i, part in enumerate((d.page_content[:half], d.page_content[half:])):
            chunks.append(Document(page_content=part, id=f"{d.id}:{i}", metadata=dict(d.metadata)))
    retriever = BM25sRetriever.from_documents(chunks, k=30)
    by_meta = run(retriever, scifact_slice, k=10, key="meta.doc_id", progress=False)
    by_parent = run(retriever, scifact_slice, k=10, key="parent", progress=False)
    assert by_meta.run.to_lists() == by_parent.run.to_lists()
    assert by_meta.report_info()["duplicates_dropped"] > 0
    assert set(by_meta.records[0].doc_ids) <= set(scifact_slice.corpus)


def test_document_to_hit_errors_name_the_type():
    from ranklens.errors import InputError

    with pytest.raises(InputError, match="expected a langchain Document, got str"):
        document_to_hit("nope")
    with pytest.raises(InputError, match="needs a langchain Runnable"):
        LangChainRetriever(lambda q: [])


def test_ranklens_run_wraps_a_langchain_retriever_through_the_entry_point(
    BM25sRetriever, documents, scifact_slice
):
    import ranklens

    retriever = BM25sRetriever.from_documents(documents(scifact_slice), k=10)
    direct = ranklens.run_retriever(retriever, scifact_slice, progress=False)
    assert direct.config["retriever"]["framework"] == "langchain"
    assert direct.run.to_lists() == run(retriever, scifact_slice, progress=False).run.to_lists()
