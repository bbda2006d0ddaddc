"""Haystack components: ``RanklensRecorder`` (a pass-through that records the documents a
retriever forwards) and ``RanklensEvaluator`` (Haystack's evaluator contract backed by any
ranklens metric and convention)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from haystack import Document, component, default_to_dict
from haystack.tracing.tracer import tracer as haystack_tracer

from ranklens import evaluate, get_convention, parse_metric
from ranklens.capture import Hit, Recorder, key_function
from ranklens.errors import InputError

from .adapter import to_hit, to_light
from .hooks import trace_ids


@component
class RanklensRecorder:
    """Sits after a retriever: records ``documents`` (with the ``query`` text and an
    optional ``query_id``, both optional pipeline inputs) and forwards them unchanged.

    It sees no start of the retrieval, so latency is not recorded here; errors of the
    retriever stop the pipeline before it (Haystack raises ``PipelineRuntimeError``).
    """

    def __init__(self, key: str = "id", recorder: Recorder | None = None):
        self.key = key
        self.recorder = recorder if recorder is not None else Recorder(key=key)

    def _record(
        self, documents: list[Document], query: str | None, query_id: str | None
    ) -> dict[str, list[Document]]:
        # With a tracer on, this component's span and the pipeline run's trace.
        span_id, trace_id = trace_ids(haystack_tracer.current_span())
        self.recorder.record(
            query or "", documents, query_id=query_id, source="haystack",
            trace_id=span_id, parent_trace_id=trace_id, convert=to_light,
        )  # fmt: skip
        return {"documents": documents}

    @component.output_types(documents=list[Document])
    def run(
        self, documents: list[Document], query: str | None = None, query_id: str | None = None
    ) -> dict[str, list[Document]]:
        return self._record(documents, query, query_id)

    @component.output_types(documents=list[Document])
    async def run_async(
        self, documents: list[Document], query: str | None = None, query_id: str | None = None
    ) -> dict[str, list[Document]]:
        return self._record(documents, query, query_id)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, key=self.key)


@component
class RanklensEvaluator:
    """Haystack's evaluator contract (``run(ground_truth_documents,
    retrieved_documents) -> {"score", "individual_scores"}``) for any ranklens metric
    (``"ndcg@10"``, ``"mrr"``, ``"P(rel=2)@5"``...) under any convention.

    ``document_comparison_field``: ``"id"``, ``"content"`` or ``"meta.<key>"`` (nested with
    dots), as Haystack's own evaluators. Ground-truth ``Document.score`` is the graded
    label (1 when None; it must be a whole number). Under ``convention="haystack"`` it is
    what Haystack makes of it: nDCG's gain, while every other metric counts each
    ground-truth document as relevant whatever its score (0 included), as Haystack's MRR,
    MAP and recall evaluators look only at presence. A document retrieved twice counts once
    (``duplicates="first"``) unless the convention says otherwise. A query without ground
    truth scores 0, as in Haystack.
    """

    def __init__(
        self,
        metric: str = "ndcg@10",
        convention: str = "trec",
        document_comparison_field: str = "id",
        relevance_level: int = 1,
    ):
        self.metric = metric
        self._metric = parse_metric(metric)
        self.convention = convention
        conv = get_convention(convention)
        self._convention = conv.with_(duplicates="first") if conv.duplicates == "error" else conv
        self.document_comparison_field = document_comparison_field
        field = document_comparison_field
        self._key: Callable[[Hit], str | None]
        if field == "content":
            self._key = lambda h: h.text
        elif field == "id" or field.startswith("meta."):
            self._key = key_function(field)
        else:
            raise InputError(
                f"document_comparison_field must be 'id', 'content' or 'meta.<key>', got {field!r}"
            )
        self.relevance_level = relevance_level
        # Haystack grades only nDCG by the ground truth's score
        self._presence = convention == "haystack" and self._metric.family != "ndcg"

    def _ids(self, docs: list[Document], i: int, side: str) -> list[str]:
        out = []
        for j, d in enumerate(docs):
            v = self._key(to_hit(d))
            if v is None:
                raise InputError(
                    f"{side}[{i}][{j}]: document {d.id!r} has no {self.document_comparison_field!r}"
                )
            out.append(v)
        return out

    @component.output_types(score=float, individual_scores=list[float])
    def run(
        self,
        ground_truth_documents: list[list[Document]],
        retrieved_documents: list[list[Document]],
    ) -> dict[str, Any]:
        if len(ground_truth_documents) != len(retrieved_documents):
            raise ValueError(
                f"ground_truth_documents has {len(ground_truth_documents)} lists and "
                f"retrieved_documents {len(retrieved_documents)}: they must pair up"
            )
        qrels: dict[str, dict[str, int]] = {}
        run: dict[str, list[str]] = {}
        for i, (gt, ret) in enumerate(zip(ground_truth_documents, retrieved_documents)):
            labels: dict[str, int] = {}
            for doc, key in zip(gt, self._ids(gt, i, "ground_truth_documents")):
                grade = 1 if doc.score is None else doc.score
                if not float(grade).is_integer():
                    raise InputError(
                        f"ground_truth_documents[{i}]: document {doc.id!r} has score "
                        f"{doc.score!r}; ranklens grades are whole numbers"
                    )
                if self._presence:  # Haystack: a ground-truth document is relevant
                    grade = max(int(grade), self.relevance_level)
                labels[key] = max(labels.get(key, 0), int(grade))
            if labels:
                qrels[str(i)] = labels
            run[str(i)] = self._ids(ret, i, "retrieved_documents")
        scores = [0.0] * len(run)
        if qrels:
            ev = evaluate(
                qrels, run, [self._metric], convention=self._convention,
                relevance_level=self.relevance_level,
            )  # fmt: skip
            for q, v in zip(ev.query_ids, ev.per_query[self._metric.name]):
                scores[int(q)] = float(v)
        score = sum(scores) / len(scores) if scores else 0.0
        return {"score": score if math.isfinite(score) else 0.0, "individual_scores": scores}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self, metric=self.metric, convention=self.convention,
            document_comparison_field=self.document_comparison_field,
            relevance_level=self.relevance_level,
        )  # fmt: skip
