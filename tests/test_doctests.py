"""The examples in docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "ranklens",
    "ranklens.evaluation",
    "ranklens.evaluation.stream",
    "ranklens.evaluation.groups",
    "ranklens.evaluation.per_query",
    "ranklens.comparison.compare",
    "ranklens.comparison.holes",
    "ranklens.judgments.pool",
    "ranklens.judgments.judges",
    "ranklens.judgments.agreement",
    "ranklens.judgments.rescore",
    "ranklens.model.merge",
    "ranklens.text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
