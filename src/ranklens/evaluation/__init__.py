"""The evaluation floor: ``ranklens.evaluate`` judges a (qrels, run) pair once, then
computes any metrics on it; :class:`Evaluation` holds per-query values and aggregates."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..declared import (
    LEVEL,
    Declared,
    Range,
    UnknownParameterError,
    choice,
    data,
    extend,
    mapping,
    names,
    number,
    renamed_option,
)
from ..errors import InputError, closest, require
from ..judging import Judged, JudgeOptions, counts_notes, judge
from ..judging.freshness_rules import FreshnessRule, get_freshness_rule
from ..judging.options import JUDGING, check_judging, check_options
from ..metrics import Metric, parse_metrics
from ..metrics.trec_forms import METRICS
from ..model import QrelsLike, RunLike
from ..text import visible
from .options import EVALUATE as SCORING

MetricsLike = str | Metric | Sequence[str | Metric]

MIN_GEO_MEAN = 1e-5
"""Floor applied to per-query values before a geometric mean (trec_eval's gm_map)."""


def aggregate(values: np.ndarray, how: str) -> float:
    """Combine per-query values: ``mean``, ``sum`` (trec_eval's counts) or ``gmean``
    (``exp(mean(log(max(x, 1e-5))))``, trec_eval's gm_map).

    Sums run one query after another in query order, as trec_eval's do (numpy's own sums
    are pairwise, which can move the last bit and so a 4-decimal rounding tie)."""
    if len(values) == 0:
        return 0.0
    if how == "sum":
        return _running_sum(values)
    if how == "gmean":
        logs = np.log(np.maximum(values, MIN_GEO_MEAN))
        return float(np.exp(_running_sum(logs) / len(values)))
    return _running_sum(values) / len(values)


def _running_sum(values: np.ndarray) -> float:
    """``values[0] + values[1] + ...`` left to right (``np.cumsum`` adds sequentially)."""
    return float(np.cumsum(values, dtype=np.float64)[-1])


class Values(dict[str, float]):
    """A ``{metric: value}`` dict that shows its values rounded to 10 decimals (no
    ``0.30000000000000004``); the values themselves are exact."""

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {_shown(v)}" for k, v in self.items()) + "}"


def _rule_text(rule: FreshnessRule | str | None) -> str | None:
    """The freshness rule judging applied, described (judging keeps the rule itself)."""
    return None if rule is None else get_freshness_rule(rule).describe()


def _shown(v: Any) -> str:
    return repr(round(v, 10)) if isinstance(v, float) and math.isfinite(v) else repr(v)


class Evaluation:
    """Per-query values and aggregates of several metrics on one judged pair.

    * ``query_ids``: the evaluated queries (sorted by id);
    * ``per_query[name]``: an array aligned with ``query_ids``;
    * ``aggregate[name]``: the mean over queries (the sum for counts such as ``num_rel``,
      the geometric mean for ``gm_map``, as trec_eval reports them);
    * ``counts``: queries evaluated, missing (scored 0 or skipped), ignored (in the run but
      unlabelled), duplicates dropped;
    * ``judged``: the judged arrays, so ``evaluation.evaluate(["ndcg@20"])`` costs no
      second judging;
    * ``verdicts``: with ``ranklens.evaluate(..., profile=...)``, one verdict per target
      (met, missed or not yet known, with its confidence bounds), and ``profile``.
    """

    verdicts: tuple[Any, ...] = ()  # comparison's Verdict records (a floor above)
    profile: Any = None

    def __init__(self, judged: Judged, metrics: list[Metric], values: dict[str, np.ndarray]):
        self.judged = judged
        self.metrics = metrics
        self.per_query = values
        self.aggregate = Values(
            (mt.name, aggregate(values[mt.name], mt.aggregate)) for mt in metrics
        )
        self.extra_notes: list[str] = []  # what the caller's own step counted (matching...)

    @classmethod
    def from_judged(cls, judged: Judged, metrics: MetricsLike) -> Evaluation:
        parsed = parse_metrics(metrics)
        values = {mt.name: mt.compute(judged) for mt in parsed}
        return cls(judged, parsed, values)

    # ------------------------------------------------------------------ access
    @property
    def query_ids(self) -> list[str]:
        return [str(q) for q in self.judged.query_ids]

    @property
    def counts(self) -> dict[str, int]:
        return self.judged.counts.as_dict()

    @property
    def names(self) -> list[str]:
        return [mt.name for mt in self.metrics]

    def __getitem__(self, name: str) -> float:
        return self.aggregate[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.aggregate)

    def evaluate(self, metrics: MetricsLike) -> Evaluation:
        """More metrics on the same judged pair."""
        return Evaluation.from_judged(self.judged, metrics)

    def query(self, query_id: str) -> dict[str, float]:
        """All metric values of one query."""
        idx = self.query_ids.index(str(query_id))
        return Values((name, float(vals[idx])) for name, vals in self.per_query.items())

    # ------------------------------------------------------------------ output
    def to_dict(self) -> dict[str, Any]:
        """``{"aggregate": {metric: value}, "per_query": {query: {metric: value}},
        "counts": {...}, "options": {...}}``."""
        qids = self.query_ids
        cols = {name: vals.tolist() for name, vals in self.per_query.items()}
        per_query = {q: {name: cols[name][i] for name in cols} for i, q in enumerate(qids)}
        opts = self.judged.options
        out: dict[str, Any] = {
            "aggregate": dict(self.aggregate),
            "per_query": per_query,
            "counts": self.counts,
            "options": {
                "relevance_level": opts.relevance_level,
                "score_precision": opts.score_precision,
                "convention": opts.convention.name,
                "switches": opts.convention.switches(),
                **({"freshness": _rule_text(opts.freshness)} if opts.freshness else {}),
            },
        }
        if self.verdicts:
            out["profile"] = self.profile.to_dict() if self.profile is not None else None
            out["verdicts"] = [v.to_dict() for v in self.verdicts]
        return out

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def to_trec(self, per_query: bool = False) -> str:
        """trec_eval's three-column layout (``measure  query|all  value``); counts print as
        integers, everything else with 4 decimals."""
        lines: list[str] = []
        if per_query:
            qids = self.query_ids
            for i, q in enumerate(qids):
                for mt in self.metrics:
                    value = float(self.per_query[mt.name][i])
                    lines.append(trec_line(mt.name, q, value, _is_count(mt)))
        for mt in self.metrics:
            lines.append(trec_line(mt.name, "all", self.aggregate[mt.name], _is_count(mt)))
        return "\n".join(lines) + "\n"

    def to_table(self, per_query: bool = False, digits: int = 4) -> str:
        """A plain-text table of the aggregates (and per-query rows when asked)."""
        names = self.names
        header = ["query", *names]
        rows: list[list[str]] = []
        if per_query:
            for i, q in enumerate(self.query_ids):
                rows.append(
                    [
                        visible(q),
                        *(
                            _fmt(mt, float(self.per_query[mt.name][i]), digits)
                            for mt in self.metrics
                        ),
                    ]
                )
        rows.append(["all", *(_fmt(mt, self.aggregate[mt.name], digits) for mt in self.metrics)])
        widths = [max(len(h), *(len(r[c]) for r in rows)) for c, h in enumerate(header)]

        def line(cells: list[str]) -> str:
            return "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
            )

        out = [line(header), line(["-" * w for w in widths])]
        out += [line(r) for r in rows]
        return "\n".join(out) + "\n" + self.notes() + "\n" + self.targets_text()

    def targets_text(self) -> str:
        """The verdicts against the profile's targets, one line each, under a line that
        names the profile, the level and the bound methods ("" without a profile)."""
        if not self.verdicts:
            return ""
        name = getattr(self.profile, "name", "targets")
        head = f"targets of profile {name} ({self.verdicts[0].summary(self.verdicts)}):"
        return "\n".join([head, *(f"  {visible(v.line())}" for v in self.verdicts)]) + "\n"

    def notes(self) -> str:
        """What judging counted, as one line (:func:`~ranklens.judging.counts_notes`), ids
        and messages made visible."""
        j = self.judged
        conv = j.convention
        rule = j.options.freshness
        notes = counts_notes(self.counts, j.options.missing, conv.name, conv.duplicates,
                             freshness=_rule_text(rule))  # fmt: skip
        return visible("; ".join([*notes, *self.extra_notes]))

    def to_pandas(self, per_query: bool = True) -> Any:
        """A DataFrame: one row per query (index ``query_id``) and a column per metric, or
        with ``per_query=False`` one row of aggregates (needs ``ranklens[pandas]``)."""
        pd: Any = require("pandas", "pandas", "Evaluation.to_pandas()")
        if not per_query:
            return pd.DataFrame([dict(self.aggregate)], index=pd.Index(["all"], name="query_id"))
        return pd.DataFrame(dict(self.per_query), index=pd.Index(self.query_ids, name="query_id"))

    def _repr_html_(self) -> str:
        """The notebook view: aggregates, what judging counted, and the first queries."""
        from html import escape

        names = self.names
        head = "".join(f"<th>{escape(n)}</th>" for n in names)
        agg = "".join(f"<td>{_fmt(mt, self.aggregate[mt.name], 4)}</td>" for mt in self.metrics)
        rows = [f"<tr><th>all</th>{agg}</tr>"]
        for i, q in enumerate(self.query_ids[:20]):
            vals = "".join(
                f"<td>{_fmt(mt, float(self.per_query[mt.name][i]), 4)}</td>" for mt in self.metrics
            )
            rows.append(f"<tr><td>{escape(visible(q))}</td>{vals}</tr>")
        more = len(self.query_ids) - 20
        tail = f"<p>… {more} more queries (to_pandas())</p>" if more > 0 else ""
        targets = "".join(f"<p>{escape(line)}</p>" for line in self.targets_text().splitlines())
        return (
            f"<div><table><thead><tr><th>query</th>{head}</tr></thead><tbody>{''.join(rows)}"
            f"</tbody></table>{tail}<p>{escape(self.notes())}</p>{targets}</div>"
        )

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={_shown(v)}" for k, v in self.aggregate.items())
        verdicts = "".join(f"; {v.metric} {v.op} {v.target:g} {v.word}" for v in self.verdicts)
        return f"Evaluation({body}; {self.judged.counts.queries_evaluated} queries{verdicts})"

    def __str__(self) -> str:
        return self.to_table()


def _is_count(mt: Metric) -> bool:
    return mt.aggregate == "sum"


def trec_line(name: str, qid: str, value: float, count: bool, prefix: str = "") -> str:
    """One line as trec_eval prints it: ``name`` padded to 22 (after ``prefix``, ``Z`` for
    z-scores), the query, and the value (an integer for a count, else 4 decimals)."""
    shown = str(round(value)) if count and math.isfinite(value) else f"{value:.4f}"
    return f"{prefix}{name:<22}\t{qid}\t{shown}"


def _fmt(mt: Metric, value: float, digits: int) -> str:
    if _is_count(mt):
        return str(round(value))
    return f"{value:.{digits}f}"


ONE_SIDED = Range(0.5, 1, "neither")
"""A one-sided confidence level: above 0.5 (a bound on the right side of the mean)."""

BOUND_METHODS = ("auto", "exact", "wilson", "t+", "t", "bootstrap")
"""The verdicts' bound methods (:mod:`ranklens.comparison.bounds` computes them; its
``METHODS`` are these, which its tests check)."""

VERDICTS = {
    "profile": data("a profile: its name (``faq``), a ranklens.Profile or its to_dict()"),
    "targets": mapping(
        None, "targets: {metric: value}, or 'METRIC >= VALUE' texts", none=True,
        also=names(None, single=True),
    ),
    "confidence": number(0.95, ONE_SIDED, "one-sided confidence of each verdict's bound"),
    "method": choice("auto", BOUND_METHODS, "the bound's method (ranklens.comparison.bounds)"),
    "power": number(0.8, LEVEL, "power for the queries that would settle an unknown verdict"),
}  # fmt: skip
"""The verdicts' settings (``ranklens.evaluate``; ``compare`` as ``target_*``;
``plan_queries``): declared once here, where the one ``evaluate`` is."""

EVALUATE: Declared = extend(
    SCORING, "evaluate",
    metrics=renamed_option(METRICS, none=True, description="metric names (None: the profile's)"),
    **VERDICTS,
)  # fmt: skip
"""The one table of :func:`evaluate`: the labels, run, metrics, judging options, trec_eval
version and memory budget (:data:`ranklens.evaluation.options.EVALUATE`) and the verdicts'
settings (:data:`VERDICTS`)."""


class ProfileLike(Protocol):
    """A use-case profile as :func:`evaluate` takes one (a :class:`ranklens.Profile`, which
    the profiles room beside this floor declares): a name, a title and targets."""

    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def targets(self) -> tuple[Any, ...]: ...


class VerdictHook(Protocol):
    """What gives :func:`evaluate` its verdicts against a profile's targets: called with
    evaluate's own arguments (``profile``, ``targets``, ``confidence``, ``method``,
    ``power`` by keyword, then the judging options), it returns the evaluation with
    ``verdicts`` and ``profile`` set. The comparison floor registers it
    (:func:`register_verdicts`), as it owns the statistics of the bounds."""

    def __call__(
        self,
        qrels: Any,
        run: Any,
        metrics: Any,
        *,
        profile: Any,
        targets: Any,
        confidence: float,
        method: str,
        power: float,
        **options: Any,
    ) -> Evaluation: ...


HOOKS: dict[str, VerdictHook] = {}
"""The registered verdict hook (``"verdicts"``), set by :mod:`ranklens.comparison.targets`
when it is imported, which :func:`verdict_hook` does through the entry point group
``ranklens.hooks`` the first time verdicts are asked for (a plain evaluation never loads the
comparison floor)."""


def register_verdicts(hook: VerdictHook) -> None:
    """Make ``hook`` what :func:`evaluate` calls when given a ``profile`` or ``targets``
    (the comparison floor's verdicts; a floor below cannot import it)."""
    HOOKS["verdicts"] = hook


def stray_keywords(given: Mapping[str, Any], table: Declared) -> None:
    """A keyword passed on to judging that is not a judging option but a misspelling of
    one of ``table``'s own parameters (``confidance=``) is named with the closest, before
    judging reads it as an unknown judging option (a misspelled judging option is
    judging's to name)."""
    own = [n for n in table.options if n not in JUDGING and n != "judge_options"]
    for key in given:
        near = None if key in JUDGING else closest(key, own)
        if near:
            raise UnknownParameterError(
                f"{table.where}: no parameter {key!r}; did you mean {near!r}? (it takes: "
                f"{', '.join(own)}, and the judging options)"
            )


@EVALUATE.checks
def evaluate(
    qrels: QrelsLike,
    run: RunLike,
    metrics: MetricsLike | None = None,
    *,
    profile: str | ProfileLike | Mapping[str, Any] | None = None,
    targets: Mapping[str, Any] | Sequence[str] | str | None = None,
    confidence: float = 0.95,
    method: str = "auto",
    power: float = 0.8,
    options: JudgeOptions | None = None,
    trec_eval_version: str = "10",
    memory: int | float | str | None = None,
    **judge_options: Any,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` on ``metrics``, and with a ``profile`` or
    ``targets`` give a verdict on each target.

    ``qrels``: a :class:`~ranklens.Qrels`, a TREC qrels path, ``{query: {doc: grade}}``,
    ``{query: [doc, ...]}`` or grouped ``{query: [[doc, ...], ...]}``.
    ``run``: a :class:`~ranklens.Run`, a TREC run path, ``{query: {doc: score}}``,
    ``{query: [(doc, score), ...]}`` or ranked lists ``{query: [doc, ...]}``.
    ``metrics``: names such as ``"ndcg@10"``, ``"P(rel=2)@5"``, ``"map"``, trec_eval's
    ``"ndcg_cut_10"`` (see :mod:`ranklens.metrics.names`); None: the profile's.
    ``judge_options``: ``relevance_level`` (trec_eval ``-l``, default 1), ``duplicates``
    (``"error"``/``"first"``), ``missing`` (``"zero"``/``"skip"``), ``score_precision``,
    ``judged_only`` (trec_eval ``-J``).
    ``trec_eval_version``: ``"10"`` (default) or ``"9"``, which reproduces trec_eval 9.0.8
    and pytrec_eval exactly: scores compared as float32 and the recall cutoffs of
    ``iprec_at_recall``/``11pt_avg`` as ``⌊r·R + 0.9⌋`` instead of ``round(r·R)``.

    ``memory``: a run file too large to judge whole within this budget (default about
    2 GB; ``"500M"``, bytes, or ``float("inf")`` for never), or a folder of run files, is
    streamed in chunks of whole queries by :func:`~ranklens.evaluate_file`, with the same
    numbers to the last bit.

    ``profile`` (a name such as ``"faq"``, a :class:`~ranklens.Profile`) or ``targets``
    (``{"mrr@10": 0.8}``, ``"mrr@10 >= 0.8"``): a verdict on each target,
    ``evaluation.verdicts`` (:class:`~ranklens.TargetVerdict`: met only when the one-sided
    lower confidence bound of the mean clears the target, missed only when the upper bound
    lies below it, otherwise not yet known with the queries that would settle it), shown
    by every output of the evaluation. ``metrics`` default to the profile's, and its
    metrics are added to any given. ``confidence``: the one-sided level of each bound
    (0.95); ``method``: ``auto``, ``exact``, ``wilson``, ``t+``, ``t`` or ``bootstrap``
    (:mod:`ranklens.comparison.bounds`); ``power``: for the queries that would settle an
    unknown verdict (:mod:`ranklens.comparison.targets` computes the verdicts).

    Returns an :class:`Evaluation`; the judged arrays are kept on it for further metrics
    (a streamed one keeps the per-query values only).

    >>> ev = evaluate({"q1": {"d1": 1, "d2": 1}}, {"q1": ["d1", "d3"]}, ["P@2", "recall@2"])
    >>> ev["P@2"], ev["recall@2"]
    (0.5, 0.5)
    """
    stray_keywords(judge_options, EVALUATE)
    judge_options = check_judging(judge_options, "evaluate")
    check_options(options, "evaluate")
    given: dict[str, Any] = {"options": options, "trec_eval_version": trec_eval_version,
                             "memory": memory, **judge_options}  # fmt: skip
    if profile is not None or targets is not None:
        return verdict_hook()(qrels, run, metrics, profile=profile, targets=targets,
                              confidence=confidence, method=method, power=power,
                              **given)  # fmt: skip
    if metrics is None:
        raise InputError("evaluate needs metrics, or a profile (or targets) whose metrics to use")
    return _scored(qrels, run, metrics, **given)


def verdict_hook() -> VerdictHook:
    """The registered verdict hook, or an error saying how to load it."""
    hook = HOOKS.get("verdicts")
    if hook is None:  # the comparison floor's, found by name (loading it registers it)
        from ..plugins import entry_point_table  # importlib.metadata: only when asked

        found = entry_point_table("ranklens.hooks").get("verdicts")
        if found is not None:
            hook = HOOKS.setdefault("verdicts", found.load())
    if hook is None:
        raise InputError(
            "evaluate: verdicts against a profile or targets are computed by "
            "ranklens.comparison, which is not loaded; call ranklens.evaluate (or import "
            "ranklens.comparison first)"
        )
    return hook


def _scored(
    qrels: QrelsLike,
    run: RunLike,
    metrics: MetricsLike,
    *,
    options: JudgeOptions | None,
    trec_eval_version: str,
    memory: int | float | str | None,
    **judge_options: Any,
) -> Evaluation:
    """The evaluation itself (no verdicts): a run file past the memory budget streamed,
    anything else judged once and scored."""
    if isinstance(run, (str, Path)):
        from .stream import evaluate_file, streams

        if streams(run, memory, qrels):
            budget: dict[str, Any] = {} if memory is None else {"memory": memory}
            return evaluate_file(qrels, run, metrics, options=options, **budget,
                                 trec_eval_version=trec_eval_version, **judge_options)  # fmt: skip
    parsed = versioned_metrics(metrics, trec_eval_version, judge_options)
    judged = judge(qrels, run, options, **judge_options)
    return Evaluation.from_judged(judged, parsed)


TREC_EVAL_VERSIONS = ("9", "10")


def tie_bounds(
    qrels: QrelsLike,
    run: RunLike,
    metrics: MetricsLike,
    *,
    options: JudgeOptions | None = None,
    **judge_options: Any,
) -> tuple[Evaluation, Evaluation]:
    """``metrics`` with the run's tied documents in the least and in the most favourable
    order (``ties="worst"``, ``ties="best"``; any other ``ties`` given is replaced): for
    measures that reward higher grades earlier, the min and max over every tie order."""
    parsed = parse_metrics(metrics)
    kw = {k: v for k, v in judge_options.items() if k != "ties"}
    worst, best = (
        Evaluation.from_judged(judge(qrels, run, options, **kw, ties=t), parsed)
        for t in ("worst", "best")
    )
    return worst, best


def versioned_metrics(
    metrics: MetricsLike, version: str, judge_options: dict[str, Any]
) -> list[Metric]:
    """The parsed metrics, and the judging options, of trec_eval ``version``."""
    parsed = parse_metrics(metrics)
    if str(version) not in TREC_EVAL_VERSIONS:
        raise InputError(f"trec_eval_version must be '9' or '10', got {version!r}")
    if str(version) == "9":
        judge_options.setdefault("score_precision", "float32")
        parsed = [trec_eval_9(mt) for mt in parsed]
    return parsed


def trec_eval_9(mt: Metric) -> Metric:
    """``mt`` as trec_eval 9 computes it: the legacy recall cutoffs for the interpolated
    precision measures, unless the name set ``legacy`` itself."""
    params = dict(mt.params)
    if "legacy" in params and not params["legacy"] and "legacy=" not in mt.name.lower():
        return mt.with_params(legacy=True)
    return mt
