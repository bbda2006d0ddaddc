"""ranklens.estimate, plan_labels, judge_bias and assess keep the promise: bad input is a
named error, a judge's answer outside the scale or not a grade at all is a counted
failure (never a taken value), labels given with judged= need no passage text, and every
declared parameter refuses what its declaration refuses."""

from __future__ import annotations

import asyncio
import math
import threading

import pytest

import ranklens
from ranklens.app.demo_data import load
from ranklens.declared import ParameterError
from ranklens.errors import InputError
from ranklens.estimation import EstimateResult, judge_bias, plan_labels
from ranklens.labelling import LabelPool, PoolPair, assess

# the difference of the two runs below is 0 on most queries: warned, tested elsewhere
pytestmark = pytest.mark.filterwarnings("ignore:estimate. the human sample is degenerate")


def binary(demo):
    """The demo set with every label grade 1: a 0/1 scale."""
    labels = {q: {d: 1 for d in docs} for q, docs in demo.qrels.to_dict().items()}
    return ranklens.Dataset(demo.queries, labels, demo.corpus, "binary")


def runs_of(ds):
    """Two runs made from the labels: each query's labelled documents first (or after up
    to three others) among six others: every run retrieves labelled and unlabelled
    passages."""
    others = sorted(ds.corpus)
    labels = ds.qrels.to_dict()
    good, weak = {}, {}
    for i, q in enumerate(sorted(ds.queries)):
        rel = sorted(labels.get(q, {}))
        rest = [d for d in others[i % 20 :] if d not in rel][:6]
        good[q] = rel + rest
        weak[q] = rest[: i % 4] + rel + rest[i % 4 :]
    return {"good": good, "weak": weak}


@pytest.fixture(scope="module")
def case():
    ds = binary(load())
    return ds, runs_of(ds)


def top_pairs(runs, depth=10):
    return {(q, d) for r in runs.values() for q, docs in r.items() for d in docs[:depth]}


# ------------------------------------------------------------------ 1, 6: the scale
JUNK = ["Relevant: yes", "", None, "7", "1", {"grade": 1}, [1], math.nan, 2.5, 7, -1]


@pytest.mark.parametrize("answer", JUNK, ids=repr)
def test_a_judge_answer_off_the_scale_is_a_counted_failure(case, answer):
    ds, runs = case

    async def client(query, passage):  # a client with latency that answers junk
        await asyncio.sleep(0.0005)
        return answer

    with pytest.warns(ranklens.RanklensWarning, match="could not be judged"):
        a = assess(
            LabelPool(
                [PoolPair(q, d, {}, ds.queries[q], ds.corpus[d]["text"]) for q, d in
                 sorted(top_pairs(runs))[:12]]
            ),
            client,
            grades=[0, 1],
            progress=False,
        )  # fmt: skip
    assert a.grades == {} and len(a.failures) == 12
    message = next(iter(a.failures.values()))["message"]
    assert "the judge returned" in message and "for (" in message  # the pair, the value
    if answer in (7, -1):
        assert "outside the scale (allowed: [0, 1])" in message


def test_estimate_counts_a_seven_on_a_binary_scale_as_a_failure(case):
    ds, runs = case

    def seven(query, passage):
        return 7

    est = ranklens.estimate(
        ds, runs, judge=seven, human=30, metrics=["P@5"], calls=ranklens.Calling(progress=False)
    )
    pairs = len(top_pairs(runs, 5))
    assert est.info["judge_failures"] == pairs and est.info["grades"] == [0, 1]
    assert est.value("good", "P@5", "naive") == 0.0  # nothing taken, not 1.0
    assert any("not a grade of the scale 0-1" in n for n in est.notes())


def test_a_real_client_mixed_answers_are_each_counted(case):
    """Latency, a connection reset on the first try (retried, then taken), a permanent
    error, junk, an answer outside the scale, a hang (timed out): only proper grades are
    taken, every other pair is a failure."""
    ds, runs = case
    lock = threading.Lock()
    tries: dict[str, int] = {}

    async def client(query, passage):
        await asyncio.sleep(0.001)
        key = passage[:30]
        with lock:
            tries[key] = tries.get(key, 0) + 1
        h = sum(map(ord, passage)) % 7
        if h == 0 and tries[key] == 1:
            raise ConnectionError("connection reset by peer")
        if h == 1:
            raise ValueError("content filter")
        if h == 2:
            return "Relevant: yes"
        if h == 3:
            return 3
        if h == 4:
            await asyncio.sleep(5)
        return int("light" in passage.lower())

    est = ranklens.estimate(
        ds,
        runs,
        judge=client,
        human=30,
        metrics=["P@5"],
        calls=ranklens.Calling(timeout=0.3, retries=1, progress=False),
    )
    texts = {(q, d): ds.corpus[d]["text"] for q, d in top_pairs(runs, 5)}
    bad = sum(1 for t in texts.values() if sum(map(ord, t)) % 7 in (1, 2, 3, 4))
    assert est.info["judge_failures"] == bad > 0
    assert est.info["unjudged_pairs"] == bad


def test_judged_grades_off_the_scale_are_a_named_error(case):
    ds, runs = case
    judged = {q: {d: 1 for d in docs[:5]} for q, docs in runs["good"].items()}
    q = sorted(judged)[0]
    d = sorted(judged[q])[0]
    judged[q][d] = 5
    with pytest.raises(ParameterError, match=rf"estimate: judged grades must lie in the scale 0-1.*got 5 for \('{q}', '{d}'\)"):  # fmt: skip # noqa: E501
        ranklens.estimate(ds, runs, judged=judged, human=30, metrics=["P@5"])
    with pytest.raises(ParameterError, match="grades must hold every grade of the human"):
        ranklens.estimate(ds, runs, judged=judged, human=30, grades=[0, 2])
    judged[q][d] = 1  # within the scale: taken
    est = ranklens.estimate(ds, runs, judged=judged, human=30, metrics=["P@5"])
    assert est.info["judge_failures"] == 0


# ------------------------------------------------------------------ 3: texts
def test_judged_labels_need_no_passage_text(case):
    ds, runs = case
    judged = {q: {d: int(d in ds.qrels.to_dict().get(q, {})) for d in docs[:5]}
              for q, docs in runs["good"].items()}  # fmt: skip
    for q, docs in runs["weak"].items():
        judged[q].update({d: int(d in ds.qrels.to_dict().get(q, {})) for d in docs[:5]})
    for corpus in (None, {d: {"title": ""} for d in ds.corpus}, {}):
        bare = ranklens.Dataset(ds.queries, ds.qrels, corpus, "no-text")
        est = ranklens.estimate(bare, runs, judged=judged, human=30, metrics=["P@5"])
        assert est.info["unjudged_pairs"] == 0 and est.n == 30
    with pytest.raises(InputError, match="the judge cannot read them"):  # a judge would read
        ranklens.estimate(
            ranklens.Dataset(ds.queries, ds.qrels, None, "no-text"), runs,
            judge=lambda q, p: 1, human=30, metrics=["P@5"],
        )  # fmt: skip


# ------------------------------------------------------------------ 5: declared
def _probe(table, dummies):
    """Every bad value of every declared option of ``table`` is a ParameterError naming
    the parameter, raised before any work (the other arguments are dummies)."""
    target = table.target
    tried = 0
    for name, option in table.options.items():
        for bad in option.bad_values():
            with pytest.raises(ParameterError, match=rf"{table.where}: {name} must be"):
                target(**{**dummies, name: bad})
            tried += 1
    return tried


def judge1(query, passage):
    return 1


@pytest.mark.parametrize(
    "table, dummies",
    [
        ("estimate", {"dataset": None, "runs": None}),
        ("plan_labels", {}),
        ("judge_bias", {"judge": judge1, "pairs": None}),
        ("assess", {"pool": None, "judge": judge1}),
    ],
    ids=str,
)
def test_every_declared_parameter_refuses_its_bad_values(table, dummies):
    from ranklens.declared import DECLARED

    assert _probe(DECLARED[table], dummies) > 0


@pytest.mark.parametrize("human", [-5, 0, 2.5, math.nan, math.inf, True, [], [1, 2], ["q01", 3]],
                         ids=repr)  # fmt: skip
def test_a_bad_human_sample_is_a_named_error(case, human):
    ds, runs = case
    with pytest.raises(ParameterError, match=r"estimate: human must be .* got "):
        ranklens.estimate(ds, runs, judge=judge1, human=human)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"sd": -1, "corr": 0.5}, "sd"),
        ({"sd": math.nan, "corr": 0.5}, "sd"),
        ({"sd": 0.3, "corr": 1.5}, "corr"),
        ({"sd": 0.3, "corr": 0.5, "width": 0}, "width"),
        ({"sd": 0.3, "corr": 0.5, "queries": 2}, "queries"),
        ({"sd": 0.3, "corr": 0.5, "queries": 100.5}, "queries"),
        ({"sd": 0.3, "corr": 0.5, "sd_judge": -0.1}, "sd_judge"),
        ({"sd": 0.3, "corr": 0.5, "confidence": 1.0}, "confidence"),
        ({"estimate": "pilot.json", "width": 0.1}, "estimate"),
    ],
)
def test_plan_labels_refuses_impossible_guesses(kwargs, name):
    with pytest.raises(ParameterError, match=rf"plan_labels: {name} must be"):
        plan_labels(**kwargs)


def test_judge_bias_refuses_pairs_that_are_not_pairs():
    for pairs in ("ab", [("q", "d")], 3):
        with pytest.raises(ParameterError, match="judge_bias: pairs must be a list of PoolPairs"):
            judge_bias(judge1, pairs)


def test_estimate_result_lookups_name_the_closest(case):
    ds, runs = case
    judged = {q: {d: 1 for d in docs[:5]} for r in runs.values() for q, docs in r.items()}
    est = ranklens.estimate(ds, runs, judged=judged, human=30, metrics=["P@5"])
    assert isinstance(est, EstimateResult)
    with pytest.raises(ParameterError, match=r"method must be one of.*did you mean 'ppi\+\+'"):
        est.value("good", "P@5", "ppi+")
    with pytest.raises(ParameterError, match=r"target must be one of.*did you mean 'good'"):
        est.interval("goood", "P@5")
    with pytest.raises(ParameterError, match="metric must be one of"):
        est.row("good", "ndcg@10")
    with pytest.raises(ParameterError, match="plan_labels: target and metric must name a row"):
        plan_labels(est, 0.1, target="nope")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "x"], ids=repr)
def test_ppi_and_classical_refuse_values_that_are_not_finite_numbers(bad):
    import numpy as np

    from ranklens.estimation import classical, ppi

    y = np.linspace(0, 1, 12)
    broken = np.array([*y[:-1], bad], dtype=object)
    with pytest.raises(InputError, match="classical: the values must be"):
        classical(broken)
    with pytest.raises(InputError, match="ppi: human values must be"):
        ppi(broken, y, y)
    with pytest.raises(InputError, match="ppi: judge values of the unlabelled must be"):
        ppi(y, y, broken)
    with pytest.raises(InputError, match="ppi: lam must be"):
        ppi(y, y, y, lam=bad)


def test_inputs_that_leave_nothing_to_estimate_are_named(case):
    ds, runs = case
    with pytest.raises(InputError, match="estimate: run 'elsewhere' retrieved nothing"):
        ranklens.estimate(ds, {**runs, "elsewhere": {"zz": ["d"]}}, judge=judge1, human=30)
    with pytest.raises(InputError, match=r"the judged labels share no .query, document. pair"):
        ranklens.estimate(ds, runs, judged={"q01": {"no-such-doc": 1}}, human=30)
    with pytest.raises(InputError, match="judge_bias: a bias check needs at least 2 pairs"):
        judge_bias(judge1, [])


@pytest.mark.parametrize("pool", [5, {"q": "d"}, [("q", "d")], b"pairs"], ids=repr)
def test_assess_names_a_pool_that_is_not_a_pool(pool):
    with pytest.raises(ParameterError, match="assess: pool must be a LabelPool"):
        assess(pool, judge1)
