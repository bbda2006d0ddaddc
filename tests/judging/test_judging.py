"""The judging rules: ordering, ties, duplicates, missing and ignored queries, negative
labels, grouped ground truth, and the cases pytrec_eval cannot take."""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from ranklens import DuplicateDocumentError, InputError, Qrels, Run

approx = pytest.approx


def test_ties_break_by_doc_id_descending_and_rank_column_is_ignored():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 2.0}}  # c, then the b/a tie: b before a
    assert ranklens.evaluate(qrels, run, ["rr"])["rr"] == approx(1 / 3)


def test_unscored_lists_keep_their_order():
    ev = ranklens.evaluate({"q": {"a": 1}}, {"q": ["b", "a", "c"]}, ["rr"])
    assert ev["rr"] == 0.5


def test_pairs_with_scores_are_ranked_by_score():
    ev = ranklens.evaluate({"q": {"a": 1}}, {"q": [("b", 0.1), ("a", 0.9)]}, ["rr"])
    assert ev["rr"] == 1.0


def test_duplicate_document_is_an_error_naming_query_and_document():
    with pytest.raises(DuplicateDocumentError, match=r"'a'.*query 'q7'"):
        ranklens.evaluate({"q7": {"a": 1}}, {"q7": ["b", "a", "a"]}, ["P@3"])


def test_duplicates_first_keeps_the_highest_ranked_occurrence_and_counts_the_rest():
    ev = ranklens.evaluate(
        {"q": {"a": 1}}, {"q": ["b", "a", "c", "a", "a"]}, ["rr", "num_ret"], duplicates="first"
    )
    assert ev["rr"] == 0.5
    assert ev["num_ret"] == 3
    assert ev.counts["duplicates_dropped"] == 2


def test_missing_query_scores_zero_by_default_and_can_be_skipped():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a"], "q3": ["x"]}
    ev = ranklens.evaluate(qrels, run, ["P@1"])
    assert ev.query_ids == ["q1", "q2"]
    assert ev["P@1"] == 0.5
    assert ev.counts == {
        "queries_evaluated": 2,
        "queries_missing": 1,
        "queries_ignored": 1,
        "queries_no_relevant_skipped": 0,
        "duplicates_dropped": 0,
        "duplicates_kept": 0,
        "hits_retrieved": 1,  # q1's one hit (q3 is not evaluated)
        "hits_labelled": 1,
        "queries_failed": 0,
        "failures": {},
        "tied_documents": 0,
        "tie_queries": 0,
        "queries_without_relevant": 0,
        "labelled_documents": 2,
    }
    assert ev.judged.counts.missing_ids == ["q2"] and ev.judged.counts.ignored_ids == ["q3"]
    skipped = ranklens.evaluate(qrels, run, ["P@1"], missing="skip")
    assert skipped.query_ids == ["q1"] and skipped["P@1"] == 1.0
    assert skipped.counts["queries_missing"] == 1
    assert "1 labelled but absent from the run (scored 0)" in ev.to_table()


def test_run_query_with_no_documents_scores_zero():
    """pytrec_eval segfaults on this; ranklens evaluates it as an empty ranking."""
    ev = ranklens.evaluate(
        {"q": {"a": 1}, "r": {"b": 1}},
        {"q": {}, "r": {"b": 1.0}},
        [
            "map",
            "ndcg",
            "P@5",
            "rr",
            "bpref",
            "num_ret",
            "iprec_at_recall_0.00",
            "judged@10",
            "err@5",
            "rbp",
        ],
    )
    q = ev.query("q")
    assert all(v == 0 for v in q.values())
    assert ev.counts["queries_missing"] == 0


def test_qrels_query_with_only_negative_labels():
    """pytrec_eval segfaults on this; R = 0 so every measure is 0, as trec_eval defines."""
    ev = ranklens.evaluate(
        {"q": {"a": -1, "b": -2}},
        {"q": ["a", "b", "c"]},
        ["map", "ndcg@3", "P@3", "bpref", "judged@3", "unj_3", "num_rel"],
    )
    assert ev.query("q") == approx(
        {"map": 0, "ndcg@3": 0, "P@3": 0, "bpref": 0, "judged@3": 2 / 3, "unj_3": 1.0, "num_rel": 0}
    )


def test_negative_labels_are_never_relevant_and_skipped_by_bpref():
    qrels = {"q": {"a": -1, "b": 0, "c": 1}}
    ev = ranklens.evaluate(qrels, {"q": ["a", "c"]}, ["bpref", "P@2", "ndcg@2"])
    assert ev["P@2"] == 0.5
    assert ev["bpref"] == 1.0  # 'a' is neither relevant nor judged non-relevant
    ev = ranklens.evaluate(qrels, {"q": ["b", "c"]}, ["bpref"])
    assert ev["bpref"] == 0.0


def test_threshold_changes_relevance_not_ndcg_gains():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": ["a", "b"]}
    one = ranklens.evaluate(qrels, run, ["P@2", "ndcg@2", "P(rel=2)@2"])
    two = ranklens.evaluate(qrels, run, ["P@2", "ndcg@2"], relevance_level=2)
    assert one["P@2"] == 1.0 and two["P@2"] == 0.5 and one["P(rel=2)@2"] == 0.5
    assert one["ndcg@2"] == two["ndcg@2"]


def test_grouped_redundant_members_are_not_relevant():
    qrels = Qrels.from_groups({"q": [["a", "b"], ["c"]]})
    ev = ranklens.evaluate(
        qrels,
        {"q": ["a", "b", "c"]},
        ["P@3", "recall@3", "ap", "ndcg@3", "num_rel", "num_rel_ret", "bpref"],
    )
    assert ev.aggregate == approx(
        {
            "P@3": 2 / 3,
            "recall@3": 1.0,
            "ap": (1 + 2 / 3) / 2,
            "ndcg@3": (1 + 1 / 2) / (1 + 1 / np.log2(3)),
            "num_rel": 2,
            "num_rel_ret": 2,
            "bpref": 1.0,
        }
    )


def test_grouped_document_in_two_groups_finds_both():
    qrels = Qrels.from_groups({"q": [["a", "b"], ["b", "c"], ["d"]]}, {"q": [1, 3, 2]})
    ev = ranklens.evaluate(
        qrels, {"q": ["b", "x", "d"]}, ["P@3", "recall@3", "ap", "ndcg@3", "success@1", "rprec"]
    )
    r = ev.aggregate
    assert r["P@3"] == approx(2 / 3)  # b and d are the relevant documents
    assert r["recall@3"] == approx(1.0)  # all three groups found
    assert r["ap"] == approx((1 + 1 + 2 / 3) / 3)  # b finds two groups at rank 1
    ideal = 3 + 2 / np.log2(3) + 1 / 2
    assert r["ndcg@3"] == approx((3 + 2 / 2) / ideal)  # b's gain is its best group's grade
    assert r["rprec"] == approx(1.0)
    assert all(0 <= v <= 1 for v in r.values())


def test_grouped_qrels_errors():
    with pytest.raises(InputError, match="group 1 of query 'q' is empty"):
        Qrels.from_groups({"q": [["a"], []]})
    with pytest.raises(InputError, match="2 groups but 1 grades"):
        Qrels.from_groups({"q": [["a"], ["b"]]}, {"q": [1]})


def test_qrels_duplicate_label_is_an_error():
    with pytest.raises(DuplicateDocumentError, match="'d' is labelled twice in query 'q'"):
        Qrels.from_arrays(["q", "q"], ["d", "d"], [1, 0])


def test_bad_ids_and_grades_are_named():
    with pytest.raises(InputError, match=r"grade 1\.5 of document 'd' in query 'q'"):
        Qrels.from_dict({"q": {"d": 1.5}})
    with pytest.raises(InputError, match="document id in run must be a string or an integer"):
        Run.from_dict({"q": [None]})
    with pytest.raises(InputError, match="empty document id"):
        Run.from_dict({"q": {"": 1.0}})
    with pytest.raises(InputError, match="not a finite number"):
        Run.from_dict({"q": {"d": float("nan")}})
    with pytest.raises(InputError, match="evaluate: relevance_level must be a whole number >= 0"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, ["P@1"], relevance_level=-1)
    with pytest.raises(InputError, match="evaluate: duplicates must be one of 'error', 'first'"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, ["P@1"], duplicates="last")


def test_judged_arrays_are_reused_for_more_metrics():
    ev = ranklens.evaluate({"q": {"a": 2, "b": 0}}, {"q": ["a", "c", "b"]}, ["P@1"])
    more = ev.evaluate(["ndcg@3", "judged@3"])
    assert more.judged is ev.judged
    assert more["judged@3"] == approx(2 / 3)
    j = ev.judged
    # sparse tables: only the judged documents retrieved, with their ranks
    assert j.e_rank.tolist() == [1, 3] and j.e_label.tolist() == [2, 0]
    assert j.lens.tolist() == [3]
    assert [x.tolist() for x in j.view(1).credit] == [[0], [1]]


def test_run_round_trips_through_dict_and_lists():
    run = Run.from_dict({"q": {"a": 1.0, "b": 2.0}, "r": {"c": 0.5}})
    assert run.to_lists() == {"q": ["b", "a"], "r": ["c"]}
    assert run.to_dict() == {"q": {"b": 2.0, "a": 1.0}, "r": {"c": 0.5}}


def test_qrels_round_trips_through_dict_and_groups():
    qrels = Qrels.from_dict({"q": {"a": 2, "b": 0}})
    assert Qrels.from_dict(qrels.to_dict()) == qrels
    grouped = Qrels.from_groups({"q": [["a", "b"], ["c"]]})
    assert Qrels.from_groups(grouped.to_groups()) == grouped


def test_rows_of_a_query_need_not_be_adjacent_or_sorted():
    run = Run.from_arrays(["q10", "q2", "q10", "q1"], ["x", "y", "z", "w"])
    assert run.to_lists() == {"q1": ["w"], "q10": ["x", "z"], "q2": ["y"]}
    run = Run.from_dict({"q2": ["a", "b"], "q10": ["c"], "q1": ["d", "e"]})
    assert run.to_lists() == {"q1": ["d", "e"], "q10": ["c"], "q2": ["a", "b"]}


def test_table_footnote_reports_what_conventions_leave_out():
    ev = ranklens.evaluate(
        {"q": {"a": 0}, "r": ["b"]}, {"q": ["a"], "r": ["b", "b"]}, ["mrr"], convention="llamaindex"
    )
    text = ev.to_table()
    assert "1 without relevant documents (left out by the llamaindex convention)" in text
    assert "1 duplicate documents kept (count)" in text
