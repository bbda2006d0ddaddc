"""JSON and JSONL qrels and runs.

JSON: a single object, ``{query: {doc: grade}}`` (qrels; a list of documents or of groups
also works, see :meth:`ranklens.Qrels.coerce`) or ``{query: {doc: score}}`` /
``{query: [doc, ...]}`` (run).

JSONL, one query per line:

* qrels: ``{"query_id": "q1", "relevant": {"d1": 2, "d2": 1}}``, or ``"relevant":
  ["d1", "d2"]`` (grade 1), or grouped ``"groups": [["d1", "d2"], ["d3"]]`` with optional
  ``"grades": [2, 1]``;
* run: ``{"query_id": "q1", "hits": [{"id": "d1", "score": 3.2}, ...]}`` or ``"hits":
  ["d1", "d2"]`` (ranked, no scores).

``qid`` and ``id`` are accepted for ``query_id``. A malformed line is an error naming the
file, line and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import Qrels, Run
from .records import LabelFields, json_records, load_json, record_query_id


def read_qrels_json(path: str | Path) -> Qrels:
    """Read qrels from a ``.json`` object or a ``.jsonl`` file (see the module docstring)."""
    p = Path(path)
    if not p.name.lower().split(".gz")[0].endswith(".jsonl"):
        data = load_json(p)
        if not isinstance(data, Mapping):
            raise InputError(f"{p}: expected a JSON object of query -> labels")
        return Qrels.coerce(data)
    fields = LabelFields(p)
    for lineno, rec in json_records(p):
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
    return run_from_records(p, json_records(p), run_name)


def run_from_records(
    p: Path, records: Iterable[tuple[int, dict[str, Any]]], run_name: str,
    lines: dict[str, int] | None = None,
) -> Run:  # fmt: skip
    """A run from JSONL run records (``(line number, object)``); ``lines``, when given,
    receives each query's line number."""
    scored: dict[str, list[tuple[str, float]]] = {}
    ranked: dict[str, list[str]] = {}
    for lineno, rec in records:
        qid = record_query_id(p, lineno, rec)
        hits = rec.get("hits", rec.get("docs"))
        if not isinstance(hits, list):
            raise InputError(f"{p}:{lineno}: field 'hits' must be a list")
        if qid in scored or qid in ranked:
            raise InputError(f"{p}:{lineno}: query {qid!r} appears on more than one line")
        if lines is not None:
            lines[qid] = lineno
        if hits and isinstance(hits[0], dict):
            row = []
            for j, h in enumerate(hits):
                if not isinstance(h, dict) or "id" not in h:
                    raise InputError(f"{p}:{lineno}: hit {j} needs an 'id' field")
                score = h.get("score")
                if not isinstance(score, (int, float)) or isinstance(score, bool):
                    raise InputError(f"{p}:{lineno}: hit {j} ({h['id']!r}) needs a numeric 'score'")
                row.append((h["id"], float(score)))
            scored[qid] = row
        else:
            ranked[qid] = hits
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
