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
(:mod:`.lock`).

The doors the floor above uses (``ranklens sweep CONFIG.toml``): the declaration
:data:`SWEEP` with the command's flags (:data:`CLI`) and a file's keys
(:data:`FILE_KEYS`, :data:`NOT_IN_FILE`), and :func:`grouped`, a file's flat keys as the
settings objects (:class:`Settings`)."""

from .core import sweep
from .grid import CONSTRAINT_FIELDS, Config, configurations, parse_constraint
from .groups import Costs, Execution, Naming, Retrieving, Selection, Settings, grouped
from .lock import SweepLocked
from .params import CLI, FILE_KEYS, NOT_IN_FILE, SWEEP
from .records import Choice, Effect, MetricValue, PairMatrix, SweepRow
from .result import SweepResult
from .select import effects, pareto, select

__all__ = [
    "CLI",
    "CONSTRAINT_FIELDS",
    "FILE_KEYS",
    "NOT_IN_FILE",
    "SWEEP",
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
    "Settings",
    "SweepLocked",
    "SweepResult",
    "SweepRow",
    "configurations",
    "effects",
    "grouped",
    "pareto",
    "parse_constraint",
    "select",
    "sweep",
]
