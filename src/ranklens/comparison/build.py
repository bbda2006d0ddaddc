"""From evaluations to a :class:`Report`: each (run, metric)'s mean and interval, the paired
tests of every (pair, metric) with their corrections, effect sizes and win/tie/loss counts,
and the cutoff curves (:func:`build_report`, which :func:`ranklens.compare` calls).

Per-query values of every metric are stacked into one matrix, so the intervals of all
(run, metric) columns share one set of bootstrap resamples and the paired tests of all
(pair, metric) columns share one set of permutations (see :mod:`.stats`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..evaluation import Evaluation
from ..metrics import Metric
from ..settings import Statistics
from . import stats as st
from .report import Comparison, Report

Columns = dict[str, dict[str, np.ndarray]]
"""Per run, per metric: the per-query values on the report's query order (NaN: not
evaluated)."""

CURVE_CUTOFFS = (1, 2, 3, 5, 10, 20, 50, 100)
"""Cutoffs at which the report traces each cutoff metric (plus the cutoffs asked for)."""


def build_report(
    evaluations: Mapping[str, Evaluation],
    stats: Statistics | None = None,
    *,
    baseline: str | None = None,
    curves: bool = True,
) -> Report:
    """A :class:`Report` from ready evaluations (the same metrics on each), tested and
    interval-drawn as ``stats`` says (a :class:`~ranklens.Statistics`, its test and
    correction in their canonical names; default ``Statistics()``)."""
    stats = stats or Statistics()
    runs = list(evaluations)
    metrics = [m.name for m in next(iter(evaluations.values())).metrics]
    mts = {m.name: m for m in next(iter(evaluations.values())).metrics}
    query_ids = sorted({q for ev in evaluations.values() for q in ev.query_ids})
    index = {q: i for i, q in enumerate(query_ids)}

    per_query: Columns = {}
    for name, ev in evaluations.items():
        rows = np.fromiter((index[q] for q in ev.query_ids), dtype=np.int64)
        cols: dict[str, np.ndarray] = {}
        for m in metrics:
            col = np.full(len(query_ids), np.nan)
            col[rows] = ev.per_query[m]
            cols[m] = col
        per_query[name] = cols

    summary = _summary(evaluations, per_query, metrics, mts, stats)
    comparisons = _comparisons(per_query, runs, metrics, baseline, stats)
    report = Report(
        runs=runs,
        metrics=metrics,
        query_ids=query_ids,
        per_query=per_query,
        summary=summary,
        counts={name: ev.counts for name, ev in evaluations.items()},
        comparisons=comparisons,
        settings={
            "baseline": baseline,
            "test": stats.test,
            "correction": stats.correction,
            "alpha": stats.alpha,
            "n_resamples": stats.n_resamples,
            "ci": stats.ci,
            "confidence": stats.confidence,
            "seed": stats.seed,
        },
        curves=_curves(evaluations, list(mts.values())) if curves else {},
        aggregations={m: mts[m].aggregate for m in metrics},
    )
    return report


def _summary(
    evaluations: Mapping[str, Evaluation],
    per_query: Columns,
    metrics: list[str],
    mts: Mapping[str, Metric],
    stats: Statistics,
) -> dict[str, dict[str, dict[str, Any]]]:
    summary: dict[str, dict[str, dict[str, Any]]] = {}
    # One interval computation for every (run, metric) column evaluated on the same queries.
    groups: dict[bytes, list[tuple[str, str]]] = {}
    for run, cols in per_query.items():
        summary[run] = {}
        for m in metrics:
            col = cols[m]
            ok = ~np.isnan(col)
            summary[run][m] = {
                "value": float(evaluations[run].aggregate[m]),
                "ci_low": np.nan,
                "ci_high": np.nan,
                "n": int(ok.sum()),
            }
            if stats.ci and mts[m].aggregate == "mean" and ok.any():
                groups.setdefault(ok.tobytes(), []).append((run, m))
    for key, members in groups.items():
        ok = np.frombuffer(key, dtype=bool)
        values = np.column_stack([per_query[r][m][ok] for r, m in members])
        if stats.ci == "t":
            lo, hi = st.t_interval(values, stats.confidence)
        else:
            lo, hi = st.bootstrap_interval(values, stats.confidence, stats.n_resamples, stats.seed)
        for (r, m), a, b in zip(members, lo, hi):
            summary[r][m]["ci_low"], summary[r][m]["ci_high"] = float(a), float(b)
    return summary


def _pairs(runs: list[str], baseline: str | None) -> list[tuple[str, str]]:
    if baseline is not None:
        return [(r, baseline) for r in runs if r != baseline]
    return [(runs[j], runs[i]) for i in range(len(runs)) for j in range(i + 1, len(runs))]


def _comparisons(
    per_query: Columns,
    runs: list[str],
    metrics: list[str],
    baseline: str | None,
    stats: Statistics,
) -> list[Comparison]:
    pairs = _pairs(runs, baseline)
    if not pairs:
        return []
    columns: list[tuple[str, str, str]] = [(m, a, b) for m in metrics for a, b in pairs]
    # Group columns by the queries both runs were evaluated on; one test call per group.
    groups: dict[bytes, list[int]] = {}
    for j, (m, a, b) in enumerate(columns):
        ok = ~np.isnan(per_query[a][m]) & ~np.isnan(per_query[b][m])
        groups.setdefault(ok.tobytes(), []).append(j)
    pvalues = np.ones(len(columns))
    effect = np.zeros(len(columns))
    wtl = np.zeros((len(columns), 3), dtype=np.int64)
    diff = np.zeros(len(columns))
    sizes = np.zeros(len(columns), dtype=np.int64)
    for key, members in groups.items():
        ok = np.frombuffer(key, dtype=bool)
        d = np.column_stack(
            [
                per_query[columns[j][1]][columns[j][0]][ok]
                - per_query[columns[j][2]][columns[j][0]][ok]
                for j in members
            ]
        )
        pvalues[members] = st.paired_test(d, stats.test, stats.n_resamples, stats.seed)
        effect[members] = st.effect_size(d)
        wtl[members] = st.win_tie_loss(d)
        diff[members] = d.mean(axis=0) if d.shape[0] else 0.0
        sizes[members] = d.shape[0]
    adjusted = np.empty(len(columns))
    for m in metrics:
        idx = [j for j, c in enumerate(columns) if c[0] == m]
        adjusted[idx] = st.correct(pvalues[idx], stats.correction)
    return [
        Comparison(
            metric=m,
            run=a,
            other=b,
            diff=float(diff[j]),
            pvalue=float(pvalues[j]),
            pvalue_adjusted=float(adjusted[j]),
            significant=bool(adjusted[j] < stats.alpha),
            effect_size=float(effect[j]),
            wins=int(wtl[j, 0]),
            ties=int(wtl[j, 1]),
            losses=int(wtl[j, 2]),
            n=int(sizes[j]),
        )
        for j, (m, a, b) in enumerate(columns)
    ]


def curve_family(metric: Metric) -> str:
    """The name of a cutoff metric without its cutoff (``ndcg@10`` → ``ndcg``, ``mrr@10``
    → ``mrr``; trec_eval spellings such as ``ndcg_cut_10`` → the canonical ``ndcg``)."""
    suffix = f"@{metric.k}"
    if metric.name.endswith(suffix):
        return metric.name[: -len(suffix)].strip()
    return dataclasses.replace(metric, k=None, name="").canonical()


def _curves(
    evaluations: Mapping[str, Evaluation], metrics: list[Metric]
) -> dict[str, dict[str, dict[int, float]]]:
    fams: dict[str, tuple[Metric, set[int]]] = {}
    for mt in metrics:
        if mt.k is None or mt.aggregate != "mean":
            continue
        fam = curve_family(mt)
        _, ks = fams.setdefault(fam, (mt, set()))
        ks.add(mt.k)
    out: dict[str, dict[str, dict[int, float]]] = {}
    for name, ev in evaluations.items():
        out[name] = {}
        for fam, (mt, ks) in fams.items():
            cut = sorted({k for k in CURVE_CUTOFFS if k <= max(max(ks), 100)} | ks)
            variants = [dataclasses.replace(mt, k=k, name=f"{fam}@{k}") for k in cut]
            vals = ev.evaluate(variants).aggregate
            out[name][fam] = {k: float(vals[v.name]) for k, v in zip(cut, variants)}
    return out
