"""Data frames as runs and labels: one row per (query, document), with the columns a Parquet
run has (:mod:`.parquet`: a query column ``query_id``/``qid``/``query``, a document column
``doc_id``/``docno``/``docid``/``doc``, and a run's ``score``/``sim`` or ``rank``; labels
may carry a grade column, ``grade``/``relevance``/``rel``/``label``/``judgment``, else each
row is relevant with grade 1).

pandas and polars frames and pyarrow tables are read through pyarrow when it is installed
(document ids packed straight from Arrow's buffers, never interned, as a Parquet file's
are); without pyarrow, a pandas frame is read from its columns' values. Ids may be strings
or integers; a missing value is an error naming the row and the column.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Qrels, Run
from ..model.ids import DocIds
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


def run_from_frame(frame: Any, name: str = "run") -> Run:
    """A :class:`Run` of a data frame's rows (see the module docstring)."""
    table = _arrow(frame)
    if table is not None:
        return run_from_table(table, SOURCE, name)  # type: ignore[arg-type]
    q, d, s, r = run_columns([str(c) for c in frame.columns], SOURCE)  # type: ignore[arg-type]
    cols = {c: frame[c].tolist() for c in (q, d, s or r)}
    _no_missing(cols)
    values = np.asarray(cols[s or r])
    if values.dtype.kind not in "iuf":
        raise InputError(f"{SOURCE}: column {s or r!r} must be numeric")
    scores = values.astype(np.float64) if s is not None else -values.astype(np.float64)
    return Run.from_arrays(cols[q], cols[d], scores, name=name, source=SOURCE)


def qrels_from_frame(frame: Any) -> Qrels:
    """:class:`Qrels` of a data frame's rows (see the module docstring)."""
    names = [str(c) for c in frame.columns]
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
