"""Every stage of a pipeline measured against the labels, and the recall each stage loses.

:func:`evaluate_stages` judges every stage of a :class:`~ranklens.StagedRun` against the same
labels with the same options (ids, grouped labels, evidence spans, versions: whatever
:func:`ranklens.judge` takes), computes every metric at every stage, attributes each
relevant unit's loss to a stage (:mod:`ranklens.judging.stages`) and tests, transition by
transition, the recall each stage loses.

The recall a stage loses: with ``H_{q,s}`` the share of query q's relevant units stage s's
list holds (``R_q > 0``), the loss of stage s is the mean over queries of
``d_q = H_{q,s} − H_{q,s−1}`` (negative: evidence lost; positive: a stage that adds
documents), with a paired test of ``mean(d) = 0`` and an interval of the mean
(:class:`~ranklens.Statistics`: ``test``, ``ci``, ``confidence``, ``n_resamples``, ``seed``;
p-values corrected over the transitions by ``correction``). With a context budget, the
last transition is from the last stage to the context: the share held within the budget's
cutoff. Queries without a relevant unit have nothing to lose and are left out of the
losses (counted).

Reference for the tests and intervals: :mod:`ranklens.comparison.stats` (Fisher's
randomization, Efron & Tibshirani's percentile bootstrap, Student's t, Wilcoxon; Holm 1979).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any

import numpy as np

from ..capture import Recorder
from ..comparison import stats as cstats
from ..declared import choice, data, declare, mapping, text
from ..errors import InputError, UnknownOptionError, suggest
from ..evaluation import Evaluation
from ..evaluation.options import JUDGE_OPTIONS, MEMORY, QRELS, parse_bytes
from ..evaluation.stream import DEFAULT_MEMORY
from ..io import coerce_qrels, coerce_run
from ..judging.options import JUDGING, check_judging
from ..judging.stages import FATES, Attribution, trail
from ..metrics import parse_metric, parse_metrics
from ..metrics.trec_forms import METRICS
from ..model.spans import SpanLabels
from ..model.stages import StagedRun
from ..settings import Statistics
from .shards import judge_shard, shard_count, sharded

STRADDLE = ("exclude", "include", "partial")

EVALUATE_STAGES = declare("evaluate_stages", {
    "qrels": QRELS,
    "staged": data("the pipeline's stages: a StagedRun, {stage: run} in order, or a result "
                   "with .staged() (RunResult, Recorder)"),
    "metrics": METRICS,
    "budget": text(None, "a context budget, e.g. '1024tok' or '4000char' (None: none)",
                   none=True),
    "straddle": choice("exclude", STRADDLE, "the chunk straddling the budget"),
    "stats": data("a Statistics: how the losses are tested and their intervals drawn"),
    "name": text(None, "the pipeline's name (default: the staged run's)", none=True),
    "memory": MEMORY,
    "backend": choice("local", ("local", "ray"), "where the shards of queries are judged"),
    "ray": mapping(None, "Ray's options: address, num_cpus, cpus_per_task", none=True,
                   empty=True),
    **JUDGING,
    "judge_options": JUDGE_OPTIONS,
})  # fmt: skip

STATS = Statistics()

SHOWN: dict[str, Callable[..., str]] = {}
"""How a :class:`StageEvaluation` is shown (``terminal``, ``markdown``, ``html``,
``query``): registered by :mod:`.report` through the room's front door."""


def _shown(kind: str) -> Callable[..., str]:
    if kind not in SHOWN:  # the front door registers them; importing it does
        import importlib

        importlib.import_module("ranklens.stages")
    return SHOWN[kind]


@dataclass(frozen=True)
class StageLoss:
    """The recall one transition loses: from stage ``before`` to stage ``stage`` (``stage``
    is ``"context"`` for the budget). ``held_before``/``held_after``: the mean share of
    relevant units held; ``delta``: their mean difference (negative: lost), with its
    interval (``ci_low``, ``ci_high``) and the paired test's ``p_value`` (corrected over the
    transitions); ``units_lost``/``units_added``: relevant units the transition dropped and
    brought; ``queries``: the queries with a relevant unit."""

    stage: str
    before: str
    held_before: float
    held_after: float
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    units_lost: int
    units_added: int
    queries: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(eq=False)
class StageEvaluation:
    """Every stage of a pipeline measured (see the module docstring).

    * ``stages``: the stage names; ``evaluations``: ``{stage: Evaluation}`` of every metric
      at every stage (``evaluations[s].judged`` keeps the judged arrays);
    * ``attribution``: each relevant unit's path (:class:`~ranklens.judging.stages.Attribution`);
    * ``losses``: one :class:`StageLoss` per transition (and to the context, with a budget);
    * ``latency``: per stage ``{"p50", "p95", "mean"}`` milliseconds, when captured;
    * ``counts``: per stage the queries with no hits (``empty``) and the units it
      ``added``; ``budget``/``straddle``: the context budget, when given;
    * ``labels``: each relevant unit's name (a document id, a group's ids, a span).
    """

    name: str
    stages: tuple[str, ...]
    evaluations: dict[str, Evaluation]
    attribution: Attribution
    losses: tuple[StageLoss, ...]
    latency: dict[str, dict[str, float]]
    counts: dict[str, dict[str, int]]
    budget: str | None = None
    straddle: str = "exclude"
    label_source: tuple[Any, int] | None = field(default=None, repr=False)
    """The labels and the relevance level the units' names are read from, on first use."""
    stats: Statistics = STATS
    kinds: dict[str, str | None] = field(default_factory=dict)

    @property
    def metrics(self) -> list[str]:
        """The metric names, as given."""
        first = self.evaluations[self.stages[0]]
        return [m.name for m in first.metrics]

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per stage (and the context, with a budget): each metric's mean, the
        share of relevant units held, the units lost there by fate, the units added, and
        latency: what every renderer shows."""
        att = self.attribution
        held = att.recall()
        has_rel = np.bincount(att.unit_q, minlength=len(att.query_ids)) > 0
        places = [*self.stages, *(["context"] if self.budget else [])]
        counts = att.counts()
        rows = []
        for s, place in enumerate(places):
            ev = self.evaluations.get(place)
            row: dict[str, Any] = {
                "stage": place,
                "kind": self.kinds.get(place, "context" if place == "context" else None),
                "held": float(held[has_rel, s].mean()) if has_rel.any() else 0.0,
                "metrics": dict(ev.aggregate) if ev is not None else {},
                "lost": {f: n for f, n in counts[place].items() if f in FATES and n},
                "added": counts[place].get("added", 0),
                "latency": self.latency.get(place, {}),
            }
            rows.append(row)
        return rows

    def query(self, query_id: str) -> list[dict[str, Any]]:
        """Where each relevant unit of one query went: its rank at every stage (None where
        absent), its fate and where it happened."""
        return trail(self.attribution, str(query_id), self.labels or None)

    @cached_property
    def labels(self) -> list[str]:
        """Each relevant unit's name, aligned with the attribution's units: the document
        id, a group's ids joined by ``|``, or a span as ``doc[start:end]`` (read from the
        labels when first asked: the drill-downs need it, the numbers do not)."""
        if self.label_source is None:
            return []
        Q, level = self.label_source
        return _unit_labels(Q, self.attribution, level)

    def table(self, digits: int = 4, color: bool | None = None) -> str:
        """The stage table and the losses for a terminal (colours when ``color``, by
        default when standard output is a terminal)."""
        return _shown("terminal")(self, digits=digits, color=color)

    def to_markdown(self, digits: int = 4) -> str:
        """The stage table, the losses and the notes as Markdown."""
        return _shown("markdown")(self, digits=digits)

    def to_html(
        self, path: str | Path | None = None, title: str | None = None, max_queries: int = 2000
    ) -> str:
        """One self-contained HTML page: the waterfall, the stage table, the losses and the
        per-query drill-down (``max_queries`` of them, those with the most units lost
        first); written to ``path`` when given."""
        page = _shown("html")(self, title=title, max_queries=max_queries)
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page

    def query_text(self, query_id: str) -> str:
        """One query's drill-down as text: each relevant unit's rank at every stage."""
        return _shown("query")(self, str(query_id))

    def _repr_html_(self) -> str:
        return _shown("html")(self, fragment=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: stages, metrics per stage, fates, losses, latency and counts."""
        return {
            "name": self.name,
            "stages": list(self.stages),
            "budget": self.budget,
            "straddle": self.straddle if self.budget else None,
            "metrics": {s: dict(ev.aggregate) for s, ev in self.evaluations.items()},
            "fates": self.attribution.fate_counts(),
            "attribution": self.attribution.counts(),
            "losses": [loss.to_dict() for loss in self.losses],
            "latency": self.latency,
            "counts": self.counts,
        }

    def to_pandas(self) -> Any:
        """Per (stage, query): every metric, the share held and the units lost there (a
        pandas DataFrame; pandas is an optional extra)."""
        import pandas as pd

        att = self.attribution
        held = att.recall()
        per_q = att.per_query()
        frames = []
        for s, stage in enumerate(self.stages):
            ev = self.evaluations[stage]
            at = np.searchsorted(att.query_ids, np.asarray(ev.query_ids))
            df = pd.DataFrame({"stage": stage, "query_id": ev.query_ids})
            for name, vals in ev.per_query.items():
                df[name] = vals
            df["held"] = held[at, s]
            df["lost_here"] = per_q[f"lost at {stage}"][at]
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    def as_evaluation(self) -> dict[str, float]:
        """Every stage's aggregates flattened to ``{"<stage>/<metric>": mean}`` (with
        ``"<stage>/held"``), the names :func:`ranklens.gate` and profiles take per stage."""
        out: dict[str, float] = {}
        for row in self.table_rows():
            for m, v in row["metrics"].items():
                out[f"{row['stage']}/{m}"] = float(v)
            out[f"{row['stage']}/held"] = row["held"]
        return out

    def __repr__(self) -> str:
        fates = ", ".join(f"{f} {n}" for f, n in self.attribution.fate_counts().items() if n)
        return f"StageEvaluation({self.name!r}: {' -> '.join(self.stages)}; {fates})"


def _staged(obj: Any, name: str | None, labels: Any = None, spans: bool = False) -> StagedRun:
    """A :class:`StagedRun` from what the caller gave (files read per stage; a runner's
    result or a Recorder asked for each stage's chunks when the labels are spans, and a
    Recorder given the labels to match recorded queries by text)."""
    if isinstance(obj, StagedRun):
        return obj
    staged = getattr(obj, "staged", None)
    if callable(staged):
        got = staged(labels, chunks=spans) if isinstance(obj, Recorder) else staged(chunks=spans)
        if isinstance(got, StagedRun):
            return got
    if isinstance(obj, Mapping) or (isinstance(obj, Sequence) and not isinstance(obj, str)):
        items = list(obj.items()) if isinstance(obj, Mapping) else list(obj)
        runs = []
        for item in items:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise InputError(
                    "staged: give {stage: run} in pipeline order or (stage, run) pairs"
                )
            stage, run = item
            try:
                runs.append((stage, coerce_run(run, name=str(stage))))
            except InputError as exc:
                raise InputError(f"stage {stage!r}: {exc}") from exc
        return StagedRun(runs, name=name or "pipeline")
    raise InputError(
        f"staged: expected a StagedRun, {{stage: run}} in order, or a result with .staged(); "
        f"got {type(obj).__name__}"
    )


def _unit_labels(Q: Any, att: Attribution, level: int) -> list[str]:
    """Each relevant unit's name in the attribution's order: the document id, a group's
    ids joined by ``|``, or a span as ``doc[start:end]`` (vectorised over the labels' rows;
    units of several rows joined in one pass)."""
    rows = np.flatnonzero(Q.grade >= level)
    rows = rows[np.lexsort((rows, Q.unit[rows], Q.q[rows]))]  # by query, unit, row
    q, unit = Q.q[rows], Q.unit[rows]
    names = np.asarray(Q.doc_ids, dtype=object)[Q.d[rows]]
    if getattr(Q, "start", None) is not None:
        names = np.array([f"{d}[{int(a)}:{int(b)}]" for d, a, b in
                          zip(names, Q.start[rows], Q.end[rows])], dtype=object)  # fmt: skip
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (q[1:] != q[:-1]) | (unit[1:] != unit[:-1])
    starts = np.flatnonzero(first)
    ends = np.append(starts[1:], len(rows))
    label = names[starts].astype(object)
    for i in np.flatnonzero(ends - starts > 1):  # groups of several documents or spans
        label[i] = "|".join(str(x) for x in names[starts[i] : ends[i]])
    uq = q[starts]  # each relevant unit's query code, in order
    # the attribution's units: (query id, k) -> the label of that query's k-th unit
    qids = np.asarray(Q.query_ids).astype(str)
    aq = np.searchsorted(qids, np.asarray(att.query_ids).astype(str)[att.unit_q])
    aq = np.minimum(aq, max(len(qids) - 1, 0))
    lo = np.searchsorted(uq, aq, side="left")
    hi = np.searchsorted(uq, aq, side="right")
    at = lo + att.unit_k
    ok = at < hi
    out = [f"unit {int(kk) + 1}" for kk in att.unit_k]
    for u in np.flatnonzero(ok):
        out[u] = str(label[at[u]])
    return out


@EVALUATE_STAGES.checks
def evaluate_stages(
    qrels: Any,
    staged: Any,
    metrics: Any = ("recall", "ndcg@10"),
    *,
    budget: str | None = None,
    straddle: str = "exclude",
    stats: Statistics | None = None,
    name: str | None = None,
    memory: int | float | str | None = None,
    backend: str = "local",
    ray: Mapping[str, Any] | None = None,
    **judge_options: Any,
) -> StageEvaluation:
    """Measure every stage of a pipeline and say where the evidence was lost.

    ``qrels``: the labels (anything :func:`ranklens.evaluate` takes: documents, groups,
    :class:`~ranklens.SpanLabels`). ``staged``: the stages (a :class:`~ranklens.StagedRun`,
    ``{stage: run}`` in pipeline order with runs in any form :func:`ranklens.evaluate`
    takes, or a result with ``.staged()``: a :class:`~ranklens.RunResult` of a
    :class:`~ranklens.Pipeline`, a :class:`~ranklens.Recorder`). ``metrics``: computed at
    every stage. ``budget``: the context given to the generator after the last stage, as a
    metric cutoff is written (``"1024tok"``, ``"4000char"``): units of the last stage below
    its cutoff are "outside the budget"; ``straddle``: whether the chunk straddling it
    counts (``"exclude"``, ``"include"``). ``stats``: how losses are tested
    (:class:`~ranklens.Statistics`). ``judge_options``: judging's options, applied to every
    stage alike.

    ``memory``: the budget judging may hold (default about 2 GB; ``"500M"``, bytes, or
    ``float("inf")``): a pipeline whose stages hold more rows is judged in shards of whole
    queries with the same numbers (:mod:`.shards`); ``backend="ray"`` judges the shards as
    Ray tasks (``ray={"address": ..., "num_cpus": ..., "cpus_per_task": ...}``). Sharded
    evaluations keep per-query values only, not the judged arrays.

    >>> ev = evaluate_stages(
    ...     {"q1": {"a": 1, "b": 1, "c": 1}},
    ...     {"bm25": {"q1": ["a", "x", "b", "c"]}, "rerank": {"q1": ["b", "x"]}},
    ...     ["recall"],
    ... )
    >>> ev.attribution.fate_counts()["filtered"], ev.attribution.fate_counts()["cut by rank"]
    (1, 1)
    """
    stats = STATS if stats is None else stats
    if not isinstance(stats, Statistics):
        raise InputError(f"stats must be a Statistics, got {type(stats).__name__}")
    judge_options = check_judging(judge_options, "evaluate_stages")
    unknown = [k for k in judge_options if k not in JUDGING and k != "options"]
    if unknown:
        raise UnknownOptionError(
            f"evaluate_stages() got an unexpected keyword {unknown[0]!r}"
            + suggest(unknown[0], [*EVALUATE_STAGES.options, *JUDGING])
        )
    Q = coerce_qrels(qrels)
    pipeline = _staged(staged, name, qrels, isinstance(Q, SpanLabels))
    parsed = parse_metrics(metrics)
    cut = None if budget is None else _budget_cut(budget, straddle)
    rows = sum(len(r.q) for r in pipeline.runs)
    kinds = [pipeline.kinds.get(n) for n in pipeline.names]
    reads = pipeline.input_indices
    limit = DEFAULT_MEMORY if memory is None else memory
    limit = float(limit) if isinstance(limit, (int, float)) else parse_bytes(limit)
    shards = shard_count(rows, limit)
    if shards > 1 or backend == "ray":
        on_ray = dict(ray or {}) if backend == "ray" else None
        evaluations, att = sharded(Q, pipeline.names, pipeline.runs, parsed, judge_options, cut,
                                   None, shards, on_ray, kinds, reads)  # fmt: skip
    else:
        whole = judge_shard(Q, pipeline.names, pipeline.runs, parsed, judge_options, cut,
                            keep=True, kinds=kinds, inputs=reads)  # fmt: skip
        evaluations = dict(zip(pipeline.names, whole.evaluations or []))
        att = whole.attribution
    level = max(int(next(iter(evaluations.values())).judged.options.relevance_level), 1)
    losses = _losses(att, pipeline.names, budget is not None, stats)
    counts = {
        stage: {"empty": int(np.count_nonzero(att.evaluated[:, s] & (att.lens[:, s] == 0))),
                "added": int(att.added[:, s].sum())}
        for s, stage in enumerate(pipeline.names)
    }  # fmt: skip
    counts["queries"] = {
        "total": len(att.query_ids),
        "without relevant": int(
            np.count_nonzero(np.bincount(att.unit_q, minlength=len(att.query_ids)) == 0)
        ),
    }
    latency = {}
    for stage in pipeline.names:
        ms = pipeline.latency_of(stage, [str(q) for q in att.query_ids])
        ms = ms[np.isfinite(ms)]
        if len(ms):
            latency[stage] = {
                "p50": float(np.percentile(ms, 50)),
                "p95": float(np.percentile(ms, 95)),
                "mean": float(ms.mean()),
            }
    return StageEvaluation(
        name=name or pipeline.name,
        stages=pipeline.names,
        evaluations=evaluations,
        attribution=att,
        losses=losses,
        latency=latency,
        counts=counts,
        budget=budget,
        straddle=straddle,
        label_source=(Q, level),
        stats=stats,
        kinds=dict(pipeline.kinds),
    )


def _budget_cut(budget: str, straddle: str) -> Callable[[Any], np.ndarray]:
    """The budget's cutoff rank per query of a last stage's judged pair, as a function
    (checked here, before any work)."""
    if straddle == "partial":
        raise InputError(
            "straddle='partial' counts part of a chunk, which has no rank: a stage's "
            "attribution takes 'exclude' or 'include' (the evidence metrics take partial, "
            "e.g. evidence_recall(straddle=partial)@1024tok)"
        )
    spec = getattr(parse_metric(f"recall@{budget}"), "budget", None)
    if spec is None:
        raise InputError(f"budget: {budget!r} is not a budget; write e.g. '1024tok' or '4000char'")
    return partial(_cutoffs, spec=spec, straddle=straddle)


def _cutoffs(last: Any, spec: Any, straddle: str) -> np.ndarray:
    return np.asarray(last.budget_cutoffs(spec, straddle), dtype=np.int64)


def _losses(
    att: Attribution, stages: Sequence[str], budget: bool, stats: Statistics
) -> tuple[StageLoss, ...]:
    """One :class:`StageLoss` per transition (each stage that reads others, from what they
    held together to what it holds; with a budget, the last stage to the context), tested
    and corrected together."""
    has_rel = np.bincount(att.unit_q, minlength=len(att.query_ids)) > 0
    held = att.recall()[has_rel]
    before = att.held_before()[has_rel]
    reads = att.inputs or ()
    pairs = [(s, " + ".join(stages[i] for i in reads[s])) for s in range(len(stages)) if reads[s]]
    cols_before = [before[:, s] for s, _ in pairs]
    cols_after = [held[:, s] for s, _ in pairs]
    places = [stages[s] for s, _ in pairs]
    names_before = [b for _, b in pairs]
    if budget:
        cols_before.append(held[:, len(stages) - 1])
        cols_after.append(held[:, len(stages)])
        places.append("context")
        names_before.append(stages[-1])
    n_t = len(places)
    if n_t == 0:
        return ()
    b = np.stack(cols_before, axis=1)
    a = np.stack(cols_after, axis=1)
    diffs = np.ascontiguousarray(a - b)
    if len(diffs) >= 2:
        p = cstats.paired_test(diffs, stats.test, stats.n_resamples, stats.seed)
        p = cstats.correct(p, stats.correction)
        if stats.ci == "t":
            lo, hi = cstats.t_interval(diffs, stats.confidence)
        else:
            lo, hi = cstats.bootstrap_interval(
                diffs, stats.confidence, stats.n_resamples, stats.seed
            )
    else:
        mean = diffs.mean(axis=0) if len(diffs) else np.zeros(n_t)
        p, lo, hi = np.ones(n_t), mean, mean
    counts = att.counts()
    out = []
    for t in range(n_t):
        place = places[t]
        lost = sum(n for f, n in counts[place].items() if f in FATES)
        out.append(StageLoss(
            stage=place, before=names_before[t],
            held_before=float(b[:, t].mean()) if len(b) else 0.0,
            held_after=float(a[:, t].mean()) if len(a) else 0.0,
            delta=float(diffs[:, t].mean()) if len(diffs) else 0.0,
            ci_low=float(lo[t]), ci_high=float(hi[t]), p_value=float(p[t]),
            units_lost=int(lost), units_added=int(counts[place].get("added", 0)),
            queries=len(held),
        ))  # fmt: skip
    return tuple(out)
