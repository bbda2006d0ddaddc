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
"""

from __future__ import annotations

import numpy as np

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
