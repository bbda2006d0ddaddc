"""Differential tests: ranklens against trec_eval 9.0.8 (pytrec_eval-terrier) on
hypothesis-generated qrels and runs.

Covered: graded labels with 0 and negatives, exact score ties (scores from a small set,
exact in float32), runs shorter than k and k beyond the run, thresholds 1 and 2, queries on
one side only. pytrec_eval crashes on a run query with no documents and on a qrels query
with only negative labels; those cases are kept out here and tested by hand in
test_judging.py.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTS = (1, 3, 5, 10)
RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
CUT_FAMILIES = ("P", "recall", "ndcg_cut", "map_cut", "relative_P")
PLAIN = [
    "map",
    "ndcg",
    "recip_rank",
    "Rprec",
    "bpref",
    "set_P",
    "set_recall",
    "set_F",
    "set_map",
    "set_relative_P",
    "num_rel",
    "num_ret",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "num_q",
    "gm_map",
    "gm_bpref",
    "11pt_avg",
    "infAP",
    "binG",
    "G",
    "ndcg_rel",
    "Rndcg",
    "utility",
]
GEOMETRIC = {"gm_map", "gm_bpref"}  # pytrec_eval reports log(max(x, 1e-5)) per query

# every measure trec_eval 9.0.8 (pytrec_eval) and ranklens both implement
TREC_MEASURES = {f"{fam}.{','.join(map(str, CUTS))}" for fam in CUT_FAMILIES} | {
    "success.1,5,10",
    "iprec_at_recall",
    "Rprec_mult",
    *PLAIN,
}
TREC_KEYS = (
    [f"{fam}_{k}" for fam in CUT_FAMILIES for k in CUTS]
    + [f"success_{k}" for k in (1, 5, 10)]
    + PLAIN
    + [f"iprec_at_recall_{r:.2f}" for r in RECALLS]
    + [f"Rprec_mult_{m:.2f}" for m in MULTS]
)


def our_name(trec_key: str) -> str:
    """trec_eval's output key -> the ranklens name evaluated for it."""
    if trec_key.startswith("iprec_at_recall_"):
        return f"iprec(r={trec_key.rsplit('_', 1)[1]},legacy=1)"
    if trec_key == "11pt_avg":
        return "11pt_avg(legacy=1)"
    return trec_key


def oracle_value(key: str, value: float) -> float:
    """pytrec_eval's per-query value in trec_eval's printed form."""
    return math.exp(value) if key in GEOMETRIC else value


DOCS = [f"d{i}" for i in range(14)] + ["D1", "a", "zz"]  # ids whose byte order is not numeric
QUERIES = [f"q{i}" for i in range(6)]
SCORES = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, -1.0]  # few values: many exact ties


@st.composite
def qrels_and_run(draw):
    qrels = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=5, unique=True)):
        labels = draw(
            st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1, max_size=10)
        )
        if all(v < 0 for v in labels.values()):
            labels[draw(st.sampled_from(DOCS))] = draw(st.integers(0, 3))
        qrels[q] = labels
    run = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=5, unique=True)):
        run[q] = draw(
            st.dictionaries(st.sampled_from(DOCS), st.sampled_from(SCORES), min_size=1, max_size=14)
        )
    level = draw(st.sampled_from([1, 2]))
    return qrels, run, level


def assert_per_query_equal(ev, expected, nan_is_zero: bool = False) -> None:
    """Every TREC_KEYS value of every query equals pytrec_eval's (1e-9); where trec_eval
    gives 0/0 (``nan_is_zero``) ranklens must give 0."""
    for key in TREC_KEYS:
        name = our_name(key)
        for qid in expected:
            want = oracle_value(key, expected[qid][key])
            got = ev.query(qid)[name]
            if key in GEOMETRIC:
                got = max(got, 1e-5)
            if nan_is_zero and math.isnan(want):
                assert got == 0.0, (key, qid, got)
                continue
            assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-9), (key, qid, got, want)


def trec_per_query(qrels, run, level):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES, relevance_level=level)
    return evaluator.evaluate(run)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels_and_run())
def test_per_query_and_mean_equal_trec_eval(case):
    qrels, run, level = case
    expected = trec_per_query(qrels, run, level)
    names = [our_name(k) for k in TREC_KEYS]
    if not expected:  # no shared query: trec_eval refuses, and so does ranklens
        with pytest.raises(InputError, match="no query to evaluate"):
            ranklens.evaluate(qrels, run, names, missing="skip")
        return
    ev = ranklens.evaluate(
        qrels, run, names, relevance_level=level, missing="skip", score_precision="float32"
    )
    assert sorted(ev.query_ids) == sorted(expected)
    assert_per_query_equal(ev, expected)
    for key in TREC_KEYS:
        name = our_name(key)
        if expected:
            values = [expected[q][key] for q in expected]
            want_mean = pytrec_eval.compute_aggregated_measure(key, values)
            assert math.isclose(ev[name], want_mean, rel_tol=1e-12, abs_tol=1e-9), (
                key,
                ev[name],
                want_mean,
            )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels_and_run())
def test_missing_queries_score_zero_like_trec_eval_c(case):
    """Default missing="zero": qrels queries absent from the run count as 0 in the mean
    (trec_eval -c); num_rel still adds their relevant documents."""
    qrels, run, level = case
    expected = trec_per_query(qrels, run, level)
    names = ["map", "P_5", "ndcg_cut_10", "num_rel", "recip_rank"]
    if not set(qrels) & set(run):  # nothing answered: a mean over nothing is refused
        with pytest.raises(InputError, match="shares no query id with the labels"):
            ranklens.evaluate(qrels, run, names, relevance_level=level)
        return
    ev = ranklens.evaluate(qrels, run, names, relevance_level=level, score_precision="float32")
    assert sorted(ev.query_ids) == sorted(qrels)
    missing = [q for q in qrels if q not in run]
    assert ev.counts["queries_missing"] == len(missing)
    assert ev.counts["queries_ignored"] == len([q for q in run if q not in qrels])
    n = len(qrels)
    for key in ("map", "P_5", "ndcg_cut_10", "recip_rank"):
        want = sum(expected[q][key] for q in expected) / n
        assert math.isclose(ev[key], want, abs_tol=1e-9), key
    want_rel = sum(expected[q]["num_rel"] for q in expected) + sum(
        sum(1 for g in qrels[q].values() if g >= level) for q in missing
    )
    assert ev["num_rel"] == want_rel


def test_score_precision_float32_reproduces_pytrec_eval_ties():
    """trec_eval 9/pytrec_eval compare scores as float32: 1.0 and 1.0 + 1e-9 tie there and the
    tie goes to the higher doc id; trec_eval 10 (float64, our default) ranks them apart."""
    qrels = {"q": {"b": 1}}
    run = {"q": {"b": 1.0, "a": 1.0 + 1e-9}}
    oracle = trec_per_query(qrels, run, 1)["q"]["recip_rank"]
    f32 = ranklens.evaluate(qrels, run, ["recip_rank"], score_precision="float32")
    f64 = ranklens.evaluate(qrels, run, ["recip_rank"])
    assert oracle == 1.0
    assert f32["recip_rank"] == 1.0
    assert f64["recip_rank"] == 0.5


def _columns(rows):
    return ranklens.Run.from_arrays(
        [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels_and_run(), st.sampled_from(["shuffled", "score_order", "trec_order"]), st.randoms())
def test_columnar_runs_in_any_row_order_equal_trec_eval(case, layout, rnd):
    """The columnar path (TREC files, Run objects) orders rows itself: rows shuffled, rows in
    score order with ties in any order (only the tied rows move), or already in trec_eval's
    order (nothing moves) all give trec_eval's values."""
    qrels, run, level = case
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    if layout == "shuffled":
        rnd.shuffle(rows)
    else:
        rnd.shuffle(rows)  # ties in any order
        if layout == "trec_order":  # ties by document id descending (byte order)
            rows.sort(key=lambda r: r[1].encode(), reverse=True)
        rows.sort(key=lambda r: (r[0], -r[2]))  # stable: by query, then score descending
    R = _columns(rows)
    expected = trec_per_query(qrels, run, level)
    names = ["map", "ndcg_cut_10", "recip_rank", "P_5", "bpref", "Rprec"]
    if not expected:
        with pytest.raises(InputError, match="no query to evaluate"):
            ranklens.evaluate(ranklens.Qrels.from_dict(qrels), R, names, missing="skip")
        return
    ev = ranklens.evaluate(
        ranklens.Qrels.from_dict(qrels),
        R,
        names,
        relevance_level=level,
        missing="skip",
        score_precision="float32",
    )
    for qid in expected:
        for key in names:
            assert math.isclose(ev.query(qid)[key], expected[qid][key], abs_tol=1e-9), (
                key,
                qid,
                layout,
            )
    order = R.row_order("float32")
    if layout == "trec_order":
        assert order.is_identity
    if layout != "shuffled":
        assert order.within_queries


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels_and_run())
def test_judged_only_equals_trec_eval_J(case):
    """judged_only=True (trec_eval -J): unjudged documents leave the ranking before any
    measure. Where trec_eval divides 0 by 0 (iprec and 11pt_avg when nothing judged is
    left) ranklens gives 0."""
    qrels, run, level = case
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, TREC_MEASURES, relevance_level=level, judged_docs_only_flag=True
    )
    expected = evaluator.evaluate(run)
    if not expected:
        return
    names = [our_name(k) for k in TREC_KEYS]
    ev = ranklens.evaluate(
        qrels,
        run,
        names,
        relevance_level=level,
        missing="skip",
        score_precision="float32",
        judged_only=True,
    )
    assert_per_query_equal(ev, expected, nan_is_zero=True)
