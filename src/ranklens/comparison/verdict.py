"""A verdict against a target, as data: what :mod:`.targets` computes and every renderer
shows (met, missed or not yet known; the bounds, their method and level; the queries that
would settle it). No computation here, so the report can read verdicts back from JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..escape import terminal

DESCRIPTIONS = {
    "exact": "exact binomial (Clopper-Pearson)",
    "wilson": "Wilson score",
    "t+": "Student t with one worst-case query",
    "t": "Student t",
    "bootstrap": "percentile bootstrap",
}
"""Each bound method in words (:mod:`.bounds`)."""

STATUSES = ("met", "missed", "unknown")
WORDS = {"met": "met", "missed": "missed", "unknown": "not yet known"}


@dataclass
class TargetVerdict:
    """One target on one run: ``status`` (``met``, ``missed`` or ``unknown``), the mean
    ``value`` over ``n`` queries, the one-sided bounds ``lower``/``upper`` at
    ``confidence`` by ``method``, and for an unknown one the queries ``needed`` in all
    (``further`` beyond ``n``) to settle it at the observed mean and spread with
    ``power``; ``attainable`` is an ideal ranking's mean on these labels."""

    metric: str
    op: str
    target: float
    status: str
    value: float
    n: int
    lower: float
    upper: float
    method: str
    confidence: float
    needed: int | None = None
    power: float = 0.8
    run: str | None = None
    why: str = ""
    source: str = ""
    attainable: float | None = None

    @property
    def further(self) -> int | None:
        return None if self.needed is None else max(self.needed - self.n, 0)

    @property
    def word(self) -> str:
        return WORDS[self.status]

    @property
    def method_text(self) -> str:
        return f"one-sided {self.confidence:.0%}, {DESCRIPTIONS.get(self.method, self.method)}"

    def reason(self) -> str:
        """Why the verdict is what it is, in one clause."""
        bounds = f"[{self.lower:.4f}, {self.upper:.4f}]"
        if self.attainable is not None and self._beyond(self.attainable):
            return f"cannot be met on these labels: an ideal ranking scores {self.attainable:.4f}"
        if self.status == "met":
            side = self.lower if self.op == ">=" else self.upper
            return f"{'lower' if self.op == '>=' else 'upper'} bound {side:.4f} clears it"
        if self.status == "missed":
            which, side = ("upper", self.upper) if self.op == ">=" else ("lower", self.lower)
            return f"{which} bound {side:.4f} is on the wrong side"
        if self.needed is None:
            return f"bounds {bounds} straddle it; the mean sits on the target"
        leaning = "met" if (self.value > self.target) == (self.op == ">=") else "missed"
        return (
            f"bounds {bounds} straddle it; about {self.further:,} more labelled queries "
            f"({self.needed:,} in all) would show it {leaning} at the observed mean and "
            f"spread ({self.power:.0%} power)"
        )

    def _beyond(self, best: float) -> bool:
        return self.target > best + 1e-12 if self.op == ">=" else self.target < best - 1e-12

    def line(self) -> str:
        """``mrr@10 >= 0.8: met (0.8421 over 40 queries; lower bound 0.8120 clears it)``."""
        who = f"{terminal(self.run)}: " if self.run else ""
        return (
            f"{who}{self.metric} {self.op} {self.target:g}: {self.word} ({self.value:.4f} over "
            f"{self.n} queries; {self.reason()})"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def summary(verdicts: Sequence[TargetVerdict]) -> str:
        """The level and bound methods of ``verdicts``, as one clause."""
        return targets_summary(verdicts)


def verdict_from_dict(data: Mapping[str, Any]) -> TargetVerdict:
    """A :class:`TargetVerdict` from its :meth:`~TargetVerdict.to_dict` form."""
    return TargetVerdict(**dict(data))


def targets_summary(verdicts: Sequence[TargetVerdict]) -> str:
    """The method line every rendering carries: level and bound methods used."""
    if not verdicts:
        return ""
    first = verdicts[0]
    methods = sorted({DESCRIPTIONS.get(v.method, v.method) for v in verdicts})
    return (
        f"one-sided {first.confidence:.0%} bounds ({', '.join(methods)}); met only when the "
        f"bound clears the target, missed only when the other bound is below it"
    )


def report_verdicts(report: Any) -> dict[str, list[TargetVerdict]]:
    """``{run: [TargetVerdict, ...]}`` of a report compared with a profile ({} without)."""
    saved = (report.metadata.get("targets") or {}).get("verdicts") or {}
    return {r: [verdict_from_dict(v) for v in vs] for r, vs in saved.items()}
