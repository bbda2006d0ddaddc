"""Capture live LangChain retrievals into a :class:`ranklens.Recorder`.

``RanklensCallbackHandler`` (sync) and ``AsyncRanklensCallbackHandler`` implement
``on_retriever_start/end/error`` keyed by ``run_id``; the recorder's request path is
atomic dict and deque operations, safe under ``batch``'s thread pool and ``abatch``. The
query id is read from the run's config metadata (``query_id`` or ``ranklens_query_id``);
pass the handler in ``config={"callbacks": [handler]}`` or to the chain's ``with_config``,
or call :func:`instrument` to have every LangChain run in this context use one (through
LangChain's configure hook, as its own tracers are attached).

With a key that reads only ids (the default), the handler keeps the list of Documents it
receives and reads their id, score and text when the records are read, so the app's
request path does no work per document; a Document changed in place afterwards is read as
it is then. Keys that read metadata or the parent convert at once.

``stages=True`` records a pipeline call as one retrieval with its stages
(``Recorder.record(..., stages=[...])``): a retriever run with retriever runs nested in it
(an ``EnsembleRetriever``'s retrievers, a ``ContextualCompressionRetriever``'s base
retriever, its compressors when the retriever is :func:`~ranklens_langchain.observe`'s
copy) is one record whose stages are those runs in pipeline order, not one record per run;
:mod:`.stages` says what each stage is and what callbacks cannot see. Each record's hits
are then read from the Documents in the request path (a pipeline's stages are copied as
they stand when its call ends).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.tracers.context import register_configure_hook

from ranklens.capture import Instrumentation, LightHit, Recorder, recorder_or_new
from ranklens.declared import data, declare, flag, mapping, text

from .adapter import SCORE_KEYS, to_light
from .stages import StageTree, as_is, recorded_stages, warn_unseen


def _later(needs: frozenset[str]) -> Any:
    """The conversion done when the records are read: light tuples with the parent and the
    chunk's range when the recorder needs them (read from the Documents then)."""
    if not needs:
        return _light
    return lambda documents: [to_light(d, needs) for d in documents]


def _light(documents: Sequence[Document]) -> list[LightHit]:
    """Light tuples (id, score, text) of Documents, for a key that reads only ids."""
    return [
        (d.id, s if (s := (m := d.metadata).get("score")) is not None else _score(m),
         d.page_content, None, None)
        for d in documents
    ]  # fmt: skip


def _score(metadata: dict[str, Any]) -> Any:
    for k in SCORE_KEYS[1:]:
        v = metadata.get(k)
        if v is not None:
            return v
    return None


QUERY_ID_KEYS = ("query_id", "ranklens_query_id")


HANDLER = declare("ranklens_langchain.RanklensCallbackHandler", {
    "recorder": data("the Recorder to fill (None: a new one from the other keywords)"),
    "stages": flag(False, "record one retrieval per pipeline call with every nested "
                   "retriever run (and observed compressor) as a stage, instead of one "
                   "retrieval per retriever run"),
    "names": mapping(None, "stage names: {run or class name: name} (default: the run's "
                     "name, _2 added to a repeated one)", none=True, values=text(None)),
}, register=False)  # fmt: skip


@HANDLER.checks
class RanklensCallbackHandler(BaseCallbackHandler):
    """Records each retriever run of a chain, agent or bare retriever (``stages=True``:
    each pipeline call, its nested runs as stages)."""

    def __init__(
        self,
        recorder: Recorder | None = None,
        *,
        stages: bool = False,
        names: Mapping[str, str] | None = None,
        **recorder_kwargs: Any,
    ):
        self.recorder = recorder_or_new(recorder, **recorder_kwargs)
        self.stages = stages
        self.names = dict(names or {})
        # stages=True: the outermost runs in flight (start, query, query id, parent, name)
        # and each pipeline's runs -> its stage tree
        self._open: dict[UUID, tuple[float, str, Any, UUID | None, str]] = {}
        self._trees: dict[UUID, StageTree] = {}
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        qid = None
        if metadata:  # the query id (QUERY_ID_KEYS), inline: this runs on every retrieval
            qid = metadata.get("query_id")
            if qid is None:
                qid = metadata.get("ranklens_query_id")
        name = kwargs.get("name") or "langchain"
        if not self.stages:
            self.recorder.start(run_id, query, qid, parent_run_id, name)
            return
        name = self.names.get(name, name)
        if parent_run_id is not None and (
            parent_run_id in self._trees or parent_run_id in self._open
        ):
            tree = self._trees.get(parent_run_id) or self._tree_of(parent_run_id)
            if tree is not None:  # a stage of the pipeline call it is nested in
                tree.start(run_id, parent_run_id, name, serialized, tags)
                self._trees[run_id] = tree
                return
        self._open[run_id] = (time.perf_counter(), query, qid, parent_run_id, name)

    def _tree_of(self, root: UUID) -> StageTree | None:
        """The stage tree of the outermost run ``root``, made at its first nested run."""
        with self._lock:
            tree = self._trees.get(root)
            began = self._open.get(root)
            if tree is None and began is not None:
                tree = self._trees[root] = StageTree(root, began[4], began[0])
            return tree

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        rec = self.recorder
        if self.stages:
            self._ended(run_id, documents, None)
            return
        if "metadata" in rec.needs:  # the key reads metadata: copied now, as it stands
            rec.end(run_id, documents, convert=to_light)
            return
        # The common case: keep the list as it came, read id, score, text, parent and range
        # when the records are read (no work per document in the app's request path).
        rec.end_light(run_id, documents, _later(rec.needs))

    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        if self.stages:
            self._ended(run_id, None, error)
            return
        self.recorder.end(run_id, (), error)

    def _ended(
        self, run_id: UUID, documents: Sequence[Document] | None, error: BaseException | None
    ) -> None:
        """stages=True: a nested run's end kept in its tree; an outermost run's recorded,
        with its stages when runs were nested in it."""
        tree = self._trees.get(run_id)
        if tree is not None and tree.root.run_id != run_id:
            if error is None:
                tree.end(run_id, documents or ())
            else:
                tree.fail(run_id, error)
            return
        began = self._open.pop(run_id, None)
        if began is None:  # never started here (a handler added mid-run)
            return
        t0, query, qid, parent_run, name = began
        trace, parent = str(run_id), None if parent_run is None else str(parent_run)
        latency = (time.perf_counter() - t0) * 1000
        rec = self.recorder
        if tree is None:  # one retriever, no pipeline
            rec.record(query, documents or (), query_id=qid, latency_ms=latency, error=error,
                       trace_id=trace, parent_trace_id=parent, source=name,
                       convert=to_light)  # fmt: skip
            return
        for run in tree.run_ids:
            self._trees.pop(run, None)
        warn_unseen(tree, self._warned)
        stages = recorded_stages(tree.stages(documents, error), rec.needs, to_light, True)
        rec.record(query, (), query_id=qid, latency_ms=latency, error=error, trace_id=trace,
                   parent_trace_id=parent, source=name, convert=as_is,
                   stages=stages)  # fmt: skip


class AsyncRanklensCallbackHandler(AsyncCallbackHandler):
    """The async variant (for ``ainvoke``/``abatch``; LangChain also calls it for sync
    runs). Recording takes no await, so it never blocks the loop."""

    def __init__(
        self,
        recorder: Recorder | None = None,
        *,
        stages: bool = False,
        names: Mapping[str, str] | None = None,
        **recorder_kwargs: Any,
    ):
        self._sync = RanklensCallbackHandler(
            recorder, stages=stages, names=names, **recorder_kwargs
        )
        self.recorder = self._sync.recorder

    async def on_retriever_start(
        self, serialized: dict[str, Any] | None, query: str, **kwargs: Any
    ) -> None:
        self._sync.on_retriever_start(serialized, query, **kwargs)

    async def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._sync.on_retriever_end(documents, run_id=run_id, parent_run_id=parent_run_id)

    async def on_retriever_error(self, error: BaseException, **kwargs: Any) -> None:
        self._sync.on_retriever_error(error, **kwargs)


_ACTIVE: ContextVar[RanklensCallbackHandler | None] = ContextVar(
    "ranklens_langchain_handler", default=None
)
register_configure_hook(_ACTIVE, inheritable=True)


INSTRUMENT = declare("ranklens_langchain.instrument", {
    "recorder": HANDLER.options["recorder"],
    "stages": HANDLER.options["stages"],
    "names": HANDLER.options["names"],
}, register=False)  # fmt: skip


@INSTRUMENT.checks
def instrument(
    recorder: Recorder | None = None,
    *,
    stages: bool = False,
    names: Mapping[str, str] | None = None,
    **recorder_kwargs: Any,
) -> Instrumentation:
    """Record every LangChain retrieval from now on, in this context and the threads and
    tasks it starts (until ``detach()``), with no ``callbacks=`` to pass::

        with instrument(Recorder(key="parent")) as rec:
            chain.invoke("...", config={"metadata": {"query_id": "q1"}})
        rec.evaluate(dataset, ["ndcg@10"])

    ``stages=True``: one record per pipeline call with its stages (``rec.staged()`` gives
    them as a :class:`ranklens.StagedRun`); ``names``: the stages' names.
    """
    rec = recorder_or_new(recorder, **recorder_kwargs)
    handler = RanklensCallbackHandler(rec, stages=stages, names=names)
    previous = _ACTIVE.get()
    _ACTIVE.set(handler)

    def detach() -> None:
        if _ACTIVE.get() is handler:
            _ACTIVE.set(previous)

    return Instrumentation(rec, detach, handler=handler)
