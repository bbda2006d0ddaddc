"""What the diversity measures read: which intents each retrieved rank covers, how many
intents each query has, and ndeval's greedy ideal ranking (:class:`IntentView`).

An *intent* is a subtopic of diversity qrels (``topic subtopic docno judgment``) or a group
of grouped ground truth. At relevance level ℓ a document covers an intent when it belongs to
one of the intent's units with grade ≥ ℓ (ndeval reads any judgment ≥ 1 as relevant; pyndeval
and ir_measures take the level as ``rel``). Plain labels carry no intents: a diversity
measure on them is an error that says how to give them.

Reference: ndeval 4.5 (TREC Web track), ``idealResult``: the ideal ranking is built greedily,
each step taking the document with the largest gain Σ_s (1−α)^{c_s} (c_s: how often intent s
is already covered), ties to the larger document id.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import segments as seg


class IntentView:
    """Intent coverage of one judged pair at relevance level ℓ (see the module docstring).

    * :attr:`S`: intents per query with at least one document of grade ≥ ℓ;
    * :attr:`cover`: ``(q, rank, intent, seen)`` of every (rank, intent) a retrieved
      document covers, sorted by (query, intent, rank); ``seen`` is how often the intent
      was covered above that rank;
    * :attr:`per_intent`: documents in the qrels relevant to each intent;
    * :meth:`ideal_scores`: the greedy ideal ranking's gain at each rank for a given α.
    """

    def __init__(self, view: Any) -> None:
        """``view``: the :class:`~ranklens.judging.LevelView` at ℓ."""
        j = view.j
        if j.unit_intent is None or j.members is None:
            raise InputError(
                "diversity measures need intents: read TREC diversity qrels with "
                "read_qrels(path, subtopics=True) (CLI --subtopics), build them with "
                "Qrels.from_subtopics, or give grouped ground truth (each group an intent)"
            )
        self.view = view
        self.level = view.level
        self._ideal: dict[float, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def n_queries(self) -> int:
        n: int = self.view.j.n_queries
        return n

    @cached_property
    def relevant_units(self) -> np.ndarray:
        """Whether each unit is relevant at ℓ."""
        relevant: np.ndarray = self.view.j.unit_g >= self.level
        return relevant

    @cached_property
    def intent_q(self) -> np.ndarray:
        """The query of each intent."""
        j = self.view.j
        owner = np.zeros(int(j.unit_intent.max(initial=-1)) + 1, dtype=np.int64)
        owner[j.unit_intent] = j.unit_q
        return owner

    @cached_property
    def S(self) -> np.ndarray:
        """Number of intents with a relevant document, per query (ndeval's
        ``actualSubtopics``)."""
        j = self.view.j
        intents = np.unique(j.unit_intent[self.relevant_units])
        return np.bincount(self.intent_q[intents], minlength=j.n_queries)

    @cached_property
    def cover(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(q, rank, intent, seen)`` sorted by (query, intent, rank): every intent each
        retrieved rank covers; a repeated document covers nothing again unless the
        convention counts duplicates."""
        j = self.view.j
        keep = self.relevant_units[j.m_unit]
        if j.m_repeat is not None and j.convention.duplicates != "count":
            keep &= ~j.m_repeat
        w = np.int64(j.width)
        # one entry per (intent, rank); intents are per query, so this sorts by query too
        keys = np.unique(j.unit_intent[j.m_unit[keep]] * w + j.m_rank[keep])
        intent, rank = keys // w, keys % w
        q = self.intent_q[intent]
        seen = seg.seg_running_count(intent) - 1
        return q, rank, intent, seen

    @cached_property
    def per_intent(self) -> np.ndarray:
        """Documents relevant to each intent in the qrels (ndeval's ``nrelSub``)."""
        j = self.view.j
        _, _, unit = j.members
        rel = self.relevant_units[unit]
        return np.bincount(j.unit_intent[unit[rel]], minlength=len(j.unit_intent))

    def rank_gain(self, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(q, rank, gain)`` sorted by (query, rank): the novelty gain
        Σ_{s covered at the rank} (1−α)^{c_s} of every rank that covers an intent, summed in
        intent order (as ndeval)."""
        q, rank, intent, seen = self.cover
        o = np.lexsort((intent, rank, q))
        new = seg.run_starts(q[o], rank[o])
        gain = np.power(1.0 - alpha, seen[o].astype(np.float64))
        total = np.bincount(np.cumsum(new) - 1, weights=gain, minlength=int(new.sum()))
        return q[o][new], rank[o][new], total

    def ideal_scores(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, gains)``: the gain at each rank of ndeval's greedy ideal ranking,
        ``gains[off[i]:off[i+1]]`` for query i (its relevant documents only; any later
        document gains nothing)."""
        got = self._ideal.get(alpha)
        if got is None:
            got = self._ideal[alpha] = _greedy_ideal(self, alpha)
        return got


def _greedy_ideal(iv: IntentView, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """ndeval's ``idealResult`` for every query at once: each step, every query still
    holding documents takes its document of largest gain (ties: the larger id)."""
    j = iv.view.j
    mq, md, mu = j.members
    rel = iv.relevant_units[mu]
    q, doc, intent = mq[rel], md[rel], j.unit_intent[mu[rel]]
    n_q = j.n_queries
    if len(q) == 0:
        return np.zeros(n_q + 1, dtype=np.int64), np.zeros(0)
    o = np.lexsort((intent, doc, q))
    q, doc, intent = q[o], doc[o], intent[o]
    new_doc = seg.run_starts(q, doc)
    pair_doc = np.cumsum(new_doc) - 1  # each pair's (query, document) index
    d_q, d_code = q[new_doc], doc[new_doc]
    gain = np.ones(int(intent.max()) + 1)
    decay = 1.0 - alpha
    live = np.arange(len(d_q))  # documents not placed yet
    pairs = np.arange(len(q))  # pairs of those documents
    out_q: list[np.ndarray] = []
    out_g: list[np.ndarray] = []
    while len(live):
        score = np.bincount(pair_doc[pairs], weights=gain[intent[pairs]], minlength=len(d_q))
        cand_q, cand_s, cand_code = d_q[live], score[live], d_code[live]
        o = np.lexsort((cand_code, cand_s, cand_q))
        last = np.append(seg.run_starts(cand_q[o])[1:], True)  # best of each query
        chosen = live[o[last]]
        out_q.append(d_q[chosen])
        out_g.append(score[chosen])
        picked = np.zeros(len(d_q), dtype=bool)
        picked[chosen] = True
        hit = picked[pair_doc[pairs]]
        gain[intent[pairs[hit]]] *= decay
        live = live[~picked[live]]
        pairs = pairs[~hit]
    qs = np.concatenate(out_q)
    gains = np.concatenate(out_g)
    o = np.argsort(qs, kind="stable")  # steps stay in order within a query
    off = np.searchsorted(qs[o], np.arange(n_q + 1)).astype(np.int64)
    return off, gains[o]
