"""A renderer's options reached by name (``report.render("html", max_rows=...)``, the
registry) are checked as the ``Report`` methods' are: a bad value or a misspelled keyword is
a ParameterError naming the renderer and the option, never a bare TypeError, a silent
"Showing -1 of 3 queries" or a colour switch read from any truthy text."""

from __future__ import annotations

import math

import pytest

import ranklens
from ranklens.declared import ParameterError


@pytest.fixture(scope="module")
def report():
    qrels = {"q1": ["a"], "q2": ["b"], "q3": ["c"]}
    runs = {
        "r": {"q1": ["a"], "q2": ["x"], "q3": ["c"]},
        "s": {"q1": ["x"], "q2": ["b"], "q3": ["y"]},
    }
    return ranklens.compare(qrels, runs, ["P@1"], stats=ranklens.Statistics(n_resamples=100))


BAD = [
    ("html", "max_rows", -1),
    ("html", "max_rows", 1.5),
    ("html", "max_rows", math.nan),
    ("html", "max_rows", "10"),
    ("html", "fragment", "yes"),
    ("html", "title", 5),
    ("html_fragment", "max_rows", -3),
    ("text", "color", "no"),
    ("text", "comparisons", None),
    ("text", "digits", -1),
    ("text", "digits", math.inf),
    ("print", "comparisons", 1),
    ("rich", "details", "all"),
    ("markdown", "digits", 2.5),
    ("markdown", "details", "yes"),
    ("latex", "caption", ["a"]),
    ("latex", "digits", "4"),
    ("csv", "kind", "summry"),
    ("csv", "kind", 3),
    ("pandas", "kind", None),
]


@pytest.mark.parametrize(("fmt", "option", "value"), BAD)
def test_a_bad_option_names_the_renderer_and_the_option(report, fmt, option, value):
    with pytest.raises(ParameterError, match=rf"render\('\w+'\): {option} must be"):
        report.render(fmt, **{option: value})


@pytest.mark.parametrize(
    ("fmt", "wrong", "meant"),
    [("markdown", "digit", "digits"), ("html", "max_row", "max_rows"), ("text", "colour", "color"),
     ("latex", "captions", "caption"), ("csv", "kinds", "kind")],
)  # fmt: skip
def test_a_misspelled_option_names_the_closest(report, fmt, wrong, meant):
    with pytest.raises(ParameterError, match=f"did you mean '{meant}'"):
        report.render(fmt, **{wrong: 1})


def test_good_options_render(report):
    assert "Showing 1 of 3 queries" in report.render("html", max_rows=1)
    assert "Per query" in report.render("html", max_rows=0)
    assert "**0.67**" in report.render("markdown", digits=2)


@pytest.mark.parametrize("bad", [{"artifacts": "no"}, {"run_name": 3}, {"experiment": ""}])
def test_log_mlflow_options_are_checked_before_mlflow_is_needed(report, bad):
    with pytest.raises(ParameterError, match=f"log_mlflow: {next(iter(bad))} must be"):
        report.log_mlflow(**bad)
