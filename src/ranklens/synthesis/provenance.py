"""The provenance table of a synthetic test set: one row per candidate question (kept or
dropped, and why) and per passage the generator failed on.

Each row keeps where a question came from: the source document (its id is the question's
label), the passage given to the generator (character offsets into the source text), the
evidence it was made from as ``(doc_id, start, end)`` character ranges plus the evidence
text, the generator's name and its raw output. :meth:`Provenance.to_labels` is the one
place that turns the table into ground truth: today id labels (the source document,
grade 1); evidence-span labels can be made there from the same rows.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io.records import json_records
from ..model import Qrels

STATUSES = (
    "kept",
    "failed",
    "junk",
    "empty",
    "preamble",
    "duplicate",
    "near_duplicate",
    "copies_passage",
    "ambiguous",
)
"""Every status a row can have: kept, or the reason it was dropped."""


@dataclass
class ProvenanceRow:
    """One candidate question (``query`` is None for a passage that gave none: ``failed``
    or ``junk``). ``passage``: ``[start, end]`` of the text given to the generator in the
    source document; ``evidence``: ``[[doc_id, start, end], ...]``; ``overlap``: how much
    of the question's word bigrams occur in its passage (containment); ``detail``: why it
    was dropped (the duplicate it repeats, the error, ...)."""

    query_id: str | None
    query: str | None
    doc_id: str
    passage: list[int]
    evidence: list[list[Any]]
    evidence_text: str
    generator: str
    raw: str
    status: str = "kept"
    detail: str = ""
    overlap: float | None = None
    evidence_located: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The row as plain data: its fields (``extra`` only when it holds something), one
        line of ``provenance.jsonl``."""
        out = asdict(self)
        if not out["extra"]:
            del out["extra"]
        return out

    def to_json(self) -> dict[str, Any]:
        """The same as :meth:`to_dict` (its first name)."""
        return self.to_dict()


class Provenance:
    """The rows of a synthesis, in passage order (see the module docstring)."""

    def __init__(self, rows: list[ProvenanceRow]):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[ProvenanceRow]:
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"Provenance({len(self.kept())} kept of {len(self.rows)} rows)"

    def kept(self) -> list[ProvenanceRow]:
        """The rows whose question is in the test set."""
        return [r for r in self.rows if r.status == "kept"]

    def counts(self) -> dict[str, int]:
        """Rows per status, every status listed (zeros included)."""
        c = Counter(r.status for r in self.rows)
        return {s: c.get(s, 0) for s in STATUSES}

    def row(self, query_id: str) -> ProvenanceRow:
        """The row of one question."""
        for r in self.rows:
            if r.query_id == query_id:
                return r
        raise KeyError(query_id)

    def to_labels(self) -> Qrels:
        """The ground truth of the kept questions: each question's source document, grade 1.
        The one place that reads the table as labels (span labels: from ``evidence``)."""
        kept = self.kept()
        return Qrels.from_arrays(
            [r.query_id for r in kept],
            [r.doc_id for r in kept],
            [1] * len(kept),
            source="synthesized",
        )

    def to_jsonl(self, path: str | Path) -> Path:
        """One JSON object per row (the fields of :class:`ProvenanceRow`)."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as f:
            for r in self.rows:
                f.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
        return path

    @classmethod
    def from_jsonl(cls, path: str | Path) -> Provenance:
        """Read a table written by :meth:`to_jsonl`; a bad line names the file and line."""
        path = Path(path)
        rows = []
        names = set(ProvenanceRow.__dataclass_fields__)
        for n, obj in json_records(path):
            unknown = set(obj) - names
            if (
                unknown
                or obj.get("status") not in STATUSES
                or not isinstance(obj.get("doc_id"), str)
            ):
                raise InputError(
                    f"{path}:{n}: not a provenance row (unknown fields {sorted(unknown)}, "
                    f"or no doc_id, or status {obj.get('status')!r} not one of {STATUSES})"
                )
            try:
                rows.append(ProvenanceRow(**obj))
            except TypeError as exc:
                raise InputError(f"{path}:{n}: {exc}") from None
        return cls(rows)

    def to_pandas(self) -> Any:
        """One row per candidate question or failed passage."""
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows])
