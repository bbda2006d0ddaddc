"""``InterleavedRetriever``: two Haystack retriever components interleaved into one
component (``ranklens.interleave(bm25, embedding_retriever)`` returns one), to put in a
Pipeline where a retriever goes: ``run(query, top_k=None, query_id=None) ->
{"documents": [...]}``; each retriever gets ``query`` (and ``top_k`` when it takes it).

Served Documents are copies with ``ranklens_impression`` and ``ranklens_doc`` in meta;
the impression is recorded in ``.interleaving``.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

from haystack import Document, component

from ranklens.capture import Hit

TAGS = ("ranklens_impression", "ranklens_doc")


def to_hit(doc: Document) -> Hit:
    """A Document as a hit (the adapter's reading, kept here: the adapter's plugin names
    this module); the parent is ``meta["source_id"]``."""
    parent = (doc.meta or {}).get("source_id")
    return Hit(doc.id, doc.score, doc.content, dict(doc.meta or {}),
               None if parent is None else str(parent))  # fmt: skip


def _kwargs(target: Any, query: str, top_k: int | None) -> dict[str, Any]:
    kw: dict[str, Any] = {"query": query}
    if top_k is not None and "top_k" in inspect.signature(target.run).parameters:
        kw["top_k"] = top_k
    return kw


@component
class InterleavedRetriever:
    """See the module docstring."""

    def __init__(self, retriever_a: Any, retriever_b: Any, interleaving: Any):
        self.retriever_a, self.retriever_b = retriever_a, retriever_b
        self.interleaving = interleaving

    def _serve(
        self, query: str, query_id: str | None, a: list[Document], b: list[Document]
    ) -> dict[str, Any]:
        hits_a, hits_b = [to_hit(d) for d in a], [to_hit(d) for d in b]
        originals = {h.id: d for h, d in zip(hits_a + hits_b, a + b)}
        served = self.interleaving.interleave_hits(query, query_id, hits_a, hits_b)
        docs = []
        for h in served:
            d = originals[h.id]
            docs.append(replace(d, meta={**d.meta, **{t: h.metadata[t] for t in TAGS}}))
        return {"documents": docs}

    @component.output_types(documents=list[Document])
    def run(
        self, query: str, top_k: int | None = None, query_id: str | None = None
    ) -> dict[str, Any]:
        a = self.retriever_a.run(**_kwargs(self.retriever_a, query, top_k))["documents"]
        b = self.retriever_b.run(**_kwargs(self.retriever_b, query, top_k))["documents"]
        return self._serve(query, query_id, a, b)

    def record_click(self, document_or_impression: Any, doc: Any = None) -> bool:
        """:meth:`ranklens.monitoring.Interleaving.record_click` (a served Document works)."""
        clicked: bool = self.interleaving.record_click(document_or_impression, doc)
        return clicked

    def result(self, **kwargs: Any) -> Any:
        return self.interleaving.result(**kwargs)


def interleave(a: Any, b: Any, interleaving: Any) -> InterleavedRetriever:
    """The adapter plugin's ``interleave``: what ``ranklens.interleave(a, b)`` returns."""
    return InterleavedRetriever(a, b, interleaving)
