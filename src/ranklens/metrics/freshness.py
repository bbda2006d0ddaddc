"""Freshness metrics: how often a retriever serves outdated versions of its evidence.

Judging with document versions (``versions=``, :mod:`ranklens.judging.freshness`) gives
each retrieved document a status as of its query's time (current, outdated, future or
undated) and, for each *versioned evidence group* of a query (a version group holding a
document labelled relevant for it, with a current and at least one outdated version as of
its time), the rank ``c_g`` of its current version and the best rank ``o_g`` of an outdated
one (∞ when not retrieved). With ``n_k`` the documents retrieved within the top k:

* ``outdated@k = |{i ≤ k : document i outdated}| / n_k``: the share of the top k hits that
  are outdated versions (``outdated@1``: whether the first hit is one); lower is better,
  and reports mark the lower mean as the better one;
* ``current@k``: the same share for current versions (higher is better);
* ``undated@k``: the same share for documents whose status the versions table cannot tell
  (no time where one is needed): never counted as current, shown so that ``outdated@k`` is
  read with its uncertainty (up to ``outdated@k + undated@k``);
* ``current_first@k = (1/|E_q|) Σ_{g ∈ E_q} [c_g ≤ k ∧ c_g < o_g]``: the share of the query's
  versioned evidence groups ``E_q`` (relevant at the level ℓ) whose current version is in
  the top k above every outdated version of its group; 0 for a query without versioned
  evidence (the notes count the queries with some).

Time-aware *gains* (an outdated version's gain zero, demoted, reduced or decayed) are not
metrics of their own: judging applies them to the grades, so nDCG, P, MRR, recall and every
other measure are freshness-aware under a freshness rule (see ``docs/freshness.md`` for the
published definitions: Dong et al., WSDM 2010; Li & Croft, CIKM 2003; Efron & Golovchinsky,
SIGIR 2011; the TREC Microblog track's query times).
"""

from __future__ import annotations

import numpy as np

from ..errors import MetricNameError
from ..judging import LevelView
from ..judging.freshness import FreshRanks
from ..model.versions import CURRENT, OUTDATED, UNDATED
from .base import safe_div


def _fresh(v: LevelView) -> FreshRanks:
    f = v.j.fresh
    if f is None:
        raise MetricNameError(
            "the freshness metrics (outdated, undated, current_first) need document versions: "
            "evaluate(..., versions=ranklens.Versions.from_records(...)) (docs/freshness.md)"
        )
    return f


def _share(v: LevelView, k: int | None, status: int) -> np.ndarray:
    f = _fresh(v)
    keep = f.status == status
    if k is not None:
        keep &= f.rank <= k
    n = np.bincount(f.q[keep], minlength=v.j.n_queries)
    return safe_div(n, v.j.depth(k))


def current(v: LevelView, k: int | None = None) -> np.ndarray:
    """The share of the top k hits that are current versions as of the query's time,
    ``|{i ≤ k : current}| / n_k``; undated and future documents are not current (higher is
    better: what the gate and the report's letters take).

    >>> import ranklens
    >>> versions = ranklens.Versions.from_chains({"policy": ["p2024", "p2026"]})
    >>> ranklens.evaluate({"q": {"p2026": 1}}, {"q": ["p2024", "p2026", "faq"]},
    ...                   ["current@2"], versions=versions)["current@2"]
    0.5
    """
    return _share(v, k, CURRENT)


def outdated(v: LevelView, k: int | None = None) -> np.ndarray:
    """The share of the top k hits that are outdated versions as of the query's time,
    ``|{i ≤ k : outdated}| / n_k`` (``n_k``: documents retrieved within k).

    >>> import ranklens
    >>> versions = ranklens.Versions.from_chains({"policy": ["p2024", "p2026"]})
    >>> ev = ranklens.evaluate({"q": {"p2026": 1}}, {"q": ["p2024", "p2026"]},
    ...                        ["outdated@1", "outdated@2"], versions=versions)
    >>> ev["outdated@1"], ev["outdated@2"]
    (1.0, 0.5)
    """
    return _share(v, k, OUTDATED)


def undated(v: LevelView, k: int | None = None) -> np.ndarray:
    """The share of the top k hits whose status the versions table cannot tell (no time
    where one is needed, or not listed): neither current nor outdated.

    >>> import ranklens
    >>> versions = ranklens.Versions.from_chains({"policy": ["p2024", "p2026"]})
    >>> ev = ranklens.evaluate({"q": {"p2026": 1}}, {"q": ["faq", "p2026"]},
    ...                        ["undated@1", "undated@2"], versions=versions)
    >>> ev["undated@1"], ev["undated@2"]  # "faq" is in no version group: undated
    (1.0, 0.5)
    """
    return _share(v, k, UNDATED)


def current_first(v: LevelView, k: int | None = None) -> np.ndarray:
    """The share of the query's versioned evidence groups whose current version ranks in
    the top k above every outdated version of the group,
    ``(1/|E_q|) Σ_{g ∈ E_q} [c_g ≤ k ∧ c_g < o_g]`` (0 without versioned evidence).

    >>> import ranklens
    >>> versions = ranklens.Versions.from_chains({"policy": ["p2024", "p2026"]})
    >>> labels = {"q": {"p2026": 1}}
    >>> ranklens.evaluate(labels, {"q": ["p2026", "p2024"]}, ["current_first@2"],
    ...                   versions=versions)["current_first@2"]
    1.0
    >>> ranklens.evaluate(labels, {"q": ["p2024", "p2026"]}, ["current_first@2"],
    ...                   versions=versions)["current_first@2"]
    0.0
    """
    f = _fresh(v)
    n_q = v.j.n_queries
    keep = f.ev_grade >= max(v.level, 1)
    q, cur, out = f.ev_q[keep], f.ev_current[keep], f.ev_outdated[keep]
    ok = (cur > 0) & ((out == 0) | (cur < out))
    if k is not None:
        ok &= cur <= k
    return safe_div(np.bincount(q[ok], minlength=n_q), np.bincount(q, minlength=n_q))
