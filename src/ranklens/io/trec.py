"""TREC qrels and run files.

* qrels: ``qid iter docno rel`` (4 whitespace-separated fields; ``rel`` an integer);
* run: ``qid iter docno rank sim run_id`` (6 fields; more are ignored, as trec_eval does;
  ``rank`` is ignored, ranking comes from ``sim``).

Blank lines and lines starting with ``#`` are skipped, as trec_eval 10 does. A malformed
line is an :class:`~ranklens.errors.InputError` naming the file, the line number and what
is wrong. (:func:`ranklens.read_qrels` hands ``.json``/``.jsonl`` files to
:mod:`ranklens.io.jsonl` instead.)
When pyarrow is installed, well-formed single-space or tab-separated files are parsed by
its multithreaded CSV reader; anything it cannot read goes through the line-by-line parser,
which finds and names the fault.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Qrels, Run
from ..model.vocab import BadIdError, arrow_to_numpy, encode_arrow, pyarrow_or_none
from .files import open_text

PathLike = str | os.PathLike


def read_trec_qrels(path: PathLike) -> Qrels:
    """Read a TREC qrels file into :class:`Qrels` (:func:`ranklens.read_qrels` picks the
    reader by the file's suffix)."""
    p = Path(path)
    fast = _read_fast(p, 4, ["qid", "iter", "docno", "rel"], {"rel": "int64"})
    if fast is not None:
        try:
            return Qrels.from_arrays(
                None,
                None,
                fast["rel"],
                source=str(p),
                encoded=(*fast["qid_enc"], *fast["docno_enc"]),
            )
        except InputError:
            pass  # let the line parser name the line
    qids, docs, grades = [], [], []
    for lineno, fields in _lines(p):
        if len(fields) != 4:
            raise InputError(
                f"{p}:{lineno}: expected 4 fields (qid iter docno rel), found {len(fields)}"
            )
        try:
            grades.append(int(fields[3]))
        except ValueError:
            raise InputError(
                f"{p}:{lineno}: relevance {fields[3]!r} of document {fields[2]!r} is not an integer"
            ) from None
        qids.append(fields[0])
        docs.append(fields[2])
    seen: dict[tuple[str, str], int] = {}
    for i, key in enumerate(zip(qids, docs)):
        if key in seen:
            raise InputError(
                f"{p}: document {key[1]!r} is judged twice for query {key[0]!r} "
                f"(lines {_line_of(p, seen[key])} and {_line_of(p, i)})"
            )
        seen[key] = i
    return Qrels.from_arrays(qids, docs, np.asarray(grades, dtype=np.int64), source=str(p))


def read_trec_run(path: PathLike, name: str | None = None) -> Run:
    """Read a TREC run file into a :class:`Run`.

    The run's name is ``name``, else the run_id of the last line (as trec_eval), else the
    file name.
    """
    p = Path(path)
    fast = _read_fast(p, 6, ["qid", "iter", "docno", "rank", "sim", "run_id"], {"sim": "float64"})
    if fast is not None:
        run_name = name or (fast["last_run_id"] or p.name)
        try:
            return Run.from_arrays(
                None,
                None,
                fast["sim"],
                name=run_name,
                source=str(p),
                encoded=(*fast["qid_enc"], *fast["docno_enc"]),
            )
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
        try:
            s = float(fields[4])
        except ValueError:
            raise InputError(
                f"{p}:{lineno}: score {fields[4]!r} of document {fields[2]!r} is not a number"
            ) from None
        if not math.isfinite(s):
            raise InputError(
                f"{p}:{lineno}: score {fields[4]!r} of document {fields[2]!r} "
                "is not a finite number"
            )
        qids.append(fields[0])
        docs.append(fields[2])
        scores.append(s)
        run_id = fields[5]
    return Run.from_arrays(
        qids,
        docs,
        np.asarray(scores, dtype=np.float64),
        name=name or run_id or p.name,
        source=str(p),
    )


def _lines(p: Path):
    """Yield (line number, fields) for every content line."""
    with open_text(p) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                stripped = line.strip()
                if not stripped or stripped.startswith("#"):
                    continue
                yield lineno, stripped.split()
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}: not UTF-8 text ({exc.reason})") from None


def _line_of(p: Path, content_index: int) -> int:
    for i, (lineno, _) in enumerate(_lines(p)):
        if i == content_index:
            return lineno
    return -1


def _read_fast(p: Path, n_fields: int, names: list[str], types: dict[str, str]) -> Any:
    """Parse with pyarrow when the file is plainly delimited; None to use the line parser."""
    pa = pyarrow_or_none()
    if pa is None or p.name.endswith(".gz"):
        return None
    try:
        size = p.stat().st_size
    except OSError:
        return None
    if size < 1 << 16:  # small files: the line parser is as fast and exact about errors
        return None
    import pyarrow.csv as pcsv

    with open(p, "rb") as fh:
        head = fh.read(1 << 16)
    if b"#" in head.split(b"\n", 1)[0]:
        return None
    first = head.split(b"\n", 1)[0]
    delim = "\t" if b"\t" in first else " "
    if delim == " " and (b"  " in first or first.startswith(b" ")):
        return None
    # ids come dictionary-encoded, each block by its own parser thread
    col_types = {n: pa.string() for n in names}
    col_types["qid"] = col_types["docno"] = pa.dictionary(pa.int32(), pa.string())
    for k, v in types.items():
        col_types[k] = pa.int64() if v == "int64" else pa.float64()
    include = ["qid", "docno", *types]
    try:
        table = pcsv.read_csv(
            p,
            read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pcsv.ParseOptions(
                delimiter=delim, quote_char=False, ignore_empty_lines=True
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=col_types, include_columns=include, strings_can_be_null=False
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
        return None
    table = table.unify_dictionaries()
    try:
        out: dict[str, Any] = {
            "qid_enc": encode_arrow(table.column("qid")),
            "docno_enc": encode_arrow(table.column("docno")),
        }
    except BadIdError:
        return None  # an empty id: the line parser names the line
    if n_fields == 6:
        rid = None
        if table.num_rows:
            with open(p, "rb") as fh:
                fh.seek(max(0, size - 4096))
                tail = fh.read().rstrip(b"\r\n").rsplit(b"\n", 1)[-1].split()
            rid = tail[5].decode("utf-8", "replace") if len(tail) >= 6 else None
        out["last_run_id"] = rid
    for k in types:
        try:
            out[k] = arrow_to_numpy(table.column(k))
        except ValueError:
            return None
    return out


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
