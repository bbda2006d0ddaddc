"""``InterleavedRetriever``: two LangChain retrievers (or Runnables returning Documents)
interleaved into one ``BaseRetriever`` (``ranklens.interleave(bm25, dense)`` returns one).

Each call asks both (as child runs, so callbacks and tracing see them), serves the
interleaved Documents (copies, each with ``ranklens_impression`` and ``ranklens_doc`` in
metadata) and records the impression in ``.interleaving``. A query id in the run's
metadata (``query_id`` or ``ranklens_query_id``) is recorded with it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import ConfigDict

from ranklens.capture import Hit

TAGS = ("ranklens_impression", "ranklens_doc")
QUERY_ID_KEYS = ("query_id", "ranklens_query_id")  # as the hooks read them


def to_hit(item: Any) -> Hit:
    """A Document (or ``(Document, score)``) as a hit: id, the ``score`` metadata, text,
    metadata and ``doc_id`` as parent (the adapter's reading, kept here: the adapter's
    plugin names this module)."""
    doc, score = item if isinstance(item, tuple) else (item, item.metadata.get("score"))
    parent = doc.metadata.get("doc_id")
    return Hit(doc.id, score, doc.page_content, dict(doc.metadata),
               None if parent is None else str(parent))  # fmt: skip


class InterleavedRetriever(BaseRetriever):
    """See the module docstring."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    retriever_a: Runnable  # type: ignore[type-arg]  # pydantic validates the bare class
    retriever_b: Runnable  # type: ignore[type-arg]  # pydantic validates the bare class
    interleaving: Any

    def _serve(self, query: str, run_manager: Any, a: list[Any], b: list[Any]) -> list[Document]:
        meta = getattr(run_manager, "metadata", None) or {}
        qid = next((meta[k] for k in QUERY_ID_KEYS if meta.get(k) is not None), None)
        hits_a, hits_b = [to_hit(d) for d in a], [to_hit(d) for d in b]
        originals = {h.id: d for h, d in zip(hits_a + hits_b, a + b)}
        served = self.interleaving.interleave_hits(query, qid, hits_a, hits_b)
        out = []
        for h in served:
            d = originals[h.id]
            d = d[0] if isinstance(d, tuple) else d
            tags = {t: h.metadata[t] for t in TAGS}
            out.append(
                Document(page_content=d.page_content, id=d.id, metadata={**d.metadata, **tags})
            )
        return out

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        config: RunnableConfig = {"callbacks": run_manager.get_child()}
        a = self.retriever_a.invoke(query, config)
        b = self.retriever_b.invoke(query, config)
        return self._serve(query, run_manager, a, b)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        import asyncio

        config: RunnableConfig = {"callbacks": run_manager.get_child()}
        a, b = await asyncio.gather(
            self.retriever_a.ainvoke(query, config), self.retriever_b.ainvoke(query, config)
        )
        return self._serve(query, run_manager, a, b)

    def record_click(self, document_or_impression: Any, doc: Any = None) -> bool:
        """:meth:`ranklens.monitoring.Interleaving.record_click` (a served Document works)."""
        clicked: bool = self.interleaving.record_click(document_or_impression, doc)
        return clicked

    def result(self, **kwargs: Any) -> Any:
        return self.interleaving.result(**kwargs)


def interleave(
    a: Runnable[Any, Any], b: Runnable[Any, Any], interleaving: Any
) -> InterleavedRetriever:
    """The adapter plugin's ``interleave``: what ``ranklens.interleave(a, b)`` returns."""
    return InterleavedRetriever(retriever_a=a, retriever_b=b, interleaving=interleaving)
