"""What :func:`ranklens.estimate` checks and derives from its inputs: the runs as
``{name: Run}``, the grade scale and labels outside it, a metric's range of values, and
the words that say why a human sample is degenerate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..declared import ParameterError
from ..io import coerce_run
from ..model import Qrels, Run


def runs_of(runs: Any) -> dict[str, Run]:
    """``{name: Run}`` from a dict of runs (Runs, runner results, paths, or run dicts) or
    one run (``{query: [docs]}``, ``{query: {doc: score}}``, a Run, a path)."""
    if isinstance(runs, Mapping) and runs and not isinstance(runs, Run):
        values = list(runs.values())
        one = all(isinstance(v, (list, tuple)) for v in values) or all(
            isinstance(v, Mapping) and all(isinstance(s, (int, float)) for s in v.values())
            for v in values
        )
        if not one:
            return {str(k): coerce_run(v, name=str(k)) for k, v in runs.items()}
    run = coerce_run(runs)
    return {run.name: run}


def grade_scale(grades: Sequence[int] | None, human: Qrels, labels: Qrels) -> frozenset[int]:
    """The grades a judge may give: ``grades`` when given (the human sample's grades must
    lie in it), else every whole grade from ``min(0, lowest)`` to ``max(1, highest)`` of
    the human sample's and the dataset's labels."""
    seen = _grades(human)
    if grades is not None:
        scale = frozenset(grades)
        bad = sorted(seen - scale)
        if bad:
            raise ParameterError(
                f"estimate: grades must hold every grade of the human sample, got "
                f"{sorted(scale)} (the human labels hold {bad})"
            )
        return scale
    seen |= _grades(labels)
    low, high = min(0, *seen) if seen else 0, max(1, *seen) if seen else 1
    return frozenset(range(int(low), int(high) + 1))


def _grades(qrels: Qrels) -> set[int]:
    return set(doc_grades(qrels).tolist())


def doc_grades(qrels: Qrels) -> np.ndarray:
    """Each labelled (query, document)'s grade as :meth:`Qrels.to_dict` gives it (a
    document in several groups or intents: its highest), computed on the label columns."""
    return _per_pair(qrels)[1]


def _per_pair(qrels: Qrels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each labelled (query, document): a row holding it, its query code and its
    highest grade over its rows (one sort of the label columns)."""
    if not len(qrels.q):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    q, d = qrels.q.astype(np.int64), qrels.d.astype(np.int64)
    key = q * (int(d.max()) + 1) + d
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    grades = np.maximum.reduceat(np.asarray(qrels.grade)[order], starts)
    return order[starts], grades, q[order[starts]]


def label_pairs(qrels: Qrels) -> dict[tuple[str, str], int]:
    """``{(query, document): grade}``, the pairs and grades of :meth:`Qrels.to_dict`
    (a document's highest grade), made from the label columns at once."""
    rows, grades, q = _per_pair(qrels)
    qs = qrels.query_ids[q].tolist()
    ds = qrels.doc_ids[qrels.d[rows]].tolist()
    return dict(zip(zip(map(str, qs), ds), grades.tolist()))


def outside_scale(labels: Qrels, scale: frozenset[int], what: str) -> None:
    """A named error when ``labels`` hold a grade outside ``scale`` (the pair, the value,
    the scale, how many)."""
    if not (set(doc_grades(labels).tolist()) - scale):
        return
    bad = [(q, d, g) for q, docs in labels.to_dict().items() for d, g in docs.items()
           if g not in scale]  # fmt: skip
    if bad:
        q, d, g = bad[0]
        raise ParameterError(
            f"estimate: {what} grades must lie in the scale {_scale(scale)} (the human "
            f"labels' grades; grades= sets it), got {g} for ({q!r}, {d!r})"
            + (f" and {len(bad) - 1} more pairs outside" if len(bad) > 1 else "")
        )


def _scale(scale: frozenset[int]) -> str:
    s = sorted(scale)
    return f"{s[0]}-{s[-1]}" if s == list(range(s[0], s[-1] + 1)) else str(s)


def value_range(parsed: Any) -> tuple[float, float]:
    r = parsed.spec.value_range
    return (
        -np.inf if r.low is None else float(r.low),
        np.inf if r.high is None else float(r.high),
    )


def degenerate_why(y: np.ndarray) -> str:
    values, counts = np.unique(y, return_counts=True)
    top = values[np.argmax(counts)]
    other = len(y) - int(counts.max())
    if other == 0:
        return f"all {len(y)} human values are {top:g}"
    return f"only {other} of {len(y)} human values differ from {top:g}"


def finite_or_none(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)
