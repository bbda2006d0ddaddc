"""The LangChain adapter: :class:`LangChainRetriever`, hits from Documents (:func:`to_hit`,
:func:`to_light`), :func:`run`, and :data:`PLUGIN`, registered in the ``ranklens.adapters``
entry-point group so that ``ranklens.run_retriever(retriever)`` wraps any Runnable.

A pipeline (retriever runs nested in the one called: an ``EnsembleRetriever``, a
``ContextualCompressionRetriever`` and its compressors) is run with its compressors
observed (:func:`~ranklens_langchain.observe`) and a callback handler collecting each
nested run; the retrieval hands its stages to the runner (``ranklens.capture.Staged``), as
the live hook records them (:mod:`.stages`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableConfig

import ranklens
from ranklens.capture import (
    ALL_FIELDS,
    AdapterPlugin,
    Calling,
    Hit,
    LightHit,
    RetrieverAdapter,
    RunResult,
    Staged,
    array_bytes,
    state_digest,
)
from ranklens.declared import data, declare, flag, mapping, text
from ranklens.errors import InputError

SCORE_KEYS = ("score", "relevance_score", "_score", "similarity")
"""Metadata fields read as the hit's score, first found wins (LangChain retrievers return
no score of their own; many put one in metadata)."""

PARENT_KEYS = ("doc_id", "parent_id", "source")
"""Metadata fields read as the parent document for ``key="parent"``, first found wins."""


def to_hit(item: Any) -> Hit:
    """A ranklens hit from a ``Document`` (or a ``(Document, score)`` pair, as
    ``similarity_search_with_score`` returns)."""
    doc = item[0] if isinstance(item, tuple) and len(item) == 2 else item
    if not isinstance(doc, Document):
        raise InputError(f"expected a langchain Document, got {type(doc).__name__}")
    return Hit.from_light(to_light(item, ALL_FIELDS))


def to_light(item: Any, needs: frozenset[str]) -> LightHit:
    """A Document (or ``(Document, score)`` pair) as a
    :data:`~ranklens.capture.hits.LightHit` (this package's
    :data:`~ranklens.capture.hits.Converter`), read as :func:`to_hit` reads it; the
    chunk's character range is ``metadata["start_index"]`` (which text splitters set with
    ``add_start_index=True``) and its length; a start of -1 (the splitter could not find
    the chunk) is no start, and ranklens finds the chunk by its text."""
    if type(item) is tuple:
        item, score = item
    else:
        score = None
    meta = item.metadata
    if score is None and meta:
        score = meta.get("score")  # the common case first
        if score is None:
            for k in SCORE_KEYS[1:]:
                score = meta.get(k)
                if score is not None:
                    break
    parent = None
    if "parent" in needs:
        for k in PARENT_KEYS:
            v = meta.get(k)
            if v is not None and v != "":
                parent = str(v)
                break
    light = (item.id, score, item.page_content, parent, dict(meta) if "metadata" in needs else None)
    if "positions" in needs:  # text splitters' add_start_index=True
        start = _start(meta.get("start_index"))
        return (*light, (start, None if start is None else start + len(item.page_content)))
    return light


def _start(value: Any) -> int | None:
    """``start_index`` as an offset: None when absent, when -1 (the splitter did not find
    its chunk in the text: separators dropped, ``keep_separator=False``) or not a whole
    number; a whole float (a vector store's JSON numbers) as an int."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _truly_async(runnable: Runnable[Any, Any]) -> bool:
    if isinstance(runnable, BaseRetriever):
        return type(runnable)._aget_relevant_documents is not BaseRetriever._aget_relevant_documents
    return True  # a Runnable chain: ainvoke is its own


ADAPTER = declare("ranklens_langchain.LangChainRetriever", {
    "retriever": data("a langchain BaseRetriever or Runnable returning Documents"),
    "name": text(None, "the run's name (default: the retriever's)", none=True),
    "use_async": flag(None, "call ainvoke (default: when the retriever is truly async)",
                      none=True),
    "names": mapping(None, "stage names: {run or class name: name} (default: the run's "
                     "name, _2 added to a repeated one)", none=True, values=text(None)),
}, register=False)  # fmt: skip


@ADAPTER.checks
class LangChainRetriever(RetrieverAdapter):
    """Wraps a LangChain ``BaseRetriever`` or any Runnable returning Documents: ``ainvoke``
    when it is truly async, ``invoke`` in the runner's threads otherwise. The query id goes
    into the run's config metadata (``ranklens_query_id``) for callback handlers.

    A pipeline's stages are recorded (:mod:`.stages`): the retriever is called as
    :func:`~ranklens_langchain.observe` returns it (the same results, each compressor's
    output reported), and each nested retriever run is a stage; a Runnable that is not a
    retriever adds its own output as a last stage, ``"output"``. A Runnable that calls
    several outermost retrievers side by side records no stages (said once,
    :class:`~ranklens_langchain.UnseenStagesWarning`)."""

    takes_k = False  # the retriever's own top-k decides how many hits come back

    def __init__(
        self,
        retriever: Runnable[Any, Any],
        *,
        name: str | None = None,
        use_async: bool | None = None,
        names: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(retriever, Runnable):
            raise InputError(
                "LangChainRetriever needs a langchain Runnable or BaseRetriever, got "
                f"{type(retriever).__name__}"
            )
        from .stages import observe

        self.retriever = retriever
        self.name = name
        self.is_async = _truly_async(retriever) if use_async is None else use_async
        self._called = observe(retriever)  # its compressors report their outputs
        bound = getattr(retriever, "bound", retriever)
        self._chain = not isinstance(bound, BaseRetriever)  # its output: a stage of its own
        self._warned: set[str] = set()
        self.names = dict(names or {})

    def _config(self, query_id: str, *callbacks: Any) -> RunnableConfig:
        config: RunnableConfig = {"metadata": {"ranklens_query_id": query_id}}
        if callbacks:
            config["callbacks"] = list(callbacks)
        return config

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        from .stages import StageCollector

        collector = StageCollector(self.names)
        docs = self._called.invoke(query, self._config(query_id, collector))
        return self._answer(docs, collector)

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        from .stages import StageCollector

        collector = StageCollector(self.names)
        docs = await self._called.ainvoke(query, self._config(query_id, collector))
        return self._answer(docs, collector)

    def _answer(self, docs: Any, collector: Any) -> list[Hit]:
        """The hits, with the stages when the call ran a pipeline."""
        from .stages import CollectedStage, recorded_stages, warn_side_by_side

        hits = [to_hit(d) for d in docs]
        trees = collector.trees()
        if len(trees) > 1:
            warn_side_by_side([t.root.name for t in trees], self._warned)
            return hits
        if not trees or not trees[0].nested:
            return hits
        collected = trees[0].stages()
        if self._chain:
            collected.append(CollectedStage("output", "postprocessor", list(docs)))
        return Staged(hits, recorded_stages(collected, ALL_FIELDS, to_light))

    def config(self) -> dict[str, Any]:
        r = self.retriever
        cfg: dict[str, Any] = {"framework": "langchain", "class": type(r).__name__}
        cfg["name"] = self.name or getattr(r, "name", None) or type(r).__name__
        for attr in ("k", "search_type", "search_kwargs"):
            if hasattr(r, attr):
                cfg[attr] = getattr(r, attr)
        cfg["state"] = state_digest(r, depth=1)  # settings, store class and size
        return cfg

    def index_info(self) -> dict[str, Any] | None:
        """Documents indexed (a BM25 retriever's ``docs``, a vector store retriever's
        in-memory store) and the bytes of a bm25s index's arrays."""
        r = self.retriever
        docs = getattr(r, "docs", None)
        store = getattr(getattr(r, "vectorstore", None), "store", None)
        held = docs if isinstance(docs, list) else store if isinstance(store, dict) else None
        if held is None:
            return None
        size = array_bytes(getattr(r, "index", None)) if hasattr(r, "index") else None
        return {"documents": len(held), **({"bytes": size} if size is not None else {})}


def run(
    retriever: Runnable[Any, Any],
    queries: Any,
    *,
    name: str | None = None,
    calls: Calling | None = None,
    names: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> RunResult:
    """:func:`ranklens.run_retriever` on a LangChain retriever or Runnable (same keyword
    arguments: ``calls=ranklens.Calling(concurrency=..., cache=...)`` says how it is
    called); a pipeline's stages are recorded (:class:`LangChainRetriever`), ``names``
    naming them."""
    return ranklens.run_retriever(
        LangChainRetriever(retriever, name=name, names=names),
        queries,
        name=name,
        calls=calls,
        **kwargs,
    )


def demo(dataset: Any) -> dict[str, tuple[Any, dict[str, Any]]]:
    """``ranklens demo``'s LangChain run: BM25 (bm25s) over the passages, top 10."""
    from .bm25 import BM25sRetriever

    docs = [
        Document(page_content=f"{v['title']}. {v['text']}", id=d) for d, v in dataset.corpus.items()
    ]
    return {"langchain-bm25s": (BM25sRetriever.from_documents(docs, k=10), {})}


def _interleave(a: Any, b: Any, interleaving: Any) -> Any:
    """Two of this framework's retrievers interleaved (``ranklens.interleave``)."""
    from .interleaving import interleave

    return interleave(a, b, interleaving)


PLUGIN = AdapterPlugin(
    name="langchain",
    matches=lambda obj: isinstance(obj, Runnable),
    wrap=LangChainRetriever,
    demo=demo,
    interleave=_interleave,
)
"""The ``ranklens.adapters`` entry point of this package (named ``langchain_core``)."""
