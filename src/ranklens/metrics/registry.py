"""The metric registry: each metric family declared once, with typed parameters.

A :class:`Family` names a metric function, its aliases and trec_eval names, whether it
takes a cutoff and a relevance level, how per-query values aggregate, and its parameters as
:class:`~ranklens.metrics.params.Param` (type, range, default, description, reference: the
validation, its message, ``ranklens explain`` and ``docs/metrics.md`` come from them).
Convention-specific implementations are *variants* chosen by the judged pair
(:attr:`ranklens.judging.Judged.variant`), so metric functions never branch on a
convention. :func:`register_metric` adds a family; every name, parser and reference page is
derived from this table::

    from ranklens.metrics import Family, register_metric

    register_metric(Family("hits", my_hits_function, aliases=("hit_count",)))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..declared import ParameterError, Range, data, declare, flag
from ..errors import InputError, MetricNameError
from . import cumulative, diversity, evidence, freshness, gain, grouped, ranking, sets, ties
from .params import (
    ALPHA,
    F_BETA,
    GAIN,
    GAINS,
    GRANULAR,
    LEGACY,
    MAX_GRADE,
    MULTIPLIER,
    PATIENCE,
    PERSISTENCE,
    RECALL_LEVEL,
    RECALL_LEVELS,
    UTILITY,
    Param,
    number,
)

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class Family:
    """One metric family, declared once.

    ``fn(view, k, **params)`` returns one value per query; ``variants`` maps a judged
    pair's :attr:`~ranklens.judging.Judged.variant` to another implementation (AutoRAG's
    per-group RR is ``rr``'s ``unit_average`` variant). ``aggregate`` is ``"mean"``,
    ``"sum"`` or ``"gmean"``. ``trec_name`` is trec_eval's family name when it takes a
    suffix (``P`` in ``P_10``), ``trec_plain`` its name of the uncut measure, and
    ``trec_defaults`` the suffixes trec_eval computes by default; ``value_param`` names the
    parameter the suffix sets when it is not a cutoff (``r`` of ``iprec_at_recall_0.10``).
    ``presets`` are names that preset parameters (``ndcg_exp``: ``gain=exp``). ``values``:
    the :class:`~.params.Range` of its per-query values with non-negative gains (default:
    [0, 1], or >= 0 for a family aggregated by sum, a count), shown by ``docs/metrics.md``
    and checked on random inputs for every family by ``tests/metrics/test_every_metric.py``.
    ``lower_is_better``: a rate of something unwanted (``outdated@k``): reports mark the
    lower mean as the better one. ``partial_budget``: at a context budget the family takes
    ``straddle=partial`` (the straddling chunk's part within the budget counted exactly:
    the evidence metrics, whose per-rank amounts are character or token counts).

    >>> from ranklens.metrics import precision
    >>> fam = Family("my_p", precision, aliases=("mp",), trec_name="my_P")
    >>> fam.cutoff, fam.aggregate, fam.defaults
    (True, 'mean', {})
    """

    name: str
    fn: Callable[..., np.ndarray]
    aliases: tuple[str, ...] = ()
    cutoff: bool = True
    params: dict[str, Param] = field(default_factory=dict)
    uses_level: bool = True
    aggregate: str = "mean"
    trec_name: str | None = None
    trec_plain: str | None = None
    trec_defaults: tuple[Any, ...] = ()
    value_param: str | None = None
    variants: dict[str, Callable[..., np.ndarray]] = field(default_factory=dict)
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    values: Range | None = None
    lower_is_better: bool = False
    partial_budget: bool = False

    def __post_init__(self) -> None:
        if self.aggregate not in ("mean", "sum", "gmean"):
            raise ValueError(f"family {self.name!r}: aggregate must be mean, sum or gmean")

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip()

    @property
    def value_range(self) -> Range:
        """The declared range of the family's per-query values (see ``values``)."""
        if self.values is not None:
            return self.values
        return Range(0, None) if self.aggregate == "sum" else Range(0, 1)

    @property
    def defaults(self) -> dict[str, Any]:
        """``{parameter: default}``."""
        return {k: p.default for k, p in self.params.items()}

    def implementation(self, variant: str = "standard") -> Callable[..., np.ndarray]:
        """The function for a judged pair's variant (the family's own by default). Under
        ``expected_ties`` a family that depends on the order and declares no such variant
        is refused rather than computed on one arbitrary order."""
        missing = variant not in self.variants and self.name not in ORDER_FREE
        if variant == "expected_ties" and missing:
            raise MetricNameError(
                f"{self.name} has no tie-aware expected value (ties='expected' covers "
                "P, recall, success, rr, ap, dcg, ndcg and the order-free measures); "
                "use ties='trec' or 'input'"
            )
        return self.variants.get(variant, self.fn)


ORDER_FREE = frozenset({
    "num_rel", "num_ret", "num_rel_ret", "num_q", "set_P", "set_recall", "set_F", "set_map",
    "set_relative_P", "num_nonrel_judged_ret", "utility", "idcg", "evidence_chars",
    "precision_omega",
})  # fmt: skip
"""Families whose value does not depend on the order of the ranking."""

REGISTER_METRIC = declare("register_metric", {
    "family": data("a Family: the metric's name, function, parameters and aggregate"),
    "replace": flag(False, "redefine a family of the same name"),
})  # fmt: skip

FAMILIES: dict[str, Family] = {}
"""Every registered family by name, in registration order."""

_LISTENERS: list[Callable[[], None]] = []


@REGISTER_METRIC.checks
def register_metric(family: Family, *, replace: bool = False) -> Family:
    """Add ``family`` to the registry (``replace=True`` to redefine a name); every name it
    brings (aliases, trec_eval names, presets) parses from then on.

    >>> from ranklens.metrics import count_pair, parse_metric
    >>> hits = Family("hits", lambda v, k=None: count_pair(v, v.distinct, k), aggregate="sum")
    >>> register_metric(hits, replace=True).name
    'hits'
    >>> str(parse_metric("hits@10"))
    'hits@10'
    >>> unregister_metric("hits").name
    'hits'
    """
    if not isinstance(family, Family):
        raise ParameterError(
            f"register_metric: family must be a Family (name, function, params...), got "
            f"{type(family).__name__}"
        )
    if family.name in FAMILIES and not replace:
        raise InputError(
            f"register_metric: a metric family named {family.name!r} is registered already; "
            "pass replace=True to redefine it"
        )
    FAMILIES[family.name] = family
    for listener in _LISTENERS:
        listener()
    return family


def unregister_metric(name: str) -> Family:
    """Remove the family ``name`` (and the names it brought) from the registry.

    >>> from ranklens.metrics import precision
    >>> toy = register_metric(Family("toy_precision", precision), replace=True)
    >>> unregister_metric("toy_precision") is toy
    True
    >>> "toy_precision" in FAMILIES
    False
    """
    family = FAMILIES.pop(name)
    for listener in _LISTENERS:
        listener()
    return family


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener`` whenever the registry changes (the name tables rebuild).

    >>> import itertools
    >>> from ranklens.metrics import precision
    >>> changes = itertools.count(1)
    >>> on_change(changes.__next__)  # called on every change from now on
    >>> fam = unregister_metric(register_metric(Family("toy_p", precision)).name)
    >>> next(changes)  # two changes seen: the next count is 3
    3
    """
    _LISTENERS.append(listener)


def _p(
    default: float | None,
    check: Callable[[float], bool] | None = None,
    msg: str = "",
    **declared: Any,
) -> Param:
    """A number parameter declared inline (:func:`~.params.number`)."""
    return number(default, check, msg, **declared)


# the shared parameters (declared in .params) under the names the table below uses
_GAINS, _GAIN, _GRANULAR, _LEGACY = GAINS, GAIN, GRANULAR, LEGACY
_PERSIST, _ALPHA, _MULT, _BETA = PERSISTENCE, ALPHA, MULTIPLIER, PATIENCE
_GAINED = Range(0, None)  # sums of gains
_UNIT_AP = {"unit_average": grouped.unit_average_precision}
_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

for _family in [
    Family("P", ranking.precision, aliases=("precision", "prec"), trec_name="P",
           trec_defaults=TREC_CUTOFFS, variants={"expected_ties": ties.expected_precision}),
    Family("recall", ranking.recall, aliases=("r",), trec_name="recall",
           trec_defaults=TREC_CUTOFFS, variants={"expected_ties": ties.expected_recall}),
    Family("f1", ranking.f1, aliases=("f",)),
    Family("success", ranking.success, params=_GRANULAR,
           aliases=("hit_rate", "hitrate", "hit-rate"), trec_name="success",
           trec_defaults=(1, 5, 10), variants={"expected_ties": ties.expected_success}),
    Family("rr", ranking.reciprocal_rank, params=_GRANULAR,
           aliases=("mrr", "recip_rank", "reciprocal_rank"), trec_plain="recip_rank",
           variants={"unit_average": grouped.unit_reciprocal_rank,
                     "expected_ties": ties.expected_reciprocal_rank}),
    Family("ap", ranking.average_precision, aliases=("map", "average_precision"),
           trec_name="map_cut", trec_plain="map", trec_defaults=TREC_CUTOFFS,
           variants={**_UNIT_AP, "expected_ties": ties.expected_average_precision}),
    Family("gm_ap", ranking.average_precision, aliases=("gm_map",), aggregate="gmean",
           cutoff=False, trec_plain="gm_map", variants=_UNIT_AP),
    Family("ndcg", gain.ndcg, params=_GAIN, uses_level=False, trec_name="ndcg_cut",
           trec_plain="ndcg", trec_defaults=TREC_CUTOFFS,
           presets={"ndcg_exp": {"gain": "exp"}, "ndcg_burges": {"gain": "exp"}},
           variants={"expected_ties": ties.expected_ndcg}),
    Family("dcg", gain.dcg, params=_GAIN, uses_level=False, trec_plain="dcg", values=_GAINED,
           presets={"dcg_exp": {"gain": "exp"}, "dcg_burges": {"gain": "exp"}},
           variants={"expected_ties": ties.expected_dcg}),
    Family("idcg", gain.ideal_dcg, params=_GAIN, uses_level=False, trec_plain="ideal_dcg",
           values=_GAINED),
    Family("rprec", ranking.r_precision, aliases=("r-precision", "r_precision", "rprecision"),
           cutoff=False, trec_plain="Rprec"),
    Family("bpref", ranking.bpref, trec_plain="bpref"),
    Family("gm_bpref", ranking.bpref, aggregate="gmean", cutoff=False, trec_plain="gm_bpref"),
    Family("err", gain.err, params=MAX_GRADE, uses_level=False),
    Family("rbp", gain.rbp, params={**_PERSIST, **_GAINS}, uses_level=False, trec_plain="rbp"),
    Family("judged", sets.judged_at, uses_level=False),
    Family("num_rel", sets.num_rel, aliases=("NumRel",), cutoff=False, aggregate="sum",
           trec_plain="num_rel"),
    Family("num_ret", sets.num_ret, aliases=("NumRet",), aggregate="sum", uses_level=False,
           trec_plain="num_ret"),
    Family("num_rel_ret", sets.num_rel_ret, aliases=("NumRelRet",), aggregate="sum",
           trec_plain="num_rel_ret"),
    Family("set_P", sets.set_precision, aliases=("SetP",), cutoff=False, trec_plain="set_P"),
    Family("set_recall", sets.set_recall, aliases=("set_r", "SetR"), cutoff=False,
           trec_plain="set_recall"),
    Family("set_F", sets.set_f, aliases=("SetF",), params=F_BETA, cutoff=False,
           trec_plain="set_F"),
    Family("relative_P", ranking.relative_precision, trec_name="relative_P",
           trec_defaults=TREC_CUTOFFS),
    Family("iprec", sets.interpolated_precision, aliases=("iprec_at_recall",),
           params={**RECALL_LEVEL, **_LEGACY},
           cutoff=False, trec_name="iprec_at_recall", trec_defaults=sets.RECALL_POINTS,
           value_param="r"),
    Family("Rprec_mult", ranking.r_precision_mult, params=_MULT, cutoff=False,
           trec_name="Rprec_mult", trec_defaults=_MULTS, value_param="m"),
    Family("unj", sets.unjudged_at, uses_level=False, trec_name="unj", trec_defaults=(5, 10, 20),
           lower_is_better=True),
    Family("rbp_resid", gain.rbp_residual, params=_PERSIST, uses_level=False,
           trec_plain="rbp_resid"),
    Family("set_map", sets.set_map, aliases=("SetAP",), cutoff=False, trec_plain="set_map"),
    Family("set_relative_P", sets.set_relative_precision, cutoff=False,
           trec_plain="set_relative_P"),
    Family("num_nonrel_judged_ret", sets.num_nonrel_judged_ret, aggregate="sum",
           trec_plain="num_nonrel_judged_ret"),
    Family("num_q", sets.num_q, aliases=("NumQ",), cutoff=False, aggregate="sum",
           uses_level=False,
           trec_plain="num_q"),
    Family("11pt_avg", sets.eleven_point_average,
           params={**_LEGACY, **RECALL_LEVELS}, cutoff=False, trec_plain="11pt_avg"),
    Family("infAP", ranking.inferred_ap, aliases=("infap", "inferred_ap"), trec_plain="infAP"),
    Family("G", cumulative.g_measure, params=_GAINS, cutoff=False, uses_level=False,
           trec_plain="G"),
    Family("binG", ranking.bin_g, trec_plain="binG"),
    Family("ndcg_rel", cumulative.ndcg_rel, params=_GAINS, cutoff=False, uses_level=False,
           trec_plain="ndcg_rel"),
    Family("Rndcg", cumulative.r_ndcg, params=_GAINS, cutoff=False, trec_plain="Rndcg"),
    Family("yaap", ranking.yaap, trec_plain="yaap", values=Range()),
    Family("utility", sets.utility,
           params=UTILITY, values=Range(),
           cutoff=False, trec_plain="utility"),
    # trec_eval's judgment-group measures: the family itself on one group's labels
    # (ranklens.evaluate_judgment_groups averages any metric over a query's groups)
    Family("map_avgjg", ranking.average_precision, cutoff=False, trec_plain="map_avgjg"),
    Family("P_avgjg", ranking.precision, trec_name="P_avgjg", trec_defaults=TREC_CUTOFFS),
    Family("Rprec_mult_avgjg", ranking.r_precision_mult, params=_MULT, cutoff=False,
           trec_name="Rprec_mult_avgjg", trec_defaults=_MULTS, value_param="m"),
    # diversity (ndeval's names and ir_measures')
    Family("alpha_ndcg", diversity.alpha_ndcg, aliases=("alpha-nDCG",), params=_ALPHA),
    Family("alpha_dcg", diversity.alpha_dcg, aliases=("alpha-DCG",), params=_ALPHA),
    Family("err_ia", diversity.err_ia, aliases=("ERR-IA",), params=_ALPHA),
    Family("nerr_ia", diversity.nerr_ia, aliases=("nERR-IA",), params=_ALPHA),
    Family("nrbp", diversity.nrbp, params={**_ALPHA, **_BETA}, cutoff=False),
    Family("nnrbp", diversity.nnrbp, params={**_ALPHA, **_BETA}, cutoff=False),
    Family("p_ia", diversity.precision_ia, aliases=("P-IA",)),
    Family("ap_ia", diversity.ap_ia, aliases=("MAP-IA", "map_ia"), cutoff=False),
    Family("strec", diversity.subtopic_recall,
           aliases=("StRecall", "s_recall", "s-recall", "subtopic_recall")),
    Family("evidence_recall", evidence.evidence_recall, aliases=("token_recall", "char_recall"),
           uses_level=False, partial_budget=True),
    Family("evidence_precision", evidence.evidence_precision,
           aliases=("token_precision", "char_precision"), uses_level=False,
           partial_budget=True),
    Family("evidence_iou", evidence.evidence_iou, aliases=("iou", "token_iou", "char_iou"),
           uses_level=False, partial_budget=True),
    Family("evidence_chars", evidence.evidence_chars, cutoff=False, aggregate="sum",
           uses_level=False),
    Family("precision_omega", evidence.precision_omega, aliases=("omega",), cutoff=False,
           uses_level=False),
    # freshness (document versions: versions=)
    Family("current", freshness.current, aliases=("fresh",), uses_level=False),
    Family("outdated", freshness.outdated, aliases=("stale",), uses_level=False,
           lower_is_better=True),
    Family("undated", freshness.undated, uses_level=False, lower_is_better=True),
    Family("current_first", freshness.current_first, aliases=("fresh_first",)),
]:  # fmt: skip
    register_metric(_family)

TREC_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "map_avgjg", "P_avgjg",
    "Rprec_mult_avgjg", "yaap", "rbp", "rbp_resid", "unj",
)  # fmt: skip
"""trec_eval 10's measure table, in the order it prints measures whatever the order of
``-m`` (the preference measures left out)."""

TREC_NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
                 "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
                 "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}  # fmt: skip
"""trec_eval's ``-m`` nicknames and the measures each names (``runid`` and ``relstring``
are printed by the command line, not computed)."""

TREC_ALL = tuple(m for m in TREC_ORDER if m in TREC_NICKNAMES["all_trec"])
"""trec_eval's ``-m all_trec`` in print order; a name with a suffix form expands to the
family's ``trec_defaults``."""

TREC_OFFICIAL = TREC_NICKNAMES["official"]
"""trec_eval's default measures (``-m official``)."""
