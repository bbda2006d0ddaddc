"""LangChain test helpers: a bm25s-backed BaseRetriever (langchain-community's BM25Retriever
is sunset and unscored) and Documents from a dataset's corpus."""

from __future__ import annotations

import bm25s
import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict


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


@pytest.fixture(name="BM25sRetriever", scope="session")
def bm25s_retriever_class():
    return BM25sRetriever


@pytest.fixture(name="documents", scope="session")
def documents_function():
    return documents
