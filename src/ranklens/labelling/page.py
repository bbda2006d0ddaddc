"""The judging page: one self-contained HTML file (no network, no server) that shows each
pool pair's query and passage, takes a grade from a key press or a click, keeps the
judgments in the browser (``localStorage``: a reload resumes where it stopped), undoes,
and exports the judgments as TREC qrels or JSONL (with their source) for
:func:`read_judgments`.

Every user string reaches the page as JSON inside a ``<script type="application/json">``
block (``<``, ``>``, ``&`` and the line separators written as ``\\uXXXX``) and is put on the
page with ``textContent``: ids, queries and passages are shown as text, never run."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path

from ..declared import choice, data, declare, items, mapping, path, text
from ..errors import InputError
from ..escape import html
from ..io import read_qrels
from ..io.records import json_records
from ..model import Qrels
from ..text import script_json
from .pool import LabelPool, PoolPair

DEFAULT_LABELS = {0: "not relevant", 1: "related", 2: "relevant", 3: "perfect"}
BINARY_LABELS = {0: "not relevant", 1: "relevant"}


JUDGING_PAGE = declare("judging_page", {
    "pool": data("a LabelPool, its pairs, or its JSONL file"),
    "path": path(None, "the HTML page to write (None: only returned)", none=True),
    "grades": items((0, 1, 2, 3), (int,), "distinct whole numbers 0-9",
                    "the grades offered (a key each)", also=choice(None, ("binary",)),
                    check=lambda g: len(set(g)) == len(g) and all(0 <= x <= 9 for x in g),
                    rule="distinct, 0-9"),
    "labels": mapping(None, "a word per grade", none=True, empty=True),
    "title": text(None, "the page's title", none=True),
    "source": text("human", "the provenance written in the JSONL export"),
})  # fmt: skip
READ_JUDGMENTS = declare("read_judgments", {
    "path": path(None, "the page's JSONL export, or TREC qrels"),
    "source": text(None, "the provenance of TREC qrels' judgments (default 'human')", none=True),
})  # fmt: skip


@JUDGING_PAGE.checks
def judging_page(
    pool: LabelPool | Iterable[PoolPair] | str | Path,
    path: str | Path | None = None,
    *,
    grades: Iterable[int] | str = (0, 1, 2, 3),
    labels: Mapping[int, str] | None = None,
    title: str | None = None,
    source: str = "human",
) -> str:
    """The judging page for ``pool`` (a LabelPool, its pairs, or its JSONL file) as HTML;
    written to ``path`` when given.

    ``grades``: the grades offered (keys ``0``-``9``), or ``"binary"`` for 0/1;
    ``labels``: a word per grade (default: not relevant, related, relevant, perfect);
    ``source``: the provenance written in the JSONL export. The page keeps its judgments
    in the browser under a key made from the pool, so a reload resumes.
    """
    if isinstance(pool, (str, Path)):
        pool = LabelPool.from_jsonl(pool)
    pairs = list(pool)
    if grades == "binary":
        grades = (0, 1)
        labels = labels or BINARY_LABELS
    offered = [int(g) for g in grades]
    if not offered or len(set(offered)) != len(offered) or not all(0 <= g <= 9 for g in offered):
        raise InputError(f"grades must be distinct whole numbers 0-9 (one key each), got {offered}")
    names = {**DEFAULT_LABELS, **dict(labels or {})}
    payload = [p.to_json() for p in pairs]
    key = hashlib.sha256(json.dumps([[p.query_id, p.doc_id] for p in pairs]).encode()).hexdigest()
    title = title or f"Judge {len(pairs)} pairs"
    data = {
        "pairs": payload,
        "grades": offered,
        "labels": {str(g): names.get(g, "") for g in offered},
        "title": title,
        "source": source,
        "key": f"ranklens-judge-{key[:16]}",
        "file": "judgments",
    }
    template = (resources.files(__package__) / "assets" / "judge.html").read_text("utf-8")
    fill = {"__TITLE__": html(title), "__DATA__": script_json(data)}
    page = re.sub("__TITLE__|__DATA__", lambda m: fill[m.group()], template)  # one pass
    if path is not None:
        Path(path).write_text(page, encoding="utf-8")
    return page


@READ_JUDGMENTS.checks
def read_judgments(path: str | Path, source: str | None = None) -> Qrels:
    """Judgments exported from the page (or written by hand): JSONL lines with
    ``query_id``, ``doc_id``, ``grade`` and optionally ``source``, or TREC qrels (then
    ``source``, default ``"human"``, names them all). Returns Qrels whose ``sources`` hold
    each judgment's provenance; a bad line is an error naming the file and line."""
    path = Path(path)
    first = ""
    with path.open(encoding="utf-8-sig") as f:
        for line in f:
            if line.strip():
                first = line.strip()
                break
    if not first.startswith("{"):
        qrels = read_qrels(path)
        return Qrels.merge(qrels, sources=[source or "human"])
    q_ids, d_ids, g, origin = [], [], [], {}
    for n, obj in json_records(path):
        where = f"{path}:{n}"
        for fld in ("query_id", "doc_id"):
            if not isinstance(obj.get(fld), str) or not obj[fld]:
                raise InputError(f"{where}: field {fld!r} must be a non-empty string")
        grade = obj.get("grade")
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise InputError(f"{where}: field 'grade' must be an integer, got {grade!r}")
        key = (obj["query_id"], obj["doc_id"])
        if key in origin:
            raise InputError(f"{where}: pair {key} is judged twice")
        q_ids.append(key[0])
        d_ids.append(key[1])
        g.append(grade)
        origin[key] = str(obj.get("source") or source or "human")
    qrels = Qrels.from_arrays(q_ids, d_ids, g, source=str(path))
    qrels.sources = origin
    return qrels
