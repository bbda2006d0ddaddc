"""Runs as Parquet: one row per retrieved document, with a query column, a document column
and a score column (or a rank column: rank 1 first), as pandas, Spark, DuckDB or Ray Data
write them. Needs pyarrow (the ``fast`` extra), imported when a file is read.

Column names (first found wins): query ``query_id``, ``qid``, ``query``; document
``doc_id``, ``docno``, ``docid``, ``doc``; score ``score``, ``sim``; rank ``rank``. Ids may
be strings or integers; a null id or score is an error naming the file, the row and the
column. A query's rows need not be adjacent (:func:`ranklens.evaluate_file` streams a file
whose queries are, and partitions one whose are not).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np

from ..errors import InputError, require
from ..model import Run
from ..model.ids import DocIds
from ..model.vocab import encode_ids

QUERY_COLUMNS = ("query_id", "qid", "query")
DOC_COLUMNS = ("doc_id", "docno", "docid", "doc")
SCORE_COLUMNS = ("score", "sim")
RANK_COLUMNS = ("rank",)


def pyarrow_parquet() -> Any:
    """``pyarrow.parquet``, or an InputError saying how to install it."""
    try:
        return require("pyarrow.parquet", "fast", "reading and writing Parquet runs")
    except ImportError:  # pragma: no cover - needs the extra
        raise InputError("Parquet needs pyarrow: pip install 'ranklens[fast]'") from None


def run_columns(names: list[str], path: Path) -> tuple[str, str, str | None, str | None]:
    """``(query, document, score or None, rank or None)``: the run's columns in ``names``;
    a missing query or document column, or neither score nor rank, names the file."""

    def pick(options: tuple[str, ...]) -> str | None:
        return next((c for c in options if c in names), None)

    q, d, s, r = (pick(c) for c in (QUERY_COLUMNS, DOC_COLUMNS, SCORE_COLUMNS, RANK_COLUMNS))
    for col, options in ((q, QUERY_COLUMNS), (d, DOC_COLUMNS)):
        if col is None:
            raise InputError(
                f"{path}: no {options[0]!r} column (or {', '.join(options[1:])}); "
                f"has: {', '.join(names)}"
            )
    if s is None and r is None:
        raise InputError(f"{path}: no 'score' or 'rank' column; has: {', '.join(names)}")
    return q, d, s, r  # type: ignore[return-value]


def run_from_table(table: Any, path: Path, name: str, first_row: int = 0) -> Run:
    """A :class:`Run` from a pyarrow table (or record batch) of run rows; ``first_row``
    numbers the rows in errors (a batch's place in its file)."""
    q, d, s, r = run_columns(list(table.schema.names), path)
    cols = checked_columns(table, path, first_row)
    v = cast(str, s if s is not None else r)  # run_columns gives a score or a rank column
    values = cols[v].to_numpy(zero_copy_only=False)
    if values.dtype.kind not in "iuf":
        raise InputError(f"{path}: column {s or r!r} must be numeric, has {cols[v].type}")
    scores = values.astype(np.float64) if s is not None else -values.astype(np.float64)
    qids, dids = _ids(cols[q]), _ids(cols[d])
    packed = packed_ids(dids)
    if packed is None:  # ids interned by pyarrow's dictionary encoding (vocab.encode_arrow)
        return Run.from_arrays(qids, dids, scores, name=name, source=str(path))
    qcode, qvocab = encode_ids(qids, f"query id in {path}")
    return Run.from_arrays((), (), scores, name=name, source=str(path),
                           encoded=(qcode, qvocab, packed, None))  # fmt: skip


def packed_ids(arr: Any) -> DocIds | None:
    """A string column's ids as packed byte slices, straight from its Arrow buffers, as
    the TREC scanner gives them (never interned); None when the ids need the general path
    (dictionary-encoded, an empty id, a zero byte)."""
    import pyarrow as pa

    if pa.types.is_dictionary(arr.type) or len(arr) == 0:
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_string(arr.type):
        arr = arr.cast(pa.large_string())  # int64 offsets
    _, off_buf, body_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    body = (
        np.frombuffer(body_buf, dtype=np.uint8) if body_buf is not None else np.zeros(0, np.uint8)
    )
    used = body[int(offsets[0]) : int(offsets[-1])]
    if (np.diff(offsets) == 0).any() or (used == 0).any():
        return None
    return DocIds.packed(offsets - offsets[0], used)


def checked_columns(table: Any, path: Path, first_row: int = 0) -> dict[str, Any]:
    """The query, document and score (or rank) columns of a table of run rows; a null in
    one is an error naming the file's row (``first_row``: the table's place in the file)."""
    q, d, s, r = run_columns(list(table.schema.names), path)
    cols: dict[str, Any] = {}
    for col in (q, d, cast(str, s if s is not None else r)):
        arr = table.column(col)
        if arr.null_count:
            at = int(np.flatnonzero(np.asarray(arr.is_null()))[0]) + first_row
            raise InputError(f"{path}: row {at + 1}: column {col!r} is null")
        cols[col] = arr
    return cols


def _ids(arr: Any) -> Any:
    """A column of ids as pyarrow strings (integers written as TREC would), or as it is
    when dictionary-encoded strings."""
    import pyarrow as pa

    kind = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return arr
    if pa.types.is_integer(kind):
        return arr.cast(pa.string())
    raise InputError(f"ids must be strings or integers, got a {arr.type} column")


def read_run_parquet(path: str | Path, name: str | None = None) -> Run:
    """Read a run from a Parquet file (see the module docstring)."""
    p = Path(path)
    pq = pyarrow_parquet()
    try:
        table = pq.read_table(p)
    except (OSError, ValueError) as exc:
        raise InputError(f"{p}: cannot read parquet ({exc})") from None
    return run_from_table(table, p, name or p.name.split(".")[0])


def write_run_parquet(run: Run, path: str | Path) -> None:
    """Write a run as Parquet (``query_id``, ``doc_id``, ``score``, ``rank``), each
    query's rows in ranking order."""
    pq = pyarrow_parquet()
    import pyarrow as pa

    o = run.order()
    q, d = run.q[o], run.d[o]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if len(q) else q
    rank = np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)])) + 1
    table = pa.table({
        "query_id": np.asarray(run.query_ids, dtype=object)[q].astype(str),
        "doc_id": np.asarray(run.doc_ids, dtype=object)[d].astype(str),
        "score": run.score[o],
        "rank": rank.astype(np.int64),
    })  # fmt: skip
    pq.write_table(table, path)
