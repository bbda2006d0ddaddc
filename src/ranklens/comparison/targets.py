"""Verdicts against a use-case profile's targets, with confidence.

For a target ``metric >= t`` (a profile's, or one given directly), over the queries of an
evaluation:

* **met** only when the one-sided lower confidence bound of the mean clears ``t``;
* **missed** only when the one-sided upper bound lies below ``t``;
* otherwise **not yet known**, with the number of further labelled queries that would
  settle it at the observed mean and spread (80% power by default: the exact binomial
  probability for 0/1 values, :func:`ranklens.comparison.power_analysis.queries_needed`
  for graded ones).

``<=`` targets read the bounds the other way round. The bounds and their methods are in
:mod:`.bounds`; the method and level are part of every verdict and every rendering. A
target above what the labels allow (an ideal ranking's mean: P@5 of a set with one answer
per question is at most 0.2) is reported as such.

A point-estimate floor (``mean >= t``) says "met" about half the time when the true mean
equals ``t``; these verdicts do so at most ``α`` of the time (the simulation in
``docs/use-cases.md`` measures both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from ..errors import InputError
from ..evaluation import VERDICTS, Evaluation, evaluate, register_verdicts, stray_keywords
from ..io import coerce_qrels
from ..metrics import parse_metric
from ..model import Dataset, Run
from ..profiles import Profile, get_profile, metric_range
from ..settings import Statistics
from .bounds import (
    BINARY_METHODS,
    binomial_queries,
    check_level,
    graded_queries,
    mean_bounds,
    method_name,
)
from .verdict import TargetVerdict

__all__ = [
    "VERDICTS", "attach_verdicts", "attainable_means", "check_evaluation", "check_values",
    "evaluate", "resolve_profile", "stray_keywords", "with_profile_metrics",
]  # fmt: skip
"""``evaluate`` is :func:`ranklens.evaluate` itself (the evaluation floor's, whose verdicts
this module gives it: :func:`evaluate_with_targets`, registered when it is imported);
``VERDICTS`` are the verdicts' declarations, made there."""


def resolve_profile(
    profile: str | Profile | Mapping[str, Any] | None,
    targets: Mapping[str, Any] | Sequence[str] | str | None,
) -> Profile:
    """The profile verdicts are measured against: ``profile`` with ``targets`` overriding
    its own, or, without a profile, the ``targets`` alone."""
    given = cast("Mapping[str, Any] | None", targets)  # with_targets parses texts too
    if profile is None:
        if not targets:
            raise InputError("give a profile (a name or ranklens.Profile) or targets")
        return Profile("targets", "Targets given directly").with_targets(given)
    return get_profile(profile, given)


def check_values(
    per_query: Mapping[str, np.ndarray],
    profile: Profile,
    *,
    confidence: float = 0.95,
    method: str = "auto",
    power: float = 0.8,
    run: str | None = None,
    attainable: Mapping[str, float] | None = None,
    stats: Statistics | None = None,
) -> list[TargetVerdict]:
    """The verdict on each of ``profile``'s targets from per-query values (NaN, a query a
    run did not evaluate, is left out); a bootstrap bound draws ``stats.n_resamples``
    resamples with ``stats.seed`` (default ``Statistics()``); ``confidence`` is the
    one-sided level of the targets' bounds."""
    resamples = stats or Statistics()
    alpha = check_level(confidence)
    method = method_name(method)
    out = []
    for t in profile.targets:
        if t.metric not in per_query:
            raise InputError(f"no values of {t.metric} to check the target {t} against")
        values = np.asarray(per_query[t.metric], dtype=np.float64)
        values = values[~np.isnan(values)]
        if values.size == 0:
            raise InputError(f"{t.metric}: no query was evaluated, so {t} cannot be checked")
        unit = metric_range(parse_metric(t.metric)) is not None
        lo, hi, used = mean_bounds(
            values, alpha, method, unit, resamples.n_resamples, resamples.seed
        )
        verdict = TargetVerdict(
            t.metric, t.op, t.value, "unknown", float(values.mean()), int(values.size),
            float(lo[0]), float(hi[0]), used[0], confidence, power=power, run=run, why=t.why,
            source=t.source, attainable=(attainable or {}).get(t.metric),
        )  # fmt: skip
        above = t.op == ">="
        if (verdict.lower > t.value) if above else (verdict.upper < t.value):
            verdict.status = "met"
        elif (verdict.upper < t.value) if above else (verdict.lower > t.value):
            verdict.status = "missed"
        else:
            verdict.needed = _needed(values, t.value, used[0], alpha, power)
        out.append(verdict)
    return out


def _needed(
    values: np.ndarray, target: float, method: str, alpha: float, power: float
) -> int | None:
    mean = float(values.mean())
    if method in BINARY_METHODS:
        return binomial_queries(mean, target, alpha, power, method, above=mean > target)
    sd = float(values.std(ddof=1)) if values.size > 1 else 0.0
    if sd == 0.0:  # one value seen so far: plan with the widest spread of a [0, 1] metric
        sd = 0.5
    return graded_queries(sd, abs(mean - target), alpha, power, method, mean=mean,
                          above=mean > target)  # fmt: skip


def attainable_means(qrels: Any, metrics: Sequence[str], **judge_options: Any) -> dict[str, float]:
    """Each metric's mean for an ideal ranking of the labels (every query's relevant
    documents, highest grade first): the best any run can score on them."""
    labels = coerce_qrels(qrels.qrels if isinstance(qrels, Dataset) else qrels)
    ideal = {
        q: {d: float(g) for d, g in docs.items() if g > 0} for q, docs in labels.to_dict().items()
    }
    ideal = {q: docs for q, docs in ideal.items() if docs}
    if not ideal or not metrics:
        return {}
    options = {k: v for k, v in judge_options.items() if k not in ("ties", "missing")}
    options.setdefault("missing", "zero")
    try:
        ev = evaluate(labels, Run.from_dict(ideal), list(metrics), **options)
    except InputError:
        return {}
    return {m: float(v) for m, v in ev.aggregate.items()}


def evaluate_with_targets(
    qrels: Any,
    run: Any,
    metrics: Any,
    *,
    profile: str | Profile | Mapping[str, Any] | None,
    targets: Mapping[str, Any] | Sequence[str] | str | None,
    confidence: float,
    method: str,
    power: float,
    **options: Any,
) -> Evaluation:
    """What :func:`ranklens.evaluate` does with a ``profile`` or ``targets`` (its arguments
    already checked by its table): the profile's metrics evaluated beside ``metrics`` and a
    verdict on each target (:func:`check_evaluation`).

    >>> ev = evaluate({"q1": ["a"], "q2": ["b"]}, {"q1": ["a"], "q2": ["b"]}, targets={"P@1": 0.5})
    >>> ev.verdicts[0].status, ev.verdicts[0].method
    ('unknown', 'exact')
    """
    prof = resolve_profile(profile, targets)
    ev = evaluate(qrels, run, _metric_list(metrics, prof), **options)
    given = {k: v for k, v in options.items() if k not in ("memory", "trec_eval_version")}
    return check_evaluation(
        ev, qrels, prof, confidence=confidence, method=method, power=power, **given
    )


register_verdicts(evaluate_with_targets)


def check_evaluation(
    ev: Evaluation,
    qrels: Any,
    profile: Profile,
    *,
    confidence: float = 0.95,
    method: str = "auto",
    power: float = 0.8,
    **judge_options: Any,
) -> Evaluation:
    """Attach to ``ev`` (which holds the profile's metrics) a verdict per target of
    ``profile`` (``ev.verdicts``, ``ev.profile``); returns ``ev``."""
    best = attainable_means(qrels, [t.metric for t in profile.targets], **judge_options)
    ev.verdicts = tuple(
        check_values(
            ev.per_query, profile, confidence=confidence, method=method, power=power,
            attainable=best,
        )
    )  # fmt: skip
    ev.profile = profile
    return ev


def _metric_list(metrics: Any, profile: Profile) -> list[str]:
    given = [] if metrics is None else ([metrics] if isinstance(metrics, str) else list(metrics))
    names = [parse_metric(m).name if isinstance(m, str) else m.name for m in given]
    return [*given, *(m for m in profile.metric_names if m not in names)]


def with_profile_metrics(metrics: Any, profile: Profile) -> list[Any]:
    """``metrics`` followed by the profile's metrics not among them."""
    return _metric_list(metrics, profile)


def attach_verdicts(
    report: Any,
    qrels: Any,
    profile: Profile,
    *,
    confidence: float = 0.95,
    method: str = "auto",
    power: float = 0.8,
    stats: Statistics | None = None,
    **judge_options: Any,
) -> None:
    """Check every run of ``report`` against ``profile``'s targets (bootstrap bounds drawn
    as ``stats`` says) and keep the verdicts and the declaration in
    ``report.metadata["targets"]`` (saved with the report)."""
    best = attainable_means(qrels, [t.metric for t in profile.targets], **judge_options)
    verdicts = {}
    for r in report.runs:
        verdicts[r] = check_values(
            report.per_query[r], profile, confidence=confidence, method=method, power=power,
            run=r, attainable=best, stats=stats,
        )  # fmt: skip
    report.metadata["targets"] = {
        "profile": profile.to_dict(),
        "confidence": confidence,
        "method": method,
        "power": power,
        "verdicts": {r: [v.to_dict() for v in vs] for r, vs in verdicts.items()},
    }
