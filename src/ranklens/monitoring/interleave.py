"""Interleaving two rankings, and crediting clicks, vectorised over many impressions.

Rankings are rows of document indices (``-1`` pads a row); one row per impression. The
live :class:`~.interleaving.Interleaving` calls these with one row, a simulation with
thousands.

**Team draft** (Radlinski, Kurup & Joachims, *How does clickthrough data reflect
retrieval quality?*, CIKM 2008, Algorithm 2): while both rankings hold a document not yet
shown, the team with fewer picks (a fair coin when they have as many) adds its highest
ranked document not yet shown, and that document is credited to it. Past that point the
list is filled from the ranking that still has documents, credited to neither team
(:data:`NONE`: a click there counts for neither). A click on a team's document is a
vote for its ranker; the impression's outcome is the sign of (A's clicks − B's clicks).

**Probabilistic** (Hofmann, Whiteson & de Rijke, *A probabilistic method for inferring
preferences from clicks*, CIKM 2011): each ranker is a softmax over the documents by
rank, ``P_x(d) ∝ 1 / r_x(d)^τ`` (τ = 3); each position draws a ranker with a fair coin,
then a document from that ranker's softmax over the documents not yet shown (both
rankings rank every document of their union: a document one ranking lacks is appended
to it in the other's order). The outcome marginalises over which ranker could have
contributed each clicked document: given the list, the assignments are independent by
position with ``P(a_i = A) = p_A(l_i) / (p_A(l_i) + p_B(l_i))`` (each ``p_x`` the softmax
probability among the documents left at step ``i``), so the expected outcome
``E[sign(#A − #B)]`` over the clicked positions is a Poisson-binomial sum.

A live impression is one row: :func:`team_draft_row` and :func:`probabilistic_row` draw
it in plain Python from the same random numbers as the vectorised functions, with the
same floating-point operations in the same order (numpy's pairwise sums included), so a
seeded live interleaving serves exactly what one row of :func:`team_draft` or
:func:`probabilistic` gives, at a few microseconds instead of numpy's per-call costs on
arrays of a few elements. Where the compiled helpers are built (``ranklens-native``),
the probabilistic row is drawn in C with the same operations in the same order (tested
against this module's rows and the vectorised ones, bit for bit).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from functools import reduce
from itertools import accumulate
from operator import add
from typing import Any

import numpy as np

from ..model import native as compiled

NONE = -1
"""The team of a document filled in after a ranking ran out (team draft)."""

TAU = 3.0


def _next_unplaced(rank: np.ndarray, placed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = np.arange(rank.shape[0])[:, None]
    free = (rank >= 0) & ~placed[rows, np.maximum(rank, 0)]
    has = free.any(axis=1)
    return has, rank[np.arange(rank.shape[0]), free.argmax(axis=1)]


def team_draft(
    a: np.ndarray, b: np.ndarray, k: int, coins: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(docs, teams)``, each ``(n, k)``: the interleaved document indices (``-1`` past
    the documents available) and each one's team (0 = A, 1 = B, :data:`NONE`).
    ``coins``: ``(n, k)`` booleans, the coin flipped when the teams are even (True: A
    picks)."""
    n = a.shape[0]
    rows = np.arange(n)
    placed = np.zeros((n, n_docs + 1), dtype=bool)
    docs = np.full((n, k), -1, dtype=np.int64)
    teams = np.full((n, k), NONE, dtype=np.int64)
    picks = np.zeros((n, 2), dtype=np.int64)
    drafting = np.ones(n, dtype=bool)
    for pos in range(k):
        has_a, next_a = _next_unplaced(a, placed)
        has_b, next_b = _next_unplaced(b, placed)
        drafting &= has_a & has_b
        a_turn = (picks[:, 0] < picks[:, 1]) | ((picks[:, 0] == picks[:, 1]) & coins[:, pos])
        take_a = np.where(drafting, a_turn, has_a)
        doc = np.where(take_a, next_a, next_b)
        doc = np.where(has_a | has_b, doc, -1)
        team = np.where(drafting, np.where(take_a, 0, 1), NONE)
        docs[:, pos] = doc
        teams[:, pos] = np.where(doc >= 0, team, NONE)
        picks[rows[drafting], team[drafting]] += 1
        placed[rows, np.where(doc >= 0, doc, n_docs)] = True
    return docs, teams


def full_ranks(a: np.ndarray, b: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Each ranking's 1-based rank of every document of the union (``(n, n_docs)``;
    documents a ranking lacks follow its own, in the other's order; ``inf`` for an index
    in neither)."""
    n = a.shape[0]
    out = []
    for own, other in ((a, b), (b, a)):
        rank = np.full((n, n_docs), np.inf)
        rows = np.repeat(np.arange(n), own.shape[1])
        pos = np.tile(np.arange(1, own.shape[1] + 1), n).astype(np.float64)
        ok = own.ravel() >= 0
        rank[rows[ok], own.ravel()[ok]] = pos[ok]
        count = ok.reshape(n, -1).sum(axis=1)
        missing = (other >= 0) & np.isinf(rank[np.arange(n)[:, None], np.maximum(other, 0)])
        extra = count[:, None] + np.cumsum(missing, axis=1)
        r2, c2 = np.nonzero(missing)
        rank[r2, other[r2, c2]] = extra[r2, c2]
        out.append(rank)
    return out[0], out[1]


def probabilistic(
    a: np.ndarray, b: np.ndarray, k: int, n_docs: int, rng: np.random.Generator, tau: float = TAU
) -> tuple[np.ndarray, np.ndarray]:
    """``(docs, share_a)``, each ``(n, k)``: the interleaved document indices (``-1``
    once every document is shown) and, per position, ``P(a_i = A | list)``."""
    n = a.shape[0]
    ra, rb = full_ranks(a, b, n_docs)
    weights = [np.where(np.isfinite(r), 1.0 / r**tau, 0.0) for r in (ra, rb)]
    left: np.ndarray = np.isfinite(ra)
    docs = np.full((n, k), -1, dtype=np.int64)
    share = np.full((n, k), np.nan)
    rows = np.arange(n)
    for pos in range(k):
        live = [w * left for w in weights]
        totals = [w.sum(axis=1) for w in live]
        has = totals[0] > 0
        use_a: np.ndarray = np.asarray(rng.random(n)) < 0.5
        w = np.where(use_a[:, None], live[0], live[1])
        cum = np.cumsum(w, axis=1)
        u = rng.random(n) * cum[:, -1]
        doc = np.minimum((cum <= u[:, None]).sum(axis=1), n_docs - 1)
        pa = live[0][rows, doc] / np.where(has, totals[0], 1.0)
        pb = live[1][rows, doc] / np.where(has, totals[1], 1.0)
        docs[:, pos] = np.where(has, doc, -1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share[:, pos] = np.where(has, pa / (pa + pb), np.nan)
        left[rows[has], doc[has]] = False
    return docs, share


def team_draft_outcome(teams: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    """+1 when A's documents got more clicks, −1 when B's did, 0 otherwise."""
    a = (clicks & (teams == 0)).sum(axis=1)
    b = (clicks & (teams == 1)).sum(axis=1)
    out: np.ndarray = np.sign(a - b).astype(np.float64)
    return out


def probabilistic_outcome(share_a: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    """``E[sign(#A − #B)]`` over the clicked positions' independent assignments
    (``share_a``: ``P(a_i = A)``), in [−1, 1]: the distribution of #A among the clicks is
    built position by position (a Poisson-binomial recursion)."""
    n, k = clicks.shape
    dist = np.zeros((n, k + 1))
    dist[:, 0] = 1.0
    q = np.where(clicks, np.nan_to_num(share_a, nan=0.5), 0.0)
    for pos in range(k):
        step = clicks[:, pos]
        shifted = np.zeros_like(dist)
        shifted[:, 1:] = dist[:, :-1]
        new = dist * (1 - q[:, pos : pos + 1]) + shifted * q[:, pos : pos + 1]
        dist = np.where(step[:, None], new, dist)
    c = clicks.sum(axis=1)[:, None]
    count = np.arange(k + 1)[None, :]
    out: np.ndarray = (dist * (count * 2 > c)).sum(axis=1) - (dist * (count * 2 < c)).sum(axis=1)
    return out


# ---------------------------------------------------------------- one live row


def team_draft_row(
    a: Iterator[int], b: Iterator[int], k: int, coins: Sequence[bool]
) -> tuple[list[int], list[int]]:
    """One row of :func:`team_draft`, the documents served only: ``(docs, teams)``.
    ``a``, ``b``: each ranking's document indices in rank order, read only as far as the
    draft reaches (repeats are skipped as already shown); ``coins``: the ``k`` coins."""
    placed: set[int] = set()
    docs: list[int] = []
    teams: list[int] = []
    picks = [0, 0]
    drafting = True
    cur_a = cur_b = None
    for pos in range(k):
        if cur_a is None or cur_a in placed:
            cur_a = next((d for d in a if d not in placed), None)
        if cur_b is None or cur_b in placed:
            cur_b = next((d for d in b if d not in placed), None)
        if cur_a is None and cur_b is None:
            break
        drafting = drafting and cur_a is not None and cur_b is not None
        if drafting:
            take_a = picks[0] < picks[1] or (picks[0] == picks[1] and coins[pos])
            team = 0 if take_a else 1
            picks[team] += 1
        else:
            take_a, team = cur_a is not None, NONE
        doc = cur_a if take_a else cur_b
        assert doc is not None
        placed.add(doc)
        docs.append(doc)
        teams.append(team)
    return docs, teams


_WEIGHTS: dict[float, list[float]] = {}


def rank_weights(n: int, tau: float) -> list[float]:
    """``1 / r^τ`` for ranks ``r = 1..n``, computed by numpy as :func:`probabilistic`
    computes them (kept per τ, grown as longer rankings come)."""
    table = _WEIGHTS.get(tau)
    if table is None or len(table) < n:
        size = max(n, 2 * len(table) if table else 128)
        table = (1.0 / np.arange(1, size + 1, dtype=np.float64) ** tau).tolist()
        _WEIGHTS[tau] = table
    return table


_Node = int | tuple[Any, Any]
"""A block of a pairwise sum (its number), or the two halves of a longer row."""


class _PairwiseSum:
    """``np.add.reduce`` of a float64 row (numpy's pairwise summation: a row of fewer than
    8 summed in order; of at most 128, in eight interleaved accumulators combined as
    ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the rest in order; a longer
    row halved at a multiple of 8), kept current as entries are set to zero one at a
    time: only the block and the accumulator holding the entry are summed again."""

    __slots__ = ("blocks", "sums", "tree", "values")

    def __init__(self, values: list[float]):
        self.values = values
        self.blocks: list[tuple[int, int, int, list[float]]] = []  # lo, m, hi, accumulators
        self.sums: list[float] = []
        self.tree = self._build(0, len(values))

    def _build(self, lo: int, n: int) -> _Node:
        if n <= 128:
            v, m = self.values, lo + n - n % 8
            accs = [reduce(add, v[lo + j + 8 : m : 8], v[lo + j]) for j in range(8 * (n >= 8))]
            self.blocks.append((lo, m, lo + n, accs))
            self.sums.append(self._block(len(self.blocks) - 1))
            return len(self.blocks) - 1
        n2 = n // 2
        n2 -= n2 % 8
        return (self._build(lo, n2), self._build(lo + n2, n - n2))

    def _block(self, i: int) -> float:
        _, m, hi, accs = self.blocks[i]
        res = 0.0
        if accs:
            r0, r1, r2, r3, r4, r5, r6, r7 = accs
            res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for x in self.values[m:hi]:
            res += x
        return res

    def _total(self, node: _Node) -> float:
        if isinstance(node, int):
            return self.sums[node]
        return self._total(node[0]) + self._total(node[1])

    def total(self) -> float:
        return self._total(self.tree)

    def zero(self, i: int) -> None:
        """Set entry ``i`` to 0.0 and sum its accumulator and block again."""
        v = self.values
        v[i] = 0.0
        for b, (lo, m, hi, accs) in enumerate(self.blocks):
            if lo <= i < hi:
                if i < m:
                    j = (i - lo) % 8
                    accs[j] = reduce(add, v[lo + j + 8 : m : 8], v[lo + j])
                self.sums[b] = self._block(b)
                return


def probabilistic_row(
    a: Sequence[int], b: Sequence[int], n_docs: int, k: int, draws: Sequence[float], tau: float
) -> tuple[list[int], list[float]]:
    """One row of :func:`probabilistic`, the documents served only: ``(docs, share_a)``.
    ``a``, ``b``: each ranking's document indices in rank order, without repeats, together
    covering ``0 .. n_docs - 1``; ``draws``: ``2k`` uniform numbers, per position the
    ranker's coin then the document's draw (as :func:`probabilistic` takes them from its
    generator, one row at a time)."""
    table = rank_weights(n_docs, tau)
    native = compiled.NATIVE
    if native is not None and hasattr(native, "prob_row"):
        row = native.prob_row(a, b, n_docs, k, draws, table)
        if row is not None:  # else not plain ints covering 0 .. n_docs - 1: read below
            return row  # type: ignore[no-any-return]
    weights = []
    for own, other in ((a, b), (b, a)):
        la = len(own)
        if own == list(range(la)) and [d for d in other if d >= la] == list(range(la, n_docs)):
            # documents numbered as the live path numbers them (A's in its order, then B's
            # new ones in B's): A's rank of each is its number + 1
            weights.append(table[:n_docs])
            continue
        w = [0.0] * n_docs
        for r, d in enumerate(own):
            w[d] = table[r]
        r = len(own)
        seen = set(own)
        for d in other:
            if d not in seen:
                w[d] = table[r]
                r += 1
        weights.append(w)
    live_a, live_b = weights
    docs: list[int] = []
    share: list[float] = []
    last = n_docs - 1
    if n_docs > 128:
        sum_a, sum_b = _PairwiseSum(live_a), _PairwiseSum(live_b)
        for pos in range(k):
            total_a = sum_a.total()
            if not total_a > 0:
                break
            doc = _draw(live_a, live_b, draws[2 * pos], draws[2 * pos + 1], last)
            share.append(_share(live_a[doc], total_a, live_b[doc], sum_b.total()))
            docs.append(doc)
            sum_a.zero(doc)
            sum_b.zero(doc)
        return docs, share
    # one block of numpy's pairwise sum (_PairwiseSum, written out: the common case)
    m = n_docs - n_docs % 8
    eight = range(8) if n_docs >= 8 else range(0)
    acc_a = [reduce(add, live_a[j + 8 : m : 8], live_a[j]) for j in eight]
    acc_b = [reduce(add, live_b[j + 8 : m : 8], live_b[j]) for j in eight]
    for pos in range(k):
        total_a = total_b = 0.0
        if m:
            r0, r1, r2, r3, r4, r5, r6, r7 = acc_a
            total_a = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            r0, r1, r2, r3, r4, r5, r6, r7 = acc_b
            total_b = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for x in live_a[m:]:
            total_a += x
        if not total_a > 0:
            break
        for x in live_b[m:]:
            total_b += x
        # _draw and _share written out
        cum = list(accumulate(live_a if draws[2 * pos] < 0.5 else live_b))
        doc = bisect_right(cum, draws[2 * pos + 1] * cum[-1])
        if doc > last:
            doc = last
        pa = live_a[doc] / total_a
        pb = live_b[doc] / total_b if total_b != 0 else math.nan
        share.append(pa / (pa + pb) if pa + pb != 0 else math.nan)
        docs.append(doc)
        live_a[doc] = live_b[doc] = 0.0
        if doc < m:
            j = doc % 8
            acc_a[j] = reduce(add, live_a[j + 8 : m : 8], live_a[j])
            acc_b[j] = reduce(add, live_b[j + 8 : m : 8], live_b[j])
    return docs, share


def _draw(live_a: list[float], live_b: list[float], coin: float, u: float, last: int) -> int:
    """The document drawn: ranker A on ``coin < 0.5``, then the first document whose
    cumulative weight (summed in order, as ``np.cumsum``) exceeds ``u`` times the total."""
    cum = list(accumulate(live_a if coin < 0.5 else live_b))
    return min(bisect_right(cum, u * cum[-1]), last)


def _share(wa: float, total_a: float, wb: float, total_b: float) -> float:
    """``P(a_i = A) = p_A / (p_A + p_B)``, NaN where numpy's 0/0 gives NaN."""
    pa = wa / total_a
    pb = wb / total_b if total_b != 0 else math.nan
    return pa / (pa + pb) if pa + pb != 0 else math.nan
