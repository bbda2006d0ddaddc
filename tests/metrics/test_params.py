"""Every metric parameter is declared once (ranklens.metrics.params): type, range, default,
description, reference. The messages, ``ranklens explain``'s parameter lines and the
reference page come from that declaration; a misspelled parameter or judging option is
named with the closest valid one; judging raises only its named errors.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

import ranklens
from ranklens.app.explain import parameter_lines
from ranklens.app.reference import metric_reference
from ranklens.errors import InputError, MetricNameError, UnknownOptionError
from ranklens.judging.build import condensed_pair, filled_pair
from ranklens.metrics import FAMILIES, parse_metric
from ranklens.metrics.params import Param, Range

BUILT_IN = dict(FAMILIES)  # the families registered by the core (tests may add their own)


@pytest.mark.parametrize("family", sorted(BUILT_IN))
def test_every_built_in_parameter_is_declared_with_words_and_a_range(family):
    for key, param in BUILT_IN[family].params.items():
        where = f"{family}({key}=...)"
        assert param.description and param.reference, f"{where}: no description or reference"
        assert "\n" not in param.description, f"{where}: the description is one line"
        if param.type in (int, float):
            assert param.range is not None, f"{where}: a number declares its range"
            assert param.default is None or param.default in param.range, where
        if param.choices:
            assert param.default is None or param.default in param.choices, where


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("rbp(p=1.5)", ["metric 'rbp(p=1.5)'", "p must be a number in (0, 1)", "got 1.5"]),
        ("rbp(p=abc)", ["p must be a number in (0, 1)", "got 'abc'"]),
        ("rbp_resid(p=1)", ["p must be a number in (0, 1)", "got 1"]),
        ("rbp(pp=0.5)", ["unknown parameter 'pp'; did you mean 'p'?", "rbp takes p, gains"]),
        ("P(rell=2)@5", ["unknown parameter 'rell'; did you mean 'rel'?"]),
        ("ndcg(gain=expp)@10", ["gain must be one of 'linear', 'exp', 'binary'",
                                "got 'expp'; did you mean 'exp'?"]),
        ("success(granular=ture)@5", ["granular must be true or false", "got 'ture'"]),
        ("err(max=0)@10", ["max must be a whole number >= 1", "got 0"]),
        ("err(max=2.5)@10", ["max must be a whole number >= 1", "got 2.5"]),
        ("iprec_at_recall_1.5", ["r must be a number in [0, 1]", "got 1.5"]),
        ("IPrec@1.5", ["r must be a number in [0, 1]", "got 1.5"]),
        ("utility(docs=-1)", ["docs must be a whole number >= 0", "got -1"]),
        ("set_F(beta=-1)", ["beta must be a number >= 0", "got -1"]),
        ("alpha_ndcg(alpha=nan)@10", ["alpha must be a number in [0, 1]", "got nan"]),
        ("nrbp(beta=0)", ["beta must be a number in (0, 1]", "got 0"]),
        ("Rprec_mult(m=-0.5)", ["m must be a number >= 0", "got -0.5"]),
        ("ndcg(gains={1:x})@5", ["gains must be grade:gain pairs", "got '{1:x}'"]),
        ("11pt_avg(points=[0.5,2])", ["points must be numbers in [0, 1]", "got '[0.5,2]'"]),
    ],
)  # fmt: skip
def test_a_refused_value_names_the_metric_the_parameter_the_range_and_what_it_got(name, parts):
    with pytest.raises(MetricNameError) as caught:
        parse_metric(name)
    for part in parts:
        assert part in str(caught.value), str(caught.value)


def test_values_set_after_parsing_are_checked_by_the_same_declaration():
    with pytest.raises(MetricNameError, match=r"docs must be a whole number >= 0 .* got -5"):
        parse_metric("utility").with_params(docs=-5)
    assert parse_metric("utility").with_params(docs=5).params[-1] == ("docs", 5)
    # the old free-form check of a user's own family still refuses, with the value received
    own = Param(float, 1.0, lambda w: w > 0, "weight must be > 0")
    with pytest.raises(MetricNameError, match=r"a number \(weight must be > 0\)"):
        own.parse("-1", "weight", "hits(weight=-1)")


def test_ranges_say_what_they_hold():
    assert [str(Range(0, 1)), str(Range(0, 1, "neither")), str(Range(0, 1, "right"))] == [
        "[0, 1]", "(0, 1)", "(0, 1]",
    ]  # fmt: skip
    assert [str(Range(1, None)), str(Range(0, None, "neither")), str(Range())] == [
        ">= 1", "> 0", "any",
    ]  # fmt: skip
    inside = Range(0, 1, "left")
    assert 0 in inside and 0.5 in inside and 1 not in inside and float("nan") not in inside
    assert True not in Range()  # a boolean is not a number here


def test_explain_and_the_reference_page_print_the_declarations():
    lines = parameter_lines("rbp(p=0.8)@10")
    assert lines[1] == "Parameters of rbp (this name sets p=0.8):"
    text = " ".join(" ".join(lines).split())
    assert text == " ".join(" ".join(["", *lines[1:]]).split())
    for key, param in BUILT_IN["rbp"].params.items():
        assert " ".join(param.summary(key).split()) in text
    page = metric_reference()
    for fam in BUILT_IN.values():
        for key, param in fam.params.items():
            assert f"- `{key}`{param.summary(key)[len(key) :]}" in page
    out = ranklens.app.explain.format_explanation(ranklens.app.explain.explain("P@5"), True)
    assert out.rstrip().endswith("P takes no parameter besides rel= (its own relevance level).")


def test_an_unknown_judging_option_is_named_with_the_closest_valid_one():
    with pytest.raises(UnknownOptionError) as caught:
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, ["P@1"], relevance_levle=2)
    message = str(caught.value)
    assert message.startswith(
        "unknown judging option 'relevance_levle'; did you mean 'relevance_level'?"
    )
    assert "duplicates" in message and "see ranklens.JudgeOptions" in message
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, InputError)
    with pytest.raises(UnknownOptionError, match=re.escape(
        "options 'duplicate' (did you mean 'duplicates'?), 'tokeniser' (did you mean "
        "'tokenizer'?)"
    )):  # fmt: skip
        ranklens.judge({"q": ["a"]}, {"q": ["a"]}, duplicate="first", tokeniser=str.split)
    with pytest.raises(UnknownOptionError, match=r"^unknown judging option 'zzz' \("):
        ranklens.JudgeOptions.build(zzz=1)


def test_judging_raises_its_named_errors_only():
    judged = ranklens.judge({"q": {"a": 1}}, {"q": ["x", "a"]})
    bare = dataclasses.replace(judged, join=None, condensed_cache=None, filled_cache=None)
    for build in (condensed_pair, filled_pair):
        with pytest.raises(InputError, match=r"made by hand, not by ranklens\.judge"):
            build(bare)
    assert condensed_pair(judged).view().j.n_queries == 1


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("P(judged_only=ture)@5", r"judged_only must be true or false .*got 'ture'"),
        ("SetP(relative=maybe)", r"relative must be true or false .*got 'maybe'"),
        ("SetF(beta=-1)", r"beta must be a number >= 0 .*got -1"),
        ("SetF(beta=abc)", r"beta must be a number >= 0 .*got 'abc'"),
    ],
)
def test_switches_outside_a_family_are_declared_and_never_guessed(name, match):
    """judged_only= and ir_measures' relative=/beta= are read through declared parameters:
    a misspelled boolean is refused, never read as false."""
    with pytest.raises(MetricNameError, match=match):
        parse_metric(name)
