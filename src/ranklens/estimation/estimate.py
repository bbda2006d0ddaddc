"""``ranklens.estimate``: retrieval metrics from a model judge's labels, calibrated on a
small human-labelled sample by prediction-powered inference, with intervals that stay
valid when the judge is biased (:mod:`ranklens.estimation.ppi`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io import coerce_qrels, coerce_run
from ..metrics import parse_metrics
from ..model import Dataset, Run
from .labels import human_labels, judge_labels, per_query, top_pairs
from .ppi import classical, correlation, ppi
from .quality import quality
from .result import METHODS, MIN_HUMAN, EstimateResult


def _runs(runs: Any) -> dict[str, Run]:
    """``{name: Run}`` from a dict of runs (Runs, runner results, paths, or run dicts) or
    one run (``{query: [docs]}``, ``{query: {doc: score}}``, a Run, a path)."""
    if isinstance(runs, Mapping) and runs and not isinstance(runs, Run):
        values = list(runs.values())
        one = all(isinstance(v, (list, tuple)) for v in values) or all(
            isinstance(v, Mapping) and all(isinstance(s, (int, float)) for s in v.values())
            for v in values
        )
        if not one:
            return {str(k): coerce_run(v, name=str(k)) for k, v in runs.items()}
    run = coerce_run(runs)
    return {run.name: run}


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
    confidence: float = 0.95,
    interval: str = "t",
    seed: int = 0,
    relevance_level: int = 1,
    grades: Sequence[int] | None = None,
    concurrency: int = 8,
    timeout: float | None = None,
    retries: int = 2,
    cache: str | Path | None = None,
    progress: bool | None = None,
    config: Mapping[str, Any] | None = None,
) -> EstimateResult:
    """Estimate ``metrics`` of each run, and each run's difference from ``baseline``, over
    the dataset's queries, from a model judge calibrated on human labels.

    ``dataset``: a :class:`~ranklens.Dataset` (or a path) whose queries are the population
    and whose corpus gives the judge the passages. ``runs``: ``{name: run}`` or one run
    (anything :func:`ranklens.evaluate` takes, or a runner result). ``judge(query,
    passage) -> grade`` (sync or async) grades every run's top ``depth`` (default: the
    largest cutoff of ``metrics``, else 10) through :func:`ranklens.assess` (concurrency,
    ``timeout``, ``retries``, the resumable log ``cache``); ``judges=[...]`` an ensemble,
    combined per pair by ``combine`` (``majority``, ``mean``, ``median``); or ``judged``:
    labels a judge already gave. ``human``: the human sample (labels, a list of query ids
    whose labels the dataset holds, or a number of the dataset's labelled queries drawn at
    random with ``seed``: the dataset's labels standing in for people).

    Each metric is estimated four ways (:mod:`ranklens.estimation.ppi`): ``naive`` (the
    judge alone), ``human`` (the human sample alone), ``ppi`` and ``ppi++`` (both), with
    ``confidence`` intervals of kind ``interval`` (``"t"``, or ``"z"`` as in the papers). Returns
    an :class:`~ranklens.estimation.EstimateResult`, with the judge's agreement with the people
    and every condition met (judge failures, human holes, a small sample) in its notes.
    """
    if isinstance(dataset, (str, Path)):
        from ..io import read_dataset

        dataset = read_dataset(dataset)
    if not isinstance(dataset, Dataset):
        raise InputError(f"estimate needs a Dataset (queries and corpus), got {dataset!r:.60}")
    if human is None:
        raise InputError("human= is required: the human-labelled sample that calibrates the judge")
    chosen = [x for x in (judge, judges, judged) if x is not None]
    if len(chosen) != 1:
        raise InputError("give exactly one of judge=, judges=[...] or judged= (labels)")
    parsed = parse_metrics(list(metrics) if not isinstance(metrics, str) else [metrics])
    names = [m.name for m in parsed]
    depth = depth or max((m.k for m in parsed if m.k), default=10)
    run_map = _runs(runs)
    base = baseline or next(iter(run_map))
    if base not in run_map:
        raise InputError(f"baseline {base!r} is not one of the runs: {', '.join(run_map)}")
    queries = sorted(dataset.queries)
    pairs = top_pairs(dataset, run_map, depth)
    members: list = []
    if judged is not None:
        judge_q = coerce_qrels(judged.qrels if hasattr(judged, "failures") else judged)
        source = "given labels"
    else:
        js = [judge] if judge is not None else list(judges or [])
        if not js or not all(callable(j) for j in js):
            raise InputError("judge must be a callable (query, passage) -> grade")
        judge_q, members = judge_labels(
            pairs,
            js,
            combine,
            cache,
            grades=grades,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            progress=progress,
            config=config,
        )
        source = members[0].source if len(members) == 1 else f"ensemble of {len(js)} ({combine})"
    human_q = human_labels(human, dataset, seed)
    population = set(queries)
    labelled = sorted(set(map(str, human_q.query_ids)) & population)
    outside = len(set(map(str, human_q.query_ids)) - population)
    if not labelled:
        raise InputError(
            "the human sample shares no query with the dataset's queries: it cannot "
            "calibrate the judge (label some of these queries' retrieved passages)"
        )
    human_pairs = {(q, d) for q, docs in human_q.to_dict().items() for d in docs}
    judged_keys = {(p.query_id, p.doc_id) for p in pairs}
    if not human_pairs & judged_keys:
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
    ys, fs, targets = [], [], []
    for run in run_map.values():
        ys.append(per_query(human_q, run, names, labelled, relevance_level))
        fs.append(per_query(judge_q, run, names, queries, relevance_level))
    for name in run_map:
        targets += [(name, "run", m) for m in names]
    b = list(run_map).index(base)
    for i, name in enumerate(run_map):
        if i != b:
            ys.append(ys[i] - ys[b])
            fs.append(fs[i] - fs[b])
            targets += [(f"{name} − {base}", "difference", m) for m in names]
    y = np.hstack(ys)
    f = np.hstack(fs)
    fl, fu = f[lab_idx], f[unl_idx]
    results = {
        "naive": classical(f, confidence, interval),
        "human": classical(y, confidence, interval),
        "judge_bias": classical(fl - y, confidence, interval),
    }
    if len(unl_idx) > 1:
        results["ppi"] = ppi(y, fl, fu, 1.0, confidence, interval)
        results["ppi++"] = ppi(y, fl, fu, None, confidence, interval)
    else:  # (almost) every query is human-labelled: the human estimate is the answer
        results["ppi"] = results["ppi++"] = results["human"]
    corr = correlation(y, fl)
    rows = []
    for c, (target, kind, metric) in enumerate(targets):
        row: dict[str, Any] = {
            "target": target,
            "kind": kind,
            "metric": metric,
            "corr": _num(corr[c]),
        }
        for method in (*METHODS, "judge_bias"):
            r = results[method]
            row[method] = {
                "value": float(r.value[c]),
                "lo": float(r.lo[c]),
                "hi": float(r.hi[c]),
                "se": float(r.se[c]),
            }
            if r.lam is not None:
                row[method]["lambda"] = float(r.lam[c])
        rows.append(row)
    judge_keys = {(q, d) for q, docs in judge_q.to_dict().items() for d in docs}
    retrieved_h = {(p.query_id, p.doc_id) for p in pairs if p.query_id in set(labelled)}
    notes_info = {
        "judge_failures": sum(len(a.failures) for a in members),
        "unjudged_pairs": len(judged_keys - judge_keys),
        "human_holes": len(retrieved_h - human_pairs),
        "retrieved_in_human_queries": len(retrieved_h),
        "human_outside": outside,
        "judge_calls_resumed": sum(a.resumed for a in members),
    }
    judge_info = {"source": source, **quality(human_q, judge_q)}
    if len(members) > 1:
        judge_info["members"] = [{"source": a.source, **quality(human_q, a.qrels)} for a in members]
    return EstimateResult(
        rows=rows,
        runs=list(run_map),
        baseline=base,
        metrics=names,
        confidence=confidence,
        n=n,
        big_n=len(unl_idx),
        depth=depth,
        judge=judge_info,
        info=notes_info,
        dataset=dataset.name,
        labelled=labelled,
    )


def _num(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)
