"""Matching captured retrievals to labelled queries: by query id, else by normalised text
(:func:`~ranklens.capture.hits.normalise_text`)."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ..errors import InputError, RanklensWarning
from ..evaluation import Evaluation
from ..io import coerce_qrels
from ..model import Run
from .hits import key_name, normalise_text
from .records import Retrieval


def label_matcher(
    labelled: Mapping[str, str] | None,
    match: str = "auto",
    ids: Collection[str] | None = None,
    with_labels: Collection[str] | None = None,
) -> Callable[[str | None, str], list[str]]:
    """``lookup(query_id, query_text) -> [label query ids]`` (empty when none matches).
    ``match="id"``: the record's query id (when labelled texts or ``ids`` are known, only
    ids among them); ``"text"``: the queries whose normalised text equals the record's;
    ``"auto"``: by id, else by text.

    Several queries of a dataset may share one text (SciFact has such pairs): a text then
    names each of them that has labels (``with_labels``, else ``ids``; all of them when
    none has), since the same text retrieves the same documents."""
    if match not in ("id", "text", "auto"):
        raise InputError(f"match must be 'id', 'text' or 'auto', got {match!r}")
    if match == "text" and labelled is None:
        raise InputError("matching by text needs a Dataset (query texts), not bare qrels")
    known = None if labelled is None and ids is None else set(labelled or ()) | set(ids or ())
    by_text: dict[str, list[str]] = {}
    for qid, text in (labelled or {}).items():
        by_text.setdefault(normalise_text(text), []).append(qid)
    prefer = with_labels if with_labels is not None else ids
    if prefer is not None:
        have = set(map(str, prefer))
        for text, qids in by_text.items():
            by_text[text] = [q for q in qids if q in have] or qids

    def lookup(query_id: str | None, query: str) -> list[str]:
        if match != "text" and query_id is not None and (known is None or query_id in known):
            return [str(query_id)]
        if match != "id" and by_text:
            return by_text.get(normalise_text(query), [])
        return []

    return lookup


def match_records(
    records: Iterable[Retrieval],
    labelled: Mapping[str, str] | None,
    match: str,
    with_labels: Collection[str] | None = None,
) -> tuple[dict[str, Retrieval], dict[str, int]]:
    """``{label query id: first successful retrieval}`` and counts (``unmatched``,
    ``repeats``, ``failed``, ``ambiguous``, ``shared_text``), records matched by
    :func:`label_matcher`. A record whose text several labelled queries share answers each
    of them and is counted in ``ambiguous``, so no labelled query is dropped unseen; one
    matched by a text that unlabelled queries share too is counted in ``shared_text``."""
    lookup = label_matcher(labelled, match, with_labels=with_labels)
    out: dict[str, Retrieval] = {}
    counts = {"unmatched": 0, "repeats": 0, "failed": 0, "ambiguous": 0}
    shared = Counter(map(normalise_text, (labelled or {}).values()))
    shared = Counter({t: n for t, n in shared.items() if n > 1})  # texts of several queries
    for rec in records:
        qids = lookup(rec.query_id, rec.query)
        if len(qids) > 1:
            counts["ambiguous"] += 1
        elif qids and shared and rec.query_id not in qids and shared[normalise_text(rec.query)]:
            # by a text an unlabelled query has too: counted (only when it happens) and said
            counts["shared_text"] = counts.get("shared_text", 0) + 1
        if not qids:
            counts["unmatched"] += 1
        elif not rec.ok:
            counts["failed"] += 1
        else:
            new = [q for q in qids if q not in out]
            if not new:
                counts["repeats"] += 1
            for q in new:
                out[q] = rec
    return out, counts


def recorded_run(
    records: Iterable[Retrieval], labels: Any, match: str, name: str
) -> tuple[Run, dict[str, int], dict[str, Retrieval]]:
    """The matched retrievals as a :class:`~ranklens.Run`, with the matching counts and
    the matched records (``{label query id: record}``). ``matched`` counts the queries the
    run answers, so it agrees with what an evaluation of the run sees."""
    qrels = getattr(labels, "qrels", None)
    with_labels = labelled_ids(qrels) if qrels is not None else None
    matched, counts = match_records(records, getattr(labels, "queries", None), match, with_labels)
    run = Run.from_dict({q: r.doc_ids for q, r in matched.items()}, name=name)
    return run, {**counts, "matched": len(matched)}, matched


def labelled_ids(qrels: Any) -> list[str]:
    """The queries ``qrels`` labels."""
    return [str(q) for q in qrels.query_ids]


def ambiguity_note(counts: Mapping[str, int]) -> str | None:
    """A sentence for the records whose text several dataset queries share, or None."""
    n = counts.get("ambiguous", 0)
    if not n:
        return None
    return (
        f"{n} recorded {'retrieval was' if n == 1 else 'retrievals were'} matched by a text "
        "that several dataset queries share; each answers every labelled query with that "
        "text (pass query ids to match exactly)"
    )


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
    labels = qrels.to_dict() if hasattr(qrels, "to_dict") else coerce_qrels(qrels).to_dict()
    found = suggest_key(records, labels, key or "id")
    if found is not None:
        best, n, have = found
        warnings.warn(
            f"only {have} of {c['hits_retrieved']} retrieved ids have a label, but key="
            f"{best!r} would match {n} hits: pass key={best!r} (chunk or node ids against "
            "document labels; see docs/hit-identity.md)",
            RanklensWarning,
            stacklevel=3,
        )


def matching_notes(counts: Mapping[str, int]) -> list[str]:
    """What matching recorded retrievals to labelled queries left out or shared, as
    phrases for an evaluation's notes (``matched`` agrees with the queries evaluated)."""

    def n(key: str, one: str, many: str) -> str:
        return f"{counts.get(key, 0):,} {one if counts.get(key, 0) == 1 else many}"

    notes = [n("matched", "labelled query", "labelled queries") + " matched by recorded retrievals"]
    if counts.get("evicted"):
        notes.append(n("evicted", "older retrieval", "older retrievals")
                     + " let go by the recorder (spill=False)")  # fmt: skip
    if counts.get("unmatched"):
        notes.append(n("unmatched", "recorded retrieval", "recorded retrievals")
                     + " matched no labelled query")  # fmt: skip
    if counts.get("failed"):
        notes.append(n("failed", "matched retrieval", "matched retrievals") + " had failed"
                     " (not scored)")  # fmt: skip
    if counts.get("repeats"):
        notes.append(n("repeats", "repeated retrieval", "repeated retrievals")
                     + " of a matched query (first kept)")  # fmt: skip
    ambiguous = ambiguity_note(counts)
    if ambiguous:
        notes.append(ambiguous)
    if counts.get("shared_text"):
        notes.append(
            n("shared_text", "recorded retrieval", "recorded retrievals") + " matched by a "
            "text that an unlabelled dataset query shares too: taken as the labelled query's"
        )
    return notes
