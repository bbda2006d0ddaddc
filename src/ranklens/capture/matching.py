"""Matching captured retrievals to labelled queries: by query id, else by normalised text
(:func:`~ranklens.capture.hits.normalise_text`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InputError
from ..model import Run
from .hits import normalise_text
from .records import Retrieval


def match_records(
    records: Iterable[Retrieval], labelled: Mapping[str, str] | None, match: str
) -> tuple[dict[str, Retrieval], dict[str, int]]:
    """``{label query id: first successful retrieval}`` and counts (``unmatched``,
    ``repeats``, ``failed``). ``match="id"``: the record's query id (when labelled texts are
    known, only ids among them); ``"text"``: the labelled query whose normalised text equals
    the record's; ``"auto"``: by id, else by text."""
    if match not in ("id", "text", "auto"):
        raise InputError(f"match must be 'id', 'text' or 'auto', got {match!r}")
    if match == "text" and labelled is None:
        raise InputError("matching by text needs a Dataset (query texts), not bare qrels")
    by_text: dict[str, str] = {}
    if labelled is not None:
        for qid, text in labelled.items():
            by_text.setdefault(normalise_text(text), qid)
    out: dict[str, Retrieval] = {}
    counts = {"unmatched": 0, "repeats": 0, "failed": 0}
    for rec in records:
        qid = None
        known = rec.query_id is not None and (labelled is None or rec.query_id in labelled)
        if match != "text" and known:
            qid = rec.query_id
        if qid is None and match != "id" and labelled is not None:
            qid = by_text.get(normalise_text(rec.query))
        if qid is None:
            counts["unmatched"] += 1
        elif not rec.ok:
            counts["failed"] += 1
        elif qid in out:
            counts["repeats"] += 1
        else:
            out[qid] = rec
    return out, counts


def recorded_run(
    records: Iterable[Retrieval], labels: Any, match: str, name: str
) -> tuple[Run, dict[str, int]]:
    """The matched retrievals as a :class:`~ranklens.Run`, with the matching counts."""
    matched, counts = match_records(records, getattr(labels, "queries", None), match)
    run = Run.from_dict({q: r.doc_ids for q, r in matched.items()}, name=name)
    return run, {**counts, "matched": len(matched)}


def no_match_message(call: str, counts: dict[str, int], labels: Any, match: str = "auto") -> str:
    """Why no recorded retrieval could be keyed to a labelled query, and how to pass ids."""
    total = counts.get("unmatched", 0) + counts.get("failed", 0) + counts.get("repeats", 0)
    by_text = labels is not None and hasattr(labels, "queries") and match != "id"
    how = (
        "none matches a labelled query by id or by text"
        if by_text
        else "none carries a query id of the labels"
        if labels is not None
        else "they carry no query id"
    )
    return (
        f"{call}: {total} recorded retrievals, but {how} ({counts}). Pass ids "
        "(record(..., query_id=), the hooks' query_id tag: LlamaIndex "
        "instrument_tags({'query_id': ...}), LangChain metadata={'query_id': ...}, "
        "Haystack's recorder input) or a Dataset: to_run(dataset) and evaluate(dataset) "
        "match by normalised text"
    )
