"""Condensed lists (trec_eval ``-J``; Sakai, "Alternatives to bpref", SIGIR 2007): every
retrieved document without a non-negative label is removed before any measure, and the
judged ones move up, keeping their order. Done once on the :class:`~.join.Join`, so every
metric sees the condensed ranking."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..model import segments as seg
from .join import Join


def condense(jn: Join) -> Join:
    """``jn`` with only its judged ranks (a match of grade >= 0), renumbered 1, 2, ... per
    query; the list length becomes the number of judged documents retrieved."""
    if jn.ties is not None:
        raise InputError("condensed lists (judged_only) are not defined with ties='expected'")
    judged = jn.m_grade >= 0
    jq, jr = jn.m_q[judged], jn.m_rank[judged]
    w = np.int64(int(jn.lens.max(initial=0)) + 2)
    keys = np.unique(jq * w + jr)  # judged (query, rank), each once, in order
    kq = keys // w
    new_rank = seg.seg_running_count(kq)  # 1-based rank among the judged of its query

    def renumber(q: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which (q, rank) are judged, and their new ranks."""
        if len(keys) == 0:
            return np.zeros(len(q), dtype=bool), rank[:0]
        at = np.minimum(np.searchsorted(keys, q * w + rank), len(keys) - 1)
        keep = keys[at] == q * w + rank
        return keep, new_rank[at[keep]]

    mkeep, m_rank = renumber(jn.m_q, jn.m_rank)
    rkeep, rep_rank = renumber(jn.rep_q, jn.rep_rank)
    return replace(
        jn,
        lens=np.bincount(kq, minlength=len(jn.lens)).astype(jn.lens.dtype),
        m_q=jn.m_q[mkeep],
        m_rank=m_rank.astype(jn.m_rank.dtype),
        m_unit=jn.m_unit[mkeep],
        m_grade=jn.m_grade[mkeep],
        m_repeat=jn.m_repeat[mkeep],
        rep_q=jn.rep_q[rkeep],
        rep_rank=rep_rank.astype(jn.rep_rank.dtype),
    )
