"""The model floor: what ranklens evaluates, held in memory, with no file I/O.

:class:`Qrels` (labels, graded or grouped), :class:`Run` (rankings), :class:`Dataset`
(queries, labels, corpus), the id vocabularies (:mod:`.vocab`) and the vectorised helpers
over per-query segments (:mod:`.segments`). Imports only :mod:`ranklens.errors`.
"""

from __future__ import annotations

from .dataset import Dataset
from .qrels import Qrels, QrelsLike
from .ranking import RowOrder
from .runs import Run, RunLike

__all__ = ["Dataset", "Qrels", "QrelsLike", "RowOrder", "Run", "RunLike"]
