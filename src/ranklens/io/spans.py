"""Span labels in dataset files: JSONL lines with an ``evidence`` list, CSV rows with
``start``/``end`` (or ``quote``) columns, read into :class:`~ranklens.model.spans.SpanLabels`
with the corpus's texts, and written back.

JSONL, one query a line::

    {"query_id": "q1", "query": "When was the lighthouse built?",
     "evidence": [{"doc_id": "d1", "start": 120, "end": 171, "grade": 2},
                  {"doc_id": "d4", "quote": "first lit in 1821", "group": 0}]}

Each evidence item names its document and either its character range or its quoted text
(located in the document, exactly or normalised); with both, the range must hold the text
(a label that no longer matches its document is named: ``ranklens check-labels``
repairs it). ``grade`` (default 1) and ``group`` (alternatives: any one span of a group
finds it) are optional. The corpus (``corpus=``: a BEIR ``corpus.jsonl``, a folder holding
one, or a ``corpus.jsonl`` beside the dataset) gives the texts; without it, ranges are
taken as they are and quotes cannot be located.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import Dataset
from ..model.anchors import agrees
from ..model.spans import SpanLabels
from .beir import read_corpus
from .records import aliases, field_name


def corpus_beside(path: Path, corpus: str | Path | bool | None) -> dict[str, dict[str, Any]] | None:
    """The corpus of a dataset file: ``corpus`` (a ``corpus.jsonl`` or a folder holding
    one), else a ``corpus.jsonl`` beside the file; ``corpus=False`` reads none."""
    if corpus is False:
        return None
    if corpus is None or corpus is True:
        beside = path.parent / "corpus.jsonl"
        return read_corpus(beside) if beside.exists() else None
    c = Path(corpus)
    if c.is_dir():
        c = c / "corpus.jsonl"
    if not c.exists():
        raise InputError(f"{c}: no such corpus file (a BEIR corpus.jsonl: _id, title, text)")
    return read_corpus(c)


def span_record(p: Path, lineno: int, qid: str, item: Any, j: int,
                texts: Mapping[str, str] | None) -> dict[str, Any]:  # fmt: skip
    """One evidence item of a JSONL line (or a CSV row) as a span record, checked."""
    where = f"{p}:{lineno}: evidence {j} of query {qid!r}"
    if not isinstance(item, Mapping):
        raise InputError(f"{where} must be an object with doc_id and start/end or quote")
    doc_key = field_name(item, "doc_id")
    if doc_key is None or item[doc_key] in (None, ""):
        raise InputError(f"{where} needs {aliases('doc_id')}")
    rec: dict[str, Any] = {"query_id": qid, "doc_id": str(item[doc_key])}
    quote_key = field_name(item, "quote") or ("text" if "text" in item else None)
    quote = item.get(quote_key) if quote_key else None
    if item.get("start") is not None or item.get("end") is not None:
        for end in ("start", "end"):
            v = item.get(end)
            if isinstance(v, bool) or not isinstance(v, int):
                raise InputError(f"{where}: {end!r} must be an integer offset, got {v!r}")
            rec[end] = v
        if quote is not None and texts is not None and rec["doc_id"] in texts:
            text = texts[rec["doc_id"]]
            if not agrees(str(quote), text, rec["start"], rec["end"]):
                raise InputError(
                    f"{where}: [{rec['start']}, {rec['end']}) of {rec['doc_id']!r} does not hold "
                    f"its quoted text {str(quote)[:60]!r}: the document changed? "
                    "(ranklens check-labels relocates spans by their text)"
                )
    elif quote is not None:
        rec["quote"] = quote
    else:
        raise InputError(f"{where} needs 'start' and 'end', or {aliases('quote')}")
    grade = item.get("grade")
    if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int)):
        raise InputError(f"{where}: 'grade' must be a whole number, got {grade!r}")
    group = item.get("group")
    if group is not None and (isinstance(group, bool) or not isinstance(group, (str, int))):
        raise InputError(f"{where}: 'group' must be a text or a whole number, got {group!r}")
    for opt, value in (("grade", grade), ("group", group)):
        if value is not None:
            rec[opt] = value
    return rec


def spans_of(
    p: Path,
    records: list[tuple[int, str, list[Any]]],
    corpus: dict[str, dict[str, Any]] | None,
    on_missing: str = "error",
) -> SpanLabels:
    """SpanLabels from ``(line, query id, evidence items)`` of a file, checked against the
    corpus's texts."""
    texts = {d: v["text"] for d, v in corpus.items()} if corpus is not None else None
    rows, empty = [], []
    for lineno, qid, items in records:
        if not isinstance(items, list):
            raise InputError(f"{p}:{lineno}: field 'evidence' of query {qid!r} must be a list")
        if not items:
            empty.append(qid)
        rows += [span_record(p, lineno, qid, item, j, texts) for j, item in enumerate(items)]
    labels = SpanLabels.from_records(rows, texts, on_missing=on_missing, source=str(p))
    if empty:  # queries with evidence lists that are empty: evaluated with nothing to find
        labels = SpanLabels.from_columns(
            *_columns(labels), texts=texts, empty_queries=empty, source=str(p)
        )
    return labels


def _columns(labels: SpanLabels) -> tuple[list[Any], ...]:
    recs = labels.span_records()
    return tuple([r[k] for r in recs] for k in ("query_id", "doc_id", "start", "end", "grade",
                                                "group"))  # fmt: skip


def dataset_with_spans(
    p: Path,
    queries: dict[str, str],
    records: list[tuple[int, str, list[Any]]],
    corpus: str | Path | bool | None,
    fmt: str,
) -> Dataset:
    """A :class:`~ranklens.Dataset` whose labels are spans (and whose corpus is read)."""
    docs = corpus_beside(p, corpus)
    labels = spans_of(p, records, docs)
    return Dataset(queries, labels, docs, name=p.stem, info={"format": fmt, "labels": "spans"})


def evidence_items(labels: SpanLabels) -> dict[str, list[dict[str, Any]]]:
    """``{query: [evidence item, ...]}`` as the JSONL form writes them (with each span's
    quoted ``text`` when the labels carry texts, so the file can be checked and repaired
    after the documents change)."""
    out: dict[str, list[dict[str, Any]]] = {str(q): [] for q in labels.query_ids}
    for r in labels.span_records():
        item = {k: r[k] for k in ("doc_id", "start", "end", "grade", "group")}
        if "text" in r:
            item["text"] = r["text"]
        out[r["query_id"]].append(item)
    return out


def write_span_lines(dataset: Dataset, fh: Any) -> None:
    """The JSONL lines of a dataset whose labels are spans."""
    items = evidence_items(dataset.qrels)  # type: ignore[arg-type]
    for qid, evidence in items.items():
        line = {"query_id": qid, "query": dataset.queries[qid], "evidence": evidence}
        fh.write(json.dumps(line, ensure_ascii=False) + "\n")
