"""Capture retrievals from any Haystack pipeline through its tracer, with no extra component.

``instrument(recorder)`` installs a tracer that wraps the one already active (OpenTelemetry,
Datadog... keep working) and groups the component runs of each pipeline call
(:mod:`.stages`). A call in which a component took a text ``query`` or ``text`` and some
component returned Documents is one retrieval, recorded with its stages: every component
that returned Documents (retrievers, a joiner's fusion, rankers, filters...), in the
pipeline's order, each with its documents, scores and chunk positions as the component
returned them, its kind, latency and exception
(``Recorder.record(query, final_documents, stages=[...])``). The record's own ranking is
the last stage's. This works whether or not Haystack's content tracing is on.
``detach()`` (or leaving the ``with`` block) restores the previous tracer.

``stages=False`` records each component run with a ``query`` input and a ``documents``
output as a retrieval of its own, without stages (the behaviour before stages).
``components=`` names the components to watch (the stages; their order stays the pipeline's).

Haystack's retrievers take no query id: pass ``query_ids={query text: id}`` to
:func:`instrument`, or let :meth:`ranklens.Recorder.evaluate` match queries by text.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from haystack.tracing.tracer import Tracer, enable_tracing
from haystack.tracing.tracer import tracer as haystack_tracer

from ranklens.capture import Instrumentation, LightHit, Recorder, recorder_or_new
from ranklens.declared import declare, flag, mapping, names

from .adapter import to_light
from .stages import (
    ComponentRun,
    PipelineCall,
    StageTracer,
    is_retriever,
    stage_records,
    trace_ids,
)

__all__ = ["RanklensTracer", "instrument", "trace_ids"]


def _same(light: LightHit, needs: frozenset[str]) -> LightHit:
    """The converter of hits a tracer already copied as light tuples."""
    return light


class RanklensTracer(StageTracer):
    """A Haystack tracer that records retrievals into ``recorder`` and delegates to
    ``inner`` (the tracer that was active); see the module docstring."""

    def __init__(
        self,
        recorder: Recorder,
        inner: Tracer,
        components: Collection[str] | None = None,
        query_ids: Mapping[str, str] | None = None,
        stages: bool = True,
    ):
        needs = recorder.needs
        super().__init__(inner, lambda doc: to_light(doc, needs))
        self.recorder = recorder
        self.components = components
        self.query_ids = dict(query_ids or {})
        self.staged = stages

    def finished(self, call: PipelineCall) -> None:
        if not self.staged:
            for run in call.ordered():
                self.alone(run, warn=False)
            return
        runs = call.stages(self.components)
        if not runs:
            return
        query = call.query()
        if query is None:  # an indexing pipeline, unless a retriever ran without a query
            if any(is_retriever(r.type) for r in runs):
                names = ", ".join(r.stage for r in runs)
                self.warn_once(
                    "query", names,
                    f"a Haystack pipeline call returned documents ({names}) but no component "
                    "took a text 'query' or 'text' input: not recorded. Give the retriever "
                    "its query through a 'query' input, or record the call yourself with "
                    "Recorder.record(query, hits, stages=[...])",
                )  # fmt: skip
            return
        last = runs[-1]
        # a stage's exception fails the retrieval; one of a later component (a generator)
        # does not: the retrieval itself was made
        error = next((r.error for r in runs if r.error is not None), None)
        start = min(r.started for r in runs)
        end = max(r.started + r.latency_ms / 1000 for r in runs)
        self.recorder.record(
            query, last.hits or () if error is None else (),
            query_id=self.query_ids.get(query), latency_ms=(end - start) * 1000,
            error=error, source=last.stage, trace_id=last.span_id,
            parent_trace_id=last.trace_id, convert=_same, stages=stage_records(runs),
        )  # fmt: skip

    def alone(self, run: ComponentRun, warn: bool = True) -> None:
        query = run.inputs.get("query")
        if not isinstance(query, str) or (run.hits is None and run.error is None):
            return  # not a retrieval
        if self.components is not None and run.name not in self.components:
            return
        if warn and self.staged:
            self.warn_once(
                "alone", run.name,
                f"component {run.name!r} returned documents outside any pipeline run the "
                "tracer saw (instrument() was called during the run, or the component was run "
                "by code of its own): recorded as a retrieval without stages. Call "
                "instrument() before Pipeline.run, or record the stages yourself with "
                "Recorder.record(query, hits, stages=[...])",
            )  # fmt: skip
        self.recorder.record(
            query, run.hits or () if run.error is None else (),
            query_id=self.query_ids.get(query),
            latency_ms=run.latency_ms if math.isfinite(run.latency_ms) else math.nan,
            error=run.error, source=run.name, trace_id=run.span_id,
            parent_trace_id=run.trace_id, convert=_same,
        )  # fmt: skip


INSTRUMENT = declare("ranklens_haystack.instrument", {
    "components": names(None, "the components to watch (None: every component that "
                        "returns Documents)", none=True),
    "query_ids": mapping(None, "query text -> query id", none=True, empty=True),
    "stages": flag(True, "record each pipeline call as one retrieval with its stages "
                   "(False: each retrieving component as a retrieval of its own)"),
}, register=False)  # fmt: skip


@INSTRUMENT.checks
def instrument(
    recorder: Recorder | None = None,
    *,
    components: Collection[str] | None = None,
    query_ids: Mapping[str, str] | None = None,
    stages: bool = True,
    **recorder_kwargs: Any,
) -> Instrumentation:
    """Record every retrieval that Haystack pipelines run from now on, stage by stage::

        with instrument(Recorder(key="meta.file_id")) as rec:
            pipeline.run({"retriever": {"query": question}})
        rec.evaluate(dataset, ["ndcg@10"])
        rec.staged()  # each stage as a run: ranklens.StagedRun

    ``components``: the components to watch (default: every component that returns
    Documents). ``query_ids``: query text → id. ``stages``: see the module docstring.
    """
    rec = recorder_or_new(recorder, **recorder_kwargs)
    previous = haystack_tracer.actual_tracer
    tracer = RanklensTracer(rec, previous, components, query_ids, stages)
    enable_tracing(tracer)

    def detach() -> None:
        if haystack_tracer.actual_tracer is tracer:
            haystack_tracer.actual_tracer = previous

    return Instrumentation(rec, detach, tracer=tracer, previous=previous)
