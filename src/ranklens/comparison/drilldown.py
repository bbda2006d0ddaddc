"""What each run retrieved, for the report's drill-down: every query's top k per run, the
query's labels, where each run ranked the labelled documents (at any depth), and a snippet
of each document shown, in one compact table the HTML report embeds once as JSON and
renders one query at a time.

Layout (``Report.metadata["drilldown"]``), lists aligned with ``query_ids``: ``depth``;
``docs`` (every document id shown, an index table); ``texts`` (``{doc index: snippet}`` for
the documents with a known text); ``labels[i]``: ``[[doc index, grade, group or None],
...]``; ``top[run][i]``: the doc indices of its top ``depth``; ``found[run][i]``: ``[[doc
index, rank], ...]`` for the labelled documents the run retrieved at any rank."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..model import Qrels, Run
from ..model import segments as seg
from ..model.ids import hash_strings

SNIPPET = 280
"""Characters of a document's text kept for the drill-down."""


def doc_table() -> tuple[list[str], Any]:
    """``(docs, at)``: the drill-down's table of documents, each kept once, and ``at(doc)``,
    its row (added on first sight), so each run and query holds indices into one table."""
    docs: list[str] = []
    index: dict[str, int] = {}

    def at(doc: str) -> int:
        i = index.get(doc)
        if i is None:
            i = index[doc] = len(docs)
            docs.append(doc)
        return i

    return docs, at


def snippet(text: Any) -> str | None:
    if text is None:
        return None
    s = " ".join(str(text).split())
    return s if len(s) <= SNIPPET else s[: SNIPPET - 1] + "…"


def corpus_text(entry: Any) -> str | None:
    """A corpus entry (a string or ``{"title", "text"}``) as one text."""
    if isinstance(entry, Mapping):
        parts = [str(entry[k]) for k in ("title", "text") if entry.get(k)]
        return " — ".join(parts) if parts else None
    return None if entry is None else str(entry)


def drilldown(
    qrels: Qrels,
    runs: Mapping[str, Run],
    query_ids: list[str],
    depth: int = 10,
    corpus: Mapping[str, Any] | None = None,
    hit_texts: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The drill-down table (see the module docstring) of ``runs`` on ``query_ids``."""
    docs, at = doc_table()

    wanted = set(query_ids)
    by_query: dict[str, list[list[Any]]] = {}
    groups = qrels.to_groups() if qrels.grouped else None
    grades = qrels.group_grades() if qrels.grouped else None
    for q, doc_grades in qrels.to_dict().items():
        if q not in wanted:
            continue
        if groups is not None and grades is not None:
            rows = [[at(d), g, gi] for gi, (ds, g) in enumerate(zip(groups[q], grades[q]))
                    for d in ds]  # fmt: skip
        else:
            rows = [[at(d), g, None] for d, g in doc_grades.items()]
        by_query[q] = rows
    labels = [by_query.get(q, []) for q in query_ids]
    qpos = {q: i for i, q in enumerate(query_ids)}
    lab_q = np.array([qpos[q] for q, rows in by_query.items() for _ in rows], dtype=np.int64)
    lab_docs = [docs[r[0]] for rows in by_query.values() for r in rows]
    lab_keys = _keys(lab_q, hash_strings(lab_docs) if lab_docs else np.zeros(0, np.uint64))
    labelled = set(zip(lab_q.tolist(), lab_docs))
    top: dict[str, list[list[int]]] = {}
    found: dict[str, list[list[list[int]]]] = {}
    for name, run in runs.items():
        top[name] = [[] for _ in query_ids]
        found[name] = [[] for _ in query_ids]
        order = run.order()
        to_pos = np.array([qpos.get(str(q), -1) for q in run.query_ids], dtype=np.int64)
        pos = to_pos[run.q[order]] if len(order) else np.zeros(0, np.int64)
        rank = seg.seg_running_count(run.q[order])
        shown = np.flatnonzero((rank <= depth) & (pos >= 0))
        for p, d in zip(pos[shown].tolist(), run.docs.strings(order[shown])):
            top[name][p].append(at(d))
        # labelled documents at any rank: 64-bit keys of (query, id hash), then the bytes
        keys = _keys(pos, run.docs.hashes()[order])
        maybe = np.flatnonzero(np.isin(keys, lab_keys) & (pos >= 0))
        for i, d in zip(maybe.tolist(), run.docs.strings(order[maybe])):
            if (int(pos[i]), d) in labelled:
                found[name][int(pos[i])].append([at(d), int(rank[i])])
    texts: dict[str, str] = {}
    for i, d in enumerate(docs):
        text = corpus_text(corpus.get(d)) if corpus else None
        if text is None and hit_texts:
            text = hit_texts.get(d)
        if text is not None:
            texts[str(i)] = snippet(text)  # type: ignore[assignment]
    return {"depth": depth, "docs": docs, "texts": texts, "labels": labels, "top": top,
            "found": found}  # fmt: skip


def _keys(pos: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """One 64-bit key per (query position, id hash); equal pairs give equal keys (a match
    is then confirmed on the id's text)."""
    with np.errstate(over="ignore"):
        keys: np.ndarray = hashes.astype(np.uint64) ^ (
            pos.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        )
    return keys
