"""Evidence spans: ground truth that survives re-chunking, and runs of chunks that say
where they stand.

:class:`SpanLabels` are relevance labels whose units are character ranges of evidence in
source documents: ``(doc_id, start, end)``, half-open ``[start, end)`` into the document's
text, optionally graded and optionally grouped (any one span of a group finds the group,
as AutoRAG's groups). They are :class:`~ranklens.model.qrels.Qrels` (grouped, one row per
span, the span's document as the row's document), so every label-level tool keeps working,
with each span's ``start``/``end`` beside the rows and, when known, the documents' texts.

Where each retrieved chunk stands (its document and range) is the run's side:
:class:`~ranklens.model.chunks.ChunkSpans`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..declared import choice, data, declare, text
from ..errors import InputError, RanklensWarning
from .anchors import locate
from .qrels import Qrels
from .segments import repeats
from .vocab import encode_columns

SpanLike = Mapping[str, Any] | Sequence[Any]
"""One span as given: ``{"doc_id", "start", "end", "grade", "group"}`` (or ``"quote"``
instead of offsets), or a tuple ``(doc_id, start, end)`` / ``(doc_id, "quote")``."""


_TEXTS = data("the documents' texts, {document id: text}: spans are checked against them")
_ON_MISSING = choice(
    "error", ("error", "skip"),
    "a quote found nowhere (or in several places): an error naming it, or left out and counted",
)  # fmt: skip
_AMBIGUOUS = choice(
    "error", ("error", "first"),
    "a quote found in several places: as on_missing says, or its first occurrence (as "
    "Chroma's chunking evaluation places text)",
)  # fmt: skip
_SOURCE = text("span labels", "what messages call the labels (a file's name)")
FROM_RECORDS = declare("SpanLabels.from_records", {
    "records": data("one mapping per span"), "texts": _TEXTS, "on_missing": _ON_MISSING,
    "ambiguous": _AMBIGUOUS, "source": _SOURCE,
})  # fmt: skip
FROM_SPANS = declare("SpanLabels.from_spans", {
    "spans": data("{query: [span, ...]}"), "texts": _TEXTS, "on_missing": _ON_MISSING,
    "ambiguous": _AMBIGUOUS,
})  # fmt: skip
FROM_QUOTES = declare("SpanLabels.from_quotes", {
    "quotes": data("{query: [(doc_id, quoted text), ...]}"), "texts": _TEXTS,
    "on_missing": _ON_MISSING, "ambiguous": _AMBIGUOUS,
})  # fmt: skip
FROM_COLUMNS = declare("SpanLabels.from_columns", {
    "query_ids": data("each span's query"), "doc_ids": data("each span's document"),
    "starts": data("each span's first character"), "ends": data("each span's end (excluded)"),
    "grades": data("each span's grade (default 1)"), "groups": data("each span's group"),
    "texts": _TEXTS, "empty_queries": data("queries with nothing to find"), "source": _SOURCE,
})  # fmt: skip


class SpanLabels(Qrels):
    """Evidence spans as labels (see the module docstring).

    Build them with :meth:`from_spans` (``{query: [span, ...]}``), :meth:`from_records`
    (one dict per span), or :meth:`from_quotes` (quoted evidence located in ``texts``).
    ``texts`` (document id -> text) lets the spans be checked against the documents, the
    evidence shown, chunks without offsets located and token counts taken.
    """

    __slots__ = ("end", "skipped", "start", "texts")

    start: np.ndarray
    end: np.ndarray
    texts: Mapping[str, str] | None
    skipped: list[dict[str, Any]]

    @classmethod
    @FROM_RECORDS.checks
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        texts: Mapping[str, str] | None = None,
        *,
        on_missing: str = "error",
        ambiguous: str = "error",
        source: str = "span labels",
    ) -> SpanLabels:
        """From one mapping per span: ``query_id``, ``doc_id``, ``start`` and ``end`` (or a
        ``quote`` located in ``texts``), optional ``grade`` (default 1) and ``group``
        (spans of a query sharing a group form one unit; default: each span its own).
        ``on_missing``: a quote found nowhere or in several places is an ``"error"``
        naming the query and the quote, or ``"skip"`` (left out, counted in
        :attr:`skipped` and warned about once). ``ambiguous="first"`` places a quote that
        stands in several places at its first (Chroma's chunking evaluation places text
        with ``str.find``)."""
        texts = _checked_texts(texts, source)
        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
            raise InputError(
                f"{source}: expected an iterable of span mappings, got {type(records).__name__}"
            )
        qs: list[Any] = []
        ds: list[Any] = []
        starts: list[int] = []
        ends: list[int] = []
        grades: list[int] = []
        groups: list[Any] = []
        skipped: list[dict[str, Any]] = []
        for i, rec in enumerate(records):
            if not isinstance(rec, Mapping):
                raise InputError(f"{source}: span {i} must be a mapping, got {type(rec).__name__}")
            where = f"{source}: span {i}"
            qid, doc = rec.get("query_id"), rec.get("doc_id")
            if qid is None or doc is None:
                raise InputError(f"{where} needs 'query_id' and 'doc_id'")
            if rec.get("start") is None and rec.get("quote") is not None:
                span = _quoted(qid, doc, rec["quote"], texts, source, ambiguous == "first")
                if isinstance(span, str):
                    if on_missing == "error":
                        raise InputError(f"{source}: {span}")
                    skipped.append({"query_id": str(qid), "doc_id": str(doc),
                                    "quote": rec["quote"], "why": span})  # fmt: skip
                    continue
                s, e = span
            else:
                s, e = (
                    _offset(rec.get("start"), where, "start"),
                    _offset(rec.get("end"), where, "end"),
                )
            qs.append(qid)
            ds.append(doc)
            starts.append(s)
            ends.append(e)
            grades.append(_grade(rec.get("grade", 1), where))
            groups.append(rec.get("group"))
        out = cls.from_columns(qs, ds, starts, ends, grades, groups, texts=texts, source=source)
        if skipped:
            out.skipped = skipped
            warnings.warn(
                f"{source}: {len(skipped)} quoted spans left out (e.g. query "
                f"{skipped[0]['query_id']!r}: {skipped[0]['why']}); see .skipped",
                RanklensWarning,
                stacklevel=2,
            )
        return out

    @classmethod
    @FROM_SPANS.checks
    def from_spans(
        cls,
        spans: Mapping[Any, Sequence[SpanLike]],
        texts: Mapping[str, str] | None = None,
        *,
        on_missing: str = "error",
        ambiguous: str = "error",
    ) -> SpanLabels:
        """From ``{query: [span, ...]}``, each span ``(doc_id, start, end)``,
        ``(doc_id, "quote")`` or a mapping with ``doc_id`` and ``start``/``end`` or
        ``quote`` (and ``grade``, ``group``)."""
        if not isinstance(spans, Mapping):
            raise InputError(
                f"span labels: expected {{query: [span, ...]}}, got {type(spans).__name__}"
            )
        return cls.from_records(_records(spans), texts, on_missing=on_missing, ambiguous=ambiguous)

    @classmethod
    @FROM_QUOTES.checks
    def from_quotes(
        cls,
        quotes: Mapping[Any, Sequence[tuple[Any, str]]],
        texts: Mapping[str, str],
        *,
        on_missing: str = "error",
        ambiguous: str = "error",
    ) -> SpanLabels:
        """From quoted evidence ``{query: [(doc_id, "quoted text"), ...]}``, each quote
        located in ``texts[doc_id]``, exactly or once whitespace, case and Unicode forms are
        normalised (:func:`~ranklens.model.anchors.locate`); see :meth:`from_records` for
        ``on_missing``."""
        if texts is None:
            raise InputError("span labels from quotes need the documents' texts (texts=)")
        if not isinstance(quotes, Mapping):
            raise InputError(
                "span labels: expected {query: [(doc_id, 'quote'), ...]}, got "
                f"{type(quotes).__name__}"
            )
        return cls.from_records(_records(quotes), texts, on_missing=on_missing, ambiguous=ambiguous)

    @classmethod
    @FROM_COLUMNS.checks
    def from_columns(
        cls,
        query_ids: Sequence[Any],
        doc_ids: Sequence[Any],
        starts: Sequence[int] | np.ndarray,
        ends: Sequence[int] | np.ndarray,
        grades: Sequence[int] | np.ndarray | None = None,
        groups: Sequence[Any] | None = None,
        *,
        texts: Mapping[str, str] | None = None,
        empty_queries: Iterable[Any] = (),
        source: str = "span labels",
    ) -> SpanLabels:
        """From parallel columns (the other constructors end here). Checks: ``0 <= start <
        end``; within the document's text when ``texts`` are given (and every document
        among them); no two overlapping spans in one group; one grade per group."""
        texts = _checked_texts(texts, source)
        for name, col in (("query_ids", query_ids), ("doc_ids", doc_ids)):
            if isinstance(col, (str, bytes, Mapping)) or not hasattr(col, "__len__"):
                raise InputError(f"{source}: {name} must be a list, got {type(col).__name__}")
        n = len(query_ids)
        s = _whole_column(starts, "start", source, n)
        e = _whole_column(ends, "end", source, n)
        g = (
            np.ones(n, dtype=np.int64)
            if grades is None
            else _whole_column(grades, "grade", source, n)
        )
        if not (len(doc_ids) == len(s) == len(e) == len(g) == n) or (
            groups is not None and len(groups) != n
        ):
            raise InputError(f"{source}: the span columns differ in length")
        qcode, qvocab, dcode, dvocab = encode_columns(query_ids, doc_ids, empty_queries, source)
        dstr = np.asarray(dvocab, dtype=object)[dcode] if n else np.zeros(0, dtype=object)
        bad = np.flatnonzero((s < 0) | (e <= s))
        if len(bad):
            i = int(bad[0])
            raise InputError(
                f"{source}: span [{s[i]}, {e[i]}) of document {dstr[i]!r} in query "
                f"{qvocab[qcode[i]]!r} "
                + ("starts before 0" if s[i] < 0 else "ends where or before it starts")
            )
        if texts is not None:
            _check_in_texts(qvocab[qcode] if n else [], dstr, s, e, texts, source)
        unit_key = _unit_keys(qcode, groups, n)
        order = np.lexsort((s, dcode, unit_key, qcode))
        if n:  # units in a canonical order: by their first span's (document, start)
            first = np.ones(n, dtype=bool)
            first[1:] = ~repeats(qcode[order], unit_key[order])
            ids = np.cumsum(first) - 1
            heads = order[first]
            rank = np.empty(len(heads), dtype=np.int64)
            rank[np.lexsort((s[heads], dcode[heads], qcode[heads]))] = np.arange(len(heads))
            order = order[np.lexsort((np.arange(n), rank[ids]))]
            unit_key = np.empty(n, dtype=np.int64)
            unit_key[order] = np.sort(rank[ids])
        q_s, u_s, d_s, s_s, e_s, g_s = (x[order] for x in (qcode, unit_key, dcode, s, e, g))
        same_unit = repeats(q_s, u_s)
        mixed = np.flatnonzero(same_unit & ~repeats(g_s))
        if len(mixed):
            i = order[mixed[0] + 1]
            raise InputError(
                f"{source}: a group of query {qvocab[qcode[i]]!r} has spans with different "
                "grades (one grade per group)"
            )
        same_doc = repeats(q_s, u_s, d_s)
        clash = np.flatnonzero(same_doc & (s_s[1:] < e_s[:-1])) if n > 1 else same_doc[:0]
        if len(clash):
            j = int(clash[0])
            raise InputError(
                f"{source}: spans [{s_s[j]}, {e_s[j]}) and [{s_s[j + 1]}, {e_s[j + 1]}) of "
                f"document {dvocab[d_s[j]]!r} overlap in one group of query "
                f"{qvocab[q_s[j]]!r}: merge them, or put them in different groups"
            )
        unit = np.concatenate(([0], np.cumsum(~same_unit))).astype(np.int64) if n else u_s
        out = cls(qvocab, dvocab, q_s.astype(np.int32), d_s, g_s, unit, True)
        out.start, out.end = s_s, e_s
        out.texts = texts
        out.skipped = []
        return out

    # ------------------------------------------------------------------ views
    @property
    def n_spans(self) -> int:
        return len(self.q)

    def span_records(self) -> list[dict[str, Any]]:
        """One dict per span: ``query_id``, ``doc_id``, ``start``, ``end``, ``grade``,
        ``group`` (the unit's number within its query) and, when the texts are known,
        the evidence ``text``."""
        out = []
        group = self.unit - self.unit[np.searchsorted(self.q, self.q, "left")]
        docs = self.doc_ids
        for i in range(len(self.q)):
            doc = str(docs[self.d[i]])
            rec = {
                "query_id": str(self.query_ids[self.q[i]]), "doc_id": doc,
                "start": int(self.start[i]), "end": int(self.end[i]),
                "grade": int(self.grade[i]), "group": int(group[i]),
            }  # fmt: skip
            if self.texts is not None and doc in self.texts:
                rec["text"] = self.texts[doc][self.start[i] : self.end[i]]
            out.append(rec)
        return out

    def subset(self, query_ids: Iterable[Any]) -> SpanLabels:
        """The spans of some queries only (groups, grades and texts kept)."""
        keep = set(map(str, query_ids))
        rows = [r for r in self.span_records() if r["query_id"] in keep]
        empty = [
            q
            for q in map(str, self.query_ids)
            if q in keep and q not in {r["query_id"] for r in rows}
        ]
        return SpanLabels.from_columns(
            [r["query_id"] for r in rows], [r["doc_id"] for r in rows],
            [r["start"] for r in rows], [r["end"] for r in rows], [r["grade"] for r in rows],
            [r["group"] for r in rows], texts=self.texts, empty_queries=empty,
        )  # fmt: skip

    def with_texts(self, texts: Mapping[str, str]) -> SpanLabels:
        """The same spans checked against, and carrying, the documents' ``texts``."""
        rows = self.span_records()
        return SpanLabels.from_columns(
            [r["query_id"] for r in rows], [r["doc_id"] for r in rows],
            [r["start"] for r in rows], [r["end"] for r in rows], [r["grade"] for r in rows],
            [r["group"] for r in rows], texts=texts,
        )  # fmt: skip

    def __repr__(self) -> str:
        return f"SpanLabels({len(self.query_ids)} queries, {len(self.q)} spans)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpanLabels):
            return NotImplemented
        return (
            Qrels.__eq__(self, other) is True
            and np.array_equal(self.start, other.start)
            and np.array_equal(self.end, other.end)
        )

    __hash__ = None


def _records(spans: Mapping[Any, Sequence[SpanLike]]) -> Iterable[dict[str, Any]]:
    for qid, items in spans.items():
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
            raise InputError(f"span labels: the spans of query {qid!r} must be a list")
        for j, item in enumerate(items):
            if isinstance(item, Mapping):
                yield {"query_id": qid, **item}
            elif isinstance(item, (tuple, list)) and len(item) == 3:
                yield {"query_id": qid, "doc_id": item[0], "start": item[1], "end": item[2]}
            elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[1], str):
                yield {"query_id": qid, "doc_id": item[0], "quote": item[1]}
            else:
                raise InputError(
                    f"span labels: span {j} of query {qid!r} must be (doc_id, start, end), "
                    f"(doc_id, 'quote') or a mapping, got {item!r}"[:300]
                )


def _quoted(qid: Any, doc: Any, quote: Any, texts: Mapping[str, str] | None,
            source: str, first: bool = False) -> tuple[int, int] | str:  # fmt: skip
    """The span of a quote, or why it has none (a sentence naming the query and quote)."""
    if texts is None:
        raise InputError(f"{source}: query {qid!r} quotes evidence but no texts= were given")
    if not isinstance(quote, str) or not quote.strip():
        raise InputError(
            f"{source}: the quote of query {qid!r} in {doc!r} must be a non-empty string"
        )
    text = texts.get(str(doc))
    if text is None:
        return f"query {qid!r}: document {doc!r} of its quote is not in the texts"
    found = locate(quote, text)
    short = quote if len(quote) <= 60 else quote[:59] + "…"
    if not found.starts:
        return f"query {qid!r}: the quote {short!r} is not in document {doc!r}"
    if not found.unique and first:
        return found.starts[0], found.ends[0]
    if not found.unique:
        return (
            f"query {qid!r}: the quote {short!r} stands {len(found.starts)} times in document "
            f"{doc!r} (at {', '.join(map(str, found.starts[:4]))}): give start/end instead"
        )
    return found.span


def _offset(value: Any, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            return int(value)
        raise InputError(f"{where}: {name!r} must be an integer character offset, got {value!r}")
    return int(value)


def _grade(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            return int(value)
        raise InputError(f"{where}: 'grade' must be an integer, got {value!r}")
    return int(value)


def _unit_keys(qcode: np.ndarray, groups: Sequence[Any] | None, n: int) -> np.ndarray:
    """A number per span: its group within its query (a span without one is its own)."""
    if groups is None or all(g is None for g in groups):
        return np.arange(n, dtype=np.int64)
    labels = [("g", str(g)) if g is not None else ("s", str(i)) for i, g in enumerate(groups)]
    _, inverse = np.unique(np.array([f"{a}\x00{b}" for a, b in labels], dtype=object),
                           return_inverse=True)  # fmt: skip
    return inverse.astype(np.int64)


def _check_in_texts(qids: Any, docs: np.ndarray, s: np.ndarray, e: np.ndarray,
                    texts: Mapping[str, str], source: str) -> None:  # fmt: skip
    for i, doc in enumerate(docs):
        text = texts.get(doc)
        if text is None:
            raise InputError(
                f"{source}: document {doc!r} (query {qids[i]!r}) is not in the corpus: "
                "spans point into documents the corpus must hold"
            )
        if e[i] > len(text):
            raise InputError(
                f"{source}: span [{s[i]}, {e[i]}) of document {doc!r} (query {qids[i]!r}) "
                f"ends past the document's {len(text)} characters: a different version of it?"
            )


def _checked_texts(texts: Any, source: str) -> Mapping[str, str] | None:
    """``texts`` if it maps document ids to strings, else an error naming the first fault."""
    if texts is None:
        return None
    if not isinstance(texts, Mapping):
        raise InputError(
            f"{source}: texts must map each document id to its text, got {type(texts).__name__}"
        )
    for doc, value in texts.items():
        if not isinstance(value, str):
            raise InputError(
                f"{source}: the text of document {doc!r} must be a string, got "
                f"{type(value).__name__}"
            )
    return texts


def _whole_column(values: Any, name: str, source: str, n: int) -> np.ndarray:
    """A column of whole numbers (offsets or grades) as int64, or an error naming the first
    value that is not one (None, NaN, 2.5, a text, True)."""
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
        raise InputError(f"{source}: the {name}s must be a list, got {type(values).__name__}")
    arr = (
        np.asarray(values, dtype=object).reshape(-1)
        if not isinstance(values, np.ndarray)
        else values.reshape(-1)
    )
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        ok = np.isfinite(arr) & (arr == np.floor(arr))
        if ok.all():
            return arr.astype(np.int64)
        i = int(np.flatnonzero(~ok)[0])
    else:
        i = -1
        for j, v in enumerate(arr.tolist()):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                i = j
                break
            if isinstance(v, (float, np.floating)) and not float(v).is_integer():
                i = j
                break
        if i < 0:
            return np.asarray([int(v) for v in arr.tolist()], dtype=np.int64)
    raise InputError(
        f"{source}: span {i}'s {name} must be a whole number, got {arr[i]!r}"
        + (" (a character offset)" if name != "grade" else "")
    )


# each table's public callable: the checked constructor with the class bound (its
# signature without ``cls``: what a caller, and a test walking every declaration, calls)
for _table, _method in ((FROM_RECORDS, "from_records"), (FROM_SPANS, "from_spans"),
                        (FROM_QUOTES, "from_quotes"), (FROM_COLUMNS, "from_columns")):  # fmt: skip
    _table.target = functools.partial(getattr(SpanLabels, _method).__func__, SpanLabels)
