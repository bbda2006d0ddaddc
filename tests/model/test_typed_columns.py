"""The model's typed seams read what they read before: diversity labels as columns of
numpy arrays (``SubtopicRows``), their subset, equality with and without intents, and a
TREC run read by the line parser named by its last run_id, as the scanner names it."""

from __future__ import annotations

import numpy as np

from ranklens.io.trec import read_trec_run
from ranklens.model import Qrels

LABELS = {
    "q1": {"t1": {"a": 1, "b": 0}, "t2": {"a": 1, "c": 2}},
    "q2": {"t1": {"d": 1}},
}


def test_subtopic_rows_as_arrays_equal_the_dict():
    qs, ts, ds, gs = [], [], [], []
    for q, topics in LABELS.items():
        for t, docs in topics.items():
            for d, g in docs.items():
                qs.append(q)
                ts.append(t)
                ds.append(d)
                gs.append(g)
    rows = (np.array(qs), np.array(ts), np.array(ds), np.array(gs, dtype=np.int64))
    assert Qrels.from_subtopics(rows=rows) == Qrels.from_subtopics(LABELS)


def test_subset_of_diversity_labels_keeps_the_intents():
    full = Qrels.from_subtopics(LABELS)
    part = full.subset(["q1"])
    assert part.intent is not None
    assert part == Qrels.from_subtopics({"q1": LABELS["q1"]})


def test_labels_with_intents_differ_from_labels_without():
    plain = Qrels.from_dict({"q2": {"d": 1}})
    with_intents = Qrels.from_subtopics({"q2": LABELS["q2"]})
    assert (plain == with_intents) is False
    assert (with_intents == plain) is False


def test_line_parser_names_the_run_by_its_last_run_id(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 2.0 first\nq1 Q0 b 2 1.0 last\n", encoding="utf-8")
    slow = read_trec_run(path, fast=False)
    fast = read_trec_run(path)
    assert slow.name == fast.name == "last"
    assert slow.to_dict() == fast.to_dict()
