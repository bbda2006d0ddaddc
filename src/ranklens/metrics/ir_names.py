"""ir_measures' spellings (Macdonald & Tonellotto, ICTIR 2020, ``ir_measures``): what
parses unchanged, what means something else under the same letters, and what is refused.

Most ir_measures names are ranklens names already (``nDCG@10``, ``P(rel=2)@5``, ``AP``,
``RR@10``, ``R@100``, ``Judged@10``, ``Success@5``, ``NumRel``, ``SetP``, ``infAP``,
``Bpref``, ``Rprec``, the diversity names), and every family takes ``judged_only=True``
(condensed lists). This module adds ir_measures' parameter spellings (``dcg='exp-log2'``,
``SetP(relative=True)``, ``IPrec(recall=0.5)``, ``NumRet(rel=1)``) and the exact-case names
whose ir_measures meaning differs from the same letters in ranklens:

* ``ERR`` is gdeval's ERR, which ir_measures computes: grades scaled by 2^4
  (``err(max=4)``); ``err`` scales by the qrels' highest grade.
* ``SetF(beta=x)`` hands x to trec_eval, whose ``set_F`` weight is β²: it is
  ``set_F(beta=√x)``.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import MetricNameError
from .params import IR_BETA, RELATIVE
from .registry import FAMILIES

IR_MEASURES_EXACT: dict[str, tuple[str, dict[str, Any]]] = {
    "ERR": ("err", {"max": 4}),
    "α_nDCG": ("alpha_ndcg", {}),
    "α_DCG": ("alpha_dcg", {}),
    "SetRelP": ("set_relative_P", {}),
}
"""ir_measures names (exact case) and the family and parameters they mean."""

_NOT_HERE = "is an ir_measures measure ranklens does not implement"
IR_MEASURES_REFUSED = {
    "RBP": "ir_measures' RBP (cwl_eval: p=0.8, binary at rel) is not trec_eval's rbp "
    "(p=0.9, graded gains); write rbp(p=...) for trec_eval's",
    **{
        name: f"{name} {_NOT_HERE}"
        for name in (
            "SDCG",
            "BPM",
            "Compat",
            "INST",
            "INSQ",
            "Accuracy",
            "NERR8",
            "NERR9",
            "NERR10",
            "NERR11",
        )
    },
}
"""ir_measures names refused with the reason (never silently computed otherwise)."""

_DCG = {"log2": "linear", "exp-log2": "exp"}


def ir_param(fam: Any, base: str, key: str, raw: str, name: str) -> tuple[Any, str, str]:
    """``(family, key, value)`` after ir_measures' parameter spellings: ``dcg=`` becomes
    ``gain=``, ``recall=`` of IPrec ``r=``, ``NumRet(rel=)`` the family num_rel_ret,
    ``SetP(relative=True)`` the family set_relative_P (key ``""``: nothing left to set),
    SetF's ``beta=x`` β = √x; quotes around values are dropped.

    >>> from ranklens.metrics import FAMILIES
    >>> fam, key, value = ir_param(FAMILIES["ndcg"], "nDCG", "dcg", "'exp-log2'", "nDCG")
    >>> fam.name, key, value
    ('ndcg', 'gain', 'exp')
    """
    raw = raw.strip().strip("'\"")
    if base == "SetF" and key == "beta":
        return fam, key, repr(math.sqrt(IR_BETA.parse(raw, key, name)))
    if key == "dcg" and "gain" in fam.params:
        if raw.lower() not in _DCG:
            raise MetricNameError(f"metric {name!r}: dcg must be 'log2' or 'exp-log2', got {raw!r}")
        return fam, "gain", _DCG[raw.lower()]
    if key == "recall" and fam.value_param == "r":
        return fam, "r", raw
    if key == "rel" and fam.name == "num_ret":  # NumRet(rel=l): the relevant ones retrieved
        return FAMILIES["num_rel_ret"], key, raw
    if key == "relative" and fam.name == "set_P":
        relative = RELATIVE.parse(raw, key, name)
        return (FAMILIES["set_relative_P"] if relative else fam), "", raw
    return fam, key, raw
