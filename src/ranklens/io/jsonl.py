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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..qrels import Qrels
from ..runs import Run
from ._files import open_text, read_text

_QID_KEYS = ("query_id", "qid", "id")


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object")
            yield lineno, rec


def _qid(path: Path, lineno: int, rec: dict[str, Any]) -> str:
    for key in _QID_KEYS:
        if key in rec:
            value = rec[key]
            if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
                return str(value)
            raise InputError(f"{path}:{lineno}: field {key!r} must be a non-empty string")
    raise InputError(f"{path}:{lineno}: missing field 'query_id'")


def _load_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None


def read_qrels_json(path: str | Path) -> Qrels:
    """Read qrels from a ``.json`` object or a ``.jsonl`` file (see the module docstring)."""
    p = Path(path)
    if not p.name.lower().split(".gz")[0].endswith(".jsonl"):
        data = _load_json(p)
        if not isinstance(data, Mapping):
            raise InputError(f"{p}: expected a JSON object of query -> labels")
        return Qrels.coerce(data)
    labels: dict[str, Any] = {}
    groups: dict[str, Any] = {}
    grades: dict[str, Any] = {}
    for lineno, rec in _records(p):
        qid = _qid(p, lineno, rec)
        if qid in labels or qid in groups:
            raise InputError(f"{p}:{lineno}: query {qid!r} appears on more than one line")
        if "groups" in rec:
            g = rec["groups"]
            if not isinstance(g, list) or not all(isinstance(x, (list, str)) for x in g):
                raise InputError(f"{p}:{lineno}: field 'groups' must be a list of lists of ids")
            groups[qid] = g
            if "grades" in rec:
                grades[qid] = rec["grades"]
        elif "relevant" in rec:
            r = rec["relevant"]
            if not isinstance(r, (dict, list)):
                raise InputError(f"{p}:{lineno}: field 'relevant' must be an object or a list")
            labels[qid] = r
        else:
            raise InputError(f"{p}:{lineno}: missing field 'relevant' (or 'groups')")
    if groups and labels:
        for qid, r in labels.items():
            groups[qid] = [[d] for d in r]
            if isinstance(r, dict):
                grades[qid] = list(r.values())
        return Qrels.from_groups(groups, grades or None)
    if groups:
        return Qrels.from_groups(groups, grades or None)
    return Qrels.from_dict(labels)


def read_run_json(path: str | Path, name: str | None = None) -> Run:
    """Read a run from a ``.json`` object or a ``.jsonl`` file (see the module docstring)."""
    p = Path(path)
    run_name = name or p.name.split(".")[0]
    if not p.name.lower().split(".gz")[0].endswith(".jsonl"):
        data = _load_json(p)
        if not isinstance(data, Mapping):
            raise InputError(f"{p}: expected a JSON object of query -> hits")
        return Run.from_dict(data, name=run_name)
    scored: dict[str, list[tuple[str, float]]] = {}
    ranked: dict[str, list[str]] = {}
    for lineno, rec in _records(p):
        qid = _qid(p, lineno, rec)
        hits = rec.get("hits", rec.get("docs"))
        if not isinstance(hits, list):
            raise InputError(f"{p}:{lineno}: field 'hits' must be a list")
        if qid in scored or qid in ranked:
            raise InputError(f"{p}:{lineno}: query {qid!r} appears on more than one line")
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
            grades: dict[str, list[int]] = {str(q): [] for q in qrels.query_ids}
            last = -1
            for qc, u, g in zip(qrels.q.tolist(), qrels.unit.tolist(), qrels.grade.tolist()):
                if u != last:
                    grades[qrels.query_ids[qc]].append(g)
                    last = u
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
