"""``ranklens.sweep``: every configuration of a grid built, run over a labelled set's queries
and compared, with an honest choice of the best (:mod:`.select`), each configuration's
latency, build time, index size, failures and cost, and a Pareto frontier."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..capture import check_key
from ..comparison import compare
from ..declared import ParameterError
from ..errors import InputError, closest
from ..evaluation import MetricsLike
from ..io import coerce_qrels, read_dataset
from ..judging import JudgeOptions, judge
from ..metrics import parse_metrics
from ..model import Dataset
from ..settings import Calling, Statistics
from .assemble import assemble
from .execute import execute
from .folder import Folder
from .grid import Config, configurations, parse_constraint
from .groups import Costs, Execution, Naming, Retrieving, Selection, Settings, grouped
from .lock import locked
from .params import SWEEP, check_tokens, resolve_costs
from .result import SweepResult
from .rows import Prices, counts_line


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
    verbose: bool = False,
    stats: Statistics | None = None,
    calls: Calling | None = None,
    selection: Selection | None = None,
    costs: Costs | None = None,
    execution: Execution | None = None,
    retrieving: Retrieving | None = None,
    naming: Naming | None = None,
    **options: Any,
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

    Each configuration runs through the runner, its answers read as
    ``retrieving=Retrieving(k=10, key="id", fetch_k=None)`` says (as in
    :func:`ranklens.run_retriever`), with ``calls=ranklens.Calling(...)``: ``concurrency``,
    ``timeout``, ``retries``, ``retry_on``, ``backoff``, ``progress`` (without ``calls=``:
    ``Calling(progress=False)``, no bar; a ``Calling`` of your own keeps its
    ``progress=None``, a bar when stderr is a terminal) and ``cache``, the sweep folder:
    one run log per configuration, so an interrupted sweep resumes where it stopped (see
    :mod:`ranklens.sweeps.execute`), held by one process at a time
    (:mod:`ranklens.sweeps.lock`). ``execution=Execution(...)``: ``lock_timeout``
    (seconds a second process waits for the folder, then stops naming the first),
    ``retry_failed`` (failed queries asked again on resuming), ``backend="ray"`` (the
    configurations in parallel, one Ray task each, a ``query_params`` build made once in the
    cluster and shared, a killed worker's configuration resumed from its log:
    :mod:`ranklens.sweeps.on_ray`; ``ray_options``: ``num_cpus`` per configuration,
    ``actors`` (at most that many at once), ``max_retries``, ``address``, ``num_gpus``).


    Selection (:mod:`ranklens.sweeps.select`), ``selection=Selection(...)``: per metric,
    ``folds``-fold cross-validation over queries for the held-out estimate; the chosen
    configuration tested against every other, the runner-up and ``baseline`` (a
    configuration's name or parameters; default: the first) among them;
    ``constraint``: ``"p95 <= 200"`` (fields: :data:`~ranklens.sweeps.grid.CONSTRAINT_FIELDS`)
    or a function of a configuration's row (a dict), which the chosen configuration must
    satisfy. ``stats=ranklens.Statistics(...)``: the tests and intervals (``test``,
    ``correction``, ``alpha``, ``n_resamples``, ``ci``, ``confidence``, ``seed``, which
    also deals the folds). ``costs=Costs(...)``: ``cost``, the price of one retrieval call
    (a number, a mapping of configuration name to number, or a function of the
    parameters), ``cost_per_token`` with ``count_tokens(text)`` (in the same forms): shown
    per 1,000 queries (every attempt counted) with a quality-against-cost frontier; every
    price, given or returned, must be finite and at least 0, and is checked for every
    configuration before anything runs.

    The flat keywords of these settings objects (``cache=``, ``concurrency=``,
    ``n_resamples=``, ``folds=``, ``constraint=``, ``cost=``, ``backend=``, ``k=``,
    ``key=``, ``fetch_k=``, ``name=``, ``config=``...) still work
    for one release, with a ``DeprecationWarning`` showing the new spelling; a flat
    keyword beside its settings object is a ``ParameterError`` naming both.

    ``naming=Naming(name=..., config=...)``: ``name``, a function of the parameters naming
    a configuration (default ``"p=v, q=w"``); ``config``, facts naming what ``build``
    closes over (``{"corpus": "v3"}``), kept in every log. ``verbose``: a line per
    configuration as it finishes.
    ``options``: the scoring options of ``evaluate`` (``relevance_level``,
    ``convention``...).

    Returns a :class:`~ranklens.sweeps.result.SweepResult`.
    """
    given = dict(stats=stats, calls=calls, selection=selection, costs=costs,
                 execution=execution, retrieving=retrieving, naming=naming)  # fmt: skip
    settings = grouped("sweep", given, options)
    return run_sweep(
        build, grid, dataset, metrics, labels=labels, queries=queries,
        query_params=query_params, verbose=verbose, settings=settings, judge_options=options,
    )  # fmt: skip


def run_sweep(
    build: Callable[..., Any],
    grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    dataset: Any,
    metrics: MetricsLike,
    *,
    labels: Any,
    queries: str,
    query_params: Sequence[str],
    verbose: bool,
    settings: Settings,
    judge_options: dict[str, Any],
) -> SweepResult:
    """:func:`sweep` once its settings objects are settled."""
    stats, calls, selection, costs, execution, retrieving, naming = settings
    k, key, fetch_k = retrieving.k, retrieving.key, retrieving.fetch_k
    name, config = naming.name, naming.config
    configs = configurations(grid, build, query_params, name)
    check = parse_constraint(selection.constraint)
    base = _baseline(configs, selection.baseline)
    if costs.cost_per_token is not None and costs.count_tokens is None:
        raise ParameterError(
            "sweep: cost_per_token needs count_tokens=, a function giving a text's number of "
            "tokens as the priced model counts them (e.g. lambda t: len(enc.encode(t)))"
        )
    if fetch_k is not None and k is not None and fetch_k < k:
        raise ParameterError(f"sweep: fetch_k must be at least k ({k}), got {fetch_k}")
    per_call = resolve_costs("cost", costs.cost, configs)
    per_token = resolve_costs("cost_per_token", costs.cost_per_token, configs)
    check_key(key, "sweep")
    check_scoring(metrics, judge_options)
    if not isinstance(dataset, Dataset):
        dataset = read_dataset(dataset)
    if not dataset.queries:
        raise InputError(f"dataset {dataset.name!r} has no query texts to ask the retrievers")
    asked, counts = asked_queries(dataset, labels, queries)
    tokens = (
        check_tokens(costs.count_tokens, asked)
        if costs.count_tokens is not None and costs.cost_per_token is not None
        else None
    )
    folder = Folder(calls.cache)
    run_options = {"k": k, "key": key, "fetch_k": fetch_k, "calls": replace(calls, cache=None),
                   "retry_failed": execution.retry_failed}  # fmt: skip
    say = (lambda line: print(line, flush=True)) if verbose else None
    if say is not None and counts.get("unlabelled"):
        say(counts_line(counts))
    with locked(folder.path, execution.lock_timeout, say):
        folder.load()
        outcomes = execute(
            configs, build, asked, folder, dict(config or {}), run_options, execution, say
        )
    result = assemble(
        outcomes,
        dataset if labels is None else labels,
        metrics,
        base,
        check,
        Prices(per_call, per_token, tokens),
        stats,
        selection.folds,
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
