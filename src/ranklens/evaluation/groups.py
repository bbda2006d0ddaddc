"""Several judgment groups (assessors) for one run: :func:`evaluate_judgment_groups`,
trec_eval's ``-R qrels_jg``, each group judged once and any metric averaged per query over
the groups that judged it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io import coerce_qrels, coerce_run, read_judgment_groups
from ..judging import Judged, JudgeOptions, judge
from ..judging.options import check_judging, check_options
from ..metrics import Metric, parse_metrics
from ..model import Qrels, QrelsLike, RunLike
from . import Evaluation, MetricsLike, versioned_metrics
from .options import EVALUATE_JUDGMENT_GROUPS


class GroupAveragedEvaluation(Evaluation):
    """An :class:`Evaluation` whose per-query values are averages over judgment groups
    (:func:`evaluate_judgment_groups`); ``judged`` is the run judged on every group's labels
    pooled (a document's highest grade), which fixes the queries and counts, and
    ``groups`` holds each group's judged pair."""

    def __init__(self, judged: Judged, groups: dict[str, Judged], metrics: list[Metric]):
        self.groups = groups
        at = {q: i for i, q in enumerate(map(str, judged.query_ids))}
        n = len(at)
        total = {mt.name: np.zeros(n) for mt in metrics}
        seen = np.zeros(n)
        for jg in groups.values():
            rows = np.array([at[q] for q in map(str, jg.query_ids)], dtype=np.int64)
            seen[rows] += 1
            for mt in metrics:
                total[mt.name][rows] += mt.compute(jg)
        values = {name: col / np.maximum(seen, 1) for name, col in total.items()}
        super().__init__(judged, metrics, values)

    def evaluate(self, metrics: MetricsLike) -> Evaluation:
        """More metrics, averaged over the same judgment groups."""
        return GroupAveragedEvaluation(self.judged, self.groups, parse_metrics(metrics))


@EVALUATE_JUDGMENT_GROUPS.checks
def evaluate_judgment_groups(
    groups: Mapping[str, QrelsLike] | str | Path,
    run: RunLike,
    metrics: MetricsLike,
    *,
    options: JudgeOptions | None = None,
    trec_eval_version: str = "10",
    **judge_options: Any,
) -> GroupAveragedEvaluation:
    """Evaluate ``run`` against several judgment groups (assessors) and average each
    query's value over the groups that judged it (trec_eval's ``-R qrels_jg``):

    ``value(q) = (1/|G_q|) · Σ_{g ∈ G_q} metric(q; labels of g)``, then the mean over
    queries as usual (Buckley's trec_eval, ``m_map_avgjg.c``).

    ``groups``: ``{group: labels}`` (anything :func:`evaluate` takes as labels) or a
    ``qrels_jg`` file (``qid jg docno rel``, read by
    :func:`~ranklens.io.read_judgment_groups`). Any metric may be averaged; trec_eval's
    names ``map_avgjg``, ``P_avgjg_k`` and ``Rprec_mult_avgjg_m`` are ``map``, ``P@k`` and
    ``Rprec_mult`` under the names trec_eval prints. Options as for :func:`evaluate`.

    >>> groups = {"alice": {"q1": {"d1": 1}}, "bob": {"q1": {"d2": 1}}}
    >>> evaluate_judgment_groups(groups, {"q1": ["d1", "d3"]}, ["map_avgjg"])["map_avgjg"]
    0.5
    """
    judge_options = check_judging(judge_options, "evaluate_judgment_groups")
    check_options(options, "evaluate_judgment_groups")
    parsed = versioned_metrics(metrics, trec_eval_version, judge_options)
    if isinstance(groups, (str, Path)):
        groups = read_judgment_groups(groups)
    labels = {str(jg): coerce_qrels(q) for jg, q in groups.items()}
    if not labels:
        raise InputError("evaluate_judgment_groups: no judgment groups given")
    for jg, q in labels.items():
        if q.grouped:
            raise InputError(f"judgment group {jg!r}: give graded labels, not grouped truth")
    the_run = coerce_run(run)
    pooled: dict[str, dict[str, int]] = {}
    for q in labels.values():
        for qid, row in q.to_dict().items():
            into = pooled.setdefault(qid, {})
            for doc, grade in row.items():
                into[doc] = max(grade, into.get(doc, grade))
    judged = judge(Qrels.from_dict(pooled), the_run, options, **judge_options)
    evaluated = set(map(str, judged.query_ids))
    per_group = {  # a group that judged none of the evaluated queries adds nothing
        jg: judge(q, the_run, options, require_shared=False, **judge_options)
        for jg, q in labels.items()
        if evaluated.intersection(map(str, q.query_ids))
    }
    return GroupAveragedEvaluation(judged, per_group, parsed)
