"""Document versions from files: :func:`read_versions` reads a JSONL file (one object per
document, such as a BEIR ``corpus.jsonl`` whose records or ``metadata`` carry the fields)
or a CSV/TSV file (one row per document) into a :class:`~ranklens.Versions` table.

Fields (named by the caller when the file uses other names): the document id (``doc_id``,
``_id`` or ``id``), ``valid_from`` (``time=``), ``group``, ``supersedes`` and
``superseded_at``; times are ISO 8601 (``2024-05-01``, ``2024-05-01T09:30:00Z``) or
seconds since 1970. Errors name the file, the document and the fix.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ..declared import declare, path
from ..errors import InputError
from ..model.times import TzLike
from ..model.versions import FIELDS, Versions
from ..model.versions_build import lookup
from .files import open_text, read_errors
from .records import json_records

READ_VERSIONS = declare("read_versions", {
    "path": path(None, "a JSONL or CSV/TSV file, one document per record"),
    **FIELDS,
})  # fmt: skip


@READ_VERSIONS.checks
def read_versions(
    path: str | Path,
    *,
    time: str = "valid_from",
    group: str = "group",
    supersedes: str = "supersedes",
    superseded_at: str = "superseded_at",
    doc_id: str | None = None,
    tz: TzLike = None,
    unlisted: str = "undated",
) -> Versions:
    """The versions table of a JSONL or CSV/TSV file (see the module docstring); each
    field is read from the record, else from its ``metadata`` (so a corpus file with dates
    in its documents' metadata is a versions file)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such versions file")
    names = (time, group, supersedes, superseded_at)
    records: list[dict[str, Any]] = []
    suffix = p.name.lower().removesuffix(".gz")
    if suffix.endswith((".csv", ".tsv")):
        with open_text(p, newline="") as fh, read_errors(p):
            reader = csv.DictReader(fh, delimiter="\t" if suffix.endswith(".tsv") else ",")
            records = [dict(row) for row in reader]
    else:
        for lineno, rec in json_records(p):
            out: dict[str, Any] = {k: rec[k] for k in ("doc_id", "_id", "id") if k in rec}
            if doc_id is not None:
                out[doc_id] = lookup(rec, doc_id)
            out.update({n: lookup(rec, n) for n in names})
            if not any(out.get(k) is not None for k in (doc_id, "doc_id", "_id", "id") if k):
                raise InputError(f"{p}:{lineno}: no document id (doc_id, _id or id)")
            records.append(out)
    return Versions.from_records(
        records,
        doc_id=doc_id,
        time=time,
        group=group,
        supersedes=supersedes,
        superseded_at=superseded_at,
        tz=tz,
        unlisted=unlisted,
        source=str(p),
    )
