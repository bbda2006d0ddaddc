"""``InterleavedRetriever``: two LlamaIndex retrievers interleaved into one ``BaseRetriever``
(``ranklens.interleave(bm25, dense)`` returns one), for query engines and agents.

Each retrieval asks both retrievers, serves the interleaved nodes (copies, each with
``ranklens_impression`` and ``ranklens_doc`` in metadata, kept out of the LLM's and the
embedder's view of the node) and records the impression in ``.interleaving`` (a
:class:`ranklens.monitoring.Interleaving`). A query id set with
``instrument_tags({"query_id": ...})`` is recorded with the impression.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever

# re-exported by llama_index without __all__ (mypy sees it as private)
from llama_index.core.instrumentation.dispatcher import (  # type: ignore[attr-defined]
    active_instrument_tags,
)
from llama_index.core.schema import NodeWithScore, QueryBundle

from ranklens.capture import Hit

TAGS = ("ranklens_impression", "ranklens_doc")


def to_hit(item: NodeWithScore) -> Hit:
    """The node as a hit (as the adapter reads it; not imported from there: the adapter's
    plugin names this module)."""
    node = item.node
    return Hit(node.id_, item.score, getattr(node, "text", None), dict(node.metadata or {}),
               node.ref_doc_id)  # fmt: skip


class InterleavedRetriever(BaseRetriever):
    """See the module docstring; ``retriever_a``/``retriever_b``: any ``BaseRetriever``."""

    def __init__(self, retriever_a: BaseRetriever, retriever_b: BaseRetriever, interleaving: Any):
        super().__init__()
        self.retriever_a, self.retriever_b = retriever_a, retriever_b
        self.interleaving = interleaving

    def _serve(
        self, query: QueryBundle, a: list[NodeWithScore], b: list[NodeWithScore]
    ) -> list[NodeWithScore]:
        qid = (active_instrument_tags.get() or {}).get("query_id")
        hits_a = [to_hit(n) for n in a]
        hits_b = [to_hit(n) for n in b]
        served = self.interleaving.interleave_hits(query.query_str, qid, hits_a, hits_b)
        out: list[NodeWithScore] = []
        originals = {h.id: n for h, n in zip(hits_a + hits_b, a + b)}
        for h in served:
            source = originals[h.id]
            node = source.node.model_copy()
            node.metadata = {**node.metadata, **{t: h.metadata[t] for t in TAGS}}
            node.excluded_llm_metadata_keys = [*node.excluded_llm_metadata_keys, *TAGS]
            node.excluded_embed_metadata_keys = [*node.excluded_embed_metadata_keys, *TAGS]
            out.append(NodeWithScore(node=node, score=source.score))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        a = self.retriever_a.retrieve(query_bundle)
        b = self.retriever_b.retrieve(query_bundle)
        return self._serve(query_bundle, a, b)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        import asyncio

        a, b = await asyncio.gather(
            self.retriever_a.aretrieve(query_bundle), self.retriever_b.aretrieve(query_bundle)
        )
        return self._serve(query_bundle, a, b)

    def record_click(self, node_or_impression: Any, doc: Any = None) -> bool:
        """:meth:`ranklens.monitoring.Interleaving.record_click` (a served node works)."""
        clicked: bool = self.interleaving.record_click(node_or_impression, doc)
        return clicked

    def result(self, **kwargs: Any) -> Any:
        return self.interleaving.result(**kwargs)


def interleave(a: BaseRetriever, b: BaseRetriever, interleaving: Any) -> InterleavedRetriever:
    """The adapter plugin's ``interleave``: what ``ranklens.interleave(a, b)`` returns."""
    return InterleavedRetriever(a, b, interleaving)
