"""Capture live LlamaIndex retrievals into a :class:`ranklens.Recorder`.

``instrument(recorder)`` attaches an event handler (RetrievalStartEvent / RetrievalEndEvent,
paired by span id) and a span handler (a retrieval span dropped by an exception ends with
that error) to the root dispatcher, so every retriever is seen, inside query engines and
agents too; ``detach()`` (or leaving the ``with`` block) removes them. A query id passed
with ``instrument_tags({"query_id": ...})`` is recorded. ``RanklensCallbackHandler`` does
the same through the legacy ``CallbackManager``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.callbacks.base_handler import BaseCallbackHandler
from llama_index.core.callbacks.schema import CBEventType, EventPayload

# re-exported by llama_index without __all__ (mypy sees it as private)
from llama_index.core.instrumentation import (  # type: ignore[attr-defined]
    get_dispatcher,
)
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.retrieval import (
    RetrievalEndEvent,
    RetrievalStartEvent,
)
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.schema import QueryBundle
from pydantic import ConfigDict, PrivateAttr

from ranklens.capture import Instrumentation, LightHit, Recorder, recorder_or_new
from ranklens.declared import data, declare, flag

from .nodes import to_light
from .stages import (
    PipelineCall,
    StageEvents,
    StageTracker,
    final_nodes,
    stage_namer,
    stage_records,
    unseen_stage,
)


def _query_text(q: Any) -> str:
    return q.query_str if isinstance(q, QueryBundle) else str(q)


class RanklensEventHandler(BaseEventHandler):
    """Records each retrieval: start and end events share the retrieve span's id."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    recorder: Any

    @classmethod
    def class_name(cls) -> str:
        return "RanklensEventHandler"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, RetrievalStartEvent):
            self.recorder.start(
                event.span_id,
                _query_text(event.str_or_query_bundle),
                query_id=(event.tags or {}).get("query_id"),
                source="llamaindex",
            )
        elif isinstance(event, RetrievalEndEvent):
            self.recorder.end(event.span_id, event.nodes, convert=to_light)


class RanklensSpanHandler(BaseSpanHandler[Any]):
    """Ends an in-flight retrieval with the exception that dropped its span (LlamaIndex
    has no retrieval error event). Keeps no spans of its own."""

    _recorder: Any = PrivateAttr()

    def __init__(self, recorder: Recorder, **kwargs: Any):
        super().__init__(**kwargs)
        self._recorder = recorder

    @classmethod
    def class_name(cls) -> str:
        return "RanklensSpanHandler"

    # The dispatcher calls these three for every span of every component: entering and
    # exiting do nothing here (no locks, no bookkeeping); only a drop is looked at.
    def span_enter(self, *args: Any, **kwargs: Any) -> None:
        return None

    def span_exit(self, *args: Any, **kwargs: Any) -> None:
        return None

    def span_drop(
        self, id_: str, *args: Any, err: BaseException | None = None, **kwargs: Any
    ) -> None:
        if err is not None:
            self._recorder.abort(id_, err)

    def new_span(self, *args: Any, **kwargs: Any) -> None:
        return None

    def prepare_to_exit_span(self, *args: Any, **kwargs: Any) -> None:
        return None

    def prepare_to_drop_span(self, *args: Any, **kwargs: Any) -> None:
        return None


INSTRUMENT = declare("ranklens_llamaindex.instrument", {
    "recorder": data("the Recorder to fill (None: a new one from the other keywords)"),
    "dispatcher": data("the instrumentation dispatcher (None: the root one, which sees every "
                       "retriever)"),
    "stages": flag(False, "record one retrieval per pipeline call with every stage's output "
                   "(retrievers, fusion, node postprocessors) instead of one per retriever"),
    "names": data("stage names: {component or class name: name} or (component, name) pairs "
                  "(default: class names, _2 added to a repeated one)"),
}, register=False)  # fmt: skip


@INSTRUMENT.checks
def instrument(
    recorder: Recorder | None = None,
    *,
    dispatcher: Any = None,
    stages: bool = False,
    names: Any = None,
    **recorder_kwargs: Any,
) -> Instrumentation:
    """Record every LlamaIndex retrieval from now on (until ``detach()``)::

        with instrument(Recorder(key="parent")) as rec:
            query_engine.query("...")
        rec.evaluate(dataset, ["ndcg@10"])

    ``recorder``: the recorder to fill (a new one from ``recorder_kwargs`` when None);
    ``dispatcher``: the instrumentation dispatcher (default: the root one, which sees every
    retriever). ``stages=True``: one record per pipeline call (a query engine's query, your
    function decorated with ``get_dispatcher(__name__).span``, or a retrieval alone), its
    hits what the call returned and its stages every retriever and node postprocessor in it
    (:mod:`ranklens_llamaindex.stages`); ``Recorder.staged()`` gives them as a
    :class:`ranklens.StagedRun`. ``names``: the stages' names.
    """
    rec = recorder_or_new(recorder, **recorder_kwargs)
    dispatcher = dispatcher or get_dispatcher()
    if stages:
        return _instrument_stages(rec, dispatcher, stage_namer(names))
    event_handler = RanklensEventHandler(recorder=rec)
    span_handler = RanklensSpanHandler(rec)
    dispatcher.add_event_handler(event_handler)
    dispatcher.add_span_handler(span_handler)

    def detach() -> None:
        if event_handler in dispatcher.event_handlers:
            dispatcher.event_handlers.remove(event_handler)
        if span_handler in dispatcher.span_handlers:
            dispatcher.span_handlers.remove(span_handler)

    return Instrumentation(
        rec, detach, dispatcher=dispatcher, event_handler=event_handler, span_handler=span_handler
    )


def _instrument_stages(
    rec: Recorder, dispatcher: Any, namer: Callable[[Any], str | None]
) -> Instrumentation:
    needs = rec.needs

    def on_call(call: PipelineCall, result: Any, err: BaseException | None) -> None:
        found = call.stages(namer)
        if not found:
            return
        found = unseen_stage(tracker.once, found, final_nodes(result), needs)
        final = [] if err is not None else found[-1].hits
        rec.record(
            call.query or "",
            final,
            query_id=call.query_id,
            latency_ms=call.latency_ms(),
            error=err,
            trace_id=call.key,
            source="llamaindex",
            convert=_as_is,
            stages=stage_records(found),
        )

    tracker = StageTracker(on_call, needs)
    events = StageEvents(tracker=tracker)
    dispatcher.add_span_handler(tracker)
    dispatcher.add_event_handler(events)

    def detach() -> None:
        if events in dispatcher.event_handlers:
            dispatcher.event_handlers.remove(events)
        if tracker in dispatcher.span_handlers:
            dispatcher.span_handlers.remove(tracker)

    return Instrumentation(
        rec, detach, dispatcher=dispatcher, event_handler=events, span_handler=tracker
    )


def _as_is(light: LightHit, needs: frozenset[str]) -> LightHit:
    return light


class RanklensCallbackHandler(BaseCallbackHandler):
    """The legacy ``CallbackManager`` route: ``CBEventType.RETRIEVE`` start (query string)
    and end (nodes), paired by event id. Prefer :func:`instrument`, which sees every
    retriever whatever its callback manager."""

    def __init__(self, recorder: Recorder):
        super().__init__(event_starts_to_ignore=[], event_ends_to_ignore=[])
        self.recorder = recorder

    def on_event_start(
        self,
        event_type: CBEventType,
        payload: dict[str, Any] | None = None,
        event_id: str = "",
        parent_id: str = "",
        **kwargs: Any,
    ) -> str:
        if event_type == CBEventType.RETRIEVE and payload:
            query = payload.get(EventPayload.QUERY_STR, "")
            self.recorder.start(event_id, _query_text(query), source="llamaindex-callback")
        return event_id

    def on_event_end(
        self,
        event_type: CBEventType,
        payload: dict[str, Any] | None = None,
        event_id: str = "",
        **kwargs: Any,
    ) -> None:
        if event_type == CBEventType.RETRIEVE:
            nodes = (payload or {}).get(EventPayload.NODES) or []
            self.recorder.end(event_id, nodes, convert=to_light)

    def start_trace(self, trace_id: str | None = None) -> None:
        return None

    def end_trace(
        self, trace_id: str | None = None, trace_map: dict[str, list[str]] | None = None
    ) -> None:
        return None
