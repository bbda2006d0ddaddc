"""A Haystack pipeline call, stage by stage, as its tracer sees it.

Haystack opens a ``haystack.pipeline.run`` span for each call of ``Pipeline.run`` (or
``run_async``) and, inside it, a ``haystack.component.run`` span per component run whose
``parent_span`` is the pipeline's span; each component span is handed the component's
inputs and outputs (``set_content_tag``, called whether or not content tracing is on).
:class:`StageTracer` wraps the active tracer, groups the component runs of one pipeline
call by that parent span into a :class:`PipelineCall` and, when the call ends, hands it to
:meth:`StageTracer.finished`. Each component run that returns a list of Documents is a
*stage* (its ``documents`` output, else its one output typed ``list[Document]``, else the
one such output connected onward: :func:`document_socket`); the documents are copied (by
the tracer's ``convert``) as the component returned them, before a later component can
change their scores in place.

Stage order is the pipeline's graph: a topological order of the components that ran (each
component's senders read from the span's ``input_spec`` tag), ties broken by component
name, so that every call of a pipeline lists its stages in the same order whether it ran
sync or async (where parallel branches may finish in any order). A component visited again
in a loop is a stage of its own, ``name#2``.

What the tracer cannot see, said once per tracer (:class:`UnseenStagesWarning`): a
component that runs a pipeline of its own (a ``SuperComponent``: its inner components are
not separate stages), a component run outside any pipeline call the tracer saw, a
component sending Documents down several branches (a router: not a stage), and (for a
:class:`~haystack.Pipeline` at hand, :func:`unseen_stages`) a custom component that calls
other components itself, whose inner steps emit no spans.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import threading
import time
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from haystack import Document
from haystack.tracing.tracer import Span, Tracer, enable_tracing
from haystack.tracing.tracer import tracer as haystack_tracer

from ranklens.capture import Stage
from ranklens.errors import UnseenStagesWarning

PIPELINE_RUN = "haystack.pipeline.run"
COMPONENT_RUN = "haystack.component.run"
_NAME = "haystack.component.name"
_TYPE = "haystack.component.fully_qualified_type"
_INPUT_SPEC = "haystack.component.input_spec"
_OUTPUT_SPEC = "haystack.component.output_spec"
_INPUT = "haystack.component.input"
_OUTPUT = "haystack.component.output"
_PIPELINE_INPUT = "haystack.pipeline.input_data"


def trace_ids(span: Span | None) -> tuple[Any, Any]:
    """``(span id, trace id)`` of a Haystack span, as its tracer reports them for log
    correlation (OpenTelemetry, Datadog...); ``(None, None)`` when tracing is off."""
    corr = span.get_correlation_data_for_logs() if span is not None else None
    if not corr:
        return None, None
    return corr.get("span_id"), corr.get("trace_id")


def is_retriever(qualified_type: str) -> bool:
    """A retriever by its class: Haystack's ``retrievers`` or a class named ``...Retriever``."""
    module, _, cls = qualified_type.rpartition(".")
    return "retrievers" in module.split(".") or cls.endswith("Retriever")


def stage_kind(qualified_type: str, takes_documents: bool) -> str:
    """What a component is to the stage model, from its class's module and name: a
    retriever (:func:`is_retriever`), ``fusion`` (``joiners``), ``reranker`` (``rankers``),
    ``filter`` (``routers``, ``...Filter``), ``postprocessor`` (``preprocessors``,
    ``converters``, ``embedders``...), ``packer`` (``LostInTheMiddleRanker``, which orders and
    cuts documents for the prompt); any other component is a retriever when it takes no
    documents and a postprocessor when it does."""
    module, _, cls = qualified_type.rpartition(".")
    parts = set(module.split("."))
    if cls == "LostInTheMiddleRanker":
        return "packer"
    if is_retriever(qualified_type):
        return "retriever"
    if "joiners" in parts or cls.endswith("Joiner"):
        return "fusion"
    if "rankers" in parts or cls.endswith("Ranker"):
        return "reranker"
    if "routers" in parts or cls.endswith(("Filter", "Router")):
        return "filter"
    if parts & {"preprocessors", "converters", "embedders", "fetchers", "writers"}:
        return "postprocessor"
    return "postprocessor" if takes_documents else "retriever"


def document_socket(out_spec: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    """Which output of a component is its stage, from the span's ``output_spec`` tag:
    ``documents`` when it has one, else its one output typed as a list of Documents, else
    the one such output connected to a receiver; ``(None, candidates)`` when several could
    be (a router's routes: no stage, and said)."""
    typed = tuple(
        name for name, spec in out_spec.items()
        if isinstance(spec, Mapping) and _is_documents(str(spec.get("type", "")))
    )  # fmt: skip
    if "documents" in out_spec:
        return "documents", ()
    if len(typed) <= 1:
        return (typed[0] if typed else None), ()
    connected = tuple(n for n in typed if out_spec[n].get("receivers"))
    if len(connected) == 1:
        return connected[0], ()
    return None, connected or typed


def _is_documents(type_name: str) -> bool:
    """A socket type naming a list of Documents (``list[haystack...Document]``)."""
    return type_name.replace("typing.", "").lower().startswith("list[") and type_name.endswith(
        ("Document]", "Document]]")
    )


def documents_of(outputs: Any, socket: str | None) -> list[Document] | None:
    """The Documents a component returned on ``socket``; None when it returned none there
    (not a stage)."""
    if socket is None or not isinstance(outputs, Mapping):
        return None
    docs = outputs.get(socket)
    if isinstance(docs, list) and all(isinstance(d, Document) for d in docs):
        return docs
    return None


@dataclass
class ComponentRun:
    """One component run within a pipeline call."""

    name: str
    type: str
    senders: tuple[str, ...]
    takes_documents: bool
    gives_documents: bool
    inputs: Mapping[str, Any]
    socket: str | None = None
    ambiguous: tuple[str, ...] = ()
    hits: list[Any] | None = None
    latency_ms: float = float("nan")
    error: BaseException | None = None
    started: float = 0.0
    span_id: Any = None
    trace_id: Any = None
    stage: str = ""

    @property
    def kind(self) -> str:
        return stage_kind(self.type, self.takes_documents)

    @property
    def is_stage(self) -> bool:
        """Returned Documents, or failed where its output would have held them."""
        return self.hits is not None or (self.error is not None and self.gives_documents)


@dataclass
class PipelineCall:
    """The component runs of one pipeline call, as they ended."""

    data: Any = None
    runs: list[ComponentRun] = field(default_factory=list)
    error: BaseException | None = None
    _order: tuple[int, list[ComponentRun]] = (-1, [])

    def ordered(self) -> list[ComponentRun]:
        """Every run in the graph's order (topological, ties by name; a component visited
        again comes after its earlier visit), each named as a stage (``name``, ``name#2``)."""
        if self._order[0] == len(self.runs):
            return self._order[1]
        by_name: dict[str, list[ComponentRun]] = {}
        for r in self.runs:
            by_name.setdefault(r.name, []).append(r)
        names = sorted(by_name)
        preds = {n: {s for r in by_name[n] for s in r.senders if s in by_name and s != n}
                 for n in names}  # fmt: skip
        order: list[str] = []
        ready = [n for n in names if not preds[n]]
        heapq.heapify(ready)
        left = {n: set(p) for n, p in preds.items()}
        while ready:
            n = heapq.heappop(ready)
            order.append(n)
            for m in names:
                if n in left[m]:
                    left[m].discard(n)
                    if not left[m]:
                        heapq.heappush(ready, m)
        order += [n for n in names if n not in order]  # a cycle: by name
        out = []
        for n in order:
            for visit, r in enumerate(by_name[n], 1):
                r.stage = n if visit == 1 else f"{n}#{visit}"
                out.append(r)
        self._order = (len(self.runs), out)
        return out

    def stages(self, components: Collection[str] | None = None) -> list[ComponentRun]:
        """The stages in order: every run that returned Documents (or failed where it
        would have), of the ``components`` named when given."""
        runs = self.ordered()
        return [r for r in runs if r.is_stage and (components is None or r.name in components)]

    def query(self) -> str | None:
        """The query text of the call: the ``query`` input of the first component (in
        order) that has a text one, else the ``text`` input of one (a text embedder's),
        else a ``query`` or ``text`` in the pipeline's input data."""
        runs = self.ordered()
        for socket in ("query", "text"):
            for r in runs:
                value = r.inputs.get(socket)
                if isinstance(value, str):
                    return value
        data = self.data if isinstance(self.data, Mapping) else {}
        for socket in ("query", "text"):
            if isinstance(data.get(socket), str):
                return str(data[socket])
            for sub in data.values():
                if isinstance(sub, Mapping) and isinstance(sub.get(socket), str):
                    return str(sub[socket])
        return None


def error_record(error: BaseException | None) -> dict[str, str] | None:
    """An exception as a record keeps it: ``{"type", "message"}``."""
    if error is None:
        return None
    return {"type": type(error).__name__, "message": str(error)[:500] or "(no message)"}


def stage_records(runs: Sequence[ComponentRun]) -> list[Stage]:
    """The :class:`ranklens.capture.Stage` of each stage run, its hits as the tracer copied
    them (mapped to the labels' ids by the recorder's or the runner's key)."""
    return [
        Stage(r.stage, hits=list(r.hits or ()), latency_ms=r.latency_ms,
              error=error_record(r.error), kind=r.kind)
        for r in runs
    ]  # fmt: skip


class _PipelineSpan(Span):
    """The wrapped tracer's pipeline span, carrying the call its components join."""

    __slots__ = ("call", "inner", "owner")

    def __init__(self, inner: Span, owner: StageTracer, call: PipelineCall):
        self.inner, self.owner, self.call = inner, owner, call

    def set_tag(self, key: str, value: Any) -> None:
        self.inner.set_tag(key, value)

    def set_content_tag(self, key: str, value: Any) -> None:
        self.inner.set_content_tag(key, value)

    def raw_span(self) -> Any:
        return self.inner.raw_span()

    def get_correlation_data_for_logs(self) -> dict[str, Any]:
        return self.inner.get_correlation_data_for_logs()


class _ComponentSpan(Span):
    """The wrapped tracer's component span; keeps the component's input and output."""

    __slots__ = ("inner", "inputs", "outputs")

    def __init__(self, inner: Span):
        self.inner = inner
        self.inputs: Any = None
        self.outputs: Any = None

    def set_tag(self, key: str, value: Any) -> None:
        self.inner.set_tag(key, value)

    def set_content_tag(self, key: str, value: Any) -> None:
        if key == _INPUT:
            self.inputs = value
        elif key == _OUTPUT:
            self.outputs = value
        self.inner.set_content_tag(key, value)

    def raw_span(self) -> Any:
        return self.inner.raw_span()

    def get_correlation_data_for_logs(self) -> dict[str, Any]:
        return self.inner.get_correlation_data_for_logs()


_NESTED = PipelineCall()  # marks a pipeline run inside a component: not a call of its own


def _unwrap(span: Span | None) -> Span | None:
    return span.inner if isinstance(span, (_PipelineSpan, _ComponentSpan)) else span


class StageTracer(Tracer):
    """A Haystack tracer that groups each pipeline call's component runs
    (:class:`PipelineCall`) and delegates everything to ``inner`` (the tracer that was
    active). Subclasses say what a finished call becomes (:meth:`finished`) and what a
    component run outside any call becomes (:meth:`alone`). ``convert(document)`` copies a
    returned Document as it stands when its component ends."""

    def __init__(self, inner: Tracer, convert: Callable[[Document], Any]):
        self.inner = inner
        self.convert = convert
        self._current: contextvars.ContextVar[PipelineCall | None] = contextvars.ContextVar(
            f"ranklens_haystack_call_{id(self)}", default=None
        )
        self._component: contextvars.ContextVar[str | None] = contextvars.ContextVar(
            f"ranklens_haystack_component_{id(self)}", default=None
        )
        self._warned: set[tuple[str, str]] = set()

    def current_span(self) -> Span | None:
        return self.inner.current_span()

    @contextlib.contextmanager
    def trace(
        self,
        operation_name: str,
        tags: dict[str, Any] | None = None,
        parent_span: Span | None = None,
    ) -> Iterator[Span]:
        parent = _unwrap(parent_span)
        if operation_name == PIPELINE_RUN:
            with self._pipeline(tags, parent) as span:
                yield span
            return
        if operation_name != COMPONENT_RUN or not (tags or {}).get(_NAME):
            with self.inner.trace(operation_name, tags=tags, parent_span=parent) as inner:
                yield inner
            return
        if isinstance(parent_span, _PipelineSpan) and parent_span.owner is self:
            call: PipelineCall | None = parent_span.call
        else:
            call = self._current.get()
        if call is _NESTED:
            with self.inner.trace(operation_name, tags=tags, parent_span=parent) as inner:
                yield inner
            return
        with self._component_run(tags or {}, parent, call) as span:
            yield span

    @contextlib.contextmanager
    def _pipeline(self, tags: dict[str, Any] | None, parent: Span | None) -> Iterator[Span]:
        outer = self._current.get()
        if outer is not None:  # a pipeline run by a component (SuperComponent, Agent...)
            owner = self._component.get() or "?"
            self.warn_once(
                "nested", owner,
                f"component {owner!r} runs a pipeline of its own (a SuperComponent or an "
                "Agent): its inner components are not separate stages, only its output is; "
                "to measure them, add them to the outer pipeline as components, or record "
                "their outputs with Recorder.record(query, hits, stages=[...])",
            )  # fmt: skip
            token = self._current.set(_NESTED)
            try:
                with self.inner.trace(PIPELINE_RUN, tags=tags, parent_span=parent) as inner:
                    yield inner
            finally:
                self._reset(self._current, token)
            return
        call = PipelineCall(data=(tags or {}).get(_PIPELINE_INPUT))
        token = self._current.set(call)
        try:
            with self.inner.trace(PIPELINE_RUN, tags=tags, parent_span=parent) as inner:
                yield _PipelineSpan(inner, self, call)
        except BaseException as exc:
            call.error = exc.__cause__ or exc
            raise
        finally:
            self._reset(self._current, token)
            self._finish(call)

    @contextlib.contextmanager
    def _component_run(
        self, tags: dict[str, Any], parent: Span | None, call: PipelineCall | None
    ) -> Iterator[Span]:
        name = str(tags[_NAME])
        in_spec = tags.get(_INPUT_SPEC) or {}
        out_spec = tags.get(_OUTPUT_SPEC) or {}
        senders = tuple(
            str(s) for spec in in_spec.values() if isinstance(spec, Mapping)
            for s in spec.get("senders") or ()
        )  # fmt: skip
        socket, ambiguous = document_socket(out_spec)
        run = ComponentRun(
            name=name, type=str(tags.get(_TYPE) or ""), senders=senders,
            takes_documents="documents" in in_spec, gives_documents=socket is not None,
            inputs={}, socket=socket, ambiguous=ambiguous,
        )  # fmt: skip
        token = self._component.set(name)
        with self.inner.trace(COMPONENT_RUN, tags=tags, parent_span=parent) as inner:
            span = _ComponentSpan(inner)
            t0 = run.started = time.perf_counter()
            try:
                yield span
            except BaseException as exc:
                # Haystack wraps a component's exception in PipelineRuntimeError: keep the
                # component's own.
                run.error = exc.__cause__ or exc
                raise
            finally:
                run.latency_ms = (time.perf_counter() - t0) * 1000
                self._reset(self._component, token)
                self._ended(run, span, call)

    def _ended(self, run: ComponentRun, span: _ComponentSpan, call: PipelineCall | None) -> None:
        run.inputs = span.inputs if isinstance(span.inputs, Mapping) else {}
        run.span_id, run.trace_id = trace_ids(span.inner)
        docs = documents_of(span.outputs, run.socket)
        if run.ambiguous and isinstance(span.outputs, Mapping):
            self.warn_once(
                "sockets", run.name,
                f"component {run.name!r} returns Documents on several outputs "
                f"({', '.join(run.ambiguous)}), each to a branch of its own: it is not a "
                "stage, as the stages of one query follow one path. Measure each branch "
                "with run(..., component=...) on a pipeline of that branch",
            )  # fmt: skip
        if docs is not None:
            try:
                run.hits = self.copy(docs)
            except Exception as exc:  # a Document the converter cannot read: the stage's error
                run.error = exc
        if call is None:
            if run.is_stage:
                self.alone(run)
        else:
            call.runs.append(run)

    @staticmethod
    def _reset(var: contextvars.ContextVar[Any], token: contextvars.Token[Any]) -> None:
        try:
            var.reset(token)
        except ValueError:  # ended in another context (an async generator closed elsewhere)
            var.set(None)

    def _finish(self, call: PipelineCall) -> None:
        try:
            self.finished(call)
        except Exception as exc:  # never into the app: said once
            message = f"ranklens could not record a Haystack pipeline call: {exc!r}"
            self.warn_once("failed", type(exc).__name__, message)

    def copy(self, docs: list[Document]) -> list[Any] | None:
        """The Documents a component returned, copied by ``convert`` as they stand."""
        return [self.convert(d) for d in docs]

    def finished(self, call: PipelineCall) -> None:
        """A pipeline call ended (with ``call.error`` if it raised)."""

    def alone(self, run: ComponentRun) -> None:
        """A component returned Documents outside any pipeline call this tracer saw."""

    def warn_once(self, what: str, name: str, message: str) -> None:
        """:class:`UnseenStagesWarning` ``message``, once per ``(what, name)``."""
        if (what, name) in self._warned:
            return
        self._warned.add((what, name))
        warnings.warn(message, UnseenStagesWarning, stacklevel=4)


# ----------------------------------------------------------------- offline collection
_BOX: contextvars.ContextVar[tuple[Callable[[Document], Any], list[PipelineCall]] | None] = (
    contextvars.ContextVar("ranklens_haystack_box", default=None)
)


class _CollectingTracer(StageTracer):
    """Hands each outermost pipeline call to the collection open in its context (and
    copies Documents with that collection's converter); calls outside any are let go."""

    def __init__(self, inner: Tracer):
        super().__init__(inner, lambda doc: doc)
        self.users = 0

    def copy(self, docs: list[Document]) -> list[Any] | None:
        box = _BOX.get()
        return None if box is None else [box[0](d) for d in docs]

    def finished(self, call: PipelineCall) -> None:
        box = _BOX.get()
        if box is not None:
            box[1].append(call)

    def warn_once(self, what: str, name: str, message: str) -> None:
        """What only a run shows (a component sending Documents down several branches),
        once per process; the adapter says what its pipeline hides once, when it is built
        (:func:`unseen_stages`), not once per query."""
        if what == "sockets" and name not in _SAID:
            _SAID.add(name)
            warnings.warn(message, UnseenStagesWarning, stacklevel=4)


_SAID: set[str] = set()


_LOCK = threading.Lock()
_ACTIVE: list[_CollectingTracer] = []  # the installed collecting tracer, while one is


@contextlib.contextmanager
def collecting(convert: Callable[[Document], Any]) -> Iterator[list[PipelineCall]]:
    """The pipeline calls made in this context (thread or asyncio task) until it exits,
    their Documents copied by ``convert``: a :class:`StageTracer` is installed for as long
    as any collection is open (on top of the active tracer, which keeps working) and
    removed after the last one."""
    calls: list[PipelineCall] = []
    with _LOCK:
        if not _ACTIVE:
            _ACTIVE.append(_CollectingTracer(haystack_tracer.actual_tracer))
            enable_tracing(_ACTIVE[0])
        tracer = _ACTIVE[0]
        tracer.users += 1
    token = _BOX.set((convert, calls))
    try:
        yield calls
    finally:
        StageTracer._reset(_BOX, token)
        with _LOCK:
            tracer.users -= 1
            if tracer.users == 0:
                if haystack_tracer.actual_tracer is tracer:
                    haystack_tracer.actual_tracer = tracer.inner
                _ACTIVE.clear()


def unseen_stages(pipeline: Any) -> list[tuple[str, list[str]]]:
    """Components of ``pipeline`` that call other Haystack components (or a Pipeline)
    themselves, as ``(component, [what it holds])``: their inner steps emit no spans, so
    only their output is a stage."""
    out = []
    for name, comp in pipeline.walk():
        held = []
        for attr, value in getattr(comp, "__dict__", {}).items():
            if attr.startswith("__"):
                continue
            if hasattr(type(value), "__haystack_input__") or hasattr(value, "__haystack_input__"):
                held.append(f"{attr} ({type(value).__name__})")
            elif type(value).__name__ in ("Pipeline", "AsyncPipeline") and hasattr(value, "walk"):
                held.append(f"{attr} (Pipeline)")
        if held:
            out.append((name, held))
    return out
