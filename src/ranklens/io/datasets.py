"""Datasets as JSONL or CSV.

* JSONL, one query per line: ``{"query_id": "q1", "query": "text", "relevant": {"d1": 2}}``
  (or ``"relevant": ["d1", ...]``, or grouped ``"groups": [["d1", "d2"], ["d3"]]`` with
  optional ``"grades"``).
* CSV/TSV with a header: ``query_id, query, doc_id`` and optional ``grade`` (default 1) and
  ``group`` (rows of a query sharing a group number form one group).

Both read the same field names (``qid`` for ``query_id``, ``question`` for ``query``...):
one schema, :data:`~ranklens.io.records.DATASET_FIELDS`, shown in docs/datasets.md.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import Dataset, Qrels
from ..model.spans import SpanLabels
from ..text import shown
from .files import open_text, read_errors
from .records import LabelFields, aliases, field_name, json_records, record_query_id
from .spans import corpus_beside, dataset_with_spans, write_span_lines

_CSV_FIELDS = ("query_id", "query", "doc_id", "grade", "group")


def read_jsonl_dataset(path: str | Path, corpus: str | Path | bool | None = None) -> Dataset:
    """Read a JSONL dataset (see the module docstring); lines with ``evidence`` give span
    labels, checked against ``corpus`` (a BEIR ``corpus.jsonl``, a folder holding one, or
    a ``corpus.jsonl`` beside the file: :mod:`ranklens.io.spans`)."""
    p = Path(path)
    queries: dict[str, str] = {}
    fields = LabelFields(p)
    spans: list[tuple[int, str, Any]] = []  # (line, query, its evidence as written)
    for lineno, rec in json_records(p):
        qid = record_query_id(p, lineno, rec)
        if qid in queries:
            raise InputError(f"{p}:{lineno}: query {qid!r} appears on more than one line")
        key = field_name(rec, "query")
        if key is None:
            raise InputError(f"{p}:{lineno}: missing field {aliases('query')}, the query text")
        text = rec[key]
        if not isinstance(text, str):
            raise InputError(
                f"{p}:{lineno}: field {key!r} must be a string, got {type(text).__name__}"
            )
        queries[qid] = text
        ev_key = field_name(rec, "evidence")
        if ev_key is not None:
            spans.append((lineno, qid, rec[ev_key]))
        elif spans:
            raise InputError(f"{p}:{lineno}: query {qid!r} has no 'evidence' where others do")
        else:
            fields.add(lineno, qid, rec)
    if spans:
        if len(spans) != len(queries):
            raise InputError(f"{p}: some lines give 'evidence' and others id labels: one kind")
        return dataset_with_spans(p, queries, spans, corpus, "jsonl")
    qrels = fields.qrels()
    docs = corpus_beside(p, corpus) if corpus else None
    return Dataset(queries, qrels, docs, name=p.stem, info={"format": "jsonl"})


def write_jsonl_dataset(dataset: Dataset, path: str | Path) -> None:
    """Write a dataset as JSONL (``relevant`` for plain labels, ``groups`` when grouped,
    ``evidence`` for span labels)."""
    q = dataset.qrels
    with open(path, "w", encoding="utf-8") as fh:
        if isinstance(q, SpanLabels):
            write_span_lines(dataset, fh)
        elif q.grouped:
            grades = q.group_grades()
            for qid, glist in q.to_groups().items():
                fh.write(
                    json.dumps(
                        {
                            "query_id": qid,
                            "query": dataset.queries[qid],
                            "groups": glist,
                            "grades": grades[qid],
                        }
                    )
                    + "\n"
                )
        else:
            for qid, lab in q.to_dict().items():
                fh.write(
                    json.dumps({"query_id": qid, "query": dataset.queries[qid], "relevant": lab})
                    + "\n"
                )


def read_csv_dataset(path: str | Path, corpus: str | Path | bool | None = None) -> Dataset:
    """Read a CSV (or tab-separated ``.tsv``) dataset (see the module docstring); with
    ``start``/``end`` (or ``quote``) columns, each row is an evidence span of its
    document (span labels, checked against ``corpus``: :mod:`ranklens.io.spans`)."""
    p = Path(path)
    delim = "\t" if p.name.lower().endswith(".tsv") else ","
    spans = _csv_spans(p, delim, corpus)
    if spans is not None:
        return spans
    qs, ds, gs, us = [], [], [], []
    queries: dict[str, str] = {}
    with open_text(p, newline="") as fh, read_errors(p):
        reader = csv.DictReader(fh, delimiter=delim)
        cols = {f: field_name(reader.fieldnames or [], f) for f in _CSV_FIELDS}
        for col in ("query_id", "query", "doc_id"):
            if cols[col] is None:
                raise InputError(
                    f"{p}: missing column {aliases(col)}; the header has "
                    f"{', '.join(reader.fieldnames or []) or 'no columns'} (see docs/datasets.md)"
                )
        q_col, t_col, d_col = cols["query_id"], cols["query"], cols["doc_id"]
        g_col, u_col = cols["grade"], cols["group"]
        for row in reader:
            line = reader.line_num
            qid, doc = row[q_col], row[d_col]
            if not qid or not doc:
                raise InputError(f"{p}:{line}: empty field {q_col if not qid else d_col!r}")
            if qid in queries and queries[qid] != row[t_col]:
                raise InputError(f"{p}:{line}: query {qid!r} has two different texts")
            queries[qid] = row[t_col]
            grade = (row.get(g_col) if g_col else None) or "1"
            try:
                gs.append(int(grade))
            except ValueError:
                raise InputError(
                    f"{p}:{line}: field {g_col!r} {shown(grade)} is not an integer"
                ) from None
            if u_col is not None and row[u_col] not in (None, ""):
                try:
                    us.append(int(row[u_col]))
                except ValueError:
                    raise InputError(
                        f"{p}:{line}: field {u_col!r} {row[u_col]!r} is not an integer"
                    ) from None
            qs.append(qid)
            ds.append(doc)
    if us and len(us) != len(qs):
        raise InputError(f"{p}: column 'group' is filled on some rows only")
    qrels = Qrels.from_arrays(qs, ds, gs, us or None, source=str(p))
    return Dataset(queries, qrels, None, name=p.stem, info={"format": "csv"})


def _csv_spans(p: Path, delim: str, corpus: str | Path | bool | None) -> Dataset | None:
    """A CSV of evidence spans (a row each, with ``start``/``end`` or ``quote``), or None
    when the header names neither."""
    with open_text(p, newline="") as fh, read_errors(p):
        reader = csv.DictReader(fh, delimiter=delim)
        header = reader.fieldnames or []
        if field_name(header, "start") is None and field_name(header, "quote") is None:
            return None
        cols = {f: field_name(header, f) for f in (*_CSV_FIELDS, "start", "end", "quote")}
        for col in ("query_id", "query", "doc_id"):
            if cols[col] is None:
                raise InputError(
                    f"{p}: missing column {aliases(col)}; the header has {', '.join(header)} "
                    "(see docs/datasets.md)"
                )
        queries: dict[str, str] = {}
        per_query: dict[str, tuple[int, list[dict[str, Any]]]] = {}
        for row in reader:
            line, qid = reader.line_num, row[cols["query_id"]]
            if qid in queries and queries[qid] != row[cols["query"]]:
                raise InputError(f"{p}:{line}: query {qid!r} has two different texts")
            queries[qid] = row[cols["query"]]
            item: dict[str, Any] = {"doc_id": row[cols["doc_id"]]}
            for f in ("start", "end", "grade", "group"):
                raw = row.get(cols[f]) if cols[f] else None
                if raw not in (None, ""):
                    try:
                        item[f] = int(raw)
                    except ValueError:
                        raise InputError(
                            f"{p}:{line}: field {cols[f]!r} {shown(raw)} is not an integer"
                        ) from None
            if cols["quote"] and row.get(cols["quote"]):
                item["quote"] = row[cols["quote"]]
            per_query.setdefault(qid, (line, []))[1].append(item)
    records = [(line, q, items) for q, (line, items) in per_query.items()]
    return dataset_with_spans(p, queries, records, corpus, "csv")
