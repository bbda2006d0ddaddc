"""Fusion settings tuned honestly: :func:`tune_fusion` picks weights (or a method's
parameter) by cross-validation over query folds and reports the held-out estimate, not
the in-sample best.

For ``F`` folds (queries shuffled with ``seed``), each fold's queries are fused with the
setting that scores best on the other folds' queries (supervised methods are also
trained on those queries only); every query is thus scored by a setting chosen without
it. The mean of those held-out values is the cross-validated estimate (Stone 1974;
Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, §7.10). The
setting reported for use is the best on all queries; its in-sample mean is optimistic
(the maximum of many noisy means), and the gap between the two is shown.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..comparison import stats
from ..comparison.settings_use import statistics
from ..declared import ParameterError
from ..errors import InputError
from ..evaluation import evaluate
from ..io import coerce_qrels
from ..metrics import lower_is_better
from ..model import Qrels, Run
from ..settings import Statistics
from .core import fused_scores, method_name, named_runs
from .frameworks import MODES
from .options import FUSE, TUNE_FUSION, WEIGHT_GRID, check_params
from .supervised import SUPERVISED
from .table import RunTable, build_table

WEIGHTED = frozenset({
    "wsum", "wmnz", "mixed", "w_bordafuse", "w_condorcet", "langchain",
    "llamaindex:relative_score", "llamaindex:dist_based_score", "haystack:merge",
    "haystack:reciprocal_rank_fusion",
})  # fmt: skip
"""Methods whose runs carry weights (tuned on the simplex by default)."""

PARAMETER_GRIDS: dict[str, dict[str, list[Any]]] = {
    "rrf": {"k": list(range(10, 101, 10))},
    "rbc": {"phi": [round(0.1 * i, 1) for i in range(1, 10)]},
    "gmnz": {"gamma": [round(0.1 * i, 1) for i in range(1, 11)] + [1.5, 2.0]},
    "logn_isr": {"sigma": [0.001, 0.01, 0.1, 1.0]},
    "probfuse": {"n_segments": [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50]},
    "slidefuse": {"w": [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20]},
}
"""Default grids of the methods with a parameter (ranx's ranges, thinned for speed)."""


@WEIGHT_GRID.checks
def weight_grid(n_runs: int, step: float = 0.1) -> list[tuple[float, ...]]:
    """Every weight vector of ``n_runs`` non-negative multiples of ``step`` summing to 1
    (ranx's ``optimize_fusion`` grid): 11 for two runs at 0.1, 66 for three."""
    m = round(1 / step)
    if m < 1 or abs(m * step - 1) > 1e-9:
        raise ParameterError(f"weight_grid: step must be 1/n for a whole n >= 1, got {step!r}")
    out = []
    for c in itertools.product(range(m + 1), repeat=n_runs - 1):
        if sum(c) <= m:
            out.append(tuple(round(x / m, 10) for x in (*c, m - sum(c))))
    return out


def _settings(method: str, grid: Any, n_runs: int) -> list[dict[str, Any]]:
    """The grid as a list of settings (dicts of ``fuse`` keyword arguments)."""
    if grid is None:
        if method in WEIGHTED:
            grid = {"weights": weight_grid(n_runs)}
        elif method in PARAMETER_GRIDS:
            grid = PARAMETER_GRIDS[method]
        else:
            raise InputError(f"{method} has no weights or parameter to tune; give grid=")
    if isinstance(grid, Mapping):
        keys = list(grid)
        for key, values in grid.items():  # a text of values would be read by character
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise ParameterError(
                    f"tune_fusion: grid[{key!r}] must be a list of values, got {values!r:.80}"
                )
        grid = [dict(zip(keys, combo)) for combo in itertools.product(*grid.values())]
    elif isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
        raise ParameterError(
            "tune_fusion: grid must be {parameter: values}, a list of settings or None, got "
            f"{grid!r:.80}"
        )
    settings = [dict(g) if isinstance(g, Mapping) else g for g in grid]
    if not settings:
        raise ParameterError("tune_fusion: grid must hold at least one setting, got none")
    for g in settings:
        if not isinstance(g, dict):
            raise ParameterError(f"tune_fusion: each setting must be a dict, got {g!r:.80}")
        if "weights" in g:
            g["weights"] = FUSE.value("weights", g["weights"], "tune_fusion")
            g["weights"] = tuple(float(w) for w in g["weights"])
        if "norm" in g:
            FUSE.value("norm", g["norm"], "tune_fusion")
        check_params(method, {k: v for k, v in g.items() if k not in ("weights", "norm")},
                     "tune_fusion")  # fmt: skip
    return settings


@dataclass
class FusionTuning:
    """What :func:`tune_fusion` found (see the module docstring).

    ``settings``: the grid, in order; ``grid_values``: each setting's mean over all
    labelled queries; ``chosen``: the best setting on all queries (use it from now on);
    ``in_sample_best``: its mean (optimistic); ``fold_choices``: each fold's choice;
    ``cv_estimate`` (with ``cv_interval``, 95% bootstrap): the mean held-out value;
    ``singles``: each run's mean; ``best_single`` the highest; ``difference``,
    ``difference_interval`` and ``p_value`` (``test``, two-sided, paired): held-out fused
    minus the best single run, per query; ``per_query``: ``{"cv": values, run: values}``
    over ``query_ids``; ``cv_run``: every query fused with its fold's choice (a run to
    ``compare`` honestly); ``fused``: all queries fused with ``chosen``.
    """

    method: str
    norm: str | None
    metric: str
    names: list[str]
    settings: list[dict[str, Any]]
    grid_values: np.ndarray
    chosen: dict[str, Any]
    in_sample_best: float
    fold_choices: list[dict[str, Any]]
    cv_estimate: float
    cv_interval: tuple[float, float]
    singles: dict[str, float]
    best_single: str
    difference: float
    difference_interval: tuple[float, float]
    p_value: float
    test: str
    folds: int
    seed: int | None
    query_ids: list[str]
    per_query: dict[str, np.ndarray]
    cv_run: Run = field(repr=False)
    fused: Run = field(repr=False)
    runs: list[Run] = field(repr=False, default_factory=list)

    def report(self, labels: Any, metrics: Any = None, **compare_options: Any) -> Any:
        """``compare`` of the single runs and the cross-validated fused run
        (``cv_run``) on ``labels`` (the ones tuned on), ``metrics`` (default: the
        tuned metric), with this tuning in ``metadata["fusion"]`` (the HTML report draws
        its grid)."""
        from ..comparison import compare

        runs = {**dict(zip(self.names, self.runs)), self.cv_run.name: self.cv_run}
        report = compare(labels, runs, metrics or [self.metric], **compare_options)
        report.metadata["fusion"] = self.to_dict()
        return report

    @property
    def weights(self) -> dict[str, float] | None:
        """The chosen weights by run name (None when the grid has no weights)."""
        w = self.chosen.get("weights")
        return None if w is None else dict(zip(self.names, w))

    @property
    def optimism(self) -> float:
        """In-sample best minus the cross-validated estimate."""
        return self.in_sample_best - self.cv_estimate

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready); :meth:`Report` metadata carries it as ``fusion``."""
        return {
            "method": self.method, "norm": self.norm, "metric": self.metric,
            "names": list(self.names), "folds": self.folds, "seed": self.seed,
            "settings": [_plain(s) for s in self.settings],
            "grid_values": [float(v) for v in self.grid_values],
            "chosen": _plain(self.chosen), "in_sample_best": self.in_sample_best,
            "fold_choices": [_plain(s) for s in self.fold_choices],
            "cv_estimate": self.cv_estimate, "cv_interval": list(self.cv_interval),
            "singles": dict(self.singles), "best_single": self.best_single,
            "difference": self.difference,
            "difference_interval": list(self.difference_interval),
            "p_value": self.p_value, "test": self.test, "n_queries": len(self.query_ids),
        }  # fmt: skip

    def __str__(self) -> str:
        from ..comparison.renderers import render_text

        return render_text("fusion_text", self.to_dict())

    def _repr_html_(self) -> str:
        from ..comparison.renderers import render_text

        return render_text("fusion_html", self.to_dict())


def _plain(setting: Mapping[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in setting.items()}


def best_setting(means: np.ndarray) -> Any:
    """The first setting whose mean is the highest, along the last axis (means within
    1e-12 of the highest count as equal, so rounding in a sum never decides between tied
    settings): an int for one row of means, an array of indices for a stack of them."""
    m = np.asarray(means, dtype=np.float64)
    first = np.argmax(m >= m.max(axis=-1, keepdims=True) - 1e-12, axis=-1)
    return int(first) if m.ndim == 1 else first


def query_folds(n: int, folds: int, seed: int | None) -> np.ndarray:
    """Each of ``n`` queries' fold: a seeded shuffle dealt round-robin (sizes differ by at
    most 1)."""
    if not 2 <= folds <= n:
        raise InputError(f"folds must lie between 2 and the {n} labelled queries, got {folds}")
    fold = np.empty(n, dtype=np.int64)
    fold[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    return fold


def held_out(values: Any, fold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cross-validated selection: for each fold ``f``, the setting with the best mean on
    the other folds' queries (:func:`best_setting`) scores fold ``f``'s queries.

    ``values``: per-query values ``(..., settings, queries)`` (leading axes are
    independent problems, e.g. simulated data sets), or one such array per fold (settings
    trained on that fold's training queries). Returns each fold's choice ``(..., folds)``
    and every query's held-out value ``(..., queries)``, whose mean is the
    cross-validated estimate (Stone 1974; Hastie, Tibshirani & Friedman, §7.10)."""
    n_folds = int(fold.max()) + 1
    per = list(values) if isinstance(values, (list, tuple)) else [values] * n_folds
    first = np.asarray(per[0])
    cv = np.empty(first.shape[:-2] + first.shape[-1:], dtype=np.float64)
    choices = []
    for f in range(n_folds):
        v = np.asarray(per[f], dtype=np.float64)
        test = fold == f
        c = np.asarray(best_setting(v[..., ~test].mean(axis=-1)))
        choices.append(c)
        scored = np.take_along_axis(v[..., test], c[..., None, None], axis=-2)
        cv[..., test] = scored[..., 0, :]
    return np.stack(choices, axis=-1), cv


FLAT_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<not given>"})()
"""The default of ``tune_fusion``'s deprecated positional ``seed`` (now ``stats.seed``)."""

FLAT_STATISTICS = ("test", "n_resamples")
"""``tune_fusion``'s flat statistics keywords besides ``seed`` (deprecated)."""


@TUNE_FUSION.checks
def tune_fusion(
    labels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    method: str = "wsum",
    metric: str = "ndcg@10",
    grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]] | None = None,
    folds: int = 5,
    seed: Any = FLAT_UNSET,
    *,
    norm: str | None = None,
    stats: Statistics | None = None,
    **judge_options: Any,
) -> FusionTuning:
    """Tune ``method``'s weights or parameter by ``folds``-fold cross-validation over the
    queries of ``labels`` (anything ``evaluate`` takes, or a Dataset) on ``metric``.

    ``grid``: ``{parameter: values}`` (all combinations), a list of settings, or None for
    the default: weights on the simplex in steps of 0.1 (:func:`weight_grid`) for
    weighted methods, :data:`PARAMETER_GRIDS` otherwise. A setting may hold ``norm``.
    ``stats=Statistics(test=..., n_resamples=..., seed=..., confidence=...)``
    (:class:`~ranklens.Statistics`): ``test`` is the paired test of held-out fused against
    the best single run (as in ``compare``), ``n_resamples`` its resamples and the
    bootstrap intervals', ``confidence`` their level, ``seed`` the folds' shuffle and the
    resampling. ``seed``, ``test`` and ``n_resamples`` given flat
    (``tune_fusion(labels, runs, seed=1)``) still work for one release, with a
    ``DeprecationWarning`` showing the new spelling; flat keywords beside ``stats=`` are an
    error naming both. ``judge_options``: as for ``evaluate``.

    >>> labels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> x = {"q1": {"a": 2, "z": 1}, "q2": {"z": 2, "b": 1}, "q3": {"c": 2, "z": 1}}
    >>> y = {"q1": {"z": 2, "a": 1}, "q2": {"z": 2, "b": 1}, "q3": {"z": 2, "c": 1}}
    >>> t = tune_fusion(labels, {"x": x, "y": y}, "wsum", "P@1", folds=3, norm="min-max")
    >>> t.weights["x"] >= 0.5, t.cv_estimate <= t.in_sample_best
    (True, True)
    """
    flat = {n: judge_options.pop(n) for n in FLAT_STATISTICS if n in judge_options}
    if seed is not FLAT_UNSET:
        flat["seed"] = seed
    chosen_stats = statistics("tune_fusion", stats, TUNE_FUSION.check(flat))
    return _tune(labels, runs, method, metric, grid, folds, norm, chosen_stats, judge_options)


def _tune(
    labels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    method: str,
    metric: str,
    grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]] | None,
    folds: int,
    norm: str | None,
    st: Statistics,
    judge_options: Mapping[str, Any],
) -> FusionTuning:
    """:func:`tune_fusion` once its statistics are settled."""
    seed, test, n_resamples, level = st.seed, st.test, st.n_resamples, st.confidence
    low = method_name(method)
    if lower_is_better(metric):
        raise InputError(
            f"tune_fusion: {metric!r} is a rate of something unwanted (lower is better), and "
            "tuning chooses the setting with the highest mean; tune on a quality metric "
            "(ndcg@10, recall@k, ...) and compare the rate with ranklens.compare"
        )
    the_runs, names = named_runs(runs, "tune_fusion")
    qrels = coerce_qrels(labels)
    settings = _settings(low, grid, len(the_runs))
    table = build_table(the_runs, names)
    singles = {n: evaluate(qrels, r, [metric], **judge_options) for n, r in zip(names, the_runs)}
    query_ids = list(next(iter(singles.values())).query_ids)
    fold = query_folds(len(query_ids), folds, seed)

    def scores(setting: dict[str, Any], train_labels: Any) -> np.ndarray:
        s = dict(setting)
        return fused_scores(table, the_runs, low, s.pop("norm", norm), s.pop("weights", None),
                            s, train_labels)  # fmt: skip

    def values(fused: np.ndarray) -> np.ndarray:
        ev = evaluate(qrels, table.to_run(fused, low), [metric], **judge_options)
        if list(ev.query_ids) != query_ids:
            raise InputError("the fused run was evaluated on other queries than the runs")
        return np.asarray(ev.per_query[ev.metrics[0].name], dtype=np.float64)

    ids = np.asarray(query_ids, dtype=object)
    supervised = low in SUPERVISED and low not in MODES
    if supervised:  # trained per fold on the other folds' queries
        per_fold = [
            np.array([values(scores(s, qrels.subset(ids[fold != f].tolist()))) for s in settings])
            for f in range(folds)
        ]
        full = np.array([values(scores(s, qrels)) for s in settings])
    else:
        full = np.array([values(scores(s, None)) for s in settings])
        per_fold = [full] * folds
    chosen, cv = held_out(per_fold, fold)
    choice = [int(c) for c in chosen]
    grid_values = full.mean(axis=1)
    best = best_setting(grid_values)
    cv_run = _cv_run(table, fold, choice, settings, scores, qrels, ids, supervised, low)
    single_values = {n: np.asarray(ev.per_query[ev.metrics[0].name], np.float64)
                     for n, ev in singles.items()}  # fmt: skip
    means = {n: float(v.mean()) for n, v in single_values.items()}
    best_single = max(names, key=lambda n: means[n])
    diffs = cv - single_values[best_single]
    p = float(stats.paired_test(diffs[:, None], test, n_resamples, seed)[0])
    d_lo, d_hi = stats.bootstrap_interval(diffs[:, None], level, n_resamples, seed)
    c_lo, c_hi = stats.bootstrap_interval(cv[:, None], level, n_resamples, seed)
    fused = table.to_run(scores(settings[best], qrels if supervised else None), low)
    return FusionTuning(
        method=low, norm=norm, metric=metric, names=names, settings=settings,
        grid_values=grid_values, chosen=settings[best], in_sample_best=float(grid_values[best]),
        fold_choices=[settings[c] for c in choice], cv_estimate=float(cv.mean()),
        cv_interval=(float(c_lo[0]), float(c_hi[0])), singles=means, best_single=best_single,
        difference=float(diffs.mean()), difference_interval=(float(d_lo[0]), float(d_hi[0])),
        p_value=p, test=stats.test_name(test), folds=folds, seed=seed, query_ids=query_ids,
        per_query={"cv": cv, **single_values}, cv_run=cv_run, fused=fused, runs=the_runs,
    )  # fmt: skip


def _cv_run(
    table: RunTable,
    fold: np.ndarray,
    choice: list[int],
    settings: list[dict[str, Any]],
    scores: Callable[[dict[str, Any], Any], np.ndarray],
    qrels: Qrels,
    ids: np.ndarray,
    supervised: bool,
    low: str,
) -> Run:
    """Every query's fused ranking under its fold's choice, as one run."""
    out = np.zeros(len(table.q))
    q_index = {q: i for i, q in enumerate(table.query_ids.tolist())}
    row_fold = np.full(len(table.query_ids), -1)
    for q, f in zip(ids.tolist(), fold.tolist()):
        if q in q_index:
            row_fold[q_index[q]] = f
    row_fold = row_fold[table.q]
    for f in sorted(set(range(len(choice)))):
        train = qrels.subset(ids[fold != f].tolist()) if supervised else None
        rows = row_fold == f
        if rows.any():
            out[rows] = scores(settings[choice[f]], train)[rows]
    keep = np.flatnonzero(row_fold >= 0)  # queries without labels are left out
    return table.to_run(out[keep], f"{low} (cv)", rows=keep)
