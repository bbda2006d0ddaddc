""":class:`EstimateResult`: what :func:`ranklens.estimate` found, as typed records
(:class:`EstimateRow`, one per run or difference and metric, each holding a
:class:`~.records.MethodEstimate` per method; :class:`EstimateCounts`, what was counted) and as data
(``to_dict``) that the renderers (``estimate_text``, ``estimate_html``) and a comparison
report's HTML page show."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..declared import ParameterError
from ..errors import RanklensWarning, closest
from .records import (
    METHODS,
    EstimateCounts,
    EstimateRow,
    JudgeAgreement,
)

MIN_HUMAN = 10
"""Fewest human-labelled queries an interval is given for (below, the CLT interval of the
rectifier is not to be trusted; :func:`ranklens.plan_labels` says how many a width needs)."""

SMALL_HUMAN = 30
"""Below this many human-labelled queries the estimate carries a note: the normal interval
may cover a little less than its nominal level (see docs/without-labels.md)."""


class DegenerateSampleWarning(RanklensWarning):
    """The human sample of an estimate shows (almost) no spread for some run and metric
    (all one value, or nearly): its interval was widened by a bound from the metric's range
    (:mod:`ranklens.estimation.ppi`), and the result's notes name each such estimate."""


METHOD_NAMES = {
    "naive": "judge only",
    "human": "human only",
    "ppi": "PPI",
    "ppi++": "PPI++",
}


@dataclass
class EstimateResult:
    """Per run and per difference from the baseline (``rows``: :class:`EstimateRow`),
    each metric estimated by :data:`METHODS` (:class:`~.records.MethodEstimate`: value, interval,
    standard error, λ for PPI/PPI++), the judge's measured bias on the human sample
    (``judge_bias``: judge minus human) and the correlation of the two; ``n``
    human-labelled queries (``labelled``), ``big_n`` judged only; ``judge``: its agreement
    with the people (:class:`JudgeAgreement`: kappa, per
    grade; each member's for an ensemble); ``info``: what was
    counted (:class:`EstimateCounts`: judge failures, human holes, ...)."""

    rows: list[EstimateRow]
    runs: list[str]
    baseline: str
    metrics: list[str]
    confidence: float
    n: int
    big_n: int
    depth: int
    judge: JudgeAgreement
    info: EstimateCounts = field(default_factory=EstimateCounts)
    dataset: str = "dataset"
    labelled: list[str] = field(default_factory=list, repr=False)

    def row(self, target: str, metric: str) -> EstimateRow:
        """The row of a run (or ``"a − b"``, a difference from the baseline) and metric; a
        target or metric the estimate does not hold is an error naming the closest."""
        targets = list(dict.fromkeys(r.target for r in self.rows))
        for name, got, have in (("target", target, targets), ("metric", metric, self.metrics)):
            if not isinstance(got, str) or got not in have:
                near = closest(got, have) if isinstance(got, str) else None
                raise ParameterError(
                    f"EstimateResult: {name} must be one of {', '.join(map(repr, have))}, "
                    f"got {got!r}" + (f"; did you mean {near!r}?" if near else "")
                )
        return next(r for r in self.rows if r.target == target and r.metric == metric)

    def value(self, target: str, metric: str, method: str = "ppi++") -> float:
        """One estimate (default PPI++)."""
        return self.row(target, metric).method(method).value

    def interval(self, target: str, metric: str, method: str = "ppi++") -> tuple[float, float]:
        """One interval (default PPI++)."""
        r = self.row(target, metric).method(method)
        return r.lo, r.hi

    def notes(self) -> list[str]:
        """Every condition worth knowing, one sentence each."""
        i, out = self.info, []
        if self.n < SMALL_HUMAN:
            out.append(
                f"Only {self.n} human-labelled queries: the normal interval may cover "
                "a little less than its nominal level (plan_labels says how many a "
                "width needs)."
            )
        if self.big_n == 0:
            out.append(
                "Every query is human-labelled: PPI adds nothing, the human estimate stands."
            )
        if i.judge_failures:
            out.append(
                f"The judge failed on {i.judge_failures} pairs (an error, a timeout, or "
                f"an answer that is not a grade of the scale {_scale(i.grades)}: "
                "recorded per pair, never taken); "
                f"{i.unjudged_pairs} pairs without a grade count as "
                "non-relevant in the judge's values (PPI corrects what that biases)."
            )
        elif i.unjudged_pairs:
            out.append(
                f"{i.unjudged_pairs} retrieved pairs have no judge grade and count "
                "as non-relevant in the judge's values."
            )
        if i.human_holes:
            out.append(
                f"{i.human_holes} of the {i.retrieved_in_human_queries} pairs "
                f"retrieved for the human-labelled queries have no human label and "
                "count as non-relevant in the human values."
            )
        if i.human_outside:
            out.append(
                f"{i.human_outside} human-labelled queries are not in the dataset "
                "and were left out."
            )
        for d in i.degenerate:
            out.append(
                f"The human sample is degenerate for {d.target} {d.metric}: {d.why}, "
                "so a normal interval would be a point or too narrow; "
                + (
                    "its intervals are widened to hold a bound from the metric's range."
                    if d.widened
                    else "the metric has no upper bound, so they could not be widened: "
                    "label more queries."
                )
            )
        if i.judge_calls_resumed:
            out.append(
                f"{i.judge_calls_resumed} judge answers were read from the log, not asked again."
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (what the renderers and ``Report.metadata`` hold)."""
        return {
            "dataset": self.dataset,
            "runs": self.runs,
            "baseline": self.baseline,
            "metrics": self.metrics,
            "confidence": self.confidence,
            "n": self.n,
            "N": self.big_n,
            "depth": self.depth,
            "rows": [r.to_dict() for r in self.rows],
            "judge": self.judge.to_dict(),
            "info": self.info.to_dict(),
            "notes": self.notes(),
            "labelled": self.labelled,
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.to_json(indent=1), encoding="utf-8")
        return path

    def __str__(self) -> str:
        from ..comparison import get_renderer

        text: str = get_renderer("estimate_text")(self.to_dict())
        return text

    def _repr_html_(self) -> str:
        from ..comparison import get_renderer

        html: str = get_renderer("estimate_html")(self.to_dict())
        return html

    def to_html(self, path: str | Path | None = None) -> str:
        """A self-contained page (written to ``path`` when given)."""
        from ..comparison import get_renderer

        html: str = get_renderer("estimate_html")(self.to_dict(), page=True)
        if path is not None:
            Path(path).write_text(html, encoding="utf-8")
        return html

    def attach(self, report: Any) -> Any:
        """Put this estimate in a comparison :class:`~ranklens.Report` (its HTML page shows
        it, its notes name it); returns the report."""
        report.metadata["estimate"] = self.to_dict()
        return report

    def to_pandas(self) -> Any:
        """One row per (target, metric, method): value, lo, hi, se (and lambda for
        PPI/PPI++)."""
        import pandas as pd

        return pd.DataFrame(
            [
                {"target": r.target, "metric": r.metric, "method": m, **r.method(m).to_dict()}
                for r in self.rows
                for m in METHODS
            ]
        )


def _scale(grades: list[int]) -> str:
    if not grades:
        return "given"
    return (
        f"{grades[0]}-{grades[-1]}"
        if grades == list(range(grades[0], grades[-1] + 1))
        else str(grades)
    )
