"""Data frames as runs and labels: one row per (query, document), with the columns a Parquet
run has (:mod:`.parquet`: a query column ``query_id``/``qid``/``query``, a document column
``doc_id``/``docno``/``docid``/``doc``, and a run's ``score``/``sim`` or ``rank``; labels
may carry a grade column, ``grade``/``relevance``/``rel``/``label``/``judgment``, else each
row is relevant with grade 1).

pandas and polars frames and pyarrow tables are read through pyarrow when it is installed
(document ids packed straight from Arrow's buffers, never interned, as a Parquet file's
are); without pyarrow, a pandas frame is read from its columns' values. Ids may be strings
or integers; a missing value is an error naming the row and the column.

A frame with ``start`` and ``end`` columns (or ``start_index``/``end_index``, Chroma's
names) is about character ranges, never documents: as labels it reads as
:class:`~ranklens.model.spans.SpanLabels` (one row per evidence span, with optional
``grade`` and ``group`` columns), as a run as a run of chunks (``doc_id`` the chunk's
source document, optional ``id``/``chunk_id``, ``text`` and ``score``/``rank``), exactly as
the same rows given to ``SpanLabels.from_records`` or ``Run.from_chunks`` are.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ..errors import InputError
from ..model import Qrels, Run
from ..model.ids import DocIds
from ..model.spans import SpanLabels
from ..model.vocab import encode_ids
from .parquet import checked_columns, packed_ids, run_columns, run_from_table

GRADE_COLUMNS = ("grade", "relevance", "rel", "label", "judgment")
SOURCE = "DataFrame"


def is_frame(obj: Any) -> bool:
    """Whether ``obj`` is a pandas or polars DataFrame or a pyarrow Table."""
    module = type(obj).__module__.split(".")[0]
    name = type(obj).__name__
    return (module in ("pandas", "polars") and name == "DataFrame") or (
        module == "pyarrow" and name == "Table"
    )


def column_names(frame: Any) -> list[str]:
    """A frame's column names (a pyarrow table's ``columns`` are its arrays)."""
    if type(frame).__module__.split(".")[0] == "pyarrow":
        return [str(c) for c in frame.schema.names]
    return [str(c) for c in frame.columns]


def _arrow(frame: Any) -> Any:
    """The frame as a pyarrow Table, or None without pyarrow (a pandas frame then)."""
    module = type(frame).__module__.split(".")[0]
    if module == "pyarrow":
        return frame
    if module == "polars":
        return frame.to_arrow()
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is in the dev environment
        return None
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"{SOURCE}: cannot read its columns ({exc})") from None


SPAN_COLUMNS = (("start", "end"), ("start_index", "end_index"))
"""The column pairs that make a frame one of character ranges (spans or chunks)."""
CHUNK_ID_COLUMNS = ("id", "chunk_id", "node_id")


def span_columns(names: list[str]) -> tuple[str, str] | None:
    """The ``(start, end)`` columns of a frame of ranges, or None; one without the other is
    an error naming what is missing."""
    for a, b in SPAN_COLUMNS:
        if a in names and b in names:
            return a, b
        if (a in names) != (b in names):
            has, lacks = (a, b) if a in names else (b, a)
            raise InputError(
                f"{SOURCE}: a column {has!r} without {lacks!r}: character ranges need both "
                "(half-open [start, end))"
            )
    return None


def _rows(frame: Any) -> list[dict[str, Any]]:
    """The frame's rows as dicts (pandas, polars or pyarrow), missing values as None."""
    table = _arrow(frame)
    if table is not None:
        return table.to_pylist()  # type: ignore[no-any-return]
    rows = frame.to_dict("records")
    return [
        {k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in rows
    ]


def _pick(names: list[str], options: tuple[str, ...]) -> str | None:
    return next((c for c in options if c in names), None)


def spans_from_frame(frame: Any, ranges: tuple[str, str]) -> SpanLabels:
    """:class:`SpanLabels` of a frame with range columns, one row per span."""
    names = column_names(frame)
    q, d, _, _ = run_columns([*names, "score"], SOURCE)  # type: ignore[arg-type]
    grade = _pick(names, GRADE_COLUMNS)
    records = []
    for i, row in enumerate(_rows(frame)):
        rec = {"query_id": row[q], "doc_id": row[d], "start": row[ranges[0]],
               "end": row[ranges[1]]}  # fmt: skip
        for col, v in rec.items():
            if v is None:
                raise InputError(f"{SOURCE}: row {i + 1}: column {col!r} is missing")
        rec["query_id"], rec["doc_id"] = str(rec["query_id"]), str(rec["doc_id"])
        if grade is not None and row[grade] is not None:
            rec["grade"] = row[grade]
        if "group" in names and row["group"] is not None:
            rec["group"] = row["group"]
        records.append(rec)
    return SpanLabels.from_records(records, source=f"{SOURCE} of spans")


def chunks_from_frame(frame: Any, ranges: tuple[str, str], name: str = "run") -> Run:
    """A run of chunks of a frame with range columns, one row per retrieved chunk."""
    names = column_names(frame)
    q, d, _, _ = run_columns([*names, "score"], SOURCE)  # type: ignore[arg-type]
    s = _pick(names, ("score", "sim"))
    r = _pick(names, ("rank",))
    chunk_id = _pick(names, CHUNK_ID_COLUMNS)
    chunks: dict[str, list[dict[str, Any]]] = {}
    for i, row in enumerate(_rows(frame)):
        if row[q] is None:
            raise InputError(f"{SOURCE}: row {i + 1}: column {q!r} is missing")
        c = {"doc_id": None if row[d] is None else str(row[d]), "start": row[ranges[0]],
             "end": row[ranges[1]], "text": row.get("text")}  # fmt: skip
        if chunk_id is not None and row[chunk_id] is not None:
            c["id"] = str(row[chunk_id])
        if s is not None:
            c["score"] = row[s]
        elif r is not None:
            c["score"] = None if row[r] is None else -float(row[r])
        chunks.setdefault(str(row[q]), []).append(c)
    return Run.from_chunks(chunks, name=name, ranked=s is None and r is None)


def run_from_frame(frame: Any, name: str = "run") -> Run:
    """A :class:`Run` of a data frame's rows (see the module docstring)."""
    ranges = span_columns(column_names(frame))
    if ranges is not None:
        return chunks_from_frame(frame, ranges, name)
    table = _arrow(frame)
    if table is not None:
        return run_from_table(table, SOURCE, name)  # type: ignore[arg-type]
    q, d, s, r = run_columns(column_names(frame), SOURCE)  # type: ignore[arg-type]
    v = cast(str, s or r)  # run_columns gives a score or a rank column
    cols = {c: frame[c].tolist() for c in (q, d, v)}
    _no_missing(cols)
    values = np.asarray(cols[v])
    if values.dtype.kind not in "iuf":
        raise InputError(f"{SOURCE}: column {s or r!r} must be numeric")
    scores = values.astype(np.float64) if s is not None else -values.astype(np.float64)
    return Run.from_arrays(cols[q], cols[d], scores, name=name, source=SOURCE)


def qrels_from_frame(frame: Any) -> Qrels:
    """:class:`Qrels` of a data frame's rows (see the module docstring); a frame with
    ``start``/``end`` columns: :class:`SpanLabels`."""
    names = column_names(frame)
    ranges = span_columns(names)
    if ranges is not None:
        return spans_from_frame(frame, ranges)
    grade = next((c for c in GRADE_COLUMNS if c in names), None)
    # a labels frame has no score: the grade column stands in for run_columns' check
    q, d, _, _ = run_columns([*names, "score"], SOURCE)  # type: ignore[arg-type]
    table = _arrow(frame)
    if table is None:
        cols = {c: frame[c].tolist() for c in (q, d, grade) if c is not None}
        _no_missing(cols)
        grades = cols[grade] if grade is not None else np.ones(len(cols[q]), dtype=np.int64)
        return Qrels.from_arrays(cols[q], cols[d], grades, source=SOURCE)
    if grade is None:
        import pyarrow as pa

        table = table.append_column("score", pa.array(np.ones(len(table), dtype=np.int64)))
        grade = "score"
    else:
        table = table.rename_columns([c if c != grade else "score" for c in table.schema.names])
        grade = "score"
    cols = checked_columns(table, SOURCE)  # type: ignore[arg-type]
    g = cols[grade].to_numpy(zero_copy_only=False)
    if g.dtype.kind not in "iub" and not (g.dtype.kind == "f" and np.all(g == np.floor(g))):
        raise InputError(f"{SOURCE}: grades must be integers, got a {cols[grade].type} column")
    qids = _strings(cols[q])
    qcode, qvocab = encode_ids(qids, f"query id in {SOURCE}")
    docs = packed_ids(_strings(cols[d]))
    if docs is None:  # an empty id or a zero byte: interned, each bad id named
        dcode, dvocab = encode_ids(_strings(cols[d]), f"document id in {SOURCE}")
        docs = DocIds(dcode, dvocab)
    return Qrels.from_parsed(qcode, qvocab, docs, g.astype(np.int64), SOURCE)


def _strings(arr: Any) -> Any:
    """A column of ids as pyarrow strings (integers written out)."""
    import pyarrow as pa

    kind = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
    if pa.types.is_integer(kind):
        return arr.cast(pa.string())
    if pa.types.is_dictionary(arr.type):
        return arr.cast(pa.string())
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise InputError(f"{SOURCE}: ids must be strings or integers, got a {arr.type} column")
    return arr


def _no_missing(cols: dict[str, list[Any]]) -> None:
    for name, values in cols.items():
        for i, v in enumerate(values):
            if v is None or (isinstance(v, float) and v != v):
                raise InputError(f"{SOURCE}: row {i + 1}: column {name!r} is missing")
