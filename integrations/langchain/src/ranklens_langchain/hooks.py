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
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.tracers.context import register_configure_hook

from ranklens.capture import Instrumentation, LightHit, Recorder, recorder_or_new

from .adapter import SCORE_KEYS, to_light


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


class RanklensCallbackHandler(BaseCallbackHandler):
    """Records each retriever run of a chain, agent or bare retriever."""

    def __init__(self, recorder: Recorder | None = None, **recorder_kwargs: Any):
        self.recorder = recorder_or_new(recorder, **recorder_kwargs)

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
        self.recorder.start(run_id, query, qid, parent_run_id, kwargs.get("name") or "langchain")

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        rec = self.recorder
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
        self.recorder.end(run_id, (), error)


class AsyncRanklensCallbackHandler(AsyncCallbackHandler):
    """The async variant (for ``ainvoke``/``abatch``; LangChain also calls it for sync
    runs). Recording takes no await, so it never blocks the loop."""

    def __init__(self, recorder: Recorder | None = None, **recorder_kwargs: Any):
        self._sync = RanklensCallbackHandler(recorder, **recorder_kwargs)
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


def instrument(recorder: Recorder | None = None, **recorder_kwargs: Any) -> Instrumentation:
    """Record every LangChain retrieval from now on, in this context and the threads and
    tasks it starts (until ``detach()``), with no ``callbacks=`` to pass::

        with instrument(Recorder(key="parent")) as rec:
            chain.invoke("...", config={"metadata": {"query_id": "q1"}})
        rec.evaluate(dataset, ["ndcg@10"])
    """
    rec = recorder_or_new(recorder, **recorder_kwargs)
    handler = RanklensCallbackHandler(rec)
    previous = _ACTIVE.get()
    _ACTIVE.set(handler)

    def detach() -> None:
        if _ACTIVE.get() is handler:
            _ACTIVE.set(previous)

    return Instrumentation(rec, detach, handler=handler)
