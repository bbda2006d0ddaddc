"""The filters of :func:`ranklens.synthesize`, each setting a row's status and detail:
duplicates, near-duplicates, questions that copy their passage, and (with a retriever)
questions many passages answer."""

from __future__ import annotations

import json
import warnings
from typing import Any

from ..errors import RunFailuresWarning
from ..settings import Calling
from .provenance import ProvenanceRow
from .text import containment_pairs, near_duplicates, normalise, words


def apply_filters(
    rows: list[ProvenanceRow],
    texts: dict[str, str],
    max_overlap: float | None,
    near: float,
) -> list[ProvenanceRow]:
    """Mark duplicates, near-duplicates and copies among the rows still kept (in that
    order); every candidate's overlap with its passage is recorded."""
    cands = [r for r in rows if r.query is not None]
    passage = [texts[json.dumps([r.doc_id, *r.passage])] for r in cands]
    overlap = containment_pairs([r.query or "" for r in cands], passage)
    for r, o in zip(cands, overlap):
        r.overlap = round(float(o), 4)
    live = [r for r in cands if r.status == "kept"]
    first: dict[str, str] = {}
    for r in live:
        key = normalise(r.query or "")
        if key in first:
            r.status, r.detail = "duplicate", f"same as {first[key]}"
        else:
            first[key] = r.query_id or ""
    live = [r for r in live if r.status == "kept"]
    for i, j in near_duplicates([r.query or "" for r in live], near):
        a, b = live[i], live[j]
        if a.status == "kept" and b.status == "kept":
            b.status, b.detail = "near_duplicate", f"near {a.query_id}"
    if max_overlap is not None:
        for r in live:
            if r.status == "kept" and r.overlap is not None and r.overlap > max_overlap:
                r.status = "copies_passage"
                r.detail = f"{r.overlap:.0%} of its word bigrams are in its passage"
    return rows


def ambiguous_filter(
    rows: list[ProvenanceRow],
    retriever: Any,
    docs: dict[str, dict[str, Any]],
    depth: int,
    max_answerable: int,
    calls: Calling,
) -> None:
    """Drop kept questions for which at least ``max_answerable`` passages other than the
    source, among the retriever's top ``depth``, hold as large a share of the question's
    words as the source does (they could answer it as well): the retriever is called with
    ``calls.concurrency`` queries in flight. A question the retriever failed on is kept
    and its row says so."""
    from ..capture import run_retriever

    live = {r.query_id: r for r in rows if r.status == "kept" and r.query_id}
    if not live:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunFailuresWarning)
        result = run_retriever(
            retriever,
            {q: r.query or "" for q, r in live.items()},
            k=depth,
            calls=Calling(concurrency=calls.concurrency, progress=False),
            name="ambiguity",
        )
    for rec in result.records:
        row = live[str(rec.query_id)]
        if not rec.ok:
            row.extra["ambiguity"] = f"retriever failed: {(rec.error or {}).get('type')}"
            continue
        qw = set(words(row.query or ""))
        if not qw:
            continue

        own = _share(qw, docs, row.doc_id)
        rivals = [d for d in rec.doc_ids if d != row.doc_id and _share(qw, docs, d) >= own]
        row.extra["answerable_elsewhere"] = len(rivals)
        if len(rivals) >= max_answerable:
            row.status = "ambiguous"
            row.detail = f"{len(rivals)} other passages hold its words as well: {rivals[:3]}"


def _share(qw: set[str], docs: dict[str, dict[str, Any]], doc: str) -> float:
    """The share of the question's words ``qw`` found in a document."""
    return len(qw & set(words(docs.get(doc, {}).get("text", "")))) / len(qw)
