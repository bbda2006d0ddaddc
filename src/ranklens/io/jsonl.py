"""JSON and JSONL qrels and runs.

JSON: a single object, ``{query: {doc: grade}}`` (qrels; a list of documents or of groups
also works, see :meth:`ranklens.Qrels.coerce`) or ``{query: {doc: score}}`` /
``{query: [doc, ...]}`` (run).

JSONL, one query per line:

* qrels: ``{"query_id": "q1", "relevant": {"d1": 2, "d2": 1}}``, or ``"relevant":
  ["d1", "d2"]`` (grade 1), or grouped ``"groups": [["d1", "d2"], ["d3"]]`` with optional
  ``"grades": [2, 1]``;
* run: ``{"query_id": "q1", "hits": [{"id": "d1", "score": 3.2}, ...]}`` or ``"hits":
  ["d1", "d2"]`` (ranked, no scores); a run of chunks for span labels gives each hit its
  ``doc_id``, ``start`` and ``end`` (and optionally ``id``, ``score``, ``text``).

``qid`` and ``id`` are accepted for ``query_id``. A malformed line is an error naming the
file, line and field. A log written by ``ranklens.run_retriever(..., cache=PATH)`` reads as
a run too (:func:`run_from_log`: each query's last line; failed queries recorded as failures).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import Qrels, Run
from ..text import shown
from .records import LabelFields, field_name, json_records, load_json, record_query_id


def read_qrels_json(path: str | Path) -> Qrels:
    """Read qrels from a ``.json`` object or a ``.jsonl`` file (see the module docstring)."""
    p = Path(path)
    if not p.name.lower().split(".gz")[0].endswith(".jsonl"):
        data = load_json(p)
        if not isinstance(data, Mapping):
            raise InputError(f"{p}: expected a JSON object of query -> labels")
        return Qrels.coerce(data)
    fields = LabelFields(p)
    records = list(json_records(p))
    if records and field_name(records[0][1], "evidence") is not None:  # span labels
        from .datasets import read_jsonl_dataset

        return read_jsonl_dataset(p).qrels
    for lineno, rec in records:
        fields.add(lineno, record_query_id(p, lineno, rec), rec)
    return fields.qrels()


def read_run_json(path: str | Path, name: str | None = None) -> Run:
    """Read a run from a ``.json`` object or a ``.jsonl`` file (see the module docstring)."""
    p = Path(path)
    run_name = name or p.name.split(".")[0]
    if not p.name.lower().split(".gz")[0].endswith(".jsonl"):
        data = load_json(p)
        if not isinstance(data, Mapping):
            raise InputError(f"{p}: expected a JSON object of query -> hits")
        return Run.from_dict(data, name=run_name)
    if is_run_log(p):
        return run_from_log(p, name)
    return run_from_records(p, json_records(p), run_name)


def is_run_log(path: Path) -> bool:
    """Whether ``path`` is a log written by ``ranklens.run_retriever(..., cache=...)`` (its first
    line is the header holding the configuration)."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 20)
        return bool(json.loads(first).get("type") == "header")
    except (OSError, ValueError, AttributeError):
        return False


def run_from_log(p: Path, name: str | None = None) -> Run:
    """The run a runner's log holds: each query's last line (a resumed run appends), its
    documents in the retriever's order; failed queries are recorded as failures (scored
    0 as missing, and counted, as for the runner's own result). The name is ``name``, the
    retriever's name in the header, or the file's."""
    records = json_records(p)
    _, header = next(records)
    last: dict[str, tuple[int, dict[str, Any]]] = {}
    for lineno, rec in records:
        if rec.get("type") != "query":
            continue
        last[record_query_id(p, lineno, rec)] = (lineno, rec)
    ranked: dict[str, list[str]] = {}
    chunks: dict[str, list[dict[str, Any]]] | None = {}
    failures: dict[str, dict[str, Any]] = {}
    for qid, (lineno, rec) in last.items():
        if rec.get("error"):
            failures[qid] = dict(rec["error"])
            continue
        docs = rec.get("doc_ids")
        if not isinstance(docs, list):
            raise InputError(f"{p}:{lineno}: field 'doc_ids' must be a list")
        ranked[qid] = [str(d) for d in docs]
        if chunks is not None:
            placed = _placed(docs, rec.get("hits"))
            if placed is None:
                chunks = None  # a query without chunk positions: a run of documents
            else:
                chunks[qid] = placed
    retriever = (header.get("config") or {}).get("retriever") or {}
    label = name or retriever.get("name") or p.name.split(".")[0]
    if chunks and any(chunks.values()):  # every hit placed in its document: a run of chunks
        run = Run.from_chunks(chunks, name=str(label), ranked=True)
    else:
        run = Run.from_dict(ranked, name=str(label))
    run.failures = failures
    return run


def _placed(docs: list[Any], hits: Any) -> list[dict[str, Any]] | None:
    """A logged query's chunks (each hit's document, offsets and text, under the id the
    runner recorded for it), or None when a hit carries no place in a document (the log
    then reads as a run of documents, as it always did)."""
    if not isinstance(hits, list) or len(hits) != len(docs):
        return None
    out = []
    for doc, h in zip(docs, hits):
        if not isinstance(h, Mapping) or h.get("parent") is None or h.get("start") is None:
            return None
        out.append(
            {"id": str(doc), "doc_id": h["parent"], "start": h.get("start"),
             "end": h.get("end"), "text": h.get("text"), "chars": h.get("chars")}
        )  # fmt: skip
    return out


def run_from_records(
    p: Path, records: Iterable[tuple[int, dict[str, Any]]], run_name: str,
    lines: dict[str, int] | None = None,
) -> Run:  # fmt: skip
    """A run from JSONL run records (``(line number, object)``); ``lines``, when given,
    receives each query's line number."""
    scored: dict[str, list[tuple[str, float]]] = {}
    ranked: dict[str, list[str]] = {}
    chunks: dict[str, list[dict[str, Any]]] = {}
    for lineno, rec in records:
        if rec.get("type") == "header":
            raise InputError(
                f"{p}:{lineno}: a ranklens run log: read it whole with ranklens.read_run or "
                "ranklens.evaluate (it is not streamed in chunks)"
            )
        qid = record_query_id(p, lineno, rec)
        hits = rec.get("hits", rec.get("docs"))
        if not isinstance(hits, list):
            raise InputError(f"{p}:{lineno}: field 'hits' must be a list")
        if qid in scored or qid in ranked:
            raise InputError(f"{p}:{lineno}: query {qid!r} appears on more than one line")
        if lines is not None:
            lines[qid] = lineno
        if (
            hits
            and isinstance(hits[0], dict)
            and any(k in hits[0] for k in ("start", "doc_id", "doc"))
        ):  # chunks with their source document and range: a run for span labels
            if qid in chunks:
                raise InputError(f"{p}:{lineno}: query {qid!r} appears on more than one line")
            chunks[qid] = [_chunk(p, lineno, j, h) for j, h in enumerate(hits)]
            continue
        if hits and isinstance(hits[0], dict):
            row = []
            for j, h in enumerate(hits):
                if not isinstance(h, dict) or "id" not in h:
                    raise InputError(f"{p}:{lineno}: hit {j} needs an 'id' field")
                score = h.get("score")
                if not isinstance(score, (int, float)) or isinstance(score, bool):
                    raise InputError(f"{p}:{lineno}: hit {j} ({h['id']!r}) needs a numeric 'score'")
                try:
                    value = float(score)
                except OverflowError:  # an integer beyond the float range
                    value = float("inf")
                if not math.isfinite(value):
                    raise InputError(
                        f"{p}:{lineno}: hit {j} ({h['id']!r}): score {shown(score)} is not a "
                        "finite number"
                    )
                row.append((h["id"], value))
            scored[qid] = row
        else:
            ranked[qid] = hits
    if chunks:
        if scored or any(ranked.values()):
            raise InputError(f"{p}: some queries list chunks with positions and others do not")
        return Run.from_chunks(chunks, name=run_name)
    if scored and ranked:
        nonempty = [q for q, v in ranked.items() if v]
        if nonempty:
            raise InputError(f"{p}: query {nonempty[0]!r} lists plain ids while others have scores")
        scored.update({q: [] for q in ranked})
    return Run.from_dict(scored if scored else ranked, name=run_name)


def write_qrels_jsonl(qrels: Qrels, path: str | Path) -> None:
    """Write qrels as JSONL (``relevant`` for plain labels, ``groups`` for grouped)."""
    with open(path, "w", encoding="utf-8") as fh:
        if qrels.grouped:
            groups = qrels.to_groups()
            grades = qrels.group_grades()
            for q, glist in groups.items():
                fh.write(json.dumps({"query_id": q, "groups": glist, "grades": grades[q]}) + "\n")
        else:
            for q, labels in qrels.to_dict().items():
                fh.write(json.dumps({"query_id": q, "relevant": labels}) + "\n")


def write_run_jsonl(run: Run, path: str | Path) -> None:
    """Write a run as JSONL, each query's hits in ranking order."""
    with open(path, "w", encoding="utf-8") as fh:
        for q, hits in run.to_dict().items():
            fh.write(
                json.dumps(
                    {"query_id": q, "hits": [{"id": d, "score": s} for d, s in hits.items()]}
                )
                + "\n"
            )


def _chunk(p: Path, lineno: int, j: int, h: Any) -> dict[str, Any]:
    """One chunk of a JSONL run line: ``id``, ``doc_id`` (or ``doc``), ``start``/``end``
    (or null), optional ``score`` and ``text``."""
    if not isinstance(h, dict):
        raise InputError(f"{p}:{lineno}: hit {j} must be an object like the line's first")
    doc = h.get("doc_id", h.get("doc"))
    out = {"id": h.get("id"), "doc_id": None if doc is None else str(doc), "text": h.get("text")}
    for end in ("start", "end"):
        v = h.get(end)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise InputError(f"{p}:{lineno}: hit {j}: {end!r} must be an integer or null")
        out[end] = v
    if h.get("score") is not None:
        if isinstance(h["score"], bool) or not isinstance(h["score"], (int, float)):
            raise InputError(f"{p}:{lineno}: hit {j}: 'score' must be a number")
        out["score"] = h["score"]
    return out
