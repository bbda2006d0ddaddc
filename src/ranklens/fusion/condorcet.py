"""Condorcet fusion as a vectorised function of a :class:`~ranklens.fusion.table.RunTable`."""

from __future__ import annotations

import numpy as np

from .table import RunTable


def condorcet(t: RunTable, weights: np.ndarray) -> np.ndarray:
    """Condorcet fusion (Montague & Aslam, CIKM 2002; ``w_condorcet`` with weights): per
    query, document ``x`` beats ``y`` when the runs ranking ``x`` above ``y`` (a retrieved
    document is above an unretrieved one) outweigh those ranking ``y`` above ``x``; the
    candidates are ordered by their number of wins (Copeland's rule; ties by weighted
    Borda count, then in a fixed order of the ids' hashes) and score ``n − i`` at 0-based
    place ``i`` of ``n``.

    This is the order Montague and Aslam's sort produces whenever the majority relation
    is transitive; with cycles, a comparison sort's order depends on the algorithm and
    the input order (ranx's on the iteration order of a set of ids)."""
    rank = np.where(t.present, t.rank.astype(np.float64), np.inf)
    out = np.zeros(len(t.q))
    starts = np.flatnonzero(np.diff(t.q, prepend=-1))
    ends = np.append(starts[1:], len(t.q))
    for a, b in zip(starts.tolist(), ends.tolist()):
        r = rank[a:b]
        above = (r[:, None, :] < r[None, :, :]).astype(np.float64) @ weights
        wins = (above > above.T).sum(axis=1)
        borda = np.where(t.present[a:b], (b - a) - t.rank[a:b] + 1, 0) @ weights
        order = np.lexsort((np.arange(b - a), -borda, -wins))
        out[a + order] = (b - a) - np.arange(b - a)
    return out
