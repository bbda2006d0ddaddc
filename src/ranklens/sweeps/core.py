"""``ranklens.sweep``: every configuration of a grid built, run over a labelled set's queries
and compared, with an honest choice of the best (:mod:`.select`), each configuration's
latency, build time, index size, failures and cost, and a Pareto frontier."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..capture import TRANSIENT, KeyLike
from ..capture.hits import check_key
from ..comparison import compare
from ..declared import ParameterError
from ..errors import InputError, RanklensWarning, closest
from ..evaluation import MetricsLike
from ..io import coerce_qrels, read_dataset
from ..judging import JudgeOptions, judge
from ..metrics import lower_is_better, parse_metrics
from ..model import Dataset
from .execute import Folder, Outcome, execute
from .grid import Config, configurations, parse_constraint, satisfies
from .lock import locked
from .params import SWEEP, check_tokens, resolve_costs
from .result import SweepResult
from .rows import all_failed, counts_line, matrix, nothing_chosen, row, unmatched
from .select import effects, fill_resampled, pairwise_pvalues, pareto, select, settle

MATRIX_LIMIT = 40
"""Configurations up to which the significance matrix (every pair) is computed."""


@SWEEP.checks
def sweep(
    build: Callable[..., Any],
    grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    dataset: Any,
    metrics: MetricsLike = ("ndcg@10", "recall@10", "mrr@10"),
    *,
    labels: Any = None,
    queries: str = "labelled",
    query_params: Sequence[str] = (),
    cache: str | Path | None = None,
    lock_timeout: float = 0.0,
    k: int | None = 10,
    key: KeyLike = "id",
    fetch_k: int | None = None,
    concurrency: int = 8,
    timeout: float | None = None,
    retries: int = 2,
    retry_on: type[BaseException] | tuple[type[BaseException], ...] = TRANSIENT,
    retry_failed: bool = True,
    progress: bool | None = False,
    baseline: str | Mapping[str, Any] | None = None,
    constraint: str | Callable[[Mapping[str, Any]], bool] | None = None,
    cost: float | Mapping[str, float] | Callable[[Mapping[str, Any]], float] | None = None,
    cost_per_token: float
    | Mapping[str, float]
    | Callable[[Mapping[str, Any]], float]
    | None = None,
    count_tokens: Callable[[str], int] | None = None,
    folds: int = 5,
    seed: int | None = 0,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    name: Callable[[dict[str, Any]], str] | None = None,
    config: Mapping[str, Any] | None = None,
    backend: str = "local",
    ray_options: Mapping[str, Any] | None = None,
    verbose: bool = False,
    **judge_options: Any,
) -> SweepResult:
    """Build, run and compare every configuration of ``grid``; choose honestly.

    ``build(**params)`` returns a retriever (a LlamaIndex, LangChain or Haystack object, a
    :class:`~ranklens.RetrieverAdapter` or a function, as :func:`ranklens.run_retriever` takes) for
    each configuration of ``grid``: a dict of lists (every combination) or a list of dicts.
    With ``query_params`` (parameters that only affect the query, such as a top-k),
    ``build`` is called once per combination of the other parameters, with those only, and
    returns a function of the query parameters returning the retriever: an index is built
    once and shared (``return lambda top_k: Retriever(index, top_k=top_k)``).

    ``dataset``: a :class:`~ranklens.Dataset` (or a path ``read_dataset`` reads) whose
    queries are asked; ``labels``: what the runs are scored against (default: the
    dataset), passed unchanged to :func:`ranklens.compare`, so any labels ``evaluate``
    takes work here. ``queries="labelled"`` (the default) asks only the queries the labels
    score (the others are counted and said: ``SweepResult.queries``); ``"all"`` asks
    every query of the dataset. ``metrics``: the first is the primary one (the Pareto
    view).

    Each configuration runs through the runner (``k``, ``key``, ``fetch_k``,
    ``concurrency``, ``timeout``, ``retries``, ``retry_on``, ``retry_failed``, ``progress``
    as in :func:`ranklens.run_retriever`); ``cache``: the sweep folder, one run log per
    configuration, so an interrupted sweep resumes where it stopped (see
    :mod:`ranklens.sweeps.execute`), held by one process at a time (a second waits up to
    ``lock_timeout`` seconds, then stops naming the first: :mod:`ranklens.sweeps.lock`);
    ``config``: facts naming what ``build`` closes over
    (``{"corpus": "v3"}``), kept in every log. ``backend="ray"``: each configuration's
    queries in shards on Ray actors, each actor building the retriever
    (``ray_options``: ``actors``, ``num_cpus``, ``address``...).

    Selection (:mod:`ranklens.sweeps.select`): per metric, ``folds``-fold cross-validation
    over queries (``seed``) for the held-out estimate; the chosen configuration tested
    against every other (``test``, ``correction``, ``alpha``, ``n_resamples``), the
    runner-up and ``baseline`` (a configuration's name or parameters; default: the
    first) among them; ``constraint``: ``"p95 <= 200"`` (fields:
    :data:`~ranklens.sweeps.grid.CONSTRAINT_FIELDS`) or a function of a configuration's
    row, which the chosen configuration must satisfy. ``cost``: the price of one
    retrieval call (a number, a mapping of configuration name to number, or a function of
    the parameters), ``cost_per_token`` with ``count_tokens(text)`` (in the same forms):
    shown per 1,000 queries (every attempt counted) with a quality-against-cost frontier;
    every price, given or returned, must be finite and at least 0, and is checked for
    every configuration before anything runs.

    ``name``: a function of the parameters naming a configuration (default
    ``"p=v, q=w"``). ``verbose``: a line per configuration as it finishes.
    ``judge_options``: as for ``evaluate`` (``relevance_level``, ``convention``...).

    Returns a :class:`~ranklens.sweeps.result.SweepResult`.
    """
    configs = configurations(grid, build, query_params, name)
    check = parse_constraint(constraint)
    base = _baseline(configs, baseline)
    if cost_per_token is not None and count_tokens is None:
        raise ParameterError(
            "sweep: cost_per_token needs count_tokens=, a function giving a text's number of "
            "tokens as the priced model counts them (e.g. lambda t: len(enc.encode(t)))"
        )
    if fetch_k is not None and k is not None and fetch_k < k:
        raise ParameterError(f"sweep: fetch_k must be at least k ({k}), got {fetch_k}")
    prices = (resolve_costs("cost", cost, configs), resolve_costs("cost_per_token",
              cost_per_token, configs))  # fmt: skip
    check_key(key, "sweep")
    check_scoring(metrics, judge_options)
    if not isinstance(dataset, Dataset):
        dataset = read_dataset(dataset)
    if not dataset.queries:
        raise InputError(f"dataset {dataset.name!r} has no query texts to ask the retrievers")
    asked, counts = asked_queries(dataset, labels, queries)
    priced_tokens = count_tokens is not None and cost_per_token is not None
    tokens = check_tokens(count_tokens, asked) if priced_tokens else None
    folder = Folder(cache)
    run_options = dict(
        k=k,
        key=key,
        fetch_k=fetch_k,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        retry_on=retry_on,
        retry_failed=retry_failed,
        progress=progress,
    )
    say = (lambda line: print(line, flush=True)) if verbose else None
    if say is not None and counts.get("unlabelled"):
        say(counts_line(counts))
    with locked(folder.path, lock_timeout, say):
        folder.load()
        outcomes = execute(
            configs, build, asked, folder, dict(config or {}), run_options, backend, ray_options,
            say,
        )  # fmt: skip
    result = assemble(
        outcomes,
        dataset if labels is None else labels,
        metrics,
        base,
        check,
        (prices[0], prices[1], tokens),
        dict(
            folds=folds,
            seed=seed,
            test=test,
            correction=correction,
            alpha=alpha,
            n_resamples=n_resamples,
        ),
        folder,
        judge_options,
        dataset,
    )
    result.queries = counts
    result.report.metadata["sweep"] = result.to_dict()
    return result


def check_scoring(metrics: MetricsLike, judge_options: Mapping[str, Any]) -> None:
    """The metric names and the scoring options (``compare``'s own keywords and the
    judging rules) checked before anything is built or asked: a misspelled metric or
    option after an hour of retrieval would waste the hour."""
    parse_metrics(metrics)
    table = getattr(compare, "__declared__", None)
    if table is not None:
        table.check({k: v for k, v in judge_options.items() if k in table}, "sweep")
    taken = set(inspect.signature(compare).parameters) | set(inspect.signature(judge).parameters)
    JudgeOptions.build(None, **{k: v for k, v in judge_options.items() if k not in taken})


def asked_queries(
    dataset: Dataset, labels: Any, which: str
) -> tuple[dict[str, str], dict[str, Any]]:
    """The queries a sweep asks (``which="labelled"``: those the labels score; ``"all"``:
    every query of the dataset) and the counts said of them: ``dataset`` (its queries),
    ``asked``, ``unlabelled`` (not asked: no labels), ``labelled_without_text`` (labelled
    queries the dataset has no text for: never asked, scored as missing)."""
    texts = {str(q): t for q, t in dataset.queries.items()}
    ids = labelled_ids(dataset if labels is None else labels)
    counts: dict[str, Any] = {"dataset": len(texts), "which": which}
    if ids is None:  # labels of a form whose queries cannot be listed here: ask them all
        counts.update(asked=len(texts), unlabelled=0, labelled_without_text=0)
        return texts, counts
    known = set(ids)
    asked = {q: t for q, t in texts.items() if q in known} if which == "labelled" else texts
    counts.update(
        asked=len(asked),
        unlabelled=sum(q not in known for q in texts) if which == "labelled" else 0,
        labelled_without_text=sum(q not in texts for q in known),
    )
    if not asked:
        example = next(iter(sorted(known)), None)
        raise InputError(
            f"dataset {dataset.name!r}: none of its {len(texts):,} queries has a label "
            f"(the labels name {len(known):,} queries"
            + (f", e.g. {example!r}" if example is not None else "")
            + "): nothing to ask. Are the labels those of this dataset (the same query ids)?"
        )
    return asked, counts


def labelled_ids(labels: Any) -> list[str] | None:
    """The queries ``labels`` score (a Dataset, Qrels, span labels, a dict, a path...), or
    None when they cannot be listed without scoring."""
    for obj in (getattr(labels, "qrels", None), labels):
        ids = getattr(obj, "query_ids", None)
        if ids is not None:
            return [str(q) for q in ids]
    if isinstance(labels, Mapping):
        return [str(q) for q in labels]
    try:
        return [str(q) for q in coerce_qrels(labels).query_ids]
    except (InputError, OSError, TypeError, ValueError):  # compare names the fault
        return None


def _baseline(configs: list[Config], baseline: Any) -> str:
    if baseline is None:
        return configs[0].name
    for c in configs:
        if (isinstance(baseline, str) and c.name == baseline) or (
            isinstance(baseline, Mapping) and c.params == dict(baseline)
        ):
            return c.name
    raise ParameterError(
        f"sweep: baseline must be a configuration's name or parameters (e.g. "
        f"{configs[0].name!r}), got {baseline!r}: it is not a configuration of the grid"
        + (
            f"; did you mean {near!r}?"
            if isinstance(baseline, str) and (near := closest(baseline, [c.name for c in configs]))
            else ""
        )
    )


def assemble(
    outcomes: list[Outcome],
    labels: Any,
    metrics: MetricsLike,
    baseline: str,
    check: Any,
    costs: tuple,
    settings: dict[str, Any],
    folder: Folder,
    judge_options: dict[str, Any],
    dataset: Dataset,
) -> SweepResult:
    """The comparison of the measured configurations, the selection per metric, the rows."""
    import warnings

    measured = [o for o in outcomes if o.result is not None and any(r.ok for r in o.result.records)]
    for o in outcomes:
        if o.result is not None and o not in measured:
            o.build.setdefault("error", all_failed(o))
    if not measured:
        errors = "; ".join(
            f"{o.config.name}: {o.error['type']}: {o.error['message']}" for o in outcomes[:5]
        )
        raise InputError(f"no configuration of the sweep could be measured ({errors})")
    names = [o.config.name for o in measured]
    base = baseline if baseline in names else names[0]
    if isinstance(labels, Dataset) and labels is dataset:
        labels = dataset
    report = compare(
        labels,
        {o.config.name: o.result for o in measured},
        metrics,
        baseline=base if len(names) > 1 else None,
        test=settings["test"],
        correction=settings["correction"],
        alpha=settings["alpha"],
        n_resamples=settings["n_resamples"],
        seed=settings["seed"],
        **judge_options,
    )
    rows = [row(o, report, costs) for o in outcomes]
    by_name = {r["name"]: r for r in rows}
    for o in measured:
        note = unmatched(o, report, labels)
        if note:
            by_name[o.config.name].update(status="unmatched", message=note)
            warnings.warn(note, RanklensWarning, stacklevel=3)
    for r in rows:
        r["feasible"] = r["status"] == "ok" and (check is None or satisfies(check, r))
    feasible = np.array([by_name[n]["feasible"] for n in names])
    selections, effect_rows, matrices = {}, {}, {}
    keys = list(dict.fromkeys(k for o in outcomes for k in o.config.params))
    values, undefined = {}, {}
    for m in report.metrics:  # a query a metric is undefined on for some configuration
        v = np.vstack([report.per_query[n][m] for n in names])  # is left out, and counted
        kept = np.isfinite(v).all(axis=0)
        values[m], undefined[m] = v[:, kept], int((~kept).sum())
    # every resampling of the sweep's own analysis in two batches: the paired tests of
    # every two configurations and of the held-out values against the baseline (all
    # metrics), then the intervals
    test_settings = {k: settings[k] for k in ("test", "correction", "alpha", "n_resamples", "seed")}
    for m, v in values.items():
        selections[m] = select(
            v,
            names,
            feasible,
            names.index(base),
            resample=False,
            lower_is_better=lower_is_better(m),
            defer_tests=True,
            **settings,
        )
        if undefined[m]:
            selections[m]["queries_left_out"] = undefined[m]
    pvalues: dict[str, np.ndarray] = {}
    if len(names) <= MATRIX_LIMIT:
        held = [
            (s["cv_values"], names.index(s["baseline"])) if "_held_out_diffs" in s else None
            for s in selections.values()
        ]
        pairs, held_p = pairwise_pvalues(
            list(values.values()), settings["test"], settings["n_resamples"], settings["seed"], held
        )
        pvalues = dict(zip(values, pairs))
        for s, p in zip(selections.values(), held_p):
            if p is not None:
                s["_held_out_pvalue"] = p
    ok = [i for i, n in enumerate(names) if by_name[n]["status"] == "ok"]
    for m, v in values.items():
        if selections[m].get("chosen") is not None:
            settle(selections[m], v, names, pvalues.get(m), **test_settings)
        effect_rows[m] = effects(
            v[ok],
            [measured[i].config.params for i in ok],
            keys,
            [names[i] for i in ok],
            resample=False,
            lower_is_better=lower_is_better(m),
        )
        if len(ok) > 1 and m in pvalues:
            matrices[m] = matrix(
                v[ok], pvalues[m][np.ix_(ok, ok)], [names[i] for i in ok], settings,
                lower_is_better=lower_is_better(m),
            )  # fmt: skip
    fill_resampled(
        list(selections.values()),
        [r for rs in effect_rows.values() for r in rs],
        test=settings["test"],
        n_resamples=settings["n_resamples"],
        seed=settings["seed"],
    )
    primary = report.metrics[0]
    quality = [
        by_name[r["name"]]["metrics"].get(primary, {}).get("value", math.nan)
        if r["status"] == "ok"
        else math.nan
        for r in rows
    ]
    if lower_is_better(primary):  # the frontier wants quality high: a rate of the unwanted
        quality = [-q for q in quality]
    latency = [r["p95"] if r["p95"] is not None else math.nan for r in rows]
    for r, front in zip(rows, pareto(quality, latency)):
        r["pareto"] = front
    if any(r["cost"] is not None for r in rows):
        spend = [r["cost"] if r["cost"] is not None else math.nan for r in rows]
        for r, front in zip(rows, pareto(quality, spend)):
            r["pareto_cost"] = front
    for sel in selections.values():  # unmeasured quality is never "tied" with the best
        if sel.get("tied"):
            sel["tied"] = [n for n in sel["tied"] if by_name[n]["status"] == "ok"]
    tied = set(selections[primary].get("tied") or [])
    for r in rows:
        r["tied"] = r["name"] in tied
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
            sel["matrix_note"] = (
                f"no significance matrix: {len(names)} measured configurations are more than "
                f"{MATRIX_LIMIT} ({len(names) * (len(names) - 1) // 2:,} pairs); the chosen "
                "one is tested against every other"
            )
    reason = nothing_chosen(rows, selections[primary], result.constraint)
    if reason is not None:
        for sel in selections.values():
            if sel.get("chosen") is None:
                sel["reason"] = nothing_chosen(rows, sel, result.constraint)
    report.metadata["sweep"] = result.to_dict()
    return result
