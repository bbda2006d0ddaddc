""":class:`EstimateResult`: what :func:`ranklens.estimate` found, as data (``to_dict``) that the
renderers (``estimate_text``, ``estimate_html``) and a comparison report's HTML page show."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MIN_HUMAN = 10
"""Fewest human-labelled queries an interval is given for (below, the CLT interval of the
rectifier is not to be trusted; :func:`ranklens.plan_labels` says how many a width needs)."""

SMALL_HUMAN = 30
"""Below this many human-labelled queries the estimate carries a note: the normal interval
may cover a little less than its nominal level (see docs/without-labels.md)."""

METHODS = ("naive", "human", "ppi", "ppi++")
"""The four estimates of each metric: the judge alone, the human sample alone, PPI, PPI++."""

METHOD_NAMES = {
    "naive": "judge only",
    "human": "human only",
    "ppi": "PPI",
    "ppi++": "PPI++",
}


@dataclass
class EstimateResult:
    """Per run and per difference from the baseline (``rows``), each metric estimated by
    :data:`METHODS` (``{"value", "lo", "hi", "se"}``, ``lambda`` for PPI/PPI++), the
    judge's measured bias on the human sample (``judge_bias``: judge minus human) and the
    correlation of the two; ``n`` human-labelled queries (``labelled``), ``big_n`` judged
    only; ``judge``: its agreement with the people (kappa, per grade; each member's for an
    ensemble); ``info``: what was counted (judge failures, human holes, ...)."""

    rows: list[dict[str, Any]]
    runs: list[str]
    baseline: str
    metrics: list[str]
    confidence: float
    n: int
    big_n: int
    depth: int
    judge: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)
    dataset: str = "dataset"
    labelled: list[str] = field(default_factory=list, repr=False)

    def row(self, target: str, metric: str) -> dict[str, Any]:
        """The row of a run (or ``"a − b"``, a difference from the baseline) and metric."""
        for r in self.rows:
            if r["target"] == target and r["metric"] == metric:
                return r
        raise KeyError(f"no estimate of {metric!r} for {target!r}")

    def value(self, target: str, metric: str, method: str = "ppi++") -> float:
        """One estimate (default PPI++)."""
        return self.row(target, metric)[method]["value"]

    def interval(self, target: str, metric: str, method: str = "ppi++") -> tuple[float, float]:
        """One interval (default PPI++)."""
        r = self.row(target, metric)[method]
        return r["lo"], r["hi"]

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
        if i.get("judge_failures"):
            out.append(
                f"The judge failed on {i['judge_failures']} pairs (recorded per pair); "
                f"{i.get('unjudged_pairs', 0)} pairs without a grade count as "
                "non-relevant in the judge's values (PPI corrects what that biases)."
            )
        elif i.get("unjudged_pairs"):
            out.append(
                f"{i['unjudged_pairs']} retrieved pairs have no judge grade and count "
                "as non-relevant in the judge's values."
            )
        if i.get("human_holes"):
            out.append(
                f"{i['human_holes']} of the {i['retrieved_in_human_queries']} pairs "
                f"retrieved for the human-labelled queries have no human label and "
                "count as non-relevant in the human values."
            )
        if i.get("human_outside"):
            out.append(
                f"{i['human_outside']} human-labelled queries are not in the dataset "
                "and were left out."
            )
        if i.get("judge_calls_resumed"):
            out.append(
                f"{i['judge_calls_resumed']} judge answers were read from the log, not asked again."
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
            "rows": self.rows,
            "judge": self.judge,
            "info": self.info,
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
        from ..comparison.renderers import get_renderer

        return get_renderer("estimate_text")(self.to_dict())

    def _repr_html_(self) -> str:
        from ..comparison.renderers import get_renderer

        return get_renderer("estimate_html")(self.to_dict())

    def to_html(self, path: str | Path | None = None) -> str:
        """A self-contained page (written to ``path`` when given)."""
        from ..comparison.renderers import get_renderer

        html = get_renderer("estimate_html")(self.to_dict(), page=True)
        if path is not None:
            Path(path).write_text(html, encoding="utf-8")
        return html

    def attach(self, report: Any) -> Any:
        """Put this estimate in a comparison :class:`~ranklens.Report` (its HTML page shows
        it, its notes name it); returns the report."""
        report.metadata["estimate"] = self.to_dict()
        return report

    def to_pandas(self) -> Any:
        """One row per (target, metric, method): value, lo, hi, se."""
        import pandas as pd

        return pd.DataFrame(
            [
                {"target": r["target"], "metric": r["metric"], "method": m, **r[m]}
                for r in self.rows
                for m in METHODS
            ]
        )
