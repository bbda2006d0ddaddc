"""The join for the commonest Python input, a run of ``{query: {doc: score}}`` dicts, done on
the run's own dicts (see :func:`join_dicts`).

A run given as dicts is already a hash table per query, so each labelled document is
looked up in it directly instead of packing and hashing every retrieved id for the columnar
join of :mod:`.join` (which would hold several times the run in arrays); a label's rank is
then counted from the query's scores. With the compiled helpers, a run of ranked lists
(``{query: [doc, ...]}``) or of ``(doc, score)`` pairs is read the same way: each labelled
query's hits are put in a small hash table of their ids, in C, and looked up there.
Everything the columnar path would refuse or convert (an id that is not a string, an empty
id, a score that is not a finite number, labels with a repeated document, a document
retrieved twice, grouped labels) makes this path step aside (None), so both paths give the
same numbers and errors: ``tests/judging/test_dict_path.py`` checks them equal to the last
bit.
"""

from __future__ import annotations

from collections import deque
from itertools import chain, islice, repeat
from typing import Any

import numpy as np

from ..model import native as compiled
from ..model.mappings import flat_numbers, query_codes
from ..model.vocab import sort_order
from .join import Join
from .options import JudgeOptions


def join_dicts(qrels: Any, run: Any, opts: JudgeOptions) -> Join | None:
    """The :class:`~.join.Join` of ``{query: {doc: grade}}`` or ``{query: [doc, ...]}``
    labels with a ``{query: {doc: score}}`` run (dicts, string ids; with the C helpers also
    ``{query: [doc, ...]}`` or ``{query: [(doc, score), ...]}``), ranked trec_eval's way
    (score descending, ties by id descending, or in input order under ``ties="input"``);
    None for anything else, which the columnar join reads (see the module docstring)."""
    conv = opts.convention
    if (
        conv.ordering != "score"
        or opts.ties not in ("trec", "input")
        or type(run) is not dict
        or not isinstance(qrels, dict)
    ):
        return None
    r_vals = list(run.values())
    if not all(map(isinstance, run, repeat(str))) or "" in run:
        return None
    native = compiled.NATIVE
    kind = _hit_kind(native, r_vals)  # 0 dicts; 1 ranked lists, 2 (doc, score) pairs, in C
    if kind < 0:
        return None
    scores: np.ndarray | None
    if kind == 1:  # a ranked list's document at position j scores -j, as the columns read it
        n_hits = np.fromiter(map(len, r_vals), dtype=np.int64, count=len(r_vals))
        at = np.arange(int(n_hits.sum())) - np.repeat(np.cumsum(n_hits) - n_hits, n_hits)
        scores = (-at).astype(np.float64)
    elif kind == 2:  # every pair and score checked in C (the ids as each query is read)
        got = native.pair_scores(r_vals)
        if got is None:
            return None
        scores = np.frombuffer(got, dtype=np.float64)
    else:
        scores = _native_scores(native, r_vals)  # every id and score checked in C, when built
    if scores is None:
        native = None  # something the C helpers do not read: the numpy path throughout
        if not all(type(v) is dict for v in r_vals) or not _valid_docs(r_vals):
            return None
        found = flat_numbers(list(chain.from_iterable(map(dict.values, r_vals))), "iuf")
        if found is None:
            return None  # the columnar path checks every score and names a bad one
        scores = found
        scores = scores.astype(np.float64, copy=False)
    labels = _labels(qrels, native)
    if labels is None:
        return None
    qids, q_vals, q_lens, grades = labels
    if not np.isfinite(scores).all():
        return None
    if opts.score_precision == "float32":
        scores = scores.astype(np.float32).astype(np.float64)

    # --- queries: the labels' ids, in the columnar path's order -------------------------
    present_all = np.fromiter(map(run.__contains__, qids), dtype=bool, count=len(qids))
    keep = present_all.copy() if conv.missing == "skip" else np.ones(len(qids), dtype=bool)
    no_rel_ids: list[str] = []
    if conv.no_relevant == "skip":
        has_rel = np.zeros(len(qids), dtype=bool)
        has_rel[np.repeat(np.arange(len(qids)), q_lens)[grades >= opts.relevance_level]] = True
        no_rel_ids = [q for q, k, h in zip(qids, keep.tolist(), has_rel.tolist()) if k and not h]
        keep &= has_rel
    eval_at = np.flatnonzero(keep)
    n_q = len(eval_at)
    if n_q == 0:
        return None  # nothing to evaluate: the columnar join says why
    eval_ids = [qids[i] for i in eval_at.tolist()]

    # --- the run's rows: each query's segment of the flat scores -------------------------
    r_lens = np.fromiter(map(len, r_vals), dtype=np.int64, count=len(r_vals))
    r_off = np.zeros(len(r_vals) + 1, dtype=np.int64)
    np.cumsum(r_lens, out=r_off[1:])
    slot = dict(zip(run, range(len(r_vals))))  # run query -> its segment
    ev_seg = np.fromiter(map(slot.get, eval_ids, repeat(-1)), np.int64, count=n_q)
    there = ev_seg >= 0
    lens = np.zeros(n_q, dtype=np.int64)
    seg_start = np.zeros(n_q, dtype=np.int64)
    lens[there] = r_lens[ev_seg[there]]
    seg_start[there] = r_off[ev_seg[there]]
    ranked, unsorted = _ranked_scores(scores, r_off)  # each segment descending

    # --- labels of evaluated queries, looked up in the run's dicts ----------------------
    pos_q = np.full(len(qids), -1, dtype=np.int64)
    pos_q[eval_at] = np.arange(n_q)
    row_q = np.repeat(pos_q, q_lens)
    sel = row_q >= 0
    if native is not None:  # looked up in C (each labelled id checked there)
        # lists: each labelled query's hits as a table of their ids, checked as it is built
        got = native.lookups(run, qids, q_vals, len(grades), kind)
        if got is None:
            return None
        found = np.frombuffer(got, dtype=np.float64)
    else:
        empty: dict[str, Any] = {}
        found = np.fromiter(
            chain.from_iterable(
                map(run.get(q, empty).get, lab, repeat(np.nan)) for q, lab in zip(qids, q_vals)
            ),
            dtype=np.float64,
            count=len(grades),
        )
    if opts.score_precision == "float32":
        found = found.astype(np.float32).astype(np.float64)
    sel &= ~np.isnan(found)
    h_rows = np.flatnonzero(sel)
    h_q = row_q[h_rows]
    s = found[h_rows]
    del found
    start, length = seg_start[h_q], lens[h_q]
    above, tied = _places(ranked, start, length, s)
    rank = above + 1
    at = np.flatnonzero(tied > 1)
    if len(at):
        moved = _tie_places(run, eval_ids, q_vals, q_lens, scores, r_off, ev_seg, unsorted,
                            h_rows[at], h_q[at], above[at], tied[at], s[at], opts,
                            native)  # fmt: skip
        if moved is None:
            return None
        rank[at] += moved

    # --- ties among the evaluated queries' documents, for the notes ----------------------
    evaluated = np.zeros(len(r_vals), dtype=bool)
    evaluated[ev_seg[there]] = True
    tied_docs, tie_queries = _tie_counts(ranked, r_off, evaluated)
    del ranked

    ignored_ids = [q for q in run if q not in qrels]
    if (
        kind
        and ignored_ids
        and native.seq_check(list(map(run.__getitem__, ignored_ids)), kind) is None
    ):
        return None  # an unlabelled query's ids are not all plain (or one repeats): the columns
    labelled = row_q >= 0
    unit_q, unit_g = row_q[labelled], grades[labelled]
    return Join(
        query_ids=_objects(eval_ids),
        missing=~present_all[eval_at],
        lens=lens,
        m_q=h_q,
        m_rank=rank,
        m_unit=np.cumsum(labelled)[h_rows] - 1,
        m_grade=grades[h_rows],
        m_repeat=np.zeros(len(h_rows), dtype=bool),
        rep_q=np.zeros(0, dtype=np.int64),
        rep_rank=np.zeros(0, dtype=np.int64),
        unit_q=unit_q,
        unit_g=unit_g,
        doc_q=unit_q,
        doc_label=unit_g,
        n_gt_ids=np.bincount(unit_q[unit_g > 0], minlength=n_q),
        missing_ids=[q for q, p in zip(qids, present_all.tolist()) if not p],
        ignored_ids=_sorted_ids(ignored_ids),
        no_rel_ids=no_rel_ids,
        dropped=0,
        kept_dups=0,
        run_name="run",
        max_grade=int(grades.max()) if len(grades) else 0,
        tied_docs=tied_docs,
        tie_queries=tie_queries,
    )


def _valid_docs(r_vals: list[dict[Any, Any]]) -> bool:
    """Whether the run's document ids are all non-empty strings (what the columnar path
    takes as they are). Joining each query's ids into one string checks every one of them
    in C, each query's ids while they are in the cache."""
    if any(map(dict.__contains__, r_vals, repeat(""))):
        return False
    try:
        deque(map("".join, r_vals), 0)
    except TypeError:
        return False
    return True


def _hit_kind(native: Any, r_vals: list[Any]) -> int:
    """How the run's hits come: 0 as dicts (or anything the C helpers do not read as lists),
    1 as ranked lists of ids, 2 as lists of ``(doc, score)`` pairs, read by the C helpers;
    -1 for lists of forms mixed (the columnar path)."""
    if native is None or not hasattr(native, "seq_check") or not r_vals:
        return 0
    if type(r_vals[0]) is dict or not all(type(v) is list or type(v) is tuple for v in r_vals):
        return 0
    firsts = {type(v[0]) for v in r_vals if v}
    if firsts <= {tuple, list}:
        return 2
    return 1 if firsts.isdisjoint({tuple, list}) else -1


def _native_scores(native: Any, r_vals: list[Any]) -> np.ndarray | None:
    """Every score of the run's dicts read in C (ids checked too), or None when the C
    helpers are not built or leave the run to numpy."""
    if native is None:
        return None
    got = native.run_scores(r_vals)
    return None if got is None else np.frombuffer(got, dtype=np.float64)


def _sorted_ids(ids: list[Any]) -> list[Any]:
    """``ids`` in the order the columnar path sorts query ids."""
    return [ids[i] for i in sort_order(ids).tolist()] if ids else ids


def _objects(ids: list[Any]) -> np.ndarray:
    out = np.empty(len(ids), dtype=object)
    out[:] = ids
    return out


def _labels(
    qrels: dict[Any, Any], native: Any = None
) -> tuple[list[Any], list[Any], np.ndarray, np.ndarray] | None:
    """``(query ids sorted, their labels, labels per query, grades)`` of ``{query: {doc:
    grade}}`` or ``{query: [doc, ...]}`` (grade 1) with string ids and integer grades, no
    document twice in a query; None for anything else. With the C helpers (``native``),
    the grades are read and the ids checked in C (the ids as they are looked up)."""
    coded = query_codes(qrels)
    if coded is None:
        return None
    qids = coded[1].tolist()
    values = list(map(qrels.__getitem__, qids))
    dicts = all(type(v) is dict for v in values)
    if not dicts and set(map(type, values)) - {list, tuple}:
        return None  # a mix of forms, other containers: the columnar path
    if native is None:
        try:  # every id a string (grouped labels are lists of lists)
            deque(map("".join, values), 0)
        except TypeError:
            return None
    q_lens = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    if dicts:
        if any(map(dict.__contains__, values, repeat(""))):
            return None
        got = None if native is None else native.label_grades(values)
        if got is not None:
            grades = np.frombuffer(got, dtype=np.int64)
        else:
            found = flat_numbers(list(chain.from_iterable(map(dict.values, values))), "iub")
            if found is None:
                return None  # the columnar path names a bad grade
            grades = found
    else:
        try:
            if any("" in v or len(set(v)) < len(v) for v in values):
                return None  # an empty id, a document listed twice: the columnar path names it
        except TypeError:  # an unhashable id (groups are lists of lists)
            return None
        grades = np.ones(int(q_lens.sum()), dtype=np.int64)
    return qids, values, q_lens, grades.astype(np.int64)


def _ranked_scores(scores: np.ndarray, off: np.ndarray) -> tuple[np.ndarray, set[int]]:
    """Each query's scores (``scores[off[i]:off[i + 1]]``) sorted descending, and the
    queries that were not so already (most runs are: then nothing moves)."""
    up = np.flatnonzero(scores[1:] > scores[:-1]) + 1  # a score above the one before it
    if len(up):
        up = up[~np.isin(up, off)]  # ... in the same query
    if not len(up):
        return scores, set()
    seg = np.unique(np.searchsorted(off, up, side="right") - 1)
    starts, sizes = off[seg], off[seg + 1] - off[seg]
    width = int(sizes.max())
    col = np.arange(width)[None, :] < sizes[:, None]
    rows = (starts[:, None] + np.arange(width)[None, :])[col]
    mat = np.full((len(seg), width), np.inf)
    mat[col] = -scores[rows]
    mat.sort(axis=1)
    out = scores.copy()
    out[rows] = -mat[col]
    return out, set(seg.tolist())


def _places(
    ranked: np.ndarray, start: np.ndarray, length: np.ndarray, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each score ``s`` in its descending segment ``ranked[start:start + length]``: the
    entries above it and the entries equal to it (at least 1, itself): a binary search per
    score in C when the helpers are built, else vectorised over all scores at once."""
    native = compiled.NATIVE
    found = getattr(native, "ranks", None)
    if found is not None and len(s):
        f8, i8 = np.float64, np.int64
        got = found(*(np.ascontiguousarray(a, t) for a, t in
                      ((ranked, f8), (start, i8), (length, i8), (s, f8))))  # fmt: skip
        if got is not None:
            return np.frombuffer(got[0], np.int64), np.frombuffer(got[1], np.int64)
    above = _count_above(ranked, start, length, s)  # scores > s
    return above, _tied(ranked, start + above, start + length, s)  # scores == s


def _count_above(
    ranked: np.ndarray, start: np.ndarray, length: np.ndarray, s: np.ndarray
) -> np.ndarray:
    """In the descending segments ``ranked[start:start + length]``, the number of entries
    above ``s``: a vectorised binary search over all segments at once, one step per bit of
    the longest segment."""
    count = np.zeros(len(s), dtype=np.int64)
    if not len(s):
        return count
    step = 1 << (int(length.max()).bit_length() - 1)
    while step:
        cand = count + step
        ok = cand <= length
        np.minimum(cand, length, out=cand)
        cand += start
        cand -= 1
        ok &= ranked[cand] > s
        count[ok] += step
        step >>= 1
    return count


def _tied(ranked: np.ndarray, first: np.ndarray, end: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The number of entries equal to ``s`` from ``first`` (where ``s`` stands in its
    descending segment) up to ``end``: one step per further tie (most runs of ties are
    two)."""
    tied = np.ones(len(s), dtype=np.int64)
    live = np.flatnonzero(first + 1 < end)
    while len(live):
        nxt = first[live] + tied[live]
        same = ranked[np.minimum(nxt, len(ranked) - 1)] == s[live]
        same &= nxt < end[live]
        live = live[same]
        tied[live] += 1
    return tied


def _tie_counts(ranked: np.ndarray, off: np.ndarray, evaluated: np.ndarray) -> tuple[int, int]:
    """(documents, queries) in runs of equal scores among the ``evaluated`` queries'
    (``ranked[off[i]:off[i + 1]]``, each descending), as :func:`~.join.tie_counts` counts
    them."""
    if len(ranked) < 2:
        return 0, 0
    pair = ranked[1:] == ranked[:-1]
    bounds = off[1:-1]
    pair[bounds[(bounds > 0) & (bounds < len(ranked))] - 1] = False  # not across two queries
    pair &= np.repeat(evaluated, np.diff(off))[1:]
    if not pair.any():
        return 0, 0
    member = np.zeros(len(ranked), dtype=bool)
    member[1:] |= pair
    member[:-1] |= pair
    seg = np.searchsorted(off, np.flatnonzero(member), side="right") - 1
    return int(member.sum()), len(np.unique(seg))


def _tie_places(
    run: dict[Any, Any], eval_ids: list[Any], q_vals: list[Any], q_lens: np.ndarray,
    scores: np.ndarray, r_off: np.ndarray, ev_seg: np.ndarray, unsorted: set[int],
    rows: np.ndarray, hq: np.ndarray, above: np.ndarray, tied: np.ndarray, s: np.ndarray,
    opts: JudgeOptions, native: Any = None,
) -> np.ndarray | None:  # fmt: skip
    """For labelled documents tied with others in score (label rows ``rows``): how many of
    their tied documents rank before them (ids greater, trec_eval's order; or earlier in
    the dict under ``ties="input"``)."""
    ties = opts.ties
    seg = ev_seg[hq]
    dicts = list(map(run.__getitem__, map(eval_ids.__getitem__, hq.tolist())))
    docs = None
    if native is not None and hasattr(native, "label_docs"):  # only the tied rows' labels
        q_off = np.cumsum(q_lens) - q_lens
        which = np.searchsorted(q_off, rows, side="right") - 1
        docs = native.label_docs(
            q_vals, which.astype(np.int64), (rows - q_off[which]).astype(np.int64)
        )
    if docs is None:
        labelled = list(chain.from_iterable(q_vals))
        docs = list(map(labelled.__getitem__, rows.tolist()))
        del labelled
    if native is not None and not unsorted:  # counted in C, the entries before not read
        f32 = opts.score_precision == "float32"
        got = native.tie_places(dicts, above.astype(np.int64), tied.astype(np.int64), docs,
                                ties == "trec", s.astype(np.float64), f32)  # fmt: skip
        if got is not None:
            return np.frombuffer(got, dtype=np.int64)
    # lists of (doc, score) pairs not in score order: their ids, read as a dict's keys
    dicts = [d if type(d) is dict else [p[0] for p in d] for d in dicts]
    # a query in score order: its ties are consecutive, sliced in C from the nearer end
    n = np.fromiter(map(len, dicts), np.int64, len(dicts))
    back = above + tied > n // 2
    groups: list[Any] = [None] * len(dicts)
    front, end = np.flatnonzero(~back), np.flatnonzero(back)
    lo, hi = above[front].tolist(), (above + tied)[front].tolist()
    sliced = map(islice, map(dicts.__getitem__, front.tolist()), lo, hi)
    for i, g in zip(front.tolist(), map(list, sliced)):
        groups[i] = g
    lo, hi = (n - above - tied)[end].tolist(), (n - above)[end].tolist()
    sliced = map(islice, map(reversed, map(dicts.__getitem__, end.tolist())), lo, hi)
    for i, g in zip(end.tolist(), map(list, sliced)):
        groups[i] = g[::-1]
    if unsorted:  # elsewhere: the tied documents are wherever their score is
        for i in np.flatnonzero(np.isin(seg, list(unsorted))).tolist():
            lo, hi = r_off[seg[i]], r_off[seg[i] + 1]
            keys = list(dicts[i])
            groups[i] = [keys[j] for j in np.flatnonzero(scores[lo:hi] == s[i]).tolist()]
    sizes = np.fromiter(map(len, groups), np.int64, len(groups))
    flat = list(chain.from_iterable(groups))
    if ties == "trec":
        mine = chain.from_iterable(map(repeat, docs, sizes.tolist()))
        above_me = np.fromiter(map(str.__gt__, flat, mine), dtype=bool, count=len(flat))
        first = np.cumsum(sizes) - sizes
        return np.add.reduceat(above_me, first).astype(np.int64) if len(flat) else sizes * 0
    return np.fromiter(map(list.index, groups, docs), np.int64, len(groups))
