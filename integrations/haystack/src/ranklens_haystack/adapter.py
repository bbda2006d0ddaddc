"""The Haystack adapter: :class:`HaystackRetriever` (a component or a Pipeline), hits from
Documents (:func:`to_hit`, :func:`to_light`), :func:`run`, and :data:`PLUGIN`, registered
in the ``ranklens.adapters`` entry-point group so that ``ranklens.run_retriever(component)`` wraps a
retriever component (a Pipeline needs ``component=``: use :func:`run`).

A Pipeline's call is watched through Haystack's tracer (:mod:`.stages`), so each record
keeps the pipeline's stages (every component that returned Documents, up to the one named
``component=``) as the live hooks record them: ``RunResult.staged()``."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from haystack import Document, Pipeline

import ranklens
from ranklens.capture import (
    ALL_FIELDS,
    STAGE_KEY,
    STAGES_KEY,
    AdapterPlugin,
    Calling,
    Hit,
    LightHit,
    RetrieverAdapter,
    RunResult,
    Staged,
    state_digest,
)
from ranklens.errors import InputError, UnseenStagesWarning

from .stages import PipelineCall, collecting, stage_records, unseen_stages

QUERY_SOCKETS = ("query", "text")
"""Pipeline inputs that receive the query text by default."""


def to_hit(doc: Document) -> Hit:
    """A ranklens hit from a Haystack ``Document``: id, score, content and meta, and the
    parent document (``meta["source_id"]``, which ``DocumentSplitter`` sets) for
    ``key="parent"``."""
    if not isinstance(doc, Document):
        raise InputError(f"expected a haystack Document, got {type(doc).__name__}")
    return Hit.from_light(to_light(doc, ALL_FIELDS))


def to_light(doc: Document, needs: frozenset[str]) -> LightHit:
    """A Document as a :data:`~ranklens.capture.hits.LightHit` (this package's
    :data:`~ranklens.capture.hits.Converter`); the parent is ``meta["source_id"]`` and the
    chunk's character range starts at ``meta["split_idx_start"]``, both set by
    ``DocumentSplitter``."""
    meta = doc.meta or {}
    parent = meta.get("source_id") if "parent" in needs else None
    light = (
        doc.id,
        doc.score,
        doc.content,
        None if parent is None else str(parent),
        dict(meta) if "metadata" in needs else None,
    )
    if "positions" in needs:  # DocumentSplitter's offset in its source
        start = _start(meta.get("split_idx_start"))
        text = doc.content
        if start is None or text is None:
            return (*light, (None, None))
        return (*light, (start, start + len(text)))
    return light


def _start(value: Any) -> int | None:
    """``split_idx_start`` as an offset: None when absent, negative or not a whole number;
    a whole float (a document store's JSON numbers) as an int."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


class HaystackRetriever(RetrieverAdapter):
    """Wraps a retriever component (anything whose ``run(query=..., top_k=...)`` returns
    ``{"documents": [...]}``) or a ``Pipeline``, reading the ``documents`` output of the
    component named ``component`` (through ``include_outputs_from``).

    For a Pipeline, ``inputs`` builds the run data from the query: a function
    ``(query, k) -> data``, or None to send the query to every pipeline input named
    ``query`` or ``text`` (and ``k`` to the named component's ``top_k``). ``run_async`` is
    used when the component or Pipeline has it. ``stages`` (a Pipeline's): record each
    component that returned Documents, up to ``component``, as a stage of the record
    (``RunResult.staged()``); a component that calls other components itself is named once
    (:class:`~ranklens_haystack.stages.UnseenStagesWarning`): only its output is seen.
    """

    def __init__(
        self,
        target: Any,
        *,
        component: str | None = None,
        inputs: Callable[[str, int | None], dict[str, Any]] | None = None,
        name: str | None = None,
        use_async: bool | None = None,
        stages: bool = True,
    ):
        self.target = target
        self.name = name
        self.inputs = inputs
        self.stages = stages and isinstance(target, Pipeline)
        if isinstance(target, Pipeline):
            names = [n for n, _ in target.walk()]
            if component is None or component not in names:
                raise InputError(
                    f"name the pipeline component whose documents to read: component= one of "
                    f"{', '.join(names)}"
                )
            self.component: str | None = component
            sockets = target.inputs()
            self._query_targets = [
                (comp, sock)
                for comp, socks in sockets.items()
                for sock in socks
                if sock in QUERY_SOCKETS
            ]
            if inputs is None and not self._query_targets:
                raise InputError(
                    "no pipeline input named 'query' or 'text' to send the query to; pass inputs="
                )
            comp = target.get_component(component)
            if self.stages:
                for holder, held in unseen_stages(target):
                    warnings.warn(
                        f"component {holder!r} calls other components itself "
                        f"({', '.join(held)}): Haystack's tracer sees only its output, one "
                        "stage. To measure each step, add them to the pipeline as components "
                        "of their own (connected in order), or return ranklens.capture.Staged "
                        "hits from a retriever of your own",
                        UnseenStagesWarning,
                        stacklevel=2,
                    )
            self._takes_top_k = "top_k" in inspect.signature(comp.run).parameters
            has_async = hasattr(target, "run_async")
        else:
            if not hasattr(target, "run"):
                raise InputError(f"{type(target).__name__} is not a Haystack component or Pipeline")
            self.component = None
            self._takes_top_k = "top_k" in inspect.signature(target.run).parameters
            has_async = hasattr(target, "run_async")
        self.is_async = has_async if use_async is None else use_async
        self.takes_k = self._takes_top_k or inputs is not None

    # ----------------------------------------------------------------- calls
    def _data(self, query: str, k: int | None) -> dict[str, Any]:
        if self.inputs is not None:
            return self.inputs(query, k)
        data: dict[str, dict[str, Any]] = {}
        for comp, sock in self._query_targets:
            data.setdefault(comp, {})[sock] = query
        if k is not None and self._takes_top_k and self.component is not None:
            data.setdefault(self.component, {})["top_k"] = k
        return data

    def _component_kwargs(self, query: str, k: int | None) -> dict[str, Any]:
        kw: dict[str, Any] = {"query": query}
        if k is not None and self._takes_top_k:
            kw["top_k"] = k
        return kw

    def _documents(self, out: Mapping[str, Any]) -> list[Hit]:
        if self.component is not None:
            out = out.get(self.component) or {}
        docs = out.get("documents")
        if docs is None:
            raise InputError(
                f"component {self.component or type(self.target).__name__!r} gave no "
                "'documents' output"
            )
        return [to_hit(d) for d in docs]

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        if self.component is None:
            return self._documents(self.target.run(**self._component_kwargs(query, k)))
        if not self.stages:
            out = self.target.run(self._data(query, k), include_outputs_from={self.component})
            return self._documents(out)
        with collecting(to_hit) as calls:
            try:
                out = self.target.run(self._data(query, k), include_outputs_from={self.component})
            except Exception as exc:
                raise self._failed(exc, calls) from None
        return self._staged(out, calls)

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        if self.component is None:
            return self._documents(await self.target.run_async(**self._component_kwargs(query, k)))
        data = self._data(query, k)
        if not self.stages:
            out = await self.target.run_async(data, include_outputs_from={self.component})
            return self._documents(out)
        with collecting(to_hit) as calls:
            try:
                out = await self.target.run_async(data, include_outputs_from={self.component})
            except Exception as exc:
                raise self._failed(exc, calls) from None
        return self._staged(out, calls)

    def _stage_runs(self, calls: list[PipelineCall]) -> list[Any]:
        """The stages of this query's pipeline call, up to the component read."""
        if not calls:
            return []
        runs = calls[0].stages()
        last = max((i for i, r in enumerate(runs) if r.name == self.component), default=None)
        return runs if last is None else runs[: last + 1]

    def _staged(self, out: Mapping[str, Any], calls: list[PipelineCall]) -> Staged:
        return Staged(self._documents(out), stage_records(self._stage_runs(calls)))

    def _failed(self, exc: Exception, calls: list[PipelineCall]) -> Exception:
        """The failing component's own exception (Haystack wraps it in a
        PipelineRuntimeError), marked as the runner reads a failing stage
        (``ranklens.capture.stages.STAGE_KEY``/``STAGES_KEY``: its name, and the stages up to
        it), so that the record names the stage and keeps the stages before it, and a
        transient failure (a ConnectionError...) is retried as the runner retries any."""
        runs = self._stage_runs(calls)
        at = next((i for i, r in enumerate(runs) if r.error is not None), None)
        if at is None:
            return exc
        error = runs[at].error
        error = error if isinstance(error, Exception) else exc
        try:
            setattr(error, STAGE_KEY, runs[at].stage)
            setattr(error, STAGES_KEY, stage_records(runs[: at + 1]))
        except AttributeError:  # an exception type without attributes: Haystack's own names it
            return exc
        return error

    def config(self) -> dict[str, Any]:
        if self.component is None:
            t = self.target
            return {
                "framework": "haystack",
                "class": type(t).__name__,
                "name": self.name or type(t).__name__,
                "top_k": getattr(t, "top_k", None),
                "state": state_digest(t, depth=1),  # its settings, store class and size
            }
        return {
            "framework": "haystack",
            "class": "Pipeline",
            "name": self.name or f"pipeline:{self.component}",
            "component": self.component,
            # Component classes and connections: stable across processes (to_dict() holds
            # document-store index names that are random per instance).
            "components": {n: type(c).__name__ for n, c in self.target.walk()},
            "connections": sorted(str(e[:2]) for e in self.target.graph.edges),
            **({"stages": True} if self.stages else {}),
        }

    def index_info(self) -> dict[str, Any] | None:
        """Documents in the retriever's document store (``count_documents()``)."""
        target = (
            self.target if self.component is None else self.target.get_component(self.component)
        )
        store = getattr(target, "document_store", None)
        if store is None or not hasattr(store, "count_documents"):
            return None
        return {"documents": int(store.count_documents())}


def run(
    target: Any,
    queries: Any,
    *,
    component: str | None = None,
    name: str | None = None,
    calls: Calling | None = None,
    stages: bool = True,
    **kwargs: Any,
) -> RunResult:
    """:func:`ranklens.run_retriever` on a Haystack component or Pipeline (same keyword
    arguments: ``calls=ranklens.Calling(concurrency=..., cache=...)`` says how it is
    called). A Pipeline's records keep its stages (``stages=False``: only the named
    component's documents), ``result.staged()`` gives them as runs."""
    adapter = HaystackRetriever(target, component=component, name=name, stages=stages)
    return ranklens.run_retriever(adapter, queries, name=name, calls=calls, **kwargs)


def demo(dataset: Any) -> dict[str, tuple[Any, dict[str, Any]]]:
    """``ranklens demo``'s Haystack run: the in-memory BM25 retriever, top 10."""
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    store.write_documents(
        [Document(id=d, content=f"{v['title']}. {v['text']}") for d, v in dataset.corpus.items()]
    )
    return {"haystack-bm25": (InMemoryBM25Retriever(store, top_k=10), {})}


def _interleave(a: Any, b: Any, interleaving: Any) -> Any:
    """Two of this framework's retrievers interleaved (``ranklens.interleave``)."""
    from .interleaving import interleave

    return interleave(a, b, interleaving)


PLUGIN = AdapterPlugin(
    name="haystack",
    matches=lambda obj: isinstance(obj, Pipeline) or hasattr(obj, "run"),
    wrap=HaystackRetriever,
    demo=demo,
    interleave=_interleave,
)
"""The ``ranklens.adapters`` entry point of this package (named ``haystack``)."""
