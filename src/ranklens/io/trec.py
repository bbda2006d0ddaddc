"""TREC qrels and run files.

* qrels: ``qid iter docno rel`` (4 fields; ``rel`` an integer);
* run: ``qid iter docno rank sim run_id`` (6 fields; more are ignored, as trec_eval does;
  ``rank`` is ignored, ranking comes from ``sim``).

One semantics for every file, small or large, plain or gzipped:

* fields are separated by ASCII whitespace (space, tab, CR, VT, FF); any other character,
  a no-break space or U+2028 included, belongs to the field it stands in;
* lines end at LF, CR or CRLF; blank lines and lines whose first non-blank character is
  ``#`` are skipped (trec_eval 10 skips them too), anywhere in the file;
* a UTF-8 byte order mark at the start is skipped; ids must be UTF-8;
* numbers are plain ASCII decimals: ``rel`` an integer (``[+-]digits``, within 64 bits),
  ``sim`` a finite decimal with optional exponent (``1_000``, ``nan``, ``inf`` or
  Arabic-Indic digits are refused);
* a file with no content line is an error (an empty qrels or run is a mistake, never a
  mean over nothing).

A malformed line is an :class:`~ranklens.errors.InputError` naming the file, the line
number and what is wrong. (:func:`ranklens.read_qrels` hands ``.json``/``.jsonl`` files to
:mod:`ranklens.io.jsonl` instead.) When pyarrow is installed, large files whose bytes are
plainly delimited are parsed by its multithreaded CSV reader; anything it cannot read, or
could read differently, goes through the line parser, which decides and names the fault.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Qrels, Run
from ..model.ids import DocIds
from ..model.vocab import BadIdError, arrow_to_numpy, encode_blocks_arrow, pyarrow_or_none
from .files import BOM, read_bytes, read_errors

PathLike = str | os.PathLike

FAST_MIN_BYTES = 1 << 16
"""Files from this size on are offered to pyarrow's CSV reader (when installed)."""

_INT = re.compile(rb"[+-]?[0-9]+\Z")
_FLOAT = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_INT64 = 1 << 63


def read_trec_qrels(path: PathLike, *, fast: bool | None = None) -> Qrels:
    """Read a TREC qrels file into :class:`Qrels` (:func:`ranklens.read_qrels` picks the
    reader by the file's suffix). ``fast``: force (True) or forbid (False) the pyarrow
    path; by default it is used for files of :data:`FAST_MIN_BYTES` or more."""
    p = Path(path)
    got = _read_fast(p, 4, ["qid", "iter", "docno", "rel"], {"rel": "int64"}, fast)
    if got is not None:
        try:
            return Qrels.from_parsed(*got["qid_enc"], got["docs"], got["rel"], source=str(p))
        except InputError:
            pass  # let the line parser name the line
    qids, docs, grades, linenos = [], [], [], []
    for lineno, fields in _lines(p):
        if len(fields) != 4:
            raise InputError(
                f"{p}:{lineno}: expected 4 fields (qid iter docno rel), found {len(fields)}"
            )
        qids.append(_text(p, lineno, fields[0], "qid"))
        docs.append(_text(p, lineno, fields[2], "docno"))
        grades.append(_int(p, lineno, fields[3], docs[-1]))
        linenos.append(lineno)
    if not qids:
        raise InputError(f"{p}: no qrels lines (the file is empty or only comments)")
    seen: dict[tuple[str, str], int] = {}
    for i, key in enumerate(zip(qids, docs)):
        if key in seen:
            raise InputError(
                f"{p}: document {key[1]!r} is judged twice for query {key[0]!r} "
                f"(lines {linenos[seen[key]]} and {linenos[i]})"
            )
        seen[key] = i
    return Qrels.from_arrays(qids, docs, np.asarray(grades, dtype=np.int64), source=str(p))


def read_trec_run(path: PathLike, name: str | None = None, *, fast: bool | None = None) -> Run:
    """Read a TREC run file into a :class:`Run`.

    The run's name is ``name``, else the run_id of the last line (as trec_eval), else the
    file name. ``fast``: as for :func:`read_trec_qrels`.
    """
    p = Path(path)
    cols = ["qid", "iter", "docno", "rank", "sim", "run_id"]
    got = _read_fast(p, 6, cols, {"sim": "float64"}, fast)
    if got is not None:
        try:
            return Run.from_arrays(
                None, None, got["sim"], name=name or got["last_run_id"], source=str(p),
                encoded=(*got["qid_enc"], got["docs"], None),
            )  # fmt: skip
        except InputError:
            pass
    qids, docs, scores = [], [], []
    run_id = None
    for lineno, fields in _lines(p):
        if len(fields) < 6:
            raise InputError(
                f"{p}:{lineno}: expected 6 fields (qid iter docno rank sim "
                f"run_id), found {len(fields)}"
            )
        qids.append(_text(p, lineno, fields[0], "qid"))
        docs.append(_text(p, lineno, fields[2], "docno"))
        scores.append(_float(p, lineno, fields[4], docs[-1]))
        run_id = fields[5]
    if not qids:
        raise InputError(f"{p}: no run lines (the file is empty or only comments)")
    return Run.from_arrays(
        qids,
        docs,
        np.asarray(scores, dtype=np.float64),
        name=name or _text(p, 0, run_id, "run_id"),
        source=str(p),
    )


def _lines(p: Path) -> Iterator[tuple[int, list[bytes]]]:
    """``(line number, fields)`` for every content line (see the module docstring)."""
    data = read_bytes(p)
    if data.startswith(BOM):
        data = data[len(BOM) :]
    for lineno, line in enumerate(data.splitlines(), 1):
        fields = line.split()  # bytes.split(): ASCII whitespace only
        if fields and not fields[0].startswith(b"#"):
            yield lineno, fields


def _text(p: Path, lineno: int, raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"{p}:{lineno}" if lineno else str(p)
        raise InputError(f"{where}: field {what} is not UTF-8 ({exc.reason})") from None


def _int(p: Path, lineno: int, raw: bytes, doc: str) -> int:
    value = int(raw) if _INT.match(raw) else None
    if value is None or not -_INT64 <= value < _INT64:
        shown = raw.decode("utf-8", "replace")
        why = "is not an integer" if value is None else "is out of range"
        raise InputError(f"{p}:{lineno}: relevance {shown!r} of document {doc!r} {why}")
    return value


def _float(p: Path, lineno: int, raw: bytes, doc: str) -> float:
    value = float(raw) if _FLOAT.match(raw) else None
    if value is None or value in (float("inf"), float("-inf")):
        shown = raw.decode("utf-8", "replace")
        raise InputError(
            f"{p}:{lineno}: score {shown!r} of document {doc!r} is not a finite decimal number"
        )
    return value


def _last_run_id(p: Path, data: Any) -> str | None:
    """The run_id of the last content line, read backwards from the end."""
    end = len(data)
    while end > 0:
        start = max(data.rfind(b"\n", 0, end), data.rfind(b"\r", 0, end)) + 1
        fields = bytes(data[start:end]).split()
        if fields and not fields[0].startswith(b"#"):
            return _text(p, 0, fields[5], "run_id") if len(fields) >= 6 else None
        end = start - 1
    return None


def _read_fast(
    p: Path, n_fields: int, names: list[str], types: dict[str, str], fast: bool | None
) -> Any:
    """Parse with pyarrow when it reads the file as the line parser would; None to use the
    line parser."""
    pa = pyarrow_or_none()
    if pa is None or fast is False:
        return None
    with read_errors(p):
        if p.is_dir() or (fast is None and p.stat().st_size < FAST_MIN_BYTES):
            return None
    if p.name.endswith(".gz"):
        data: Any = read_bytes(p)
    else:
        with open(p, "rb") as fh, read_errors(p):
            if os.fstat(fh.fileno()).st_size == 0:
                return None
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        return _parse_fast(p, data, n_fields, names, types)
    finally:
        if isinstance(data, mmap.mmap):
            with contextlib.suppress(BufferError):  # views still alive: freed with them
                data.close()


def _parse_fast(p: Path, data: Any, n_fields: int, names: list[str], types: dict[str, str]) -> Any:
    """pyarrow's multithreaded CSV reader with one delimiter, ids kept as strings.

    It reads a file as the line parser does when every line has exactly ``n_fields``
    fields split by single delimiters (anything else is a parse error here, or an empty
    field, both sent to the line parser) and no id holds a byte the line parser would split
    at (checked on the parsed ids' bytes). Comment lines, NaN scores and the like go to the
    line parser too, which skips or names them.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    start = len(BOM) if data[:3] == BOM else 0
    first = data[start : data.find(b"\n", start, start + (1 << 16))]
    delim = b"\t" if b"\t" in first else b" "
    # ASCII whitespace other than the delimiter and line ends splits fields for the line
    # parser only (single-byte searches run at memory speed)
    if any(data.find(x) != -1 for x in (b"\x0b", b"\x0c", b" " if delim == b"\t" else b"\t")):
        return None
    col_types = {n: pa.string() for n in names}
    for k, v in types.items():
        col_types[k] = pa.int64() if v == "int64" else pa.float64()
    try:
        table = pcsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)[start:]),
            read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pcsv.ParseOptions(
                delimiter=delim.decode(), quote_char=False, ignore_empty_lines=True
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=col_types, include_columns=["qid", "docno", *types],
                strings_can_be_null=False,
            ),
        )  # fmt: skip
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
        return None
    if table.num_rows == 0 or not all(
        _plain_ids(c) for name in ("qid", "docno") for c in table.column(name).chunks
    ):
        return None
    try:
        qcode, qvocab = encode_blocks_arrow(table.column("qid"))
        out: dict[str, Any] = {"qid_enc": (qcode, qvocab)}
        for k in types:
            out[k] = arrow_to_numpy(table.column(k))
    except (BadIdError, ValueError):
        return None  # a NaN: the line parser names the line
    if any(q.startswith("#") for q in qvocab.tolist()):
        return None  # comment lines: the line parser skips them
    out["docs"] = DocIds.from_arrow(table.column("docno"))
    if n_fields == 6:
        out["last_run_id"] = _last_run_id(p, data)
    return out


def _plain_ids(chunk: Any) -> bool:
    """True when no id of ``chunk`` is empty or holds a byte <= 0x20 (space, tab, VT, FF:
    where the line parser splits; control bytes are rare enough to send to it too)."""
    off = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[
        chunk.offset : chunk.offset + len(chunk) + 1
    ]
    if len(off) > 1 and int(np.diff(off).min()) <= 0:
        return False
    body = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[int(off[0]) : int(off[-1])]
    return not len(body) or int(body.min()) > 0x20


def write_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write plain (ungrouped) qrels as a TREC qrels file (``qid 0 docno rel``)."""
    if qrels.grouped:
        raise InputError(
            "grouped ground truth cannot be written as TREC qrels (one label per "
            "document); write it as JSONL with ranklens.io.jsonl.write_qrels_jsonl"
        )
    with open(path, "w", encoding="utf-8") as fh:
        for qc, dc, g in zip(qrels.q.tolist(), qrels.d.tolist(), qrels.grade.tolist()):
            fh.write(f"{qrels.query_ids[qc]} 0 {qrels.doc_ids[dc]} {g}\n")


def write_run(run: Run, path: PathLike, name: str | None = None) -> None:
    """Write a run as a TREC run file, each query ranked (rank column 1, 2, …)."""
    tag = name or run.name or "ranklens"
    o = run.order()
    q, d, s = run.q[o], run.d[o], run.score[o]
    with open(path, "w", encoding="utf-8") as fh:
        rank = 0
        last = -1
        for qc, dc, sc in zip(q.tolist(), d.tolist(), s.tolist()):
            rank = rank + 1 if qc == last else 1
            last = qc
            fh.write(f"{run.query_ids[qc]} Q0 {run.doc_ids[dc]} {rank} {sc!r} {tag}\n")
