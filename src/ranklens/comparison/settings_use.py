"""The statistics settings of comparison's entry points: one :class:`~ranklens.Statistics`
object (``stats=``) in place of the flat keywords ``test``, ``correction``, ``alpha``,
``n_resamples``, ``ci``, ``confidence`` and ``seed``, which still work for one release with
a ``DeprecationWarning`` showing the new spelling (:func:`ranklens.settings.settled`).

An entry point that also passes judging keywords on (``**judge_options``) takes the flat
statistics keywords out of them with :func:`split_statistics`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..declared import STATISTICS, Option, data
from ..settings import Statistics, settled
from .stats import correction_name, test_name

STATS_OPTION: Option = data(
    "the statistics settings: a ranklens.Statistics (test, correction, alpha, n_resamples, "
    "ci, confidence, seed)"
)
"""The declaration of ``stats=`` in comparison's tables."""

FLAT_STATISTICS: tuple[str, ...] = tuple(STATISTICS)
"""The keywords of :class:`~ranklens.Statistics` (deprecated as flat keywords)."""

GATE_STATISTICS = Statistics(test="bootstrap")
"""The gate's default statistics (a paired bootstrap, whose verdicts agree with the
intervals it prints)."""


def split_statistics(
    given: Mapping[str, Any], names: Sequence[str] = FLAT_STATISTICS
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``given`` split into the flat statistics keywords among ``names`` and the rest."""
    flat = {k: v for k, v in given.items() if k in names}
    rest = {k: v for k, v in given.items() if k not in names}
    return flat, rest


def statistics(
    where: str,
    stats: Statistics | None,
    flat: Mapping[str, Any],
    default: Statistics | None = None,
) -> Statistics:
    """The statistics ``where`` runs with (:func:`~ranklens.settings.settled`), its test and
    correction in their canonical names."""
    chosen = settled(where, stats, flat, default or Statistics(), "stats")
    test, correction = test_name(chosen.test), correction_name(chosen.correction)
    if (test, correction) == (chosen.test, chosen.correction):
        return chosen
    return replace(chosen, test=test, correction=correction)
