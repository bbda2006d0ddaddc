"""A LlamaIndex pipeline seen stage by stage, through the framework's own instrumentation.

LlamaIndex opens a span for every retriever's ``retrieve``/``aretrieve`` and for every node
postprocessor's ``_postprocess_nodes`` (the dispatcher wraps each subclass's implementation),
each with its parent span's id. :class:`StageTracker` (a span handler on the root dispatcher,
plus an event handler for ``ReRankStartEvent``) turns those spans into the stages of one
pipeline call:

* a **pipeline call** is the span that holds the outermost retrieval (a query engine's
  ``_query``/``_aquery``, a chat engine's turn, your own function decorated with
  ``get_dispatcher(__name__).span``); a retrieval with no enclosing span is a call by
  itself. Offline, :class:`~ranklens_llamaindex.LlamaIndexRetriever` marks each call
  itself (:func:`collecting`).
* its **stages** are every retrieval in it (a fusion retriever's own retrievers first, then
  the fusion) and every node postprocessor (one inside another is part of the outer one),
  in pipeline order: a stage after the stages it contains, siblings in the order they
  started. Each keeps its output as it left the component (order, scores: later stages
  that rewrite scores in place do not change it, and each node's character range in its
  document), its wall time and its error.
* its **kind**: ``"retriever"``, ``"fusion"`` (a retriever that called two or more others),
  ``"reranker"`` (a postprocessor that sent ``ReRankStartEvent`` or whose class is named a
  reranker), ``"filter"`` (LlamaIndex's postprocessors that only drop nodes:
  :data:`FILTERS`), ``"postprocessor"``; ``"unseen"`` for what the hooks could not see.
* its **name**: the component's class name (``BM25Retriever``, ``SimilarityPostprocessor``),
  ``_2``, ``_3`` added when a name repeats within a call; ``names=`` renames them
  (``{component: "bm25"}`` by the object itself, or ``{"BM25Retriever": "bm25"}`` by class).

What the hooks cannot see is said, never guessed: when what the call returned (a query
engine's ``source_nodes``, the list your function returned) differs from the last stage's
output, a step outside LlamaIndex's spans changed it (a component that overrides
``postprocess_nodes`` itself, or ``_apostprocess_nodes``, which the dispatcher does not wrap;
plain code between the retriever and the synthesizer); the
record gets a last stage named ``"unseen"`` holding what the call really returned, and an
:class:`UnseenStagesWarning` says so once, with what to do. A node postprocessor that runs
with no enclosing span (``retriever.retrieve`` then ``postprocess_nodes`` from undecorated
code) cannot be tied to its retrieval: warned once, the retrieval recorded alone.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever

# re-exported by llama_index without __all__ (mypy sees it as private)
from llama_index.core.instrumentation import (  # type: ignore[attr-defined]
    get_dispatcher,
)
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.rerank import ReRankStartEvent
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import PrivateAttr

from ranklens.capture import ALL_FIELDS, STAGE_KEY, STAGES_KEY, Hit, LightHit, Stage, Staged
from ranklens.errors import InputError, RanklensWarning, UnseenStagesWarning

from .nodes import to_light

FILTERS = frozenset({"SimilarityPostprocessor", "KeywordNodePostprocessor"})
"""LlamaIndex postprocessors that only drop nodes, keeping the others in order: kind
``"filter"``."""

ALL_NEEDS = ALL_FIELDS  # every hit keeps its parent, range and metadata

UNFINISHED = "Unfinished"
"""The error type of a stage still running when its call ended (or was looked at)."""

_RETRIEVE = ("retrieve", "aretrieve")
_POSTPROCESS = ("_postprocess_nodes", "_apostprocess_nodes")


def _query_text(q: Any) -> str:
    return q.query_str if isinstance(q, QueryBundle) else str(q)


def _method(span_id: str) -> str:
    """``"BM25Retriever.retrieve-<uuid4>"`` -> ``"retrieve"`` (the dispatcher's span ids)."""
    head = span_id[:-37] if len(span_id) > 37 and span_id[-37] == "-" else span_id
    return head.rpartition(".")[2]


def _error(err: BaseException) -> dict[str, str]:
    return {"type": type(err).__name__, "message": str(err)}


@dataclass
class StageCall:
    """One stage's call as the hooks saw it: ``name``, ``kind``, ``hits`` (light tuples:
    ``(id, score, text, parent, metadata, (start, end))``, copied when the component
    returned them), ``latency_ms``, ``error``, and the ``component`` itself."""

    name: str
    kind: str
    hits: list[LightHit]
    latency_ms: float = math.nan
    error: dict[str, str] | None = None
    component: Any = field(default=None, repr=False)

    @property
    def ids(self) -> list[str]:
        return [h[0] for h in self.hits]

    @property
    def scores(self) -> list[float | None]:
        return [h[1] for h in self.hits]


class _Span:
    """An open (then finished) stage span of one call."""

    __slots__ = ("call", "children", "component", "error", "hits", "method", "outer",
                 "reranks", "seq", "t0", "t1")  # fmt: skip

    def __init__(self, call: PipelineCall, component: Any, method: str, outer: _Span | None):
        self.call, self.component, self.method, self.outer = call, component, method, outer
        self.children: list[_Span] = []
        self.seq = next(_SEQ)
        self.t0 = time.perf_counter()
        self.t1 = math.nan
        self.hits: list[LightHit] = []
        self.error: dict[str, str] | None = None
        self.reranks = False

    @property
    def retrieval(self) -> bool:
        return self.method in _RETRIEVE


_SEQ = itertools.count()


class PipelineCall:
    """The stage spans of one pipeline call, gathered while it runs."""

    def __init__(self, key: str | None, query: str | None = None, query_id: str | None = None):
        self.key = key
        self.query = query
        self.query_id = query_id
        self.top: list[_Span] = []  # stage spans with no stage span around them
        self.t0 = time.perf_counter()

    def stages(self, names: Callable[[Any], str | None]) -> list[StageCall]:
        """The stages in pipeline order (each after the stages it contains, siblings in
        the order they started), named (``_2`` added to a repeated name)."""
        order: list[_Span] = []

        def visit(span: _Span) -> None:
            for child in sorted(span.children, key=lambda s: s.seq):
                visit(child)
            order.append(span)

        for span in sorted(self.top, key=lambda s: s.seq):
            visit(span)
        seen: dict[str, int] = {}
        out = []
        for span in order:
            base = names(span.component) or type(span.component).__name__
            seen[base] = seen.get(base, 0) + 1
            name = base if seen[base] == 1 else f"{base}_{seen[base]}"
            error = span.error
            if error is None and math.isnan(span.t1):
                error = {"type": UNFINISHED, "message": "still running when the call ended"}
            latency = (span.t1 - span.t0) * 1000
            out.append(StageCall(name, _kind(span), span.hits, latency, error, span.component))
        return out

    def latency_ms(self) -> float:
        """From the first stage's start to the last one's end (a query engine's synthesis
        left out), in milliseconds; NaN when no stage ran."""
        ends = [s.t1 for s in self.top if not math.isnan(s.t1)]
        if not self.top or not ends:
            return math.nan
        return (max(ends) - min(s.t0 for s in self.top)) * 1000


def _kind(span: _Span) -> str:
    if span.retrieval:
        return "fusion" if sum(c.retrieval for c in span.children) >= 2 else "retriever"
    cls = type(span.component).__name__
    if span.reranks or "rerank" in cls.lower():
        return "reranker"
    return "filter" if cls in FILTERS else "postprocessor"


def stage_namer(names: Any) -> Callable[[Any], str | None]:
    """``names=`` as a function component -> name (None: the class name): a mapping or
    ``(key, name)`` pairs, each key a component (matched by identity) or a class name."""
    if names is None:
        return lambda component: None
    pairs = list(names.items()) if isinstance(names, Mapping) else names
    by_id: dict[int, str] = {}
    by_class: dict[str, str] = {}
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
        raise InputError(
            "names= takes {component or class name: stage name} or (component, name) pairs, "
            f"got {type(names).__name__}"
        )
    keep = []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], str)
                and pair[1].strip()):  # fmt: skip
            raise InputError(
                f"names= entry {i + 1}: give (component or class name, stage name) with a "
                f"non-empty name, got {pair!r}"
            )
        key, name = pair
        if isinstance(key, str):
            by_class[key] = name
        else:
            by_id[id(key)] = name
            keep.append(key)  # the ids stay valid while the namer lives

    def namer(component: Any) -> str | None:
        _ = keep
        return by_id.get(id(component)) or by_class.get(type(component).__name__)

    return namer


# The offline adapter marks each call itself: spans opened while a collector is set in the
# context belong to it (threads and tasks started inside copy the context).
_COLLECTING: contextvars.ContextVar[PipelineCall | None] = contextvars.ContextVar(
    "ranklens_llamaindex_collecting", default=None
)


class StageTracker(BaseSpanHandler[Any]):
    """The span handler that gathers stages (see the module docstring). ``on_call(call,
    result, error)`` is called when a live pipeline call ends (None: offline only, where
    :func:`collecting` marks the calls and spans outside one are ignored at the cost of one
    context-variable read). ``needs``: what each hit keeps (:data:`ALL_NEEDS` by default)."""

    _on_call: Any = PrivateAttr()
    _needs: frozenset[str] = PrivateAttr()
    _parents: dict[str, str | None] = PrivateAttr()
    _spans: dict[str, _Span] = PrivateAttr()
    _calls: dict[str, PipelineCall] = PrivateAttr()
    _once: Once = PrivateAttr()
    _unrecorded: int = PrivateAttr()

    def __init__(
        self,
        on_call: Callable[[PipelineCall, Any, BaseException | None], None] | None = None,
        needs: frozenset[str] = ALL_NEEDS,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self._on_call = on_call
        self._needs = needs
        self._parents = {}
        self._spans = {}
        self._calls = {}
        self._once = Once()
        self._unrecorded = 0

    @classmethod
    def class_name(cls) -> str:
        return "RanklensStageTracker"

    # ------------------------------------------------------------------ spans
    def span_enter(
        self,
        id_: str,
        bound_args: Any,
        instance: Any = None,
        parent_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        collector = _COLLECTING.get()
        if collector is None and self._on_call is None:
            return
        self._parents[id_] = parent_id
        if isinstance(instance, BaseRetriever):
            if _method(id_) not in _RETRIEVE:
                return
            query = bound_args.arguments.get("str_or_query_bundle")
        elif isinstance(instance, BaseNodePostprocessor):
            if _method(id_) not in _POSTPROCESS:
                return
            query = bound_args.arguments.get("query_bundle")
        else:
            return
        method = _method(id_)
        outer, call = self._enclosing(parent_id, collector)
        if outer is not None and outer.method in _POSTPROCESS and method in _POSTPROCESS:
            return  # a postprocessor inside another is part of it
        if call is None:
            if method in _POSTPROCESS:
                self._orphan(instance)
                return
            key = parent_id if parent_id is not None else id_
            call = PipelineCall(key, _query_text(query), (tags or {}).get("query_id"))
            self._calls[key] = call
        span = _Span(call, instance, method, outer)
        if outer is not None:
            outer.children.append(span)
        else:
            call.top.append(span)
            if call.query is None and query is not None:
                call.query = _query_text(query)
            if call.query_id is None and tags:
                call.query_id = tags.get("query_id")
        self._spans[id_] = span

    def _enclosing(
        self, parent_id: str | None, collector: PipelineCall | None
    ) -> tuple[_Span | None, PipelineCall | None]:
        """The nearest open stage span around ``parent_id`` and the call it belongs to."""
        spans, calls, parents = self._spans, self._calls, self._parents
        at = parent_id
        while at is not None:
            span = spans.get(at)
            if span is not None:
                return span, span.call
            if collector is None:
                call = calls.get(at)
                if call is not None:
                    return None, call
            at = parents.get(at)
        return None, collector

    def span_exit(
        self, id_: str, bound_args: Any, instance: Any = None, result: Any = None, **kwargs: Any
    ) -> None:
        if self._parents.pop(id_, 0) == 0 and not self._calls:
            return  # not tracked (entered before the tracker was attached, or offline)
        span = self._spans.pop(id_, None)
        if span is not None:
            span.t1 = time.perf_counter()
            try:
                span.hits = [to_light(n, self._needs) for n in result or ()]
            except Exception as exc:  # not a list of nodes: the stage's error, not the app's
                message = f"the stage returned something other than nodes: {exc}"
                span.error = {"type": type(exc).__name__, "message": message}
        call = self._calls.pop(id_, None)
        if call is not None and self._on_call is not None:
            self._finish(call, result, None)

    def span_drop(
        self, id_: str, bound_args: Any, instance: Any = None, err: BaseException | None = None,
        **kwargs: Any,
    ) -> None:  # fmt: skip
        if self._parents.pop(id_, 0) == 0 and not self._calls:
            return
        span = self._spans.pop(id_, None)
        if span is not None:
            span.t1 = time.perf_counter()
            span.error = _error(err) if err is not None else {"type": "Dropped", "message": ""}
        call = self._calls.pop(id_, None)
        if call is not None and self._on_call is not None:
            self._finish(call, None, err)

    def _finish(self, call: PipelineCall, result: Any, err: BaseException | None) -> None:
        try:
            self._on_call(call, result, err)
        except Exception as exc:  # recording never raises into the app: counted and said once
            self.unrecorded += 1
            self._once(
                "unrecorded",
                f"ranklens: a LlamaIndex pipeline call could not be recorded ({type(exc).__name__}:"
                f" {exc}); such calls are counted in the instrumentation's span_handler"
                ".unrecorded. Please report it with the pipeline's components.",
                RanklensWarning,
            )

    def new_span(self, *args: Any, **kwargs: Any) -> None:
        return None

    def prepare_to_exit_span(self, *args: Any, **kwargs: Any) -> None:
        return None

    def prepare_to_drop_span(self, *args: Any, **kwargs: Any) -> None:
        return None

    # ------------------------------------------------------------------ events
    def rerank_seen(self, span_id: str | None) -> None:
        """A ``ReRankStartEvent`` in ``span_id``: the postprocessor around it reranks."""
        at = span_id
        while at is not None:
            span = self._spans.get(at)
            if span is not None:
                if span.method in _POSTPROCESS:
                    span.reranks = True
                return
            at = self._parents.get(at)

    @property
    def unrecorded(self) -> int:
        """Pipeline calls whose recording raised (each said by a warning, the first once)."""
        return self._unrecorded

    @unrecorded.setter
    def unrecorded(self, value: int) -> None:
        self._unrecorded = value

    @property
    def once(self) -> Once:
        """This tracker's warnings, each shown once."""
        return self._once

    def _orphan(self, component: Any) -> None:
        self._once(
            "orphan",
            f"ranklens: the node postprocessor {type(component).__name__} ran outside any "
            "call that holds a retrieval (no LlamaIndex span encloses both), so its output "
            "is not a stage of any recorded pipeline; the retrieval was recorded alone. Run "
            "the pipeline through a query engine (engine.query), or decorate the function "
            "that calls the retriever and the postprocessors with "
            "@llama_index.core.instrumentation.get_dispatcher(__name__).span",
        )


class Once:
    """Shows each kind of :class:`UnseenStagesWarning` once (thread-safe)."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(
        self, what: str, message: str, category: type[Warning] = UnseenStagesWarning
    ) -> None:
        with self._lock:
            if what in self._seen:
                return
            self._seen.add(what)
        warnings.warn(message, category, stacklevel=3)


class StageEvents(BaseEventHandler):
    """Tells the :class:`StageTracker` which postprocessors send ``ReRankStartEvent``."""

    tracker: Any

    @classmethod
    def class_name(cls) -> str:
        return "RanklensStageEvents"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, ReRankStartEvent):
            self.tracker.rerank_seen(event.span_id)


def final_nodes(result: Any) -> list[NodeWithScore] | None:
    """The nodes a pipeline call returned: a response's ``source_nodes`` or a list of
    nodes; None when the result holds none."""
    nodes = getattr(result, "source_nodes", None)
    if nodes is None and isinstance(result, list):
        nodes = result
    if nodes is None or not all(isinstance(n, NodeWithScore) for n in nodes):
        return None
    return list(nodes)


def unseen_stage(
    once: Once, stages: list[StageCall], returned: list[NodeWithScore] | None,
    needs: frozenset[str],
) -> list[StageCall]:  # fmt: skip
    """``stages`` and, when what the call ``returned`` differs from the last stage's output
    (ids and order), a last stage ``"unseen"`` holding it (warned once)."""
    if returned is None or not stages:
        return stages
    ids = [n.node.id_ for n in returned]
    if ids == stages[-1].ids:
        return stages
    once(
        "unseen",
        f"ranklens: what the pipeline returned ({len(ids)} nodes) differs from the output of "
        f"its last stage the hooks saw ({stages[-1].name}: {len(stages[-1].hits)} nodes): a "
        "step outside LlamaIndex's instrumentation changed it (a component overriding "
        "postprocess_nodes itself, or code between retrieval and synthesis). It is recorded "
        "as a last stage named 'unseen'. To see that step, implement it as a "
        "BaseNodePostprocessor with its own _postprocess_nodes (the dispatcher wraps it), or "
        "decorate its function with @llama_index.core.instrumentation.get_dispatcher("
        "__name__).span and pass it to the query engine as a postprocessor, or give its "
        "stages yourself: Recorder.record(..., stages=[...]).",
    )
    hits = [to_light(n, needs) for n in returned]
    return [*stages, StageCall("unseen", "unseen", hits)]


_TRACKER = StageTracker()  # the offline tracker: attached while any offline call runs
_EVENTS = StageEvents(tracker=_TRACKER)
_USERS = [0]
_USERS_LOCK = threading.Lock()
_DISPATCHER = get_dispatcher(__name__)


@contextlib.contextmanager
def collecting(query: str, query_id: str | None) -> Iterator[PipelineCall]:
    """Mark one offline pipeline call: every stage span opened inside (this thread, the
    tasks and threads it starts with a copy of its context) is gathered into the
    :class:`PipelineCall` yielded. One tracker on the root dispatcher serves every
    concurrent call; it is attached while any call runs and removed after the last. Run
    the call itself through :func:`traced` or :func:`atraced`, so that live hooks see one
    span holding it."""
    root = get_dispatcher()
    with _USERS_LOCK:
        if _USERS[0] == 0:
            root.add_span_handler(_TRACKER)
            root.add_event_handler(_EVENTS)
        _USERS[0] += 1
    call = PipelineCall(None, query, query_id)
    token = _COLLECTING.set(call)
    try:
        yield call
    finally:
        _COLLECTING.reset(token)
        with _USERS_LOCK:
            _USERS[0] -= 1
            if _USERS[0] == 0:
                if _TRACKER in root.span_handlers:
                    root.span_handlers.remove(_TRACKER)
                if _EVENTS in root.event_handlers:
                    root.event_handlers.remove(_EVENTS)


@_DISPATCHER.span
def traced(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a span of its own: the pipeline call a live tracker groups by."""
    return fn(*args)


@_DISPATCHER.span
async def atraced(fn: Callable[..., Any], *args: Any) -> Any:
    """:func:`traced` for a coroutine function."""
    return await fn(*args)


def stage_records(
    stages: list[StageCall], hit: Callable[[LightHit], Any] | None = None
) -> list[Stage]:
    """The stages as ranklens :class:`~ranklens.capture.stages.Stage` records, their hits
    the light tuples as they are (for ``Recorder.record(..., convert=...)``) or ``hit(light)``
    each."""
    return [
        Stage(s.name, hits=s.hits if hit is None else [hit(h) for h in s.hits],
              latency_ms=s.latency_ms, error=s.error, kind=s.kind)
        for s in stages
    ]  # fmt: skip


def staged_hits(hits: list[Hit], stages: list[StageCall]) -> Staged:
    """What the adapter's retrieval returns to the runner: the final hits with the stages
    (:class:`~ranklens.capture.stages.Staged`)."""
    return Staged(hits, stage_records(stages, Hit.from_light))


def failed_stage(exc: BaseException, stages: list[StageCall]) -> BaseException:
    """``exc`` (a pipeline call's exception) marked with the stage that raised it (the
    first failed one in pipeline order: the innermost) and the stages up to it, as the
    runner reads them (``ranklens.capture.stages.STAGE_KEY``/``STAGES_KEY``)."""
    for i, st in enumerate(stages):
        if st.error is not None:
            try:
                setattr(exc, STAGE_KEY, st.name)
                setattr(exc, STAGES_KEY, stage_records(stages[: i + 1], Hit.from_light))
            except AttributeError:
                pass
            break
    return exc
