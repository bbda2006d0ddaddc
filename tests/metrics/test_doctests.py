"""The examples in docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import ranklens.metrics

MODULES = [
    "ranklens",
    "ranklens.evaluation",
    "ranklens.evaluation.stream",
    "ranklens.evaluation.groups",
    "ranklens.evaluation.per_query",
    "ranklens.comparison.compare",
    "ranklens.comparison.holes",
    "ranklens.labelling.pool",
    "ranklens.labelling.judges",
    "ranklens.labelling.agreement",
    "ranklens.labelling.rescore",
    "ranklens.model.merge",
    "ranklens.text",
    "ranklens.errors",
    "ranklens.judging.options",
    "ranklens.app.explain",
]
METRICS_FLOOR = sorted(
    f"ranklens.metrics.{m.name}" for m in pkgutil.iter_modules(ranklens.metrics.__path__)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("name", METRICS_FLOOR)
def test_every_public_function_of_the_metrics_floor_shows_a_runnable_example(name):
    module = importlib.import_module(name)
    public = [
        obj
        for key, obj in vars(module).items()
        if not key.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == name
    ]
    without = [obj.__name__ for obj in public if ">>>" not in (obj.__doc__ or "")]
    assert not without, f"{name}: no example in the docstring of {without}"
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted >= len(public) or not public
