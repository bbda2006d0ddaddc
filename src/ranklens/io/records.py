"""JSON and JSONL building blocks shared by every reader: records with line numbers, the
query-id field, and the one parser of label fields (``relevant`` / ``groups`` / ``grades``).

Each error names the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import Qrels
from .files import read_text, text_lines

DATASET_FIELDS: dict[str, tuple[tuple[str, ...], str]] = {
    "query_id": (("query_id", "qid", "id", "_id"), "the query's id (JSONL and CSV)"),
    "query": (("query", "text", "question"), "the query's text (JSONL and CSV)"),
    "relevant": (
        ("relevant", "relevant_docs"),
        'JSONL: {doc: grade} or [doc, ...] (grade 1), e.g. {"d1": 2, "d7": 0}',
    ),
    "groups": (
        ("groups", "retrieval_gt"),
        'JSONL: grouped truth, any one document of a group finds it: [["d1", "d2"], ["d3"]]',
    ),
    "grades": (("grades",), "JSONL, with groups: one grade per group (default 1)"),
    "evidence": (
        ("evidence", "spans"),
        'JSONL: evidence spans, [{"doc_id": "d1", "start": 120, "end": 171}, ...] (docs/spans.md)',
    ),
    "start": (("start", "start_index", "char_start"), "evidence: the span's first character"),
    "end": (("end", "end_index", "char_end"), "evidence: the character after its last"),
    "quote": (
        ("quote", "evidence_text"),
        "evidence: its quoted text (located in the document when there is no start/end; "
        'a JSONL evidence item may call it "text")',
    ),
    "doc_id": (("doc_id", "docno", "corpus_id", "corpus-id"), "CSV: a labelled document"),
    "grade": (("grade", "relevance", "score", "label"), "CSV: its grade (default 1)"),
    "group": (("group",), "CSV: rows of a query with one group number form one group"),
}
"""One schema for JSONL and CSV datasets: each field, the names it is read under (the
first found wins) and what it holds; docs/datasets.md shows this table
(:func:`dataset_fields_table`)."""

QUERY_ID_KEYS = DATASET_FIELDS["query_id"][0]
"""Fields read as a record's query id, first found wins."""


def field_name(present: Iterable[str], field: str) -> str | None:
    """The first of ``field``'s names (:data:`DATASET_FIELDS`) among ``present``."""
    have = set(present)
    return next((n for n in DATASET_FIELDS[field][0] if n in have), None)


def aliases(field: str) -> str:
    """``"'query' (or 'text', 'question')"`` for messages."""
    first, *rest = DATASET_FIELDS[field][0]
    return f"{first!r}" + (f" (or {', '.join(repr(r) for r in rest)})" if rest else "")


def dataset_fields_table() -> str:
    """:data:`DATASET_FIELDS` as a Markdown table (docs/datasets.md holds it; a test keeps
    them equal)."""
    lines = ["| field | read from | holds |", "|---|---|---|"]
    for name, (names, what) in DATASET_FIELDS.items():
        lines.append(f"| `{name}` | {', '.join(f'`{n}`' for n in names)} | {what} |")
    return "\n".join(lines) + "\n"


def json_records(
    path: Path, lines: Iterable[tuple[int, str]] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSONL file (or of ``lines``,
    ``(line number, text)`` pairs read from it)."""
    for lineno, line in text_lines(path) if lines is None else lines:
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
        except RecursionError:
            raise InputError(f"{path}:{lineno}: JSON nested too deeply") from None
        if not isinstance(rec, dict):
            raise InputError(f"{path}:{lineno}: expected a JSON object")
        yield lineno, rec


def record_query_id(path: Path, lineno: int, rec: dict[str, Any]) -> str:
    """The record's query id (:data:`QUERY_ID_KEYS`), a non-empty string."""
    for key in QUERY_ID_KEYS:
        if key in rec:
            value = rec[key]
            if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
                return str(value)
            raise InputError(f"{path}:{lineno}: field {key!r} must be a non-empty string")
    raise InputError(f"{path}:{lineno}: missing field {aliases('query_id')}")


def load_json(path: Path) -> Any:
    """A whole JSON document; invalid JSON names the file and line."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply") from None


class LabelFields:
    """Collects the label fields of JSONL records, one query a line, and builds the qrels.

    ``"relevant": {"d1": 2}`` or ``["d1", ...]`` (grade 1), or grouped ``"groups": [["d1",
    "d2"], ["d3"]]`` with optional ``"grades": [2, 1]``; plain and grouped lines may be
    mixed (a plain label then becomes a one-document group).
    """

    def __init__(self, path: Path):
        self.path = path
        self.labels: dict[str, Any] = {}
        self.groups: dict[str, Any] = {}
        self.grades: dict[str, Any] = {}

    def add(self, lineno: int, qid: str, rec: dict[str, Any]) -> None:
        """Read the label fields of one record (a query met twice is an error)."""
        p = self.path
        if qid in self.labels or qid in self.groups:
            raise InputError(f"{p}:{lineno}: query {qid!r} appears on more than one line")
        groups_key = field_name(rec, "groups")
        relevant_key = field_name(rec, "relevant")
        if groups_key is not None:
            g = rec[groups_key]
            if not isinstance(g, list) or not all(isinstance(x, (list, str)) for x in g):
                raise InputError(
                    f"{p}:{lineno}: field {groups_key!r} must be a list of lists of ids"
                )
            self.groups[qid] = g
            if "grades" in rec:
                self.grades[qid] = rec["grades"]
        elif relevant_key is not None:
            if "grades" in rec:
                raise InputError(
                    f"{p}:{lineno}: field 'grades' goes with 'groups' (give grades in "
                    "'relevant' as {doc: grade})"
                )
            r = rec[relevant_key]
            if not isinstance(r, (dict, list)):
                raise InputError(
                    f"{p}:{lineno}: field {relevant_key!r} must be an object or a list"
                )
            self.labels[qid] = r
        else:
            raise InputError(
                f"{p}:{lineno}: no labels: give {aliases('relevant')} or {aliases('groups')} "
                "(see docs/datasets.md)"
            )

    def qrels(self) -> Qrels:
        """The labels read so far."""
        if not self.groups:
            return Qrels.from_dict(self.labels)
        groups, grades = dict(self.groups), dict(self.grades)
        for qid, r in self.labels.items():
            groups[qid] = [[d] for d in r]
            if isinstance(r, dict):
                grades[qid] = list(r.values())
        return Qrels.from_groups(groups, grades or None)
