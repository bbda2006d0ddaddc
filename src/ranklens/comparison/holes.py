"""What missing labels can do to a metric: *holes*
(retrieved documents that no label judges).

RAG label sets are sparse (a synthetic question often has one labelled chunk), so any other
relevant document a retriever finds counts as non-relevant, and a better retriever can score
worse. For each metric :func:`holes` gives three values on the same judged pair:

* ``value``: unjudged documents as non-relevant (trec_eval's default, what ``evaluate``
  reports);
* ``as_relevant``: every unjudged retrieved document taken as relevant at the relevance
  level (a unit of its own, counted in R and in the ideal ranking;
  :func:`~ranklens.judging.build.filled_pair`);
* ``judged_only``: the condensed list (unjudged documents removed, trec_eval ``-J``;
  Sakai, "Alternatives to bpref", SIGIR 2007).

For measures that reward relevant documents early (P, success, RR, DCG, AP at a fixed R...)
``value`` and ``as_relevant`` bound what any labelling of the holes gives; recall-oriented
measures can move either way when R grows, so the pair is shown as a range, not a proof.
Diversity measures have no ``as_relevant`` value (a hole has no subtopic): None.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..declared import (
    AT_LEAST_ONE,
    NONNEGATIVE,
    ParameterError,
    count,
    data,
    declare,
    renamed_option,
)
from ..errors import InputError, closest
from ..evaluation import Evaluation, MetricsLike, aggregate
from ..judging import Judged, JudgeOptions, filled_pair, judge
from ..metrics import Metric, parse_metrics
from ..metrics.trec_forms import METRICS
from ..model import QrelsLike, RunLike

WORST_QUERIES = declare("HoleRange.worst_queries", {
    "n": count(10, NONNEGATIVE, "how many queries (most holes first)"),
})  # fmt: skip


@dataclass
class HoleRange:
    """Per metric the three values of the module docstring (means, or sums for counts),
    per query too (``per_query[kind][metric]``, aligned with ``query_ids``), and the holes
    (unjudged retrieved documents) of each query in its top ``depth``."""

    metrics: list[str]
    query_ids: list[str]
    value: dict[str, float]
    as_relevant: dict[str, float | None]
    judged_only: dict[str, float]
    per_query: dict[str, dict[str, np.ndarray]] = field(repr=False)
    depth: int
    holes_at_depth: np.ndarray = field(repr=False)
    unjudged: int

    def __str__(self) -> str:
        """A table: each metric as scored, with the holes relevant, and judged only."""
        from ..text import visible

        width = max([len(m) for m in self.metrics] + [6])
        head = f"{'metric':<{width}}  {'as scored':>10}  {'if relevant':>11}  {'judged only':>11}"
        rows = [
            f"{visible(m):<{width}}  {self.value[m]:>10.4f}  "
            f"{'–' if self.as_relevant[m] is None else format(self.as_relevant[m], '.4f'):>11}  "
            f"{self.judged_only[m]:>11.4f}"
            for m in self.metrics
        ]
        worst = ", ".join(f"{visible(q)} ({n})" for q, n in self.worst_queries(5))
        tail = f"{self.unjudged} retrieved documents have no label"
        if worst:
            tail += f"; most in the top {self.depth}: {worst}"
        return "\n".join([head, *rows, tail])

    def range(self, metric: str) -> tuple[float, float]:
        """The lowest and highest of the metric's three values."""
        if metric not in self.value:
            near = closest(str(metric), self.metrics)
            hint = f"; did you mean {near!r}?" if near else ""
            raise ParameterError(
                f"HoleRange.range: metric must be one of {', '.join(map(repr, self.metrics))}, "
                f"got {metric!r}{hint}"
            )
        vals = [self.value[metric], self.judged_only[metric]]
        if self.as_relevant.get(metric) is not None:
            vals.append(self.as_relevant[metric])  # type: ignore[arg-type]
        return min(vals), max(vals)

    @WORST_QUERIES.checks
    def worst_queries(self, n: int = 10) -> list[tuple[str, int]]:
        """The ``n`` queries with the most holes in their top ``depth`` (most first, then
        by id), as ``(query id, holes)``; queries without holes are left out."""
        order = np.lexsort((np.arange(len(self.query_ids)), -self.holes_at_depth))
        return [
            (self.query_ids[i], int(self.holes_at_depth[i]))
            for i in order[:n].tolist()
            if self.holes_at_depth[i] > 0
        ]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for reports and JSON): the three values per metric, the unjudged
        count, the depth and the queries with the most holes there."""
        return {
            "unjudged": self.unjudged,
            "depth": self.depth,
            "metrics": {
                m: {
                    "value": self.value[m],
                    "as_relevant": self.as_relevant[m],
                    "judged_only": self.judged_only[m],
                }
                for m in self.metrics
            },
            "worst_queries": [list(x) for x in self.worst_queries()],
        }


def holes_at(judged: Judged, k: int) -> np.ndarray:
    """Per evaluated query, the retrieved documents in its top ``k`` that no label judges
    (repeats of a document count once, as a rank)."""
    n_q = judged.n_queries
    top = np.minimum(judged.lens, k)
    labelled = judged.e_rank <= k
    judged_top = np.bincount(judged.e_q[labelled], minlength=n_q)
    repeats = np.bincount(judged.rep_q[judged.rep_rank <= k], minlength=n_q)
    # a repeat of a judged document is an entry too; of an unjudged one, not a new hole
    rep_judged = np.bincount(judged.e_q[labelled & judged.e_repeat.astype(bool)], minlength=n_q)
    holes_top: np.ndarray = np.maximum(top - judged_top - (repeats - rep_judged), 0)
    return holes_top.astype(np.int64)


HOLES = declare("holes", {
    "qrels": data("the labels (anything ranklens.evaluate takes), or an Evaluation alone"),
    "run": data("the run (None with an Evaluation)"),
    "metrics": renamed_option(METRICS, none=True, description="metric names (None: an "
                              "Evaluation's own, else ndcg@10)"),
    "depth": count(10, AT_LEAST_ONE, "the top k whose unjudged documents are counted per query"),
    "options": data("a ranklens.JudgeOptions (else the judging keywords)"),
})  # fmt: skip


@HOLES.checks
def holes(
    qrels: QrelsLike | Evaluation,
    run: RunLike | None = None,
    metrics: MetricsLike | None = None,
    *,
    depth: int = 10,
    options: JudgeOptions | None = None,
    **judge_options: Any,
) -> HoleRange:
    """The range missing labels leave each metric in (see the module docstring).

    ``qrels``/``run``/``metrics`` as for :func:`ranklens.evaluate`, or an
    :class:`~ranklens.Evaluation` alone (its judged pair and metrics are reused).
    ``depth``: the top-k in which holes are counted per query.

    >>> r = holes({"q": ["a"]}, {"q": ["x", "a"]}, ["P@2", "rr"])
    >>> r.value["P@2"], r.as_relevant["P@2"], r.judged_only["P@2"]
    (0.5, 1.0, 0.5)
    >>> r.value["rr"], r.as_relevant["rr"], r.judged_only["rr"]
    (0.5, 1.0, 1.0)
    """
    if isinstance(qrels, Evaluation):
        ev = qrels if metrics is None else qrels.evaluate(metrics)
    else:
        if run is None:
            raise InputError("holes() needs a run (or an Evaluation)")
        judged = judge(qrels, run, options, **judge_options)
        ev = Evaluation.from_judged(judged, parse_metrics(metrics or ["ndcg@10"]))
    judged = ev.judged
    if judged.options.judged_only:
        raise InputError("holes() compares with the condensed lists itself; drop judged_only")
    try:
        filled: Judged | None = filled_pair(judged)
    except (InputError, ValueError):  # ties="expected" has no filled variant
        filled = None
    per_query: dict[str, dict[str, np.ndarray]] = {"value": {}, "as_relevant": {},
                                                   "judged_only": {}}  # fmt: skip
    as_relevant: dict[str, float | None] = {}
    judged_only: dict[str, float] = {}
    for mt in ev.metrics:
        name = mt.name
        per_query["value"][name] = ev.per_query[name]
        cond = replace(mt, judged_only=True).compute(judged)
        per_query["judged_only"][name] = cond
        judged_only[name] = aggregate(cond, mt.aggregate)
        as_relevant[name] = None
        if filled is not None and not _is_diversity(mt):
            vals = mt.compute(filled)
            per_query["as_relevant"][name] = vals
            as_relevant[name] = aggregate(vals, mt.aggregate)
    counts = judged.counts
    return HoleRange(
        metrics=ev.names,
        query_ids=ev.query_ids,
        value=dict(ev.aggregate),
        as_relevant=as_relevant,
        judged_only=judged_only,
        per_query=per_query,
        depth=depth,
        holes_at_depth=holes_at(judged, depth),
        unjudged=int(counts.hits_retrieved - counts.hits_labelled),
    )


def _is_diversity(mt: Metric) -> bool:
    return mt.family in DIVERSITY


DIVERSITY = frozenset({"alpha_ndcg", "alpha_dcg", "err_ia", "nerr_ia", "nrbp", "nnrbp",
                       "p_ia", "ap_ia", "strec"})  # fmt: skip
"""Families that read intents (no ``as_relevant`` value: a hole has no subtopic)."""
