"""trec_eval's custom-gain measures (``ndcg.1=3.5,2=9``, G, ndcg_rel, Rndcg, dcg, ideal_dcg,
rbp) and yaap, which pytrec_eval cannot run (it rejects paired parameters; it has no yaap
or rbp): checked against a line-by-line Python transcription of trec_eval 10's C loops
(m_ndcg.c, m_G.c, m_ndcg_rel.c, m_Rndcg.c, m_rbp.c, m_yaap.c, gain_init.c) on
hypothesis-generated qrels, runs and gain tables. Each ``c_*`` function keeps its C file's
three loops as written there (so they look alike, as the C files do): the oracle is worth
what its fidelity to the C is."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import MetricNameError

NONPOOL, UNJUDGED = -1, -2  # trec_eval.h


def ranked_labels(labels: dict[str, int], run: dict[str, float]) -> list[int]:
    """trec_eval's results_rel_list: score descending, ties by docno descending."""
    order = sorted(run, key=lambda d: (-run[d], [-b for b in d.encode()] + [1]))
    out = []
    for d in order:
        if d not in labels:
            out.append(NONPOOL)
        else:
            out.append(labels[d] if labels[d] >= 0 else UNJUDGED)
    return out


def setup_gains(labels: dict[str, int], pairs: dict[int, float]):
    counts: dict[int, int] = {}
    for g in labels.values():
        if g >= 0:
            counts[g] = counts.get(g, 0) + 1
    n_levels = max(counts, default=-1) + 1
    gains = {lvl: [lvl, float(x), 0] for lvl, x in pairs.items()}
    for i in range(n_levels):
        if i in gains:
            gains[i][2] = counts.get(i, 0)
        else:
            gains[i] = [i, float(i), counts.get(i, 0)]
    return sorted(gains.values(), key=lambda t: t[1])  # by increasing gain


def get_gain(rel: int, gains) -> float:
    for lvl, g, _ in gains:
        if lvl == rel:
            return g
    return 0.0


def ideal_iter(gains):
    """trec_eval's ideal-gain walk: yields the ideal gain at ranks 1, 2, ... forever."""
    cur = len(gains) - 1
    at = 0
    while True:
        at += 1
        while cur >= 0 and at > gains[cur][2]:
            at = 1
            cur -= 1
        yield gains[cur][1] if cur >= 0 else 0.0


def c_ndcg(rels, gains):
    res = ideal = 0.0
    walk = ideal_iter(gains)
    ig = gains[-1][1] if gains else 0.0
    i = 0
    while i < len(rels) and ig > 0.0:
        rg = get_gain(rels[i], gains)
        if rg != 0:
            res += rg / math.log2(i + 2)
        ig = next(walk)
        if ig > 0.0:
            ideal += ig / math.log2(i + 2)
        i += 1
    while i < len(rels):
        rg = get_gain(rels[i], gains)
        if rg != 0:
            res += rg / math.log2(i + 2)
        i += 1
    while ig > 0.0:
        ig = next(walk)
        if ig > 0.0:
            ideal += ig / math.log2(i + 2)
        i += 1
    return res, ideal, (res / ideal if ideal > 0.0 else 0.0)


def c_g(rels, gains):
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    walk = ideal_iter(gains)
    ig = gains[-1][1] if gains else 0.0
    i = 0
    while i < len(rels) and ig > 0.0:
        rg = get_gain(rels[i], gains)
        sum_results += rg
        ig = next(walk)
        if ig > 0.0:
            sum_ideal += ig
        sum_cost += ig if ig >= 1.0 else 1.0
        if rg != 0:
            results_g += rg / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < len(rels):
        rg = get_gain(rels[i], gains)
        sum_results += rg
        sum_cost += 1.0
        if rg != 0:
            results_g += rg / math.log2(2 + sum_cost - sum_results)
        i += 1
    while ig > 0.0:
        ig = next(walk)
        if ig > 0.0:
            sum_ideal += ig
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


def c_ndcg_rel(rels, gains):
    res = ideal = total = 0.0
    n_rel_ret = n_rel = 0
    walk = ideal_iter(gains)
    ig = gains[-1][1] if gains else 0.0
    i = 0
    while i < len(rels) and ig > 0.0:
        rg = get_gain(rels[i], gains)
        if rg != 0:
            res += rg / math.log2(i + 2)
        ig = next(walk)
        if ig > 0.0:
            n_rel += 1
            ideal += ig / math.log2(i + 2)
        if rg > 0:
            total += res / ideal
            n_rel_ret += 1
        i += 1
    while i < len(rels):
        rg = get_gain(rels[i], gains)
        if rg != 0:
            res += rg / math.log2(i + 2)
        if rg > 0:
            total += res / ideal
            n_rel_ret += 1
        i += 1
    while ig > 0.0:
        ig = next(walk)
        if ig > 0.0:
            n_rel += 1
            ideal += ig / math.log2(i + 2)
        i += 1
    if ideal > 0.0:
        total += (n_rel - n_rel_ret) * res / ideal
    return total / n_rel if total > 0.0 else 0.0


def c_rndcg(rels, gains, num_rel):
    if num_rel == 0:
        return 0.0
    res = ideal = total = 0.0
    changes = 0
    walk = ideal_iter(gains)
    ig = old = gains[-1][1] if gains else 0.0
    i = 0
    while i < len(rels) and ig > 0.0:
        rg = get_gain(rels[i], gains)
        ig = next(walk)
        if old != ig:
            if ideal > 0.0:
                total += res / ideal
                changes += 1
            old = ig
        if rg != 0:
            res += rg / math.log2(i + 2)
        if ig > 0.0:
            ideal += ig / math.log2(i + 2)
        i += 1
    if i < len(rels):
        while i < len(rels):
            rg = get_gain(rels[i], gains)
            if rg != 0:
                res += rg / math.log2(i + 2)
            i += 1
        if ideal > 0.0:
            total += res / ideal
            changes += 1
    while ig > 0.0:
        ig = next(walk)
        if old != ig:
            if ideal > 0.0:
                total += res / ideal
                changes += 1
            old = ig
        if ig > 0.0:
            ideal += ig / math.log2(i + 2)
        i += 1
    return total / changes if changes else 0.0  # trec_eval: 0/0


def c_rbp(rels, gains, p):
    lo = min((g for _, g, _ in gains), default=0.0)  # trec_eval leaves min/max unset
    hi = max((g for _, g, _ in gains), default=0.0)
    if lo < 0 or hi > 1:
        # one negative gain alone: trec_eval divides by 0; ranklens gives it weight 0
        gains = [[lvl, (g - lo) / (hi - lo) if hi > lo else 0.0, n] for lvl, g, n in gains]
    total, cur = 0.0, 1.0
    for rel in rels:
        g = get_gain(rel, gains)
        if g != 0:
            total += g * cur
        cur *= p
    return (1.0 - p) * total


def c_yaap(rels, num_rel, level):
    so_far, total = 0, 0.0
    for i, rel in enumerate(rels):
        if rel >= level:
            so_far += 1
            total += so_far / (i + 1)
    return math.log((1.0 + total) / (1.0 + num_rel - total))


DOCS = [f"d{i}" for i in range(12)] + ["D1", "a"]
SCORES = [0.0, 0.5, 1.0, 1.5, 2.0]


@st.composite
def cases(draw):
    labels = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 4), min_size=1))
    run = draw(st.dictionaries(st.sampled_from(DOCS), st.sampled_from(SCORES), min_size=1))
    pairs = draw(
        st.dictionaries(
            st.integers(0, 5),
            st.one_of(st.sampled_from([0.0, -1.0, 2.0, 9.0]), st.floats(-3, 12).map(round)),
            max_size=4,
        )
    )
    return labels, run, pairs, draw(st.sampled_from([1, 2])), draw(st.sampled_from([0.5, 0.9]))


def gains_text(pairs: dict[int, float]) -> str:
    return "{" + ",".join(f"{k}:{v!r}" for k, v in sorted(pairs.items())) + "}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_custom_gain_measures_equal_trec_eval_loops(case):
    labels, run, pairs, level, p = case
    rels = ranked_labels(labels, run)
    gains = setup_gains(labels, pairs)
    num_rel = sum(1 for g in labels.values() if g >= level)
    gt = gains_text(pairs) if pairs else None
    suffix = f"(gains={gt})" if gt else ""
    names = {
        "ndcg": f"ndcg{suffix}",
        "dcg": f"dcg{suffix}",
        "idcg": f"ideal_dcg{suffix}",
        "G": f"G{suffix}",
        "ndcg_rel": f"ndcg_rel{suffix}",
        "Rndcg": f"Rndcg{suffix}",
        "rbp": f"rbp(p={p}{',gains=' + gt if gt else ''})",
        "yaap": "yaap",
    }
    ev = ranklens.evaluate({"q": labels}, {"q": run}, list(names.values()), relevance_level=level)
    dcg, idcg, ndcg = c_ndcg(rels, gains)
    want = {
        "ndcg": ndcg,
        "dcg": dcg,
        "idcg": idcg,
        "G": c_g(rels, gains),
        "ndcg_rel": c_ndcg_rel(rels, gains),
        "Rndcg": c_rndcg(rels, gains, num_rel),
        "rbp": c_rbp(rels, gains, p),
        "yaap": c_yaap(rels, num_rel, level),
    }
    got = ev.query("q")
    for key, name in names.items():
        assert math.isclose(got[name], want[key], rel_tol=1e-12, abs_tol=1e-9), (key, got, want)


def test_trec_eval_gain_forms_parse_into_the_same_metric():
    from ranklens.metrics import expand_metric_names

    (m,) = expand_metric_names(["ndcg.1=3.5,2=9"])
    assert m.name == "ndcg_1=3.5,2=9"
    assert dict(m.params)["gains"] == ((1, 3.5), (2, 9.0))
    (r,) = expand_metric_names(["rbp.p=0.8,2=4"])
    assert dict(r.params) == {"p": 0.8, "gains": ((2, 4.0),)}
    for bad in ("ndcg(gains={-1:2})", "ndcg(gains={1:2,1:3})", "ndcg(gains=1:2)", "G(gains={a:1})"):
        with pytest.raises(MetricNameError, match="gains"):
            ranklens.metrics.parse_metric(bad)
