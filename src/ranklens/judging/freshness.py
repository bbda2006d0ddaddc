"""Judging with document versions: which retrieved documents are outdated as of each
query's time, the grades the freshness rule gives outdated versions, and the per-rank
arrays of the freshness metrics (:class:`FreshRanks`).

Given a :class:`~ranklens.model.versions.Versions` table (``versions=``) and optionally an
"as of" time per query (``as_of=``):

1. **Labels carry to versions** (:func:`carry_labels`): a label names the evidence, and
   the table says which documents are versions of it, so every version of a labelled
   document that has no label of its own for that query takes the highest grade the
   query gives a version of its group (counted: ``labels_carried``). Explicit labels are
   never changed.
2. **Grades by status** (:func:`judge_versions`): each labelled document is current,
   outdated, future or undated as of its query's time; the rule
   (:mod:`.freshness_rules`) gives outdated and future versions their judged grade. Every
   metric, test, report and the gate then work on those grades unchanged.
3. **Per-rank arrays**: each retrieved row's status, and per (query, version group holding
   relevant evidence with an outdated version) the rank of its current version and of its
   best-ranked outdated version, which ``outdated@k``, ``undated@k`` and
   ``current_first@k`` read (:mod:`ranklens.metrics.freshness`). Metrics never look a
   document up.

Defined for plain (graded) labels: grouped ground truth and span labels find a unit at its
first retrieved member, which an outdated version would take from the current one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Qrels
from ..model.spans import SpanLabels
from ..model.versions import CURRENT, FUTURE, OUTDATED, UNDATED, Versions
from .freshness_rules import FreshnessRule


@dataclass
class FreshInput:
    """What judging needs besides the labels: the table, the raw as-of times, the rule and
    how many labels were carried."""

    versions: Versions
    as_of: Any
    rule: FreshnessRule
    carried: int = 0


@dataclass
class FreshRanks:
    """Per kept ranked row (aligned with the join's rows, like ``SpanChars``): ``q``,
    ``rank`` and ``status`` (:data:`~ranklens.model.versions.CURRENT`...); per versioned
    evidence group (a version group holding a document labelled for the query, with an
    outdated and a current version as of its time): ``ev_q``, ``ev_grade`` (the highest
    label of its versions), ``ev_current`` and ``ev_outdated`` (the best rank of a current
    and of an outdated version; 0 when none is retrieved); and what was counted."""

    q: np.ndarray
    rank: np.ndarray
    status: np.ndarray
    ev_q: np.ndarray
    ev_grade: np.ndarray
    ev_current: np.ndarray
    ev_outdated: np.ndarray
    counts: dict[str, int] = field(default_factory=dict)

    def renumbered(self, renumber: Any) -> FreshRanks:
        """The arrays on a condensed list: ``renumber(q, rank) -> (kept, new ranks)``."""
        keep, rank = renumber(self.q, self.rank)

        def best(r: np.ndarray) -> np.ndarray:
            k, new = renumber(self.ev_q, np.maximum(r, 1))
            out = np.zeros(len(r), dtype=np.int64)
            out[k & (r > 0)] = new[(r > 0)[k]]
            return out

        return replace(
            self,
            q=self.q[keep],
            rank=rank,
            status=self.status[keep],
            ev_current=best(self.ev_current),
            ev_outdated=best(self.ev_outdated),
        )


def freshness_inputs(
    Q: Qrels, versions: Any, as_of: Any, rule: FreshnessRule
) -> tuple[Qrels, FreshInput]:
    """The labels with carried versions, and the input of :func:`judge_versions`."""
    if not isinstance(versions, Versions):
        raise InputError(
            f"versions must be a ranklens.Versions table (Versions.from_records, from_chains, "
            f"from_corpus, from_metadata, or read_versions), got {type(versions).__name__}"
        )
    if isinstance(Q, SpanLabels) or (Q.grouped and not _singletons(Q)):
        raise InputError(
            "versions= is defined for plain (graded) labels: grouped ground truth and span "
            "labels find a unit at its first retrieved member, which an outdated version "
            "would take from the current one. Label each version's document instead"
        )
    if isinstance(as_of, Mapping):
        check_as_of_queries(as_of, Q.query_ids)
    if Q.grouped:  # groups of one document each: plain labels
        Q = _plain(Q, Q.query_ids[Q.q], Q.doc_ids[Q.d], Q.grade, "labels")
    carried_q, n = carry_labels(Q, versions)
    return carried_q, FreshInput(versions, as_of, rule, n)


def require_versions(versions: Any, as_of: Any, rule: Any) -> None:
    """``as_of`` or a freshness ``rule`` without ``versions`` is an error saying so."""
    if versions is None and (as_of is not None or rule is not None):
        raise InputError(
            "as_of= and freshness= judge outdated versions: give the versions too "
            "(versions=ranklens.Versions.from_records(...); docs/freshness.md)"
        )


def check_as_of_queries(as_of: Mapping[Any, Any], query_ids: Any) -> None:
    """An error naming the queries ``{query: time}`` gives a time to that the labels
    (``query_ids``) do not have: a misspelt id would otherwise judge its query as of the
    newest version."""
    stray = sorted(set(map(str, as_of)) - set(map(str, query_ids)))
    if stray:
        raise InputError(
            f"as_of names {'a query' if len(stray) == 1 else f'{len(stray)} queries'} the "
            "labels do not have ("
            f"{', '.join(map(repr, stray[:5]))}): check the query ids"
        )


def _singletons(Q: Qrels) -> bool:
    """Whether every unit of grouped labels holds one document (and no subtopics)."""
    return Q.intent is None and not bool(np.any(Q.unit[1:] == Q.unit[:-1]))


def carry_labels(Q: Qrels, versions: Versions) -> tuple[Qrels, int]:
    """``Q`` with every version of a labelled document labelled too, where the query has no
    label for it: the highest non-negative grade the query gives a version of its group;
    ``(labels, number carried)``."""
    rows = versions.index(Q.doc_ids)[Q.d]
    keep = (rows >= 0) & (Q.grade >= 0)
    if not keep.any():
        return Q, 0
    members, off = versions.members()
    n_g, n_rows = len(versions.group_ids), len(versions.doc_ids)
    qg = Q.q[keep].astype(np.int64) * n_g + versions.group[rows[keep]]
    keys, inv = np.unique(qg, return_inverse=True)
    best = np.full(len(keys), -1, dtype=np.int64)
    np.maximum.at(best, inv, Q.grade[keep].astype(np.int64))
    q, grp = keys // n_g, keys % n_g
    size = off[grp + 1] - off[grp]
    at = np.repeat(off[grp], size) + np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size)
    cand_q, cand_r, cand_g = np.repeat(q, size), members[at], np.repeat(best, size)
    listed = rows >= 0
    taken = Q.q[listed].astype(np.int64) * n_rows + rows[listed]
    new = ~np.isin(cand_q * n_rows + cand_r, taken)
    if not new.any():
        return Q, 0
    qs = np.concatenate((Q.query_ids[Q.q], Q.query_ids[cand_q[new]]))
    ds = np.concatenate((Q.doc_ids[Q.d], versions.doc_ids[cand_r[new]]))
    gs = np.concatenate((Q.grade, cand_g[new]))
    new_q = cand_q[new]
    return _plain(Q, qs, ds, gs, "labels carried to versions"), len(new_q)


def _plain(Q: Qrels, qs: Any, ds: Any, gs: np.ndarray, source: str) -> Qrels:
    """Plain labels from columns, keeping ``Q``'s queries that label nothing."""
    labelled = np.zeros(len(Q.query_ids), dtype=bool)
    labelled[Q.q] = True
    empty = [str(q) for q in Q.query_ids[~labelled]]
    return Qrels.from_arrays(list(qs), list(ds), gs, empty_queries=empty, source=source)


def judge_versions(
    jn: Any,
    fin: FreshInput,
    Q: Qrels,
    q_rows: np.ndarray,
    run_rows: np.ndarray,
    R: Any,
    rank: np.ndarray,
    ev: np.ndarray,
) -> None:
    """Judge the outdated versions of a join in place (grades by the rule, ``n_gt_ids``)
    and attach its :class:`FreshRanks` (``jn.fresh``). ``q_rows``: the qrels rows of the
    evaluated queries (one unit each); ``run_rows``/``rank``/``ev``: each kept ranked row's
    run row, rank and evaluated query."""
    V, rule = fin.versions, fin.rule
    n_q = len(jn.query_ids)
    as_of = V.as_of_times(jn.query_ids, fin.as_of)
    # labelled documents: status and judged grade
    unit_rows = V.index(Q.doc_ids)[Q.d[q_rows]] if len(q_rows) else np.zeros(0, np.int64)
    u_st, u_sat, u_ref = V.status(unit_rows, as_of[jn.unit_q])
    out_u = u_st == OUTDATED
    age = u_ref - u_sat
    if rule.uses_age:
        unknown = out_u & np.isnan(age) & (jn.unit_g > 0)
        if unknown.any():
            docs = sorted({str(Q.doc_ids[Q.d[q_rows[i]]]) for i in np.flatnonzero(unknown)})
            raise InputError(
                f"freshness rule {rule.name!r} decays with the time since a version was "
                f"superseded, unknown for {', '.join(map(repr, docs[:5]))} (their successor "
                "has no valid_from): give those times, or use a rule without a half-life"
            )
    original = jn.unit_g
    judged = rule.apply(original, out_u, u_st == FUTURE, np.nan_to_num(age))
    jn.unit_g = judged
    jn.m_grade = judged[jn.m_unit] if len(jn.m_unit) else judged[:0]
    jn.doc_label = judged
    jn.n_gt_ids = np.bincount(jn.unit_q[judged > 0], minlength=n_q)
    # retrieved rows: status
    r_rows = V.index(R.doc_ids)[R.d[run_rows]] if len(run_rows) else np.zeros(0, np.int64)
    r_st = V.status(r_rows, as_of[ev])[0]
    ev_arrays = _evidence(V, unit_rows, jn.unit_q, original, as_of, r_rows, r_st, ev, rank)
    counts = {
        "outdated_retrieved": int((r_st == OUTDATED).sum()),
        "undated_retrieved": int((r_st == UNDATED).sum()),
        "future_retrieved": int((r_st == FUTURE).sum()),
        "labels_carried": int(fin.carried),
        "labels_outdated": int((out_u & (original > 0)).sum()),
        "versioned_queries": len(np.unique(ev_arrays[0])),
    }
    ev_q, ev_grade, ev_current, ev_outdated = ev_arrays
    jn.fresh = FreshRanks(
        ev.astype(np.int64), rank.astype(np.int64), r_st, ev_q, ev_grade, ev_current,
        ev_outdated, counts=counts,
    )  # fmt: skip


def _evidence(
    V: Versions,
    unit_rows: np.ndarray,
    unit_q: np.ndarray,
    grade: np.ndarray,
    as_of: np.ndarray,
    r_rows: np.ndarray,
    r_st: np.ndarray,
    ev: np.ndarray,
    rank: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(ev_q, ev_grade, ev_current, ev_outdated)`` of the versioned evidence groups."""
    n_g = max(len(V.group_ids), 1)
    listed = unit_rows >= 0
    key = unit_q[listed].astype(np.int64) * n_g + V.group[unit_rows[listed]]
    keys, inv = np.unique(key, return_inverse=True)
    g_best = np.full(
        len(keys), np.iinfo(np.int64).min if grade.dtype.kind == "i" else -np.inf, dtype=grade.dtype
    )
    np.maximum.at(g_best, inv, grade[listed])
    eq, eg = keys // n_g, keys % n_g
    members, off = V.members()
    size = off[eg + 1] - off[eg]
    e_idx = np.repeat(np.arange(len(keys)), size)
    starts = np.repeat(off[eg], size)
    within = np.arange(len(e_idx)) - np.repeat(np.cumsum(size) - size, size)
    m_st = V.status(members[starts + within], as_of[eq[e_idx]])[0]
    has_out = np.bincount(e_idx[m_st == OUTDATED], minlength=len(keys)) > 0
    has_cur = np.bincount(e_idx[m_st == CURRENT], minlength=len(keys)) > 0
    sel = has_out & has_cur & (g_best > 0)
    keys, eq, g_best = keys[sel], eq[sel], g_best[sel]
    listed_r = r_rows >= 0
    r_key = ev[listed_r].astype(np.int64) * n_g + V.group[r_rows[listed_r]]
    at = np.searchsorted(keys, r_key)
    hit = (
        (at < len(keys)) & (keys[np.minimum(at, max(len(keys) - 1, 0))] == r_key)
        if len(keys)
        else at < 0
    )
    r_rank, r_status = rank[listed_r], r_st[listed_r]
    best = []
    for want in (CURRENT, OUTDATED):  # the best rank of a current / outdated version
        pick = hit & (r_status == want)
        out = np.full(len(keys), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(out, at[pick], r_rank[pick].astype(np.int64))
        best.append(np.where(out == np.iinfo(np.int64).max, 0, out))
    return eq.astype(np.int64), g_best, best[0], best[1]
