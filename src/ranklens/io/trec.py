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
:mod:`ranklens.io.jsonl` instead.) Files whose bytes are plainly delimited are read by the
vectorised scanner of :mod:`ranklens.io.scan` (numpy only, in blocks, ids kept as packed
bytes); anything it cannot read, or could read differently, goes through the line parser,
which decides and names the fault.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..declared import data, declare
from ..declared import path as path_option
from ..errors import InputError
from ..model import Qrels, Run
from .files import BOM, read_bytes
from .scan import DECIMAL, INT64_LIMIT, INTEGER, scan

PathLike = str | os.PathLike[str]


def read_trec_qrels(path: PathLike, *, fast: bool | None = None, subtopics: bool = False) -> Qrels:
    """Read a TREC qrels file into :class:`Qrels` (:func:`ranklens.read_qrels` picks the
    reader by the file's suffix). ``fast=False`` reads with the line parser only (the
    vectorised scanner of :mod:`ranklens.io.scan` is tried first otherwise).

    ``subtopics=True`` reads diversity qrels (``topic subtopic docno judgment``, as ndeval
    does): the second field is the subtopic, a document may be judged once per subtopic,
    and each subtopic is an intent for the diversity measures
    (:meth:`Qrels.from_subtopics`)."""
    p = Path(path)
    if subtopics:
        return _read_subtopics(p)
    got = scan(p, 4, 0, [2], [(3, "int")]) if fast is not False else None
    if got is not None:
        try:
            qcode, query_vocab = got["q"]
            return Qrels.from_parsed(qcode, query_vocab, got["ids"][0], got["nums"][0], str(p))
        except InputError:
            pass  # let the line parser name the line
    qids, docs, grades, linenos = [], [], [], []
    for lineno, fields in _lines(p):
        if len(fields) != 4:
            swapped = (
                "; it looks like a run line (qid Q0 docno rank score tag): were the labels "
                "and the run given the other way round?"
                if len(fields) == 6
                else ""
            )
            raise InputError(
                f"{p}:{lineno}: expected 4 fields (qid iter docno rel), found {len(fields)}"
                + swapped
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
                f"(lines {linenos[seen[key]]} and {linenos[i]}); for diversity qrels "
                "(topic subtopic docno judgment) read with subtopics=True (--subtopics)"
            )
        seen[key] = i
    return Qrels.from_arrays(qids, docs, np.asarray(grades, dtype=np.int64), source=str(p))


def _read_subtopics(p: Path) -> Qrels:
    qids, subs, docs, grades = _second_column_rows(p, "subtopic")
    return Qrels.from_subtopics(rows=(qids, subs, docs, grades), source=str(p))


READ_JUDGMENT_GROUPS = declare("read_judgment_groups", {
    "path": path_option(None, "trec_eval's qrels_jg file (qid jg docno rel)"),
})  # fmt: skip
WRITE_QRELS = declare("write_qrels", {
    "qrels": data("plain (ungrouped) labels"),
    "path": path_option(None, "the TREC qrels file to write"),
})  # fmt: skip


@READ_JUDGMENT_GROUPS.checks
def read_judgment_groups(path: PathLike) -> dict[str, Qrels]:
    """Read trec_eval's ``qrels_jg`` file (``-R qrels_jg``): ``qid jg docno rel``, where
    the second field names the judgment group (one assessor's set of judgments). Returns
    ``{judgment group: Qrels}`` in the order groups first appear; a document judged twice
    by one group for one query is an error naming both lines."""
    p = Path(path)
    qids, jgs, docs, grades = _second_column_rows(p, "judgment group")
    rows: dict[str, tuple[list[str], list[str], list[int]]] = {}
    for q, jg, d, g in zip(qids, jgs, docs, grades):
        cols = rows.setdefault(jg, ([], [], []))
        cols[0].append(q)
        cols[1].append(d)
        cols[2].append(g)
    return {
        jg: Qrels.from_arrays(q, d, np.asarray(g, dtype=np.int64), source=f"{p} (group {jg})")
        for jg, (q, d, g) in rows.items()
    }


def _second_column_rows(p: Path, second: str) -> tuple[list[str], list[str], list[str], list[int]]:
    """The columns of a ``qid <second> docno rel`` file; a document judged twice under one
    query and ``second`` is an error naming both lines."""
    cols: tuple[list[str], list[str], list[str], list[int]] = ([], [], [], [])
    where: dict[tuple[str, str, str], int] = {}
    for lineno, fields in _lines(p):
        if len(fields) != 4:
            raise InputError(
                f"{p}:{lineno}: expected 4 fields (qid {second.replace(' ', '_')} docno "
                f"judgment), found {len(fields)}"
            )
        qid, sub, doc = (
            _text(p, lineno, fields[i], w) for i, w in ((0, "qid"), (1, second), (2, "docno"))
        )
        first = where.setdefault((qid, sub, doc), lineno)
        if first != lineno:
            raise InputError(
                f"{p}: document {doc!r} is judged twice for {second} {sub!r} of query {qid!r} "
                f"(lines {first} and {lineno})"
            )
        cols[0].append(qid)
        cols[1].append(sub)
        cols[2].append(doc)
        cols[3].append(_int(p, lineno, fields[3], doc))
    if not cols[0]:
        raise InputError(f"{p}: no qrels lines (the file is empty or only comments)")
    return cols


def read_trec_run(path: PathLike, name: str | None = None, *, fast: bool | None = None) -> Run:
    """Read a TREC run file into a :class:`Run`.

    The run's name is ``name``, else the run_id of the last line (as trec_eval), else the
    file name. ``fast``: as for :func:`read_trec_qrels`.
    """
    p = Path(path)
    got = scan(p, 6, 0, [2], [(4, "float")], more_fields=True) if fast is not False else None
    if got is not None:
        try:
            return Run.from_arrays(
                (), (), got["nums"][0], source=str(p),
                name=name or _text(p, 0, got["last"], "run_id"),
                encoded=(*got["q"], got["ids"][0], None),
            )  # fmt: skip
        except InputError:
            pass
    qids, docs, scores = [], [], []
    run_id = b""
    for lineno, fields in _lines(p):
        if len(fields) < 6:
            swapped = (
                "; it looks like a qrels line (qid 0 docno grade): were the labels and the "
                "run given the other way round?"
                if len(fields) == 4
                else ""
            )
            raise InputError(
                f"{p}:{lineno}: expected 6 fields (qid iter docno rank sim "
                f"run_id), found {len(fields)}" + swapped
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
    value = int(raw) if INTEGER.match(raw) else None
    if value is None or not -INT64_LIMIT <= value < INT64_LIMIT:
        shown = raw.decode("utf-8", "replace")
        why = "is not an integer" if value is None else "is out of range"
        raise InputError(f"{p}:{lineno}: relevance {shown!r} of document {doc!r} {why}")
    return value


def _float(p: Path, lineno: int, raw: bytes, doc: str) -> float:
    value = float(raw) if DECIMAL.match(raw) else None
    if value is None or value in (float("inf"), float("-inf")):
        shown = raw.decode("utf-8", "replace")
        raise InputError(
            f"{p}:{lineno}: score {shown!r} of document {doc!r} is not a finite decimal number"
        )
    return value


@WRITE_QRELS.checks
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
