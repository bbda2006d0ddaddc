"""Fusion's declared parameters (:mod:`ranklens.declared`): the tables of :func:`~ranklens.fuse`,
:func:`~ranklens.tune_fusion` and :func:`~ranklens.weight_grid`, and the two kinds of value the
declarations module has no word for: a method named in any case or by an alias
(``"RRF"``, ``"combmnz"``), and weights (one finite number >= 0 per run, as a list or a
mapping of run name to weight)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..declared import (
    AT_LEAST_ONE,
    STATISTICS,
    Option,
    ParameterError,
    Range,
    choice,
    count,
    data,
    declare,
    number,
    text,
)
from ..errors import closest
from .frameworks import MODES
from .methods import ALIASES, METHODS, NORMS
from .supervised import SUPERVISED

ALL_METHODS = (*METHODS, *SUPERVISED, *MODES)
"""Every fusion method and framework mode by its canonical name."""


@dataclass(frozen=True)
class MethodOption(Option):
    """A fusion method: one of :data:`ALL_METHODS` or an alias (:data:`~.methods.ALIASES`),
    in any case; normalised to the canonical name."""

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if not isinstance(value, str):
            return False, None
        low = ALIASES.get(value.lower(), value.lower())
        return (True, low) if low in self.choices else (False, None)


@dataclass(frozen=True)
class WeightsOption(Option):
    """One finite weight >= 0 per run: a list, or ``{run name: weight}``."""

    def _own_words(self) -> str:
        return "a non-empty list of finite numbers >= 0, or a mapping of run name to one"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, Mapping):
            items = list(value.values())
        elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            items = list(value)
        else:
            return False, None
        real = all(isinstance(w, numbers.Real) and not isinstance(w, bool) for w in items)
        ok = bool(items) and real and all(math.isfinite(w) and float(w) >= 0 for w in items)
        return ok, value


def method(default: str, description: str = "") -> MethodOption:
    """A fusion method (any case, aliases accepted)."""
    return MethodOption("choice", default, description, choices=ALL_METHODS)


WEIGHTS = WeightsOption("mapping", None, "one weight per run (weighted methods)", none=True)
NORM = choice(None, NORMS, "a normalisation per query and run first (None: the scores)",
              none=True)  # fmt: skip

FUSE = declare("fuse", {
    "runs": data("{name: run} or a list of runs (anything evaluate takes), at least two"),
    "method": method("rrf", "fusion method (ranx's names, aliases, or a framework mode)"),
    "norm": NORM,
    "weights": WEIGHTS,
    "labels": data("training labels of a supervised method"),
    "name": text(None, "the fused run's name (None: the method)", none=True),
    "params": data("the method's parameters (k, phi, gamma, sigma, n_segments, w): finite "
                   "numbers"),
})  # fmt: skip

TUNE_FUSION = declare("tune_fusion", {
    "labels": data("the labels (anything evaluate takes, or a Dataset)"),
    "runs": data("{name: run} or a list of runs, at least two"),
    "method": method("wsum", "fusion method to tune"),
    "metric": text("ndcg@10", "the metric tuned"),
    "grid": data("{parameter: values}, a list of settings, or None for the default grid"),
    "folds": count(5, Range(2, None), "cross-validation folds over the queries"),
    "seed": STATISTICS["seed"],
    "norm": NORM,
    "stats": data("the statistics settings: a ranklens.Statistics (test, n_resamples, seed, "
                  "confidence)"),
    "test": STATISTICS["test"],
    "n_resamples": STATISTICS["n_resamples"],
    "judge_options": data("judging options, as for evaluate"),
})  # fmt: skip

WEIGHT_GRID = declare("weight_grid", {
    "n_runs": count(None, AT_LEAST_ONE, "how many runs (weights per vector)"),
    "step": number(0.1, Range(0, 1, "right"), "the grid's step; 1/step must be whole"),
})  # fmt: skip


METHOD_PARAMETERS = declare("fuse (method parameters)", {
    "k": number(60, Range(0, None), "rrf: the constant of 1/(k + rank)"),
    "phi": number(0.8, Range(0, 1, "neither"), "rbc: the persistence of rank-biased centroids"),
    "gamma": number(1.0, None, "gmnz: the exponent of the number of runs retrieving"),
    "sigma": number(0.01, Range(0, None, "neither"), "logn_isr: added to the count's log"),
    "c": number(60, Range(0, None), "langchain: the constant of w / (c + rank)"),
    "n_segments": count(None, AT_LEAST_ONE, "probfuse: segments of each ranking"),
    "w": count(1, Range(0, None), "slidefuse: the window's half width"),
    "relevance_level": count(1, Range(0, None), "supervised methods: the relevant grade"),
}, "The parameters of fuse's methods, given as keywords (fuse(runs, 'rrf', k=20)).")  # fmt: skip

TAKES = {
    "rrf": ("k",), "rbc": ("phi",), "gmnz": ("gamma",), "logn_isr": ("sigma",),
    "langchain": ("c",), "probfuse": ("n_segments", "relevance_level"),
    "slidefuse": ("w", "relevance_level"),
    **{m: ("relevance_level",) for m in ("posfuse", "segfuse", "mapfuse", "bayesfuse")},
}  # fmt: skip
"""Which parameters each method reads (the others read none)."""


def check_params(method: str, params: Mapping[str, Any], where: str = "fuse") -> None:
    """``params`` checked for ``method`` (canonical): each one a parameter the method reads,
    its value as declared (``k=nan`` or ``phi=1`` refused), a misspelling named with the
    closest; a parameter another method reads is refused rather than silently ignored."""
    takes = TAKES.get(method, ())
    for key, value in params.items():
        if key not in takes:
            near = closest(key, takes) if takes else None
            whose = [m for m, ps in TAKES.items() if key in ps]
            raise ParameterError(
                f"{where}: {method} takes no parameter {key!r}"
                + (f"; did you mean {near!r}?" if near else "")
                + (f" ({key} is a parameter of {', '.join(whose)})" if whose else "")
                + f" (it takes: {', '.join(takes) or 'none'})"
            )
        METHOD_PARAMETERS.value(key, value, where)


__all__ = ["ALL_METHODS", "FUSE", "METHOD_PARAMETERS", "TUNE_FUSION", "WEIGHT_GRID",
           "check_params"]  # fmt: skip
