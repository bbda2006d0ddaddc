"""``BM25sRetriever``: a LangChain retriever over bm25s that returns scores.

langchain-community's ``BM25Retriever`` (rank_bm25, case-sensitive whitespace split, no
scores) lives in a package being sunset; this one lower-cases, removes English stopwords,
and puts each hit's BM25 score in ``metadata["score"]`` (which the ranklens adapter reads).
Requires ``bm25s`` (``pip install bm25s``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict


class BM25sRetriever(BaseRetriever):
    """BM25 over ``docs`` (bm25s); ``k`` hits per query, scores in ``metadata["score"]``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    index: Any
    docs: list[Document]
    k: int = 10
    stopwords: str | None = "en"

    @classmethod
    def from_documents(
        cls, docs: list[Document], k: int = 10, stopwords: str | None = "en"
    ) -> BM25sRetriever:
        import bm25s

        index = bm25s.BM25()
        tokens = bm25s.tokenize(
            [d.page_content for d in docs], stopwords=stopwords, show_progress=False
        )
        index.index(tokens, show_progress=False)
        return cls(index=index, docs=list(docs), k=k, stopwords=stopwords)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        import bm25s

        tokens = bm25s.tokenize([query], stopwords=self.stopwords, show_progress=False)
        k = min(self.k, len(self.docs))
        idx, scores = self.index.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        out = []
        for i, s in zip(idx[0].tolist(), scores[0].tolist()):
            d = self.docs[i]
            out.append(
                Document(page_content=d.page_content, id=d.id, metadata={**d.metadata, "score": s})
            )
        return out
