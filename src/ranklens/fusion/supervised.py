"""Supervised fusion (ranx's names and definitions): each run's documents get a score
from where they stand in its ranking, learnt on training labels, and the runs' scores
are summed (CombSUM; ``bayesfuse`` sums log-odds). Training reads, per run and training
query, the hit list ``h_j(p)`` (1 when the document at 0-based position ``p`` has a grade
of at least ``relevance_level``) of its trec-order ranking of length ``N_j``; ``m`` is
the number of training queries (the labels' queries; a query the run lacks has an empty
list).

* ``posfuse`` (Lillis et al., SIGIR 2006): ``P(p) = Σ_j h_j(p) / #{j : N_j > p}``;
  score ``P(p)`` (0 past the longest training list).
* ``probfuse`` (Lillis et al., SIGIR 2006; ``n_segments`` = S): list ``j`` is cut into S
  segments of ``⌈N_j/S⌉``; ``P(k) = (1/m) Σ_j hits_j(k) / |segment_j(k)|`` over non-empty
  segments; a document in segment ``k`` of its list scores ``P(k)/(k + 1)``.
* ``segfuse`` (Shokouhi, ECIR 2007): fixed segments ``[0, 5), [5, 15), [15, 35), …``
  (bounds ``10·2^{k−1} − 5``, ten segments); ``P(k) = (1/m) Σ_j hits_j(k)/|segment k|``;
  score ``P(k)·(s + 1)`` with ``s`` the (normalised) score; 0 past position 5,115.
* ``slidefuse`` (Lillis et al., ECIR 2008; ``w``): ``P`` as posfuse; a document at ``p``
  of a list of ``N`` scores the mean of ``P`` over ``[max(p − w, 0), min(p + w, N − 1)]``
  (``P`` past its length counts 0).
* ``mapfuse`` (Lillis et al., 2010): run ``i``'s MAP on the training labels, divided by
  the rank: ``MAP_i/(p + 1)``.
* ``bayesfuse`` (Aslam & Montague, SIGIR 2001): per segment of positions cut at 0, 5, 10,
  15, 20, 30, 100, 200, 500, 1000, the mean precision ``π`` over training queries (0 is
  0.001, and ``1 − π`` of 0 is 0.001); score ``ln(π/(1 − π))``, summed over runs, a run
  that did not retrieve the document adding ``ln(0.001/0.999)``. ranx reads past its
  table for positions from 1,000 on (undefined); ranklens gives them ``ln(0.001/0.999)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from ..judging import judge
from ..model import Run
from .table import RunTable

SUPERVISED = ("posfuse", "probfuse", "segfuse", "slidefuse", "mapfuse", "bayesfuse")
SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)])
BAYES_CUTS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000])
MIN_ODDS = float(np.log(0.001 / 0.999))


def hit_lists(labels: Any, run: Run, relevance_level: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(lens, hits)``: per training query the length of the run's list, and a
    ``(queries, longest)`` 0/1 matrix of hits by 0-based position."""
    j = judge(labels, run, relevance_level=relevance_level)
    lens = np.asarray(j.lens, dtype=np.int64)
    hits = np.zeros((len(lens), int(lens.max(initial=0))))
    rel = np.asarray(j.e_label) >= relevance_level
    hits[np.asarray(j.e_q)[rel], np.asarray(j.e_rank)[rel] - 1] = 1.0
    return lens, hits


def _segment_means(
    hits: np.ndarray, lo: np.ndarray, hi: np.ndarray, size: np.ndarray
) -> np.ndarray:
    """Per query and segment ``[lo, hi)`` (per query rows), hits divided by ``size``."""
    csum = np.concatenate([np.zeros((len(hits), 1)), np.cumsum(hits, axis=1)], axis=1)
    width = csum.shape[1] - 1
    lo_c, hi_c = np.clip(lo, 0, width), np.clip(hi, 0, width)
    rows = np.arange(len(hits))[:, None]
    out: np.ndarray = (csum[rows, hi_c] - csum[rows, lo_c]) / np.maximum(size, 1)
    return out


def train(method: str, labels: Any, runs: list[Run], params: dict[str, Any]) -> list[Any]:
    """What ``method`` learns from ``labels`` for each run (see the module docstring)."""
    level = int(params.get("relevance_level", 1))
    out: list[Any] = []
    for run in runs:
        if method == "mapfuse":
            from ..evaluation import evaluate

            out.append(evaluate(labels, run, ["map"], relevance_level=level).aggregate["map"])
            continue
        lens, hits = hit_lists(labels, run, level)
        m = max(len(lens), 1)
        if method in ("posfuse", "slidefuse"):
            reach = (lens[:, None] > np.arange(hits.shape[1])[None, :]).sum(axis=0)
            out.append(hits.sum(axis=0) / np.maximum(reach, 1))
        elif method == "probfuse":
            n_seg = _n_segments(params)
            seg = -(-lens // n_seg)  # ceil
            k = np.arange(n_seg)[None, :]
            lo, hi = k * seg[:, None], np.minimum((k + 1) * seg[:, None], lens[:, None])
            out.append(_segment_means(hits, lo, hi, np.maximum(hi - lo, 0)).sum(axis=0) / m)
        elif method == "segfuse":
            lo, hi = SEGFUSE_BOUNDS[None, :-1], SEGFUSE_BOUNDS[None, 1:]
            rows = np.ones((len(lens), 1), dtype=np.int64)
            out.append(_segment_means(hits, lo * rows, hi * rows, hi - lo).sum(axis=0) / m)
        else:  # bayesfuse
            lo, hi = BAYES_CUTS[None, :-1], BAYES_CUTS[None, 1:]
            rows = np.ones((len(lens), 1), dtype=np.int64)
            prec = _segment_means(hits, lo * rows, hi * rows, hi - lo).sum(axis=0) / m
            prec = np.where(prec == 0, 0.001, prec)
            neg = np.where(1 - prec == 0, 0.001, 1 - prec)
            out.append(np.log(prec / neg))
    return out


def _n_segments(params: dict[str, Any]) -> int:
    n = params.get("n_segments")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InputError(f"probfuse needs n_segments, a whole number >= 1, got {n!r}")
    return n


def supervised_fuse(t: RunTable, method: str, s: np.ndarray, trained: list[Any],
                    params: dict[str, Any]) -> np.ndarray:  # fmt: skip
    """One fused score per table row from what :func:`train` learnt (``s``: the
    normalised scores, read by ``segfuse`` only)."""
    present = t.present
    pos = np.maximum(t.rank - 1, 0)  # 0-based position, per run
    n_list = t.length[t.q]  # each run's list length for the row's query
    cols = []
    for i, learnt in enumerate(trained):
        p, n = pos[:, i], n_list[:, i]
        if method == "mapfuse":
            v = learnt / (p + 1.0)
        elif method == "posfuse":
            v = np.where(p < len(learnt), learnt[np.minimum(p, len(learnt) - 1)], 0.0)
            v = v if len(learnt) else np.zeros(len(p))
        elif method == "slidefuse":
            w = int(params.get("w", 1))
            if w < 0:
                raise InputError(f"slidefuse: w must be >= 0, got {w!r}")
            csum = np.concatenate(([0.0], np.cumsum(learnt)))
            a, b = np.maximum(p - w, 0), np.minimum(p + w, np.maximum(n - 1, 0))
            top = np.minimum(b + 1, len(learnt))
            lo = np.minimum(a, len(learnt))
            v = (csum[top] - csum[lo]) / (b - a + 1)
        elif method == "probfuse":
            seg = -(-n // _n_segments(params))
            k = p // np.maximum(seg, 1)
            v = learnt[np.minimum(k, len(learnt) - 1)] / (k + 1.0)
        elif method == "segfuse":
            k = np.searchsorted(SEGFUSE_BOUNDS, p, side="right") - 1
            inside = p < SEGFUSE_BOUNDS[-1]
            v = np.where(inside, learnt[np.minimum(k, len(learnt) - 1)], 0.0) * (s[:, i] + 1)
        else:  # bayesfuse
            k = np.searchsorted(BAYES_CUTS, p, side="right") - 1
            v = np.where(p < BAYES_CUTS[-1], learnt[np.minimum(k, len(learnt) - 1)], MIN_ODDS)
        cols.append(np.where(present[:, i], v, MIN_ODDS if method == "bayesfuse" else 0.0))
    out: np.ndarray = np.sum(cols, axis=0)
    return out
