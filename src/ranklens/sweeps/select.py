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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..comparison import stats
from ..declared import ParameterError
from ..fusion import best_setting, held_out, query_folds
from ..settings import Statistics, settled
from .groups import STATS
from .params import SWEEP
from .records import Choice, Effect, FloatArray, HeldOutTest, PairTest

STATISTICS_NAMES = ("seed", "test", "correction", "alpha", "n_resamples", "ci", "confidence")
"""The flat keywords of :class:`~ranklens.Statistics` :func:`select` and :func:`effects`
still take (deprecated)."""


def _stats(where: str, stats_: Statistics | None, flat: dict[str, Any]) -> Statistics:
    unknown = [k for k in flat if k not in STATISTICS_NAMES]
    if unknown:
        raise ParameterError(
            f"{where}: no parameter {unknown[0]!r} (it takes stats=Statistics(...) and "
            f"{', '.join(STATISTICS_NAMES)} as deprecated keywords)"
        )
    checked = SWEEP.check(flat, where)
    return settled(where, stats_, checked, STATS, "stats")


def select(
    values: FloatArray,
    names: Sequence[str],
    feasible: Any,
    baseline: int | None,
    *,
    folds: int = 5,
    stats: Statistics | None = None,
    pvalues: FloatArray | None = None,
    resample: bool = True,
    lower_is_better: bool = False,
    defer_tests: bool = False,
    **flat: Any,
) -> Choice:
    """The selection on one metric (see the module docstring), a :class:`Choice`.
    ``values``: per-query values ``(configurations, queries)``, finite; ``feasible``: which
    configurations may be chosen (they satisfy the constraint and were measured);
    ``baseline``: a row index; ``stats``: a :class:`~ranklens.Statistics` (``seed`` deals
    the folds; ``test``, ``correction``, ``alpha``, ``n_resamples``, ``confidence``: the
    tests and intervals; the flat keywords still work for one release, with a
    ``DeprecationWarning``). ``pvalues``: the raw paired test of every two
    configurations, ``(K, K)``, when the caller computed them for several metrics at once
    (:func:`pairwise_pvalues`); with ``resample=False`` the intervals and the held-out
    test are left to :func:`fill_resampled` (one batch for every metric).
    ``lower_is_better``: the metric is a rate of something unwanted (``outdated@k``,
    ``unj@k``): the best is the lowest mean, and every value reported stays in the
    metric's own units. ``defer_tests``: the tests of the chosen configuration are left to
    :func:`settle` (once :func:`pairwise_pvalues` has tested every pair and the held-out
    values together)."""
    st = _stats("select", stats, flat)
    v = np.asarray(values, dtype=np.float64)
    sign = -1.0 if lower_is_better else 1.0
    score = sign * v  # higher is better on this scale; choices only, never reported
    n = v.shape[1]
    rows = np.flatnonzero(feasible)
    means = v.mean(axis=1)
    out = Choice(
        n_queries=n, means=[float(x) for x in means], feasible=[names[int(i)] for i in rows]
    )
    if not len(rows):
        return out
    sub = score[rows]
    best = int(rows[best_setting(sub.mean(axis=1))])
    order = [int(i) for i in rows[np.argsort(-sub.mean(axis=1), kind="stable")]]
    runner_up = next((i for i in order if i != best), None)
    out.chosen, out.in_sample_best = names[best], float(means[best])
    out.runner_up = names[runner_up] if runner_up is not None else None
    out.ranking = [names[i] for i in order]
    if folds < 2:
        raise ParameterError(
            f"select: folds must be a whole number >= 2 (cross-validation), got {folds}"
        )
    used = min(folds, n)  # fewer queries than folds: leave-one-out
    if len(rows) > 1 and used >= 2:
        fold = query_folds(n, used, st.seed)
        choices, cv = held_out(sub, fold)
        cv = sign * cv  # back in the metric's units
        out.cross_validated, out.folds, out.seed = True, used, st.seed
        out.cv_estimate = float(cv.mean())
        out.fold_choices = [names[int(rows[c])] for c in choices]
        out.cv_values = [float(x) for x in cv]
    else:  # one candidate (nothing is selected: its mean is honest) or one query
        out.cv_estimate = float(means[best])
        out.cv_values = [float(x) for x in v[best]]
    if baseline is not None:
        out.baseline = names[baseline]
        if baseline != best:
            d = np.asarray(out.cv_values) - v[baseline]
            out.cv_vs_baseline = HeldOutTest(float(d.mean()))
            out.held_out_diffs = d
    if not defer_tests:
        settle(out, v, names, pvalues, st)
    if resample:
        fill_resampled([out], [], st)
    return out


def settle(
    out: Choice,
    values: FloatArray,
    names: Sequence[str],
    pvalues: FloatArray | None,
    stats_: Statistics = STATS,
) -> None:
    """The chosen configuration of a :func:`select` result tested against every other
    (``pvalues``: every pair's raw p-value, or None to test here), corrected over those
    tests; the configurations it does not significantly beat are tied with it."""
    v = np.asarray(values, dtype=np.float64)
    assert out.chosen is not None
    best = list(names).index(out.chosen)
    others = [i for i in range(len(names)) if i != best]
    tests: dict[str, PairTest] = {}
    if others:
        d = v[best][:, None] - v[others].T
        if pvalues is None:
            p = stats.paired_test(d, stats_.test, stats_.n_resamples, stats_.seed)
        else:
            p = np.asarray(pvalues)[best, others]
        adj = stats.correct(p, stats_.correction)
        effect = stats.effect_size(d)
        for j, i in enumerate(others):
            tests[names[i]] = PairTest(
                diff=float(d[:, j].mean()),
                pvalue=float(p[j]),
                pvalue_adjusted=float(adj[j]),
                significant=bool(adj[j] < stats_.alpha),
                effect_size=float(effect[j]),
            )
    out.tests = tests
    out.tied = [out.chosen] + [
        n for n in out.ranking if n != out.chosen and not tests[n].significant
    ]


def pairwise_pvalues(
    values: Sequence[FloatArray],
    stats_: Statistics,
    held: Sequence[tuple[Sequence[float], int] | None] = (),
) -> tuple[list[FloatArray], list[float | None]]:
    """The raw two-sided paired test of every two configurations, ``(K, K)`` per metric
    (``values``: each metric's ``(K, queries)``), from one call of
    :func:`ranklens.comparison.stats.paired_test` per number of queries: the resamples are
    drawn once, and one product of them with every configuration's column serves every
    pair of every metric (``pairs=``, the product over the ``K`` columns rather than the
    ``K(K-1)/2`` differences). ``held``: per metric, ``None`` or the held-out values and
    the baseline's row, whose difference is tested in the same batch; their p-values are
    returned second."""
    out: list[FloatArray] = [np.ones((v.shape[0],) * 2) for v in values]
    held_p: list[float | None] = [None] * len(values)
    groups: dict[int, list[int]] = {}
    for m, v in enumerate(values):
        groups.setdefault(v.shape[1], []).append(m)
    for ms in groups.values():
        cols: list[FloatArray] = []
        pairs: list[tuple[int, int]] = []
        where: list[tuple[int, int, int]] = []
        start = 0
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
        p: FloatArray = (
            np.asarray(stats.paired_test(np.column_stack(cols), stats_.test,
                                         stats_.n_resamples, stats_.seed, pairs=pairs))
            if pairs
            else np.zeros(0)
        )  # fmt: skip
        for (m, i, j), pv in zip(where, p):
            if i < 0:
                held_p[m] = float(pv)
            else:
                out[m][i, j] = out[m][j, i] = pv
    return out, held_p


def fill_resampled(
    selections: Sequence[Choice],
    effect_rows: Sequence[Effect],
    stats_: Statistics = STATS,
) -> None:
    """The bootstrap intervals (held-out estimates, held-out minus baseline, effects'
    marginal means, at ``stats_.confidence``) and the held-out test against the baseline,
    in one batch per number of queries (the same resamples for every column, as separate
    calls would draw); a held-out test already done (``held_out_pvalue``, from
    :func:`pairwise_pvalues`) is kept."""
    boots: dict[int, list[tuple[Choice | HeldOutTest | Effect, FloatArray]]] = {}
    tests: dict[int, list[tuple[HeldOutTest, FloatArray]]] = {}
    for sel in selections:
        if sel.folds and sel.cv_values:
            col = np.asarray(sel.cv_values, dtype=np.float64)
            boots.setdefault(len(col), []).append((sel, col))
        d, sel.held_out_diffs = sel.held_out_diffs, None
        held = sel.cv_vs_baseline
        if d is not None and held is not None:
            boots.setdefault(len(d), []).append((held, d))
            p, sel.held_out_pvalue = sel.held_out_pvalue, None  # tested with the pairs already
            if p is None:
                tests.setdefault(len(d), []).append((held, d))
            else:
                held.pvalue = p
    for row in effect_rows:
        column, row.column = row.column, None
        if column is not None:
            boots.setdefault(len(column), []).append((row, column))
    for items in boots.values():
        lo, hi = stats.bootstrap_interval(
            np.column_stack([c for _, c in items]), stats_.confidence, stats_.n_resamples,
            stats_.seed,
        )  # fmt: skip
        for (target, _), a, b in zip(items, lo, hi):
            if isinstance(target, Effect):
                target.ci_low, target.ci_high = float(a), float(b)
            elif isinstance(target, Choice):
                target.cv_interval = [float(a), float(b)]
            else:
                target.interval = [float(a), float(b)]
    for items2 in tests.values():
        p2 = stats.paired_test(
            np.column_stack([d for _, d in items2]), stats_.test, stats_.n_resamples, stats_.seed
        )
        for (target2, _), pv in zip(items2, p2):
            target2.pvalue = float(pv)


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
    values: FloatArray,
    params: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
    names: Sequence[str],
    *,
    stats: Statistics | None = None,
    resample: bool = True,
    lower_is_better: bool = False,
    **flat: Any,
) -> list[Effect]:
    """Per parameter and value: the configurations with it, the marginal mean of their
    per-query values with a bootstrap interval over queries (``stats``: its
    ``confidence``, ``n_resamples``, ``seed``; the flat keywords still work for one
    release, with a ``DeprecationWarning``), and the best of them, as :class:`Effect`
    records (with ``resample=False`` each keeps its per-query ``column`` for
    :func:`fill_resampled`)."""
    from .grid import value_text

    st = _stats("effects", stats, flat) if flat or stats is not None else STATS
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
            best = pick(members, key=lambda i: float(v[i].mean()))
            rows.append(
                Effect(
                    param=key,
                    value=text,
                    configs=len(members),
                    mean=float(v[members].mean()),
                    best=names[best],
                    best_mean=float(v[best].mean()),
                    column=v[members].mean(axis=0),
                )
            )
    if resample:
        fill_resampled([], rows, st)
    return rows
