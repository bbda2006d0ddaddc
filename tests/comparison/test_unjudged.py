"""Hole-aware scores (ranklens.holes, compare's hole range) against independent
computations: the unjudged-as-relevant value equals evaluating with those documents added
to the labels; the judged-only value equals trec_eval -J (pytrec_eval on condensed lists);
the holes counted in the top k equal a plain count."""

from __future__ import annotations

import math

import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import evaluate, holes

METRICS = ["P@3", "P@10", "success@3", "rr", "ndcg@5", "ndcg@20", "map", "bpref", "recall@5",
           "rprec", "num_rel_ret"]  # fmt: skip
DOCS = [f"d{i}" for i in range(14)]


@st.composite
def labelled_runs(draw):
    """Graded labels (negative grades too) and a scored run with ties, over 1-4 queries."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 4))):
        qid = f"q{q}"
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=6))
        qrels[qid] = {d: draw(st.integers(-1, 3)) for d in judged}
        if not qrels[qid]:
            qrels[qid] = {"d0": 1}
        ranked = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=12))
        if ranked or draw(st.booleans()):
            run[qid] = {d: float(draw(st.integers(0, 5))) for d in ranked}
    if not run:
        run["q0"] = {"d1": 1.0}
    return qrels, run


def filled_labels(qrels, run, grade=1):
    """The labels with every retrieved, unlabelled document added at ``grade``."""
    out = {q: dict(v) for q, v in qrels.items()}
    for q, hits in run.items():
        if q in out:
            for d in hits:
                out[q].setdefault(d, grade)
    return out


@settings(max_examples=120, deadline=None)
@given(labelled_runs())
def test_as_relevant_equals_evaluating_with_the_holes_labelled(case):
    qrels, run = case
    r = holes(qrels, run, METRICS)
    filled = evaluate(filled_labels(qrels, run), run, METRICS)
    for m in METRICS:
        assert math.isclose(r.as_relevant[m], filled[m], abs_tol=1e-12), m
        assert math.isclose(r.value[m], evaluate(qrels, run, [m])[m], abs_tol=1e-12), m
        for i, q in enumerate(r.query_ids):
            assert abs(r.per_query["as_relevant"][m][i] - filled.query(q)[m]) < 1e-12


@settings(max_examples=120, deadline=None)
@given(labelled_runs(), st.integers(1, 2))
def test_at_a_relevance_level_the_holes_get_that_grade(case, level):
    qrels, run = case
    r = holes(qrels, run, ["P@5", "map", "ndcg@10"], relevance_level=level)
    filled = evaluate(filled_labels(qrels, run, level), run, ["P@5", "map", "ndcg@10"],
                      relevance_level=level)  # fmt: skip
    for m in ("P@5", "map", "ndcg@10"):
        assert math.isclose(r.as_relevant[m], filled[m], abs_tol=1e-12), m


@settings(max_examples=100, deadline=None)
@given(labelled_runs())
def test_judged_only_equals_pytrec_eval_on_condensed_lists(case):
    qrels, run = case
    r = holes(qrels, run, ["P@5", "map", "ndcg@10"])
    condensed = {
        q: {d: s for d, s in hits.items() if d in qrels.get(q, {}) and qrels[q][d] >= 0}
        for q, hits in run.items()
    }
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"P_5", "map", "ndcg_cut_10"})
    theirs = ev.evaluate({q: h for q, h in condensed.items() if h})
    for i, q in enumerate(r.query_ids):
        t = theirs.get(q, {"P_5": 0.0, "map": 0.0, "ndcg_cut_10": 0.0})
        for ours, name in (("P@5", "P_5"), ("map", "map"), ("ndcg@10", "ndcg_cut_10")):
            assert abs(r.per_query["judged_only"][ours][i] - t[name]) < 1e-9, (q, ours)


@settings(max_examples=100, deadline=None)
@given(labelled_runs(), st.integers(1, 8))
def test_holes_in_the_top_k_equal_a_plain_count(case, k):
    qrels, run = case
    r = holes(qrels, run, ["P@5"], depth=k)
    for i, q in enumerate(r.query_ids):
        hits = run.get(q, {})
        ranked = sorted(hits, key=lambda d: (hits[d], d), reverse=True)  # trec_eval's order
        expected = sum(1 for d in ranked[:k] if d not in qrels[q])
        assert r.holes_at_depth[i] == expected, (q, ranked, qrels[q])
    assert r.unjudged == sum(1 for q in qrels for d in run.get(q, {}) if d not in qrels[q])


def test_grouped_truth_holes_become_groups_of_their_own():
    truth = {"q": [["a", "b"], ["c"]]}
    run = {"q": ["x", "b", "y", "c"]}
    r = holes(truth, run, ["recall@4", "P@2", "ndcg@4"])
    filled = evaluate({"q": [["a", "b"], ["c"], ["x"], ["y"]]}, run, ["recall@4", "P@2", "ndcg@4"])
    for m in ("recall@4", "P@2", "ndcg@4"):
        assert math.isclose(r.as_relevant[m], filled[m], abs_tol=1e-12), m


def test_diversity_measures_have_no_as_relevant_value_and_an_evaluation_is_reused():
    truth = {"q": [["a"], ["c"]]}
    ev = evaluate(truth, {"q": ["x", "a", "c"]}, ["alpha_ndcg@3", "P@3"])
    r = holes(ev)
    assert r.as_relevant["alpha_ndcg@3"] is None and r.as_relevant["P@3"] == 1.0
    assert r.range("P@3") == (2 / 3, 1.0)
    assert r.worst_queries() == [("q", 1)]


def test_compare_reports_the_hole_range_and_the_queries_with_most_holes(tmp_path):
    qrels = {"q1": ["a"], "q2": ["b"]}
    runs = {"full": {"q1": ["a"], "q2": ["b"]}, "holey": {"q1": ["x", "y", "a"], "q2": ["b", "z"]}}
    rep = ranklens.compare(qrels, runs, ["P@2", "rr"], stats=ranklens.Statistics(test="t", ci="t"))
    assert "as_relevant" not in rep.summary["full"]["P@2"]
    s = rep.summary["holey"]["P@2"]
    assert (s["value"], s["as_relevant"], s["judged_only"]) == (0.25, 1.0, 0.5)
    holes_meta = rep.metadata["holes"]["holey"]
    assert holes_meta["unjudged"] == 3 and holes_meta["worst_queries"][0] == ["q1", 2]
    text = " ".join(rep.to_text(details=True).split())  # the terminal table wraps its notes
    assert "holey: 3 unjudged" in text and "2 in query q1" in text
    assert "1.0000 if relevant" in rep.to_markdown()
    assert "if relevant, " in rep.to_html()
    rep.to_json(tmp_path / "rep.json")
    again = ranklens.load_report(tmp_path / "rep.json")
    assert again.summary["holey"]["P@2"]["as_relevant"] == 1.0
    plain = ranklens.compare(
        qrels,
        runs,
        ["P@2"],
        stats=ranklens.Statistics(test="t", ci="t"),
        contents=ranklens.ReportContents(hole_range=False),
    )
    assert "holes" not in plain.metadata
