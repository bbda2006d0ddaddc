"""Every public parameter declared once: its kind, the values it may take, its default and a
one-line description. Validation and its message, the command line's ``--help`` and value
parsing, TOML keys, the docstrings' parameter lines and ``docs/parameters.md`` are all
derived from the declaration, so they cannot disagree (scikit-learn's
``_param_validation``; ir_measures' typed measure parameters; the metric parameters of
:mod:`ranklens.metrics.params` are the same idea inside metric names).

An entry point declares a table and checks its calls with it::

    SWEEP = declare("sweep", {
        "folds": count(5, Range(2, None), "cross-validation folds for the held-out value"),
        "cost": number(None, Range(0, None), "what one query costs", none=True),
    })

    @SWEEP.checks
    def sweep(dataset, grid, *, folds=5, cost=None): ...

A value outside its declaration is a :class:`ParameterError` (an :class:`InputError` and a
``TypeError``, as scikit-learn's ``InvalidParameterError``) naming the entry point, the
parameter, what is allowed and what was received. NaN and infinities are refused by every
number unless it says otherwise; a string where a list is expected is refused, never
iterated; a whole number must be whole (``2.5`` is refused, ``True`` is not a number).

>>> from ranklens.declared import Range, count, declare
>>> T = declare("example", {"folds": count(5, Range(2, None), "folds")}, register=False)
>>> T.check({"folds": 1})
Traceback (most recent call last):
...
ranklens.declared.ParameterError: example: folds must be a whole number >= 2 (folds), got 1
"""

from __future__ import annotations

from .groups import CALLING, STATISTICS
from .kinds import (
    AT_LEAST_ONE,
    KINDS,
    LEVEL,
    NONNEGATIVE,
    POSITIVE,
    PROBABILITY,
    ItemsOption,
    Option,
    ParameterError,
    Range,
    UnknownParameterError,
    choice,
    count,
    data,
    flag,
    function,
    items,
    mapping,
    names,
    number,
    path,
    renamed_option,
    shown,
    text,
)
from .tables import DECLARED, Declared, declare, extend, load_all, reference

__all__ = [
    "AT_LEAST_ONE", "CALLING", "DECLARED", "KINDS", "LEVEL", "NONNEGATIVE", "POSITIVE",
    "PROBABILITY", "STATISTICS", "Declared", "ItemsOption", "Option", "ParameterError", "Range",
    "UnknownParameterError", "choice", "count", "data", "declare", "extend", "flag",
    "function", "items", "load_all", "mapping", "names", "number", "path", "reference",
    "renamed_option", "shown", "text",
]  # fmt: skip

# the errors are raised to users: their public name is this package's
ParameterError.__module__ = UnknownParameterError.__module__ = __name__
