"""The LlamaIndex retriever adapter."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.instrumentation.dispatcher import instrument_tags
from llama_index.core.schema import NodeWithScore

import ranklens
from ranklens.errors import InputError
from ranklens.hits import EVERYTHING, Hit
from ranklens.runner import RetrieverAdapter, RunResult


def node_to_hit(item: NodeWithScore) -> Hit:
    """A ranklens hit from a ``NodeWithScore``: the node id, its score, text and metadata,
    and the parent document (``ref_doc_id``) for ``key="parent"``."""
    return Hit.from_light(node_to_tuple(item, EVERYTHING))


def node_to_tuple(item: NodeWithScore, needs: frozenset) -> tuple:
    """The recorder's light form of a node: ``(id, score, text, parent, metadata)``, the
    parent and metadata only when the recorder's key reads them."""
    node = item.node
    return (
        node.id_,  # the field behind node_id, without the property's cost
        item.score,
        getattr(node, "text", None),
        node.ref_doc_id if "parent" in needs else None,
        dict(node.metadata or {}) if "metadata" in needs else None,
    )


def _truly_async(retriever: BaseRetriever) -> bool:
    # BaseRetriever's default _aretrieve calls the sync _retrieve and blocks the loop.
    return type(retriever)._aretrieve is not BaseRetriever._aretrieve


class LlamaIndexRetriever(RetrieverAdapter):
    """Wraps a LlamaIndex ``BaseRetriever``: ``aretrieve`` when the retriever is truly
    async, ``retrieve`` in the runner's threads otherwise. Each call carries the query id
    in ``instrument_tags({"query_id": ...})`` so instrumentation handlers can see it.

    The retriever's own ``similarity_top_k`` decides how many nodes come back; the runner
    keeps the first ``k`` documents after mapping.
    """

    def __init__(
        self, retriever: BaseRetriever, *, name: str | None = None, use_async: bool | None = None
    ):
        if not isinstance(retriever, BaseRetriever):
            raise InputError(
                "LlamaIndexRetriever needs a llama_index BaseRetriever, got "
                f"{type(retriever).__name__}"
            )
        self.retriever = retriever
        self.name = name
        self.is_async = _truly_async(retriever) if use_async is None else use_async

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        with instrument_tags({"query_id": query_id}):
            return [node_to_hit(n) for n in self.retriever.retrieve(query)]

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        with instrument_tags({"query_id": query_id}):
            return [node_to_hit(n) for n in await self.retriever.aretrieve(query)]

    def config(self) -> dict[str, Any]:
        r = self.retriever
        top_k = getattr(r, "similarity_top_k", None) or getattr(r, "_similarity_top_k", None)
        return {
            "framework": "llamaindex",
            "class": type(r).__name__,
            "name": self.name or type(r).__name__,
            "similarity_top_k": top_k,
        }


def run(
    retriever: BaseRetriever, queries: Any, *, name: str | None = None, **kwargs: Any
) -> RunResult:
    """:func:`ranklens.run` on a LlamaIndex retriever (same keyword arguments)."""
    return ranklens.run(LlamaIndexRetriever(retriever, name=name), queries, name=name, **kwargs)
