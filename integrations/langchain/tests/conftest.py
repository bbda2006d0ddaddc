"""LangChain test helpers: the bm25s retriever ranklens-langchain ships, and Documents from a
dataset's corpus."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from ranklens_langchain import BM25sRetriever


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
