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

from ..errors import InputError
from ..model import Dataset, Qrels
from ..text import shown
from .files import open_text, read_errors
from .records import LabelFields, aliases, field_name, json_records, record_query_id

_CSV_FIELDS = ("query_id", "query", "doc_id", "grade", "group")


def read_jsonl_dataset(path: str | Path) -> Dataset:
    """Read a JSONL dataset (see the module docstring)."""
    p = Path(path)
    queries: dict[str, str] = {}
    fields = LabelFields(p)
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
        fields.add(lineno, qid, rec)
    qrels = fields.qrels()
    return Dataset(queries, qrels, None, name=p.stem, info={"format": "jsonl"})


def write_jsonl_dataset(dataset: Dataset, path: str | Path) -> None:
    """Write a dataset as JSONL (``relevant`` for plain labels, ``groups`` when grouped)."""
    q = dataset.qrels
    with open(path, "w", encoding="utf-8") as fh:
        if q.grouped:
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


def read_csv_dataset(path: str | Path) -> Dataset:
    """Read a CSV (or tab-separated ``.tsv``) dataset (see the module docstring)."""
    p = Path(path)
    delim = "\t" if p.name.lower().endswith(".tsv") else ","
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
