"""Column builders behind :class:`~ranklens.model.Qrels`' constructors for grouped and
diversity labels, and the grade check every constructor shares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import DuplicateDocumentError, InputError
from ..text import shown

SubtopicRows = tuple[
    Sequence[Any] | np.ndarray,
    Sequence[Any] | np.ndarray,
    Sequence[Any] | np.ndarray,
    Sequence[int] | np.ndarray,
]
"""Diversity labels as columns: ``(queries, subtopics, documents, grades)``."""

Columns = tuple[list[Any], list[Any], list[int], list[int], list[Any]]


def group_columns(
    groups: Mapping[Any, Sequence[Any]], grades: Mapping[Any, Sequence[int]] | None
) -> Columns:
    """``(queries, docs, grades, group numbers, empty queries)`` of grouped ground truth
    ``{query: [[doc, ...], ...]}`` (see :meth:`Qrels.from_groups`)."""
    qs: list[Any] = []
    ds: list[Any] = []
    gs: list[int] = []
    us: list[int] = []
    empty: list[Any] = []
    stray = [q for q in (grades or {}) if q not in groups]
    if stray:
        raise InputError(
            f"qrels: grades are given for query {stray[0]!r}, which has no ground truth"
        )
    for qid, glist in groups.items():
        if isinstance(glist, str) or not isinstance(glist, Sequence):
            raise InputError(f"qrels: ground truth of query {qid!r} must be a list of groups")
        if len(glist) == 0:
            empty.append(qid)
            continue
        qgrades = None if grades is None else grades.get(qid)
        if qgrades is not None and (
            isinstance(qgrades, (str, Mapping)) or not isinstance(qgrades, Sequence)
        ):
            raise InputError(
                f"qrels: the grades of query {qid!r} must be a list (one per group), got "
                f"{type(qgrades).__name__}"
            )
        if qgrades is not None and len(qgrades) != len(glist):
            raise InputError(
                f"qrels: query {qid!r} has {len(glist)} groups but {len(qgrades)} grades"
            )
        for j, group in enumerate(glist):
            if not isinstance(group, (str, list, tuple, set, frozenset)):
                raise InputError(
                    f"qrels: group {j} of query {qid!r} must be a list of document ids (or one "
                    f"id), got {type(group).__name__}"
                )
            members = [group] if isinstance(group, str) else list(group)
            if not members:
                raise InputError(f"qrels: group {j} of query {qid!r} is empty")
            grade = 1 if qgrades is None else check_grade(qgrades[j], qid, f"group {j}")
            for doc in members:
                qs.append(qid)
                ds.append(doc)
                gs.append(grade)
                us.append(j)
    return qs, ds, gs, us, empty


def subtopic_columns(
    labels: Mapping[Any, Mapping[Any, Mapping[Any, int]]] | None,
    rows: SubtopicRows | None,
    source: str,
) -> tuple[
    Sequence[Any] | np.ndarray, Sequence[Any] | np.ndarray, np.ndarray, np.ndarray, np.ndarray
]:
    """``(queries, docs, grades, unit key, intent key)`` of diversity labels: one unit per
    (query, subtopic, grade), one intent per (query, subtopic) (see
    :meth:`Qrels.from_subtopics`)."""
    if rows is None:
        qs: list[Any] = []
        ss: list[Any] = []
        ds: list[Any] = []
        gs: list[int] = []
        for qid, topics in (labels or {}).items():
            for sub, graded in topics.items():
                for doc, grade in graded.items():
                    qs.append(qid)
                    ss.append(sub)
                    ds.append(doc)
                    gs.append(check_grade(grade, qid, doc))
        rows = (qs, ss, ds, gs)
    qids, subs, docs, grades = rows
    if not (len(qids) == len(subs) == len(docs) == len(grades)):
        raise InputError(f"{source}: the query, subtopic, document and grade columns differ")
    pairs = list(zip(map(str, qids), map(str, subs)))
    seen: set[tuple[str, str, str]] = set()
    for (q, t), doc in zip(pairs, map(str, docs)):
        if (q, t, doc) in seen:
            raise DuplicateDocumentError(
                f"{source}: document {doc!r} is judged twice for subtopic {t!r} of query {q!r}"
            )
        seen.add((q, t, doc))
    g = np.asarray(grades, dtype=np.int64)
    code = {pair: i for i, pair in enumerate(sorted(set(pairs)))}  # (query, subtopic) order
    sub_code = np.array([code[pair] for pair in pairs], dtype=np.int64)
    grade_vocab, grade_code = np.unique(g, return_inverse=True)
    unit_key = sub_code.astype(np.int64) * max(len(grade_vocab), 1) + grade_code
    return qids, docs, g, unit_key, sub_code


def check_grade(grade: Any, qid: Any, doc: Any) -> int:
    """``grade`` as an int (an integral number within 64 bits), else an error naming the
    query and document."""
    value = None
    integral = isinstance(grade, (bool, np.bool_, int, np.integer))
    if integral or (isinstance(grade, (float, np.floating)) and float(grade).is_integer()):
        value = int(grade)
    if value is None:
        raise InputError(
            f"qrels: grade {shown(grade)} of document {doc!r} in query {qid!r} is not an integer"
        )
    if not -(1 << 63) <= value < 1 << 63:
        raise InputError(
            f"qrels: grade {shown(grade)} of document {doc!r} in query {qid!r} is out of range"
        )
    return value
