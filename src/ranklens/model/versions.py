"""Which documents are versions of one another, and when each was valid: the labels' side
of freshness.

A :class:`Versions` table gives each document a *version group* (the documents that are
versions of one fact: the 2024 and the 2026 refund policy), the time it became valid
(``valid_from``) and the time it was superseded (``superseded_at``: the next version's
``valid_from``, or an explicit time, or never). As of a time ``a``, a listed document is

* **current** when ``valid_from ≤ a`` and it is not superseded by ``a``;
* **outdated** when it was superseded at or before ``a``;
* **future** when ``valid_from > a`` (it did not exist yet);
* **undated** when the table cannot tell: no time where one is needed (a time field missing
  on the document, or superseded at an unknown time). An undated document is never read
  as current.

Documents the table does not list are undated too, unless the table says
``unlisted="current"`` (every other document has no other version).

Without an "as of" time, a query is judged as of the table's newest state: its newest
``valid_from`` (the snapshot's time), where a document with a successor is outdated even
when the successor's time is unknown. Built by :mod:`.versions_build` (records, chains,
corpus fields, hit metadata); judged by :mod:`ranklens.judging.freshness`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..declared import ParameterError, choice, data, declare, mapping, text
from ..errors import InputError
from .times import TzLike, required_time, show_time
from .vocab import translate

CURRENT, OUTDATED, FUTURE, UNDATED = 0, 1, 2, 3
"""The status of a document as of a time (see the module docstring)."""

STATUS_NAMES = ("current", "outdated", "future", "undated")

FIELDS = {
    "doc_id": text(None, "the field holding the document id (None: doc_id, _id or id)",
                   none=True),
    "time": text("valid_from", "the field holding when a version became valid"),
    "group": text("group", "the field naming a document's group of versions"),
    "supersedes": text("supersedes", "the field naming the version a document replaces"),
    "superseded_at": text("superseded_at", "the field holding when a version ended"),
    "tz": data("the zone of times written without one: 'UTC', an IANA name or a tzinfo"),
    "unlisted": choice("undated", ("undated", "current"),
                       "what a document the table does not list is"),
}  # fmt: skip
"""The names of a versions table's fields and how to read them (``from_records``,
``from_metadata``, ``read_versions``)."""

FROM_RECORDS = declare("Versions.from_records", {
    "records": data("one mapping per document"),
    **FIELDS,
    "source": text("versions", "names the data in errors"),
})  # fmt: skip
FROM_CHAINS = declare("Versions.from_chains", {
    "chains": mapping(None, "{group: [oldest, ..., newest]}"),
    "times": mapping(None, "{doc: valid_from}", none=True, empty=True),
    "tz": FIELDS["tz"],
    "unlisted": FIELDS["unlisted"],
})  # fmt: skip


class Versions:
    """A table of document versions (see the module docstring).

    Arrays, one entry per listed document, documents sorted by id: ``doc_ids``, ``group``
    (code into ``group_ids``), ``valid_from`` and ``superseded_at`` (seconds since the epoch,
    UTC; NaN: unknown, or for ``superseded_at`` not superseded), ``superseded`` (it has a
    successor or an end of validity, known in time or not), ``placed`` (its status can be
    told from the table: a time, or its place in an explicit chain) and ``chained`` (its
    group is ordered by ``supersedes`` links).
    """

    __slots__ = (
        "chained",
        "doc_ids",
        "group",
        "group_ids",
        "latest",
        "placed",
        "source",
        "superseded",
        "superseded_at",
        "undated_ids",
        "unlisted",
        "valid_from",
    )

    def __init__(
        self,
        doc_ids: np.ndarray,
        group: np.ndarray,
        group_ids: np.ndarray,
        valid_from: np.ndarray,
        superseded_at: np.ndarray,
        superseded: np.ndarray,
        placed: np.ndarray,
        chained: np.ndarray,
        *,
        unlisted: str = "undated",
        source: str = "versions",
    ) -> None:
        if unlisted not in ("undated", "current"):
            raise InputError(f"unlisted must be 'undated' or 'current', got {unlisted!r}")
        self.doc_ids = doc_ids
        self.group = group
        self.group_ids = group_ids
        self.valid_from = valid_from
        self.superseded_at = superseded_at
        self.superseded = superseded
        self.placed = placed
        self.chained = chained
        self.unlisted = unlisted
        self.source = source
        known = valid_from[~np.isnan(valid_from)]
        self.latest = float(known.max()) if len(known) else np.inf
        """The default "as of": the newest ``valid_from`` (+inf when no time is known)."""
        self.undated_ids = [str(d) for d in doc_ids[~placed]]
        """Listed documents whose status the table cannot tell (no usable time)."""

    # ------------------------------------------------------------------ constructors
    @classmethod
    @FROM_RECORDS.checks
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        *,
        doc_id: str | None = None,
        time: str = "valid_from",
        group: str = "group",
        supersedes: str = "supersedes",
        superseded_at: str = "superseded_at",
        tz: TzLike = None,
        unlisted: str = "undated",
        source: str = "versions",
    ) -> Versions:
        """From one mapping per document: its id (``doc_id``, ``_id`` or ``id``) and any of
        ``valid_from``, ``group``, ``supersedes`` (the id of the version it replaces) and
        ``superseded_at``; other names with ``time=``, ``group=``, ``supersedes=``,
        ``superseded_at=``, ``doc_id=`` (the fields the user's data has, e.g.
        ``time="updated_at"``). ``tz``: the zone of times written without one;
        ``unlisted``: ``"undated"`` (default) or ``"current"``; ``source`` names the data
        in errors. See :func:`~.versions_build.from_records`."""
        from .versions_build import from_records

        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
            raise ParameterError(
                f"Versions.from_records: records must be a list of mappings (one per "
                f"document), got {type(records).__name__}"
            )
        built: Versions = from_records(
            cls, records, doc_id=doc_id, time=time, group=group, supersedes=supersedes,
            superseded_at=superseded_at, tz=tz, unlisted=unlisted, source=source,
        )  # fmt: skip
        return built

    @classmethod
    @FROM_CHAINS.checks
    def from_chains(
        cls,
        chains: Mapping[Any, Sequence[Any]],
        times: Mapping[Any, Any] | None = None,
        *,
        tz: TzLike = None,
        unlisted: str = "undated",
    ) -> Versions:
        """From ``{group: [oldest, ..., newest]}``: each document supersedes the one before
        it; ``times`` (optional) gives documents their ``valid_from``."""
        times = dict(times or {})
        records = []
        for group, docs in chains.items():
            if isinstance(docs, str) or not isinstance(docs, Sequence):
                raise ParameterError(
                    f"Versions.from_chains: chain {group!r} must list its documents, oldest "
                    f"first, got {docs!r:.60}"
                )
            for i, d in enumerate(docs):
                rec = {"doc_id": d, "group": group, "valid_from": times.pop(d, None)}
                if i:
                    rec["supersedes"] = docs[i - 1]
                records.append(rec)
        records += [{"doc_id": d, "valid_from": t} for d, t in times.items()]
        return cls.from_records(records, tz=tz, unlisted=unlisted, source="chains")

    @classmethod
    def from_corpus(cls, corpus: Mapping[str, Mapping[str, Any]], **fields: Any) -> Versions:
        """From a corpus ``{doc_id: {"text", "title", "metadata": {...}, ...}}`` (a
        :class:`~ranklens.Dataset`'s, or columns of a corpus file): each field is read from
        the record, else from its ``metadata`` (dots for nested fields); the names as for
        :meth:`from_records` (checked by its declaration)."""
        return cls.from_metadata(corpus, **fields)

    @classmethod
    def from_metadata(cls, data: Any, **fields: Any) -> Versions:
        """From each document's metadata: ``{doc_id: {field: value}}``, or a runner's result
        (``ranklens.run_retriever(...)``; its ``doc_metadata()``: what each framework's hits
        carried, LlamaIndex ``metadata``, LangChain ``metadata``, Haystack ``meta``). Name the
        fields with ``time=``, ``group=``... as for :meth:`from_records` (checked by its
        declaration)."""
        from .versions_build import from_metadata

        FROM_RECORDS.check(fields, where="Versions.from_metadata")
        built: Versions = from_metadata(cls, data, **fields)
        return built

    # ------------------------------------------------------------------ lookups
    def digest(self) -> str:
        """A short hash of everything judging reads from the table (each document's group,
        times, successor and place in a chain, and ``unlisted``): a gate baseline records
        it, so a run judged against another table is named, never compared."""
        import hashlib

        h = hashlib.sha256(self.unlisted.encode())
        for d, g, a, b, s, p, c in zip(self.doc_ids, self.group_ids[self.group],
                                       self.valid_from, self.superseded_at, self.superseded,
                                       self.placed, self.chained):  # fmt: skip
            h.update(f"{d}\t{g}\t{a!r}\t{b!r}\t{bool(s)}{bool(p)}{bool(c)}\n".encode(
                "utf-8", "surrogatepass"))  # fmt: skip
        return h.hexdigest()[:16]

    def __len__(self) -> int:
        return len(self.doc_ids)

    def __repr__(self) -> str:
        n_groups = len(np.unique(self.group))
        versioned = int((np.bincount(self.group, minlength=len(self.group_ids)) > 1).sum())
        return (
            f"Versions({len(self)} documents in {n_groups} groups, {versioned} with several "
            f"versions; {len(self.undated_ids)} undated; newest {show_time(self.latest)})"
        )

    def index(self, doc_ids: np.ndarray) -> np.ndarray:
        """The table row of each id of a sorted vocabulary ``doc_ids`` (-1: unlisted)."""
        return translate(np.asarray(doc_ids, dtype=object), self.doc_ids)

    def as_of_times(self, query_ids: np.ndarray, as_of: Any, tz: TzLike = None) -> np.ndarray:
        """Each query's "as of" time (NaN: the table's newest state) from one time for every
        query or ``{query: time}``; a time before every document's ``valid_from`` is an
        error naming the queries."""
        n = len(query_ids)
        if as_of is None:
            return np.full(n, np.nan)
        if isinstance(as_of, Mapping):
            given = {str(k): v for k, v in as_of.items()}
            out = np.array(
                [
                    required_time(given[str(q)], f"as_of of query {q!r}", tz)
                    if str(q) in given
                    else np.nan
                    for q in query_ids
                ],
                dtype=np.float64,
            )
        else:
            out = np.full(n, required_time(as_of, "as_of", tz))
        first = np.nanmin(self.valid_from) if (~np.isnan(self.valid_from)).any() else np.nan
        early = np.flatnonzero(out < first)
        if len(early):
            names = ", ".join(repr(str(query_ids[i])) for i in early[:5])
            who = f"query {names} is" if len(early) == 1 else f"{len(early)} queries ({names}) are"
            raise InputError(
                f"{who} as of {show_time(out[early[0]])}, before "
                f"every document ({self.source}: the earliest is valid from "
                f"{show_time(first)}): nothing existed yet. Check the as-of times and their "
                "time zone, or leave as_of out to judge as of the newest version"
            )
        return out

    def status(
        self, rows: np.ndarray, as_of: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(status, superseded_at, reference time)`` of table ``rows`` (-1: unlisted), each
        as of its ``as_of`` (NaN: the newest state; the reference time is then
        :attr:`latest`)."""
        n = len(rows)
        listed = rows >= 0
        r = np.where(listed, rows, 0)
        latest = np.isnan(as_of)
        a = np.where(latest, self.latest, as_of)
        if len(self.doc_ids) == 0:
            st = np.full(n, CURRENT if self.unlisted == "current" else UNDATED, dtype=np.int8)
            return st, np.full(n, np.nan), a
        vf, sat = self.valid_from[r], self.superseded_at[r]
        sup, placed = self.superseded[r], self.placed[r]
        st = np.full(n, UNDATED, dtype=np.int8)
        known_sup = ~np.isnan(sat)
        gone = sup & ((known_sup & (sat <= a)) | (~known_sup & latest))
        future = ~gone & ~np.isnan(vf) & (vf > a)
        current = ~gone & ~future & ~(sup & ~known_sup) & (~np.isnan(vf) | latest)
        st[current] = CURRENT
        st[future] = FUTURE
        st[gone] = OUTDATED
        st[~placed] = UNDATED
        st[~listed] = CURRENT if self.unlisted == "current" else UNDATED
        return st, np.where(listed, sat, np.nan), a

    def members(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows by group, offsets)``: the table rows of group ``g`` are
        ``rows[off[g]:off[g+1]]``."""
        order = np.argsort(self.group, kind="stable")
        off = np.searchsorted(self.group[order], np.arange(len(self.group_ids) + 1))
        return order.astype(np.int64), off.astype(np.int64)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per document: ``doc_id``, ``group``, ``valid_from``, ``superseded_at``
        (ISO strings; None when unknown or never)."""

        def iso(x: float) -> str | None:
            return None if np.isnan(x) else show_time(float(x))

        return [
            {
                "doc_id": str(d),
                "group": str(self.group_ids[g]),
                "valid_from": iso(vf),
                "superseded_at": iso(sa),
            }
            for d, g, vf, sa in zip(self.doc_ids, self.group, self.valid_from, self.superseded_at)
        ]
