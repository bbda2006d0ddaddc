"""Where the evidence was lost: loss attribution over a pipeline's stages.

Every stage of a pipeline (:class:`~ranklens.model.stages.StagedRun`) is judged against the
same labels with the same options, so each relevant unit u of each query (a labelled
document, a group of documents any one of which finds it, or an evidence span; grade at or
above the relevance level ℓ) has, at each stage s, ``rank[u, s]``: the rank where the
stage's list first holds it (0 when it does not). With ``n_s`` the length of stage s's list
for u's query, each unit gets one fate, read from its last loss:

* **found**: in the last stage's list (and within the context budget when one is given);
* **outside the budget**: in the last stage's list, below the budget's cutoff c_q (the
  ranks whose chunks fit the budget: :mod:`ranklens.judging.budget`);
* **cut by rank** at stage s: in stage s−1 at rank r, with r > n_s and r > m_s, where m_s
  is the deepest rank in stage s−1 of any document stage s kept: the stage kept fewer
  documents than its rank and nothing from below it, so a cut to the top of the list drops
  it whatever the stage thought of it (a top-n after a stage that ranked it too low);
* **filtered** at stage s: in stage s−1 and not in stage s otherwise: the stage had room
  for it (r ≤ n_s) or kept a document ranked below it (r ≤ m_s), so it was left out on its
  merits (a filter, de-duplication, or a reranker that preferred others);
* **never retrieved**: in no stage's list.

A unit that is absent at s−1 and present at s is **added** by stage s (fusion, or a
reranker that brings documents no earlier stage had): allowed, counted per stage. A unit
lost, added back and lost again is attributed to its last loss, so the fates partition the
relevant units: ``Σ_fates count = Σ_q R_q`` (R_q the relevant units of query q).

Without the runs (``kept`` not given), m_s is taken as 0 and the rule reads r > n_s alone.
A stage declared a filter (its kind is one of :data:`FILTER_KINDS`: a filter keeps what
passes, however the result looks) has every loss "filtered".

``lost_at`` is the stage index where the unit's fate happened: 0 for never retrieved (the
first stage did not find it), s for filtered or cut at s, ``n_stages`` for outside the
budget (the context, after the last stage) and −1 for found.

The walk reads only judged arrays (``Judged.u_q``, ``u_rank``, ``u_id``, ``unit_q``,
``unit_g``, ``lens``), so ids, grouped labels, spans, conventions (duplicates, ties) and
versions enter through judging as for every metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Run
from .judged import Judged
from .options import JudgeOptions

FATES = ("found", "outside the budget", "filtered", "cut by rank", "never retrieved")
"""The fates of a relevant unit, in the order reports show them."""
FOUND, OUTSIDE, FILTERED, CUT, NEVER = range(5)
FILTER_KINDS = frozenset({"filter", "dedup", "deduplication"})
"""Stage kinds whose every loss is "filtered" (the stage removes by content, never by rank)."""


@dataclass(eq=False)
class Attribution:
    """Each relevant unit's path through the stages (see the module docstring).

    * ``stages``: the stage names; ``query_ids``: the queries (the union of the queries each
      stage's judging evaluated, in the labels' order);
    * per relevant unit (sorted by query): ``unit_q`` (query index), ``unit_k`` (its place
      among its query's relevant units, in label order), ``grade``;
    * ``rank`` (units x stages): its first rank in each stage's list, 0 where absent;
    * ``lens`` (queries x stages): each stage's list length per query (0 where the query
      has no list at that stage); ``evaluated`` (queries x stages): whether the stage's
      judging evaluated the query (a query a convention skips at a stage is not);
    * ``cutoff``: per query the budget's cutoff on the last stage (None without a budget);
    * ``kept`` (queries x stages): m_s, the deepest rank in stage s−1 of a document stage s
      kept (0 at the first stage; None when the runs were not given); ``filters`` (per
      stage): whether the stage is declared a filter; ``inputs`` (per stage): the stages it
      reads (default: the stage before it; parallel retrievers read by a fusion stage);
    * ``fate`` (codes into :data:`FATES`) and ``lost_at`` per unit.
    """

    stages: tuple[str, ...]
    query_ids: np.ndarray
    unit_q: np.ndarray
    unit_k: np.ndarray
    grade: np.ndarray
    rank: np.ndarray
    lens: np.ndarray
    evaluated: np.ndarray
    cutoff: np.ndarray | None
    kept: np.ndarray | None = None
    filters: np.ndarray | None = None
    inputs: tuple[tuple[int, ...], ...] | None = None
    fate: np.ndarray = field(init=False)
    lost_at: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        if self.inputs is None:
            self.inputs = tuple(() if s == 0 else (s - 1,) for s in range(len(self.stages)))
        self.fate, self.lost_at = _walk(self)

    @property
    def before(self) -> np.ndarray:
        """(units x stages) the unit's best rank in the stages each stage reads (0: in none
        of them, or the stage reads none)."""
        out = np.zeros_like(self.rank)
        for s, read in enumerate(self.inputs or ()):
            if read:
                r = self.rank[:, list(read)]
                out[:, s] = np.where(r > 0, r, np.iinfo(np.int64).max).min(axis=1)
        out[out == np.iinfo(np.int64).max] = 0
        return out

    @property
    def roots(self) -> np.ndarray:
        """Per stage, whether it reads no stage (a first-stage retriever)."""
        return np.array([not read for read in self.inputs or ()], dtype=bool)

    @property
    def n_stages(self) -> int:
        return len(self.stages)

    @property
    def present(self) -> np.ndarray:
        """(units x stages) whether each stage's list holds the unit."""
        return self.rank > 0

    @property
    def added(self) -> np.ndarray:
        """(units x stages) whether the stage brought the unit (absent from every stage it
        reads, present here; never at a first stage, which reads none)."""
        out: np.ndarray = self.present & (self.before == 0) & ~self.roots[None, :]
        return out

    def counts(self) -> dict[str, dict[str, int]]:
        """Per stage (and ``"context"`` for the budget), how many units met each fate there,
        and how many it added: ``{stage: {fate: n, ..., "added": n}}``."""
        places = [*self.stages, "context"]
        out: dict[str, dict[str, int]] = {}
        added = self.added.sum(axis=0)
        for s, place in enumerate(places):
            row = {f: 0 for f in FATES if f != "found"}
            at = self.lost_at == s
            for code in np.unique(self.fate[at]):
                row[FATES[code]] = int(np.count_nonzero(at & (self.fate == code)))
            row["added"] = int(added[s]) if s < self.n_stages else 0
            out[place] = row
        out["found"] = {"found": int(np.count_nonzero(self.fate == FOUND))}
        return out

    def fate_counts(self) -> dict[str, int]:
        """How many relevant units met each fate (over all stages)."""
        n = np.bincount(self.fate, minlength=len(FATES))
        return {f: int(n[i]) for i, f in enumerate(FATES)}

    def per_query(self) -> dict[str, np.ndarray]:
        """Per query (aligned with ``query_ids``), the number of relevant units of each
        fate, ``relevant`` (R_q) and per stage ``lost at <stage>`` (units whose fate
        happened there)."""
        n_q = len(self.query_ids)
        out = {
            f: np.bincount(self.unit_q[self.fate == i], minlength=n_q) for i, f in enumerate(FATES)
        }
        out["relevant"] = np.bincount(self.unit_q, minlength=n_q)
        for s, stage in enumerate(self.stages):
            sel = (self.lost_at == s) & (self.fate != FOUND)
            out[f"lost at {stage}"] = np.bincount(self.unit_q[sel], minlength=n_q)
        return out

    def recall(self) -> np.ndarray:
        """(queries x stages) the share of each query's relevant units each stage's list
        holds (0 for a query with none); with a budget, one more column: the share within
        the cutoff of the last stage."""
        n_q = len(self.query_ids)
        R = np.bincount(self.unit_q, minlength=n_q).astype(np.float64)
        cols = [
            np.bincount(self.unit_q[self.rank[:, s] > 0], minlength=n_q)
            for s in range(self.n_stages)
        ]
        if self.cutoff is not None:
            cols.append(np.bincount(self.unit_q[self.fate == FOUND], minlength=n_q))
        held = np.stack(cols, axis=1).astype(np.float64) if cols else np.zeros((n_q, 0))
        return np.divide(held, R[:, None], out=np.zeros_like(held), where=R[:, None] > 0)

    def held_before(self) -> np.ndarray:
        """(queries x stages) the share of each query's relevant units held by at least one
        of the stages each stage reads (0 for a stage that reads none)."""
        n_q = len(self.query_ids)
        R = np.bincount(self.unit_q, minlength=n_q).astype(np.float64)
        b = self.before > 0
        held: np.ndarray = np.stack(
            [np.bincount(self.unit_q[b[:, s]], minlength=n_q) for s in range(self.n_stages)],
            axis=1,
        ).astype(np.float64) if self.n_stages else np.zeros((n_q, 0))  # fmt: skip
        share: np.ndarray = np.divide(
            held, R[:, None], out=np.zeros_like(held), where=R[:, None] > 0
        )
        return share

    def units_of(self, query_id: str) -> np.ndarray:
        """The indices of one query's relevant units."""
        hit = np.flatnonzero(self.query_ids == str(query_id))
        if not len(hit):
            raise KeyError(f"query {query_id!r} is not among the staged queries")
        return np.flatnonzero(self.unit_q == hit[0])


def _walk(att: Attribution) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's fate and the stage where it happened (vectorised over units)."""
    rank, lens, unit_q = att.rank, att.lens, att.unit_q
    n_u, n_s = rank.shape
    fate = np.full(n_u, NEVER, dtype=np.int64)
    lost_at = np.zeros(n_u, dtype=np.int64)
    if n_u == 0 or n_s == 0:
        return fate, lost_at
    present = rank > 0
    before = att.before
    # the last loss: the latest stage that reads the unit and does not hold it
    drops = (before > 0) & ~present
    has_drop = drops.any(axis=1)
    last = n_s - 1 - np.argmax(drops[:, ::-1], axis=1)
    at_end = present[:, -1]
    lost = has_drop & ~at_end
    s = last[lost]
    r_before = before[lost, s]
    room = lens[unit_q[lost], s]
    if att.kept is not None:
        room = np.maximum(room, att.kept[unit_q[lost], s])
    cut = r_before > room
    if att.filters is not None:
        cut &= ~np.asarray(att.filters, dtype=bool)[s]
    fate[lost] = np.where(cut, CUT, FILTERED)
    lost_at[lost] = s
    fate[at_end] = FOUND
    lost_at[at_end] = -1
    if att.cutoff is not None:
        out = at_end & (rank[:, -1] > att.cutoff[unit_q])
        fate[out] = OUTSIDE
        lost_at[out] = n_s
    return fate, lost_at


def attribute(
    stages: Sequence[str],
    judged: Sequence[Judged],
    cutoff: np.ndarray | None = None,
    level: int | None = None,
    runs: Sequence[Run] | None = None,
    kinds: Sequence[str | None] | None = None,
    inputs: Sequence[Sequence[int]] | None = None,
) -> Attribution:
    """The :class:`Attribution` of a pipeline from its stages' judged pairs (one per stage,
    in pipeline order, all judged against the same labels with the same options).

    ``cutoff``: per query of the last stage's judging (its ``query_ids`` order), the
    context budget's cutoff rank (:meth:`Judged.budget_cutoffs`); units of the last stage
    below it are "outside the budget". ``level``: the relevance level ℓ (default: the
    options' level, at least 1). ``runs``: the stages' runs, for m_s
    (:func:`kept_depths`); ``kinds``: each stage's kind, for the filters; ``inputs``: per
    stage the positions of the stages it reads (default: the stage before).
    """
    if len(stages) != len(judged) or not judged:
        raise InputError("attribute() needs one judged pair per stage, in pipeline order")
    lv = max(int(judged[0].options.relevance_level if level is None else level), 1)
    # the queries: the union of those each stage evaluated, in the labels' (sorted) order
    query_ids = np.unique(np.concatenate([np.asarray(j.query_ids).astype(str) for j in judged]))
    n_q, n_s = len(query_ids), len(judged)
    lens = np.zeros((n_q, n_s), dtype=np.int64)
    evaluated = np.zeros((n_q, n_s), dtype=bool)
    keys: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per stage: query, k, grade
    firsts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per stage: query, k, rank
    for s, j in enumerate(judged):
        at = np.searchsorted(query_ids, np.asarray(j.query_ids).astype(str))
        lens[at, s] = j.lens
        evaluated[at, s] = True
        rel = np.flatnonzero(j.unit_g >= lv)
        rq = j.unit_q[rel]
        o = np.argsort(rq, kind="stable")  # units in label order within each query
        rel, rq = rel[o], rq[o]
        starts = np.searchsorted(rq, rq, side="left")
        k = np.arange(len(rel)) - starts
        local = np.full(len(j.unit_q), -1, dtype=np.int64)
        local[rel] = k
        keys.append((at[rq], k, j.unit_g[rel]))
        found = (j.u_grade >= lv) & (local[j.u_id] >= 0)
        firsts.append((at[j.u_q[found]], local[j.u_id[found]], j.u_rank[found]))
    # every relevant unit once, keyed (query, k)
    all_q = np.concatenate([k[0] for k in keys])
    all_k = np.concatenate([k[1] for k in keys])
    all_g = np.concatenate([k[2] for k in keys])
    width = int(all_k.max(initial=0)) + 1
    key = all_q * width + all_k
    uniq, first = np.unique(key, return_index=True)
    unit_q, unit_k, grade = all_q[first], all_k[first], all_g[first]
    rank = np.zeros((len(uniq), n_s), dtype=np.int64)
    for s, (fq, fk, fr) in enumerate(firsts):
        rank[np.searchsorted(uniq, fq * width + fk), s] = fr
    cut = None
    if cutoff is not None:
        last = judged[-1]
        cutoff = np.asarray(cutoff, dtype=np.int64)
        if cutoff.shape != (last.n_queries,):
            raise InputError(
                f"cutoff: one rank per query of the last stage ({last.n_queries}), "
                f"got shape {cutoff.shape}"
            )
        cut = np.zeros(n_q, dtype=np.int64)
        cut[np.searchsorted(query_ids, np.asarray(last.query_ids).astype(str))] = cutoff
    reads = (
        tuple(tuple(int(i) for i in r) for r in inputs)
        if inputs is not None
        else tuple(() if s == 0 else (s - 1,) for s in range(n_s))
    )
    kept = None if runs is None else kept_depths(runs, query_ids, judged[0].options, reads)
    filters = None
    if kinds is not None:
        filters = np.array([str(k).lower() in FILTER_KINDS if k else False for k in kinds])
    return Attribution(
        tuple(stages), query_ids, unit_q, unit_k, grade, rank, lens, evaluated, cut, kept,
        filters, reads,
    )  # fmt: skip


def kept_depths(
    runs: Sequence[Run],
    query_ids: np.ndarray,
    options: JudgeOptions,
    inputs: Sequence[Sequence[int]] | None = None,
) -> np.ndarray:
    """(queries x stages) m_s: per query, the deepest rank in a stage that s reads (default:
    stage s−1) of a document (or chunk) that stage s's list also holds; 0 for a stage that
    reads none and where s keeps none.
    Ranks follow judging's order (score descending, ties as the options say, or the given
    order under ``ordering="given"``), a repeated document at its first rank; documents are
    matched by their ids' 64-bit hashes within a query."""
    n_q, n_s = len(query_ids), len(runs)
    out = np.zeros((n_q, n_s), dtype=np.int64)
    keys = [_ranked_keys(r, query_ids, options) for r in runs]
    reads = inputs if inputs is not None else [[s - 1] if s else [] for s in range(n_s)]
    for s in range(n_s):
        if not reads[s]:
            continue
        ckey = np.sort(keys[s][1])
        for i in reads[s]:
            pq, pkey, prank = keys[i]
            if not len(ckey):
                continue
            pos = np.minimum(np.searchsorted(ckey, pkey), len(ckey) - 1)
            held = np.flatnonzero(ckey[pos] == pkey)
            if not len(held):
                continue
            # rows are in rank order within each query: a query's deepest kept row is its last
            hq = pq[held]
            last = held[np.r_[hq[1:] != hq[:-1], True]]
            out[pq[last], s] = np.maximum(out[pq[last], s], prank[last])
    return out


def _ranked_keys(
    run: Run, query_ids: np.ndarray, options: JudgeOptions
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``run`` in judging's order (rows of queries outside ``query_ids`` left
    out): the query's index, a (query, document) key, and its rank (a repeat at its first)."""
    if options.convention.ordering == "given":
        order = np.arange(len(run.q))
    else:
        order = run.row_order(options.score_precision, options.ties).apply(np.arange(len(run.q)))
    q_codes = run.q[order]
    at = np.searchsorted(query_ids, np.asarray(run.query_ids).astype(str))
    at = np.minimum(at, max(len(query_ids) - 1, 0))
    known = query_ids[at] == np.asarray(run.query_ids).astype(str) if len(query_ids) else at < 0
    rows = known[q_codes] if len(q_codes) else np.zeros(0, dtype=bool)
    qi = at[q_codes][rows].astype(np.int64)
    h = run.docs.hashes()[order][rows]
    key = h ^ (qi.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    if options.convention.duplicates == "error":  # judging refused any repeat already
        firsts = np.ones(len(key), dtype=bool)
    else:
        firsts = np.zeros(len(key), dtype=bool)
        firsts[np.unique(key, return_index=True)[1]] = True
    if options.convention.duplicates == "first":  # judging drops the repeats: ranks close up
        qi, key, firsts = qi[firsts], key[firsts], firsts[firsts]
    # rank within the query (judging's ranks count every row it keeps)
    starts = np.r_[0, np.flatnonzero(np.diff(qi)) + 1] if len(qi) else np.zeros(0, np.int64)
    rank = np.arange(len(qi)) - np.repeat(starts, np.diff(np.r_[starts, len(qi)])) + 1
    return qi[firsts], key[firsts], rank[firsts]


def trail(
    att: Attribution, query_id: str, labels: Sequence[Any] | None = None
) -> list[dict[str, Any]]:
    """One query's relevant units with their rank at each stage and their fate: the
    drill-down a report shows (``labels``: each unit's name, aligned with the units)."""
    rows = []
    for u in att.units_of(query_id):
        fate = FATES[att.fate[u]]
        at = int(att.lost_at[u])
        where = None if at < 0 else ("context" if at == att.n_stages else att.stages[at])
        rows.append({
            "unit": labels[u] if labels is not None else int(att.unit_k[u]),
            "grade": att.grade[u].item(),
            "ranks": {st: int(att.rank[u, s]) or None for s, st in enumerate(att.stages)},
            "fate": fate,
            "where": where,
        })  # fmt: skip
    return rows


__all__ = ["FATES", "FILTER_KINDS", "Attribution", "attribute", "kept_depths", "trail"]
