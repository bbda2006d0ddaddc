"""Matching captured retrievals to labelled queries: by query id, else by normalised text
(:func:`~ranklens.capture.hits.normalise_text`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import InputError, RanklensWarning
from ..evaluation import Evaluation
from ..model import Run
from .hits import key_name, normalise_text
from .records import Retrieval


def label_matcher(
    labelled: Mapping[str, str] | None, match: str = "auto", ids: Any = None
) -> Callable[[str | None, str], str | None]:
    """``lookup(query_id, query_text) -> label query id or None``. ``match="id"``: the
    record's query id (when labelled texts or ``ids`` are known, only ids among them);
    ``"text"``: the labelled query whose normalised text equals the record's; ``"auto"``:
    by id, else by text."""
    if match not in ("id", "text", "auto"):
        raise InputError(f"match must be 'id', 'text' or 'auto', got {match!r}")
    if match == "text" and labelled is None:
        raise InputError("matching by text needs a Dataset (query texts), not bare qrels")
    by_text: dict[str, str] = {}
    known = None if labelled is None and ids is None else set(labelled or ()) | set(ids or ())
    if labelled is not None:
        for qid, text in labelled.items():
            by_text.setdefault(normalise_text(text), qid)

    def lookup(query_id: str | None, query: str) -> str | None:
        if match != "text" and query_id is not None and (known is None or query_id in known):
            return query_id
        if match != "id" and by_text:
            return by_text.get(normalise_text(query))
        return None

    return lookup


def match_records(
    records: Iterable[Retrieval], labelled: Mapping[str, str] | None, match: str
) -> tuple[dict[str, Retrieval], dict[str, int]]:
    """``{label query id: first successful retrieval}`` and counts (``unmatched``,
    ``repeats``, ``failed``), records matched by :func:`label_matcher`."""
    lookup = label_matcher(labelled, match)
    out: dict[str, Retrieval] = {}
    counts = {"unmatched": 0, "repeats": 0, "failed": 0}
    for rec in records:
        qid = lookup(rec.query_id, rec.query)
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
) -> tuple[Run, dict[str, int], dict[str, Retrieval]]:
    """The matched retrievals as a :class:`~ranklens.Run`, with the matching counts and
    the matched records (``{label query id: record}``)."""
    matched, counts = match_records(records, getattr(labels, "queries", None), match)
    run = Run.from_dict({q: r.doc_ids for q, r in matched.items()}, name=name)
    return run, {**counts, "matched": len(matched)}, matched


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


LOW_MATCH = 0.05
"""Below this share of retrieved ids with a label, other keys are tried (:func:`suggest_key`)."""


def suggest_key(
    records: Mapping[str, Retrieval], labels: Mapping[str, Mapping[str, Any]], current: Any
) -> tuple[str, int, int] | None:
    """When (almost) no hit id has a label, the key that would match more:
    ``(key, hits it matches, hits the current key matches)``, or None.

    Tries ``"id"``, ``"parent"`` and each top-level metadata field on the raw hits of the
    matched records (``{label query id: record}``) against ``labels`` (``{query: {doc:
    grade}}``)."""
    tally: dict[str, int] = {}
    total = 0
    for qid, rec in records.items():
        wanted = labels.get(qid)
        if not wanted or not rec.ok:
            continue
        for hit in rec.hits:
            total += 1
            values = {"id": hit.get("id"), "parent": hit.get("parent")}
            for field, v in (hit.get("metadata") or {}).items():
                if isinstance(v, (str, int)) and not isinstance(v, bool):
                    values[f"meta.{field}"] = v
            for key, v in values.items():
                if v is not None and str(v) in wanted:
                    tally[key] = tally.get(key, 0) + 1
    now = key_name(current)
    have = tally.get(now, 0)
    if not total or have > LOW_MATCH * total or not tally:
        return None
    best = max(tally, key=lambda k: tally[k])
    if best == now or tally[best] < max(2 * have + 1, LOW_MATCH * total):
        return None
    return best, tally[best], have


def warn_if_wrong_key(ev: Evaluation, records: dict[str, Retrieval], qrels: Any, key: Any) -> None:
    """Warn, naming the ``key=`` that would fix it, when (almost) no retrieved id has a
    label but the hits' parents or a metadata field would match (chunk or node ids scored
    against document labels give all zeros)."""
    c = ev.counts
    if not c["hits_retrieved"] or c["hits_labelled"] > LOW_MATCH * c["hits_retrieved"]:
        return
    found = suggest_key(records, qrels.to_dict(), key or "id")
    if found is not None:
        best, n, have = found
        warnings.warn(
            f"only {have} of {c['hits_retrieved']} retrieved ids have a label, but key="
            f"{best!r} would match {n} hits: pass key={best!r} (chunk or node ids against "
            "document labels; see docs/hit-identity.md)",
            RanklensWarning,
            stacklevel=3,
        )
