"""The typed records of an estimate: :class:`MethodEstimate` (one method's value and
interval), :class:`EstimateRow` (a run or difference and metric, every method),
:class:`EstimateCounts` and :class:`DegenerateNote` (what was counted),
:class:`JudgeAgreement` and :class:`GradeAgreement` (the judge against the people). Each is
read by attribute; its ``to_dict()`` is the plain data the renderers and JSON files hold."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ..declared import ParameterError
from ..errors import closest
from ..records import DictReading

METHODS = ("naive", "human", "ppi", "ppi++")
"""The four estimates of each metric: the judge alone, the human sample alone, PPI, PPI++."""

ESTIMATES = (*METHODS, "judge_bias")
"""Every estimate a row holds: :data:`METHODS` and the judge's measured bias."""


Record = DictReading
"""A record read by attribute (the house's one base: :class:`ranklens.records.DictReading`)."""


@dataclass(frozen=True)
class MethodEstimate(Record):
    """One estimate: ``value``, its interval ``lo``/``hi``, its standard error ``se``, and
    ``lam`` (PPI's and PPI++'s λ; None for the others)."""

    value: float
    lo: float
    hi: float
    se: float
    lam: float | None = None

    def to_dict(self) -> dict[str, float]:
        """``{"value", "lo", "hi", "se"}``, and ``"lambda"`` for PPI/PPI++."""
        out = {"value": self.value, "lo": self.lo, "hi": self.hi, "se": self.se}
        if self.lam is not None:
            out["lambda"] = self.lam
        return out


@dataclass(frozen=True)
class EstimateRow(Record):
    """One run (``kind="run"``) or difference from the baseline (``"difference"``,
    ``target`` ``"a − b"``) and metric: each estimate of :data:`ESTIMATES` by name
    (``estimates["ppi++"]``, or :meth:`method`), the correlation ``corr`` of the human and
    judge values (None where either is constant), and for a degenerate human sample
    ``degenerate`` (why) and ``widened`` (whether the interval could be widened)."""

    target: str
    kind: str
    metric: str
    corr: float | None
    estimates: Mapping[str, MethodEstimate]
    degenerate: str | None = None
    widened: bool | None = None

    def method(self, name: str) -> MethodEstimate:
        """One estimate by method (``"naive"``, ``"human"``, ``"ppi"``, ``"ppi++"``,
        ``"judge_bias"``); another name is an error naming the closest."""
        if not isinstance(name, str) or name not in self.estimates:
            near = closest(name, ESTIMATES) if isinstance(name, str) else None
            raise ParameterError(
                f"EstimateResult: method must be one of {', '.join(map(repr, ESTIMATES))}, "
                f"got {name!r}" + (f"; did you mean {near!r}?" if near else "")
            )
        return self.estimates[name]

    def spelled(self, key: str) -> str:
        """How ``row[key]`` is read now: ``.method(key)`` for an estimate, else the
        attribute."""
        return f".method({key!r})" if key in ESTIMATES else f".{key}"

    def to_dict(self) -> dict[str, Any]:
        """The row as plain data: ``target``, ``kind``, ``metric``, ``corr``, each method's
        ``{"value", "lo", "hi", "se"}`` (``lambda`` for PPI/PPI++), and ``degenerate``/
        ``widened`` when the human sample is degenerate."""
        out: dict[str, Any] = {
            "target": self.target,
            "kind": self.kind,
            "metric": self.metric,
            "corr": self.corr,
        }
        for name, got in self.estimates.items():
            out[name] = got.to_dict()
        if self.degenerate is not None:
            out["degenerate"] = self.degenerate
            out["widened"] = bool(self.widened)
        return out


@dataclass(frozen=True)
class DegenerateNote(Record):
    """A row whose human sample is degenerate: its ``target``, ``metric``, ``why`` and
    whether its intervals were ``widened``."""

    target: str
    metric: str
    why: str
    widened: bool

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class EstimateCounts(Record):
    """What an estimate counted: judge calls that failed (``judge_failures``) and were read
    from the log (``judge_calls_resumed``), retrieved pairs without a judge grade
    (``unjudged_pairs``) or without a human label in the human-labelled queries
    (``human_holes`` of ``retrieved_in_human_queries``), human-labelled queries outside the
    dataset (``human_outside``), the grade scale (``grades``) and the degenerate rows."""

    judge_failures: int = 0
    unjudged_pairs: int = 0
    human_holes: int = 0
    retrieved_in_human_queries: int = 0
    human_outside: int = 0
    judge_calls_resumed: int = 0
    grades: list[int] = field(default_factory=list)
    degenerate: list[DegenerateNote] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["degenerate"] = [d.to_dict() for d in self.degenerate]
        return out


@dataclass(frozen=True)
class GradeAgreement(Record):
    """The pairs people graded ``grade``: how many (``pairs``), the share the judge graded
    alike (``same``: its recall of the grade) and the judge's mean grade there."""

    grade: int
    pairs: int
    same: float
    judge_mean: float

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class JudgeAgreement(Record):
    """How a judge (``source``) agrees with the people on the ``n`` pairs both graded:
    Cohen's ``kappa``, the linear ``weighted_kappa``, the ``observed`` share of equal
    grades, ``per_grade`` (:class:`GradeAgreement`), the ``confusion`` matrix over
    ``grades``; None throughout when they share no pair (``n`` 0). ``members``: each
    member's agreement for an ensemble (None for one judge)."""

    source: str
    n: int
    kappa: float | None = None
    weighted_kappa: float | None = None
    observed: float | None = None
    per_grade: list[GradeAgreement] = field(default_factory=list)
    confusion: list[list[int]] | None = None
    grades: list[int] | None = None
    members: list[JudgeAgreement] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"source", "n"}``, the measures when they share a pair, ``members`` for an
        ensemble."""
        out: dict[str, Any] = {"source": self.source, "n": self.n}
        if self.n:
            out.update(
                kappa=self.kappa,
                weighted_kappa=self.weighted_kappa,
                observed=self.observed,
                per_grade=[g.to_dict() for g in self.per_grade],
                confusion=self.confusion,
                grades=self.grades,
            )
        if self.members is not None:
            out["members"] = [m.to_dict() for m in self.members]
        return out
