"""``ranklens.plan_labels``: how many human-labelled queries an interval of a given width
needs, with the judge (PPI++) and without it (:func:`~ranklens.estimation.ppi.labels_needed`
has the formulas)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..declared import (
    NONNEGATIVE,
    POSITIVE,
    STATISTICS,
    ParameterError,
    Range,
    count,
    data,
    declare,
    number,
    renamed_option,
    text,
)
from ..errors import InputError, closest
from ..settings import Statistics, outside_stacklevel, settled
from .ppi import labels_needed
from .records import Record

PLAN_LABELS = declare(
    "plan_labels",
    {
        "estimate": data("a pilot EstimateResult (None: give sd= and corr=)"),
        "width": number(0.1, POSITIVE, "the interval's total width, hi - lo"),
        "target": text(None, "keep one run or difference of the pilot", none=True),
        "metric": text(None, "keep one metric of the pilot", none=True),
        "stats": data(
            "the statistics settings: a ranklens.Statistics, read for its confidence "
            "(None: the pilot's confidence, else 0.95)"
        ),
        "confidence": renamed_option(
            STATISTICS["confidence"],
            default=None,
            none=True,
            description="confidence level (None: the pilot's, else 0.95)",
        ),
        "queries": count(None, Range(3, None), "queries in all (None: the pilot's)", none=True),
        "sd": number(None, POSITIVE, "the metric's standard deviation per query", none=True),
        "sd_judge": number(
            None, NONNEGATIVE, "the judge's values' standard deviation (None: sd)", none=True
        ),
        "corr": number(None, Range(-1, 1), "the judge's correlation with people", none=True),
    },
)


@dataclass(frozen=True)
class PlanRow(Record):
    """One target and metric of a :class:`LabelPlan`: the pilot's (or guessed) ``sd_human``,
    ``sd_judge`` and ``corr``; for an interval ``width`` wide, ``human_only`` (labels
    without a judge), ``ppi`` (with the judge; None when no number of the queries reaches
    the width) and ``ppi_unlimited`` (with unlimited judged queries); ``degenerate``: why
    the pilot's human sample is degenerate (then the numbers are a floor), else None."""

    target: str
    metric: str
    sd_human: float
    sd_judge: float
    corr: float
    width: float
    human_only: int
    ppi: int | None
    ppi_unlimited: int
    degenerate: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row as plain data (``degenerate`` only when there is one)."""
        out: dict[str, Any] = {
            "target": self.target,
            "metric": self.metric,
            "sd_human": self.sd_human,
            "sd_judge": self.sd_judge,
            "corr": self.corr,
        }
        if self.degenerate:
            out["degenerate"] = self.degenerate
        out.update(
            width=self.width,
            human_only=self.human_only,
            ppi=self.ppi,
            ppi_unlimited=self.ppi_unlimited,
        )
        return out


@dataclass
class LabelPlan:
    """Per target and metric: ``human_only`` (labels for the width without a judge),
    ``ppi`` (with the judge, when ``queries`` queries exist in all; None when no number
    below that reaches the width), ``ppi_unlimited`` (with unlimited judged queries), from
    the pilot's ``sd_human``, ``sd_judge`` and ``corr``."""

    width: float
    confidence: float
    queries: int | None
    rows: list[PlanRow]

    def needed(self, target: str | None = None, metric: str | None = None) -> int | None:
        """Labels PPI++ needs for one row (the first when not named)."""
        for r in self.rows:
            if target in (None, r.target) and metric in (None, r.metric):
                return r.ppi
        have = sorted({f"{r.target} {r.metric}".strip() for r in self.rows})
        raise ParameterError(
            f"LabelPlan.needed: target and metric must name a row ({', '.join(have)}), got "
            f"{target!r}, {metric!r}"
        )

    def __str__(self) -> str:
        head = (
            f"Human-labelled queries for a {self.confidence:.0%} interval {self.width:g} "
            f"wide (± {self.width / 2:g})"
            + (f", with {self.queries} queries in all" if self.queries else "")
            + ":"
        )
        lines = [head]
        for r in self.rows:
            with_judge = (
                f"{r.ppi} with the judge"
                if r.ppi is not None
                else "not reachable with the judge at this many queries"
            )
            lines.append(
                f"  {r.target} {r.metric}: {r.human_only} without a judge, "
                f"{with_judge} ({r.ppi_unlimited} with unlimited judged queries; "
                f"correlation {r.corr:.2f})"
                + (
                    f"; at least: the pilot's human sample is degenerate ({r.degenerate})"
                    if r.degenerate
                    else ""
                )
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "width": self.width,
            "confidence": self.confidence,
            "queries": self.queries,
            "rows": [r.to_dict() for r in self.rows],
        }

    def to_pandas(self) -> Any:
        """One row per target and metric."""
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows])


@PLAN_LABELS.checks
def plan_labels(
    estimate: Any = None,
    width: float = 0.1,
    *,
    target: str | None = None,
    metric: str | None = None,
    stats: Statistics | None = None,
    queries: int | None = None,
    sd: float | None = None,
    sd_judge: float | None = None,
    corr: float | None = None,
    **flat: Any,
) -> LabelPlan:
    """How many human-labelled queries an interval ``width`` wide (``hi − lo``) needs.

    From a pilot :class:`~ranklens.estimation.EstimateResult` (its human and judge standard
    deviations and their correlation, per run, difference and metric; ``target``/``metric``
    keep one), or from guesses: ``sd`` (of the metric per query), ``sd_judge`` (default
    ``sd``) and ``corr`` (the judge's correlation with people). ``queries``: how many
    queries exist in all (default: the pilot's); labelling ``n`` of them leaves the rest
    to the judge alone. ``stats=Statistics(confidence=0.9)``: the confidence level
    (default: the pilot's, else 0.95); ``confidence=`` given flat still works for one
    release, with a ``DeprecationWarning`` showing the new spelling.

    >>> plan = plan_labels(width=0.1, sd=0.3, corr=0.8, queries=1000)
    >>> plan.rows[0].human_only, plan.rows[0].ppi
    (139, 55)
    """
    flat = {k: v for k, v in PLAN_LABELS.check(flat).items() if v is not None}
    confidence = (
        settled("plan_labels", stats, flat, Statistics(), "stats").confidence
        if stats is not None or flat
        else None
    )
    if estimate is None:
        if sd is None or corr is None:
            raise InputError("plan_labels: give a pilot estimate, or sd= and corr= (and queries=)")
        pilot: list[dict[str, Any]] = [
            {
                "target": "metric",
                "metric": metric or "",
                "sd_human": sd,
                "sd_judge": sd if sd_judge is None else sd_judge,
                "corr": corr,
            }
        ]
        conf = confidence or 0.95
    else:
        from .result import EstimateResult

        if not isinstance(estimate, EstimateResult):
            raise ParameterError(
                "plan_labels: estimate must be an EstimateResult (what ranklens.estimate "
                f"returns) or None, got {type(estimate).__name__}"
            )
        conf = confidence or estimate.confidence
        total = estimate.n + estimate.big_n
        queries = queries or total
        pilot = [
            {
                "target": r.target,
                "metric": r.metric,
                "sd_human": r.method("human").se * math.sqrt(estimate.n),
                "sd_judge": r.method("naive").se * math.sqrt(total),
                "corr": r.corr or 0.0,
                **({"degenerate": r.degenerate} if r.degenerate else {}),
            }
            for r in estimate.rows
            if target in (None, r.target) and metric in (None, r.metric)
        ]
        if not pilot:
            have = [r.target for r in estimate.rows] + estimate.metrics
            near = closest(str(target if target is not None else metric), have)
            raise ParameterError(
                f"plan_labels: target and metric must name a row of the estimate "
                f"(targets {sorted(set(r.target for r in estimate.rows))}, metrics "
                f"{estimate.metrics}), got {target!r}, {metric!r}"
                + (f"; did you mean {near!r}?" if near else "")
            )
    weak = [p for p in pilot if p.get("degenerate")]
    if weak:
        from .result import DegenerateSampleWarning

        warnings.warn(
            f"plan_labels: the pilot's human sample is degenerate for {len(weak)} rows, first "
            f"{weak[0]['target']!r} {weak[0]['metric']} ({weak[0]['degenerate']}): its "
            "standard deviation is no guide, so those rows' numbers are a floor, not a plan",
            DegenerateSampleWarning,
            stacklevel=outside_stacklevel(),
        )
    sy = np.array([p["sd_human"] for p in pilot])
    sf = np.array([p["sd_judge"] for p in pilot])
    rho = np.array([p["corr"] for p in pilot])
    classic, with_judge, unlimited = labels_needed(width, sy, sf, rho, queries, conf)
    rows = [
        PlanRow(
            target=p["target"],
            metric=p["metric"],
            sd_human=p["sd_human"],
            sd_judge=p["sd_judge"],
            corr=p["corr"],
            width=width,
            human_only=max(int(c), 2),
            ppi=None if w < 0 else int(w),
            ppi_unlimited=max(int(u), 2),
            degenerate=p.get("degenerate"),
        )
        for p, c, w, u in zip(pilot, classic, with_judge, unlimited)
    ]
    return LabelPlan(width, conf, queries, rows)
