"""Metrics without a full label set: :func:`estimate` (a model judge's labels calibrated
on a small human sample by prediction-powered inference, PPI and PPI++, per run and for
paired differences), :func:`plan_labels` (how many human labels an interval needs), and
the judge's quality (:func:`judge_bias`: position and length bias; agreement per grade;
ensembles through ``estimate(judges=[...])``)."""

from .estimate import estimate
from .plan import LabelPlan, plan_labels
from .ppi import Interval, classical, power_tuned_lambda, ppi
from .quality import BiasCheck, judge_bias
from .result import METHODS, MIN_HUMAN, Estimate

__all__ = [
    "METHODS",
    "MIN_HUMAN",
    "BiasCheck",
    "Estimate",
    "Interval",
    "LabelPlan",
    "classical",
    "estimate",
    "judge_bias",
    "plan_labels",
    "power_tuned_lambda",
    "ppi",
]
