"""The LlamaIndex adapter: :class:`LlamaIndexRetriever`, hits from nodes (:func:`to_hit`,
:func:`to_light`), :func:`run`, and :data:`PLUGIN`, registered in the ``ranklens.adapters``
entry-point group so that ``ranklens.run_retriever(retriever)`` wraps any ``BaseRetriever``."""

from __future__ import annotations

import re
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever

# re-exported by llama_index without __all__ (mypy sees it as private)
from llama_index.core.instrumentation.dispatcher import (  # type: ignore[attr-defined]
    instrument_tags,
)
from llama_index.core.schema import NodeWithScore

import ranklens
from ranklens.capture import (
    ALL_FIELDS,
    AdapterPlugin,
    Calling,
    Hit,
    LightHit,
    RetrieverAdapter,
    RunResult,
    array_bytes,
    state_digest,
)
from ranklens.errors import InputError


def to_hit(item: NodeWithScore) -> Hit:
    """A ranklens hit from a ``NodeWithScore``: the node id, its score, text and metadata,
    and the parent document (``ref_doc_id``) for ``key="parent"``."""
    return Hit.from_light(to_light(item, ALL_FIELDS))


def to_light(item: NodeWithScore, needs: frozenset[str]) -> LightHit:
    """A node as a :data:`~ranklens.capture.hits.LightHit` (this package's
    :data:`~ranklens.capture.hits.Converter`); the parent is ``ref_doc_id``, and the
    chunk's character range in it ``start_char_idx``/``end_char_idx`` (which LlamaIndex's
    node parsers set)."""
    node = item.node
    light = (
        node.id_,  # the field behind node_id, without the property's cost
        item.score,
        getattr(node, "text", None),
        node.ref_doc_id if "parent" in needs else None,
        dict(node.metadata or {}) if "metadata" in needs else None,
    )
    if "positions" in needs:
        start = getattr(node, "start_char_idx", None)
        return (*light, (start, getattr(node, "end_char_idx", None)))
    return light


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

    takes_k = False  # the retriever's own top-k decides how many hits come back

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
            return [to_hit(n) for n in self.retriever.retrieve(query)]

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        with instrument_tags({"query_id": query_id}):
            return [to_hit(n) for n in await self.retriever.aretrieve(query)]

    def config(self) -> dict[str, Any]:
        r = self.retriever
        top_k = getattr(r, "similarity_top_k", None) or getattr(r, "_similarity_top_k", None)
        return {
            "framework": "llamaindex",
            "class": type(r).__name__,
            "name": self.name or type(r).__name__,
            "similarity_top_k": top_k,
            "state": state_digest(r, depth=1),  # settings, index class and size
        }

    def index_info(self) -> dict[str, Any] | None:
        """Nodes indexed (a BM25 retriever's corpus, a vector index's docstore) and the
        bytes of a BM25 index's arrays."""
        r = self.retriever
        corpus = getattr(r, "corpus", None)
        index = getattr(r, "_index", None)
        docs = getattr(getattr(index, "docstore", None), "docs", None)
        n = len(corpus) if isinstance(corpus, list) else len(docs) if docs is not None else None
        if n is None:
            return None
        size = array_bytes(getattr(r, "bm25", None)) if hasattr(r, "bm25") else None
        return {"documents": n, **({"bytes": size} if size is not None else {})}


def run(
    retriever: BaseRetriever,
    queries: Any,
    *,
    name: str | None = None,
    calls: Calling | None = None,
    **kwargs: Any,
) -> RunResult:
    """:func:`ranklens.run_retriever` on a LlamaIndex retriever (same keyword arguments:
    ``calls=ranklens.Calling(concurrency=..., cache=...)`` says how it is called)."""
    return ranklens.run_retriever(
        LlamaIndexRetriever(retriever, name=name), queries, name=name, calls=calls, **kwargs
    )


def _passage_text(v: dict[str, Any]) -> str:
    return f"{v['title']}. {v['text']}"


def _sentences(text: str) -> list[str]:
    # A regex split: LlamaIndex's default sentence splitter needs NLTK data files.
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s]


def demo(dataset: Any) -> dict[str, tuple[Any, dict[str, Any]]]:
    """``ranklens demo``'s LlamaIndex runs: BM25 over the passages (the baseline), and
    BM25 over sentence chunks mapped back to their passages (``key="parent"``), asked for
    30 chunks so that merging the chunks of a passage still leaves 10 passages to score."""
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    corpus = dataset.corpus
    nodes = [TextNode(id_=d, text=_passage_text(v)) for d, v in corpus.items()]
    chunks = []
    for d, v in corpus.items():
        for i, s in enumerate(_sentences(v["text"])):
            node = TextNode(id_=f"{d}#{i}", text=s)
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=d)
            chunks.append(node)
    return {
        "llamaindex-bm25": (BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10), {}),
        "llamaindex-bm25-sentences": (
            BM25Retriever.from_defaults(nodes=chunks, similarity_top_k=30),
            {"key": "parent"},
        ),
    }


def _interleave(a: Any, b: Any, interleaving: Any) -> Any:
    """Two of this framework's retrievers interleaved (``ranklens.interleave``)."""
    from .interleaving import interleave

    return interleave(a, b, interleaving)


def bm25_over_chunks(chunks: list[tuple[str, int, int, str]], k: int) -> BaseRetriever:
    """LlamaIndex's BM25 retriever over ``(doc_id, start, end, text)`` chunks, each a node
    with its source document (``ref_doc_id``) and range (``start_char_idx``,
    ``end_char_idx``)."""
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    source = NodeRelationship.SOURCE
    nodes = [
        TextNode(id_=f"{d}@{s}", text=t, start_char_idx=s, end_char_idx=e,
                 relationships={source: RelatedNodeInfo(node_id=d)})
        for d, s, e, t in chunks
    ]  # fmt: skip
    retriever: BaseRetriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k)
    return retriever


PLUGIN = AdapterPlugin(
    name="llamaindex",
    matches=lambda obj: isinstance(obj, BaseRetriever),
    wrap=LlamaIndexRetriever,
    demo=demo,
    interleave=_interleave,
    bm25=bm25_over_chunks,
)
"""The ``ranklens.adapters`` entry point of this package (named ``llama_index``)."""
