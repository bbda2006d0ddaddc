"""The comparison floor: several runs on the same labels, paired significance tests
(:mod:`.stats`) and the :class:`Report` that holds it all (data and JSON; rendering goes
through :mod:`.renderers`). Imports evaluation and the floors below it.
"""

from __future__ import annotations

from . import stats
from .build import CURVE_CUTOFFS, build_report, curve_family
from .compare import compare
from .contents import ReportContents
from .gate import GateResult, GateSettings, gate
from .holes import HoleRange, holes, holes_at
from .power_analysis import Power, power
from .renderers import get_renderer, register_renderer, renderer_names
from .report import SCHEMA, SCHEMA_VERSION, Comparison, Report, load_report
from .settings_use import GATE_STATISTICS
from .snapshot_rows import ChangedLabel, SnapshotAgreement, SnapshotSettings, Swap
from .snapshots import Snapshots, compare_snapshots

__all__ = [
    "CURVE_CUTOFFS",
    "GATE_STATISTICS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "ChangedLabel",
    "Comparison",
    "GateResult",
    "GateSettings",
    "HoleRange",
    "Power",
    "Report",
    "ReportContents",
    "SnapshotAgreement",
    "SnapshotSettings",
    "Snapshots",
    "Swap",
    "build_report",
    "compare",
    "compare_snapshots",
    "curve_family",
    "gate",
    "get_renderer",
    "holes",
    "holes_at",
    "load_report",
    "power",
    "register_renderer",
    "renderer_names",
    "stats",
]
