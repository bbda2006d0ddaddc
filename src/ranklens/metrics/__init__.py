"""The metrics floor: ranking metrics as vectorised functions of judged arrays, and the
registry that names them.

Every function takes a :class:`~ranklens.judging.LevelView` ``v`` (the judged pair at a
relevance level ℓ) and a cutoff ``k`` (``None`` = the whole ranking) and returns one value
per query. None looks up a document or reads a convention switch: matching, ties,
duplicates, groups, thresholds and the conventions' choices were settled by
:func:`ranklens.judge`, whose sparse tables list the (query, rank) of each judged document
retrieved; a metric is a few ``bincount``/``searchsorted`` calls over them.

Notation: ``rel_i`` is 1 when the document at rank i is relevant (grade ≥ ℓ); ``h_i`` the
number of relevant units first found at rank i (equal to ``rel_i`` for plain labels; see
grouped ground truth in :mod:`ranklens.judging`); ``R`` the number of relevant units in the
qrels; ``n`` the number of documents retrieved; ``g_i`` the grade (gain) at rank i; ``g*_i``
the i-th largest positive grade in the qrels (the ideal ranking).

Modules: :mod:`.ranking` (binary-relevance measures), :mod:`.gain` (graded measures),
:mod:`.sets` (counts, set measures, interpolated precision), :mod:`.grouped` (AutoRAG's
per-group variants), :mod:`.registry` (:class:`Family`, :class:`Param`,
:func:`register_metric`), :mod:`.names` (parsing names into :class:`Metric`).

References: trec_eval 10.0 (usnistgov/trec_eval), whose numbers these reproduce to 1e-9 by
default; Järvelin & Kekäläinen (2002) for DCG; Burges et al. (2005) for exponential gain;
Chapelle et al. (2009) for ERR; Moffat & Zobel (2008) for RBP; Buckley & Voorhees (2004) for
bpref; Manning, Raghavan & Schütze (2008), ch. 8, for precision, recall, F and interpolated
precision.
"""

from __future__ import annotations

from .base import count_pair, safe_div
from .cumulative import g_measure, ndcg_rel, r_ndcg
from .gain import dcg, err, gain_values, ideal_dcg, ndcg, rbp, rbp_residual
from .grouped import unit_average_precision, unit_reciprocal_rank
from .names import Metric, fmt_value, known_names, lower_is_better, parse_metric
from .params import Param
from .ranking import (
    average_precision,
    bin_g,
    bpref,
    f1,
    inferred_ap,
    precision,
    r_precision,
    r_precision_mult,
    recall,
    reciprocal_rank,
    relative_precision,
    success,
    yaap,
)
from .registry import (
    FAMILIES,
    TREC_ALL,
    TREC_CUTOFFS,
    TREC_NICKNAMES,
    TREC_OFFICIAL,
    TREC_ORDER,
    Family,
    register_metric,
    unregister_metric,
)
from .sets import (
    RECALL_POINTS,
    eleven_point_average,
    interpolated_precision,
    judged_at,
    num_nonrel_judged_ret,
    num_q,
    num_rel,
    num_rel_ret,
    num_ret,
    set_f,
    set_map,
    set_precision,
    set_recall,
    set_relative_precision,
    unjudged_at,
    utility,
)
from .trec_forms import expand_metric_names, parse_metrics, trec_nickname

__all__ = [
    "FAMILIES",
    "RECALL_POINTS",
    "TREC_ALL",
    "TREC_CUTOFFS",
    "TREC_NICKNAMES",
    "TREC_OFFICIAL",
    "TREC_ORDER",
    "Family",
    "Metric",
    "Param",
    "average_precision",
    "bin_g",
    "bpref",
    "count_pair",
    "dcg",
    "eleven_point_average",
    "err",
    "expand_metric_names",
    "f1",
    "fmt_value",
    "g_measure",
    "gain_values",
    "ideal_dcg",
    "inferred_ap",
    "interpolated_precision",
    "judged_at",
    "known_names",
    "lower_is_better",
    "ndcg",
    "ndcg_rel",
    "num_nonrel_judged_ret",
    "num_q",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "parse_metric",
    "parse_metrics",
    "precision",
    "r_ndcg",
    "r_precision",
    "r_precision_mult",
    "rbp",
    "rbp_residual",
    "recall",
    "reciprocal_rank",
    "register_metric",
    "relative_precision",
    "safe_div",
    "set_f",
    "set_map",
    "set_precision",
    "set_recall",
    "set_relative_precision",
    "success",
    "trec_nickname",
    "unit_average_precision",
    "unit_reciprocal_rank",
    "unjudged_at",
    "unregister_metric",
    "utility",
    "yaap",
]
