"""Relevance labels (qrels), stored column-wise.

A query's ground truth is a list of *units*. With plain labels (TREC qrels) each judged
document is its own unit with its own grade. With grouped ground truth (AutoRAG's
``retrieval_gt``, e.g. ``[["d1", "d2"], ["d3"]]``) a unit is a group of documents, any one
of which finds the group; each group may carry a grade (default 1).

Storage is one row per (query, unit, document) membership:

* ``query_ids``: sorted distinct query ids; ``q``: each row's query code;
* ``doc_ids``: sorted distinct document ids; ``d``: each row's document code;
* ``unit``: each row's unit number (global, contiguous per query);
* ``grade``: each row's grade (the unit's grade); negative grades mean "judged but never
  relevant, zero gain" (trec_eval's pooled-but-unjudged);
* ``intent`` (optional): each row's intent, for diversity measures. Diversity qrels
  (``topic subtopic docno judgment``, :meth:`Qrels.from_subtopics`) make one unit per
  (subtopic, judgment) and the subtopic its intent; for grouped ground truth each group is
  an intent (``intent`` is None and the unit stands for it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Union, cast

import numpy as np

from ..errors import DuplicateDocumentError, InputError
from .ids import DocIds, HoldsDocIds, first_repeat
from .labels import SubtopicRows, check_grade, group_columns, subtopic_columns
from .mappings import check_query_keys, flat_numbers, label_columns
from .segments import blocks_in_order, gather_ranges, repeats, sorted_with_rows
from .vocab import encode_columns, encode_nested

QrelsLike = Union["Qrels", Mapping[str, Any], str, Path]
"""What :func:`ranklens.evaluate` takes as labels; paths are read by :mod:`ranklens.io`."""


class Qrels(HoldsDocIds):
    """Relevance labels for a set of queries: graded labels or grouped ground truth.

    Build one with :meth:`from_dict`, :meth:`from_groups`, :meth:`from_arrays`,
    :func:`ranklens.read_qrels` (files), or let :meth:`coerce` pick from a plain Python
    object. The model does no file I/O: :func:`ranklens.io.coerce_qrels` also takes paths.
    """

    __slots__ = (
        "_query_row_off", "docs", "grade", "grouped", "intent", "q", "query_ids", "sources",
        "unit",
    )  # fmt: skip

    def __init__(
        self,
        query_ids: np.ndarray,
        doc_ids: np.ndarray | None,
        q: np.ndarray,
        d: np.ndarray | None,
        grade: np.ndarray,
        unit: np.ndarray,
        grouped: bool,
        docs: DocIds | None = None,
        intent: np.ndarray | None = None,
    ) -> None:
        self.query_ids = query_ids
        # each row's document: codes, or parsed strings interned on first use (model.ids)
        self.docs = docs if docs is not None else DocIds(d, doc_ids)
        self.q = q
        self.grade = grade
        self.unit = unit
        self.grouped = grouped
        self.intent = intent
        self.sources: dict[tuple[str, str], str] | None = None  # provenance, set by merge
        self._query_row_off = np.searchsorted(q, np.arange(len(query_ids) + 1))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_arrays(
        cls,
        query_ids: Sequence[Any] | np.ndarray,
        doc_ids: Sequence[Any] | np.ndarray,
        grades: Sequence[int] | np.ndarray,
        groups: Sequence[int] | np.ndarray | None = None,
        *,
        intents: Sequence[int] | np.ndarray | None = None,
        empty_queries: Iterable[str] = (),
        source: str = "qrels",
        encoded: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> Qrels:
        """Build qrels from parallel columns.

        ``groups`` (optional) gives each row a group number, unique within its query; rows
        with the same query and group number form one unit. Without it every row is its own
        unit, and a document may appear only once per query. ``intents`` (with ``groups``)
        gives each row an intent number (rows of one group share it), for the diversity
        measures. ``empty_queries`` lists queries that have ground truth with no entries
        (they are evaluated with R = 0).
        """
        g = np.asarray(grades)
        if encoded is not None:
            qcode, query_ids_v, dcode, doc_vocab = encoded
        else:
            if not (len(query_ids) == len(doc_ids) == len(g)):
                raise InputError(f"{source}: query, document and grade columns differ in length")
            qcode, query_ids_v, dcode, doc_vocab = encode_columns(
                query_ids, doc_ids, empty_queries, source
            )

        def ds(i: int) -> str:
            return str(doc_vocab[dcode[i]])

        def qs(i: int) -> str:
            return str(query_ids_v[qcode[i]])

        if g.dtype.kind == "f":
            frac = np.flatnonzero(g != np.floor(g))
            if len(frac):
                i = int(frac[0])
                raise InputError(
                    f"{source}: grade {g[i]!r} of document {ds(i)!r} in query {qs(i)!r} "
                    "is not an integer"
                )
        if len(g) and g.dtype.kind not in "iufb":
            raise InputError(f"{source}: grades must be integers")
        g = g.astype(np.int64)
        if groups is None:
            dbits = max(len(doc_vocab).bit_length(), 1)
            _, order = sorted_with_rows((qcode.astype(np.int64) << dbits) | dcode)
            qs_sorted, ds_sorted = qcode[order], dcode[order]
            dup = np.flatnonzero(repeats(qs_sorted, ds_sorted))
            if len(dup):
                i = order[dup[0] + 1]
                raise DuplicateDocumentError(
                    f"{source}: document {ds(i)!r} is labelled twice in query {qs(i)!r}"
                )
            unit = np.arange(len(order), dtype=np.int64)
            return cls(query_ids_v, doc_vocab, qs_sorted, ds_sorted, g[order], unit, False)
        grp = np.asarray(groups, dtype=np.int64)
        if len(grp) != len(g):
            raise InputError(f"{source}: the group column differs in length")
        order = np.lexsort((dcode, grp, qcode))
        q_s, grp_s, d_s, g_s = qcode[order], grp[order], dcode[order], g[order]
        same_unit = repeats(q_s, grp_s)
        dup = np.flatnonzero(repeats(q_s, grp_s, d_s))
        if len(dup):
            i = order[dup[0] + 1]
            raise DuplicateDocumentError(
                f"{source}: document {ds(i)!r} is listed twice in one group of query {qs(i)!r}"
            )
        mixed = np.flatnonzero(same_unit & ~repeats(g_s))
        if len(mixed):
            i = order[mixed[0] + 1]
            raise InputError(
                f"{source}: group of document {ds(i)!r} in query {qs(i)!r} has "
                "members with different grades"
            )
        unit = (
            np.concatenate(([0], np.cumsum(~same_unit))).astype(np.int64)
            if len(q_s)
            else np.zeros(0, dtype=np.int64)
        )
        intent = None
        if intents is not None:
            raw = np.asarray(intents, dtype=np.int64)[order]
            if len(raw):
                _, intent = np.unique(q_s * (int(raw.max()) + 1) + raw, return_inverse=True)
                intent = intent.astype(np.int64)
            else:
                intent = np.zeros(0, dtype=np.int64)
        return cls(query_ids_v, doc_vocab, q_s, d_s, g_s, unit, True, intent=intent)

    @classmethod
    def from_parsed(
        cls, qcode: np.ndarray, query_vocab: np.ndarray, docs: DocIds, grades: np.ndarray,
        source: str, unique: bool = False,
    ) -> Qrels:  # fmt: skip
        """Plain labels from a reader's columns (query codes into ``query_vocab``, ids as
        :class:`~ranklens.model.ids.DocIds`), rows kept in the given order within each
        query; ids stay strings until something needs codes. ``unique``: no document can
        be labelled twice in a query (a dict's keys), so that is not checked."""
        if len(qcode) > 1 and np.any(qcode[1:] < qcode[:-1]):
            order = blocks_in_order(qcode)
            if order is None:  # a query's rows in several places: one stable sort
                order = sorted_with_rows(qcode.astype(np.int64))[1]
            qcode, docs, grades = qcode[order], docs.take(order), grades[order]
        dup = None if unique else first_repeat(qcode, docs)
        if dup is not None:
            raise DuplicateDocumentError(
                f"{source}: document {docs.strings(np.array(dup[1:]))[0]!r} is labelled twice "
                f"in query {query_vocab[qcode[dup[1]]]!r}"
            )
        unit = np.arange(len(qcode), dtype=np.int64)
        g = np.asarray(grades, dtype=np.int64)
        return cls(query_vocab, None, qcode, None, g, unit, False, docs=docs)

    @classmethod
    def from_dict(cls, labels: Mapping[Any, Mapping[Any, int] | Sequence[Any]]) -> Qrels:
        """From ``{query: {doc: grade}}``; a list of documents ``{query: [doc, ...]}`` means
        grade 1 for each."""
        cols = label_columns(labels)  # string ids: packed as bytes, never interned
        if cols is not None:
            qcode, query_vocab, docs, grades, unique = cols
            if unique or first_repeat(qcode, docs) is None:  # else named below
                return cls.from_parsed(qcode, query_vocab, docs, grades, "qrels", unique=True)
        check_query_keys(labels, "qrels")
        if labels and all(type(e) is dict or isinstance(e, Mapping) for e in labels.values()):
            return cls._from_label_dicts(cast("Mapping[Any, Mapping[Any, Any]]", labels))
        qs: list[Any] = []
        ds: list[Any] = []
        gs: list[Any] = []
        empty: list[Any] = []
        for qid, entry in labels.items():
            if isinstance(entry, Mapping):
                items = list(entry.items())
                if not items:
                    empty.append(qid)
                    continue
                qs.extend([qid] * len(items))
                for doc, grade in items:
                    ds.append(doc)
                    gs.append(check_grade(grade, qid, doc))
            elif isinstance(entry, Sequence) and not isinstance(entry, str):
                if not entry:
                    empty.append(qid)
                    continue
                if any(isinstance(x, (list, tuple, set, frozenset)) for x in entry):
                    raise InputError(
                        f"qrels: query {qid!r} gives a list of lists; use Qrels.from_groups "
                        "for grouped ground truth"
                    )
                qs.extend([qid] * len(entry))
                ds.extend(entry)
                gs.extend([1] * len(entry))
            else:
                raise InputError(
                    f"qrels: labels of query {qid!r} must be a dict of doc -> grade or a list of "
                    f"doc ids, got {type(entry).__name__}"
                )
        return cls.from_arrays(qs, ds, np.asarray(gs, dtype=np.int64), empty_queries=empty)

    @classmethod
    def _from_label_dicts(cls, labels: Mapping[Any, Mapping[Any, Any]]) -> Qrels:
        """Fast path of :meth:`from_dict` for ``{query: {doc: grade}}`` (one pass in C)."""
        values = list(labels.values())
        qcode, query_vocab, dcode, doc_vocab, _ = encode_nested(labels, "qrels")
        raw = list(chain.from_iterable(v.values() for v in values))
        grades = flat_numbers(raw, "iub")
        if grades is None:  # lists, ints past 64 bits, strings...: each named
            for i, grade in enumerate(raw):
                check_grade(grade, query_vocab[qcode[i]], doc_vocab[dcode[i]])
            grades = np.array([int(x) for x in raw], dtype=np.int64)
        return cls.from_arrays((), (), grades, encoded=(qcode, query_vocab, dcode, doc_vocab))

    @classmethod
    def merge(cls, *parts: Any, sources: Sequence[str] | None = None,
              conflicts: str = "first") -> Qrels:  # fmt: skip
        """Labels of several sources in one Qrels, each judgment keeping its provenance
        (``qrels.sources[(query, doc)]``); see :func:`ranklens.model.merge.merge_qrels`."""
        from .merge import merge_qrels

        merged: Qrels = merge_qrels(cls, parts, sources, conflicts)
        return merged

    @classmethod
    def from_groups(
        cls,
        groups: Mapping[Any, Sequence[Any]],
        grades: Mapping[Any, Sequence[int]] | None = None,
    ) -> Qrels:
        """From grouped ground truth ``{query: [[doc, ...], [doc, ...]]}``.

        Each inner list is one group: retrieving any one of its documents finds the group.
        A bare string stands for a one-document group. ``grades`` optionally gives each
        query's group grades in the same order (default 1).
        """
        check_query_keys(groups, "qrels")
        qs, ds, gs, us, empty = group_columns(groups, grades)
        return cls.from_arrays(qs, ds, np.asarray(gs, dtype=np.int64), us, empty_queries=empty)

    @classmethod
    def from_subtopics(
        cls,
        labels: Mapping[Any, Mapping[Any, Mapping[Any, int]]] | None = None,
        *,
        rows: SubtopicRows | None = None,
        source: str = "qrels",
    ) -> Qrels:
        """Diversity qrels: ``{query: {subtopic: {doc: grade}}}``, or ``rows`` as parallel
        columns ``(queries, subtopics, docs, grades)`` (TREC diversity qrels,
        ``topic subtopic docno judgment``, read by ``read_qrels(path, subtopics=True)``).

        Each subtopic is an intent of its query for the diversity measures (alpha-nDCG,
        ERR-IA, ...). For every other measure the units are the (subtopic, grade) pairs:
        a document relevant to two subtopics finds two units, so recall is subtopic
        recall and R counts relevant subtopics.
        """
        qids, docs, g, unit_key, intents = subtopic_columns(labels, rows, source)
        return cls.from_arrays(qids, docs, g, unit_key, intents=intents, source=source)

    @classmethod
    def coerce(cls, obj: Qrels | Mapping[Any, Any]) -> Qrels:
        """Turn an in-memory ``obj`` into :class:`Qrels`: a Qrels, ``{q: {doc: grade}}``,
        ``{q: [doc, ...]}`` or grouped ``{q: [[doc, ...], ...]}`` (paths: see
        :func:`ranklens.io.coerce_qrels`)."""
        if isinstance(obj, Qrels):
            return obj
        if isinstance(obj, (str, Path)):
            raise InputError(
                f"Qrels.coerce takes objects, not files: read {str(obj)!r} with ranklens.read_qrels"
            )
        if isinstance(obj, Mapping):
            for entry in obj.values():
                if (
                    isinstance(entry, Sequence)
                    and not isinstance(entry, str)
                    and entry
                    and isinstance(entry[0], (list, tuple, set, frozenset))
                ):
                    return cls.from_groups(obj)
            return cls.from_dict(obj)
        raise InputError(f"cannot read qrels from {type(obj).__name__}")

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.query_ids)

    def __repr__(self) -> str:
        kind = "grouped" if self.grouped else "graded"
        return f"Qrels({len(self.query_ids)} queries, {len(self.q)} {kind} entries)"

    @property
    def n_units(self) -> int:
        """Number of units (documents, or groups for grouped ground truth)."""
        return int(self.unit[-1]) + 1 if len(self.unit) else 0

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{query: {doc: grade}}`` (for grouped qrels: a document's highest group grade)."""
        out: dict[str, dict[str, int]] = {str(qid): {} for qid in self.query_ids}
        ids = self.doc_ids.tolist()  # read once: the property interns on each access
        for qc, dc, g in zip(self.q.tolist(), self.d.tolist(), self.grade.tolist()):
            row = out[self.query_ids[qc]]
            doc = ids[dc]
            row[doc] = max(g, row.get(doc, g))
        return out

    def to_groups(self) -> dict[str, list[list[str]]]:
        """``{query: [[doc, ...], ...]}`` (for plain qrels: one group per labelled document)."""
        out: dict[str, list[list[str]]] = {str(qid): [] for qid in self.query_ids}
        last = -1
        ids = self.doc_ids.tolist()  # read once: the property interns on each access
        for qc, dc, u in zip(self.q.tolist(), self.d.tolist(), self.unit.tolist()):
            groups = out[self.query_ids[qc]]
            if u != last:
                groups.append([])
                last = u
            groups[-1].append(ids[dc])
        return out

    def group_grades(self) -> dict[str, list[int]]:
        """``{query: [grade of each unit]}``, aligned with :meth:`to_groups`."""
        out: dict[str, list[int]] = {str(q): [] for q in self.query_ids}
        last = -1
        for qc, u, g in zip(self.q.tolist(), self.unit.tolist(), self.grade.tolist()):
            if u != last:
                out[str(self.query_ids[qc])].append(g)
                last = u
        return out

    def subset(self, query_ids: Iterable[Any]) -> Qrels:
        """The labels of some queries only (groups and their grades kept)."""
        keep = set(map(str, query_ids))
        if self.intent is not None:
            rows = np.flatnonzero(np.isin(self.query_ids[self.q].astype(str), list(keep)))
            cols = (self.query_ids[self.q[rows]], self.intent[rows], self.doc_ids[self.d[rows]])
            return Qrels.from_subtopics(rows=(*cols, self.grade[rows]))
        if self.grouped:
            return Qrels.from_groups(
                {q: g for q, g in self.to_groups().items() if q in keep},
                {q: g for q, g in self.group_grades().items() if q in keep},
            )
        return Qrels.from_dict({q: v for q, v in self.to_dict().items() if q in keep})

    def copies(self, names: Mapping[str, str]) -> Qrels:
        """The labels of ``{new query id: query id}``: each new query labelled exactly as
        its query is (grades, groups and intents kept; a query labelled with no entries
        stays so); a query these labels do not hold is left out. One query scored under
        several names in one evaluation (the monitor scores a window's repeated queries
        so)."""
        code = {str(q): i for i, q in enumerate(self.query_ids.tolist())}
        pairs = [(new, code[old]) for new, old in names.items() if old in code]
        src = np.array([c for _, c in pairs], dtype=np.int64)
        lo, hi = self._query_row_off[src], self._query_row_off[src + 1]
        counts = hi - lo
        rows = gather_ranges(lo, counts)
        new_q = np.repeat(np.array([n for n, _ in pairs], dtype=object), counts)
        docs = self.docs.strings(rows)  # only these rows' ids (nothing interned)
        empty = [n for (n, _), c in zip(pairs, counts.tolist()) if c == 0]
        return Qrels.from_arrays(
            new_q, docs, self.grade[rows],
            self.unit[rows] if self.grouped else None,
            intents=None if self.intent is None else self.intent[rows], empty_queries=empty,
        )  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Qrels):
            return NotImplemented
        return (
            self.grouped == other.grouped
            and np.array_equal(self.query_ids, other.query_ids)
            and np.array_equal(self.doc_ids[self.d], other.doc_ids[other.d])
            and np.array_equal(self.q, other.q)
            and np.array_equal(self.grade, other.grade)
            and np.array_equal(self.unit, other.unit)
            and (self.intent is None) == (other.intent is None)
            and (
                self.intent is None
                or other.intent is None
                or np.array_equal(self.intent, other.intent)
            )
        )

    __hash__ = None  # type: ignore[assignment]
