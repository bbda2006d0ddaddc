"""``ranklens.sweep`` keeps the core's promise: every bad value is a named error before any
work (each declared parameter walked, TOML values and command-line flags too), costs are
finite and non-negative in every form, the cross-validated value is never the in-sample
one, a sweep that chose nothing says why, only labelled queries are asked (the rest
counted and said), and user text is escaped in every output."""

from __future__ import annotations

import math
import re
import warnings

import pytest
from _sweep_case import as_settings

import ranklens
from ranklens.declared import ParameterError
from ranklens.errors import InputError, RanklensWarning
from ranklens.sweeps.params import SWEEP

FAST = dict(n_resamples=200, progress=False, concurrency=2)


def fast_settings(**given):
    """FAST and ``given`` through :func:`as_settings`."""
    return as_settings(**{**FAST, **given})


DOCS = {
    "d1": "red lighthouse on the cliff",
    "d2": "green buoy in the bay",
    "d3": "blue harbour wall",
    "d4": "old stone pier",
    "d5": "white sand beach",
    "d6": "grey fog horn",
}
LABELLED = {f"q{i}": text for i, text in enumerate(DOCS.values(), 1)}
UNLABELLED = {"u1": "a query nobody labelled", "u2": "another one"}


def dataset(unlabelled: bool = True) -> ranklens.Dataset:
    queries = {**LABELLED, **(UNLABELLED if unlabelled else {})}
    qrels = {f"q{i}": {d: 1} for i, d in enumerate(DOCS, 1)}
    return ranklens.Dataset(queries, qrels, name="tiny")


class Calls:
    """A build whose retrievers count the queries they are asked."""

    def __init__(self) -> None:
        self.builds: list[dict] = []
        self.asked: list[str] = []

    def __call__(self, boost: int = 0, depth: int = 3):
        self.builds.append({"boost": boost, "depth": depth})

        def retrieve(query: str, k: int = 10):
            self.asked.append(query)
            words = set(query.split())
            scored = sorted(
                ((len(words & set(t.split())) + (d == f"d{boost}"), d) for d, t in DOCS.items()),
                key=lambda x: (-x[0], x[1]),
            )
            return [(d, float(s)) for s, d in scored[:depth]]

        return retrieve


def quiet_sweep(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        return ranklens.sweep(*args, **kwargs)


# ------------------------------------------------------------------ every declared value
def _bad_cases():
    for name, option in SWEEP.options.items():
        if option.kind == "data":
            continue
        for value in option.bad_values():
            yield pytest.param(name, value, id=f"{name}={value!r}")


@pytest.mark.parametrize(("param", "value"), list(_bad_cases()))
def test_every_declared_parameter_refuses_its_bad_values_before_any_work(param, value):
    build = Calls()
    args = {"build": build, "grid": {"boost": [0, 1]}, "dataset": dataset()}
    args[param] = value
    with pytest.raises(ParameterError, match=rf"^sweep: (no parameter )?'?{param}\b"):
        ranklens.sweep(**args)
    assert build.builds == [] and build.asked == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metrics": []}, "metrics must be a non-empty list"),
        ({"n_resamples": 0}, "n_resamples must be a whole number >= 1"),
        ({"folds": 1}, "folds must be a whole number >= 2"),
        ({"folds": 0}, "folds must be a whole number >= 2"),
        ({"concurrency": "8"}, "concurrency must be a whole number"),
        ({"queries": "al"}, "did you mean 'all'"),
        ({"baseline": "bost=1"}, "got 'bost=1'.*did you mean 'boost=1'"),
        ({"fetch_k": 3, "k": 5}, "fetch_k must be at least k"),
    ],
)
def test_bad_values_are_named_errors_not_tracebacks(kwargs, message):
    build = Calls()
    with pytest.raises(ParameterError, match=message):
        ranklens.sweep(build, {"boost": [0, 1]}, dataset(), **fast_settings(**kwargs))
    assert build.builds == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"metrics": ["ndcg@10", "recal@10"]}, KeyError, "recal"),
        ({"key": "parnet"}, ParameterError, "Retrieving: key must be .*did you mean 'parent'"),
        ({"key": 3}, ParameterError, "(sweep|Retrieving): key must be"),
        ({"relevance_levle": 2}, TypeError, "did you mean 'relevance_level'"),
        ({"constraint": "p95 <= 1e999"}, InputError, "must be a finite number, got '1e999'"),
        ({"query_params": "bost"}, InputError, "'bost' name no .*did you mean 'boost'"),
        ({"name": lambda p: None}, InputError, "name must return a non-empty text.*None"),
        ({"name": lambda p: p["boost"]}, InputError, "name must return a non-empty text.*0"),
        ({"name": lambda p: ""}, InputError, "name must return a non-empty text"),
    ],
)
def test_scoring_names_and_limits_are_checked_before_anything_is_built(kwargs, error, message):
    build = Calls()
    with pytest.raises(error, match=message):
        ranklens.sweep(build, {"boost": [0, 1]}, dataset(), **fast_settings(**kwargs))
    assert build.builds == []


@pytest.mark.parametrize("answer", [math.nan, None, 1, "yes"], ids=repr)
def test_a_constraint_function_must_answer_true_or_false(answer):
    with pytest.raises(InputError, match=r"constraint must return True or False.*'boost=0'"):
        quiet_sweep(
            Calls(),
            {"boost": [0, 1]},
            dataset(),
            ["recall@3"],
            **fast_settings(constraint=lambda row: answer),
        )


def test_a_lone_query_parameter_is_a_list_of_one_never_its_letters():
    build = Calls()

    def factory(boost: int):
        return lambda depth: build(boost, depth)

    res = quiet_sweep(
        factory,
        {"boost": [0], "depth": [1, 3]},
        dataset(),
        ["recall@3"],
        query_params="depth",
        **fast_settings(),
    )
    assert [r["name"] for r in res.rows] == ["boost=0, depth=1", "boost=0, depth=3"]
    assert res.rows[0]["shared_build"] == 2


# ------------------------------------------------------------------ costs
def _names_config(message: str, param: str) -> bool:
    return param in message and "boost=1" in message


@pytest.mark.parametrize("param", ["cost", "cost_per_token"])
@pytest.mark.parametrize(
    "bad", [math.nan, math.inf, -math.inf, -1, "0.1", True, None], ids=repr
)  # fmt: skip
def test_a_function_returning_a_bad_cost_is_named_for_its_configuration(param, bad):
    build = Calls()
    prices = {0: 0.001, 1: bad}
    extra = {"count_tokens": lambda t: len(t.split())} if param == "cost_per_token" else {}
    with pytest.raises(ParameterError) as exc:
        ranklens.sweep(
            build,
            {"boost": [0, 1]},
            dataset(),
            ["recall@3"],
            **fast_settings(**{param: lambda p: prices[p["boost"]]}, **extra),
        )
    assert _names_config(str(exc.value), param) and "returned" in str(exc.value)
    assert build.builds == []


@pytest.mark.parametrize("param", ["cost", "cost_per_token"])
@pytest.mark.parametrize(
    ("given", "message"),
    [
        (math.nan, "got nan"),
        (-1, "got -1"),
        (math.inf, "got inf"),
        ({"boost=0": 0.1, "boost=1": math.nan}, "got {"),
        ({"boost=0": 0.1, "boost=1": -0.5}, "got {"),
        ({"boost=0": 0.1}, "no price for 1 configuration, e.g. 'boost=1'"),
        ({"boost=0": 0.1, "boost=1": 0.2, "bost=1": 0.3}, "did you mean 'boost=1'"),
    ],
)
def test_costs_are_finite_and_non_negative_in_every_form(param, given, message):
    build = Calls()
    extra = {"count_tokens": lambda t: len(t.split())} if param == "cost_per_token" else {}
    with pytest.raises(ParameterError, match=rf"^sweep: {param}.*{message}"):
        ranklens.sweep(
            build,
            {"boost": [0, 1]},
            dataset(),
            ["recall@3"],
            **fast_settings(**{param: given}, **extra),
        )
    assert build.builds == []


@pytest.mark.parametrize("bad", [-1, 2.5, math.nan, "3", None])
def test_count_tokens_returning_a_bad_count_is_named_with_the_query(bad):
    build = Calls()
    with pytest.raises(ParameterError, match=r"count_tokens must return a whole number.*query"):
        ranklens.sweep(
            build,
            {"boost": [0, 1]},
            dataset(),
            ["recall@3"],
            **fast_settings(cost_per_token=0.0001, count_tokens=lambda t: bad),
        )
    assert build.builds == []


def test_a_mapping_of_costs_prices_each_configuration():
    res = quiet_sweep(
        Calls(),
        {"boost": [0, 1]},
        dataset(),
        ["recall@3"],
        **fast_settings(cost={"boost=0": 0.002, "boost=1": 0}),
    )
    assert res.row("boost=0")["cost"] == pytest.approx(2.0)  # per 1,000 queries
    assert res.row("boost=1")["cost"] == 0.0
    assert all(math.isfinite(r["cost"]) for r in res.rows)


# ------------------------------------------------------------------ the held-out value
def test_fewer_queries_than_folds_is_leave_one_out_never_the_in_sample_best():
    res = quiet_sweep(
        Calls(), {"boost": [0, 1, 2]}, dataset(), ["recall@1"], **fast_settings(folds=10)
    )
    sel = res.selection["recall@1"]
    assert sel["folds"] == len(LABELLED)  # one query per fold
    assert len(set(sel["fold_choices"])) >= 1 and len(sel["fold_choices"]) == len(LABELLED)
    assert res.cv_estimate is not None and res.cv_estimate <= res.in_sample_best


def test_select_refuses_fewer_than_two_folds():
    import numpy as np

    from ranklens.sweeps import select

    with pytest.raises(ParameterError, match="folds must be a whole number >= 2"):
        select(np.ones((2, 5)), ["a", "b"], np.ones(2, bool), 0, folds=1)


# ------------------------------------------------------------------ nothing chosen
def test_a_sweep_of_unmatched_configurations_says_why_nothing_was_chosen():
    def build(boost: int):
        return lambda q: [(f"chunk-{boost}", 1.0)]  # ids no label names

    res = quiet_sweep(build, {"boost": [0, 1]}, dataset(), ["recall@3"], **fast_settings())
    assert res.chosen is None and res.cv_estimate is None
    assert "constraint" not in res.reason
    assert "retrieved ids match a label ('boost=0', 'boost=1')" in res.reason
    assert "key=" in res.reason
    assert "constraint" not in repr(res) and res.reason in repr(res)
    assert res.to_dict()["selection"]["recall@3"]["reason"] == res.reason


def test_a_constraint_nothing_satisfies_is_said_as_such():
    res = quiet_sweep(
        Calls(),
        {"boost": [0, 1]},
        dataset(),
        ["recall@3"],
        **fast_settings(constraint="p95 <= 0.000001"),
    )
    assert res.chosen is None
    assert res.reason == "none of the 2 measured configurations satisfies the constraint " + repr(
        "p95 <= 0.000001"
    )


def test_every_configuration_failing_names_the_first_failures():
    def build(boost: int):
        def retrieve(query: str):
            raise ValueError(f"index {boost} is down")

        return retrieve

    with pytest.raises(InputError, match=r"could be measured \(boost=0: AllQueriesFailed"):
        quiet_sweep(build, {"boost": [0, 1]}, dataset(), ["recall@3"], **fast_settings(retries=0))


# ------------------------------------------------------------------ labelled queries only
def test_only_labelled_queries_are_asked_and_the_rest_counted_and_said(capsys):
    build = Calls()
    res = quiet_sweep(
        build, {"boost": [0, 1]}, dataset(), ["recall@3"], verbose=True, **fast_settings()
    )
    assert sorted(set(build.asked)) == sorted(LABELLED.values())
    assert len(build.asked) == 2 * len(LABELLED)
    assert res.queries == {
        "dataset": 8, "which": "labelled", "asked": 6, "unlabelled": 2, "labelled_without_text": 0,
    }  # fmt: skip
    said = "asking the 6 labelled queries of 8; 2 without labels are not asked"
    assert said in capsys.readouterr().out
    assert res.notes and said in res.notes[0] and res.to_dict()["notes"] == res.notes
    everything = Calls()
    all_ = quiet_sweep(
        everything, {"boost": [0]}, dataset(), ["recall@3"], queries="all", **fast_settings()
    )
    assert len(everything.asked) == 8 and all_.queries["unlabelled"] == 0 and not all_.notes
    assert (
        all_.row("boost=0")["metrics"]
        == quiet_sweep(Calls(), {"boost": [0]}, dataset(), ["recall@3"], **fast_settings()).row(
            "boost=0"
        )["metrics"]
    )  # the same scores: unlabelled queries are never scored


def test_labels_given_apart_choose_the_queries_asked():
    build = Calls()
    labels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q9": {"d9": 1}}
    res = quiet_sweep(
        build, {"boost": [0]}, dataset(), ["recall@3"], labels=labels, **fast_settings()
    )
    assert sorted(set(build.asked)) == sorted([LABELLED["q1"], LABELLED["q2"]])
    assert res.queries["asked"] == 2 and res.queries["labelled_without_text"] == 1
    with pytest.raises(InputError, match="none of its 8 queries has a label"):
        ranklens.sweep(
            Calls(), {"boost": [0]}, dataset(), labels={"x": {"d1": 1}}, **fast_settings()
        )


# ------------------------------------------------------------------ results' own lookups
def test_result_lookups_are_named_with_the_closest():
    res = quiet_sweep(
        Calls(), {"boost": [0, 1]}, dataset(), ["recall@3", "mrr@3"], **fast_settings()
    )
    with pytest.raises(ParameterError, match=r"row: name must be a configuration.*'boost=1'"):
        res.row("bost=1")
    with pytest.raises(ParameterError, match="metric must be one of the sweep's metrics"):
        res.chosen_name("ndcg@10")
    assert res.chosen_name("mrr@3") is not None
    for bad in (1, None, ["boost=0"]):
        with pytest.raises(ParameterError, match=r"SweepResult\.row: name"):
            res.row(bad)
    with pytest.raises(ParameterError, match="indent"):
        res.to_json(indent=-1)


# ------------------------------------------------------------------ user text escaped
HOSTILE = "<img src=x onerror=alert(1)>"


def test_user_text_is_escaped_in_every_output(capsys):
    names = {0: HOSTILE, 1: "\x1b[31mred|*x*"}
    res = quiet_sweep(
        Calls(),
        {"boost": [0, 1]},
        dataset(),
        ["recall@3"],
        verbose=True,
        **fast_settings(name=lambda p: names[p["boost"]]),
    )
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\\x1b" in printed
    md = res.to_markdown()
    assert not re.search(r"(?<!\\)<img", md) and "\\<img" in md
    assert "<img" not in res._repr_html_() and "&lt;img" in res._repr_html_()
    assert "\x1b" not in str(res) and "\x1b" not in repr(res)


# ------------------------------------------------------------------ the TOML file and flags
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('folds = "5"', "folds must be a whole number >= 2 .*got '5'"),
        ('concurrency = "8"', "concurrency must be a whole number >= 1 .*got '8'"),
        ("n_resamples = 0", "n_resamples must be a whole number >= 1"),
        ("metrics = []", "metrics must be a non-empty list"),
        ('query_params = "depth"', "query_params 'depth' name no parameter"),
        ("cost = nan", r"cost must be a price \(a finite number >= 0\).*got nan"),
        ("cost = -1.0", r"cost must be a price \(a finite number >= 0\).*got -1"),
        ("flods = 3", "unknown key 'flods'; did you mean 'folds'"),
        ('backend = "sparkk"', "backend must be one of 'local', 'ray'"),
        ("progress = 1", "progress must be True or False"),
    ],
)
def test_toml_values_are_checked_by_type_as_written(tmp_path, capsys, line, message):
    from ranklens.app.cli import main

    (tmp_path / "retrievers.py").write_text(
        "def build(boost):\n    return lambda q: [('d1', 1.0)]\n"
    )
    (tmp_path / "data.jsonl").write_text(
        '{"query_id": "q1", "query": "red", "doc_id": "d1", "relevance": 1}\n'
    )
    (tmp_path / "sweep.toml").write_text(
        f'build = "retrievers.py:build"\ndataset = "data.jsonl"\n{line}\n[grid]\nboost = [0, 1]\n'
    )
    assert main(["sweep", str(tmp_path / "sweep.toml"), "-q", "--format", "none"]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert "sweep.toml" in err or "query_params" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--lock-timeout", "-1"], "argument --lock-timeout: .*must be a finite number >= 0"),
        (["--lock-timeout", "nan"], "argument --lock-timeout: "),
        (["--format", "xml"], "argument --format: .*one of 'text'"),
    ],
)
def test_command_line_flags_are_checked_by_their_declaration(tmp_path, capsys, flags, message):
    from ranklens.app.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(tmp_path / "sweep.toml"), *flags])
    assert exc.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_on_scifact_only_the_300_labelled_queries_of_1109_are_asked(shared):
    """SciFact's BEIR folder holds 1,109 queries, 300 of them labelled (the test split):
    the sweep asks those 300, not 1,109, and says so."""
    data = ranklens.read_dataset(shared("scifact"))
    build = Calls()
    res = quiet_sweep(build, {"boost": [0]}, data, ["recall@3"], **fast_settings())
    assert len(build.asked) == 300
    assert set(build.asked) == set(data.labelled_queries.values())
    assert res.queries["asked"] == 300 and res.queries["unlabelled"] == 809
    assert "asking the 300 labelled queries of 1,109; 809 without labels" in res.notes[0]


def test_queries_a_metric_is_undefined_on_are_counted_and_said():
    """With ``missing="skip"`` a configuration that failed a query has no value there; the
    selection compares configurations on the queries every one of them has, and says how
    many it left out."""
    inner = Calls()

    def build(boost: int):
        retrieve = inner(boost)

        def answer(query: str):
            if boost == 1 and query == LABELLED["q2"]:
                raise ValueError("down for this one")
            return retrieve(query)

        return answer

    res = quiet_sweep(
        build,
        {"boost": [0, 1]},
        dataset(),
        ["recall@3"],
        missing="skip",
        **fast_settings(retries=0),
    )
    sel = res.selection["recall@3"]
    assert sel["queries_left_out"] == 1 and sel["n_queries"] == len(LABELLED) - 1
    said = "recall@3: 1 query on which it is undefined for some configuration is left out"
    assert any(said in n for n in res.notes)


def test_a_matrix_left_out_for_many_configurations_is_said(monkeypatch):
    from ranklens.sweeps import assemble

    monkeypatch.setattr(assemble, "MATRIX_LIMIT", 2)
    res = quiet_sweep(Calls(), {"boost": [0, 1, 2]}, dataset(), ["recall@3"], **fast_settings())
    assert res.matrices == {}
    assert any("no significance matrix: 3 measured configurations" in n for n in res.notes)


def test_a_cache_that_is_a_file_is_named(tmp_path):
    (tmp_path / "log.jsonl").write_text("")
    build = Calls()
    with pytest.raises(InputError, match=r"cache must be a folder .*log\.jsonl"):
        ranklens.sweep(
            build, {"boost": [0]}, dataset(), **fast_settings(cache=tmp_path / "log.jsonl")
        )
    assert build.builds == []
