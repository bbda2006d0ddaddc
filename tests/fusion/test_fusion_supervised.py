"""Supervised fusion and Condorcet against ranx: ranx's ``*_train`` on the same labels,
then ``ranx.fuse`` with what it learnt, equal to ``ranklens.fuse(..., labels=)`` to 1e-9
on hypothesis-generated runs and labels; Condorcet where the majority relation is a
strict order (elsewhere ranx's order depends on set iteration)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError

ranx = pytest.importorskip("ranx")
from ranx import fusion as rf  # noqa: E402

DOCS = [f"d{i}" for i in range(14)]


@st.composite
def labelled_runs(draw, full: bool = False):
    """2-3 runs over 1-4 queries with distinct scores, and labels for every query (some
    queries with no relevant document). ``full``: every run ranks the same documents."""
    n_runs = draw(st.integers(2, 3))
    queries = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    common = {q: draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
              for q in queries}  # fmt: skip
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in queries:
            docs = (
                common[q]
                if full
                else draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
            )
            docs = draw(st.permutations(docs))
            run[q] = {d: (len(docs) - i) / 3 for i, d in enumerate(docs)}
        runs.append(run)
    labels = {q: draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 2), min_size=1,
                                      max_size=6)) for q in queries}  # fmt: skip
    weights = draw(st.lists(st.sampled_from([0.2, 0.5, 1.0, 2.0]), min_size=n_runs,
                            max_size=n_runs))  # fmt: skip
    return runs, labels, weights


def _close(got, want, what):
    assert set(got) == set(want), what
    for q in want:
        assert set(got[q]) == set(want[q]), (what, q)
        for d, v in want[q].items():
            assert math.isclose(got[q][d], v, rel_tol=1e-9, abs_tol=1e-9), (
                what,
                q,
                d,
                got[q][d],
                v,
            )


TRAIN = {
    "posfuse": (lambda qr, rx: {"probs": rf.posfuse_train(qr, rx)}, {}),
    "probfuse": (lambda qr, rx: {"probs": rf.probfuse_train(qr, rx, 3)}, {"n_segments": 3}),
    "segfuse": (lambda qr, rx: {"probs": rf.segfuse_train(qr, rx)}, {}),
    "slidefuse": (lambda qr, rx: {"probs": rf.slidefuse_train(qr, rx), "w": 2}, {"w": 2}),
    "mapfuse": (lambda qr, rx: {"map_scores": rf.mapfuse_train(qr, rx)}, {}),
    "bayesfuse": (lambda qr, rx: {"log_odds": rf.bayesfuse_train(qr, rx)}, {}),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labelled_runs(), st.sampled_from([None, "min-max"]))
def test_supervised_methods_equal_ranx(case, norm):
    runs, labels, _ = case
    qrels = ranx.Qrels(labels)
    rx = [ranx.Run({q: dict(v) for q, v in r.items()}, name=f"r{i}") for i, r in enumerate(runs)]
    if norm:
        from ranx.normalization import norm_switch

        rx_norm = [norm_switch(norm)(r) for r in rx]
    else:
        rx_norm = rx
    named = {f"r{i}": r for i, r in enumerate(runs)}
    for method, (ranx_train, params) in TRAIN.items():
        want = ranx.fuse(rx, norm=norm, method=method, params=ranx_train(qrels, rx_norm)).to_dict()
        got = ranklens.fuse(named, method, norm=norm, labels=labels, **params).to_dict()
        _close(got, want, (method, norm))


def _strict_order(runs, q, weights):
    """True when the weighted majority relation over the query's candidates is a strict
    total order (no pairwise tie, no cycle)."""
    cand = sorted({d for r in runs for d in r[q]})
    pos = [{d: i for i, d in enumerate(sorted(r[q], key=lambda d: -r[q][d]))} for r in runs]
    beats = {}
    for x, y in itertools.permutations(cand, 2):
        a = sum(w for p, w in zip(pos, weights) if p[x] < p[y])
        b = sum(w for p, w in zip(pos, weights) if p[y] < p[x])
        if a == b:
            return False
        beats[x, y] = a > b
    return all(
        not (beats[x, y] and beats[y, z] and beats[z, x])
        for x, y, z in itertools.permutations(cand, 3)
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labelled_runs(full=True))
def test_condorcet_equals_ranx_where_the_majority_is_a_strict_order(case):
    runs, _, weights = case
    named = {f"r{i}": r for i, r in enumerate(runs)}
    rx = [ranx.Run({q: dict(v) for q, v in r.items()}, name=f"r{i}") for i, r in enumerate(runs)]
    for method, w in (("condorcet", [1.0] * len(runs)), ("w_condorcet", weights)):
        params = {"weights": w} if method == "w_condorcet" else {}
        want = ranx.fuse(rx, norm=None, method=method, params=params).to_dict()
        got = ranklens.fuse(named, method, weights=w if params else None).to_dict()
        for q in want:
            if _strict_order(runs, q, w):
                _close({q: got[q]}, {q: want[q]}, (method, q))


def test_condorcet_by_hand_and_errors():
    a = {"q": {"x": 3, "y": 2, "z": 1}}
    b = {"q": {"y": 3, "x": 2, "z": 1}}
    c = {"q": {"x": 3, "z": 2}}  # y unretrieved: ranked below x and z
    got = ranklens.fuse({"a": a, "b": b, "c": c}, "condorcet").to_dict()["q"]
    assert got == {"x": 3.0, "y": 2.0, "z": 1.0}
    heavy_b = ranklens.fuse({"a": a, "b": b, "c": c}, "w_condorcet", weights=[1, 5, 1])
    assert list(heavy_b.to_dict()["q"]) == ["y", "x", "z"]
    with pytest.raises(InputError, match="learns from training labels"):
        ranklens.fuse({"a": a, "b": b}, "posfuse")
    with pytest.raises(InputError, match="n_segments"):
        ranklens.fuse({"a": a, "b": b}, "probfuse", labels={"q": {"x": 1}})
    with pytest.raises(InputError, match="reorders it"):
        ranklens.fuse({"a": a, "b": b}, "mapfuse", norm="borda", labels={"q": {"x": 1}})
