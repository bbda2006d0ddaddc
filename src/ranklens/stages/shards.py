"""Pipelines larger than memory: stages judged shard by shard of queries, locally or on Ray.

A query's values and its units' fates depend on that query's rows only, so a pipeline
judged in shards of whole queries gives exactly the numbers judged whole: each shard's
labels (:meth:`Qrels.subset <ranklens.Qrels.subset>`) and each stage's rows of its queries
(:meth:`Run.subset <ranklens.Run.subset>`) are judged, scored and attributed, then let go;
the per-query values are assembled in the labels' query order (as
:func:`ranklens.evaluate_file` assembles a streamed file's) and the attributions joined.

The shard count comes from the memory budget: judging holds about
:data:`JUDGED_ROW_BYTES` bytes per ranked row of a stage while every stage of a shard is
judged, so ``shards = ⌈rows of all stages × JUDGED_ROW_BYTES / budget⌉``. On Ray
(``backend="ray"``) the shards are tasks, as many at once as the cluster runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..evaluation import Evaluation
from ..evaluation.on_ray import connect
from ..evaluation.stream_plan import assemble, merge_counts
from ..judging import JudgeCounts, JudgeOptions, judge
from ..judging.stages import Attribution, attribute
from ..metrics import Metric
from ..model import Qrels, Run

JUDGED_ROW_BYTES = 120
"""Bytes judging holds per ranked row while a shard's stages are judged and kept for the
attribution (measured: 108 at the peak of judging 2·10^6 rows with 30 labels per query,
84 held by the judged arrays after)."""


def shard_count(pipeline_rows: int, memory: float) -> int:
    """How many shards of queries keep judging within ``memory`` bytes (1: judge whole)."""
    if not math.isfinite(memory):
        return 1
    return max(1, math.ceil(pipeline_rows * JUDGED_ROW_BYTES / memory))


@dataclass
class ShardResult:
    """What one shard gives back: per stage its queries' values and judging's counts, and
    the shard's attribution."""

    values: list[tuple[np.ndarray, dict[str, np.ndarray]]]
    counts: list[JudgeCounts]
    attribution: Attribution
    options: JudgeOptions
    evaluations: list[Evaluation] | None = None


def judge_shard(
    Q: Qrels,
    names: Sequence[str],
    runs: Sequence[Run],
    metrics: list[Metric],
    judge_options: dict[str, Any],
    cut: Callable[[Any], np.ndarray] | None,
    level: int | None = None,
    keep: bool = False,
    kinds: Sequence[str | None] | None = None,
    inputs: Sequence[Sequence[int]] | None = None,
) -> ShardResult:
    """Judge, score and attribute one shard's stages (the runs already cut to its
    queries); ``cut`` gives the budget's cutoffs on the last stage's judged pair;
    ``keep``: keep each stage's :class:`~ranklens.Evaluation` (with its judged arrays);
    ``kinds``: each stage's kind (a filter's losses are all "filtered"); ``inputs``: per
    stage the positions of the stages it reads."""
    judged = []
    values = []
    counts = []
    kept = []
    for stage, run in zip(names, runs):
        try:
            j = judge(Q, run, require_shared=False, name=stage, **judge_options)
        except InputError as exc:
            raise InputError(f"stage {stage!r}: {exc}") from exc
        ev = Evaluation.from_judged(j, metrics)
        if keep:
            kept.append(ev)
        values.append((np.array(ev.query_ids, dtype=object), ev.per_query))
        counts.append(j.counts)
        judged.append(j)
    cutoff = cut(judged[-1]) if cut is not None else None
    att = attribute(names, judged, cutoff, level, runs=runs, kinds=kinds, inputs=inputs)
    return ShardResult(values, counts, att, judged[0].options, kept if keep else None)


def join_attributions(parts: Sequence[Attribution]) -> Attribution:
    """One attribution from shards of disjoint queries, in the labels' query order."""
    parts = [p for p in parts if len(p.query_ids)]
    order = np.argsort([str(p.query_ids[0]) for p in parts], kind="stable")
    parts = [parts[i] for i in order]
    offsets = np.cumsum([0, *[len(p.query_ids) for p in parts[:-1]]])
    cut = None if parts[0].cutoff is None else np.concatenate([p.cutoff for p in parts])
    return Attribution(
        parts[0].stages,
        np.concatenate([p.query_ids for p in parts]),
        np.concatenate([p.unit_q + off for p, off in zip(parts, offsets)]),
        np.concatenate([p.unit_k for p in parts]),
        np.concatenate([p.grade for p in parts]),
        np.concatenate([p.rank for p in parts]),
        np.concatenate([p.lens for p in parts]),
        np.concatenate([p.evaluated for p in parts]),
        cut,
        None if parts[0].kept is None else np.concatenate([p.kept for p in parts]),
        parts[0].filters,
        parts[0].inputs,
    )


def sharded(
    Q: Qrels,
    names: Sequence[str],
    runs: Sequence[Run],
    metrics: list[Metric],
    judge_options: dict[str, Any],
    cut: Callable[[Any], np.ndarray] | None,
    level: int | None,
    shards: int,
    ray: dict[str, Any] | None = None,
    kinds: Sequence[str | None] | None = None,
    inputs: Sequence[Sequence[int]] | None = None,
) -> tuple[dict[str, Evaluation], Attribution]:
    """Every stage's evaluation and the pipeline's attribution, judged in ``shards`` shards
    of the labelled queries (on Ray when ``ray`` gives its options: ``address``,
    ``num_cpus``, ``cpus_per_task``)."""
    qids = np.sort(np.asarray(Q.query_ids).astype(str))
    pieces = [p for p in np.array_split(qids, shards) if len(p)]

    def shard_args(piece: np.ndarray) -> tuple[Any, ...]:
        return (Q.subset(piece), names, [r.subset(piece) for r in runs], metrics,
                judge_options, cut, level, False, kinds, inputs)  # fmt: skip

    results: list[ShardResult] = []
    if ray is not None:
        options = dict(ray)
        cpus = float(options.pop("cpus_per_task", 1))
        rt = connect(options.pop("address", None), options.pop("num_cpus", None))
        task = rt.remote(num_cpus=cpus, max_retries=2)(judge_shard)
        results = rt.get([task.remote(*shard_args(p)) for p in pieces])
    else:
        results = [judge_shard(*shard_args(p)) for p in pieces]
    labelled = set(qids.tolist())
    evaluations: dict[str, Evaluation] = {}
    for s, (stage, run) in enumerate(zip(names, runs)):
        ignored = [str(q) for q in run.query_ids if str(q) not in labelled]
        total = merge_counts([
            *[r.counts[s] for r in results],
            JudgeCounts(queries_ignored=len(ignored), ignored_ids=ignored),
        ])  # fmt: skip
        again = _again(stage)
        evaluations[stage] = assemble([r.values[s] for r in results], total, metrics,
                                      results[0].options, Path(stage), again,
                                      len(pieces))  # fmt: skip
    return evaluations, join_attributions([r.attribution for r in results])


def _again(stage: str) -> Callable[[Any], Evaluation]:
    def again(metrics: Any) -> Evaluation:
        raise InputError(
            f"stage {stage!r} was judged in shards within the memory budget and kept "
            "per-query values only; for more metrics, call evaluate_stages again with them"
        )

    return again
