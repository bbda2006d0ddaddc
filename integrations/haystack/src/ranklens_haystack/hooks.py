"""Capture retrievals from any Haystack pipeline through its tracer, with no extra component.

``instrument(recorder)`` installs a tracer that wraps the one already active (OpenTelemetry,
Datadog... keep working) and watches ``haystack.component.run`` spans: for the components
named (default: every component whose output has ``documents`` and whose input has
``query``), it records the query, the documents, the latency of the component run and any
exception, whether or not Haystack's content tracing is on. ``detach()`` (or leaving the
``with`` block) restores the previous tracer.

Haystack's retrievers take no query id: pass ``query_ids={query text: id}`` to
:func:`instrument`, or let :meth:`ranklens.Recorder.evaluate` match queries by text.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from typing import Any

from haystack.tracing.tracer import Span, Tracer, enable_tracing
from haystack.tracing.tracer import tracer as haystack_tracer

from ranklens.capture import Instrumentation, Recorder, recorder_or_new

from .adapter import to_light

_NAME = "haystack.component.name"
_INPUT = "haystack.component.input"
_OUTPUT = "haystack.component.output"


def trace_ids(span: Span | None) -> tuple[Any, Any]:
    """``(span id, trace id)`` of a Haystack span, as its tracer reports them for log
    correlation (OpenTelemetry, Datadog...); ``(None, None)`` when tracing is off."""
    corr = span.get_correlation_data_for_logs() if span is not None else None
    if not corr:
        return None, None
    return corr.get("span_id"), corr.get("trace_id")


class _RecordingSpan(Span):
    """Passes everything to the wrapped span and keeps the component's input and output."""

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


class RanklensTracer(Tracer):
    """A Haystack tracer that records retrievals into ``recorder`` and delegates to
    ``inner`` (the tracer that was active)."""

    def __init__(
        self,
        recorder: Recorder,
        inner: Tracer,
        components: set[str] | None = None,
        query_ids: Mapping[str, str] | None = None,
    ):
        self.recorder = recorder
        self.inner = inner
        self.components = components
        self.query_ids = dict(query_ids or {})

    @contextlib.contextmanager
    def trace(
        self,
        operation_name: str,
        tags: dict[str, Any] | None = None,
        parent_span: Span | None = None,
    ) -> Iterator[Span]:
        with self.inner.trace(operation_name, tags=tags, parent_span=parent_span) as inner:
            name = (tags or {}).get(_NAME) if operation_name == "haystack.component.run" else None
            if name is None or (self.components is not None and name not in self.components):
                yield inner
                return
            span = _RecordingSpan(inner)
            t0 = time.perf_counter()
            try:
                yield span
            except BaseException as exc:
                # Haystack wraps a component's exception in PipelineRuntimeError: record
                # the component's own.
                self._record(name, span, t0, exc.__cause__ or exc)
                raise
            self._record(name, span, t0, None)

    def _record(
        self, name: str, span: _RecordingSpan, t0: float, error: BaseException | None
    ) -> None:
        inputs = span.inputs if isinstance(span.inputs, Mapping) else {}
        query = inputs.get("query")
        docs = span.outputs.get("documents") if isinstance(span.outputs, Mapping) else None
        if not isinstance(query, str) or (docs is None and error is None):
            return  # not a retrieval
        span_id, trace_id = trace_ids(span.inner)
        self.recorder.record(
            query, docs or (), query_id=self.query_ids.get(query),
            latency_ms=(time.perf_counter() - t0) * 1000, error=error, source=name,
            trace_id=span_id, parent_trace_id=trace_id, convert=to_light,
        )  # fmt: skip

    def current_span(self) -> Span | None:
        return self.inner.current_span()


def instrument(
    recorder: Recorder | None = None,
    *,
    components: set[str] | None = None,
    query_ids: Mapping[str, str] | None = None,
    **recorder_kwargs: Any,
) -> Instrumentation:
    """Record every retrieval that Haystack pipelines run from now on::

        with instrument(Recorder(key="meta.file_id")) as rec:
            pipeline.run({"retriever": {"query": question}})
        rec.evaluate(dataset, ["ndcg@10"])

    ``components``: the names of the components to watch (default: any whose input has a
    ``query`` and whose output has ``documents``). ``query_ids``: query text → id.
    """
    rec = recorder_or_new(recorder, **recorder_kwargs)
    previous = haystack_tracer.actual_tracer
    tracer = RanklensTracer(rec, previous, components, query_ids)
    enable_tracing(tracer)

    def detach() -> None:
        if haystack_tracer.actual_tracer is tracer:
            haystack_tracer.actual_tracer = previous

    return Instrumentation(rec, detach, tracer=tracer, previous=previous)
