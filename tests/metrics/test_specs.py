"""Metric names: ranklens/ir_measures style, trec_eval names and -m forms, errors."""

from __future__ import annotations

import pytest

from ranklens import MetricNameError, parse_metric
from ranklens.metrics import FAMILIES, expand_metric_names, known_names, parse_metrics


@pytest.mark.parametrize(
    ("name", "family", "k", "params", "level"),
    [
        ("ndcg@10", "ndcg", 10, {"gain": None, "gains": None}, None),
        ("nDCG@10", "ndcg", 10, {"gain": None, "gains": None}, None),
        ("ndcg_cut_10", "ndcg", 10, {"gain": None, "gains": None}, None),
        ("ndcg_exp@10", "ndcg", 10, {"gain": "exp", "gains": None}, None),
        ("ndcg(gain=exp)@5", "ndcg", 5, {"gain": "exp", "gains": None}, None),
        ("P@5", "P", 5, {}, None),
        ("p_5", "P", 5, {}, None),
        ("P(rel=2)@10", "P", 10, {}, 2),
        ("recall@100", "recall", 100, {}, None),
        ("recall_1000", "recall", 1000, {}, None),
        ("mrr@10", "rr", 10, {"granular": False}, None),
        ("recip_rank", "rr", None, {"granular": False}, None),
        ("RR@10", "rr", 10, {"granular": False}, None),
        ("map", "ap", None, {}, None),
        ("map@100", "ap", 100, {}, None),
        ("map_cut_100", "ap", 100, {}, None),
        ("AP@100", "ap", 100, {}, None),
        ("rprec", "rprec", None, {}, None),
        ("Rprec", "rprec", None, {}, None),
        ("bpref", "bpref", None, {}, None),
        ("err@20", "err", 20, {"max": None}, None),
        ("err(max=4)@20", "err", 20, {"max": 4}, None),
        ("rbp(p=0.8)", "rbp", None, {"p": 0.8, "gains": None}, None),
        ("rbp", "rbp", None, {"p": 0.9, "gains": None}, None),
        ("rbp(gains={2:4,1:1.5})", "rbp", None, {"p": 0.9, "gains": ((1, 1.5), (2, 4.0))}, None),
        (
            "ndcg(gains={1=3.5, 2=9})@5",
            "ndcg",
            5,
            {"gain": None, "gains": ((1, 3.5), (2, 9.0))},
            None,
        ),
        ("G", "G", None, {"gains": None}, None),
        (
            "utility(a=2,d=0.5,docs=100)",
            "utility",
            None,
            {"a": 2.0, "b": -1.0, "c": 0.0, "d": 0.5, "docs": 100},
            None,
        ),
        (
            "11pt_avg(points=[0.2,0.5,0.8])",
            "11pt_avg",
            None,
            {"legacy": False, "points": (0.2, 0.5, 0.8)},
            None,
        ),
        ("hit_rate@5", "success", 5, {"granular": False}, None),
        ("success_10", "success", 10, {"granular": False}, None),
        ("set_F", "set_F", None, {"beta": 1.0}, None),
        ("num_rel_ret", "num_rel_ret", None, {}, None),
        ("iprec_at_recall_0.10", "iprec", None, {"r": 0.1, "legacy": False}, None),
        ("iprec(r=0.5,legacy=1)", "iprec", None, {"r": 0.5, "legacy": True}, None),
        ("11pt_avg", "11pt_avg", None, {"legacy": False, "points": None}, None),
        ("judged@10", "judged", 10, {}, None),
        ("f1@5", "f1", 5, {}, None),
        ("mrr(granular=1)", "rr", None, {"granular": True}, None),
        ("Rprec_mult_0.20", "Rprec_mult", None, {"m": 0.2}, None),
        # ir_measures' names, unchanged
        ("NumRel", "num_rel", None, {}, None),
        ("NumRelRet(rel=2)", "num_rel_ret", None, {}, 2),
        # ir_measures hands SetF's beta to trec_eval, whose weight is beta squared
        ("SetF(beta=0.5)", "set_F", None, {"beta": 0.5**0.5}, None),
        ("set_F(beta=0.5)", "set_F", None, {"beta": 0.5}, None),
        ("SetAP", "set_map", None, {}, None),
        ("NumQ", "num_q", None, {}, None),
    ],
)
def test_names_parse(name, family, k, params, level):
    m = parse_metric(name)
    assert (m.family, m.k, dict(m.params), m.level) == (family, k, params, level)
    assert m.name == name
    again = parse_metric(m.canonical())  # the canonical spelling parses to the same metric
    assert (again.family, again.k, again.params, again.level) == (m.family, m.k, m.params, m.level)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ndgc@10", "closest valid names: ndcg"),
        ("precison@5", "closest valid names: precision"),
        ("ndcg@0", "cutoff must be at least 1"),
        ("rprec@10", "rprec takes no cutoff"),
        ("rbp(p=1.5)", "p must be a number in (0, 1) (persistence, the chance"),
        ("P(foo=1)@5", "unknown parameter 'foo'"),
        ("ndcg(rel=2)@5", "does not use a relevance level"),
        ("P(rel=x)@5", "rel must be a whole number >= 0 .*got 'x'"),
        ("P(rel=-1)@5", "rel must be a whole number >= 0 .*got -1"),
        ("iprec", "iprec needs r="),
        ("P_5.5", "whole number"),
    ],
)
def test_bad_names_explain_themselves(name, message):
    with pytest.raises(MetricNameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_metric(name)


@pytest.mark.parametrize("name", ["", "   ", None, 3, ["P@1"], b"P@1"])
def test_what_is_no_metric_name_is_refused_by_the_declaration(name):
    from ranklens.declared import ParameterError

    with pytest.raises(ParameterError, match=r"^parse_metric: name must be a metric name"):
        parse_metric(name)


@pytest.mark.parametrize("names", [[], "", 3, [3], [None], {"P@1": 1}, b"P@1", [""]])
def test_what_is_no_list_of_metrics_is_refused_by_the_declaration(names):
    import ranklens
    from ranklens.declared import ParameterError
    from ranklens.metrics import parse_metrics

    with pytest.raises(ParameterError, match=r"^parse_metrics: names must be a non-empty list"):
        parse_metrics(names)
    refused = r"^(ranklens\.)?evaluate: metrics must be a non-empty list"
    with pytest.raises(ParameterError, match=refused):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, names)


def test_a_lone_metric_name_is_a_list_of_one():
    import ranklens

    assert ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, "ndcg@10").aggregate == {"ndcg@10": 1.0}


def test_register_metric_names_what_is_no_family():
    from ranklens.declared import ParameterError
    from ranklens.errors import InputError
    from ranklens.metrics import Family, register_metric

    with pytest.raises(ParameterError, match=r"^register_metric: family must be a Family"):
        register_metric("hits")
    with pytest.raises(ParameterError, match=r"^register_metric: replace must be True or False"):
        register_metric(Family("hits_t", lambda v, k=None: v), replace="yes")
    with pytest.raises(InputError, match="register_metric: a metric family named 'P'"):
        register_metric(Family("P", lambda v, k=None: v))


def test_trec_m_forms_expand():
    assert expand_metric_names(["P.5,10", "ndcg_cut.10", "map"]) == [
        "P_5",
        "P_10",
        "ndcg_cut_10",
        "map",
    ]
    assert expand_metric_names("iprec_at_recall..1,.5") == [
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.50",
    ]
    assert expand_metric_names("ndcg_cut") == [
        f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    ]
    assert expand_metric_names(["recall", "P", "success"]) == ["recall", "P", "success"]
    all_trec = parse_metrics("all_trec")
    assert len(all_trec) > 80
    assert {m.name for m in all_trec} >= {"map", "P_10", "ndcg_cut_10", "bpref", "rbp"}


def test_repeats_are_dropped_and_order_kept():
    assert [m.name for m in parse_metrics(["map", "P@5", "map"])] == ["map", "P@5"]


def test_every_family_is_documented_with_a_formula_or_reference():
    for fam in FAMILIES.values():
        assert len(fam.doc) > 40, fam.name


def test_known_names_all_parse():
    needs_value = {  # a bare name of these needs its value (iprec_at_recall_0.10)
        n
        for f in FAMILIES.values()
        if f.value_param and f.params[f.value_param].default is None
        for n in (f.name, *f.aliases, f.trec_name)
    }
    assert {"iprec", "iprec_at_recall", "Rprec_mult", "Rprec_mult_avgjg"} <= needs_value
    for name in known_names():
        if name in needs_value:
            with pytest.raises(MetricNameError):
                parse_metric(name)
            continue
        parse_metric(name)


# ------------------------------------------------- trec_eval -m parameters: honoured or refused
def _values(metric: str) -> list[float]:
    import ranklens

    qrels = {"q1": {"a": 1, "b": 1, "c": 1, "d": 0}, "q2": {"a": 1, "e": 2}}
    run = {"q1": {"a": 3.0, "x": 2.5, "d": 2.0, "b": 1.0}, "q2": {"y": 2.0, "e": 1.0}}
    ev = ranklens.evaluate(qrels, run, [metric])
    return ev.per_query[ev.names[0]].tolist()


def test_trec_set_f_weight_is_beta_squared():
    # trec_eval: set_F.x = (x+1)PR / (xP+R); q1: P = 2/4, R = 2/3; q2: P = 1/2, R = 1/2
    x = 0.5
    want = [(x + 1) * p * r / (x * p + r) for p, r in ((2 / 4, 2 / 3), (1 / 2, 1 / 2))]
    assert _values("set_F.0.5") == pytest.approx(want, abs=1e-12)
    assert parse_metrics("set_F.0.5")[0].name == "set_F_0.5"  # trec_eval's label
    assert _values("set_F.0.5") != pytest.approx(_values("set_F"), abs=1e-6)


def test_trec_rbp_persistence_is_honoured():
    assert _values("rbp.p=0.8") == pytest.approx(_values("rbp(p=0.8)"), abs=1e-15)
    assert _values("rbp.p=0.8") != pytest.approx(_values("rbp"), abs=1e-6)


def test_trec_value_parameters_are_not_rounded():
    # computed at 0.125, labelled as trec_eval prints it
    first, second = expand_metric_names("iprec_at_recall.0.125,0.5")
    assert (first.name, dict(first.params)["r"]) == ("iprec_at_recall_0.12", 0.125)
    assert second == "iprec_at_recall_0.50"
    assert dict(parse_metrics("Rprec_mult.0.125")[0].params)["m"] == 0.125
    assert dict(parse_metrics("iprec_at_recall_0.125")[0].params)["r"] == 0.125


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("ndcg.1=3.5,x", "cannot honour the parameters '1=3.5,x' of ndcg"),
        ("Rprec.1=2", "cannot honour"),
        ("rbp.q=0.8", r"its parameters: p=\.\.\."),
        ("set_F.x", "weight x of recall against precision"),
        ("map.5", "cannot honour the parameters '5' of map"),
    ],
)
def test_trec_parameters_ranklens_cannot_honour_are_refused(name, match):
    with pytest.raises(MetricNameError, match=match):
        parse_metrics(name)


def test_rates_of_something_unwanted_are_lower_is_better():
    from ranklens.metrics import lower_is_better

    assert all(map(lower_is_better, ["unj@10", "outdated@5", "undated@3"]))
    assert not any(map(lower_is_better, ["ndcg@10", "P@5", "current@1", "recall@100"]))
