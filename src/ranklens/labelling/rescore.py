"""Re-scoring after the holes are filled: the same runs compared under the old labels and
the new, and which conclusions changed (a metric's value, which run leads, which
differences are significant)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..comparison import Report, compare
from ..comparison.settings_use import STATS_OPTION, split_statistics, statistics
from ..declared import STATISTICS, data, declare
from ..escape import html, terminal
from ..evaluation import MetricsLike
from ..metrics.trec_forms import METRICS
from ..settings import Statistics


@dataclass
class Change:
    """One conclusion under both label sets. ``kind``: ``"value"`` (a run's metric),
    ``"leader"`` (the best run on a metric) or ``"significance"`` (a pair's verdict);
    ``changed``: whether the conclusion differs."""

    kind: str
    metric: str
    run: str
    other: str | None
    before: Any
    after: Any
    changed: bool

    def describe(self, digits: int = 4) -> str:
        if self.kind == "value":
            d = self.after - self.before
            return (
                f"{self.run} {self.metric}: {self.before:.{digits}f} -> {self.after:.{digits}f} "
                f"({d:+.{digits}f})"
            )
        if self.kind == "leader":
            return f"best on {self.metric}: {self.before} -> {self.after}"
        return f"{self.run} vs {self.other} on {self.metric}: {self.before} -> {self.after}"


@dataclass
class Rescoring:
    """``before``/``after``: the two :class:`~ranklens.Report`s; ``changes``: every
    conclusion compared (:class:`Change`), the changed ones first in :meth:`changed`."""

    before: Report
    after: Report
    changes: list[Change] = field(default_factory=list)

    def changed(self) -> list[Change]:
        """The conclusions that differ: leaders and verdicts first, then values by size."""
        moved = [c for c in self.changes if c.changed]
        rank = {"leader": 0, "significance": 1, "value": 2}
        return sorted(
            moved,
            key=lambda c: (rank[c.kind], -abs(c.after - c.before) if c.kind == "value" else 0),
        )

    def to_dict(self) -> dict[str, Any]:
        """Every conclusion compared, as plain data."""
        return {"changes": [c.__dict__ for c in self.changes]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_text(self, digits: int = 4) -> str:
        moved = self.changed()
        head = (
            f"Re-scored {len(self.after.runs)} runs on {len(self.after.query_ids)} queries: "
            f"{len(moved)} of {len(self.changes)} conclusions changed."
        )
        lines = [head]
        lines += [f"  * {terminal(c.describe(digits))}" for c in moved]
        steady = [c for c in self.changes if not c.changed and c.kind != "value"]
        if steady:
            lines.append("Unchanged: " + "; ".join(terminal(c.describe(digits)) for c in steady))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        moved = self.changed()
        items = "".join(f"<li>{html(c.describe())}</li>" for c in moved)
        return (
            '<div class="rl-rescore"><p>'
            f"{len(moved)} of {len(self.changes)} conclusions changed after re-scoring.</p>"
            f"<ul>{items}</ul></div>"
        )


def verdict(report: Report, run: str, other: str, metric: str) -> str:
    """``"run better"``, ``"other better"`` or ``"no significant difference"``."""
    c = report.comparison(run, other, metric)
    if c is None or c.winner is None:
        return "no significant difference"
    return f"{c.winner} better"


def leader(report: Report, metric: str) -> str:
    """The run with the highest value of ``metric`` (ties: every one, joined)."""
    vals = {r: report.value(r, metric) for r in report.runs}
    top = max(vals.values())
    return ", ".join(r for r, v in vals.items() if v == top)


RESCORE = declare("rescore", {
    "before": data("the labels before: anything ranklens.compare takes"),
    "after": data("the labels after (merged with the new judgments)"),
    "runs": data("{name: run} or a list of runs"),
    "metrics": METRICS,
    "stats": STATS_OPTION,
    **STATISTICS,
})  # fmt: skip


@RESCORE.checks
def rescore(
    before: Any,
    after: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: MetricsLike = ("ndcg@10", "P@10", "mrr@10"),
    *,
    stats: Statistics | None = None,
    **compare_options: Any,
) -> Rescoring:
    """Compare ``runs`` under the ``before`` labels and the ``after`` labels (anything
    :func:`ranklens.compare` takes, e.g. the labels merged with new judgments) with the same
    settings (``stats=ranklens.Statistics(...)`` and the other options of ``compare``), and
    list which conclusions changed. The flat statistics keywords (``test=``...) still work
    for one release with a ``DeprecationWarning`` showing the new spelling.

    >>> r = rescore({"q": ["a"]}, {"q": {"a": 1, "x": 1}},
    ...             {"r1": {"q": ["x", "a"]}, "r2": {"q": ["a", "y"]}}, ["P@1"],
    ...             stats=Statistics(test="t"))
    >>> [c.describe() for c in r.changed()]
    ['best on P@1: r2 -> r1, r2', 'r1 P@1: 0.0000 -> 1.0000 (+1.0000)']
    """
    flat, compare_options = split_statistics(compare_options)
    settings = statistics("rescore", stats, RESCORE.check(flat))
    rep_b = compare(before, runs, metrics, stats=settings, **compare_options)
    rep_a = compare(after, runs, metrics, stats=settings, **compare_options)
    changes: list[Change] = []
    for m in rep_a.metrics:
        lb, la = leader(rep_b, m), leader(rep_a, m)
        changes.append(Change("leader", m, la, None, lb, la, lb != la))
        for c in rep_a.comparisons:
            if c.metric != m:
                continue
            vb, va = verdict(rep_b, c.run, c.other, m), verdict(rep_a, c.run, c.other, m)
            changes.append(Change("significance", m, c.run, c.other, vb, va, vb != va))
        for r in rep_a.runs:
            b, a = rep_b.value(r, m), rep_a.value(r, m)
            changes.append(Change("value", m, r, None, b, a, abs(a - b) > 1e-12))
    return Rescoring(rep_b, rep_a, changes)
