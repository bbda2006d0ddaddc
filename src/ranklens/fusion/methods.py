"""Score normalisations and fusion methods, each a vectorised function of a
:class:`~ranklens.fusion.table.RunTable` (every query and run at once), with ranx's names
and definitions (Bassani, *ranx.fuse*, CIKM 2022, and the papers each method cites).

Notation: ``s_i`` a document's (normalised) score in run ``i``, ``r_i`` its rank there
(1-based), ``P`` the runs that retrieved it, ``|P|`` their number, ``w_i`` run weights,
``n`` the query's candidates (distinct documents over all runs), ``n_i`` run ``i``'s
documents for the query. A run that did not retrieve a document adds 0 to sums.

* ``sum`` (CombSUM, Fox & Shaw 1993): ``Σ s_i``; ``wsum``: ``Σ w_i s_i``;
* ``min``, ``max``, ``med``: of ``s_i`` over ``P`` (ranx stands ``1e9`` / ``−1e9`` in for
  a missing score, which differs only when a normalised score passes ±1e9, as ``max`` of
  a query whose best score is 0 or below makes it); ``anz``: ``Σ s_i / |P|``;
* ``mnz``: ``Σ s_i · |P|``; ``gmnz`` (``gamma``): ``Σ s_i · |P|^γ``;
  ``wmnz``: ``Σ s_i · Σ_{P} w_i``; ``mixed``: ``Σ_P w_i s_i · √|P|``;
* ``rrf`` (Cormack et al. 2009, ``k`` = 60): ``Σ 1/(k + r_i)``;
* ``isr`` (Mourão et al. 2015): ``Σ 1/r_i² · |P|``; ``log_isr``: ``Σ 1/r_i² · ln|P|``;
  ``logn_isr`` (``sigma`` = 0.01): ``Σ 1/r_i² · ln(|P| + σ)``;
* ``rbc`` (Bailey et al. 2017, ``phi`` = 0.8): ``Σ (1 − φ) φ^{r_i − 1}``;
* ``condorcet``, ``w_condorcet`` (Montague & Aslam 2002): pairwise majority, see
  :func:`~ranklens.fusion.condorcet.condorcet`;
* ``bordafuse`` (Aslam & Montague 2001): ``Σ b_i`` with ``b_i = n − r_i + 1``, or
  ``(n − n_i + 1)/2`` when run ``i`` did not retrieve it; ``w_bordafuse``: ``Σ w_i b_i``.

Normalisations, per query and run: ``min-max`` ``(s − min)/(max − min)``,
``min-max-inverted`` ``(max − s)/(max − min)``, ``max`` ``s/max``, ``sum``
``(s − min)/(Σ s − n_i·min)``, ``zmuv`` ``(s − mean)/std``, ``rank`` ``1 − (r − 1)/n_i``,
``borda`` ``1 − (r − 1)/n`` and ``1/2 − (n_i − 1)/(2n)`` for the candidates the run did not
retrieve; denominators below 1e-9 are 1e-9, as ranx's. Rank-based methods after ``borda``
rank every candidate by its normalised score (ties in the run's order); ranx reads a
borda-normalised run in the iteration order of a set of ids, which is arbitrary, so its
rank-based fusions after ``borda`` are not reproducible and are not compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InputError
from ..model.segments import seg_running_count
from .condorcet import condorcet
from .table import RunTable

EPS = 1e-9

NORMS = ("min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda")


def normalise(t: RunTable, norm: str | None) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, present)`` after ``norm`` (None: the scores as given)."""
    s, present = t.score, t.present
    if norm is None:
        return s.copy(), present
    if norm not in NORMS:
        raise InputError(f"norm must be one of {', '.join(NORMS)} or None, got {norm!r}")
    lengths = norm in ("rank", "borda", "sum")  # each row's query's run length, if used
    n_i = t.length[t.q].astype(np.float64) if lengths else np.empty(0)
    if norm == "rank":
        return np.where(present, 1 - (t.rank - 1) / np.maximum(n_i, 1), np.nan), present
    if norm == "borda":
        n = t.candidates[:, None].astype(np.float64)
        return np.where(present, 1 - (t.rank - 1) / n, 0.5 - (n_i - 1) / (2 * n)), np.ones_like(
            present
        )
    if norm in ("min-max", "min-max-inverted"):
        lo, hi = per_query_stats(t, s, "min", "max")
        span = np.maximum(hi - lo, EPS)
        return ((s - lo) if norm == "min-max" else (hi - s)) / span, present
    if norm == "max":
        (hi,) = per_query_stats(t, s, "max")
        return s / np.maximum(hi, EPS), present
    if norm == "sum":
        lo, total = per_query_stats(t, s, "min", "sum")
        return (s - lo) / np.maximum(total - lo * n_i, EPS), present
    mean, sd = per_query_stats(t, s, "mean", "sd")
    return (s - mean) / np.maximum(sd, EPS), present


def per_query_stats(t: RunTable, s: np.ndarray, *stats: str) -> list[np.ndarray]:
    """Per row and run, the ``stats`` (``min``, ``max``, ``sum``, ``mean``, ``sd``: the
    population standard deviation) of that run's scores present for the row's query (0
    where the run has none for it).

    Rows are grouped by query, so each statistic is one ``reduceat`` over every run at once
    (``fmin``/``fmax`` skip the NaN of runs that lack a row's document)."""
    n_rows = len(t.q)
    if n_rows == 0:
        return [np.zeros(s.shape) for _ in stats]
    starts = np.flatnonzero(np.diff(t.q, prepend=-1))
    seg_rows = np.diff(np.append(starts, n_rows))
    missing = np.isnan(s)

    def per_row(per_query: np.ndarray) -> np.ndarray:
        """Each row's query's values, gathered run by run so that the result is laid out
        as the table is (column by column)."""
        out: np.ndarray = np.repeat(per_query.T, seg_rows, axis=1).T
        return out

    cnt = np.add.reduceat(~missing, starts, axis=0)
    got: dict[str, np.ndarray] = {}
    if "min" in stats:
        got["min"] = np.fmin.reduceat(s, starts, axis=0)
    if "max" in stats:
        got["max"] = np.fmax.reduceat(s, starts, axis=0)
    if {"sum", "mean", "sd"} & set(stats):
        z = np.where(missing, 0.0, s)
        got["sum"] = np.add.reduceat(z, starts, axis=0)
        got["mean"] = got["sum"] / np.maximum(cnt, 1)
        if "sd" in stats:
            dev = np.where(missing, 0.0, (s - per_row(got["mean"])) ** 2)
            got["sd"] = np.sqrt(np.add.reduceat(dev, starts, axis=0) / np.maximum(cnt, 1))
    return [per_row(np.where(cnt > 0, got[k], 0.0)) for k in stats]


def _colsum(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=1)`` for a table of a few run columns, one column at a time (numpy's
    reduction over a short inner axis is several times slower)."""
    out = a[:, 0].astype(np.float64, copy=True)
    for i in range(1, a.shape[1]):
        out += a[:, i]
    return out


def _weights(w: Any, n: int) -> np.ndarray:
    if w is None:
        return np.ones(n)
    arr = np.asarray(w, dtype=np.float64)
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise InputError(f"weights must be {n} finite numbers, one per run, got {w!r}")
    return arr


def reranked(t: RunTable, s: np.ndarray, present: np.ndarray) -> RunTable:
    """``t`` with each run's ranks (and presence) taken from normalised scores ``s``:
    ``min-max-inverted`` reverses a ranking, ``borda`` ranks every candidate (ties keep the
    earlier order), as ranx's rank-based methods read a normalised run."""
    from dataclasses import replace

    rank = np.zeros_like(t.rank)
    length = np.zeros_like(t.length)
    big = np.iinfo(np.int64).max
    for i in range(s.shape[1]):
        rows = np.flatnonzero(present[:, i])
        o = np.lexsort(
            (
                np.where(t.rank[rows, i] > 0, t.rank[rows, i].astype(np.int64), big),
                -s[rows, i],
                t.q[rows],
            )
        )
        ranked = rows[o]
        rank[ranked, i] = seg_running_count(t.q[ranked])
        length[:, i] = np.bincount(t.q[rows], minlength=len(t.query_ids))
    return replace(t, rank=rank, length=length)


def _count(present: np.ndarray) -> np.ndarray:
    return _colsum(present)


def _zeroed(s: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(s), 0.0, s)


def _inv_sq(t: RunTable) -> np.ndarray:
    return _colsum(np.where(t.present, 1.0 / np.maximum(t.rank, 1).astype(np.float64) ** 2, 0.0))


def _borda(t: RunTable) -> np.ndarray:
    n = t.candidates[:, None].astype(np.float64)
    n_i = t.length[t.q].astype(np.float64)
    out: np.ndarray = np.where(t.present, n - t.rank + 1, (n - n_i + 1) / 2)
    return out


def _nan_reduce(fn: Callable[..., np.ndarray], s: np.ndarray) -> np.ndarray:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(s, axis=1)


def combine(t: RunTable, method: str, s: np.ndarray, present: np.ndarray, weights: Any,
            params: dict[str, Any]) -> np.ndarray:  # fmt: skip
    """One fused score per table row (see the module docstring)."""
    n_runs = s.shape[1]
    w = _weights(weights, n_runs)
    z = _zeroed(s) if method in SCORE_BASED else s
    nothing = np.empty(0)  # the sums and counts only the methods using them compute
    total = _colsum(z) if method in ("sum", "anz", "mnz", "gmnz", "wmnz") else nothing
    cnt = _count(present) if method in ("anz", "mnz", "gmnz", "mixed") else nothing
    out: np.ndarray
    if method == "sum":
        out = total
    elif method == "wsum":
        out = z @ w
    elif method == "min":
        out = _nan_reduce(np.nanmin, np.where(present, s, np.nan))
    elif method == "max":
        out = _nan_reduce(np.nanmax, np.where(present, s, np.nan))
    elif method == "med":
        out = _nan_reduce(np.nanmedian, np.where(present, s, np.nan))
    elif method == "anz":
        out = total / np.maximum(cnt, 1)
    elif method == "mnz":
        out = total * cnt
    elif method == "gmnz":
        out = total * cnt ** float(params.get("gamma", 1.0))
    elif method == "wmnz":
        out = total * (present @ w)
    elif method == "mixed":
        out = (z @ w) * np.sqrt(cnt)
    elif method == "rrf":
        k = float(params.get("k", 60))
        out = _colsum(np.where(t.present, 1.0 / (k + t.rank), 0.0))
    elif method == "isr":
        out = _inv_sq(t) * _count(t.present)
    elif method == "log_isr":
        out = _inv_sq(t) * np.log(_count(t.present))
    elif method == "logn_isr":
        sigma = float(params.get("sigma", 0.01))
        out = _inv_sq(t) * np.log(_count(t.present) + sigma)
    elif method == "rbc":
        phi = float(params.get("phi", 0.8))
        if not 0 < phi < 1:
            raise InputError(f"rbc: phi must lie strictly between 0 and 1, got {phi!r}")
        out = _colsum(np.where(t.present, (1 - phi) * phi ** (t.rank - 1.0), 0.0))
    elif method == "bordafuse":
        out = _colsum(_borda(t))
    elif method == "w_bordafuse":
        out = _borda(t) @ w
    elif method in ("condorcet", "w_condorcet"):
        out = condorcet(t, w if method == "w_condorcet" else np.ones(n_runs))
    else:
        raise InputError(f"unknown fusion method {method!r}")
    return out


SCORE_BASED = frozenset({"sum", "wsum", "anz", "mnz", "gmnz", "wmnz", "mixed"})
"""Methods that add scores, a missing one counting 0."""

METHODS = ("sum", "wsum", "min", "max", "med", "anz", "mnz", "gmnz", "wmnz", "mixed", "rrf",
           "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse", "condorcet",
           "w_condorcet")  # fmt: skip
"""The unsupervised fusion methods (ranx's names); the supervised ones are in
:mod:`.supervised`."""

ALIASES = {
    "combsum": "sum", "combmnz": "mnz", "combanz": "anz", "combmax": "max", "combmin": "min",
    "combmed": "med", "combgmnz": "gmnz", "weighted_sum": "wsum", "borda": "bordafuse",
    "weighted_bordafuse": "w_bordafuse", "reciprocal_rank": "rrf",
    "weighted_condorcet": "w_condorcet",
}  # fmt: skip
RANK_BASED = frozenset({"rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse",
                        "condorcet", "w_condorcet", "posfuse", "probfuse", "segfuse",
                        "slidefuse", "mapfuse", "bayesfuse"})  # fmt: skip
"""Methods that read ranks only (of the normalised scores when a normalisation is given)."""
