"""A run's ranking order: score descending, then document id descending (trec_eval's),
as a permutation that is usually the identity but for a few tied rows."""

from __future__ import annotations

import numpy as np

from .ids import DocIds


class RowOrder:
    """A permutation of a run's rows: either ``full`` (any permutation) or the identity
    except at positions ``idx``, which take rows ``src`` (tied rows reordered within their
    query, so the query column is unchanged)."""

    __slots__ = ("full", "idx", "n", "src")

    def __init__(
        self,
        n: int,
        full: np.ndarray | None = None,
        idx: np.ndarray | None = None,
        src: np.ndarray | None = None,
    ) -> None:
        self.n = n
        self.full = full
        empty = np.zeros(0, dtype=np.int64)
        self.idx = empty if idx is None else idx
        self.src = empty if src is None else src

    @property
    def within_queries(self) -> bool:
        """True when rows only move within their query (the query column is unchanged)."""
        return self.full is None

    @property
    def is_identity(self) -> bool:
        return self.full is None and len(self.idx) == 0

    def apply(self, x: np.ndarray) -> np.ndarray:
        """``x`` (one value per row) in this order; ``x`` itself for the identity."""
        if self.full is not None:
            ordered: np.ndarray = x[self.full]
            return ordered
        if len(self.idx) == 0:
            return x
        out: np.ndarray = x.copy()
        out[self.idx] = x[self.src]
        return out

    def source(self, positions: np.ndarray) -> np.ndarray:
        """The original row at each of ``positions`` of the ordered rows."""
        if self.full is not None:
            rows: np.ndarray = self.full[positions]
            return rows
        if len(self.idx) == 0:
            return positions
        j = np.minimum(np.searchsorted(self.idx, positions), len(self.idx) - 1)
        return np.where(self.idx[j] == positions, self.src[j], positions)

    def array(self) -> np.ndarray:
        """The permutation as an index array."""
        return self.apply(np.arange(self.n, dtype=np.int64))


_CHUNK = 1 << 16  # rows per block of the order check: its temporaries stay in cache


def trec_order(q: np.ndarray, score: np.ndarray, docs: DocIds) -> RowOrder:
    """The rows ranked trec_eval's way within each query (queries keep their blocks)."""
    n = len(q)
    # One pass over adjacent rows, in cache-sized blocks: queries must not go down, scores
    # not up within a query; tied rows are collected (they need documents descending).
    ties: list[np.ndarray] = []
    for a in range(0, max(n - 1, 0), _CHUNK):
        b = min(a + _CHUNK, n - 1)
        q0, q1 = q[a:b], q[a + 1 : b + 1]
        s0, s1 = score[a:b], score[a + 1 : b + 1]
        same_q = q0 == q1  # a change of query starts the next query's block
        if (same_q & (s1 > s0)).any():
            return _full_order(q, score, docs)
        tie = np.flatnonzero(same_q & (s1 == s0))
        if len(tie):
            ties.append(tie + a)
    if not ties:
        return RowOrder(n)
    # Ranked by score already; only runs of tied scores need their documents reordered
    # (by id descending), and only the tied rows' ids are compared.
    tie_at = np.concatenate(ties)  # row i ties with row i + 1
    member = np.zeros(n, dtype=bool)
    member[tie_at] = True
    member[tie_at + 1] = True
    idx = np.flatnonzero(member)
    tie = np.zeros(n, dtype=bool)
    tie[tie_at] = True
    starts = np.ones(len(idx), dtype=bool)
    starts[1:] = ~tie[idx[1:] - 1]
    group = np.cumsum(starts)
    src = idx[docs.desc_order(idx, group)]
    moved = src != idx
    return RowOrder(n, idx=idx[moved], src=src[moved])


def input_order(q: np.ndarray, score: np.ndarray) -> RowOrder:
    """The rows ranked by score descending within each query, tied rows in their input
    order (``ties="input"``)."""
    n = len(q)
    if n < 2:
        return RowOrder(n)
    same_q = q[1:] == q[:-1]
    if not (q[1:] < q[:-1]).any() and not (same_q & (score[1:] > score[:-1])).any():
        return RowOrder(n)
    return RowOrder(n, full=np.lexsort((-score, q)))  # lexsort is stable


def _full_order(q: np.ndarray, score: np.ndarray, docs: DocIds) -> RowOrder:
    """Rows not in score order: sort by (query, score descending), then ties by id."""
    o = np.lexsort((-score, q))
    qs, ss = q[o], score[o]
    tied = np.zeros(len(o), dtype=bool)
    if len(o) > 1:
        same = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
        tied[1:] |= same
        tied[:-1] |= same
    if tied.any():
        at = np.flatnonzero(tied)
        starts = np.ones(len(at), dtype=bool)
        starts[1:] = ~((qs[at[1:]] == qs[at[:-1]]) & (ss[at[1:]] == ss[at[:-1]]))
        o[at] = o[at][docs.desc_order(o[at], np.cumsum(starts))]
    return RowOrder(len(o), full=o)
