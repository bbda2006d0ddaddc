"""The fusion floor: several runs combined into one (:func:`fuse`), with ranx's methods and
normalisations (:mod:`.methods`), over one table of every run's scores and ranks
(:mod:`.table`), tuned by cross-validation (:mod:`.tuning`). Imports the comparison
floor and below.
"""

from .core import fuse, fused_scores, method_name, named_runs
from .frameworks import MODES
from .methods import METHODS, NORMS
from .supervised import SUPERVISED
from .table import RunTable, build_table
from .tuning import FusionTuning, best_setting, held_out, query_folds, tune_fusion, weight_grid

__all__ = ["METHODS", "MODES", "NORMS", "SUPERVISED", "FusionTuning", "RunTable", "best_setting",
           "build_table", "fuse", "fused_scores", "held_out", "method_name", "named_runs",
           "query_folds", "tune_fusion", "weight_grid"]  # fmt: skip
