"""Honest selection among a sweep's configurations, per metric, from their per-query values.

* **Held-out estimate.** Queries are dealt into ``folds`` (a seeded shuffle,
  :func:`ranklens.fusion.query_folds`); each fold's queries are scored by the
  configuration with the best mean on the other folds (:func:`ranklens.fusion.held_out`,
  as :func:`ranklens.tune_fusion` does). The mean of these held-out values estimates what
  *choosing by this sweep* delivers on new queries (Stone 1974; Hastie, Tibshirani &
  Friedman, *The Elements of Statistical Learning*, §7.10; Cawley & Talbot, JMLR 2010,
  on the selection bias it removes). The in-sample best, the maximum of many noisy means,
  is shown beside it: with many configurations of equal quality it is biased upwards by
  about ``σ/√n · E[max of K standard normals]``.
* **The chosen configuration** (to use from now on) is the best on all queries among
  those satisfying ``constraint=``; it is tested against every other configuration with
  paired tests (:func:`ranklens.comparison.stats.paired_test`) corrected over those
  ``K − 1`` comparisons (Holm by default): the runner-up and the baseline are two of them,
  and the configurations it does not significantly beat are **statistically tied** with
  it, shown as a set. The held-out values are also tested against the baseline (a paired
  test of the selection procedure itself, free of the selection's optimism).
* **Pareto frontier**: the configurations no other one beats on quality and latency (and
  on quality and cost, when costs are given) at once.
* **Per-parameter effect**: for each parameter and value, the mean over the configurations
  with that value of their per-query values (the marginal mean, with a bootstrap interval
  over queries) and the best configuration with that value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..comparison import stats
from ..fusion import best_setting, held_out, query_folds


def select(
    values: np.ndarray,
    names: Sequence[str],
    feasible: np.ndarray,
    baseline: int | None,
    *,
    folds: int = 5,
    seed: int | None = 0,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The selection on one metric (see the module docstring). ``values``: per-query
    values ``(configurations, queries)``, finite; ``feasible``: which configurations may
    be chosen (they satisfy the constraint and were measured); ``baseline``: a row index.
    Returns plain data (JSON-ready)."""
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[1]
    rows = np.flatnonzero(feasible)
    means = v.mean(axis=1)
    out: dict[str, Any] = {
        "n_queries": n,
        "means": [float(x) for x in means],
        "feasible": [names[i] for i in rows],
    }
    if not len(rows):
        out["chosen"] = None
        return out
    sub = v[rows]
    best = int(rows[best_setting(sub.mean(axis=1))])
    order = [int(i) for i in rows[np.argsort(-sub.mean(axis=1), kind="stable")]]
    runner_up = next((i for i in order if i != best), None)
    out.update(
        chosen=names[best],
        in_sample_best=float(means[best]),
        runner_up=names[runner_up] if runner_up is not None else None,
        ranking=[names[i] for i in order],
    )
    if len(rows) > 1 and n >= folds >= 2:
        fold = query_folds(n, folds, seed)
        choices, cv = held_out(sub, fold)
        lo, hi = stats.bootstrap_interval(cv[:, None], confidence, n_resamples, seed)
        out.update(
            folds=folds,
            seed=seed,
            cv_estimate=float(cv.mean()),
            cv_interval=[float(lo[0]), float(hi[0])],
            fold_choices=[names[int(rows[c])] for c in choices],
            cv_values=[float(x) for x in cv],
        )
    else:  # one candidate (nothing is selected) or too few queries to fold
        out.update(
            folds=None,
            cv_estimate=float(means[best]),
            fold_choices=[],
            cv_values=[float(x) for x in v[best]],
            cv_interval=[math.nan, math.nan],
        )
    others = [i for i in range(len(names)) if i != best]
    tests: dict[str, dict[str, Any]] = {}
    if others:
        d = v[best][:, None] - v[others].T
        p = stats.paired_test(d, test, n_resamples, seed)
        adj = stats.correct(p, correction)
        effect = stats.effect_size(d)
        for j, i in enumerate(others):
            tests[names[i]] = {
                "diff": float(d[:, j].mean()),
                "pvalue": float(p[j]),
                "pvalue_adjusted": float(adj[j]),
                "significant": bool(adj[j] < alpha),
                "effect_size": float(effect[j]),
            }
    out["tests"] = tests
    out["tied"] = [names[best]] + [
        names[i] for i in order if i != best and not tests[names[i]]["significant"]
    ]
    if baseline is not None:
        out["baseline"] = names[baseline]
        if baseline != best:
            d = np.asarray(out["cv_values"]) - v[baseline]
            p = stats.paired_test(d[:, None], test, n_resamples, seed)
            lo, hi = stats.bootstrap_interval(d[:, None], confidence, n_resamples, seed)
            out["cv_vs_baseline"] = {
                "diff": float(d.mean()),
                "pvalue": float(p[0]),
                "interval": [float(lo[0]), float(hi[0])],
            }
    return out


def pareto(quality: Sequence[float], cost: Sequence[float]) -> list[bool]:
    """Which points no other point dominates (quality at least as high and cost at most as
    high, one of them strictly); points with an unknown value are not on the frontier."""
    q = np.asarray(quality, dtype=np.float64)
    c = np.asarray(cost, dtype=np.float64)
    ok = np.isfinite(q) & np.isfinite(c)
    better_q = q[None, :] >= q[:, None]
    better_c = c[None, :] <= c[:, None]
    strict = (q[None, :] > q[:, None]) | (c[None, :] < c[:, None])
    dominated = (better_q & better_c & strict & ok[None, :]).any(axis=1)
    return [bool(x) for x in ok & ~dominated]


def effects(
    values: np.ndarray,
    params: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
    names: Sequence[str],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> list[dict[str, Any]]:
    """Per parameter and value: the configurations with it, the marginal mean of their
    per-query values with a bootstrap interval over queries, and the best of them."""
    from .grid import value_text

    v = np.asarray(values, dtype=np.float64)
    cols, rows = [], []
    for key in keys:
        seen: dict[str, list[int]] = {}
        for i, p in enumerate(params):
            if key in p:
                seen.setdefault(value_text(p[key]), []).append(i)
        if len(seen) < 2:
            continue  # a parameter with one value has no effect to show
        for text, members in seen.items():
            cols.append(v[members].mean(axis=0))
            best = max(members, key=lambda i: v[i].mean())
            rows.append(
                {
                    "param": key,
                    "value": text,
                    "configs": len(members),
                    "mean": float(v[members].mean()),
                    "best": names[best],
                    "best_mean": float(v[best].mean()),
                }
            )
    if cols:
        lo, hi = stats.bootstrap_interval(np.column_stack(cols), confidence, n_resamples, seed)
        for r, a, b in zip(rows, lo, hi):
            r["ci_low"], r["ci_high"] = float(a), float(b)
    return rows
