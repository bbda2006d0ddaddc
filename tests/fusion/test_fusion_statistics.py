"""tune_fusion's statistics as one object (``stats=Statistics(...)``): the same tuning as
the deprecated flat ``seed``/``test``/``n_resamples``, which warn once with the new
spelling, and both together are a named error."""

from __future__ import annotations

import warnings

import pytest

import ranklens
from ranklens.declared import ParameterError
from ranklens.fusion import tune_fusion
from ranklens.settings import Statistics

LABELS = {f"q{i}": {f"d{i}": 1} for i in range(6)}
RUNS = {
    "x": {f"q{i}": {f"d{i}": 2.0 - (i % 2), "z": 1.5} for i in range(6)},
    "y": {f"q{i}": {"z": 2.0, f"d{i}": 1.0 + (i % 3) / 3} for i in range(6)},
}


def test_stats_object_equals_the_flat_keywords_and_does_not_warn():
    stats = Statistics(test="t", n_resamples=500, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = tune_fusion(LABELS, RUNS, "rrf", "P@1", {"k": [1, 60]}, folds=3, stats=stats)
    with pytest.warns(DeprecationWarning):
        old = tune_fusion(LABELS, RUNS, "rrf", "P@1", {"k": [1, 60]}, 3, 3, test="t",
                          n_resamples=500)  # fmt: skip
    assert new.to_dict() == old.to_dict()
    assert new.test == "t" and new.seed == 3


def test_flat_keywords_warn_once_with_the_new_spelling():
    with pytest.warns(DeprecationWarning) as caught:
        tune_fusion(LABELS, RUNS, "rrf", "P@1", {"k": [1, 60]}, folds=3, seed=2, test="t")
    deprecations = [w for w in caught if w.category is DeprecationWarning]
    assert len(deprecations) == 1 and deprecations[0].filename == __file__
    assert "stats=ranklens.Statistics(test='t', seed=2)" in str(deprecations[0].message)


def test_flat_keywords_beside_stats_are_a_named_error():
    with pytest.raises(ParameterError, match="both stats= and seed= were given"):
        tune_fusion(LABELS, RUNS, "rrf", "P@1", folds=3, seed=1, stats=Statistics())
    with pytest.raises(ParameterError, match=r"stats must be a ranklens\.Statistics"):
        tune_fusion(LABELS, RUNS, "rrf", "P@1", folds=3, stats={"seed": 1})


def test_the_default_statistics_are_the_old_defaults():
    t = ranklens.tune_fusion(LABELS, RUNS, "rrf", "P@1", {"k": [1, 60]}, folds=3)
    assert t.test == "randomization" and t.seed == 0
