"""The typed records of :func:`~ranklens.compare_snapshots`: one :class:`SnapshotAgreement`
per pair of snapshots and metric (Kendall's tau, its interval, the :class:`Swap` of each
pair of systems ordered differently, the relative drops), one :class:`ChangedLabel` per
label whose document changed, and the :class:`SnapshotSettings`. Each is read by attribute;
its ``to_dict()`` is the plain data the renderers and the saved JSON hold (the layout of
0.2, unchanged). Reading a record as a dict (``row["tau"]``) still works for one release,
with a ``DeprecationWarning`` naming the attribute."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ..records import DictReading


def plain_fields(record: Any) -> dict[str, Any]:
    """A dataclass record's fields as a dict, in their order."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


@dataclass(frozen=True)
class Swap(DictReading):
    """A pair of systems ordered one way on snapshot ``a`` and the other on ``b``: the one
    better on each, and the pair's corrected p-value on each (None: not tested)."""

    better_on_a: str
    better_on_b: str
    p_a: float | None
    p_b: float | None


@dataclass(frozen=True)
class SnapshotAgreement(DictReading):
    """Snapshots ``a`` and ``b`` on ``metric`` over the ``n`` queries both evaluated:
    Kendall's ``tau`` between the systems' means, its bootstrap interval ``low``-``high``,
    the ``swaps`` and each system's relative ``drop`` (None where its value on ``a`` is 0)."""

    a: str
    b: str
    metric: str
    n: int
    tau: float
    low: float
    high: float
    swaps: list[Swap] = field(default_factory=list)
    drop: dict[str, float | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "metric": self.metric,
            "n": self.n,
            "tau": self.tau,
            "low": self.low,
            "high": self.high,
            "swaps": [s.to_dict() for s in self.swaps],
            "drop": dict(self.drop),
        }


@dataclass(frozen=True)
class ChangedLabel(DictReading):
    """A label (``query``, ``doc``, ``grade``) whose document was ``"added"``,
    ``"removed"`` or ``"changed"`` between snapshots ``a`` and ``b``."""

    a: str
    b: str
    query: str
    doc: str
    grade: int
    change: str


@dataclass(frozen=True)
class SnapshotSettings(DictReading):
    """What :func:`~ranklens.compare_snapshots` ran with: tau's interval level
    (``confidence``), resamples and seed, the paired test, and whether ``corpora`` were
    given."""

    confidence: float
    n_resamples: int
    seed: int | None
    test: str
    corpora: bool
