"""Honest selection among a sweep's configurations, per metric, from their per-query values.

* **Held-out estimate.** Queries are dealt into ``folds`` (a seeded shuffle,
  :func:`ranklens.fusion.query_folds`); each fold's queries are scored by the
  configuration with the best mean on the other folds (:func:`ranklens.fusion.held_out`,
  as :func:`ranklens.tune_fusion` does; with fewer queries than folds, one query per fold:
  leave-one-out). The mean of these held-out values estimates what
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
from ..declared import ParameterError
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
    pvalues: np.ndarray | None = None,
    resample: bool = True,
    lower_is_better: bool = False,
    defer_tests: bool = False,
) -> dict[str, Any]:
    """The selection on one metric (see the module docstring). ``values``: per-query
    values ``(configurations, queries)``, finite; ``feasible``: which configurations may
    be chosen (they satisfy the constraint and were measured); ``baseline``: a row index.
    ``pvalues``: the raw paired test of every two configurations, ``(K, K)``, when the
    caller computed them for several metrics at once (:func:`pairwise_pvalues`); with
    ``resample=False`` the intervals and the held-out test are left to
    :func:`fill_resampled` (one batch for every metric). ``lower_is_better``: the metric is
    a rate of something unwanted (``outdated@k``, ``unj@k``): the best is the lowest mean,
    and every value reported stays in the metric's own units. ``defer_tests``: the tests
    of the chosen configuration are left to :func:`settle` (once :func:`pairwise_pvalues`
    has tested every pair and the held-out values together). Returns plain data."""
    v = np.asarray(values, dtype=np.float64)
    sign = -1.0 if lower_is_better else 1.0
    score = sign * v  # higher is better on this scale; choices only, never reported
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
    sub = score[rows]
    best = int(rows[best_setting(sub.mean(axis=1))])
    order = [int(i) for i in rows[np.argsort(-sub.mean(axis=1), kind="stable")]]
    runner_up = next((i for i in order if i != best), None)
    out.update(
        chosen=names[best],
        in_sample_best=float(means[best]),
        runner_up=names[runner_up] if runner_up is not None else None,
        ranking=[names[i] for i in order],
    )
    if folds < 2:
        raise ParameterError(
            f"select: folds must be a whole number >= 2 (cross-validation), got {folds}"
        )
    used = min(folds, n)  # fewer queries than folds: leave-one-out
    if len(rows) > 1 and used >= 2:
        fold = query_folds(n, used, seed)
        choices, cv = held_out(sub, fold)
        cv = sign * cv  # back in the metric's units
        out.update(
            folds=used,
            seed=seed,
            cv_estimate=float(cv.mean()),
            cv_interval=[math.nan, math.nan],
            fold_choices=[names[int(rows[c])] for c in choices],
            cv_values=[float(x) for x in cv],
        )
    else:  # one candidate (nothing is selected: its mean is honest) or one query
        out.update(
            folds=None,
            cv_estimate=float(means[best]),
            fold_choices=[],
            cv_values=[float(x) for x in v[best]],
            cv_interval=[math.nan, math.nan],
        )
    if baseline is not None:
        out["baseline"] = names[baseline]
        if baseline != best:
            d = np.asarray(out["cv_values"]) - v[baseline]
            out["cv_vs_baseline"] = {"diff": float(d.mean())}
            out["_held_out_diffs"] = d
    if not defer_tests:
        settle(out, v, names, pvalues, test, correction, alpha, n_resamples, seed)
    if resample:
        fill_resampled(
            [out], [], test=test, n_resamples=n_resamples, seed=seed, confidence=confidence
        )
    return out


def settle(
    out: dict[str, Any],
    values: np.ndarray,
    names: Sequence[str],
    pvalues: np.ndarray | None,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> None:
    """The chosen configuration of a :func:`select` result tested against every other
    (``pvalues``: every pair's raw p-value, or None to test here), corrected over those
    tests; the configurations it does not significantly beat are tied with it."""
    v = np.asarray(values, dtype=np.float64)
    best = names.index(out["chosen"])
    others = [i for i in range(len(names)) if i != best]
    tests: dict[str, dict[str, Any]] = {}
    if others:
        d = v[best][:, None] - v[others].T
        if pvalues is None:
            p = stats.paired_test(d, test, n_resamples, seed)
        else:
            p = np.asarray(pvalues)[best, others]
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
    later = {k: out.pop(k) for k in ("baseline", "cv_vs_baseline", "_held_out_diffs") if k in out}
    out["tests"] = tests  # before the baseline's keys, as always
    out["tied"] = [out["chosen"]] + [
        n for n in out["ranking"] if n != out["chosen"] and not tests[n]["significant"]
    ]
    out.update(later)


def pairwise_pvalues(
    values: Sequence[np.ndarray],
    test: str,
    n_resamples: int,
    seed: int | None,
    held: Sequence[tuple[np.ndarray, int] | None] = (),
) -> tuple[list[np.ndarray], list[float | None]]:
    """The raw two-sided paired test of every two configurations, ``(K, K)`` per metric
    (``values``: each metric's ``(K, queries)``), from one call of
    :func:`ranklens.comparison.stats.paired_test` per number of queries: the resamples are
    drawn once, and one product of them with every configuration's column serves every
    pair of every metric (``pairs=``, the product over the ``K`` columns rather than the
    ``K(K-1)/2`` differences). ``held``: per metric, ``None`` or the held-out values and
    the baseline's row, whose difference is tested in the same batch; their p-values are
    returned second."""
    out: list[np.ndarray | None] = [None] * len(values)
    held_p: list[float | None] = [None] * len(values)
    groups: dict[int, list[int]] = {}
    for m, v in enumerate(values):
        groups.setdefault(v.shape[1], []).append(m)
    for ms in groups.values():
        cols, pairs, where, start = [], [], [], 0
        for m in ms:
            k = values[m].shape[0]
            cols.extend(values[m])
            pairs.extend((start + i, start + j) for i in range(k) for j in range(i + 1, k))
            where.extend((m, i, j) for i in range(k) for j in range(i + 1, k))
            extra = held[m] if m < len(held) else None
            if extra is not None:
                cols.append(np.asarray(extra[0], dtype=np.float64))
                pairs.append((start + k, start + extra[1]))
                where.append((m, -1, -1))
            start = len(cols)
        p = (
            stats.paired_test(np.column_stack(cols), test, n_resamples, seed, pairs=pairs)
            if pairs
            else []
        )
        for m in ms:
            out[m] = np.ones((values[m].shape[0],) * 2)
        for (m, i, j), pv in zip(where, p):
            if i < 0:
                held_p[m] = float(pv)
            else:
                out[m][i, j] = out[m][j, i] = pv
    return out, held_p  # type: ignore[return-value]


def fill_resampled(
    selections: Sequence[dict[str, Any]],
    effect_rows: Sequence[dict[str, Any]],
    *,
    test: str,
    n_resamples: int,
    seed: int | None,
    confidence: float = 0.95,
) -> None:
    """The bootstrap intervals (held-out estimates, held-out minus baseline, effects'
    marginal means) and the held-out test against the baseline, in one batch per number
    of queries (the same resamples for every column, as separate calls would draw); a
    held-out test already done (``_held_out_pvalue``, from :func:`pairwise_pvalues`) is
    kept."""
    boots: dict[int, list[tuple[Any, str, np.ndarray]]] = {}
    tests: dict[int, list[tuple[dict[str, Any], np.ndarray]]] = {}
    known: list[tuple[dict[str, Any], float]] = []
    for sel in selections:
        cv = sel.get("cv_values")
        if sel.get("folds") and cv is not None:
            col = np.asarray(cv, dtype=np.float64)
            boots.setdefault(len(col), []).append((sel, "cv_interval", col))
        d = sel.pop("_held_out_diffs", None)
        if d is not None:
            boots.setdefault(len(d), []).append((sel["cv_vs_baseline"], "interval", d))
            p = sel.pop("_held_out_pvalue", None)  # tested with the pairs already
            if p is None:
                tests.setdefault(len(d), []).append((sel["cv_vs_baseline"], d))
            else:
                known.append((sel["cv_vs_baseline"], p))
    for row in effect_rows:
        col = row.pop("_column")
        boots.setdefault(len(col), []).append((row, "ci", col))
    for items in boots.values():
        lo, hi = stats.bootstrap_interval(
            np.column_stack([c for _, _, c in items]), confidence, n_resamples, seed
        )
        for (target, key, _), a, b in zip(items, lo, hi):
            if key == "ci":
                target["ci_low"], target["ci_high"] = float(a), float(b)
            else:
                target[key] = [float(a), float(b)]
    for target, pv in known:
        target["pvalue"] = pv
    for items in tests.values():
        p = stats.paired_test(np.column_stack([d for _, d in items]), test, n_resamples, seed)
        for (target, _), pv in zip(items, p):
            target["pvalue"] = float(pv)


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
    resample: bool = True,
    lower_is_better: bool = False,
) -> list[dict[str, Any]]:
    """Per parameter and value: the configurations with it, the marginal mean of their
    per-query values with a bootstrap interval over queries, and the best of them (with
    ``resample=False`` each row keeps its per-query ``_column`` for
    :func:`fill_resampled`)."""
    from .grid import value_text

    v = np.asarray(values, dtype=np.float64)
    rows = []
    for key in keys:
        seen: dict[str, list[int]] = {}
        for i, p in enumerate(params):
            if key in p:
                seen.setdefault(value_text(p[key]), []).append(i)
        if len(seen) < 2:
            continue  # a parameter with one value has no effect to show
        for text, members in seen.items():
            pick = min if lower_is_better else max
            best = pick(members, key=lambda i: v[i].mean())
            rows.append(
                {
                    "param": key,
                    "value": text,
                    "configs": len(members),
                    "mean": float(v[members].mean()),
                    "best": names[best],
                    "best_mean": float(v[best].mean()),
                    "_column": v[members].mean(axis=0),
                }
            )
    if resample:
        fill_resampled(
            [], rows, test="t", n_resamples=n_resamples, seed=seed, confidence=confidence
        )
    return rows
