"""The LlamaIndex adapter: :class:`LlamaIndexRetriever`, hits from nodes (:func:`to_hit`,
:func:`to_light`), :func:`run`, and :data:`PLUGIN`, registered in the ``ranklens.adapters``
entry-point group so that ``ranklens.run_retriever(retriever)`` wraps any ``BaseRetriever``."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever

# re-exported by llama_index without __all__ (mypy sees it as private)
from llama_index.core.instrumentation.dispatcher import (  # type: ignore[attr-defined]
    instrument_tags,
)
from llama_index.core.schema import NodeWithScore, QueryBundle

import ranklens
from ranklens.capture import (
    AdapterPlugin,
    Calling,
    Hit,
    RetrieverAdapter,
    RunResult,
    Stage,
    Staged,
    array_bytes,
    fingerprint,
    state_digest,
)
from ranklens.declared import data, declare, flag, text
from ranklens.errors import InputError

from .nodes import to_hit, to_light
from .stages import (
    ALL_NEEDS,
    UNFINISHED,
    Once,
    PipelineCall,
    StageCall,
    atraced,
    collecting,
    failed_stage,
    stage_namer,
    stage_records,
    staged_hits,
    traced,
    unseen_stage,
)

__all__ = ["PLUGIN", "LlamaIndexRetriever", "bm25_over_chunks", "demo", "run", "to_hit", "to_light"]


def _truly_async(retriever: Any) -> bool:
    # BaseRetriever's default _aretrieve calls the sync _retrieve and blocks the loop.
    if isinstance(retriever, BaseQueryEngine):
        inner = getattr(retriever, "retriever", None)
        truly = isinstance(inner, BaseRetriever) and _truly_async(inner)
        return hasattr(retriever, "aretrieve") and truly
    return type(retriever)._aretrieve is not BaseRetriever._aretrieve


def _settings(component: Any) -> dict[str, Any]:
    """A pipeline component's class and a digest of its settings (:func:`fingerprint` one
    level deep), its callback manager left out: LlamaIndex keeps each query's trace in it,
    which is no setting."""
    fp = fingerprint(component, 1)
    state = fp.get("state") if isinstance(fp, dict) else None
    if isinstance(state, dict):
        state.pop("callback_manager", None)
    digest = hashlib.sha256(json.dumps(fp, sort_keys=True, default=str).encode()).hexdigest()
    return {"class": type(component).__name__, "state": digest[:16]}


def _retrieves(obj: Any) -> bool:
    """A retriever, or a query engine that retrieves without synthesis (a
    ``RetrieverQueryEngine``: its retriever, then its node postprocessors)."""
    if isinstance(obj, BaseRetriever):
        return True
    return isinstance(obj, BaseQueryEngine) and type(obj).retrieve is not BaseQueryEngine.retrieve


LLAMAINDEX_RETRIEVER = declare("LlamaIndexRetriever", {
    "retriever": data("a BaseRetriever, or a query engine that retrieves without synthesis "
                      "(RetrieverQueryEngine: its retriever, then its node postprocessors)"),
    "name": text(None, "the run's name (default: the class name)", none=True),
    "use_async": flag(None, "call aretrieve (None: when the retriever is truly async)",
                      none=True),
    "stages": flag(None, "record each stage's output (None: for a query engine, not for a "
                   "retriever; a fusion retriever's own retrievers are stages too)", none=True),
    "names": data("stage names: {component or class name: name} or (component, name) pairs "
                  "(default: class names, _2 added to a repeated one)"),
}, register=False)  # fmt: skip


@LLAMAINDEX_RETRIEVER.checks
class LlamaIndexRetriever(RetrieverAdapter):
    """Wraps a LlamaIndex ``BaseRetriever``, or a query engine that retrieves without
    synthesis (a ``RetrieverQueryEngine``: ``engine.retrieve`` runs its retriever and node
    postprocessors, no LLM): ``aretrieve`` when the retriever is truly async, ``retrieve``
    in the runner's threads otherwise. Each call carries the query id in
    ``instrument_tags({"query_id": ...})`` so instrumentation handlers can see it.

    With ``stages`` (the default for a query engine), each query's record keeps every
    stage's output (:mod:`ranklens_llamaindex.stages`: the retriever, a fusion retriever's
    own retrievers, each postprocessor, in pipeline order, with kind and latency), seen
    through LlamaIndex's instrumentation; ``RunResult.staged()`` gives them as a
    :class:`ranklens.StagedRun`. The record's hits stay what the call returned.

    The retriever's own ``similarity_top_k`` decides how many nodes come back; the runner
    keeps the first ``k`` documents after mapping.
    """

    takes_k = False  # the retriever's own top-k decides how many hits come back

    def __init__(
        self,
        retriever: Any,
        *,
        name: str | None = None,
        use_async: bool | None = None,
        stages: bool | None = None,
        names: Any = None,
    ):
        if not _retrieves(retriever):
            got = type(retriever).__name__
            hint = (
                f"; {got} cannot retrieve without synthesis: pass its retriever, or build a "
                "RetrieverQueryEngine(retriever, node_postprocessors=[...])"
                if isinstance(retriever, BaseQueryEngine)
                else ""
            )
            raise InputError(
                "LlamaIndexRetriever needs a llama_index BaseRetriever or a query engine that "
                f"retrieves (RetrieverQueryEngine), got {got}{hint}"
            )
        self.retriever = retriever
        self.name = name
        self.engine = isinstance(retriever, BaseQueryEngine)
        self.is_async = _truly_async(retriever) if use_async is None else use_async
        self.stages = self.engine if stages is None else stages
        self.names = names
        self._namer = stage_namer(names)
        self._once = Once()
        self._inflight: dict[str, PipelineCall] = {}

    def _call(self, query: str) -> list[NodeWithScore]:
        nodes: list[NodeWithScore] = self.retriever.retrieve(
            QueryBundle(query) if self.engine else query
        )
        return nodes

    async def _acall(self, query: str) -> list[NodeWithScore]:
        nodes: list[NodeWithScore] = await self.retriever.aretrieve(
            QueryBundle(query) if self.engine else query
        )
        return nodes

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        with instrument_tags({"query_id": query_id}):
            if not self.stages:
                return [to_hit(n) for n in self._call(query)]
            with collecting(query, query_id) as call:
                self._inflight[query_id] = call
                try:
                    nodes = traced(self._call, query)
                except Exception as exc:
                    raise failed_stage(exc, call.stages(self._namer)) from None
                finally:
                    self._done(query_id, call)
            return self._staged(call, nodes)

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        with instrument_tags({"query_id": query_id}):
            if not self.stages:
                return [to_hit(n) for n in await self._acall(query)]
            with collecting(query, query_id) as call:
                self._inflight[query_id] = call
                try:
                    nodes = await atraced(self._acall, query)
                except Exception as exc:
                    raise failed_stage(exc, call.stages(self._namer)) from None
                finally:
                    self._done(query_id, call)
            return self._staged(call, nodes)

    def _done(self, query_id: str, call: PipelineCall) -> None:
        if self._inflight.get(query_id) is call:  # not a later attempt's
            del self._inflight[query_id]

    def progress(self, query_id: str) -> tuple[str | None, list[Stage]]:
        """The stage running for ``query_id`` (the innermost, None when no call is in
        flight) and the stages it has finished, as :class:`ranklens.Pipeline.progress`
        gives them: what a record of a call the runner's timeout abandoned can name and
        keep."""
        call = self._inflight.get(query_id)
        if call is None:
            return None, []
        found = call.stages(self._namer)
        running = [s.name for s in found if s.error is not None and s.error["type"] == UNFINISHED]
        done = [s for s in found if s.error is None or s.error["type"] != UNFINISHED]
        return (running[0] if running else None), stage_records(done, Hit.from_light)

    def stage_calls(self, call: PipelineCall, nodes: list[NodeWithScore]) -> list[StageCall]:
        """The stages of one call in pipeline order; a last ``"unseen"`` stage when what
        the call returned is not the last stage's output (warned once)."""
        return unseen_stage(self._once, call.stages(self._namer), nodes, ALL_NEEDS)

    def _staged(self, call: PipelineCall, nodes: list[NodeWithScore]) -> Staged:
        hits = [to_hit(n) for n in nodes]
        return staged_hits(hits, self.stage_calls(call, nodes))

    def config(self) -> dict[str, Any]:
        r = self.retriever
        if self.engine:
            inner = getattr(r, "retriever", None)
            post = getattr(r, "_node_postprocessors", None) or []
            out: dict[str, Any] = {
                "framework": "llamaindex",
                "class": type(r).__name__,
                "name": self.name or type(r).__name__,
                "retriever": _settings(inner) if inner is not None else None,
                "postprocessors": [_settings(p) for p in post],
            }
        else:
            top_k = getattr(r, "similarity_top_k", None) or getattr(r, "_similarity_top_k", None)
            out = {
                "framework": "llamaindex",
                "class": type(r).__name__,
                "name": self.name or type(r).__name__,
                "similarity_top_k": top_k,
                "state": state_digest(r, depth=1),  # settings, index class and size
            }
        if self.stages:
            out["stages"] = True
        return out

    def index_info(self) -> dict[str, Any] | None:
        """Nodes indexed (a BM25 retriever's corpus, a vector index's docstore) and the
        bytes of a BM25 index's arrays (a query engine's: its retriever's)."""
        r = self.retriever
        if self.engine:
            inner = getattr(r, "retriever", None)
            return LlamaIndexRetriever(inner).index_info() if inner is not None else None
        corpus = getattr(r, "corpus", None)
        index = getattr(r, "_index", None)
        docs = getattr(getattr(index, "docstore", None), "docs", None)
        n = len(corpus) if isinstance(corpus, list) else len(docs) if docs is not None else None
        if n is None:
            return None
        size = array_bytes(getattr(r, "bm25", None)) if hasattr(r, "bm25") else None
        return {"documents": n, **({"bytes": size} if size is not None else {})}


def run(
    retriever: Any,
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
    matches=_retrieves,
    wrap=LlamaIndexRetriever,
    demo=demo,
    interleave=_interleave,
    bm25=bm25_over_chunks,
)
"""The ``ranklens.adapters`` entry point of this package (named ``llama_index``)."""
