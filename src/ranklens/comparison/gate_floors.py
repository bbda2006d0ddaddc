"""The gate's floors in confident mode (``gate(..., floor_confidence=0.95)``, ``ranklens
gate --floor-confidence 0.95``): a floor ``metric >= f`` passes only when the one-sided
lower bound of the run's mean clears ``f``, fails only when the upper bound lies below it,
and is otherwise inconclusive with the queries that would settle it; the same verdicts and
bounds as a profile's targets (:mod:`.targets`, :mod:`.bounds`). Without it, a floor is
today's comparison of the mean with ``f``. A profile's ``>=`` targets can serve as floors
(``profile=``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..metrics import parse_metric
from ..profiles import Profile, Target
from .targets import check_values, resolve_profile
from .verdict import DESCRIPTIONS

KEPT_REASONS = ("above the floor",)
"""A reason the point-estimate rule writes that a confident floor replaces."""


def profile_floors(
    profile: Any, floors: Mapping[str, float] | None, metrics: Sequence[str]
) -> tuple[list[str], dict[str, float]]:
    """The gate's metrics and floors with a profile's ``>=`` targets as floors (floors
    given explicitly win); the profile's target metrics are added to the gated ones."""
    prof = resolve_profile(profile, None)
    given = {parse_metric(m).name: float(v) for m, v in (floors or {}).items()}
    names = [parse_metric(m).name for m in ([metrics] if isinstance(metrics, str) else metrics)]
    out = {}
    for t in prof.targets:
        if t.op != ">=":
            raise InputError(
                f"profile {prof.name!r}: the target {t} is an upper limit; the gate's floors "
                "are lower limits (check it with ranklens.evaluate(..., profile=...))"
            )
        out[t.metric] = t.value
        if t.metric not in names:
            names.append(t.metric)
    out.update(given)
    return names, out


def apply_confident_floors(
    verdicts: Sequence[Any],
    per_query: Mapping[str, np.ndarray],
    floors: Mapping[str, float],
    confidence: float,
    method: str = "auto",
    power: float = 0.8,
) -> None:
    """Judge each verdict's floor by its confidence bounds (in place): *missed* fails the
    metric, *not yet known* makes a passing metric inconclusive (with the queries that
    would settle it), *met* leaves it as the margin rule left it."""
    for v in verdicts:
        floor = floors.get(v.metric)
        if floor is None:
            continue
        target = Profile("floors", targets=[Target(v.metric, floor, source="gate floor")])
        tv = check_values(
            {v.metric: per_query[v.metric]}, target, confidence=confidence, method=method,
            power=power,
        )[0]  # fmt: skip
        v.floor = floor
        v.floor_check = {
            "status": tv.status,
            "lower": tv.lower,
            "upper": tv.upper,
            "method": tv.method,
            "confidence": confidence,
            "needed": tv.needed,
        }
        how = f"one-sided {confidence:.0%}, {DESCRIPTIONS.get(tv.method, tv.method)}"
        if tv.status == "met":
            why = f"above the floor {floor:g} with confidence (lower bound {tv.lower:.4f}; {how})"
        elif tv.status == "missed":
            v.status = "fail"
            why = f"below the floor {floor:g} with confidence (upper bound {tv.upper:.4f}; {how})"
        else:
            if v.status == "pass":
                v.status = "inconclusive"
            settle = f"; about {tv.further:,} more queries would settle it" if tv.needed else ""
            why = (
                f"the floor {floor:g} lies within [{tv.lower:.4f}, {tv.upper:.4f}] ({how}){settle}"
            )
            if v.needed is None:
                v.needed = tv.needed
        kept = [v.reason] if v.reason and v.reason not in KEPT_REASONS else []
        first = bool(kept) and kept[0].startswith("baseline")
        v.reason = "; ".join([*kept, why] if first else [why, *kept])
