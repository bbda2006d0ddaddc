"""Judgment groups (trec_eval's ``-R qrels_jg``): each query's value is the mean over the
groups that judged it. Checked by hand, against trec_eval's own expected output, and
against pytrec_eval run once per group on random inputs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError


def test_each_query_averages_over_its_own_groups_only():
    groups = {
        "alice": {"q1": {"d1": 1, "d2": 0}, "q2": {"d5": 1}},
        "bob": {"q1": {"d2": 1}},
    }
    run = {"q1": ["d1", "d2", "d3"], "q2": ["d4", "d5"]}
    ev = ranklens.evaluate_judgment_groups(groups, run, ["map_avgjg", "P_avgjg_2", "ndcg@2"])
    # q1: alice AP 1, bob AP 1/2 -> 0.75; q2: alice only, AP 1/2
    assert ev.query("q1")["map_avgjg"] == 0.75
    assert ev.query("q2")["map_avgjg"] == 0.5
    assert ev.query("q1")["P_avgjg_2"] == 0.5
    assert ev["map_avgjg"] == pytest.approx(0.625)
    # any metric averages, and later metrics average over the same groups
    assert ev.query("q1")["ndcg@2"] == pytest.approx((1 + 1 / 1.5849625007211562) / 2)
    more = ev.evaluate(["recip_rank"])
    assert more.query("q1")["recip_rank"] == 0.75


def test_one_group_is_the_plain_measure(shared):
    d = shared("trec_eval_test")
    plain = ranklens.evaluate(
        d / "qrels.test", d / "results.test", ["map", "P@10", "Rprec_mult_0.6"]
    )
    one = ranklens.evaluate_judgment_groups(
        {"only": d / "qrels.test"},
        d / "results.test",
        ["map_avgjg", "P_avgjg_10", "Rprec_mult_avgjg_0.6"],
    )
    for a, b in zip(plain.per_query.values(), one.per_query.values()):
        assert a.tolist() == b.tolist()


def test_trec_eval_qrels_jg_values(shared):
    d = shared("trec_eval_test")
    ev = ranklens.evaluate_judgment_groups(d / "qrels.123", d / "results.test", ["qrels_jg"])
    want = {}
    for line in (d / "out.test.qrels_jg").read_text().splitlines():
        name, qid, value = line.split()
        if qid == "all" and name not in ("runid", "num_q"):
            want[name] = float(value)
    got = {k: round(v, 4) for k, v in ev.aggregate.items() if k in want}
    assert got == want and len(want) == 20


def test_reader_names_the_lines_of_a_document_judged_twice_by_one_group(tmp_path):
    p = tmp_path / "jg.qrels"
    p.write_text("q1 a d1 1\nq1 b d1 0\nq1 a d1 2\n")
    with pytest.raises(InputError, match=r"judged twice for judgment group 'a' .*lines 1 and 3"):
        ranklens.read_judgment_groups(p)
    p.write_text("q1 a d1\n")
    with pytest.raises(InputError, match=r"jg.qrels:1: expected 4 fields \(qid judgment_group"):
        ranklens.read_judgment_groups(p)


def test_grouped_truth_and_no_groups_are_refused():
    with pytest.raises(InputError, match="no judgment groups"):
        ranklens.evaluate_judgment_groups({}, {"q": ["d"]}, ["map"])
    with pytest.raises(InputError, match="'g': give graded labels"):
        ranklens.evaluate_judgment_groups({"g": {"q": [["d1", "d2"]]}}, {"q": ["d1"]}, ["map"])


_docs = st.sampled_from([f"d{i}" for i in range(8)])
_labels = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]),
    st.dictionaries(_docs, st.integers(0, 2), min_size=1),
    min_size=1,
)


@settings(max_examples=60, deadline=None)
@given(
    groups=st.dictionaries(st.sampled_from(["a", "b", "c"]), _labels, min_size=1),
    run=st.dictionaries(
        st.sampled_from(["q1", "q2", "q3"]),
        st.dictionaries(_docs, st.integers(0, 20).map(float), min_size=1),
        min_size=1,
    ),
)
def test_against_pytrec_eval_once_per_group(groups, run):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    measures = {"map", "P_5", "Rprec_mult_0.60"}
    names = ["map_avgjg", "P_avgjg_5", "Rprec_mult_avgjg_0.6"]
    if not any(set(labels) & set(run) for labels in groups.values()):
        with pytest.raises(InputError, match="no query to evaluate"):
            ranklens.evaluate_judgment_groups(groups, run, names, missing="skip")
        return
    ev = ranklens.evaluate_judgment_groups(groups, run, names, missing="skip")
    sums: dict[str, dict[str, float]] = {}
    count: dict[str, int] = {}
    for labels in groups.values():
        per_query = pytrec_eval.RelevanceEvaluator(labels, measures).evaluate(run)
        for q, vals in per_query.items():
            count[q] = count.get(q, 0) + 1
            row = sums.setdefault(q, {})
            for m, v in vals.items():
                row[m] = row.get(m, 0.0) + v
    assert sorted(sums) == ev.query_ids
    for q in sums:
        got = ev.query(q)
        for ours, theirs in (
            ("map_avgjg", "map"),
            ("P_avgjg_5", "P_5"),
            ("Rprec_mult_avgjg_0.6", "Rprec_mult_0.60"),
        ):
            assert got[ours] == pytest.approx(sums[q][theirs] / count[q], abs=1e-12), (q, ours)
