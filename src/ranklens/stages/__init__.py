"""The stages room (above comparison and capture): a RAG pipeline measured stage by stage.

:func:`evaluate_stages` judges every stage of a :class:`~ranklens.StagedRun` (captured by the
runner from a :class:`~ranklens.Pipeline`, by the framework hooks from a live app, or given
as runs) against the same labels, computes every metric at every stage, says where each
relevant unit was lost (:mod:`ranklens.judging.stages`: never retrieved, cut by rank,
filtered, outside the context budget) and tests the recall each stage loses. This module is
the room's front door.
"""

from __future__ import annotations

from ..judging.stages import FATES, Attribution
from ..model.stages import StagedRun
from . import report, report_html
from .evaluate import EVALUATE_STAGES, SHOWN, StageEvaluation, StageLoss, evaluate_stages

SHOWN.update(terminal=report.terminal, markdown=report.markdown, html=report_html.html,
             query=report.query_text)  # fmt: skip

__all__ = [
    "EVALUATE_STAGES",
    "FATES",
    "Attribution",
    "StageEvaluation",
    "StageLoss",
    "StagedRun",
    "evaluate_stages",
]
