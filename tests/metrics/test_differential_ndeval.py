"""Differential tests: the diversity measures against ndeval (pyndeval) on
hypothesis-generated diversity qrels and runs, per query and mean, to 1e-9.

Inputs: several queries with several subtopics each, judgments 0-2, documents relevant to
several subtopics, ids whose string order differs from their numeric order (ndeval breaks
ideal-ranking ties by id), runs with unjudged documents, runs shorter than k, relevance
levels 1 and 2, alpha 0.5 / 0.3 / 0.8, beta 0.5 / 0.9, and the same truth as grouped
ground truth. Scores are distinct: pyndeval breaks score ties by id ascending, ranklens as
trec_eval (descending). Where ndeval is wrong (ERR-IA@1 and alpha-DCG@1 unnormalised, nNRBP
0/0 for a query without relevant documents) the test checks ranklens' value and how
ndeval's relates to it.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError
from ranklens.model import Qrels

pyndeval = pytest.importorskip("pyndeval")

CUTS = (1, 2, 3, 5, 10, 20)
CUT_MEASURES = ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec")
UNNORMALISED_AT_1 = {"ERR-IA@1", "alpha-DCG@1"}  # ndeval's defect: not divided by S
MEASURES = [f"{m}@{k}" for m in CUT_MEASURES for k in CUTS] + ["NRBP", "nNRBP", "MAP-IA"]
DOCS = [f"d{i}" for i in (1, 2, 3, 10, 11, 20, 100, 5, 7)]  # "d10" < "d2" as strings


@st.composite
def diversity_case(draw):
    n_q = draw(st.integers(1, 4))
    rows = []
    runs = {}
    for qi in range(n_q):
        qid = f"q{qi}"
        n_sub = draw(st.integers(1, 4))
        for s in range(n_sub):
            judged = draw(st.lists(st.sampled_from(DOCS), max_size=6, unique=True))
            for doc in judged:
                rows.append((qid, f"s{s}", doc, draw(st.integers(0, 2))))
        if draw(st.booleans()) or qi == 0:
            retrieved = draw(
                st.lists(st.sampled_from([*DOCS, "u1", "u2"]), max_size=11, unique=True)
            )
            runs[qid] = {doc: float(len(retrieved) - i) for i, doc in enumerate(retrieved)}
    if not any(r[0] == "q0" for r in rows):  # the run's first query is labelled
        rows.append(("q0", "s0", "d1", 1))
    level = draw(st.sampled_from([1, 2]))
    alpha = draw(st.sampled_from([0.5, 0.3, 0.8]))
    beta = draw(st.sampled_from([0.5, 0.9]))
    # emitted by subtopic, so pyndeval's subtopic numbering (first appearance) follows the
    # subtopic names, as ranklens' does: gains then sum in the same order
    rows.sort(key=lambda r: (r[1], r[0], r[2]))
    return rows, runs, level, alpha, beta


def ndeval(rows, runs, level, alpha, beta):
    run = [(q, d, s) for q, docs in runs.items() for d, s in docs.items()]
    ev = pyndeval.RelevanceEvaluator(rows, MEASURES, relevance_level=level, alpha=alpha, beta=beta)
    return ev.evaluate(run)


def ours(qrels, runs, level, alpha, beta):
    names = [
        m.replace("@", f"(alpha={alpha})@") if m.split("@")[0] in CUT_MEASURES[:4] else m
        for m in MEASURES
    ]
    names = [n.replace("NRBP", f"NRBP(alpha={alpha},beta={beta})") for n in names]
    ev = ranklens.evaluate(qrels, runs, metrics=names, relevance_level=level, missing="skip")
    return ev, dict(zip(MEASURES, names))


def subtopic_count(rows, level):
    out: dict[str, set] = {}
    for q, s, _, g in rows:
        if g >= level:
            out.setdefault(q, set()).add(s)
    return {q: len(v) for q, v in out.items()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(diversity_case())
def test_diversity_measures_equal_ndeval(case):
    rows, runs, level, alpha, beta = case
    expected = ndeval(rows, runs, level, alpha, beta)
    qrels = Qrels.from_subtopics(rows=tuple(map(list, zip(*rows))))
    ev, names = ours(qrels, runs, level, alpha, beta)
    counts = subtopic_count(rows, level)
    for qid in expected:
        expected[qid]["S"] = counts.get(qid, 0)
    _check_with_counts(ev, names, expected)
    if set(ev.query_ids) != set(expected):
        return  # pyndeval leaves out a query whose ranking is empty
    for m in MEASURES:  # ranklens' mean equals the mean of ndeval's values
        if m in UNNORMALISED_AT_1 or m == "nNRBP":
            continue
        want = sum(expected[q][m] for q in expected) / len(expected)
        assert math.isclose(ev[names[m]], want, rel_tol=1e-12, abs_tol=1e-9), m


def _check_with_counts(ev, names, expected):
    for qid, want in expected.items():
        got = ev.query(qid)
        for m in MEASURES:
            value, ref = got[names[m]], want[m]
            if m == "nNRBP" and math.isnan(ref):  # ndeval: 0/0 when no relevant document
                assert value == 0.0, (qid, m)
                continue
            if m in UNNORMALISED_AT_1 and want["S"]:  # ndeval leaves rank 1 undivided
                ref = ref / want["S"]
            assert math.isclose(value, ref, rel_tol=1e-12, abs_tol=1e-9), (qid, m, value, ref)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(diversity_case())
def test_grouped_ground_truth_is_intents(case):
    """Grouped ground truth: each group an intent, its grade every member's judgment."""
    rows, runs, level, alpha, beta = case
    groups: dict[str, dict[str, list[str]]] = {}
    grades: dict[str, dict[str, int]] = {}
    for q, s, d, g in rows:
        groups.setdefault(q, {}).setdefault(f"{s}/{g}", []).append(d)
        grades.setdefault(q, {})[f"{s}/{g}"] = g
    as_groups = {q: list(v.values()) for q, v in groups.items()}
    as_grades = {q: list(grades[q].values()) for q in groups}
    # pyndeval sees one subtopic per group
    flat = sorted(
        (
            (q, key, d, grades[q][key])
            for q, v in groups.items()
            for key, ds in v.items()
            for d in ds
        ),
        key=lambda r: (r[1], r[0], r[2]),
    )
    expected = ndeval(flat, runs, level, alpha, beta)
    counts = subtopic_count(flat, level)
    for qid in expected:
        expected[qid]["S"] = counts.get(qid, 0)
    ev, names = ours(Qrels.from_groups(as_groups, as_grades), runs, level, alpha, beta)
    _check_with_counts(ev, names, expected)


def test_hand_checked_example():
    """Two subtopics; d1 covers both. alpha-nDCG@2 by hand: run d2, d1 gains 1 and
    0.5 + 1 = 1.5 (a covered again, b new); ideal d1, d2 gains 2 and 0.5."""
    qrels = Qrels.from_subtopics({"1": {"a": {"d1": 1, "d2": 1}, "b": {"d1": 1}}})
    ev = ranklens.evaluate(
        qrels, {"1": {"d2": 2.0, "d1": 1.0}},
        metrics=["alpha-nDCG@2", "ERR-IA@1", "strec@1", "P-IA@2", "MAP-IA", "nNRBP"],
    )  # fmt: skip
    dcg = 1 + 1.5 / math.log2(3)
    ideal = 2 + 0.5 / math.log2(3)
    assert ev["alpha-nDCG@2"] == pytest.approx(dcg / ideal, abs=1e-15)
    assert ev["ERR-IA@1"] == pytest.approx(0.5)  # 1 / S; ndeval prints 1.0
    assert ev["strec@1"] == 0.5
    assert ev["P-IA@2"] == pytest.approx(3 / 4)
    # AP of a: d2 at 1, d1 at 2 -> (1 + 1) / 2; of b: d1 at 2 -> 1/2
    assert ev["MAP-IA"] == pytest.approx((1.0 + 0.5) / 2)
    assert 0 < ev["nNRBP"] < 1


def test_no_relevant_intent_scores_zero_not_nan():
    qrels = Qrels.from_subtopics({"1": {"a": {"d1": 0}}, "2": {"a": {"x": 1}}})
    ev = ranklens.evaluate(
        qrels, {"1": {"d1": 1.0}, "2": {"x": 1.0}}, metrics=["nNRBP", "ERR-IA@5"]
    )
    assert ev.query("1") == {"nNRBP": 0.0, "ERR-IA@5": 0.0}
    assert ev.query("2")["nNRBP"] == 1.0


def test_plain_labels_refused_with_the_way_out():
    with pytest.raises(InputError, match="subtopics=True"):
        ranklens.evaluate({"1": {"d1": 1}}, {"1": {"d1": 1.0}}, metrics=["alpha_nDCG@10"])


def test_trec_diversity_file(tmp_path: Path):
    path = tmp_path / "div.qrels"
    path.write_text("1 1 d1 1\n1 2 d1 1\n1 2 d2 0\n# comment\n2 1 x 1\n")
    qrels = ranklens.read_qrels(path, subtopics=True)
    assert qrels.intent is not None and len(qrels.query_ids) == 2
    ev = ranklens.evaluate(qrels, {"1": {"d1": 1.0}, "2": {"y": 1.0}}, metrics=["strec@1"])
    assert ev.query("1")["strec@1"] == 1.0 and ev.query("2")["strec@1"] == 0.0
    path.write_text("1 1 d1 1\n1 1 d1 0\n")
    with pytest.raises(
        InputError, match=r"judged twice for subtopic '1' of query '1' \(lines 1 and 2\)"
    ):
        ranklens.read_qrels(path, subtopics=True)
    path.write_text("1 1 d1 1\n1 2 d1 1\n")
    with pytest.raises(InputError, match="subtopics=True"):
        ranklens.read_qrels(path)


def test_a_repeated_document_covers_again_only_when_duplicates_count():
    """ndeval refuses duplicates; under Haystack's ``redundant`` a repeat covers nothing,
    under ``count`` it covers its intents again (novelty gain 1 - alpha)."""
    from ranklens.model import Run

    qrels = Qrels.from_subtopics({"1": {"a": {"d1": 1}}})
    run = Run.from_arrays(["1", "1"], ["d1", "d1"], [2.0, 1.0])
    name = "alpha-DCG@2"
    ii = 1 + 0.5 / math.log2(3)  # S (1 + (1 - alpha) / log2 3)
    once = ranklens.evaluate(qrels, run, metrics=[name], duplicates="redundant")
    twice = ranklens.evaluate(qrels, run, metrics=[name], duplicates="count")
    assert once[name] == pytest.approx(1 / ii, abs=1e-15)
    assert twice[name] == pytest.approx(1.0, abs=1e-15)


def test_cli_reads_diversity_qrels_with_subtopics(tmp_path: Path, capsys):
    from ranklens.app.cli import main

    qrels, run = tmp_path / "div.qrels", tmp_path / "div.run"
    qrels.write_text("1 1 d1 1\n1 2 d1 1\n1 2 d2 1\n")
    run.write_text("1 Q0 d2 1 2.0 r\n1 Q0 d1 2 1.0 r\n")
    assert (
        main(["evaluate", str(qrels), str(run), "--subtopics", "-m", "strec@1", "--format", "json"])
        == 0
    )
    assert '"strec@1": 0.5' in capsys.readouterr().out
    assert main(["evaluate", str(qrels), str(run), "-m", "strec@1"]) == 2
    assert "--subtopics" in capsys.readouterr().err
