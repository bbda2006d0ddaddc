"""The sweeps floor (above fusion, judgments, render, comparison and capture): retriever
configurations compared in one call. :func:`sweep` builds and runs every configuration
of a grid (:mod:`.grid`, :mod:`.execute`: the runner, one resumable log per configuration
under one folder, builds shared and timed apart; on Ray in parallel, :mod:`.on_ray`),
compares them and chooses honestly (:mod:`.select`: cross-validation over queries, paired
tests corrected for the number of configurations, the tied set, a Pareto frontier,
per-parameter effects); the outcome is a :class:`SweepResult` (:mod:`.result`), rendered
through the renderer registry. Every parameter is declared once (:mod:`.params`); the
settings beside :class:`~ranklens.Statistics` and :class:`~ranklens.Calling` are
:class:`Selection`, :class:`Costs`, :class:`Execution`, :class:`Retrieving` and
:class:`Naming` (:mod:`.groups`); the result's rows, choices, effects and matrices are
typed records (:mod:`.records`); one process at a time runs in a sweep folder
(:mod:`.lock`)."""

from .core import sweep
from .grid import CONSTRAINT_FIELDS, Config, configurations, parse_constraint
from .groups import Costs, Execution, Naming, Retrieving, Selection
from .lock import SweepLocked
from .records import Choice, Effect, MetricValue, PairMatrix, SweepRow
from .result import SweepResult
from .select import effects, pareto, select

__all__ = [
    "CONSTRAINT_FIELDS",
    "Choice",
    "Config",
    "Costs",
    "Effect",
    "Execution",
    "MetricValue",
    "Naming",
    "PairMatrix",
    "Retrieving",
    "Selection",
    "SweepLocked",
    "SweepResult",
    "SweepRow",
    "configurations",
    "effects",
    "pareto",
    "parse_constraint",
    "select",
    "sweep",
]
