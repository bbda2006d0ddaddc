"""Loss attribution over a pipeline's stages equals a brute-force walk per relevant unit,
for plain labels, grouped labels and evidence spans."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens import Run, judge
from ranklens.judging.stages import FATES, attribute, trail
from ranklens.model.spans import SpanLabels

DOCS = [f"d{i}" for i in range(12)]


def brute(units, stages, cutoff=None):
    """units: per query, list of (members: callable(item) -> bool); stages: per stage,
    {query: [items]}. Returns per query, per unit: (ranks by stage, fate, where)."""
    out = {}
    for q, qunits in units.items():
        rows = []
        for holds in qunits:
            ranks = []
            for stage in stages:
                lst = stage.get(q, [])
                r = next((i + 1 for i, x in enumerate(lst) if holds(x)), 0)
                ranks.append(r)
            present = [r > 0 for r in ranks]
            n = len(stages)
            if present[-1]:
                if cutoff is not None and ranks[-1] > cutoff[q]:
                    fate, where = "outside the budget", n
                else:
                    fate, where = "found", -1
            else:
                losses = [s for s in range(1, n) if present[s - 1] and not present[s]]
                if not losses:
                    fate, where = "never retrieved", 0
                else:
                    s = losses[-1]
                    now, before = stages[s].get(q, []), stages[s - 1].get(q, [])
                    deepest = max((before.index(x) + 1 for x in now if x in before), default=0)
                    r = ranks[s - 1]
                    fate = "cut by rank" if r > len(now) and r > deepest else "filtered"
                    where = s
            rows.append((ranks, fate, where))
        out[q] = rows
    return out


def check(att, expected, queries):
    for q in queries:
        units = att.units_of(q)
        assert len(units) == len(expected[q]), q
        got = sorted(
            (list(map(int, att.rank[u])), FATES[att.fate[u]], int(att.lost_at[u])) for u in units
        )
        assert got == sorted(expected[q]), q
    counts = att.fate_counts()
    assert sum(counts.values()) == sum(len(v) for v in expected.values())


lists = st.lists(st.sampled_from(DOCS), max_size=8, unique=True)


@st.composite
def pipelines(draw, grouped=False):
    n_q = draw(st.integers(1, 4))
    queries = [f"q{i}" for i in range(n_q)]
    labels = {}
    for q in queries:
        if grouped:
            groups = draw(
                st.lists(
                    st.lists(st.sampled_from(DOCS), min_size=1, max_size=3, unique=True),
                    min_size=1,
                    max_size=3,
                )
            )
            labels[q] = groups
        else:
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
            labels[q] = {d: draw(st.integers(0, 2)) for d in docs}
    n_s = draw(st.integers(1, 4))
    stages = [{q: draw(lists) for q in queries} for _ in range(n_s)]
    return labels, stages


@settings(max_examples=150, deadline=None)
@given(pipelines())
def test_ids_equal_brute_force(case):
    labels, stages = case
    queries = sorted(labels)
    judged = [judge(labels, s, require_shared=False) for s in stages]
    runs = [Run.from_dict(s) for s in stages]
    att = attribute([f"s{i}" for i in range(len(stages))], judged, runs=runs)
    units = {
        q: [(lambda x, d=d: x == d) for d in sorted(d for d, g in labels[q].items() if g >= 1)]
        for q in queries
    }
    check(att, brute(units, stages), queries)


@settings(max_examples=150, deadline=None)
@given(pipelines(grouped=True))
def test_groups_equal_brute_force(case):
    labels, stages = case
    queries = sorted(labels)
    judged = [judge(labels, s, require_shared=False) for s in stages]
    runs = [Run.from_dict(s) for s in stages]
    att = attribute([f"s{i}" for i in range(len(stages))], judged, runs=runs)
    units = {q: [(lambda x, g=tuple(g): x in g) for g in labels[q]] for q in queries}
    check(att, brute(units, stages), queries)


@settings(max_examples=100, deadline=None)
@given(pipelines(), st.data())
def test_budget_cutoff_marks_outside(case, data):
    labels, stages = case
    queries = sorted(labels)
    judged = [judge(labels, s, require_shared=False) for s in stages]
    last = judged[-1]
    cut = {q: data.draw(st.integers(0, 8)) for q in queries}
    cutoff = np.array([cut[str(q)] for q in last.query_ids])
    runs = [Run.from_dict(s) for s in stages]
    att = attribute([f"s{i}" for i in range(len(stages))], judged, cutoff=cutoff, runs=runs)
    units = {
        q: [(lambda x, d=d: x == d) for d in sorted(d for d, g in labels[q].items() if g >= 1)]
        for q in queries
    }
    check(att, brute(units, stages, cut), queries)
    # recall per stage equals the share of units each list holds
    rec = att.recall()
    assert rec.shape == (len(att.query_ids), len(stages) + 1)


TEXT = "abcdefghijklmnopqrstuvwxyz" * 4


@st.composite
def span_pipelines(draw):
    queries = ["q0", "q1"]
    spans = {}
    for q in queries:
        n = draw(st.integers(1, 3))
        rows = []
        for _ in range(n):
            doc = draw(st.sampled_from(["A", "B"]))
            s = draw(st.integers(0, 90))
            e = draw(st.integers(s + 1, min(s + 15, 104)))
            rows.append((doc, s, e))
        spans[q] = rows
    n_s = draw(st.integers(1, 3))
    stages = []
    for _ in range(n_s):
        st_ = {}
        for q in queries:
            chunks = draw(
                st.lists(
                    st.tuples(st.sampled_from(["A", "B"]), st.integers(0, 95)),
                    max_size=6,
                    unique=True,
                )
            )
            st_[q] = [(d, a, min(a + 10, 104)) for d, a in chunks]
        stages.append(st_)
    return spans, stages


def span_objects(spans):
    records = [
        {"query_id": q, "doc_id": d, "start": s, "end": e}
        for q, rows in spans.items()
        for d, s, e in rows
    ]
    return SpanLabels.from_records(records, texts={"A": TEXT, "B": TEXT})


def chunk_run(stage):
    from ranklens.model import Run

    return Run.from_chunks(
        {q: [{"doc_id": d, "start": a, "end": b} for d, a, b in lst] for q, lst in stage.items()}
    )


@settings(max_examples=60, deadline=None)
@given(span_pipelines())
def test_spans_equal_brute_force(case):
    spans, stages = case
    labels = span_objects(spans)
    queries = sorted(spans)
    runs = [chunk_run(stage) for stage in stages]
    judged = [judge(labels, run, require_shared=False) for run in runs]
    att = attribute([f"s{i}" for i in range(len(stages))], judged, runs=runs)
    order = {q: sorted(rows, key=lambda r: (r[0], r[1])) for q, rows in spans.items()}

    def covers(span):
        d, s, e = span
        return lambda c: c[0] == d and min(c[2], e) - max(c[1], s) > 0

    units = {q: [covers(sp) for sp in order[q]] for q in queries}
    check(att, brute(units, stages), queries)


def test_trail_and_counts_name_each_fate():
    labels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}}
    bm25 = {"q": ["a", "x", "b", "y", "c", "d"]}
    rerank = {"q": ["c", "a", "e", "x"]}  # b filtered (rank 3 <= 4 kept), d cut (rank 6 > 4)
    judged = [judge(labels, bm25), judge(labels, rerank)]
    runs = [Run.from_dict(bm25), Run.from_dict(rerank)]
    att = attribute(["bm25", "rerank"], judged, cutoff=np.array([2]), runs=runs)
    rows = {r["unit"]: r for r in trail(att, "q", labels=list("abcde"))}
    assert rows["a"]["fate"] == "found" and rows["a"]["where"] is None
    assert rows["b"]["fate"] == "filtered" and rows["b"]["where"] == "rerank"
    assert rows["c"]["fate"] == "found"
    assert rows["d"]["fate"] == "cut by rank"
    assert rows["e"]["fate"] == "outside the budget" and rows["e"]["where"] == "context"
    assert rows["e"]["ranks"] == {"bm25": None, "rerank": 3}  # added by the reranker
    counts = att.counts()
    assert counts["rerank"]["added"] == 1
    assert counts["rerank"]["filtered"] == 1 and counts["rerank"]["cut by rank"] == 1
    assert counts["context"]["outside the budget"] == 1
    assert counts["found"]["found"] == 2
    with pytest.raises(KeyError):
        att.units_of("nope")


def test_a_declared_filter_filters_even_a_prefix():
    labels = {"q": {"a": 1, "b": 1}}
    first, second = {"q": ["x", "a", "b"]}, {"q": ["x"]}
    judged = [judge(labels, first), judge(labels, second)]
    runs = [Run.from_dict(first), Run.from_dict(second)]
    as_cut = attribute(["bm25", "sim"], judged, runs=runs)
    as_filter = attribute(["bm25", "sim"], judged, runs=runs, kinds=["retriever", "filter"])
    assert as_cut.fate_counts()["cut by rank"] == 2
    assert as_filter.fate_counts()["filtered"] == 2


def brute_dag(units, stages, reads):
    """The walk over stages that read several others (parallel retrievers fused)."""
    out = {}
    for q, qunits in units.items():
        rows = []
        for holds in qunits:
            ranks = [
                next((i + 1 for i, x in enumerate(st.get(q, [])) if holds(x)), 0) for st in stages
            ]
            before = [
                min((ranks[i] for i in reads[s] if ranks[i]), default=0) for s in range(len(stages))
            ]
            drops = [s for s in range(len(stages)) if before[s] and not ranks[s]]
            if ranks[-1]:
                fate, where = "found", -1
            elif not drops:
                fate, where = "never retrieved", 0
            else:
                s = drops[-1]
                now = stages[s].get(q, [])
                deepest = max(
                    (
                        stages[i][q].index(x) + 1
                        for i in reads[s]
                        for x in now
                        if x in stages[i].get(q, [])
                    ),
                    default=0,
                )
                r = before[s]
                fate = "cut by rank" if r > len(now) and r > deepest else "filtered"
                where = s
            added = [s for s in range(len(stages)) if reads[s] and ranks[s] and not before[s]]
            rows.append((ranks, fate, where, added))
        out[q] = rows
    return out


@settings(max_examples=150, deadline=None)
@given(pipelines(), st.data())
def test_parallel_retrievers_fused_equal_brute_force(case, data):
    labels, stages = case
    queries = sorted(labels)
    second = {q: data.draw(lists) for q in queries}  # a second retriever beside the first
    fused = {q: data.draw(lists) for q in queries}
    stages = [stages[0], second, fused, *stages[1:]]
    reads = [(), (), (0, 1), *[(s - 1,) for s in range(3, len(stages))]]
    judged = [judge(labels, s, require_shared=False) for s in stages]
    runs = [Run.from_dict(s) for s in stages]
    names = [f"s{i}" for i in range(len(stages))]
    att = attribute(names, judged, runs=runs, inputs=reads)
    units = {
        q: [(lambda x, d=d: x == d) for d in sorted(d for d, g in labels[q].items() if g >= 1)]
        for q in queries
    }
    want = brute_dag(units, stages, reads)
    for q in queries:
        us = att.units_of(q)
        got = sorted(
            (list(map(int, att.rank[u])), FATES[att.fate[u]], int(att.lost_at[u]),
             [int(s) for s in np.flatnonzero(att.added[u])])
            for u in us
        )  # fmt: skip
        assert got == sorted(want[q]), q


def test_fusion_reads_the_retrievers_listed_before_it():
    from ranklens import StagedRun

    staged = StagedRun(
        {
            "bm25": {"q": ["a"]},
            "dense": {"q": ["b"]},
            "fused": {"q": ["a", "b"]},
            "cut": {"q": ["a"]},
        },
        kinds={"bm25": "retriever", "dense": "retriever", "fused": "fusion"},
    )
    assert staged.inputs == {"bm25": (), "dense": (), "fused": ("bm25", "dense"), "cut": ("fused",)}
    with pytest.raises(Exception, match="comes after"):
        StagedRun({"a": {"q": ["x"]}, "b": {"q": ["x"]}}, inputs={"a": ["b"]})
