"""One record type for one retrieval, whoever made it: the runner (one per labelled query)
and the :class:`~ranklens.Recorder` (one per retrieval a live app made)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from typing import Any


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
      (the run or trace it belongs to), ``source`` (which hook) and ``started`` (wall time).
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
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Retrieval:
        """A record from :meth:`to_dict` or a log line (``type`` and unknown keys ignored;
        a record without ``query_id`` and ``query`` is a ``TypeError``)."""
        known = _FIELDS
        return cls(**{k: v for k, v in data.items() if k in known})


_ORDER = tuple(f.name for f in fields(Retrieval))
_FIELDS = frozenset(_ORDER)
