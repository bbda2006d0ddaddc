"""What :func:`~ranklens.reanchor` found: the new span labels and one row per span (where
it was, where it is, how it was found, whether the new labels keep it), counted and shown
as text, Markdown, pandas or JSON."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, require
from ..escape import markdown
from ..model.spans import SpanLabels
from ..text import clip, visible

STATUSES = ("unchanged", "moved", "normalised", "fuzzy", "ambiguous", "lost", "unverified")
"""How a span was found again, from the surest to not at all; ``unverified``: no old text
to check it with (its offsets fit the new document, so it is kept as it was)."""
SEVERITY = ("lost", "ambiguous", "fuzzy", "unverified", "normalised", "moved", "unchanged")
EXACT = ("unchanged", "moved", "normalised", "unverified")
COLUMNS = ("query_id", "doc_id", "old_start", "old_end", "new_start", "new_end", "status",
           "quality", "candidates", "kept", "note", "grade", "group", "text")  # fmt: skip


@dataclass
class Reanchored:
    """Span labels relocated in a new corpus (:func:`~ranklens.reanchor`).

    ``labels``: the new :class:`~ranklens.SpanLabels` (carrying the new texts), holding
    every kept span and every query of the old labels (a query whose spans were all left
    out stays, without evidence, so that evaluations count it instead of dropping it).
    ``rows``: one dict per span (:data:`COLUMNS`). ``settings``: what was asked.
    """

    labels: SpanLabels
    rows: list[dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, spans: Sequence[Mapping[str, Any]], placed: Sequence[Any],
              empty: Sequence[str], texts: Mapping[str, str], *, keep: str, strict: bool,
              settings: dict[str, Any]) -> Reanchored:  # fmt: skip
        """The rows and new labels from each span and where it was placed."""
        rows = []
        for r, p in zip(spans, placed):
            kept = (
                p.status in EXACT
                or (p.status == "fuzzy" and keep == "fuzzy")
                or (p.status == "ambiguous" and p.start is not None)
            )
            note = p.note
            if p.status == "fuzzy" and not kept:
                note = (note + "; " if note else "") + "left out (keep='exact')"
            rows.append({
                "query_id": r["query_id"], "doc_id": r["doc_id"], "old_start": r["start"],
                "old_end": r["end"], "new_start": p.start, "new_end": p.end, "status": p.status,
                "quality": p.quality, "candidates": p.candidates, "kept": kept, "note": note,
                "grade": r.get("grade", 1), "group": r.get("group"), "text": r.get("text"),
            })  # fmt: skip
        _drop_collisions(rows)
        out = cls(_new_labels(rows, empty, texts), rows, settings)
        if strict and out.left_out:
            bad = [r for r in rows if not r["kept"]]
            n = Counter(r["status"] for r in bad)
            raise InputError(
                f"reanchor (strict): {len(bad)} of {len(rows)} spans could not be kept ("
                + ", ".join(f"{n[s]} {s}" for s in STATUSES if n[s])
                + "); e.g. "
                + "; ".join(f"query {r['query_id']!r}, {r['doc_id']!r} [{r['old_start']}, "
                            f"{r['old_end']}): {r['status']}, {r['note']}" for r in bad[:3])
            )  # fmt: skip
        return out

    # ------------------------------------------------------------------ counts
    @property
    def counts(self) -> dict[str, int]:
        """Spans per status (every status, zeros included)."""
        c = Counter(r["status"] for r in self.rows)
        return {s: c.get(s, 0) for s in STATUSES}

    @property
    def kept(self) -> int:
        return sum(r["kept"] for r in self.rows)

    @property
    def left_out(self) -> int:
        return len(self.rows) - self.kept

    @property
    def ok(self) -> bool:
        """Every span kept (lost, ambiguous and fuzzy spans left out make it False)."""
        return self.left_out == 0

    @property
    def changed(self) -> list[dict[str, Any]]:
        """The rows of every span not ``unchanged``, the worst first (lost, ambiguous,
        fuzzy, unverified, normalised, moved)."""
        rows = [r for r in self.rows if r["status"] != "unchanged"]
        return sorted(rows, key=lambda r: SEVERITY.index(r["status"]))

    def by_status(self, status: str) -> list[dict[str, Any]]:
        if status not in STATUSES:
            raise InputError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
        return [r for r in self.rows if r["status"] == status]

    @property
    def removed_documents(self) -> list[str]:
        """Documents of the old labels missing from the new corpus."""
        return sorted({r["doc_id"] for r in self.rows if r["note"].startswith("document removed")})

    @property
    def emptied_queries(self) -> list[str]:
        """Queries that had spans and kept none."""
        had = {r["query_id"] for r in self.rows}
        kept = {r["query_id"] for r in self.rows if r["kept"]}
        return sorted(had - kept)

    def summary(self) -> str:
        """Two sentences: what was found, and what the new labels hold."""
        c = self.counts
        parts = [f"{c[s]} {s}" for s in STATUSES if c[s]]
        fz = [r["quality"] for r in self.by_status("fuzzy")]
        if fz:
            i = parts.index(f"{c['fuzzy']} fuzzy")
            parts[i] += f" (quality {min(fz):.3f}" + (f"–{max(fz):.3f})" if len(fz) > 1 else ")")
        gone = self.removed_documents
        if gone:
            n = sum(r["note"].startswith("document removed") for r in self.rows)
            i = parts.index(f"{c['lost']} lost")
            parts[i] += f" ({n} in {len(gone)} removed document{'s' * (len(gone) > 1)})"
        queries = len({r["query_id"] for r in self.rows})
        head = (f"Reanchored {len(self.rows)} spans of {queries} queries: "
                + (", ".join(parts) or "nothing to do") + ".")  # fmt: skip
        kept = f"New labels: {self.kept} span{'s' * (self.kept != 1)} kept"
        if self.left_out:
            out = Counter(r["status"] for r in self.rows if not r["kept"])
            kept += f", {self.left_out} left out (" + ", ".join(
                f"{n} {s}" for s, n in sorted(out.items(), key=lambda x: STATUSES.index(x[0]))
            ) + ")"  # fmt: skip
        if self.emptied_queries:
            n = len(self.emptied_queries)
            kept += f"; {n} quer{'ies' if n > 1 else 'y'} left without evidence"
        return head + "\n" + kept + "."

    # ------------------------------------------------------------------ output
    def _cells(self, r: dict[str, Any], width: int) -> list[str]:
        def rng(a: Any, b: Any) -> str:
            return "–" if a is None else f"[{a}, {b})"

        q = r["quality"]
        return [r["status"], visible(r["query_id"]), visible(r["doc_id"]),
                rng(r["old_start"], r["old_end"]), rng(r["new_start"], r["new_end"]),
                "–" if q is None else f"{q:.3f}", "yes" if r["kept"] else "no",
                visible(clip(r["note"], width))]  # fmt: skip

    _HEAD = ("status", "query", "document", "old", "new", "quality", "kept", "note")

    def to_text(self, limit: int | None = 20) -> str:
        """The summary and a table of the changed spans (the first ``limit``; None: all)."""
        rows = self.changed
        shown = rows if limit is None else rows[:limit]
        if not shown:
            return self.summary()
        cells = [list(self._HEAD)] + [self._cells(r, 60) for r in shown]
        widths = [max(len(c[i]) for c in cells) for i in range(len(self._HEAD))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
        more = len(rows) - len(shown)
        tail = [f"(+{more} more: .to_pandas() or .to_text(limit=None))"] if more else []
        return "\n".join([self.summary(), "", *lines, *tail])

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return f"Reanchored({len(self.rows)} spans, {self.kept} kept, {self.left_out} left out)"

    def to_markdown(self, limit: int | None = None) -> str:
        """The summary and a Markdown table of the changed spans (every cell escaped for
        Markdown: a query or document id shows as text)."""
        rows = self.changed if limit is None else self.changed[:limit]
        out = [self.summary().replace("\n", " "), ""]
        if rows:
            out += ["| " + " | ".join(self._HEAD) + " |", "|" + "---|" * len(self._HEAD)]
            out += ["| " + " | ".join(markdown(c) for c in self._cells(r, 200)) + " |"
                    for r in rows]  # fmt: skip
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "counts": self.counts,
            "kept": self.kept,
            "left_out": self.left_out,
            "removed_documents": self.removed_documents,
            "emptied_queries": self.emptied_queries,
            "settings": self.settings,
            "spans": self.rows,
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def save(self, path: str | Path) -> Path:
        """The JSON (:meth:`to_dict`) written to ``path``."""
        path = Path(path)
        path.write_text(self.to_json(indent=1), encoding="utf-8")
        return path

    def to_pandas(self) -> Any:
        """One row per span (:data:`COLUMNS`)."""
        pd: Any = require("pandas", "pandas", "Reanchored.to_pandas()")
        return pd.DataFrame(self.rows, columns=list(COLUMNS))


def _drop_collisions(rows: list[dict[str, Any]]) -> None:
    """Two kept spans of one group that now overlap: the later one is left out, said."""
    grouped = sorted(
        (i for i, r in enumerate(rows) if r["kept"] and r["group"] is not None),
        key=lambda i: (rows[i]["query_id"], str(rows[i]["group"]), rows[i]["doc_id"],
                       rows[i]["new_start"]),
    )  # fmt: skip
    prev = None
    for i in grouped:
        r = rows[i]
        key = (r["query_id"], str(r["group"]), r["doc_id"])
        if prev is not None and prev[0] == key and r["new_start"] < prev[1]:
            r["kept"] = False
            r["note"] = (r["note"] + "; " if r["note"] else "") + (
                "left out: overlaps another span of its group where it now stands"
            )
            continue
        prev = (key, r["new_end"])


def _new_labels(rows: list[dict[str, Any]], empty: Sequence[str],
                texts: Mapping[str, str]) -> SpanLabels:  # fmt: skip
    kept = [r for r in rows if r["kept"]]
    have = {r["query_id"] for r in kept}
    queries = list(dict.fromkeys([*(r["query_id"] for r in rows), *empty]))
    return SpanLabels.from_columns(
        [r["query_id"] for r in kept], [r["doc_id"] for r in kept],
        [r["new_start"] for r in kept], [r["new_end"] for r in kept],
        [r["grade"] if r["grade"] is not None else 1 for r in kept],
        [r["group"] for r in kept], texts=texts,
        empty_queries=[q for q in queries if q not in have], source="reanchored labels",
    )  # fmt: skip
