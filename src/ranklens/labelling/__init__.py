"""Filling the holes in a label set: pool the unjudged documents runs retrieve
(:func:`pool`), judge them with a person (:func:`judging_page`, an offline HTML page) or a
model (:func:`assess`, any ``(query, passage) -> grade`` callable run with the runner's
machinery), measure agreement between judges (:func:`agreement`), merge the judgments with
their provenance (:meth:`ranklens.Qrels.merge`) and re-score (:func:`rescore`)."""

from .agreement import Agreement, agreement
from .judges import CALLS, CALLS_OPTION, GRADES, Assessment, a_callable, assess
from .page import judging_page, read_judgments
from .pool import STRATEGIES, LabelPool, PoolPair, pool
from .rescore import Rescoring, rescore

__all__ = [
    "CALLS",
    "CALLS_OPTION",
    "GRADES",
    "STRATEGIES",
    "Agreement",
    "Assessment",
    "LabelPool",
    "PoolPair",
    "Rescoring",
    "a_callable",
    "agreement",
    "assess",
    "judging_page",
    "pool",
    "read_judgments",
    "rescore",
]  # fmt: skip
