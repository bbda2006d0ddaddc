"""Merging label sets (``Qrels.merge``): human labels, pooled judgments, a model judge's
grades, each judgment keeping where it came from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InputError

CONFLICTS = ("first", "last", "max", "error")


def merge_qrels(
    Qrels: Any, parts: Sequence[Any], sources: Sequence[str] | None = None,
    conflicts: str = "first",
) -> Any:  # fmt: skip
    """One ``Qrels`` (the class given: :meth:`ranklens.Qrels.merge` passes itself) from
    ``parts`` (Qrels, anything :meth:`Qrels.coerce` takes, or
    an assessment of :func:`ranklens.assess`).

    ``sources``: one provenance name per part (e.g. ``"human"``, ``"model:minilm"``);
    a part that already carries provenance (a merged Qrels, an assessment) keeps its own
    for the pairs it has, and unnamed parts are ``"part1"``, ``"part2"``...
    ``conflicts``: a document judged for one query by several parts: ``"first"`` (the
    earliest part wins: put the trusted labels first), ``"last"``, ``"max"`` (the highest
    grade) or ``"error"`` (an InputError naming the pair and both sources).

    Grouped ground truth stays grouped: its groups are kept as they are, and a judged
    document that is in none of the query's groups becomes a group of its own with its
    grade (a document already in a group keeps that group, whatever ``conflicts`` says).
    The merged labels' ``sources`` maps every ``(query, doc)`` to its source.

    >>> from ranklens import Qrels
    >>> m = Qrels.merge({"q": {"a": 1}}, {"q": {"a": 0, "b": 2}}, sources=["human", "model:x"])
    >>> m.to_dict(), m.sources[("q", "b")]
    ({'q': {'a': 1, 'b': 2}}, 'model:x')
    """
    if conflicts not in CONFLICTS:
        raise InputError(f"conflicts must be one of {', '.join(CONFLICTS)}, got {conflicts!r}")
    if not parts:
        raise InputError("Qrels.merge needs at least one set of labels")
    if sources is not None and len(sources) != len(parts):
        raise InputError(f"give one source per part: {len(parts)} parts, {len(sources)} sources")
    parts = [p.qrels if hasattr(p, "qrels") and hasattr(p, "failures") else p for p in parts]
    qrels = [p if isinstance(p, Qrels) else Qrels.coerce(p) for p in parts]
    if any(q.intent is not None for q in qrels):
        raise InputError("Qrels.merge takes graded or grouped labels, not diversity subtopics")
    names = (
        [str(s) for s in sources]
        if sources is not None
        else [f"part{i}" for i in range(1, len(parts) + 1)]
    )
    grades: dict[str, dict[str, int]] = {}
    origin: dict[tuple[str, str], str] = {}
    groups: dict[str, list[list[str]]] = {}
    group_grades: dict[str, list[int]] = {}
    in_group: set[tuple[str, str]] = set()
    grouped = any(q.grouped for q in qrels)
    # grouped parts first: their groups are the truth's structure; plain judgments fill in
    ordered = sorted(zip(qrels, names), key=lambda pn: not pn[0].grouped)
    for part, name in ordered:
        own = part.sources or {}
        if part.grouped:
            for qid, gs in part.to_groups().items():
                groups.setdefault(qid, [])
                group_grades.setdefault(qid, [])
                for g, grade in zip(gs, part.group_grades()[qid]):
                    groups[qid].append(list(g))
                    group_grades[qid].append(grade)
                    for d in g:
                        in_group.add((qid, d))
                        origin.setdefault((qid, d), own.get((qid, d), name))
            continue
        for qid, docs in part.to_dict().items():
            row = grades.setdefault(qid, {})
            for d, g in docs.items():
                src = own.get((qid, d), name)
                if (qid, d) in in_group:
                    continue
                if d not in row:
                    row[d], origin[(qid, d)] = g, src
                    continue
                if conflicts == "error" and row[d] != g:
                    raise InputError(
                        f"query {qid!r}, document {d!r}: grade {row[d]} from "
                        f"{origin[(qid, d)]!r} and {g} from {src!r} (conflicts='error')"
                    )
                if conflicts == "last" or (conflicts == "max" and g > row[d]):
                    row[d], origin[(qid, d)] = g, src
    if not grouped:
        out = Qrels.from_dict(grades)
    else:
        for qid, docs in grades.items():
            for d, g in docs.items():
                groups.setdefault(qid, []).append([d])
                group_grades.setdefault(qid, []).append(g)
        out = Qrels.from_groups(groups, group_grades)
    kept = {(qid, d) for qid, docs in out.to_dict().items() for d in docs}
    out.sources = {k: v for k, v in origin.items() if k in kept}
    return out
