"""A sweep's measured configurations assembled into its :class:`SweepResult`: one comparison
:class:`~ranklens.Report` of them, a :class:`~.records.SweepRow` each, the selection per
metric (:mod:`.select`, every resampling in two batches), the effects, the significance
matrices and the Pareto frontiers."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..comparison import compare
from ..errors import InputError, RanklensWarning
from ..evaluation import MetricsLike
from ..metrics import lower_is_better
from ..model import Dataset
from ..settings import Statistics, outside_stacklevel
from .execute import Outcome
from .folder import Folder
from .grid import satisfies
from .records import Choice, Effect, FloatArray, PairMatrix
from .result import SweepResult
from .rows import Prices, all_failed, matrix, nothing_chosen, row, unmatched
from .select import effects, fill_resampled, pairwise_pvalues, pareto, select, settle

MATRIX_LIMIT = 40
"""Configurations up to which the significance matrix (every pair) is computed."""


def assemble(
    outcomes: list[Outcome],
    labels: Any,
    metrics: MetricsLike,
    baseline: str,
    check: Callable[[Mapping[str, Any]], bool] | None,
    costs: Prices,
    stats: Statistics,
    folds: int,
    folder: Folder,
    judge_options: dict[str, Any],
    dataset: Dataset,
) -> SweepResult:
    """The comparison of the measured configurations, the selection per metric, the rows."""
    measured = [o for o in outcomes if o.result is not None and any(r.ok for r in o.result.records)]
    for o in outcomes:
        if o.result is not None and o not in measured:
            o.build.setdefault("error", all_failed(o))
    if not measured:
        errors = "; ".join(
            f"{o.config.name}: {e['type']}: {e['message']}"
            for o in outcomes[:5]
            if (e := o.error or {"type": "Error", "message": "not measured"})
        )
        raise InputError(f"no configuration of the sweep could be measured ({errors})")
    names = [o.config.name for o in measured]
    base = baseline if baseline in names else names[0]
    report = compare(
        labels,
        {o.config.name: o.result for o in measured},
        metrics,
        baseline=base if len(names) > 1 else None,
        stats=stats,
        **judge_options,
    )
    rows = [row(o, report, costs) for o in outcomes]
    by_name = {r.name: r for r in rows}
    for o in measured:
        note = unmatched(o, report, labels)
        if note:
            by_name[o.config.name].status, by_name[o.config.name].message = "unmatched", note
            warnings.warn(note, RanklensWarning, stacklevel=outside_stacklevel())
    for r in rows:
        r.feasible = r.status == "ok" and (check is None or satisfies(check, r.to_dict()))
    feasible = np.array([by_name[n].feasible for n in names])
    selections: dict[str, Choice] = {}
    effect_rows: dict[str, list[Effect]] = {}
    matrices: dict[str, PairMatrix] = {}
    keys = list(dict.fromkeys(k for o in outcomes for k in o.config.params))
    values: dict[str, FloatArray] = {}
    undefined: dict[str, int] = {}
    for m in report.metrics:  # a query a metric is undefined on for some configuration
        v = np.vstack([report.per_query[n][m] for n in names])  # is left out, and counted
        kept = np.isfinite(v).all(axis=0)
        values[m], undefined[m] = v[:, kept], int((~kept).sum())
    # every resampling of the sweep's own analysis in two batches: the paired tests of
    # every two configurations and of the held-out values against the baseline (all
    # metrics), then the intervals
    for m, v in values.items():
        selections[m] = select(v, names, feasible, names.index(base), folds=folds, stats=stats,
                               resample=False, lower_is_better=lower_is_better(m),
                               defer_tests=True)  # fmt: skip
        if undefined[m]:
            selections[m].queries_left_out = undefined[m]
    pvalues: dict[str, FloatArray] = {}
    if len(names) <= MATRIX_LIMIT:
        held = [
            (s.cv_values, names.index(s.baseline))
            if s.held_out_diffs is not None and s.baseline is not None
            else None
            for s in selections.values()
        ]
        pairs, held_p = pairwise_pvalues(list(values.values()), stats, held)
        pvalues = dict(zip(values, pairs))
        for s, p in zip(selections.values(), held_p):
            if p is not None:
                s.held_out_pvalue = p
    ok = [i for i, n in enumerate(names) if by_name[n].status == "ok"]
    for m, v in values.items():
        if selections[m].chosen is not None:
            settle(selections[m], v, names, pvalues.get(m), stats)
        effect_rows[m] = effects(v[ok], [measured[i].config.params for i in ok], keys,
                                 [names[i] for i in ok], stats=stats, resample=False,
                                 lower_is_better=lower_is_better(m))  # fmt: skip
        if len(ok) > 1 and m in pvalues:
            matrices[m] = matrix(
                v[ok], pvalues[m][np.ix_(ok, ok)], [names[i] for i in ok], stats,
                lower_is_better=lower_is_better(m),
            )  # fmt: skip
    fill_resampled(list(selections.values()), [e for es in effect_rows.values() for e in es], stats)
    primary = report.metrics[0]
    quality = [
        q if r.status == "ok" and (q := by_name[r.name].value(primary)) is not None else math.nan
        for r in rows
    ]
    if lower_is_better(primary):  # the frontier wants quality high: a rate of the unwanted
        quality = [-q for q in quality]
    latency = [r.p95 if r.p95 is not None else math.nan for r in rows]
    for r, front in zip(rows, pareto(quality, latency)):
        r.pareto = front
    if any(r.cost is not None for r in rows):
        spend = [r.cost if r.cost is not None else math.nan for r in rows]
        for r, front in zip(rows, pareto(quality, spend)):
            r.pareto_cost = front
    for sel in selections.values():  # unmeasured quality is never "tied" with the best
        if sel.tied:
            sel.tied = [n for n in sel.tied if by_name[n].status == "ok"]
    tied = set(selections[primary].tied or [])
    for r in rows:
        r.tied = r.name in tied
    result = SweepResult(
        rows=rows,
        metrics=list(report.metrics),
        keys=keys,
        baseline=base,
        selection=selections,
        effects=effect_rows,
        matrices=matrices,
        report=report,
        outcomes=outcomes,
        folder=str(folder.path) if folder.path is not None else None,
        constraint=getattr(check, "text", None if check is None else "a function of the row"),
        dataset=dataset.name,
    )
    if len(names) > MATRIX_LIMIT:
        for sel in selections.values():
            sel.matrix_note = (
                f"no significance matrix: {len(names)} measured configurations are more than "
                f"{MATRIX_LIMIT} ({len(names) * (len(names) - 1) // 2:,} pairs); the chosen "
                "one is tested against every other"
            )
    if nothing_chosen(rows, selections[primary], result.constraint) is not None:
        for sel in selections.values():
            if sel.chosen is None:
                sel.reason = nothing_chosen(rows, sel, result.constraint)
    report.metadata["sweep"] = result.to_dict()
    return result
