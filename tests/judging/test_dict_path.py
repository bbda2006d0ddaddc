"""The dict-to-dict judging path (no interning) equals the columnar path on every metric,
option and edge case: ties, float32, missing and run-only queries, empty lists, levels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Qrels, Run
from ranklens.errors import InputError
from ranklens.judging import JudgeOptions
from ranklens.judging.dicts import join_dicts

METRICS = [
    "P@3",
    "recall@5",
    "map",
    "map@3",
    "ndcg@5",
    "ndcg",
    "rr",
    "rprec",
    "bpref",
    "err@5",
    "rbp",
    "judged@5",
    "unj_5",
    "num_rel_ret",
    "iprec_at_recall_0.50",
    "11pt_avg",
    "success@1",
    "set_F",
    "ndcg_exp@3",
    "P(rel=2)@5",
]
DOCS = [f"d{i}" for i in range(12)] + ["D1", "z"]


@st.composite
def case(draw):
    qrels = {
        q: draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), max_size=8))
        for q in draw(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=4, unique=True))
    }
    run = {
        q: draw(
            st.dictionaries(
                st.sampled_from(DOCS),
                st.sampled_from([0.0, 0.5, 1.0, 1.0 + 1e-9, 2.0, -1.0]),
                max_size=10,
            )
        )
        for q in draw(st.lists(st.sampled_from("abcdefg"), max_size=5, unique=True))
    }
    if draw(st.booleans()):  # most runs come in score order (ties in any order)
        run = {q: dict(sorted(d.items(), key=lambda kv: -kv[1])) for q, d in run.items()}
    return qrels, run


def columnar(qrels, run):
    q_rows = [(q, d, g) for q, lab in qrels.items() for d, g in lab.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    Q = Qrels.from_arrays(
        [r[0] for r in q_rows],
        [r[1] for r in q_rows],
        np.array([r[2] for r in q_rows], dtype=np.int64),
        empty_queries=[q for q, lab in qrels.items() if not lab],
    )
    R = Run.from_arrays(
        [r[0] for r in r_rows],
        [r[1] for r in r_rows],
        np.array([r[2] for r in r_rows], dtype=np.float64),
        empty_queries=[q for q, d in run.items() if not d],
    )
    return Q, R


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case(),
    st.sampled_from([1, 2]),
    st.sampled_from(["zero", "skip"]),
    st.sampled_from(["float64", "float32"]),
    st.sampled_from(["zero", "skip"]),
)
def test_dict_path_equals_columnar_path(c, level, missing, precision, no_relevant):
    qrels, run = c
    opts = dict(
        relevance_level=level, missing=missing, score_precision=precision, no_relevant=no_relevant
    )
    cast = (lambda x: float(np.float32(x))) if precision == "float32" else float
    in_score_order = all(
        [cast(x) for x in d.values()] == sorted((cast(x) for x in d.values()), reverse=True)
        for d in run.values()
    )
    taken = join_dicts(qrels, run, JudgeOptions.build(**opts)) is not None
    Q, R = columnar(qrels, run)
    try:
        slow = ranklens.evaluate(Q, R, METRICS, **opts)
    except InputError as exc:  # nothing to evaluate: both paths say so
        assert "evaluate" in str(exc)
        assert not taken
        with pytest.raises(InputError, match="evaluate"):
            ranklens.evaluate(qrels, run, METRICS, **opts)
        return
    assert taken == in_score_order  # the fast path serves runs in score order
    fast = ranklens.evaluate(qrels, run, METRICS, **opts)
    assert fast.query_ids == slow.query_ids
    assert fast.counts == slow.counts
    assert fast.judged.counts.missing_ids == slow.judged.counts.missing_ids
    assert fast.judged.counts.ignored_ids == slow.judged.counts.ignored_ids
    for m in METRICS:
        assert np.allclose(fast.per_query[m], slow.per_query[m], atol=1e-12), m


@pytest.mark.parametrize(
    ("qrels", "run"),
    [
        ({"q": {1: 1}}, {"q": {1: 1.0}}),  # integer ids: the columnar path converts them
        ({"q": {"a": 1.0}}, {"q": {"a": 1.0}}),  # float grade
        ({"q": {"a": 1}}, {"q": {"a": float("nan")}}),  # NaN score: an error there
        ({"q": ["a"]}, {"q": {"a": 1.0}}),  # list labels
    ],
)
def test_other_inputs_take_the_columnar_path(qrels, run):
    assert join_dicts(qrels, run, JudgeOptions()) is None
