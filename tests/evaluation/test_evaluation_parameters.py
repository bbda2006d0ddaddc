"""evaluate, evaluate_judgment_groups, evaluate_file and write_per_query check every declared
parameter before any work: a bad value is a ParameterError naming the entry point and the
parameter, never a bare TypeError, never a silent wrong number."""

from __future__ import annotations

import math

import pytest

from ranklens.declared import ParameterError
from ranklens.evaluation import evaluate
from ranklens.evaluation.groups import evaluate_judgment_groups
from ranklens.evaluation.per_query import write_per_query
from ranklens.evaluation.stream import evaluate_file
from ranklens.judging import JudgeOptions

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}}
RUN = {"q1": ["a", "x"], "q2": ["x", "b"]}

BAD = [
    ("memory", float("nan")), ("memory", -1), ("memory", 10), ("memory", "lots"),
    ("memory", float("-inf")), ("memory", True), ("memory", [1]),
    ("trec_eval_version", "11"), ("trec_eval_version", 8), ("trec_eval_version", 9.5),
    ("trec_eval_version", None),
    ("relevance_level", -1), ("relevance_level", 1.5), ("relevance_level", float("nan")),
    ("relevance_level", "1"), ("relevance_level", True),
    ("score_precision", "float16"), ("convention", "trek"), ("convention", 3),
    ("judged_only", "yes"), ("judged_only", 1), ("ties", "tre"),
    ("duplicates", "frist"), ("missing", "zeros"), ("gain", 2), ("gain_level", 1),
    ("ordering", "given "), ("options", "trec"), ("options", {"ties": "best"}),
]  # fmt: skip


@pytest.mark.parametrize(("param", "value"), BAD)
def test_a_bad_evaluate_parameter_is_named(param, value):
    with pytest.raises(ParameterError, match=rf"^evaluate: {param} must be"):
        evaluate(QRELS, RUN, ["P@1"], **{param: value})


@pytest.mark.parametrize(("param", "value"), [b for b in BAD if b[0] != "memory"])
def test_a_bad_judgment_groups_parameter_is_named(param, value):
    groups = {"alice": QRELS, "bob": {"q1": {"x": 1}}}
    with pytest.raises(ParameterError, match=rf"^evaluate_judgment_groups: {param} must be"):
        evaluate_judgment_groups(groups, RUN, ["P@1"], **{param: value})


@pytest.mark.parametrize(
    ("param", "value"),
    [*[b for b in BAD if b[0] not in ("trec_eval_version",)],
     ("memory", None), ("memory", math.inf), ("tmp_dir", 3), ("per_query", ""),
     ("progress", "yes"), ("backend", "rya"), ("ray", "local"), ("trec_eval_version", "11")],
)  # fmt: skip
def test_a_bad_evaluate_file_parameter_is_named(param, value, tmp_path):
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 a 1 2 r\nq2 Q0 b 1 1 r\n")
    with pytest.raises(ParameterError, match=rf"^evaluate_file: {param} must be"):
        evaluate_file(QRELS, run, ["P@1"], **{param: value})


@pytest.mark.parametrize("path", [3, "", None, ["a.csv"]])
def test_write_per_query_names_a_bad_path(path):
    with pytest.raises(ParameterError, match=r"^write_per_query: path must be"):
        write_per_query(evaluate(QRELS, RUN, ["P@1"]), path)


def test_good_values_keep_working(tmp_path):
    assert evaluate(QRELS, RUN, "P@1").aggregate == {"P@1": 0.5}
    assert evaluate(QRELS, RUN, ["P@1"], trec_eval_version=9).aggregate == {"P@1": 0.5}
    assert evaluate(QRELS, RUN, ["P@1"], memory=math.inf, convention="TREC").aggregate == {
        "P@1": 0.5
    }
    assert evaluate(QRELS, RUN, ["P@1"], options=JudgeOptions(ties="input")).aggregate == {
        "P@1": 0.5
    }
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 a 1 2 r\nq2 Q0 x 1 2 r\nq2 Q0 b 2 1 r\n")
    assert evaluate_file(QRELS, run, "P@1", memory="64K").aggregate == {"P@1": 0.5}


@pytest.mark.parametrize(
    ("field", "value"),
    [("relevance_level", -1), ("relevance_level", 2.5), ("relevance_level", float("nan")),
     ("score_precision", "f32"), ("ties", "random"), ("convention", "trek"),
     ("judged_only", "no")],
)  # fmt: skip
def test_judge_options_check_themselves_by_the_declaration(field, value):
    with pytest.raises(ParameterError, match=rf"^JudgeOptions: {field} must be"):
        JudgeOptions(**{field: value})
