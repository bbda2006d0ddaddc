"""Runs of chunks from captured retrievals: every hit a retriever returned (not only the
first of each document), with its source document and character range, for span labels
(:func:`chunk_run`; ``RunResult.chunk_run()``, ``Recorder.chunk_run()``).

A chunk's source document is what ``key`` names (``"parent"``, ``"meta.doc_id"``, a
function); under the default key ``"id"``, its parent when the hit has one, else its own
id. The chunks keep the retriever's order (ranks as returned).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from ..model import Run
from .hits import Hit, KeyLike, key_function
from .records import Retrieval


def chunk_run(records: Iterable[tuple[str, Retrieval]], key: KeyLike, name: str) -> Run:
    """The chunks of ``records`` (``(label query id, record)`` pairs) as a run of chunks;
    failed retrievals are recorded as the run's failures."""
    doc_of = _source(key)
    chunks: dict[str, list[dict[str, Any]]] = {}
    failures: dict[str, dict[str, Any]] = {}
    for qid, rec in records:
        if not rec.ok:
            failures[qid] = dict(rec.error or {})
            continue
        rows = []
        for j, raw in enumerate(rec.hits or []):
            hit = Hit.from_json(raw)
            rows.append({
                "id": hit.id if hit.id is not None else f"{qid}#{j}",
                "doc_id": doc_of(hit),
                "start": hit.start,
                "end": hit.end,
                "text": hit.text,
                "chars": _chars(raw.get("chars"), qid, j),
            })  # fmt: skip
        chunks[qid] = rows
    run = Run.from_chunks(chunks, name=name, ranked=True)
    run.failures = failures
    return run


def _source(key: KeyLike) -> Any:
    """A chunk's source document under ``key`` (see the module docstring)."""
    if key == "id":
        return lambda h: h.parent if h.parent is not None else h.id
    fn = key_function(key)
    return fn


def _chars(value: Any, qid: str, j: int) -> int | None:
    """A hit's recorded length (None when absent), or an error naming the query and hit."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        ok = False
    else:
        ok = float(value).is_integer() and value >= 0
    if not ok:
        raise InputError(
            f"hit {j} of query {qid!r}: its recorded length 'chars' must be a whole number "
            f">= 0, got {value!r}"
        )
    return int(value)
