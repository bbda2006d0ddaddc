"""Budget metric names (``recall@1024tok``): every spelling parses to one canonical form that
parses back to the same metric; bad budgets are refused with the fix."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens.errors import MetricNameError
from ranklens.judging import Budget
from ranklens.metrics import FAMILIES, parse_metric

WITH_CUTOFF = sorted(n for n, f in FAMILIES.items() if f.cutoff and not f.value_param)
PARTIAL = sorted(n for n, f in FAMILIES.items() if f.partial_budget)
SPELLINGS = {"tok": ("tok", "token", "tokens", "TOK"), "char": ("char", "chars", "characters")}


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(WITH_CUTOFF),
    st.integers(1, 10**6),
    st.sampled_from(["tok", "char"]),
    st.data(),
)
def test_every_spelling_parses_to_one_canonical_name_that_round_trips(fam, amount, unit, data):
    spelling = data.draw(st.sampled_from(SPELLINGS[unit]))
    straddle = data.draw(
        st.sampled_from(["exclude", "include", *(["partial"] if fam in PARTIAL else [])])
    )
    space = data.draw(st.sampled_from(["", " "]))
    name = f"{fam}(straddle={straddle})@{amount}{space}{spelling}"
    m = parse_metric(name)
    assert m.budget == Budget(amount, unit) and m.k is None and m.straddle == straddle
    canonical = str(m)
    assert canonical.endswith(f"@{amount}{unit}")
    assert ("straddle=" in canonical) == (straddle != "exclude")
    again = parse_metric(canonical)
    assert (again.family, again.budget, again.straddle, again.params, again.level) == (
        m.family, m.budget, m.straddle, m.params, m.level,
    )  # fmt: skip
    assert str(again) == canonical


def test_canonical_forms():
    assert str(parse_metric("recall@1024 tokens")) == "recall@1024tok"
    assert str(parse_metric("NDCG@2000characters")) == "ndcg@2000char"
    assert str(parse_metric("hit_rate(straddle=include)@512token")) == (
        "success(straddle=include)@512tok"
    )
    assert str(parse_metric("recall(straddle=exclude)@10tok")) == "recall@10tok"
    m = parse_metric("evidence_recall(straddle=partial)@300chars")
    assert (m.budget, m.straddle) == (Budget(300, "char"), "partial")
    assert parse_metric("recall@10").budget is None


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("recall@0tok", "whole number >= 1 of tokens"),
        ("recall@2.5char", "whole number >= 1 of characters"),
        ("recall@-4tok", "whole number >= 1"),
        ("map_avgjg@100tok", "takes no cutoff, so no budget"),
        ("rprec@100tok", "takes no cutoff"),
        ("recall@10@1024tok", "a rank cutoff and a budget together"),
        ("recall@1024furlongs", "unknown budget unit 'furlongs'"),
        ("recall@1024toks", "did you mean 'tok'"),
        ("recall(straddle=partial)@10tok", "evidence_recall, evidence_precision, evidence_iou"),
        (
            "ndcg(straddle=sometimes)@10tok",
            "straddle must be one of 'exclude', 'include', 'partial'",
        ),
        ("recall(straddle=include)@10", "it needs a budget"),
        ("recall(judged_only=true)@10tok", "judged_only"),
    ],
)
def test_bad_budgets_are_refused_with_the_fix(name, says):
    with pytest.raises(MetricNameError, match="metric") as err:
        parse_metric(name)
    assert says in str(err.value)


def test_straddle_is_offered_for_a_misspelt_parameter():
    with pytest.raises(MetricNameError, match="did you mean 'straddle'"):
        parse_metric("recall(stradle=include)@10tok")


def test_the_budget_dataclass_refuses_what_a_name_cannot_say():
    from ranklens.errors import InputError

    with pytest.raises(InputError, match=">= 1"):  # the declared check, before any work
        Budget(0, "tok")
    with pytest.raises(InputError, match=r"'tok'.*'char'"):
        Budget(10, "words")
    with pytest.raises(InputError, match="whole number"):
        Budget(1.5, "char")  # type: ignore[arg-type]


def test_explain_gives_the_budgets_formula_and_computes_it_on_the_example():
    from ranklens.app.explain import budget_lines, explain, format_explanation

    assert budget_lines("recall@10") == []
    text = "\n".join(budget_lines("ndcg(straddle=include)@2000characters"))
    assert "ndcg(straddle=include)@2000char is ndcg" in text
    assert "c_q = max { c : s_1 + ... + s_c <= 2000 }" in text and "c_q + 1" in text
    ex = explain("recall@20tok")
    shown = format_explanation(ex, example=True)
    assert "fit a context of 20 tokens" in shown
    # the example's budget cuts some list before its end: a different number from recall
    assert ex.baseline_value != explain("recall@1000").baseline_value
