"""The report's drill-down on span labels: each run's top k chunks of a query with the
evidence they hold highlighted, the evidence each run missed, and where the chunks stand.

Text is kept once, as offsets into shared pieces of the documents: every range shown (a
chunk, a span) is an offset range into its source document, and ``pieces`` holds, per
document, the union of those ranges as ``[start, text]`` pieces, so overlapping chunks of
several runs share their text. A chunk longer than :data:`WHOLE` characters keeps its first
:data:`HEAD` characters and each piece of evidence it holds with :data:`CONTEXT` characters
either side (the page shows the gaps as elisions); a missed span keeps its first
:data:`QUOTE` characters. Offsets are code points (Python string indices).

Layout (``Report.metadata["drilldown"]``; lists aligned with ``query_ids``), beside the
keys every drill-down has (``depth``, ``docs``: every id shown, an index table; ``top[run]
[i]``: the chunk ids of the top ``depth``; ``texts``, ``labels`` and ``found`` are left
empty):

* ``spans[i]``: ``[[doc index, start, end, grade, group], ...]``, the query's evidence
  spans in document and offset order (``group``: the unit within the query; a group's
  spans are alternatives);
* ``place[run][i]``: per chunk of ``top``, ``[doc index or -1, start, end, how]`` after
  placing (``how``: 0 offsets as given, 1 found by its text, 2 moved where its text stands,
  3 no place: it finds no evidence);
* ``grade[run][i]``: per chunk, its grade (None: unjudged);
* ``first[run][i]``: ``[[span index, rank], ...]``, the first rank at which a chunk finds
  each span (at any depth);
* ``pieces``: ``{doc index: [[start, text], ...]}``; ``own``: ``{chunk index: text}``, a
  chunk's own text where its document's text is not known (it is not placed, or the labels
  carry no texts);
* ``overlap``: the overlap rule (:func:`.evidence.rule_text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..judging.overlap import OverlapRule, get_rule
from ..model import Run
from ..model.spans import SpanLabels
from .drilldown import doc_table
from .evidence import Evidence, find_evidence, rule_text

WHOLE = 1000
"""A chunk up to this many characters is kept whole."""
HEAD = 300
"""A longer chunk keeps its first characters..."""
CONTEXT = 150
"""...and each piece of evidence it holds with this many characters either side."""
QUOTE = 400
"""Characters kept of an evidence span."""
HOW = {"given": 0, "found": 1, "moved": 2, "": 3}


def span_drilldown(
    labels: SpanLabels,
    runs: Mapping[str, Run],
    query_ids: list[str],
    depth: int = 10,
    rule: OverlapRule | str | None = None,
    score_precision: str = "float64",
    placement: str = "unique",
) -> dict[str, Any]:
    """The drill-down table (see the module docstring) of ``runs`` on ``query_ids``, each
    chunk found by its text placed as the convention's ``placement`` says."""
    rule = get_rule(rule)
    docs, at = doc_table()

    ev = Evidence.of(labels, query_ids)
    texts = labels.texts or {}
    keep: dict[str, list[tuple[int, int]]] = {}  # document -> ranges whose text is kept
    spans = []
    for rows in ev.rows:
        spans.append([[at(r["doc_id"]), r["start"], r["end"], r["grade"], r["group"]]
                      for r in rows])  # fmt: skip
        for r in rows:
            if r["doc_id"] in texts:
                keep.setdefault(r["doc_id"], []).append((r["start"], min(r["end"],
                                                          r["start"] + QUOTE)))  # fmt: skip
    top: dict[str, list[list[int]]] = {}
    place: dict[str, list[list[list[int]]]] = {}
    grade: dict[str, list[list[int | None]]] = {}
    first: dict[str, list[list[list[int]]]] = {}
    own: dict[str, str] = {}
    for name, run in runs.items():
        found = find_evidence(ev, run, depth, rule, score_precision, placement)
        top[name] = [[at(c.id) for c in cs] for cs in found.top]
        place[name] = [[[at(c.doc) if c.doc is not None else -1, c.start, c.end, HOW[c.how]]
                        for c in cs] for cs in found.top]  # fmt: skip
        grade[name] = [[c.grade for c in cs] for cs in found.top]
        first[name] = [[[j, r] for j, r in sorted(f.items())] for f in found.first]
        for i, cs in enumerate(found.top):
            for c in cs:
                if c.placed and c.doc is not None and c.doc in texts:
                    keep.setdefault(c.doc, []).extend(_shown(c.start, c.end, ev.rows[i], c.doc))
                elif c.text:
                    own.setdefault(str(at(c.id)), c.text[:WHOLE])
    pieces = {
        str(at(doc)): [[s, texts[doc][s:e]] for s, e in _union(ranges)]
        for doc, ranges in keep.items()
    }
    n = len(query_ids)
    return {
        "depth": depth,
        "docs": docs,
        "texts": {},
        "labels": [[] for _ in range(n)],
        "top": top,
        "found": {name: [[] for _ in range(n)] for name in runs},
        "spans": spans,
        "place": place,
        "grade": grade,
        "first": first,
        "pieces": pieces,
        "own": own,
        "overlap": rule_text(rule),
    }


def _shown(a: int, b: int, spans: list[dict[str, Any]], doc: str) -> list[tuple[int, int]]:
    """The ranges of chunk ``[a, b)`` whose text is kept (module docstring)."""
    if b - a <= WHOLE:
        return [(a, b)]
    out = [(a, a + HEAD)]
    for r in spans:
        if r["doc_id"] == doc and r["start"] < b and r["end"] > a:
            out.append((max(a, r["start"] - CONTEXT), min(b, r["end"] + CONTEXT)))
    return out


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, merged ranges (touching ones joined)."""
    out: list[list[int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]
