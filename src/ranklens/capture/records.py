"""One record type for one retrieval, whoever made it: the runner (one per labelled query)
and the :class:`~ranklens.Recorder` (one per retrieval a live app made); and one for each
stage of a pipeline that made it (:class:`Stage`, kept in ``Retrieval.stages``)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from typing import Any

from ..declared import (
    NONNEGATIVE,
    Declared,
    ParameterError,
    UnknownParameterError,
    count,
    data,
    declare,
    text,
)
from ..errors import closest

STAGE = declare("Stage", {
    "name": text(None, "the stage's name in its pipeline ('bm25', 'rerank', 'context')"),
    "doc_ids": data("the stage's ranking in the labels' id space (filled by the key)"),
    "scores": data("the score of each of doc_ids (None where none was given)"),
    "hits": data("the stage's hits: given, any hit form the runner takes; recorded, each "
                 "hit's record as Retrieval.hits keeps it"),
    "latency_ms": data("wall milliseconds of the stage's call (NaN: not measured)"),
    "error": data("{'type', 'message'} when the stage failed, else None"),
    "kind": text(None, "what the stage is: 'retriever', 'fusion', 'reranker', 'filter', "
                 "'postprocessor', 'packer', ...", none=True),
    "duplicates": count(0, NONNEGATIVE, "hits dropped as repeats of a document already ranked"),
    "unmapped": count(0, NONNEGATIVE, "hits with no value for the key"),
})  # fmt: skip


@dataclass
class Stage:
    """One stage's output for one query: ``name`` (``"bm25"``, ``"rerank"``...),
    ``doc_ids``/``scores`` (its ranking in the labels' id space, mapped by the runner's or
    the recorder's ``key`` as ``Retrieval.doc_ids`` is; repeats and unmapped hits
    dropped and counted in ``duplicates``/``unmapped``), ``hits`` (its chunk-level hits, as
    ``Retrieval.hits`` keeps them: text, ``start``/``end``, metadata), ``latency_ms``
    (wall time of the stage's call; NaN when not measured), ``error`` (``{"type",
    "message"}`` when the stage failed) and ``kind`` (what the stage is, when known:
    ``"retriever"``, ``"fusion"``, ``"reranker"``, ``"filter"``, ``"postprocessor"``,
    ``"packer"``).

    A hook or an adapter hands stages over before they are mapped: ``Stage("rerank",
    hits=nodes, latency_ms=3.2, kind="reranker")`` with ``hits`` in any form the runner
    takes (:class:`~ranklens.Hit`, ids, ``(id, score)`` pairs, dicts); the runner and the
    recorder fill ``doc_ids``, ``scores`` and the hits' records with their ``key``
    (:mod:`ranklens.capture.stages`). A stage handed over with ``doc_ids`` is taken as
    already mapped: its ``doc_ids`` (in the labels' id space), ``scores`` (None for each
    when not given) and counts are kept as they are, its hits (if any) recorded beside
    them. ``scores`` of another length than ``doc_ids`` is an error naming the stage."""

    name: str
    doc_ids: list[str] = field(default_factory=list)
    scores: list[float | None] = field(default_factory=list)
    hits: list[Any] = field(default_factory=list)
    latency_ms: float = math.nan
    error: dict[str, str] | None = None
    kind: str | None = None
    duplicates: int = 0
    unmapped: int = 0

    def __post_init__(self) -> None:
        # a stage is made per stage and query: the usual types cost a few tests only
        if type(self.name) is not str or not self.name.strip():
            self.name = STAGE.value("name", self.name)
        if self.kind is not None and (type(self.kind) is not str or not self.kind.strip()):
            self.kind = STAGE.value("kind", self.kind)
        lat = self.latency_ms
        if type(lat) is not float or lat < 0:
            if isinstance(lat, bool) or not isinstance(lat, (int, float)) or lat < 0:
                raise ParameterError(
                    f"Stage: latency_ms must be a number >= 0 or NaN (wall milliseconds of "
                    f"the stage's call), got {lat!r:.80}"
                )
            self.latency_ms = float(lat)
        if self.error is not None and not isinstance(self.error, dict):
            raise ParameterError(
                f"Stage: error must be None or {{'type', 'message'}}, got {self.error!r:.80}"
            )
        for name in ("doc_ids", "scores", "hits"):
            value = getattr(self, name)
            if type(value) is not list:
                if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
                    raise ParameterError(
                        f"Stage {self.name!r}: {name} must be a list, got {type(value).__name__}"
                    )
                setattr(self, name, list(value))
        d, u = self.duplicates, self.unmapped
        if type(d) is not int or type(u) is not int or d < 0 or u < 0:
            self.duplicates = STAGE.value("duplicates", d)
            self.unmapped = STAGE.value("unmapped", u)
        if self.scores and len(self.scores) != len(self.doc_ids):
            raise ParameterError(
                f"Stage {self.name!r}: {len(self.scores)} scores for {len(self.doc_ids)} "
                "doc_ids; give one score per document (None where there is none), or none"
            )

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (the lists and each hit's record copied; latency to
        1 µs)."""
        d = {name: getattr(self, name) for name in _STAGE_ORDER}
        d["doc_ids"], d["scores"] = list(self.doc_ids), list(self.scores)
        d["hits"] = [dict(h) if isinstance(h, dict) else h for h in self.hits]
        if self.error is not None:
            d["error"] = dict(self.error)
        if math.isfinite(self.latency_ms):
            d["latency_ms"] = round(self.latency_ms, 3)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Stage:
        """A stage from :meth:`to_dict` (unknown keys ignored; no ``name``: a ``TypeError``;
        a ``latency_ms`` of None, as JSON writes NaN elsewhere, is NaN)."""
        known = {k: v for k, v in data.items() if k in _STAGE_FIELDS}
        if known.get("latency_ms", 0) is None:
            known["latency_ms"] = math.nan
        return cls(**known)


def naming_keywords(cls: type, table: Declared) -> None:
    """Wrap ``cls.__init__`` (made per stage or per query: no check in the common case)
    so that a keyword it does not take is refused naming the closest, as ``@table.checks``
    would, and make ``table`` the class's declaration (checked by the class itself)."""
    made = vars(cls)["__init__"]

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            made(self, *args, **kwargs)
        except TypeError:
            known = list(table.options)
            for key in kwargs:
                if key not in known:
                    near = closest(key, known)
                    raise UnknownParameterError(
                        f"{table.where}: no parameter {key!r}"
                        + (f"; did you mean {near!r}?" if near else "")
                        + f" (it takes: {', '.join(known)})"
                    ) from None
            raise

    init.__wrapped__ = made  # type: ignore[attr-defined]  # its signature
    cls.__init__ = init  # type: ignore[misc]
    table.target = cls
    cls.__declared__ = table  # type: ignore[attr-defined]


naming_keywords(Stage, STAGE)
_STAGE_ORDER = tuple(f.name for f in fields(Stage))
_STAGE_FIELDS = frozenset(_STAGE_ORDER)


@dataclass
class Retrieval:
    """What happened to one retrieval.

    * ``query_id`` (None when a live app gave none), ``query`` (the text);
    * ``doc_ids``/``scores``: the ranking in the labels' id space (after the key mapped
      each hit; :mod:`ranklens.capture.hits`), ``hits``: the raw chunk-level hits;
    * ``latency_ms`` (wall time of the answering call), ``cpu_ms`` (its thread's CPU
      time, for a sync retriever run by the runner), ``attempts`` (the runner retries),
      ``error`` (``{"type", "message"}`` or None), ``duplicates``/``unmapped``: hits
      dropped by the mapping;
    * from live capture: ``trace_id`` (the framework's id for this retrieval: LlamaIndex's
      retrieve span, LangChain's ``run_id``, the Haystack component span), ``parent_trace_id``
      (the run or trace it belongs to), ``source`` (which hook) and ``started`` (wall time);
    * ``stages``: for a pipeline, each stage's output in pipeline order (:class:`Stage`;
      None when the retriever is one call). The record's own ranking is the pipeline's
      final output.
    """

    query_id: str | None
    query: str
    doc_ids: list[str] = field(default_factory=list)
    scores: list[float | None] = field(default_factory=list)
    hits: list[dict[str, Any]] = field(default_factory=list)
    latency_ms: float = math.nan
    attempts: int = 1
    error: dict[str, str] | None = None
    duplicates: int = 0
    unmapped: int = 0
    trace_id: str | None = None
    parent_trace_id: str | None = None
    source: str | None = None
    started: float = 0.0
    cpu_ms: float | None = None
    stages: list[Stage] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (equal to ``dataclasses.asdict``; the lists and each hit's
        record copied, the values inside them shared: a deep copy was a quarter of the
        runner's CPU on fast retrievers)."""
        d = {name: getattr(self, name) for name in _ORDER}
        d["doc_ids"], d["scores"] = list(self.doc_ids), list(self.scores)
        d["hits"] = [dict(h) for h in self.hits]
        if self.error is not None:
            d["error"] = dict(self.error)
        if self.stages is not None:
            d["stages"] = [st.to_dict() for st in self.stages]
        return d

    def to_json(self) -> str:
        """One line of a run log or spill file (``"type": "query"``; latency to 1 µs)."""
        data = {"type": "query", **self.to_dict()}
        if isinstance(self.latency_ms, float) and math.isfinite(self.latency_ms):
            data["latency_ms"] = round(self.latency_ms, 3)
        if self.cpu_ms is None:
            data.pop("cpu_ms")
        else:
            data["cpu_ms"] = round(self.cpu_ms, 3)
        if self.stages is None:  # a log of one-call retrievals reads as before
            data.pop("stages")
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Retrieval:
        """A record from :meth:`to_dict` or a log line (``type`` and unknown keys ignored;
        a record without ``query_id`` and ``query`` is a ``TypeError``; ``stages`` read as
        :class:`Stage` records)."""
        known = _FIELDS
        out = cls(**{k: v for k, v in data.items() if k in known})
        if out.stages is not None:
            out.stages = [st if isinstance(st, Stage) else Stage.from_dict(st) for st in out.stages]
        return out


_ORDER = tuple(f.name for f in fields(Retrieval))
_FIELDS = frozenset(_ORDER)
