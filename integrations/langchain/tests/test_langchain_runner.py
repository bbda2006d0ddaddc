"""LangChain retrievers through the ranklens runner: a bm25s-backed BaseRetriever defined
here (langchain-community's BM25Retriever is sunset and unscored), and InMemoryVectorStore
with a deterministic embedding through a Runnable that returns (Document, score) pairs."""

from __future__ import annotations

import bm25s
import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore
from pydantic import ConfigDict
from ranklens_langchain import LangChainRetriever, document_to_hit, run

from conftest import assert_equals_trec_eval


class BM25sRetriever(BaseRetriever):
    """BM25 (bm25s, English stopwords, lower case) with its score in metadata["score"]."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    index: bm25s.BM25
    docs: list[Document]
    k: int = 10

    @classmethod
    def from_documents(cls, docs: list[Document], k: int = 10) -> BM25sRetriever:
        index = bm25s.BM25()
        index.index(
            bm25s.tokenize([d.page_content for d in docs], stopwords="en", show_progress=False),
            show_progress=False,
        )
        return cls(index=index, docs=docs, k=k)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun):
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        k = min(self.k, len(self.docs))
        idx, scores = self.index.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        out = []
        for i, s in zip(idx[0].tolist(), scores[0].tolist()):
            d = self.docs[i]
            out.append(
                Document(page_content=d.page_content, id=d.id, metadata={**d.metadata, "score": s})
            )
        return out


def documents(dataset):
    return [
        Document(page_content=v["text"], id=d, metadata={"doc_id": d})
        for d, v in dataset.corpus.items()
        if v["text"]
    ]


def test_bm25s_retriever_on_cranfield_equals_trec_eval(cranfield, tmp_path):
    retriever = BM25sRetriever.from_documents(documents(cranfield), k=100)
    adapter = LangChainRetriever(retriever)
    assert adapter.is_async is False and adapter.config()["k"] == 100
    result = run(retriever, cranfield, k=100, concurrency=4, name="bm25s", progress=False)
    assert not result.failed
    ev = assert_equals_trec_eval(result, cranfield, tmp_path)
    assert 0.2 < ev["map"] < 0.35  # SOURCE.md: bm25s gives MAP 0.279
    # Scores came from metadata and are kept in the log records.
    assert all(s is not None for s in result.records[0].scores)


def test_vector_store_runnable_with_scores(scifact_slice, tmp_path):
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    store.add_documents(documents(scifact_slice))
    search = RunnableLambda(lambda q: store.similarity_search_with_score(q, k=10))
    result = run(search, scifact_slice, k=10, name="fake-dense", progress=False)
    assert not result.failed
    first = result.records[0]
    assert len(first.doc_ids) == 10 and all(isinstance(s, float) for s in first.scores)
    assert first.scores == sorted(first.scores, reverse=True)
    assert_equals_trec_eval(result, scifact_slice, tmp_path)


def test_chunks_map_by_metadata_and_parent(scifact_slice):
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
