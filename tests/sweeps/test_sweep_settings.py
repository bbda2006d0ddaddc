"""``ranklens.sweep`` in settings objects and typed records: ``stats=``, ``calls=``,
``selection=``, ``costs=``, ``execution=`` give what the flat keywords gave (which still
work, each group warning once with its new spelling; both together are a named error); the
TOML file keeps its flat keys without a warning; rows, choices, effects and matrices are
records whose ``to_dict()`` is the layout of ranklens 0.2, byte for byte."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ranklens
from ranklens.app.demo_data import load
from ranklens.capture import FunctionRetriever
from ranklens.declared import ParameterError
from ranklens.errors import RanklensWarning
from ranklens.settings import Calling, Statistics
from ranklens.sweeps import (
    Choice,
    Costs,
    Effect,
    Execution,
    Naming,
    PairMatrix,
    Retrieving,
    Selection,
    SweepRow,
    effects,
    select,
)

HERE = Path(__file__).parent
TIMINGS = ("p50", "p95", "p99", "cpu_p50", "build_s", "factory_s", "pareto", "log")
"""Row fields measured as the sweep runs (and the log's path): nulled before comparing."""


def build_overlap(demo: Any) -> Any:
    def build(field: str, boost: int, top_k: int = 10) -> Any:
        words = {d: set(v[field].lower().split()) for d, v in demo.corpus.items()}

        def retrieve(q: str) -> list[tuple[str, float]]:
            qs = set(q.lower().split())
            scored = sorted(
                ((len(qs & w) + boost * (d.endswith("1")), d) for d, w in words.items()),
                reverse=True,
            )
            return [(d, float(s)) for s, d in scored[:top_k]]

        return FunctionRetriever(retrieve)

    return build


GRID = {"field": ["text", "title"], "boost": [0, 1, 2]}
METRICS = ["ndcg@10", "recall@10", "unj@10"]
FLAT: dict[str, Any] = dict(
    n_resamples=300,
    seed=3,
    progress=False,
    concurrency=1,
    folds=4,
    constraint="cost <= 1.5",
    cost=lambda p: 0.001 * (1 + p["boost"]),
    cost_per_token=1e-5,
    count_tokens=lambda t: len(t.split()),
)


def objects() -> dict[str, Any]:
    return dict(
        stats=Statistics(n_resamples=300, seed=3),
        calls=Calling(progress=False, concurrency=1),
        selection=Selection(folds=4, constraint="cost <= 1.5"),
        costs=Costs(cost=FLAT["cost"], cost_per_token=1e-5, count_tokens=FLAT["count_tokens"]),
    )


def untimed(d: dict[str, Any]) -> dict[str, Any]:
    for r in d["rows"]:
        for k in TIMINGS:
            r[k] = None
    return d


@pytest.fixture(scope="module")
def by_objects() -> Any:
    demo = load()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("ignore", RanklensWarning)
        return ranklens.sweep(build_overlap(demo), GRID, demo, METRICS, **objects())


def test_the_json_of_a_sweep_is_the_layout_of_0_2_byte_for_byte(by_objects):
    # the file was written by ranklens 0.2 (flat keywords, dict rows) for this very sweep
    old = (HERE / "sweep_0_2_layout.json").read_text()
    assert json.dumps(untimed(by_objects.to_dict()), indent=1) + "\n" == old


def test_settings_objects_and_flat_keywords_give_the_same_sweep(by_objects):
    demo = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flat = ranklens.sweep(build_overlap(demo), GRID, demo, METRICS, **FLAT)
    said = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert untimed(flat.to_dict()) == untimed(by_objects.to_dict())
    # one warning per group, each showing the new spelling
    assert len(said) == 4
    assert any("costs=ranklens.Costs(cost=<function" in s for s in said)
    assert any("stats=ranklens.Statistics(n_resamples=300, seed=3)" in s for s in said)
    assert any("calls=ranklens.Calling(progress=False, concurrency=1)" in s for s in said)
    assert any("selection=ranklens.Selection(folds=4, constraint='cost <= 1.5')" in s for s in said)
    assert all(
        w.filename == __file__ for w in caught if w.category is DeprecationWarning
    )  # points at the caller


def test_records_have_attributes_and_to_dict(by_objects):
    res = by_objects
    row = res.rows[0]
    assert isinstance(row, SweepRow) and row.status == "ok" and row.queries == 40
    assert row.value("ndcg@10") == row.metrics["ndcg@10"].value
    assert res.row(row.name) is row
    assert list(row.to_dict()) == [
        "name", "params", "status", "message", "metrics", "p50", "p95", "p99", "cpu_p50",
        "build_s", "factory_s", "shared_build", "index_size", "index_bytes", "build_note",
        "queries", "errors", "cost", "resumed", "log", "feasible", "pareto", "pareto_cost",
        "tied",
    ]  # fmt: skip
    choice = res.selection["ndcg@10"]
    assert isinstance(choice, Choice) and choice.chosen == res.chosen_name()
    assert choice.cv_vs_baseline is None or choice.cv_vs_baseline.interval is not None
    assert choice.held_out_diffs is None and choice.held_out_pvalue is None  # spent
    assert "cv_values" in choice.to_dict() and "cv_values" not in choice.to_dict(values=False)
    assert all(isinstance(e, Effect) and e.column is None for e in res.effects["ndcg@10"])
    assert isinstance(res.matrices["ndcg@10"], PairMatrix)
    assert res.matrices["ndcg@10"].tests == 15


def test_reading_a_record_as_a_dict_still_works_with_a_warning(by_objects):
    row = by_objects.rows[0]
    with pytest.warns(DeprecationWarning, match=r"SweepRow\['p95'\].*\.p95"):
        assert row["p95"] == row.p95
    with pytest.warns(DeprecationWarning):
        assert "pareto_cost" in row
    with pytest.warns(DeprecationWarning):
        assert by_objects.selection["ndcg@10"]["chosen"] == by_objects.chosen_name()


def test_select_and_effects_give_the_0_2_dicts():
    old = json.loads((HERE / "select_0_2_layout.json").read_text())
    v = np.asarray(old["values"])
    stats = Statistics(n_resamples=50, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        chosen = select(v, ["a", "b", "c"], np.array([True, True, False]), 2, folds=3, stats=stats)
        rows = effects(v, [{"x": 1}, {"x": 2}, {"x": 2}], ["x"], ["a", "b", "c"], stats=stats)
    assert json.loads(json.dumps(chosen.to_dict())) == old["select"]
    assert list(chosen.to_dict()) == list(old["select"])
    assert [json.loads(json.dumps(e.to_dict())) for e in rows] == old["effects"]
    with pytest.warns(DeprecationWarning, match=r"select\(\.\.\., stats=ranklens\.Statistics"):
        flat = select(v, ["a", "b", "c"], np.array([True, True, False]), 2, folds=3, seed=1,
                      n_resamples=50)  # fmt: skip
    assert flat.to_dict() == chosen.to_dict()


SMALL = {"stats": Statistics(n_resamples=100)}


def tiny() -> ranklens.Dataset:
    return ranklens.Dataset({"q1": "red", "q2": "blue"}, {"q1": {"d1": 1}, "q2": {"d2": 1}})


def build_tiny(boost: int) -> Any:
    return lambda q: [("d1", 1.0 + boost), ("d2", 0.5)]


@pytest.mark.parametrize(
    ("given", "flat", "message"),
    [
        ({"stats": Statistics()}, {"n_resamples": 100}, r"both stats= and n_resamples="),
        ({"calls": Calling()}, {"cache": "x", "concurrency": 2}, r"both calls= and cache, conc"),
        ({"selection": Selection()}, {"folds": 3}, r"both selection= and folds="),
        ({"costs": Costs()}, {"cost": 1.0}, r"both costs= and cost="),
        ({"execution": Execution()}, {"lock_timeout": 1.0}, r"both execution= and lock_t"),
        ({"retrieving": Retrieving()}, {"key": "parent"}, r"both retrieving= and key="),
        ({"naming": Naming()}, {"config": {"v": 1}}, r"both naming= and config="),
    ],
)
def test_a_settings_object_and_its_flat_keyword_together_are_a_named_error(given, flat, message):
    with pytest.raises(ParameterError, match=r"^sweep: " + message):
        ranklens.sweep(build_tiny, {"boost": [0, 1]}, tiny(), **given, **flat)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Selection(folds=1), r"^Selection: folds must be a whole number >= 2"),
        (lambda: Costs(cost=-1.0), r"^Costs: cost must be a price"),
        (lambda: Costs(cost_per_token=float("nan")), r"^Costs: cost_per_token must be"),
        (lambda: Execution(backend="rey"), r"^Execution: backend .*did you mean 'ray'"),
        (lambda: Execution(lock_timeout=-1), r"^Execution: lock_timeout must be"),
        (lambda: Retrieving(k=0), r"^Retrieving: k must be a whole number >= 1"),
        (lambda: Retrieving(key="parnet"), r"^Retrieving: key must be .*did you mean 'parent'"),
        (lambda: Naming(config=[1]), r"^Naming: config must be a mapping"),
    ],
)
def test_settings_objects_are_checked_when_made(make, message):
    with pytest.raises(ParameterError, match=message):
        make()


@pytest.mark.parametrize(
    "attribute", ["stats", "calls", "selection", "costs", "execution", "retrieving", "naming"]
)
def test_a_settings_object_of_another_kind_is_named(attribute):
    with pytest.raises(ParameterError, match=rf"^sweep: {attribute} must be a ranklens\.\w+, got"):
        ranklens.sweep(build_tiny, {"boost": [0, 1]}, tiny(), **{attribute: {"folds": 3}})


def test_retrieving_and_naming_give_what_their_flat_keywords_gave():
    """k, key and name, config: the same sweep as objects and flat (one warning per group,
    showing the new spelling)."""
    ds, grid = tiny(), {"boost": [0, 1]}
    named = lambda p: f"b{p['boost']}"  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        by_objects = ranklens.sweep(
            build_tiny, grid, ds, ["P@1"], stats=Statistics(n_resamples=100),
            retrieving=Retrieving(k=1, key="id"), naming=Naming(name=named, config={"v": 1}),
        )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flat = ranklens.sweep(
            build_tiny, grid, ds, ["P@1"], stats=Statistics(n_resamples=100),
            k=1, key="id", name=named, config={"v": 1},
        )  # fmt: skip
    said = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert untimed(flat.to_dict()) == untimed(by_objects.to_dict())
    assert [r.name for r in flat.rows] == ["b0", "b1"]
    assert any("retrieving=ranklens.Retrieving(k=1, key='id')" in s for s in said)
    assert any("naming=ranklens.Naming(name=<function" in s for s in said)
    assert len(said) == 2


def test_a_flat_value_is_still_checked_by_the_sweep_declaration():
    with pytest.raises(ParameterError, match=r"^sweep: alpha must be"):
        ranklens.sweep(build_tiny, {"boost": [0, 1]}, tiny(), alpha=1.5)


def test_the_toml_file_keeps_its_flat_keys_without_a_warning(tmp_path):
    from ranklens.app.sweep_cli import sweep_arguments

    data = {
        "build": "tiny_build.py:build",
        "dataset": "data",
        "grid": {"boost": [0, 1]},
        "n_resamples": 300,
        "concurrency": 2,
        "cache": "sweep-cache",
        "folds": 3,
        "constraint": "p95 <= 200",
        "cost": 0.5,
        "lock_timeout": 2.0,
    }
    (tmp_path / "tiny_build.py").write_text("def build(boost):\n    return None\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        args = sweep_arguments(data, tmp_path, "sweep.toml", {"lock_timeout": 5.0})
    assert args["stats"] == Statistics(n_resamples=300)
    assert args["calls"] == Calling(concurrency=2, cache=str(tmp_path / "sweep-cache"),
                                    progress=False)  # fmt: skip
    assert args["selection"] == Selection(folds=3, constraint="p95 <= 200")
    assert args["costs"] == Costs(cost=0.5)
    assert args["execution"] == Execution(lock_timeout=5.0)
    assert not {"n_resamples", "concurrency", "cache", "folds", "cost", "lock_timeout"} & set(args)
