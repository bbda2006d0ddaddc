"""What a :func:`~ranklens.compare` report holds beyond each metric's mean, interval and
tests: :class:`ReportContents` (``curves``, ``tie_range``, ``hole_range``, ``drilldown``),
one settings object in place of four flat keywords (which still work for one release, with
a ``DeprecationWarning`` showing the new spelling).

>>> ReportContents(drilldown=None, tie_range=False).drilldown is None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..declared import NONNEGATIVE, Option, count, declare, flag

REPORT_CONTENTS: dict[str, Option] = {
    "curves": flag(True, "keep the metrics' curves over cutoffs"),
    "tie_range": flag(True, "judge tied runs in their best and worst order too"),
    "hole_range": flag(True, "score unjudged documents as relevant and judged-only too"),
    "drilldown": count(10, NONNEGATIVE, "documents kept per run and query for the drill-down "
                       "(0 or None: none)", none=True),
}  # fmt: skip
"""The declarations of :class:`ReportContents`' fields (compare declares the same names
for its deprecated flat keywords)."""


@declare("ReportContents", REPORT_CONTENTS).checks
@dataclass(frozen=True)
class ReportContents:
    """What a compare report keeps beyond the means, intervals and tests.

    ``curves``: each cutoff metric's curve over cutoffs; ``tie_range``: a run with tied
    scores judged in its most and least favourable order too (``tie_low``/``tie_high``);
    ``hole_range``: a run that retrieved unjudged documents scored with them relevant and
    judged-only too (``as_relevant``/``judged_only``, ``metadata["holes"]``);
    ``drilldown``: each run's top documents kept per query for the HTML report's drill-down
    (0 or None: none).
    """

    curves: bool = True
    tie_range: bool = True
    hole_range: bool = True
    drilldown: int | None = 10

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {
            "curves": self.curves,
            "tie_range": self.tie_range,
            "hole_range": self.hole_range,
            "drilldown": self.drilldown,
        }
