"""estimate, plan_labels, judge_bias and assess take their settings as objects
(``stats=Statistics(...)``, ``calls=Calling(...)``); the flat keywords still work for one
release with one DeprecationWarning showing the new spelling, and beside the object are an
error naming both. Their results are typed records whose ``to_dict()`` is exactly the data
of ranklens 0.2 (``records_0_2.json``: what 0.2's ``to_dict()`` wrote for this case)."""

from __future__ import annotations

import inspect
import json
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from _nolabels_case import word_overlap

import ranklens
from ranklens.app.demo import overlap_judge
from ranklens.app.demo_data import load
from ranklens.declared import ParameterError
from ranklens.estimation import (
    BiasShift,
    EstimateRow,
    MethodEstimate,
    PlanRow,
    judge_bias,
    plan_labels,
)
from ranklens.labelling import PoolPair, assess
from ranklens.labelling.judges import CALLS
from ranklens.settings import Calling, Statistics

OLD = json.loads((Path(__file__).parent / "records_0_2.json").read_text(encoding="utf-8"))
QUIET = replace(CALLS, progress=False)
METRICS = ["ndcg@10", "P@1", "recall@3"]


@pytest.fixture(scope="module")
def case():
    demo = load()
    runs = {
        name: {q: dict(word_overlap(demo.corpus, drop)(t)) for q, t in demo.queries.items()}
        for name, drop in (("full", 0.0), ("dropped", 0.4))
    }
    pairs = [
        PoolPair(q, d, {}, demo.queries[q], demo.corpus[d]["text"])
        for q, docs in list(demo.qrels.to_dict().items())[:6]
        for d in docs
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new spelling warns nothing
        warnings.simplefilter("ignore", ranklens.estimation.DegenerateSampleWarning)
        est = ranklens.estimate(
            demo, runs, judge=overlap_judge, human=12, metrics=METRICS, calls=QUIET
        )
        plan = plan_labels(est, 0.2)
        bias = judge_bias(overlap_judge, pairs, calls=QUIET)
    return demo, runs, pairs, est, plan, bias


def test_records_to_dict_are_the_old_dicts(case):
    _, _, _, est, plan, bias = case
    assert json.loads(json.dumps(est.to_dict())) == OLD["estimate"]
    assert json.loads(json.dumps(plan.to_dict())) == OLD["plan"]
    assert json.loads(json.dumps(bias.to_dict())) == OLD["bias"]
    # key order too: JSON files written by save() keep their layout
    assert list(est.to_dict()["rows"][0]) == list(OLD["estimate"]["rows"][0])
    assert list(est.to_dict()["info"]) == list(OLD["estimate"]["info"])


def test_records_are_typed(case):
    _, _, _, est, plan, bias = case
    row = est.row("full", "ndcg@10")
    assert isinstance(row, EstimateRow) and row.kind == "run" and row.metric == "ndcg@10"
    tuned = row.method("ppi++")
    assert isinstance(tuned, MethodEstimate) and tuned.lo <= tuned.value <= tuned.hi
    assert tuned.lam is not None and row.method("naive").lam is None
    assert est.value("full", "ndcg@10") == tuned.value
    assert est.interval("full", "ndcg@10", "human") == (row.method("human").lo,
                                                        row.method("human").hi)  # fmt: skip
    weak = [r for r in est.rows if r.degenerate is not None]
    assert weak and all(r.widened is not None for r in weak)
    assert [d.target for d in est.info.degenerate] == [r.target for r in weak]
    assert est.info.grades == [0, 1, 2] and est.info.judge_failures == 0
    assert all(isinstance(r, PlanRow) for r in plan.rows) and plan.needed() == plan.rows[0].ppi
    assert isinstance(bias.position, BiasShift) and bias.length.pairs == 12
    with pytest.raises(ParameterError, match="did you mean 'ppi'"):
        row.method("pip")


def test_records_read_as_dicts_still_work_with_a_deprecation(case):
    _, _, _, est, plan, bias = case
    row = est.rows[0]
    with pytest.warns(DeprecationWarning, match=r"\.method\('ppi\+\+'\)"):
        assert row["ppi++"] == row.method("ppi++").to_dict()
    with pytest.warns(DeprecationWarning, match=r"read \.target"):
        assert row["target"] == row.target
    with pytest.warns(DeprecationWarning, match=r"read \.judge_failures"):
        assert est.info["judge_failures"] == 0
    with pytest.warns(DeprecationWarning):
        assert plan.rows[0]["human_only"] == plan.rows[0].human_only
    with pytest.warns(DeprecationWarning):
        assert bias.position["pairs"] == bias.position.pairs


def test_tables_of_records(case):
    _, _, _, est, plan, _ = case
    frame = est.to_pandas()
    assert len(frame) == len(est.rows) * 4
    assert list(frame.columns[:3]) == ["target", "metric", "method"]
    assert plan.to_pandas()["human_only"].tolist() == [r.human_only for r in plan.rows]


def _one_warning(record):
    deprecations = [w for w in record if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
    return str(deprecations[0].message)


def test_flat_keywords_warn_once_with_the_new_spelling(case):
    demo, runs, pairs, est, _, _ = case
    options = dict(judge=overlap_judge, human=12, metrics=METRICS)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        flat = ranklens.estimate(demo, runs, concurrency=2, progress=False, **options)
    message = _one_warning(record)
    assert "estimate(concurrency=, progress=...) is deprecated" in message
    assert "calls=ranklens.Calling(concurrency=2, progress=False)" in message
    assert flat.to_dict() == est.to_dict()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        tight = ranklens.estimate(demo, runs, confidence=0.9, calls=QUIET, **options)
    assert "stats=ranklens.Statistics(confidence=0.9)" in _one_warning(record)
    assert tight.confidence == 0.9
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        plan_labels(est, 0.2, confidence=0.9)
    assert "plan_labels(..., stats=ranklens.Statistics(confidence=0.9))" in _one_warning(record)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        judge_bias(overlap_judge, pairs, progress=False)
    assert "judge_bias(..., calls=ranklens.Calling(progress=False))" in _one_warning(record)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assess(pairs, overlap_judge, progress=False)
    assert "assess(..., calls=ranklens.Calling(progress=False))" in _one_warning(record)


def test_settings_objects_are_taken(case, tmp_path):
    demo, runs, pairs, est, _, _ = case
    options = dict(judge=overlap_judge, human=12, metrics=METRICS)
    log = tmp_path / "judge.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("ignore", ranklens.estimation.DegenerateSampleWarning)
        other = ranklens.estimate(
            demo,
            runs,
            stats=Statistics(confidence=0.8, seed=3),
            calls=replace(QUIET, cache=log, concurrency=2),
            **options,
        )
        plan = plan_labels(est, 0.2, stats=Statistics(confidence=0.8))
        bias = judge_bias(overlap_judge, pairs, stats=Statistics(confidence=0.5), calls=QUIET)
    assert other.confidence == 0.8 and log.exists()
    assert other.labelled != est.labelled  # seed 3 draws another human sample
    assert plan.confidence == 0.8 and plan_labels(est, 0.2).confidence == est.confidence
    assert (
        bias.length.hi - bias.length.lo < OLD["bias"]["length"]["hi"] - OLD["bias"]["length"]["lo"]
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda d, r, p: ranklens.estimate(
            d, r, judge=overlap_judge, human=12, calls=QUIET, concurrency=2
        ),
        lambda d, r, p: ranklens.estimate(
            d, r, judge=overlap_judge, human=12, stats=Statistics(), seed=1
        ),
        lambda d, r, p: judge_bias(overlap_judge, p, calls=QUIET, retries=1),
        lambda d, r, p: assess(p, overlap_judge, calls=QUIET, timeout=1.0),
    ],
)
def test_a_flat_keyword_beside_its_settings_object_is_an_error_naming_both(case, call):
    demo, runs, pairs, *_ = case
    with pytest.raises(ParameterError, match=r"both (calls|stats)= and \w+= were given"):
        call(demo, runs, pairs)


def test_settings_are_checked(case):
    demo, runs, pairs, *_ = case
    with pytest.raises(ParameterError, match="estimate: concurrency must be a whole number"):
        ranklens.estimate(demo, runs, judge=overlap_judge, human=12, concurrency=0)
    with pytest.raises(ParameterError, match="did you mean 'concurrency'"):
        ranklens.estimate(demo, runs, judge=overlap_judge, human=12, concurency=2)
    with pytest.raises(ParameterError, match=r"estimate: calls must be a ranklens\.Calling"):
        ranklens.estimate(demo, runs, judge=overlap_judge, human=12, calls=Statistics())
    with pytest.raises(ParameterError, match=r"estimate: stats must be a ranklens\.Statistics"):
        ranklens.estimate(demo, runs, judge=overlap_judge, human=12, stats={"seed": 1})
    with pytest.raises(ParameterError, match="assess: no parameter 'retry'"):
        assess(pairs, overlap_judge, retry=1)
    with pytest.raises(ParameterError, match="Statistics: confidence"):
        Statistics(confidence=1.5)


def test_the_default_calls_retry_what_the_runner_retries():
    """The judges' default object keeps the runner's transient errors (not every OSError)."""
    from ranklens.capture.runner import TRANSIENT

    assert CALLS.retry_on == TRANSIENT and replace(CALLS, retry_on=TRANSIENT) == CALLS
    assert isinstance(CALLS, Calling)


@pytest.mark.parametrize("fn", [ranklens.estimate, ranklens.plan_labels, judge_bias, assess])
def test_no_public_callable_takes_more_than_about_fifteen_parameters(fn):
    params = inspect.signature(inspect.unwrap(fn)).parameters.values()
    named = [p for p in params if p.kind is not p.VAR_KEYWORD]
    assert len(named) <= 16, [p.name for p in named]
