"""Filling holes: pooling against an independent computation, a judge callable through the
runner's machinery (failures, timeouts, resume), merging with provenance, agreement against
scikit-learn, reading judgments, re-scoring, the commands; and a real small model judge
(all-MiniLM-L6-v2 similarity, thresholded) on the shipped demo set."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import InputError, Qrels
from ranklens.app.cli import main
from ranklens.app.demo import demo_paths
from ranklens.labelling import LabelPool, PoolPair, agreement, assess, pool, read_judgments, rescore

DOCS = [f"d{i}" for i in range(12)]


@st.composite
def pooling_case(draw):
    qrels = {}
    for q in range(draw(st.integers(1, 4))):
        qrels[f"q{q}"] = {d: draw(st.integers(-1, 2)) for d in draw(
            st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=5))}  # fmt: skip
    runs = {}
    for r in range(draw(st.integers(1, 3))):
        runs[f"r{r}"] = {
            f"q{q}": draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=8))
            for q in range(draw(st.integers(1, 5)))
        }
        runs[f"r{r}"] = {q: v for q, v in runs[f"r{r}"].items() if v} or {"q0": ["d1"]}
    return qrels, runs


def independent_pool(qrels, runs, depth):
    """{(q, d): {run: rank}} of unjudged pairs in any run's top ``depth``, plain Python."""
    out = {}
    for name, run in runs.items():
        for q, docs in run.items():
            if q not in qrels:
                continue
            for rank, d in enumerate(docs[:depth], 1):
                if d not in qrels[q]:
                    out.setdefault((q, d), {})[name] = rank
    return out


@settings(max_examples=150, deadline=None)
@given(pooling_case(), st.integers(1, 6), st.sampled_from(["topk", "rrf"]))
def test_pool_equals_an_independent_computation(case, depth, strategy):
    qrels, runs = case
    p = pool(qrels, runs, depth, strategy)
    expected = independent_pool(qrels, runs, depth)
    assert {(x.query_id, x.doc_id): x.runs for x in p} == expected
    assert len(p.keys()) == len(set(p.keys()))
    # order: each query's pairs by the strategy, then level by level over the queries
    if strategy == "topk":
        key = lambda item: (min(item[1].values()), -len(item[1]), item[0][1])  # noqa: E731
    else:
        key = lambda item: (-sum(1 / (60 + r) for r in item[1].values()), item[0][1])  # noqa: E731
    per_q = {}
    for item in sorted(expected.items(), key=key):
        per_q.setdefault(item[0][0], []).append(item[0])
    levels = [per_q[q][i] for i in range(max(map(len, per_q.values()), default=0))
              for q in sorted(per_q) if i < len(per_q[q])]  # fmt: skip
    assert p.keys() == levels
    budget = max(1, len(levels) // 2)
    assert pool(qrels, runs, depth, strategy, max_pairs=budget).keys() == levels[:budget]


def test_pool_texts_come_from_the_dataset_and_the_jsonl_round_trips(tmp_path, demo_bm25):
    ds, runs = demo_bm25
    p = pool(ds, runs, depth=5)
    assert len(p) > 0 and all(x.query and x.text for x in p)
    assert p.info["queries_pooled"] <= len(ds.qrels.query_ids)
    back = LabelPool.from_jsonl(p.to_jsonl(tmp_path / "pool.jsonl"))
    assert [x.to_json() for x in back] == [x.to_json() for x in p]


def test_pool_reads_hit_text_from_a_runner_result_and_refuses_bad_input(tmp_path):
    def retriever(query):
        return [ranklens.Hit("a", 2.0, text="alpha text"), ranklens.Hit("b", 1.0, text="beta")]

    result = ranklens.run_retriever(
        retriever, {"q": "question"}, calls=ranklens.Calling(progress=False)
    )
    p = pool({"q": ["a"]}, {"fn": result}, depth=3, queries={"q": "question"})
    assert [(x.doc_id, x.text, x.query) for x in p] == [("b", "beta", "question")]
    with pytest.raises(InputError, match="depth"):
        pool({"q": ["a"]}, {"r": {"q": ["b"]}}, depth=0)
    with pytest.raises(InputError, match="strategy"):
        pool({"q": ["a"]}, {"r": {"q": ["b"]}}, strategy="best")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q", "doc_id": "a"}\n{"query_id": "q"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:2: field .doc_id."):
        LabelPool.from_jsonl(bad)


def small_pool():
    return LabelPool([
        PoolPair("q1", "a", {"r": 1}, "cats", "a page about cats"),
        PoolPair("q1", "b", {"r": 2}, "cats", "a page about dogs"),
        PoolPair("q2", "c", {"r": 1}, "dogs", "dogs and more dogs"),
    ])  # fmt: skip


def test_assess_records_each_failure_and_goes_on():
    def judge(query, passage):
        if "more" in passage:
            raise RuntimeError("model overloaded")
        return 2 if query in passage else 0.5

    with pytest.warns(ranklens.RanklensWarning, match="2 of 3 pairs could not be judged"):
        a = assess(small_pool(), judge, calls=ranklens.Calling(progress=False))
    assert a.grades == {("q1", "a"): 2}
    assert a.failures[("q1", "b")]["type"] == "TypeError"
    assert "integer grade" in a.failures[("q1", "b")]["message"]
    assert a.failures[("q2", "c")] == {"type": "RuntimeError", "message": "model overloaded"}
    assert a.qrels.sources == {("q1", "a"): "model:judge"}


def test_assess_allowed_grades_timeout_retries_and_async():
    with pytest.warns(ranklens.RanklensWarning):
        a = assess(
            small_pool(), lambda q, p: 5, grades=[0, 1], calls=ranklens.Calling(progress=False)
        )
    message = a.failures[("q1", "a")]["message"]
    assert not a.grades and "grade 5" in message and "[0, 1]" in message

    calls = []
    release, returned = threading.Event(), []

    def flaky(query, passage):
        calls.append(passage)
        if calls.count(passage) == 1:
            raise ConnectionError("try again")
        if "dogs and more" in passage:
            release.wait(60)  # held until assess has returned: it must not wait for it
            returned.append(passage)
        return 1

    try:
        with pytest.warns(ranklens.RanklensWarning, match="1 of 3"):
            a = assess(
                small_pool(),
                flaky,
                calls=ranklens.Calling(timeout=0.5, retries=1, backoff=0.01, progress=False),
            )
        assert not returned  # assess returned while the slow call was still running
    finally:
        release.set()
    assert a.grades == {("q1", "a"): 1, ("q1", "b"): 1}
    assert a.failures[("q2", "c")]["type"] == "TimeoutError"

    async def ajudge(query, passage):
        return int(query in passage)

    b = assess(small_pool(), ajudge, source="llm:test", calls=ranklens.Calling(progress=False))
    assert b.grades == {("q1", "a"): 1, ("q1", "b"): 0, ("q2", "c"): 1}
    assert set(b.qrels.sources.values()) == {"llm:test"}


def test_assess_resumes_from_its_log_and_refuses_another_judge(tmp_path):
    log = tmp_path / "judge.jsonl"
    calls = []

    def judge(query, passage):
        calls.append(passage)
        return int(query in passage)

    cfg = {"judge": "substring v1"}  # the closure's call list changes: name the configuration
    first = assess(
        small_pool(), judge, config=cfg, calls=ranklens.Calling(cache=log, progress=False)
    )
    assert len(calls) == 3
    again = assess(
        small_pool(), judge, config=cfg, calls=ranklens.Calling(cache=log, progress=False)
    )
    assert len(calls) == 3 and again.grades == first.grades and again.resumed == 3

    def other(query, passage):
        return 1

    with pytest.raises(InputError, match="another configuration"):
        assess(small_pool(), other, config=cfg, calls=ranklens.Calling(cache=log, progress=False))


def test_merge_keeps_provenance_and_resolves_conflicts():
    human = {"q": {"a": 1, "b": 0}}
    model = {"q": {"b": 2, "c": 1}, "q2": {"d": 1}}
    m = Qrels.merge(human, model, sources=["human", "model:x"])
    assert m.to_dict() == {"q": {"a": 1, "b": 0, "c": 1}, "q2": {"d": 1}}
    assert m.sources == {("q", "a"): "human", ("q", "b"): "human", ("q", "c"): "model:x",
                         ("q2", "d"): "model:x"}  # fmt: skip
    assert Qrels.merge(human, model, conflicts="last").to_dict()["q"]["b"] == 2
    assert Qrels.merge(human, model, conflicts="max").sources[("q", "b")] == "part2"
    with pytest.raises(InputError, match=r"document 'b': grade 0 from 'part1' and 2 from"):
        Qrels.merge(human, model, conflicts="error")
    # a merged part keeps its own provenance inside a later merge
    again = Qrels.merge(m, {"q": {"z": 1}}, sources=["labels", "model:y"])
    assert again.sources[("q", "a")] == "human" and again.sources[("q", "z")] == "model:y"
    grouped = Qrels.merge({"q": {"a": 0, "z": 2}}, {"q": [["a", "b"], ["c"]]})
    assert grouped.to_groups() == {"q": [["a", "b"], ["c"], ["z"]]}
    assert grouped.group_grades() == {"q": [1, 1, 2]}
    with pytest.raises(InputError, match="one source per part"):
        Qrels.merge(human, model, sources=["only one"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40),
       st.sampled_from([None, "linear", "quadratic"]))  # fmt: skip
def test_kappa_equals_scikit_learn(pairs, weights):
    from sklearn.metrics import cohen_kappa_score

    a = {"q": {f"d{i}": x for i, (x, _) in enumerate(pairs)}}
    b = {"q": {f"d{i}": y for i, (_, y) in enumerate(pairs)}}
    r = agreement(a, b, weights=weights)
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = cohen_kappa_score(xs, ys, weights=weights)
    got = r.weighted_kappa
    assert (got != got and expected != expected) or abs(got - expected) < 1e-9
    assert sum(map(sum, r.confusion)) == len(pairs)
    assert r.observed == sum(x == y for x, y in pairs) / len(pairs)


def test_agreement_counts_pairs_judged_by_one_side_only():
    r = agreement({"q": {"a": 1, "b": 0}}, {"q": {"a": 1, "c": 1}}, names=("human", "model"))
    assert (r.n, r.only_a, r.only_b) == (1, 1, 1)
    assert "1 by human only" in str(r)
    with pytest.raises(InputError, match="share no judged"):
        agreement({"q": {"a": 1}}, {"q": {"b": 1}})


def test_read_judgments_jsonl_and_trec(tmp_path):
    j = tmp_path / "j.jsonl"
    j.write_text('{"query_id": "q", "doc_id": "a", "grade": 2, "source": "human:ann"}\n'
                 '{"query_id": "q", "doc_id": "b", "grade": 0}\n')  # fmt: skip
    q = read_judgments(j)
    assert q.to_dict() == {"q": {"a": 2, "b": 0}}
    assert q.sources == {("q", "a"): "human:ann", ("q", "b"): "human"}
    t = tmp_path / "j.qrels"
    t.write_text("q 0 a 1\n")
    assert read_judgments(t, source="human:bob").sources == {("q", "a"): "human:bob"}
    j.write_text('{"query_id": "q", "doc_id": "a", "grade": "2"}\n')
    with pytest.raises(InputError, match=r"j.jsonl:1: field .grade."):
        read_judgments(j)


def test_rescore_names_the_conclusions_that_changed():
    before = {"q1": ["a"], "q2": ["b"], "q3": ["c"]}
    after = {"q1": {"a": 1, "x": 1}, "q2": {"b": 1, "y": 1}, "q3": {"c": 1, "z": 1}}
    runs = {"old": {"q1": ["a", "n"], "q2": ["b", "n"], "q3": ["c", "n"]},
            "new": {"q1": ["x", "a"], "q2": ["y", "b"], "q3": ["z", "c"]}}  # fmt: skip
    r = rescore(before, after, runs, ["P@1", "P@2"], stats=ranklens.Statistics(test="t", ci="t"))
    changed = {c.describe() for c in r.changed()}
    assert "best on P@1: old -> old, new" in changed
    assert "new P@2: 0.5000 -> 1.0000 (+0.5000)" in changed
    assert "best on P@2: old, new -> new" in changed
    assert "new vs old on P@1: old better -> no significant difference" in changed
    assert "new vs old on P@2: no significant difference -> new better" in changed
    assert "conclusions changed" in r.to_text() and "<li>" in r._repr_html_()
    assert json.loads(r.to_json())["changes"]


def test_pool_judge_agreement_commands(tmp_path, capsys):
    paths = demo_paths()
    out = tmp_path / "pool.jsonl"
    assert main(["pool", str(paths["qrels"]), str(paths["bm25"]), str(paths["bm25-short-chunks"]),
                 "--depth", "3", "--max-pairs", "7", "-o", str(out)]) == 0  # fmt: skip
    assert "left out by the budget" in capsys.readouterr().err
    assert len(LabelPool.from_jsonl(out)) == 7
    page = tmp_path / "judge.html"
    assert main(["judge", str(out), "--html", str(page), "--grades", "binary"]) == 0
    assert "pool-data" in page.read_text()
    a, b = tmp_path / "a.qrels", tmp_path / "b.qrels"
    a.write_text("q 0 x 1\nq 0 y 0\n")
    b.write_text("q 0 x 1\nq 0 y 1\n")
    assert main(["agreement", str(a), str(b), "--weights", "none"]) == 0
    assert "Cohen's kappa 0.000" in capsys.readouterr().out
    assert main(["judge", str(out), "--html", str(page), "--grades", "0,x"]) == 2


@pytest.mark.dense
def test_a_real_small_model_judges_the_demo_pool(minilm, tmp_path, demo_bm25):
    """The plumbing with a real model: MiniLM cosine similarity of query and passage,
    thresholded into grades 0-2, over the demo's pooled holes, concurrently, logged."""
    import numpy as np

    ds, runs = demo_bm25
    p = pool(ds, runs, depth=5)

    def minilm_judge(query, passage):
        q, d = minilm.encode([query, passage], normalize_embeddings=True)
        sim = float(np.dot(q, d))
        return 2 if sim > 0.6 else 1 if sim > 0.4 else 0

    a = assess(
        p,
        minilm_judge,
        calls=ranklens.Calling(concurrency=2, cache=tmp_path / "minilm.jsonl", progress=False),
    )
    assert not a.failures and len(a.grades) == len(p)
    assert set(a.grades.values()) <= {0, 1, 2} and len(set(a.grades.values())) > 1
    merged = Qrels.merge(ds.qrels, a, sources=["demo", a.source])
    assert merged.sources[next(iter(a.grades))] == "model:minilm_judge"
    before = ranklens.evaluate(ds.qrels, runs["bm25"], ["P@5"])
    after = ranklens.evaluate(merged, runs["bm25"], ["P@5"])
    assert after["P@5"] >= before["P@5"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--depth", "0"], "argument --depth: must be a whole number >= 1"),
        (["--depth", "2.5"], "argument --depth: must be a whole number"),
        (["--max-pairs", "nan"], "argument --max-pairs: must be a whole number"),
        (["--max-pairs", "0"], "argument --max-pairs: must be a whole number >= 1"),
    ],
)
def test_pool_flags_are_refused_by_name(capsys, flags, message):
    paths = demo_paths()
    with pytest.raises(SystemExit) as exit_:
        main(["pool", str(paths["qrels"]), str(paths["bm25"]), *flags])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("runs", ["bm25", b"x", 3])
def test_pool_refuses_runs_given_as_one_text_never_iterated(runs):
    with pytest.raises(InputError, match="pool: runs must be"):
        pool({"q": ["a"]}, runs)
