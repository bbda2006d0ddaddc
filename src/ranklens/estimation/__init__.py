"""Metrics without a full label set: :func:`estimate` (a model judge's labels calibrated
on a small human sample by prediction-powered inference, PPI and PPI++, per run and for
paired differences), :func:`plan_labels` (how many human labels an interval needs), and
the judge's quality (:func:`judge_bias`: position and length bias; agreement per grade;
ensembles through ``estimate(judges=[...])``). Each takes its statistics settings as
``stats=ranklens.Statistics(...)`` and how the judge is called as
``calls=ranklens.Calling(...)``; results are typed records (:class:`EstimateRow`,
:class:`MethodEstimate`, :class:`PlanRow`, :class:`BiasShift`) whose ``to_dict()`` is the
plain data. :data:`ESTIMATE`, the declaration of :func:`estimate`, is the door ``ranklens
estimate`` reads its flags from."""

from .estimate import ESTIMATE, estimate
from .plan import LabelPlan, PlanRow, plan_labels
from .ppi import Interval, classical, power_tuned_lambda, ppi
from .quality import BiasCheck, BiasShift, judge_bias
from .records import (
    METHODS,
    DegenerateNote,
    EstimateCounts,
    EstimateRow,
    GradeAgreement,
    JudgeAgreement,
    MethodEstimate,
)
from .result import (
    MIN_HUMAN,
    DegenerateSampleWarning,
    EstimateResult,
)

__all__ = [
    "ESTIMATE",
    "METHODS",
    "MIN_HUMAN",
    "BiasCheck",
    "BiasShift",
    "DegenerateNote",
    "DegenerateSampleWarning",
    "EstimateCounts",
    "EstimateResult",
    "EstimateRow",
    "GradeAgreement",
    "Interval",
    "JudgeAgreement",
    "LabelPlan",
    "MethodEstimate",
    "PlanRow",
    "classical",
    "estimate",
    "judge_bias",
    "plan_labels",
    "power_tuned_lambda",
    "ppi",
]
