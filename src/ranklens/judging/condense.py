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
        fresh=jn.fresh.renumbered(renumber) if jn.fresh is not None else None,
    )


def fill_unjudged(jn: Join, grade: int) -> Join:
    """``jn`` as if every retrieved document without a label were relevant at ``grade``:
    each unjudged rank becomes a unit of its own (found there, counted in R and in the
    ideal ranking). The value of a metric on it is the other end of the range that labels
    can still move it to (the first end: the unjudged as non-relevant, trec_eval's
    default). A repeat of an unjudged document stays unmatched; diversity intents are
    dropped (the new units have no subtopic)."""
    if jn.ties is not None:
        raise InputError("unjudged-as-relevant values are not defined with ties='expected'")
    n_q = len(jn.lens)
    w = np.int64(int(jn.lens.max(initial=0)) + 2)
    all_q = np.repeat(np.arange(n_q, dtype=np.int64), jn.lens)
    all_rank = seg.seg_running_count(all_q)
    key = all_q * w + all_rank
    taken = np.concatenate((jn.m_q * w + jn.m_rank, jn.rep_q * w + jn.rep_rank))
    hole = ~np.isin(key, taken)
    hq, hr = all_q[hole], all_rank[hole]
    first_unit = len(jn.unit_q)
    new_unit = first_unit + np.arange(len(hq), dtype=np.int64)
    g = np.full(len(hq), grade, dtype=np.int64)
    unit_intent = None
    if jn.unit_intent is not None:
        start = int(jn.unit_intent.max(initial=-1)) + 1
        unit_intent = np.concatenate((jn.unit_intent, start + np.arange(len(hq))))
    return replace(
        jn,
        m_q=np.concatenate((jn.m_q, hq)),
        m_rank=np.concatenate((jn.m_rank, hr)).astype(jn.m_rank.dtype),
        m_unit=np.concatenate((jn.m_unit, new_unit)).astype(jn.m_unit.dtype),
        m_grade=np.concatenate((jn.m_grade, g)).astype(jn.m_grade.dtype),
        m_repeat=np.concatenate((jn.m_repeat, np.zeros(len(hq), dtype=bool))),
        unit_q=np.concatenate((jn.unit_q, hq)).astype(jn.unit_q.dtype),
        unit_g=np.concatenate((jn.unit_g, g)).astype(jn.unit_g.dtype),
        doc_q=np.concatenate((jn.doc_q, hq)).astype(jn.doc_q.dtype),
        doc_label=np.concatenate((jn.doc_label, g)).astype(jn.doc_label.dtype),
        n_gt_ids=jn.n_gt_ids + np.bincount(hq, minlength=n_q) * (grade > 0),
        max_grade=max(jn.max_grade, grade),
        unit_intent=unit_intent,
        members=None,
    )
