"""Building a :class:`~ranklens.model.versions.Versions` table from the user's data: one
record per document (:func:`from_records`), or each document's metadata under the fields
the user names (:func:`from_metadata`: a corpus, a framework's hits).

The relations are resolved once here, and every inconsistency is an error naming the
documents and the fix: a document listed twice, a document that supersedes itself, a
chain with a cycle, a version superseded by two others, a chain joining two named groups,
a group that mixes a chain with unlinked versions, two versions of one group valid from the
same time with nothing saying which came first, a successor valid before its predecessor,
an end of validity before the start, and times that cannot be read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import pairwise
from typing import Any

import numpy as np

from ..errors import InputError
from .times import TzLike, parse_time, show_time

ID_FIELDS = ("doc_id", "_id", "id")


def from_records(
    cls: type,
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
) -> Any:
    """The table of ``records`` (see :meth:`Versions.from_records`)."""
    ids: list[str] = []
    groups: list[Any] = []
    starts: list[float] = []
    ends: list[float] = []
    prev: list[Any] = []
    seen_time = False
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise InputError(f"{source}: record {i} must be a mapping, got {type(rec).__name__}")
        key = doc_id or next((f for f in ID_FIELDS if rec.get(f) is not None), None)
        d = rec.get(key) if key else None
        if d is None or (isinstance(d, str) and not d):
            names = doc_id or " or ".join(ID_FIELDS)
            raise InputError(f"{source}: record {i} has no document id ({names})")
        if isinstance(d, bool) or not isinstance(d, (str, int, np.integer)):
            raise InputError(
                f"{source}: record {i}: a document id is a text (or a whole number), got "
                f"{type(d).__name__} {d!r:.60}"
            )
        d = str(d)
        where = f"{source}: document {d!r}"
        seen_time |= rec.get(time) not in (None, "")
        ids.append(d)
        g = rec.get(group)
        groups.append(None if g is None or g == "" else str(g))
        starts.append(parse_time(rec.get(time), f"{where}, field {time!r}", tz))
        ends.append(parse_time(rec.get(superseded_at), f"{where}, field {superseded_at!r}", tz))
        p = rec.get(supersedes)
        prev.append(None if p is None or p == "" else str(p))
    if ids and not seen_time and all(p is None for p in prev):
        raise InputError(
            f"{source}: no record has a value in the field {time!r} and none says what it "
            "supersedes: name the time field (time='updated_at'...) or give supersedes links"
        )
    return resolve(cls, ids, groups, starts, ends, prev, unlisted=unlisted, source=source)


def resolve(
    cls: type,
    ids: list[str],
    groups: list[str | None],
    starts: list[float],
    ends: list[float],
    prev: list[str | None],
    *,
    unlisted: str,
    source: str,
) -> Any:
    """Groups, successors and ends of validity from per-document columns."""
    index: dict[str, int] = {}
    for i, d in enumerate(ids):
        if d in index:
            raise InputError(f"{source}: document {d!r} is listed twice")
        index[d] = i
    for p in prev:  # a superseded document not listed itself: listed, without a time
        if p is not None and p not in index:
            index[p] = len(ids)
            ids.append(p)
            groups.append(None)
            starts.append(np.nan)
            ends.append(np.nan)
            prev.append(None)
    n = len(ids)
    succ = np.full(n, -1, dtype=np.int64)
    for i, p in enumerate(prev):
        if p is None:
            continue
        j = index[p]
        if j == i:
            raise InputError(f"{source}: document {ids[i]!r} supersedes itself")
        if succ[j] >= 0:
            raise InputError(
                f"{source}: document {p!r} is superseded by both {ids[int(succ[j])]!r} and "
                f"{ids[i]!r}: a version has one successor (split the group, or chain them)"
            )
        succ[j] = i
    _no_cycle(succ, ids, source)
    root = _components(succ, groups, ids, source)
    group_names: list[str] = [g if g is not None else ids[i] for i, g in enumerate(groups)]
    for i, g in enumerate(groups):  # a chain's group: its named member's, else its oldest id
        if g is not None:
            group_names[root[i]] = g
    names = [group_names[root[i]] for i in range(n)]
    vf = np.array(starts, dtype=np.float64)
    sat = np.array(ends, dtype=np.float64)
    chained = np.zeros(n, dtype=bool)
    linked = (succ >= 0) | np.array([p is not None for p in prev], dtype=bool)
    by_group: dict[str, list[int]] = {}
    for i, g in enumerate(names):
        by_group.setdefault(g, []).append(i)
    superseded = succ >= 0
    placed = ~np.isnan(vf)
    for g, members in by_group.items():
        m = np.array(members, dtype=np.int64)
        if linked[m].any():
            if not linked[m].all():
                loose = [ids[i] for i in m[~linked[m]]][:3]
                raise InputError(
                    f"{source}: group {g!r} mixes a supersedes chain with unlinked versions "
                    f"({', '.join(map(repr, loose))}): link them into the chain or give them "
                    "another group"
                )
            chained[m] = True
            placed[m] = True
            for i in m[succ[m] >= 0]:
                j = int(succ[i])
                if vf[j] < vf[i]:
                    raise InputError(
                        f"{source}: document {ids[j]!r} supersedes {ids[i]!r} but is valid from "
                        f"{show_time(vf[j])}, before it ({show_time(vf[i])})"
                    )
                if np.isnan(sat[i]):
                    sat[i] = vf[j]
            continue
        timed = m[~np.isnan(vf[m])]
        timed = timed[np.argsort(vf[timed], kind="stable")]
        same = np.flatnonzero(vf[timed][1:] == vf[timed][:-1])
        if len(same):
            a, b = ids[int(timed[same[0]])], ids[int(timed[same[0] + 1])]
            raise InputError(
                f"{source}: documents {a!r} and {b!r} of group {g!r} are both valid from "
                f"{show_time(vf[timed[same[0]]])}: say which supersedes which (supersedes=) "
                "or give distinct times"
            )
        for a, b in pairwise(timed):
            superseded[a] = True
            if np.isnan(sat[a]):
                sat[a] = vf[b]
    explicit_end = ~np.isnan(np.array(ends, dtype=np.float64))
    superseded |= explicit_end
    bad = np.flatnonzero(sat < vf)
    if len(bad):
        i = int(bad[0])
        raise InputError(
            f"{source}: document {ids[i]!r} is superseded at {show_time(sat[i])}, before it "
            f"became valid ({show_time(vf[i])})"
        )
    order = np.argsort(np.array(ids, dtype=object), kind="stable")
    gids, gcode = np.unique(np.array(names, dtype=object)[order], return_inverse=True)
    return cls(
        np.array(ids, dtype=object)[order],
        gcode.astype(np.int64),
        gids,
        vf[order],
        sat[order],
        superseded[order],
        placed[order],
        chained[order],
        unlisted=unlisted,
        source=source,
    )


def _no_cycle(succ: np.ndarray, ids: list[str], source: str) -> None:
    """Following successors never returns to a document (each has at most one)."""
    state = np.zeros(len(succ), dtype=np.int8)  # 0 new, 1 on the current walk, 2 done
    for start in range(len(succ)):
        path = []
        i = start
        while i >= 0 and state[i] == 0:
            state[i] = 1
            path.append(i)
            i = int(succ[i])
        if i >= 0 and state[i] == 1:
            loop = path[path.index(i) :]
            chain = " -> ".join(repr(ids[j]) for j in [*loop, i])
            raise InputError(
                f"{source}: the versions form a cycle ({chain} supersede one another): a "
                "chain of versions has an oldest and a newest; remove one link"
            )
        state[path] = 2


def _components(
    succ: np.ndarray, groups: list[str | None], ids: list[str], source: str
) -> list[int]:
    """The oldest member of each document's chain; a chain whose members name two
    different groups is an error."""
    n = len(succ)
    pred = np.full(n, -1, dtype=np.int64)
    pred[succ[succ >= 0]] = np.flatnonzero(succ >= 0)
    root = list(range(n))
    for i in range(n):
        if pred[i] >= 0:
            continue
        j, named = i, None
        while j >= 0:
            root[j] = i
            if groups[j] is not None:
                if named is not None and groups[j] != named:
                    raise InputError(
                        f"{source}: the chain of {ids[i]!r} joins groups {named!r} and "
                        f"{groups[j]!r}: a chain of versions is one group"
                    )
                named = groups[j]
            j = int(succ[j])
    return root


def from_metadata(cls: type, data: Any, *, time: str = "valid_from", **fields: Any) -> Any:
    """Records from ``{doc_id: metadata}`` or an object's ``doc_metadata()``, each field
    read from the mapping or its ``metadata``/``meta`` (dots for nested fields)."""
    table = data.doc_metadata() if hasattr(data, "doc_metadata") else data
    if not isinstance(table, Mapping):
        raise InputError(
            "versions from metadata: expected {doc_id: metadata} or a runner's result, got "
            f"{type(data).__name__}"
        )
    names = {"time": time}
    for role in ("group", "supersedes", "superseded_at"):
        names[role] = fields.pop(role, role)
    records = []
    for d, meta in table.items():
        if not isinstance(meta, Mapping):
            raise InputError(f"versions from metadata: document {d!r} has no metadata mapping")
        rec: dict[str, Any] = {"doc_id": d}
        for field in names.values():
            rec[field] = lookup(meta, field)
        records.append(rec)
    found = sum(r[time] is not None for r in records)
    if records and not found:
        raise InputError(
            f"versions from metadata: no document has a field {time!r} (in its record or its "
            f"metadata; seen: {', '.join(sorted(_fields(table))[:12]) or 'none'}). A runner's "
            "log keeps string and integer metadata: store times as ISO strings"
        )
    return from_records(cls, records, **names, **fields)


def lookup(meta: Mapping[str, Any], field: str) -> Any:
    """``meta[field]``, else inside ``meta["metadata"]`` or ``meta["meta"]``; dots walk
    nested mappings."""
    for base in (meta, meta.get("metadata"), meta.get("meta")):
        if not isinstance(base, Mapping):
            continue
        if field in base:
            return base[field]
        cur: Any = base
        for part in field.split("."):
            cur = cur.get(part) if isinstance(cur, Mapping) else None
        if cur is not None:
            return cur
    return None


def _fields(table: Mapping[str, Any]) -> set[str]:
    out: set[str] = set()
    for meta in list(table.values())[:50]:
        if isinstance(meta, Mapping):
            out.update(str(k) for k in meta)
            for inner in ("metadata", "meta"):
                if isinstance(meta.get(inner), Mapping):
                    out.update(str(k) for k in meta[inner])
    return out
