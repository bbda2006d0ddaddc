"""Which way each gated metric is better, and the gate's limits on a mean.

A metric is better higher (nDCG, MRR) or, for a rate of something unwanted declared
``lower_is_better`` in the registry (``outdated@k``, ``undated@k``, ``unj@k``), better
lower. :class:`Sense` holds that direction and the gate's words for it; the gate flips the
per-query differences once by it (the change in the better direction, ``sign · (now −
baseline)``), so a margin is the drop allowed on the first kind and the rise allowed on the
second, and every test, interval, verdict and power figure is otherwise the same.

A limit on the mean follows the direction too: a **floor** (``ndcg@10 >= 0.65``,
``floors=``) on a metric better higher, a **ceiling** (``outdated@10 <= 0.1``,
``ceilings=``) on one better lower, as a profile's ``>=`` and ``<=`` targets say. In
confident mode (``gate(..., floor_confidence=0.95)``, ``ranklens gate --floor-confidence
0.95``) a floor passes only when the one-sided lower bound of the run's mean clears it and
fails only when the upper bound lies below it; a ceiling reads the bounds the other way
round (passes only when the upper bound lies below it, fails only when the lower bound is
above it); otherwise the limit is inconclusive with the queries that would settle it: the
same verdicts and bounds as a profile's targets (:mod:`.targets`, :mod:`.bounds`). Without
it, a limit compares the mean itself. A profile's targets serve as limits (``profile=``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..declared import ParameterError
from ..errors import InputError
from ..metrics import parse_metric
from ..profiles import Profile, Target
from .targets import check_values, resolve_profile
from .verdict import DESCRIPTIONS


@dataclass(frozen=True)
class Sense:
    """Which way a metric is better and the gate's words for it: ``sign`` turns ``now −
    baseline`` into the change in the better direction; ``loss``/``lost`` name a
    regression (a drop, or a rise); ``limit`` and ``op`` name the bound on the mean (a
    floor ``>=``, or a ceiling ``<=``); ``beyond`` is the wrong side of it and ``within``
    the right one; ``param`` and ``flag`` are how :func:`ranklens.gate` and ``ranklens
    gate`` take such limits."""

    better: str
    sign: float
    loss: str
    lost: str
    limit: str
    op: str
    beyond: str
    within: str
    param: str
    flag: str

    def breaks(self, value: float, limit: float) -> bool:
        """Whether a mean ``value`` lies on the wrong side of the ``limit``."""
        return value < limit if self.sign > 0 else value > limit

    def limit_reason(self, value: float, limit: float) -> str:
        """``0.4000 is below the floor 0.5`` / ``0.3000 is above the ceiling 0.1``."""
        return f"{value:.4f} is {self.beyond} the {self.limit} {limit:g}"


HIGHER = Sense("higher", 1.0, "drop", "dropped", "floor", ">=", "below", "above", "floors",
               "--floor")  # fmt: skip
LOWER = Sense("lower", -1.0, "rise", "rose", "ceiling", "<=", "above", "below", "ceilings",
              "--ceiling")  # fmt: skip

KEPT_REASONS = ("above the floor", "below the ceiling")
"""A reason the point-estimate rule writes that a confident limit replaces."""


def sense(metric: str) -> Sense:
    """:data:`LOWER` for a metric whose family is ``lower_is_better``, else :data:`HIGHER`."""
    return LOWER if parse_metric(metric).spec.lower_is_better else HIGHER


WORST_FIRST = ("fail", "inconclusive", "pass")


def settle(verdict: Any) -> None:
    """A verdict's status from its rules' outcomes (``verdict.rules``: ``{rule: status}``),
    the worst first, and ``decided_by``: the rules that gave it (``"margin and floor"``)."""
    outcomes = verdict.rules
    if not outcomes:
        return
    status = next(s for s in WORST_FIRST if s in outcomes.values())
    verdict.status = status
    verdict.decided_by = " and ".join(r for r, s in outcomes.items() if s == status)


def gate_limits(
    floors: float | Mapping[str, float] | None,
    ceilings: float | Mapping[str, float] | None,
    names: Sequence[str],
) -> dict[str, float]:
    """``{metric: limit}`` from ``floors`` and ``ceilings`` (each one number for every
    gated metric, or ``{metric: value}``), each checked against the metric's direction: a
    floor on a metric better lower (or a ceiling on one better higher) is an error naming
    the metric and the parameter to use, as is a limit on a metric the gate does not
    measure or a metric given both."""
    out: dict[str, float] = {}
    for given, want in ((floors, HIGHER), (ceilings, LOWER)):
        if given is None:
            continue
        if isinstance(given, Mapping):
            pairs = {parse_metric(m).name: float(v) for m, v in given.items()}
        else:
            pairs = {m: float(given) for m in names}
        unknown = sorted(set(pairs) - set(names))
        if unknown:
            raise ParameterError(
                f"gate: {want.param} for {unknown}, which the gate does not measure "
                f"(it measures {', '.join(names)})"
            )
        for m, value in pairs.items():
            s = sense(m)
            span = parse_metric(m).spec.value_range
            if not math.isfinite(value) or value not in span:
                raise ParameterError(
                    f"gate: the {want.limit} of {m} must be a number in {span} (the values "
                    f"{m} takes), got {value!r}"
                )
            if s is not want:
                raise InputError(
                    f"{m} is better {s.better}, so its limit is a {s.limit} (mean {s.op} "
                    f"value), not one of the {want.param} ({want.flag}): give "
                    f"{s.param}={{{m!r}: {value:g}}} ({s.flag} {m}={value:g})"
                )
            if m in out:
                raise InputError(f"{m}: given both a floor and a ceiling; give one")
            out[m] = value
    return out


def profile_floors(
    profile: Any,
    floors: Mapping[str, float] | None,
    metrics: Sequence[str],
    ceilings: Mapping[str, float] | None = None,
) -> tuple[list[str], dict[str, float], dict[str, float]]:
    """The gate's metrics, floors and ceilings with a profile's ``>=`` targets as floors and
    its ``<=`` targets as ceilings (limits given explicitly win); the profile's target
    metrics are added to the gated ones. A target whose direction disagrees with its
    metric's (``ndcg@10 <= 0.9``) is an error."""
    prof = resolve_profile(profile, None)
    names = [parse_metric(m).name for m in ([metrics] if isinstance(metrics, str) else metrics)]
    out: dict[str, dict[str, float]] = {">=": {}, "<=": {}}
    for t in prof.targets:
        s = sense(t.metric)
        if t.op != s.op:
            raise InputError(
                f"profile {prof.name!r}: the target {t} bounds {t.metric} the wrong way for "
                f"the gate ({t.metric} is better {s.better}, so the gate's limit on it is "
                f"'{s.op}'); check it with ranklens.evaluate(..., profile=...)"
            )
        out[t.op][t.metric] = t.value
        if t.metric not in names:
            names.append(t.metric)
    for op, given in ((">=", floors), ("<=", ceilings)):
        named = {parse_metric(m).name: float(v) for m, v in (given or {}).items()}
        for m in named:  # an explicit limit replaces the profile's on that metric
            out[">="].pop(m, None)
            out["<="].pop(m, None)
        out[op].update(named)
    return names, out[">="], out["<="]


def apply_confident_floors(
    verdicts: Sequence[Any],
    per_query: Mapping[str, np.ndarray],
    limits: Mapping[str, float],
    confidence: float,
    method: str = "auto",
    power: float = 0.8,
) -> None:
    """Judge each verdict's floor or ceiling (``limits``: ``{metric: value}``, its kind by
    the metric's :func:`sense`) by its confidence bounds (in place): *missed* fails the
    metric, *not yet known* makes a passing metric inconclusive (with the queries that
    would settle it), *met* leaves it as the margin rule left it."""
    for v in verdicts:
        limit = limits.get(v.metric)
        if limit is None:
            continue
        s = sense(v.metric)
        target = Profile(
            "limits", targets=(Target(v.metric, limit, source=f"gate {s.limit}", op=s.op),)
        )
        tv = check_values(
            {v.metric: per_query[v.metric]}, target, confidence=confidence, method=method,
            power=power,
        )[0]  # fmt: skip
        setattr(v, s.limit, limit)
        setattr(v, f"{s.limit}_check", {
            "status": tv.status,
            "op": s.op,
            "lower": tv.lower,
            "upper": tv.upper,
            "method": tv.method,
            "confidence": confidence,
            "needed": tv.needed,
        })  # fmt: skip
        how = f"one-sided {confidence:.0%}, {DESCRIPTIONS.get(tv.method, tv.method)}"
        # the bound that shows the mean on the right side, and the one on the wrong side
        good, bad = ("lower", "upper") if s is HIGHER else ("upper", "lower")
        if tv.status == "met":
            why = (
                f"{s.within} the {s.limit} {limit:g} with confidence ({good} bound "
                f"{getattr(tv, good):.4f}; {how})"
            )
        elif tv.status == "missed":
            why = (
                f"{s.beyond} the {s.limit} {limit:g} with confidence ({bad} bound "
                f"{getattr(tv, bad):.4f}; {how})"
            )
        else:
            further = f"; about {tv.further:,} more queries would settle it" if tv.needed else ""
            why = (
                f"the {s.limit} {limit:g} lies within [{tv.lower:.4f}, {tv.upper:.4f}] "
                f"({how}){further}"
            )
            if v.needed is None:
                v.needed = tv.needed
        v.rules[s.limit] = {"met": "pass", "missed": "fail"}.get(tv.status, "inconclusive")
        settle(v)
        kept = [v.reason] if v.reason and not v.reason.startswith(KEPT_REASONS) else []
        first = bool(kept) and kept[0].startswith("baseline")
        v.reason = "; ".join([*kept, why] if first else [why, *kept])
