"""Conventions reproduce each tool's numbers on the tricky case of
../shared/reference/conventions.md (section 2), whose values were computed by running the
tools: ties, a negative label, a duplicate, a query without relevant documents, a query
missing from the run."""

from __future__ import annotations

import pytest

import ranklens
from ranklens.app.explain import EXAMPLE_QRELS, EXAMPLE_RUN, explain, format_explanation
from ranklens.judging.conventions import (
    AUTORAG,
    HAYSTACK,
    LLAMAINDEX,
    TREC,
    Convention,
    get_convention,
)

approx = pytest.approx
Q = EXAMPLE_QRELS
RUN = EXAMPLE_RUN


def values(convention, metrics, **opts):
    return ranklens.evaluate(Q, RUN, metrics, convention=convention, **opts)


# (query, metric) -> value from the reference table, per tool
TABLE = {
    "trec": {
        ("q1", "rr@10"): 0.5,
        ("q1", "ap"): 0.380,
        ("q1", "ndcg@5"): 0.2712,
        ("q1", "P@5"): 0.4,
        ("q1", "recall@5"): 0.4,
        ("q3", "P@5"): 0.2,
        ("q3", "ndcg@5"): 0.4693,
        ("q4", "P@5"): 0.4,
        ("q4", "ap"): 0.833,
        ("q4", "ndcg@5"): 0.9197,
        ("q2", "ap"): 0.0,
    },
    "llamaindex": {
        ("q1", "rr@10"): 0.5,
        ("q1", "ap"): 0.380,
        ("q1", "ndcg@5"): 0.3452,
        ("q1", "P@5"): 0.4,
        ("q1", "recall@5"): 0.4,
        ("q3", "P@5"): 0.5,
        ("q3", "ndcg@5"): 0.4693,
        ("q4", "P@5"): 0.667,
        ("q4", "ap"): 1.375,
        ("q4", "ndcg@5"): 1.2641,
    },
    "haystack": {
        ("q1", "rr@10"): 0.5,
        ("q1", "ap"): 0.380,
        ("q1", "ndcg@5"): 0.3985,
        ("q1", "recall@5"): 0.4,
        ("q3", "ndcg@5"): 0.4693,
        ("q4", "ap"): 0.75,
        ("q4", "ndcg@5"): 0.8772,
        ("q2", "ap"): 0.0,
    },
    "autorag": {
        ("q1", "rr@10"): 0.198,
        ("q1", "ap"): 0.198,
        ("q1", "ndcg@5"): 0.3452,
        ("q1", "P@5"): 0.4,
        ("q1", "recall@5"): 0.4,
        ("q3", "P@5"): 0.5,
        ("q3", "ndcg@5"): 0.6131,
        ("q4", "P@5"): 0.5,
        ("q4", "ap"): 0.625,
        ("q4", "ndcg@5"): 1.2641,
    },
}


@pytest.mark.parametrize("tool", list(TABLE))
def test_reference_table(tool):
    cells = TABLE[tool]
    metrics = sorted({m for _, m in cells})
    opts = {"duplicates": "first"} if tool == "trec" else {}  # trec_eval stops on it
    ev = values(tool, metrics, **opts)
    for (qid, metric), want in cells.items():
        assert ev.query(qid)[metric] == approx(want, abs=5e-4), (tool, qid, metric)


def test_trec_stops_on_the_duplicate_like_trec_eval():
    with pytest.raises(ranklens.DuplicateDocumentError, match=r"'g1'.*'q4'"):
        values("trec", ["map"])


@pytest.mark.parametrize(("tool", "mean"), [("haystack", 0.3658), ("autorag", 0.386)])
def test_map_means_over_the_queries_each_tool_saw(tool, mean):
    # the tools only saw q1-q4 (q5 was never run); AutoRAG drops q2 (None), Haystack keeps it
    qrels = {q: v for q, v in Q.items() if q != "q5"}
    ev = ranklens.evaluate(qrels, RUN, ["map"], convention=tool)
    assert ev["map"] == approx(mean, abs=5e-4)
    skipped = ev.counts["queries_no_relevant_skipped"]
    assert skipped == (1 if tool == "autorag" else 0)


def test_ir_measures_missing_query_policy_equals_trec_minus_c():
    qrels = dict(Q)
    ev = ranklens.evaluate(qrels, RUN, ["map"], duplicates="first")
    assert ev["map"] == approx(0.3093, abs=5e-4)  # q5 scored 0 (trec -c, ir_measures)
    ev = ranklens.evaluate(qrels, RUN, ["map"], duplicates="first", missing="skip")
    assert ev["map"] == approx(0.3867, abs=5e-4)  # trec_eval 9 without -c


def test_autorag_worked_example_with_groups():
    """worked-examples.md §6: AutoRAG's own numbers for grouped ground truth."""
    gt = ranklens.Qrels.from_groups({"q": [["test-1", "test-2"], ["test-3"]]})
    run = {"q": ["test-1", "pred-1", "test-2", "pred-3"]}
    ev = ranklens.evaluate(
        gt, run, ["P", "recall", "f1", "mrr", "map", "ndcg"], convention="autorag"
    )
    assert ev.aggregate == approx(
        {"P": 0.5, "recall": 0.5, "f1": 0.5, "mrr": 0.5, "map": 5 / 12, "ndcg": 0.7039}, abs=5e-5
    )


def test_conventions_are_data_and_can_be_derived():
    assert get_convention("LlamaIndex") is LLAMAINDEX
    mine = TREC.with_(ordering="given")
    assert mine.name == "trec+ordering=given"
    assert mine.differences(TREC) == {"ordering": ("given", "score")}
    assert set(HAYSTACK.differences(TREC)) == {"ordering", "duplicates", "ideal", "gain_level"}
    assert AUTORAG.unit_average and not LLAMAINDEX.unit_average
    with pytest.raises(ranklens.InputError, match="duplicates must be one of"):
        Convention("x", duplicates="sometimes")
    with pytest.raises(ranklens.InputError, match="unknown convention 'nope'"):
        get_convention("nope")


def test_switch_keywords_derive_a_convention():
    ev = ranklens.evaluate(
        Q, RUN, ["P@5"], convention="trec", duplicates="first", precision_denominator="retrieved"
    )
    assert ev.judged.convention.precision_denominator == "retrieved"
    assert ev.query("q3")["P@5"] == 0.5


def test_explain_names_the_switch_behind_each_difference():
    ex = explain("mrr@10")
    assert ex.baseline.name == "trec+duplicates=first"
    rows = {r.convention.name: r for r in ex.rows}
    # trec_eval stops on the duplicate: the row shows the duplicates=first value and says why,
    # so the built-in example never opens with an error line
    assert rows["trec"].value == approx(0.5) and "appears more than once" in rows["trec"].note
    assert rows["autorag"].value == approx(0.2892, abs=5e-4)
    assert "unit_average" in {s for s, _, _ in rows["autorag"].effects}
    text = format_explanation(ex, example=True)
    assert "error" not in text.splitlines()[1]
    assert "unit_average=True alone" in text and "no_relevant=skip alone" in text


def test_explain_cli(capsys, tmp_path):
    from ranklens.app.cli import main

    (tmp_path / "q").write_text("a 0 d1 1\na 0 d2 1\n")
    (tmp_path / "r").write_text("a Q0 d3 1 3 t\na Q0 d1 2 2 t\na Q0 d1 3 1 t\n")
    assert main(["explain", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "map"]) == 0
    out = capsys.readouterr().out
    assert "llamaindex" in out and "duplicates=count alone" in out


def test_docs_table_is_generated_from_the_code():
    from pathlib import Path

    from ranklens.judging.conventions import conventions_table

    doc = (Path(__file__).resolve().parents[2] / "docs" / "conventions.md").read_text()
    hint = "regenerate with: python -m ranklens.app.reference conventions"
    assert conventions_table() in doc, hint


@pytest.mark.parametrize("metric", ["mrr@10", "map", "ndcg@5", "P@5"])
def test_docs_explain_tables_are_generated_from_the_code(metric):
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "conventions.md").read_text()
    text = format_explanation(explain(metric), example=True)
    assert text in doc, f"regenerate docs/conventions.md with: ranklens explain -m {metric}"
