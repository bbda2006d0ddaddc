"""``ranklens.estimate``: retrieval metrics from a model judge's labels, calibrated on a
small human-labelled sample by prediction-powered inference, with intervals that stay
valid when the judge is biased (:mod:`ranklens.estimation.ppi`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..declared import (
    AT_LEAST_ONE,
    CALLING,
    STATISTICS,
    ParameterError,
    choice,
    count,
    data,
    declare,
    function,
    items,
    mapping,
    names,
    text,
)
from ..errors import InputError
from ..io import coerce_qrels
from ..labelling import CALLS, CALLS_OPTION, GRADES, Assessment, a_callable
from ..metrics import parse_metrics
from ..model import Dataset
from ..settings import Calling, Statistics, outside_stacklevel, settled
from .inputs import (
    degenerate_why,
    finite_or_none,
    grade_scale,
    label_pairs,
    outside_scale,
    runs_of,
    value_range,
)
from .labels import COMBINE, human_labels, judge_labels, per_query, top_keys, top_pairs
from .ppi import INTERVALS, Interval, calibrated, correlation
from .quality import quality
from .records import (
    ESTIMATES,
    DegenerateNote,
    EstimateCounts,
    EstimateRow,
    MethodEstimate,
)
from .result import (
    MIN_HUMAN,
    DegenerateSampleWarning,
    EstimateResult,
)

STATS = Statistics()
"""The statistics :func:`estimate` uses unless ``stats=`` says otherwise (it reads
``confidence`` and ``seed``)."""

STATS_OPTION = data(
    "the statistics settings: a ranklens.Statistics (estimate reads its confidence and seed)"
)
FLAT_STATS = ("confidence", "seed")
"""The keywords of :class:`~ranklens.Statistics` estimate took flat (deprecated)."""

FLAT_CALLS = ("concurrency", "timeout", "retries", "cache", "progress")
"""The keywords of :class:`~ranklens.Calling` estimate took flat (deprecated)."""

ESTIMATE = declare(
    "estimate",
    {
        "dataset": data("a Dataset (or its path): the queries, and the corpus the judge reads"),
        "runs": data("{name: run} or one run (anything evaluate takes, or a runner's result)"),
        "judge": function("judge(query, passage) -> grade, sync or async", none=True),
        "judges": items(
            None,
            words="callables",
            description="an ensemble of judges, combined per pair by combine",
            none=True,
            item=a_callable,
            example=[lambda query, passage: 1],
        ),
        "combine": choice("majority", COMBINE, "how an ensemble's grades are combined per pair"),
        "judged": data("labels a judge already gave (anything evaluate takes, or an Assessment)"),
        "human": data(
            "the human sample: labels, a list of query ids whose labels the dataset holds, or "
            f"a whole number (>= {MIN_HUMAN}) of the dataset's labelled queries drawn with seed"
        ),
        "metrics": names(("ndcg@10",), "the metrics estimated", single=True),
        "depth": count(
            None, AT_LEAST_ONE, "top k judged (None: the largest cutoff, else 10)", none=True
        ),
        "baseline": text(None, "the run differences are taken from (None: the first)", none=True),
        "interval": choice("t", INTERVALS, "t (small-sample) or z (the papers' normal interval)"),
        "relevance_level": count(1, None, "the grade from which a document counts as relevant"),
        "grades": GRADES,
        "stats": STATS_OPTION,
        "calls": CALLS_OPTION,
        "config": mapping(
            None, "names the judge's configuration in its log", none=True, empty=True
        ),
        **{k: STATISTICS[k] for k in FLAT_STATS},
        **{k: CALLING[k] for k in FLAT_CALLS},
    },
)


@ESTIMATE.checks
def estimate(
    dataset: Any,
    runs: Any,
    *,
    judge: Callable[..., Any] | None = None,
    judges: Sequence[Callable[..., Any]] | None = None,
    combine: str = "majority",
    judged: Any = None,
    human: Any = None,
    metrics: str | Sequence[str] = ("ndcg@10",),
    depth: int | None = None,
    baseline: str | None = None,
    interval: str = "t",
    relevance_level: int = 1,
    grades: Sequence[int] | None = None,
    stats: Statistics | None = None,
    calls: Calling | None = None,
    config: Mapping[str, Any] | None = None,
    **flat: Any,
) -> EstimateResult:
    """Estimate ``metrics`` of each run, and each run's difference from ``baseline``, over
    the dataset's queries, from a model judge calibrated on human labels.

    ``dataset``: a :class:`~ranklens.Dataset` (or a path) whose queries are the population
    and whose corpus gives the judge the passages. ``runs``: ``{name: run}`` or one run
    (anything :func:`ranklens.evaluate` takes, or a runner result). ``judge(query,
    passage) -> grade`` (sync or async) grades every run's top ``depth`` (default: the
    largest cutoff of ``metrics``, else 10) through :func:`ranklens.assess`, called as
    ``calls=Calling(concurrency=..., timeout=..., retries=..., cache=..., progress=...)``
    says (``cache``: the resumable log); ``judges=[...]`` an ensemble,
    combined per pair by ``combine`` (``majority``, ``mean``, ``median``); or ``judged``:
    labels a judge already gave (then no judge is called, and the corpus needs no text).
    ``human``: the human sample (labels, a list of query ids whose labels the dataset
    holds, or a number of the dataset's labelled queries drawn at random with
    ``stats.seed``: the dataset's labels standing in for people).

    The grade scale is ``grades`` when given, else every whole grade from 0 (or the
    lowest human grade) to the highest grade of the human sample and the dataset's labels
    (at least 0 and 1). A judge's answer outside the scale (a 7 on a 0/1 scale), or not a
    grade at all, is that pair's failure, counted and noted, never taken; a ``judged``
    grade outside it is an error naming the pair.

    Each metric is estimated four ways (:mod:`ranklens.estimation.ppi`): ``naive`` (the
    judge alone), ``human`` (the human sample alone), ``ppi`` and ``ppi++`` (both), with
    intervals at ``stats.confidence`` (``stats=Statistics(confidence=0.9, seed=1)``; the
    other statistics settings are not used) of kind ``interval`` (``"t"``, or ``"z"`` as
    in the papers),
    each kept inside the metric's range (the point clipped, the interval intersected). A
    degenerate human sample (a column all one value, or nearly) is widened by a bound
    that needs no variance estimate, warned (:class:`DegenerateSampleWarning`) and noted.
    Returns an :class:`~ranklens.estimation.EstimateResult` (rows of
    :class:`~ranklens.estimation.EstimateRow`), with the judge's agreement with the people
    and every condition met (judge failures, human holes, a small or degenerate sample) in
    its notes.

    The flat keywords ``confidence``, ``seed`` (now ``stats=``) and ``concurrency``,
    ``timeout``, ``retries``, ``cache``, ``progress`` (now ``calls=``) still work for one
    release, with a ``DeprecationWarning`` showing the new spelling; a flat keyword beside
    its settings object is an error naming both.
    """
    flat = ESTIMATE.check(flat)
    stats = settled("estimate", stats, _of(flat, FLAT_STATS), STATS, "stats")
    calls = settled("estimate", calls, _of(flat, FLAT_CALLS), CALLS, "calls")
    return _estimate(
        dataset, runs, judge=judge, judges=judges, combine=combine, judged=judged,
        human=human, metrics=metrics, depth=depth, baseline=baseline, interval=interval,
        relevance_level=relevance_level, grades=grades, stats=stats, calls=calls,
        config=config,
    )  # fmt: skip


def _of(flat: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The flat keywords of one group (a name the entry point does not take flat was
    refused by its table already)."""
    return {k: v for k, v in flat.items() if k in names}


def _estimate(
    dataset: Any,
    runs: Any,
    *,
    judge: Callable[..., Any] | None,
    judges: Sequence[Callable[..., Any]] | None,
    combine: str,
    judged: Any,
    human: Any,
    metrics: str | Sequence[str],
    depth: int | None,
    baseline: str | None,
    interval: str,
    relevance_level: int,
    grades: Sequence[int] | None,
    stats: Statistics,
    calls: Calling,
    config: Mapping[str, Any] | None,
) -> EstimateResult:
    """:func:`estimate` once its settings are settled."""
    confidence, seed = stats.confidence, stats.seed
    if isinstance(dataset, (str, Path)):
        from ..io import read_dataset

        dataset = read_dataset(dataset)
    if not isinstance(dataset, Dataset):
        raise InputError(f"estimate needs a Dataset (queries and corpus), got {dataset!r:.60}")
    if human is None:
        raise ParameterError(
            "estimate: human must be given (the human-labelled sample that calibrates the "
            "judge: labels, a list of query ids, or a number of queries), got None"
        )
    chosen = [x for x in (judge, judges, judged) if x is not None]
    if len(chosen) != 1:
        raise InputError(
            f"estimate: give exactly one of judge=, judges=[...] or judged= (labels), got "
            f"{len(chosen)}"
        )
    parsed = parse_metrics(list(metrics))
    metric_names = [m.name for m in parsed]
    depth = depth or max((m.k for m in parsed if m.k), default=10)
    run_map = runs_of(runs)
    for name, run in run_map.items():
        if not set(map(str, run.query_ids)) & set(dataset.queries):
            raise InputError(
                f"estimate: run {name!r} retrieved nothing for the dataset's queries (it "
                f"holds {len(run.query_ids)} queries, none of the dataset's "
                f"{len(dataset.queries)}): check its query ids"
            )
    base = baseline or next(iter(run_map))
    if base not in run_map:
        from ..errors import closest

        near = closest(base, run_map)
        raise ParameterError(
            f"estimate: baseline must be one of the runs ({', '.join(map(repr, run_map))}), "
            f"got {base!r}" + (f"; did you mean {near!r}?" if near else "")
        )
    queries = sorted(dataset.queries)
    human_q = human_labels(human, dataset, seed)
    scale = grade_scale(grades, human_q, dataset.qrels)
    found = top_keys(dataset, run_map, depth)
    judged_keys = found.keys()
    members: list[Assessment] = []
    if judged is not None:
        judge_q = coerce_qrels(judged.qrels if hasattr(judged, "failures") else judged)
        outside_scale(judge_q, scale, "judged")
        judge_pairs = label_pairs(judge_q)
        if judge_pairs.keys().isdisjoint(judged_keys):
            raise InputError(
                f"estimate: the judged labels share no (query, document) pair with the runs' "
                f"top {depth}: there is nothing of the judge's to calibrate (judge those "
                "pairs, or give judge= to have them judged)"
            )
        source = "given labels"
    else:
        js = [judge] if judge is not None else list(judges or [])
        pairs = top_pairs(dataset, found, texts=True)
        judge_q, members = judge_labels(pairs, js, combine, calls, grades=scale, config=config)
        judge_pairs = label_pairs(judge_q)
        source = members[0].source if len(members) == 1 else f"ensemble of {len(js)} ({combine})"
    population = set(queries)
    labelled = sorted(set(map(str, human_q.query_ids)) & population)
    outside = len(set(map(str, human_q.query_ids)) - population)
    if not labelled:
        raise InputError(
            "the human sample shares no query with the dataset's queries: it cannot "
            "calibrate the judge (label some of these queries' retrieved passages)"
        )
    human_all = label_pairs(human_q)
    human_pairs = human_all.keys()
    if human_pairs.isdisjoint(judged_keys):
        raise InputError(
            f"the human labels share no (query, document) pair with the runs' top {depth}: "
            "they cannot calibrate the judge. Label the pairs the runs retrieve (ranklens "
            "pool QRELS RUN... --depth N writes them; ranklens judge makes a page)"
        )
    n = len(labelled)
    if n < MIN_HUMAN:
        raise InputError(
            f"a human sample of {n} queries is too small for an interval: at least "
            f"{MIN_HUMAN} are needed (ranklens.plan_labels says how many a target width takes)"
        )
    human_q = human_q.subset(labelled)
    at = {q: i for i, q in enumerate(queries)}
    lab_idx = np.array([at[q] for q in labelled], dtype=np.intp)
    unl_idx = np.setdiff1d(np.arange(len(queries)), lab_idx)
    ys, fs, targets, lows, highs = [], [], [], [], []
    ranges = [value_range(m) for m in parsed]
    for run in run_map.values():
        ys.append(per_query(human_q, run, metric_names, labelled, relevance_level))
        fs.append(per_query(judge_q, run, metric_names, queries, relevance_level))
    for name in run_map:
        targets += [(name, "run", m) for m in metric_names]
        lows += [lo for lo, _ in ranges]
        highs += [hi for _, hi in ranges]
    b = list(run_map).index(base)
    for i, name in enumerate(run_map):
        if i != b:
            ys.append(ys[i] - ys[b])
            fs.append(fs[i] - fs[b])
            targets += [(f"{name} − {base}", "difference", m) for m in metric_names]
            lows += [lo - hi for lo, hi in ranges]
            highs += [hi - lo for lo, hi in ranges]
    y = np.hstack(ys)
    f = np.hstack(fs)
    results, weak = calibrated(y, f, lab_idx, np.array(lows), np.array(highs), confidence, interval)
    corr = correlation(y, f[lab_idx])
    rows = [
        EstimateRow(
            target,
            kind,
            metric,
            finite_or_none(corr[c]),
            {m: _method(results[m], c) for m in ESTIMATES},
            degenerate_why(y[:, c]) if weak[c] else None,
            bool(np.isfinite(highs[c]) and np.isfinite(lows[c])) if weak[c] else None,
        )
        for c, (target, kind, metric) in enumerate(targets)
    ]
    in_sample = set(labelled)
    retrieved_h = {key for key in judged_keys if key[0] in in_sample}
    human_sample = {key: g for key, g in human_all.items() if key[0] in in_sample}
    counts = EstimateCounts(
        judge_failures=sum(len(a.failures) for a in members),
        unjudged_pairs=len(judged_keys - judge_pairs.keys()),
        human_holes=len(retrieved_h - human_pairs),
        retrieved_in_human_queries=len(retrieved_h),
        human_outside=outside,
        judge_calls_resumed=sum(a.resumed for a in members),
        grades=sorted(scale),
        degenerate=[
            DegenerateNote(r.target, r.metric, r.degenerate, bool(r.widened))
            for r in rows
            if r.degenerate is not None
        ],
    )
    judge_info = quality(human_sample, judge_pairs, source)
    if len(members) > 1:
        judge_info = replace(
            judge_info,
            members=[quality(human_sample, label_pairs(a.qrels), a.source) for a in members],
        )
    result = EstimateResult(
        rows=rows,
        runs=list(run_map),
        baseline=base,
        metrics=metric_names,
        confidence=confidence,
        n=n,
        big_n=len(unl_idx),
        depth=depth,
        judge=judge_info,
        info=counts,
        dataset=dataset.name,
        labelled=labelled,
    )
    if counts.degenerate:
        first = counts.degenerate[0]
        warnings.warn(
            f"estimate: the human sample is degenerate for {len(counts.degenerate)} "
            f"estimates, first {first.target!r} {first.metric}: {first.why}; their "
            "intervals are widened to hold a bound that needs no variance estimate (the "
            "result's notes name each)",
            DegenerateSampleWarning,
            stacklevel=outside_stacklevel(),
        )
    return result


def _method(r: Interval, c: int) -> MethodEstimate:
    """Column ``c`` of one method's estimates."""
    lam = None if r.lam is None else float(r.lam[c])
    return MethodEstimate(float(r.value[c]), float(r.lo[c]), float(r.hi[c]), float(r.se[c]), lam)
