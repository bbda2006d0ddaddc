"""A window's labelled retrievals are scored in one evaluation (each query asked again
under a name of its own, labelled as it is: ``Qrels.copies``); every value equals the
retrieval's own evaluation, on plain, grouped and diversity labels, for every metric."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ranklens import Qrels, Run, evaluate
from ranklens.monitoring.quality import labelled_values

DOCS = [f"d{i}" for i in range(8)]
METRICS = ["ndcg@5", "recall@3", "P@2", "map", "alpha_ndcg@5"]


@st.composite
def _qrels(draw):
    kind = draw(st.sampled_from(["plain", "grouped", "subtopics"]))
    queries = ["q0", "q1", "q2", "q3"]
    if kind == "plain":
        labels = {q: draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), max_size=5))
                  for q in queries}  # fmt: skip
        return Qrels.from_dict({q: v for q, v in labels.items() if v or q != "q3"})
    if kind == "grouped":
        group = st.lists(st.sampled_from(DOCS), min_size=1, max_size=3, unique=True)
        groups = {q: draw(st.lists(group, max_size=3)) for q in queries}
        grades = {q: [draw(st.integers(0, 3)) for _ in g] for q, g in groups.items()}
        return Qrels.from_groups(groups, grades)
    return Qrels.from_subtopics({q: {s: draw(st.dictionaries(st.sampled_from(DOCS),
                                                             st.integers(0, 2), max_size=3))
                                     for s in ("a", "b")} for q in queries[:3]})  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(_qrels(), st.lists(st.tuples(st.sampled_from(["q0", "q1", "q2", "q3"]),
                                    st.lists(st.sampled_from(DOCS), max_size=6)),
                          min_size=1, max_size=12), st.integers(1, 2))  # fmt: skip
def test_each_labelled_retrieval_scores_as_its_own_evaluation(qrels, samples, level):
    known = set(map(str, qrels.query_ids))  # the monitor scores labelled queries only
    samples = [(q, tuple(docs)) for q, docs in samples if q in known]
    assume(samples)
    metrics = METRICS if qrels.grouped else METRICS[:-1]  # diversity needs intents or groups
    got = labelled_values(qrels, samples, metrics, level)
    for i, (q, docs) in enumerate(samples):
        if not docs:
            want = dict.fromkeys(metrics, 0.0)  # found nothing: 0, as a failed query
        else:
            ev = evaluate(qrels, Run.from_dict({q: list(docs)}), metrics, missing="skip",
                          duplicates="first", relevance_level=level)  # fmt: skip
            per = {m.name: ev.per_query[m.name] for m in ev.metrics}
            want = {m: float(per[name.name][0]) if len(ev.query_ids) else 0.0
                    for m, name in zip(metrics, ev.metrics)}  # fmt: skip
        for m in metrics:
            assert got[m][i] == want[m] or (np.isnan(got[m][i]) and np.isnan(want[m])), (m, i)


def test_copies_keep_a_query_labelled_with_nothing_and_leave_out_unknown_ones():
    qrels = Qrels.from_groups({"q0": [["d1", "d2"], ["d3"]], "q1": []}, {"q0": [2, 1]})
    copy = qrels.copies({"a": "q0", "b": "q1", "c": "q9", "d": "q0"})
    assert sorted(map(str, copy.query_ids)) == ["a", "b", "d"]
    assert copy.to_groups() == {"a": [["d1", "d2"], ["d3"]], "b": [],
                                "d": [["d1", "d2"], ["d3"]]}  # fmt: skip
    assert copy.group_grades()["d"] == [2, 1]


def test_copies_of_labels_read_from_a_file_are_those_of_the_labels_in_memory(tmp_path):
    """Labels read from a TREC file keep their ids as bytes until needed: the copies read
    only the copied rows' ids, and equal the copies of the same labels built in memory."""
    from ranklens import read_qrels

    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\nq3 0 d9 1\n")
    names = {"a": "q1", "b": "q2", "c": "q1", "x": "q7"}
    from_file = read_qrels(path).copies(names)
    in_memory = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}, "q3": {"d9": 1}})
    assert from_file.to_dict() == in_memory.copies(names).to_dict() == {
        "a": {"d1": 2, "d2": 0}, "b": {"d3": 1}, "c": {"d1": 2, "d2": 0}}  # fmt: skip
