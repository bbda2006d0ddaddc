"""``ranklens.compare``: evaluate several runs on the same labels and test their differences.

Each run is judged once; per-query values of every metric are stacked into one matrix, so
the confidence intervals of all (run, metric) columns share one set of bootstrap resamples
and the paired tests of all (pair, metric) columns share one set of permutations (one
matrix product per chunk). See :mod:`ranklens.comparison.stats` for the tests and corrections.
"""

from __future__ import annotations

import datetime as _dt
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..declared import (
    STATISTICS,
    ParameterError,
    data,
    declare,
    mapping,
    names,
    renamed_option,
    text,
)
from ..errors import InputError, closest
from ..evaluation import Evaluation, MetricsLike, tie_bounds
from ..io import coerce_qrels, coerce_run
from ..judging import JudgeOptions, judge
from ..metrics import parse_metric, parse_metrics
from ..metrics.trec_forms import METRICS
from ..model import Dataset
from ..model.spans import SpanLabels
from ..settings import Statistics, settled
from ..version import __version__
from .build import build_report
from .contents import REPORT_CONTENTS, ReportContents
from .drilldown import drilldown as make_drilldown
from .evidence import rule_text
from .holes import HoleRange, holes
from .report import Report
from .schema import check_run_info
from .settings_use import STATS_OPTION, split_statistics, statistics
from .spandrill import span_drilldown
from .targets import (
    VERDICTS,
    attach_verdicts,
    resolve_profile,
    stray_keywords,
    with_profile_metrics,
)

COMPARE = declare("compare", {  # the flat statistics keywords stay declared (deprecated)
    "qrels": data("the labels: anything ranklens.evaluate takes, or a Dataset"),
    "runs": data("{name: run} or a list of runs"),
    "metrics": renamed_option(
        METRICS, also=names(None, empty=True, check=lambda items: not items),
        description="metric names (one name is a list of one; [] with a profile or targets: "
        "theirs alone)",
    ),
    "baseline": text(None, "compare each run with this one (None: every pair)", none=True),
    "stats": STATS_OPTION,
    **STATISTICS,
    "queries": mapping(None, "{query id: text} shown in the report", none=True, empty=True),
    "dataset": text(None, "the dataset's name in the report", none=True),
    "run_info": mapping(None, "per run, extra facts for the report", none=True, empty=True),
    "contents": data("a ranklens.comparison.ReportContents: curves, tie and hole ranges, "
                     "drill-down"),
    **REPORT_CONTENTS,
    "options": data("a ranklens.JudgeOptions (else the judging keywords)"),
    "profile": VERDICTS["profile"],
    "targets": VERDICTS["targets"],
    "target_confidence": renamed_option(VERDICTS["confidence"]),
    "target_method": VERDICTS["method"],
})  # fmt: skip


@COMPARE.checks
def compare(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: MetricsLike = ("ndcg@10", "recall@100", "mrr@10", "P@10", "map"),
    *,
    baseline: str | None = None,
    stats: Statistics | None = None,
    queries: Mapping[str, str] | None = None,
    dataset: str | None = None,
    run_info: Mapping[str, Mapping[str, Any]] | None = None,
    contents: ReportContents | None = None,
    options: JudgeOptions | None = None,
    profile: Any = None,
    targets: Mapping[str, Any] | None = None,
    target_confidence: float = 0.95,
    target_method: str = "auto",
    **judge_options: Any,
) -> Report:
    """Evaluate ``runs`` against ``qrels`` and compare them with paired significance tests.

    ``qrels``: anything :func:`ranklens.evaluate` takes, or a :class:`~ranklens.Dataset`
    (its query texts then appear in the report). ``runs``: ``{name: run}`` or a list (named
    by file stem, else ``run1``, ``run2``...); a run is anything ``evaluate`` takes or an
    :class:`~ranklens.Evaluation`.

    ``baseline``: compare each run with this one; None compares every pair.
    ``stats``: a :class:`~ranklens.Statistics` (default ``Statistics()``):
    ``test`` ``"randomization"`` (Fisher, ``n_resamples`` sign flips), ``"t"``,
    ``"bootstrap"`` (paired, shift method) or ``"wilcoxon"``;
    ``correction`` ``"holm"``, ``"bonferroni"``, ``"bh"`` or ``"none"``, applied per
    metric over that metric's comparisons; ``alpha`` the significance level;
    ``ci`` ``"bootstrap"`` (percentile, ``n_resamples``), ``"t"`` or None; ``confidence``
    the intervals' level; ``seed`` the random seed. The flat keywords ``test=``,
    ``correction=``, ``alpha=``, ``n_resamples=``, ``ci=``, ``confidence=``, ``seed=``
    still work for one release with a ``DeprecationWarning`` (write
    ``stats=ranklens.Statistics(test="t")``); one beside ``stats=`` is an error.
    ``run_info``: per run, extra facts for the report (the runner's latency and errors).
    ``contents``: a :class:`~ranklens.comparison.ReportContents` (default: everything
    kept), what the report holds beyond the means and tests:
    ``tie_range``: for a run with tied scores, also judge it with its tied documents in the
    most and least favourable order (``ties="best"``/``"worst"``), so the report shows
    how far ties can move each metric (``summary[run][metric]["tie_low"/"tie_high"]``).
    ``hole_range``: for a run that retrieved unjudged documents, also score each metric
    with them as relevant and on the condensed (judged-only) list
    (:func:`ranklens.comparison.holes.holes`), so the report shows what missing labels can do
    (``summary[run][metric]["as_relevant"/"judged_only"]``) and which queries have the most
    holes in their top 10 (``metadata["holes"][run]``).
    ``drilldown``: keep each run's top ``drilldown`` documents per query, the labels and
    where each run ranked the labelled documents (``metadata["drilldown"]``, see
    :mod:`.drilldown`), for the HTML report's per-query view (with document snippets from a
    Dataset's corpus or a runner's hits); None leaves it out; ``curves``: each cutoff
    metric's curve over cutoffs. The flat keywords ``curves=``, ``tie_range=``,
    ``hole_range=``, ``drilldown=`` still work for one release with a
    ``DeprecationWarning`` (write ``contents=ReportContents(drilldown=None)``).
    On span labels (:class:`~ranklens.SpanLabels`), a runner's result is judged by its
    chunks (``chunk_run()``), the drill-down shows each chunk in its document's text with
    the evidence it holds highlighted and the evidence each run missed (:mod:`.spandrill`),
    ``metadata["options"]["overlap"]`` names the overlap rule, and no tie range is computed
    (tied chunks change which chunk finds evidence first; the notes name the runs).
    ``profile`` (a name such as ``"faq"`` or a :class:`~ranklens.Profile`) and/or
    ``targets`` (``{"mrr@10": 0.8}``): the profile's metrics are added and each run gets a
    verdict per target at one-sided ``target_confidence`` by ``target_method``
    (:mod:`.targets`; ``report.target_verdicts``, shown by every renderer).
    ``judge_options``: as for ``evaluate`` (``relevance_level``, ``convention``...).

    Tests pair each two runs on the queries both were evaluated on (all labelled queries by
    default, where a query missing from a run scores 0).

    >>> rep = compare({"q1": ["d1"], "q2": ["d2"]},
    ...               {"a": {"q1": ["d1"], "q2": ["x"]}, "b": {"q1": ["d1"], "q2": ["d2"]}},
    ...               ["P@1"], stats=Statistics(test="t", ci="t"))
    >>> rep.value("a", "P@1"), rep.value("b", "P@1")
    (0.5, 1.0)
    """
    flat, judge_options = split_statistics(judge_options)
    shape, judge_options = split_statistics(judge_options, tuple(REPORT_CONTENTS))
    stray_keywords(judge_options, COMPARE)
    st = statistics("compare", stats, COMPARE.check(flat))
    kept = settled("compare", contents, COMPARE.check(shape), ReportContents(), "contents")
    curves, tie_range, hole_range = kept.curves, kept.tie_range, kept.hole_range
    drilldown = kept.drilldown

    texts: dict[str, str] = dict(queries) if queries else {}
    corpus = qrels.corpus if isinstance(qrels, Dataset) else None
    if isinstance(qrels, Dataset):
        texts = {**qrels.queries, **texts}
        dataset = dataset or qrels.name  # its labels taken by coerce_qrels (which warns)
    named = _name_runs(runs)
    if not named:
        raise InputError("compare needs at least one run")
    if baseline is not None and baseline not in named:
        near = closest(baseline, named)
        hint = f"; did you mean {near!r}?" if near else ""
        raise ParameterError(
            f"compare: baseline must be one of the runs ({', '.join(named)}), got "
            f"{baseline!r}{hint}"
        )
    checked = resolve_profile(profile, targets) if profile is not None or targets else None
    if not metrics and checked is None:
        raise ParameterError(
            "compare: metrics must be a non-empty list of metric names (or empty with a profile "
            "or targets), got []"
        )
    parsed = parse_metrics(with_profile_metrics(metrics, checked) if checked else metrics)
    qrels = coerce_qrels(qrels)

    evaluations: dict[str, Evaluation] = {}
    bounds: dict[str, tuple[Evaluation, Evaluation]] = {}
    ranges: dict[str, HoleRange] = {}
    if run_info is not None:
        check_run_info(dict(run_info))
    infos: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (run_info or {}).items()}
    shown: dict[str, Any] = {}
    hit_texts: dict[str, str] = {}
    spans = isinstance(qrels, SpanLabels)
    for name, run in named.items():
        if hasattr(run, "report_info") and hasattr(run, "run"):  # a runner's result
            infos.setdefault(name, {}).update(run.report_info())
            if spans:  # evidence spans judge every chunk, with its place in its document
                run = run.chunk_run()
            else:
                for (_, doc), text in run.hit_texts().items():
                    hit_texts.setdefault(doc, text)
                run = run.run
        if isinstance(run, Evaluation):
            evaluations[name] = run.evaluate(parsed)
            continue
        if isinstance(run, (str, Path)):  # read once, judged up to three times
            run = coerce_run(run)
        shown[name] = run
        evaluations[name] = Evaluation.from_judged(
            judge(qrels, run, options, name=name, **judge_options), parsed
        )
        counts = evaluations[name].counts
        if hole_range and counts.get("hits_retrieved", 0) > counts.get("hits_labelled", 0):
            ranges[name] = holes(evaluations[name])
        if tie_range and evaluations[name].counts.get("tied_documents") and not spans:
            # (span labels have no tie range: tied chunks change which chunk finds evidence
            # first; the ties note says so)
            bounds[name] = tie_bounds(qrels, run, parsed, options=options, **judge_options)

    report = build_report(evaluations, st, baseline=baseline, curves=curves)
    for name, (low, high) in bounds.items():
        for m in report.metrics:
            a, b = low.aggregate[m], high.aggregate[m]
            report.summary[name][m].update(tie_low=min(a, b), tie_high=max(a, b))
    for name, hr in ranges.items():
        for m in report.metrics:
            report.summary[name][m].update(as_relevant=hr.as_relevant[m],
                                           judged_only=hr.judged_only[m])  # fmt: skip
    if ranges:
        report.metadata["holes"] = {name: hr.to_dict() for name, hr in ranges.items()}
    if drilldown and shown:
        runs_shown = {n: coerce_run(r) for n, r in shown.items()}
        if isinstance(qrels, SpanLabels):
            opts = evaluations[next(iter(shown))].judged.options
            report.metadata["drilldown"] = span_drilldown(
                qrels,
                runs_shown,
                report.query_ids,
                drilldown,
                opts.overlap,
                opts.score_precision,
                opts.convention.placement,
            )
        else:
            report.metadata["drilldown"] = make_drilldown(
                qrels, runs_shown, report.query_ids, drilldown, corpus, hit_texts
            )
    report.queries = {q: str(texts[q]) for q in report.query_ids if q in texts}
    report.metadata.update(_metadata(evaluations, dataset, infos))
    if len(report.runs) > 1:
        report.metadata["power"] = _power(report, st.alpha, st.test)
    if checked is not None:
        given: dict[str, Any] = {"options": options} if options is not None else {}
        attach_verdicts(report, qrels, checked, confidence=target_confidence, stats=st,
                        method=target_method, **given,
                        **judge_options)  # fmt: skip
    return report


def _power(report: Report, alpha: float, test: str) -> dict[str, Any]:
    """Per metric averaged per query, the smallest difference the report's two-sided test
    detects with 80% power over its queries (the spread pooled over its pairs of runs)."""
    from .power_analysis import power_rows

    means = [m for m in report.metrics if report.aggregations.get(m) == "mean"]
    rows = power_rows(report, means, alpha=alpha / 2, test=test) if means else []
    return {
        "alpha": alpha,
        "power": 0.8,
        "n": len(report.query_ids),
        "mde": {r.metric: r.mde for r in rows},
        "span": {m: _span(m) for m in means},
    }


def _span(metric: str) -> float | None:
    """The widest difference a mean of the metric's declared per-query range allows
    (``None``: unbounded)."""
    try:
        r = parse_metric(metric).spec.value_range
    except InputError:
        return None
    return None if r.low is None or r.high is None else float(r.high - r.low)


def _name_runs(runs: Mapping[str, Any] | Sequence[Any], where: str = "compare") -> dict[str, Any]:
    """``{name: run}`` from a mapping or a list (named by file stem, else ``run1``...); a
    lone path, text or run is refused (never iterated by character or by query)."""
    if isinstance(runs, Mapping):
        return {str(k): v for k, v in runs.items()}
    if isinstance(runs, (str, bytes, Path)) or not isinstance(runs, (list, tuple)):
        raise ParameterError(
            f"{where}: runs must be {{name: run}} or a list of runs, got "
            f"{type(runs).__name__} {runs!r:.60}"
        )
    named: dict[str, Any] = {}
    for i, run in enumerate(runs, 1):
        name = Path(run).stem if isinstance(run, str | Path) else f"run{i}"
        if name in named:
            name = f"{name}_{i}"
        named[name] = run
    return named


def _metadata(
    evaluations: Mapping[str, Evaluation], dataset: str | None, infos: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    import scipy

    first = next(iter(evaluations.values()))
    opts = first.judged.options
    fresh = opts.freshness
    return {
        "dataset": dataset,
        "convention": opts.convention.name,
        "options": {
            "relevance_level": opts.relevance_level,
            "score_precision": opts.score_precision,
            "switches": opts.convention.switches(),
            **({"overlap": rule_text(opts.overlap)} if first.judged.chars is not None else {}),
            **(
                {"freshness": fresh if isinstance(fresh, str) else fresh.describe()}
                if fresh
                else {}
            ),
        },
        "versions": {
            "ranklens": __version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "python": platform.python_version(),
        },
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "run_info": infos,
    }
