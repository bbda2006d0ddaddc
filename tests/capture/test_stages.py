"""Pipeline stages captured in the core: a Pipeline of real offline parts (bm25s, MiniLM,
a context packer) run by the runner, each stage's ranking checked against the stage
callables called directly; generated pipelines against a brute-force model of the
runner (mapping, repeats, failures, k); the run log keeping stages through a SIGKILL and
a resume; async and mixed stages; failures and timeouts naming their stage; the Recorder
with stages (spilled and read back); ``staged()`` as a StagedRun; the Ray backend."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Calling, Hit, Recorder
from ranklens.capture import Pipeline, RecordSlots, Retrieval, Stage, Staged, stages_of
from ranklens.capture.log import read_log
from ranklens.declared import ParameterError
from ranklens.errors import InputError
from ranklens.model.stages import StagedRun

QUIET = Calling(progress=False)


@pytest.fixture(scope="module")
def demo():
    from ranklens.app.demo_data import load

    return load()


@pytest.fixture(scope="module")
def bm25(demo):
    """A bm25s retriever over the demo corpus: ``fn(query, k) -> [(doc, score)]``."""
    import bm25s

    ids = list(demo.corpus)
    texts = [demo.corpus[d]["title"] + " " + demo.corpus[d]["text"] for d in ids]
    index = bm25s.BM25()
    index.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)

    def retrieve(query: str, k: int | None = 20) -> list[tuple[str, float]]:
        docs, scores = index.retrieve(
            bm25s.tokenize([query], show_progress=False),
            k=k or 20,
            show_progress=False,
            n_threads=1,
        )
        return [(ids[i], float(s)) for i, s in zip(docs[0].tolist(), scores[0].tolist()) if s > 0]

    retrieve.texts = dict(zip(ids, texts))  # type: ignore[attr-defined]
    return retrieve


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def overlap_rerank(texts):
    """A lexical reranker: hits reordered by shared words with the query (ties keep order)."""

    def rerank(query, hits):
        q = words(query)
        return sorted(hits, key=lambda h: -len(q & words(texts[h[0]])))

    return rerank


def packer(texts, budget: int):
    """Context packing: the leading hits whose texts fit in ``budget`` characters."""

    def pack(query, hits):
        out, used = [], 0
        for h in hits:
            used += len(texts[h[0]])
            if used > budget:
                break
            out.append(h)
        return out

    return pack


def ranking(hits) -> list[str]:
    """Ids in first-rank order, repeats dropped (what key="id" keeps)."""
    return list(dict.fromkeys(h[0] if isinstance(h, tuple) else h for h in hits))


# ---------------------------------------------------------------- real offline parts


@pytest.mark.dense
def test_a_bm25_minilm_packer_pipeline_records_each_stage(demo, bm25, minilm, tmp_path):
    """bm25s top 20 -> MiniLM cosine rerank -> a 900-character context: every stage's
    recorded ranking is what its callable gives when called directly, the final ranking
    is the packer's, and staged() is the StagedRun of those lists."""
    import numpy as np

    texts = bm25.texts
    cache: dict[str, np.ndarray] = {}

    def embed(text):
        if text not in cache:
            cache[text] = minilm.encode([text], normalize_embeddings=True)[0]
        return cache[text]

    def rerank(query, hits):
        q = embed(query)
        return sorted(hits, key=lambda h: -float(np.dot(q, embed(texts[h[0]]))))

    pack = packer(texts, 900)
    queries = dict(list(demo.queries.items())[:12])
    pipe = Pipeline([("bm25", bm25), ("minilm", rerank, "reranker"), ("context", pack, "packer")])
    res = ranklens.run_retriever(pipe, queries, calls=Calling(progress=False, concurrency=2))
    assert not res.failed
    for rec in res.records:
        first = bm25(rec.query)
        second = rerank(rec.query, first)
        third = pack(rec.query, second)
        assert [s.name for s in rec.stages] == ["bm25", "minilm", "context"]
        assert [s.kind for s in rec.stages] == ["retriever", "reranker", "packer"]
        assert [s.doc_ids for s in rec.stages] == [ranking(first), ranking(second), ranking(third)]
        assert rec.doc_ids == ranking(third)
        assert all(math.isfinite(s.latency_ms) and s.latency_ms >= 0 for s in rec.stages)
    staged = res.staged()
    assert isinstance(staged, StagedRun) and staged.names == ("bm25", "minilm", "context")
    assert staged.final.to_lists() == res.run.to_lists()
    assert staged["bm25"].to_lists() == {q: ranking(bm25(t)) for q, t in queries.items()}


def test_a_bm25_rerank_packer_pipeline_with_k_and_the_log(demo, bm25, tmp_path):
    """The same shape without the model: bm25s (asked for k by name) -> a lexical reranker
    -> a packer; ``k`` cuts only the final ranking; the log keeps every stage and a second
    run reads them back without asking anything."""
    texts = bm25.texts
    rerank, pack = overlap_rerank(texts), packer(texts, 1200)
    asked = []

    def first(query, k):
        asked.append(query)
        return bm25(query, k=k)

    queries = dict(list(demo.queries.items())[:15])
    pipe = Pipeline({"bm25": first, "rerank": rerank, "context": pack})
    log = tmp_path / "run.jsonl"
    calls = Calling(progress=False, cache=log)
    res = ranklens.run_retriever(pipe, queries, k=3, calls=calls)
    for rec in res.records:
        a = bm25(rec.query, k=3)
        b, c = rerank(rec.query, a), pack(rec.query, rerank(rec.query, a))
        assert [s.doc_ids for s in rec.stages] == [ranking(a), ranking(b), ranking(c)]
        assert rec.doc_ids == ranking(c)[:3]
        assert rec.stages[0].scores == [s for _, s in a]
    assert len(asked) == len(queries)
    again = ranklens.run_retriever(pipe, queries, k=3, calls=calls)
    assert len(asked) == len(queries) and again.info["resumed"] == len(queries)

    def view(result):
        return [(r.query_id, r.doc_ids, [s.to_dict() for s in r.stages]) for r in result.records]

    assert view(again) == view(res)
    _, logged, _, _ = read_log(log)
    assert all(isinstance(s, Stage) for r in logged.values() for s in r.stages)


# ---------------------------------------------------------------- generated pipelines

OPS = ("table", "cut", "reverse", "drop", "add", "rescore")
FORMS = ("dict", "hit", "pair")


def _hits_strategy():
    doc = st.sampled_from([f"d{i}" for i in range(6)])
    hit = st.tuples(doc, st.integers(0, 3), st.floats(-5, 5, allow_nan=False))
    return st.lists(hit, max_size=7)


@st.composite
def pipelines(draw):
    n_queries = draw(st.integers(1, 5))
    qids = [f"q{i}" for i in range(n_queries)]
    n_stages = draw(st.integers(1, 4))
    stages = []
    for i in range(n_stages):
        op = "table" if i == 0 else draw(st.sampled_from(OPS))
        stages.append({
            "op": op,
            "table": {q: draw(_hits_strategy()) for q in qids},
            "n": draw(st.integers(0, 5)),
            "drop": draw(st.sets(st.sampled_from([f"d{i}" for i in range(6)]), max_size=3)),
            "fail": {q for q in qids if draw(st.integers(0, 9)) == 0},
            "junk": {q for q in qids if draw(st.integers(0, 14)) == 0},
            "async": draw(st.booleans()),
        })  # fmt: skip
    k = draw(st.none() | st.integers(1, 4))
    form = draw(st.sampled_from(FORMS))
    key = "id" if form == "pair" else draw(st.sampled_from(["id", "parent"]))
    for spec in stages:
        spec["form"] = form
    return qids, stages, k, key


def _make_hit(form, d, c, s):
    if form == "dict":
        return dict(id=f"{d}#{c}", parent=d, score=s)
    if form == "hit":
        return Hit(f"{d}#{c}", s, parent=d)
    return (f"{d}#{c}", s)


def _field(h, name):
    if isinstance(h, dict):
        return h[name]
    if isinstance(h, Hit):
        return getattr(h, name)
    return {"id": h[0], "score": h[1], "parent": h[0].split("#")[0]}[name]


def _apply(spec, qid, hits):
    """One generated stage's answer, in plain Python (None: the stage returns junk)."""
    if qid in spec["junk"]:
        return None
    op, form = spec["op"], spec["form"]
    if op == "table":
        return [_make_hit(form, d, c, s) for d, c, s in spec["table"][qid]]
    if op == "cut":
        return hits[: spec["n"]]
    if op == "reverse":
        return hits[::-1]
    if op == "drop":
        return [h for h in hits if _field(h, "parent") not in spec["drop"]]
    if op == "rescore":  # a reranker writing new scores into the same objects where it can
        if form == "pair":
            return [(h[0], -h[1]) for h in hits[::-1]]
        for h in hits:
            if form == "dict":
                h["score"] = -h["score"]
            else:
                h.score = -h.score
        return hits[::-1]
    extra = [_make_hit(form, d, c, s) for d, c, s in spec["table"][qid]]
    return [*hits, *extra]  # hits no earlier stage had


def _make_stage(i, spec, seen):
    def check_and_apply(query, hits=None):
        qid = query.split()[0]
        if i > 0:
            assert hits is seen[(qid, i - 1)], "a stage gets the very list the last returned"
        if qid in spec["fail"]:
            raise ValueError(f"planted failure of stage {i}")
        out = _apply(spec, qid, hits)
        seen[(qid, i)] = out
        return out

    if spec["async"]:

        async def stage(query, hits=None):
            await asyncio.sleep(0)
            return check_and_apply(query, hits)

        return stage
    return check_and_apply


def _model(qids, stages, k, key):
    """What the runner must record, computed without it: per query the stages' mapped
    lists, the stage that failed (or None) and the final ranking."""
    out = {}
    for q in qids:
        lists, failed, hits = [], None, None
        for i, spec in enumerate(stages):
            if q in spec["fail"] or q in spec["junk"]:
                failed = i
                break
            hits = _apply(spec, q, hits)
            names = [_field(h, key) for h in hits]
            scores = [_field(h, "score") for h in hits]  # as they are now, before any later stage
            first = [names.index(n) for n in dict.fromkeys(names)]
            lists.append((list(dict.fromkeys(names)), len(names) - len(set(names)),
                          [scores[i] for i in first], scores))  # fmt: skip
        final = None if failed is not None else lists[-1][0][:k] if k else lists[-1][0]
        out[q] = (lists, failed, final)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pipelines(), st.integers(1, 3))
def test_generated_pipelines_match_a_brute_force_model(spec, concurrency):
    qids, stages, k, key = spec
    seen: dict = {}
    names = [f"s{i}" for i in range(len(stages))]
    pipe = Pipeline([(n, _make_stage(i, s, seen)) for i, (n, s) in enumerate(zip(names, stages))])
    queries = {q: f"{q} text" for q in qids}
    res = ranklens.run_retriever(
        pipe, queries, k=k, key=key, calls=Calling(progress=False, concurrency=concurrency,
                                                   retries=0))  # fmt: skip
    model = _model(qids, stages, k, key)
    for rec in res.records:
        lists, failed, final = model[rec.query_id]
        ok = [s for s in rec.stages if s.error is None]
        assert [s.doc_ids for s in ok] == [m[0] for m in lists]
        assert [s.duplicates for s in ok] == [m[1] for m in lists]
        assert [s.scores for s in ok] == [m[2] for m in lists]
        assert [[h["score"] for h in s.hits] for s in ok] == [m[3] for m in lists]
        if failed is None:
            assert rec.ok and rec.doc_ids == final and len(rec.stages) == len(stages)
            continue
        assert not rec.ok and rec.error["message"].startswith(f"stage 's{failed}'")
        assert [s.name for s in rec.stages] == names[: failed + 1]
        assert rec.stages[-1].error is not None and rec.stages[-1].doc_ids == []
    if not any(r.stages for r in res.records):
        return
    staged = res.staged()
    assert staged.names == tuple(names[: max(len(r.stages or ()) for r in res.records)])
    for i, n in enumerate(staged.names):
        run = staged[n]
        want = {q: m[0][i][0] for q, m in model.items() if i < len(m[0])}
        assert run.to_lists() == want
        failed_here = {q for q, m in model.items() if m[1] is not None and m[1] <= i}
        assert set(run.failures) == failed_here


# ---------------------------------------------------------------- log and resume

CHILD = textwrap.dedent(
    """
    import json, sys, time, zlib
    import ranklens

    CORPUS = [f"d{i}" for i in range(40)]

    def first(query, query_id):
        with open(sys.argv[2], "a") as fh:
            fh.write(query_id + "\\n")
        time.sleep(0.01)
        scored = sorted(CORPUS, key=lambda d: zlib.crc32(f"{query}|{d}".encode()))
        return [(d, 1.0 - i / 20) for i, d in enumerate(scored[:12])]

    def rerank(query, hits):
        return sorted(hits, key=lambda h: zlib.crc32(f"r|{query}|{h[0]}".encode()))

    async def keep(query, hits):
        return [h for h in hits if zlib.crc32(h[0].encode()) % 3][:5]

    pipe = ranklens.Pipeline([("first", first), ("rerank", rerank), ("keep", keep)])
    queries = {f"q{i}": f"text of q{i}" for i in range(250)}
    res = ranklens.run_retriever(pipe, queries, calls=ranklens.Calling(
        cache=sys.argv[1], concurrency=4, progress=False))
    out = {r.query_id: {s.name: s.doc_ids for s in r.stages} for r in res.records}
    with open(sys.argv[3], "w") as fh:
        json.dump(out, fh)
    """
)


def test_sigkill_mid_run_keeps_every_finished_querys_stages(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    log, asked1, asked2, out, whole = (
        tmp_path / n for n in ("run.jsonl", "a1", "a2", "out.json", "whole.json")
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, str(script), str(log), str(asked1), str(out)],
                             env=env)  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline:
        if log.exists() and log.read_text().count("\n") > 60:
            break
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL and not out.exists()  # killed mid-run
    before = {}
    for line in log.read_text().splitlines()[1:]:
        with contextlib.suppress(json.JSONDecodeError):  # the line cut by the kill
            rec = Retrieval.from_dict(json.loads(line))
            before[rec.query_id] = {s.name: s.doc_ids for s in rec.stages}
    assert 50 < len(before) < 250
    subprocess.run([sys.executable, str(script), str(log), str(asked2), str(out)], env=env,
                   check=True)  # fmt: skip
    re_asked = set(asked2.read_text().split())
    assert not (re_asked & set(before))  # no finished query asked again
    resumed = json.loads(out.read_text())
    assert all(resumed[q] == stages for q, stages in before.items())  # its stages intact
    subprocess.run([sys.executable, str(script), str(tmp_path / "fresh.jsonl"),
                    str(tmp_path / "a3"), str(whole)], env=env, check=True)  # fmt: skip
    assert resumed == json.loads(whole.read_text())  # as an uninterrupted run


def test_a_log_without_stages_reads_as_before(tmp_path):
    log = tmp_path / "plain.jsonl"
    res = ranklens.run_retriever(lambda q: ["a", "b"], {"q1": "x"}, calls=Calling(
        progress=False, cache=log))  # fmt: skip
    assert res.records[0].stages is None
    assert '"stages"' not in log.read_text()
    _, records, _, _ = read_log(log)
    assert records["q1"].stages is None and records["q1"].doc_ids == ["a", "b"]
    with pytest.raises(InputError, match="no record has stages"):
        res.staged()


# ---------------------------------------------------------------- async and timing


def test_async_and_sync_stages_mix_at_concurrency(demo, bm25):
    """An async first stage, a sync middle one (run on a thread, not on the loop) and an
    async last one, 16 queries at concurrency 8: the same lists as the sync pipeline."""
    import threading

    texts = bm25.texts
    loop_threads = set()

    async def first(query):
        loop_threads.add(threading.get_ident())
        await asyncio.sleep(0.005)
        return bm25(query)

    rerank_threads = set()

    def rerank(query, hits):
        rerank_threads.add(threading.get_ident())
        return overlap_rerank(texts)(query, hits)

    async def cut(query, hits):
        return hits[:4]

    queries = dict(list(demo.queries.items())[:16])
    mixed = Pipeline([("bm25", first), ("rerank", rerank), ("cut", cut)])
    assert mixed.is_async
    res = ranklens.run_retriever(mixed, queries, calls=Calling(progress=False, concurrency=8))
    plain = Pipeline([("bm25", bm25), ("rerank", overlap_rerank(texts)),
                      ("cut", lambda q, h: h[:4])])  # fmt: skip
    assert not plain.is_async
    want = ranklens.run_retriever(plain, queries, calls=QUIET)
    assert [[s.doc_ids for s in r.stages] for r in res.records] == [
        [s.doc_ids for s in r.stages] for r in want.records
    ]
    assert not (rerank_threads & loop_threads)  # the sync stage never ran on the loop
    mixed.close()


def test_a_timeout_names_the_running_stage_and_keeps_the_earlier(tmp_path):
    def first(query):
        return ["a", "b", "c"]

    def hang(query, hits):
        if query == "slow":
            time.sleep(3)
        return hits

    async def ahang(query, hits):
        if query == "slow":
            await asyncio.sleep(3)
        return hits

    for middle in (hang, ahang):
        pipe = Pipeline([("first", first), ("hang", middle), ("last", lambda q, h: h[:1])])
        res = ranklens.run_retriever(pipe, {"q1": "slow", "q2": "fast"}, calls=Calling(
            progress=False, timeout=0.3, retries=0))  # fmt: skip
        slow, fast = res.records
        assert slow.error["type"] == "TimeoutError"
        assert slow.error["message"] == "stage 'hang': no answer within 0.3 s"
        assert [s.name for s in slow.stages] == ["first", "hang"]
        assert slow.stages[0].doc_ids == ["a", "b", "c"] and slow.stages[1].error
        assert fast.ok and [s.doc_ids for s in fast.stages] == [["a", "b", "c"]] * 2 + [["a"]]
        assert pipe.progress("q1") == (None, [])  # nothing left behind


def test_a_transient_stage_error_is_retried_and_the_answer_keeps_its_stages():
    calls = {"n": 0}

    def flaky(query, hits):
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("reset by peer")
        return hits[::-1]

    pipe = Pipeline([("first", lambda q: ["a", "b"]), ("flaky", flaky)])
    res = ranklens.run_retriever(pipe, {"q1": "x"}, calls=Calling(progress=False, backoff=0.01))
    rec = res.records[0]
    assert rec.ok and rec.attempts == 2
    assert [s.doc_ids for s in rec.stages] == [["a", "b"], ["b", "a"]]


# ---------------------------------------------------------------- bad input


def test_pipeline_construction_refuses_what_cannot_run():
    f = lambda q: []  # noqa: E731
    with pytest.raises(InputError, match=r"the stage name 'a' is given twice \(stages 1 and 3\)"):
        Pipeline([("a", f), ("b", f), ("a", f)])
    with pytest.raises(InputError, match="no stages"):
        Pipeline([])
    with pytest.raises(InputError, match="no stages"):
        Pipeline({})
    with pytest.raises(InputError, match="stage 'b' must be a callable"):
        Pipeline([("a", f), ("b", 3)])
    with pytest.raises(InputError, match=r"stage 2 must be a \(name, callable\) pair"):
        Pipeline([("a", f), f])
    with pytest.raises(InputError, match="stage 1's name must be a non-empty text"):
        Pipeline([("  ", f)])
    with pytest.raises(InputError, match="stages must be a list"):
        Pipeline("bm25")
    with pytest.raises(ParameterError, match="Pipeline: no parameter 'nme'; did you mean 'name'"):
        Pipeline([("a", f)], nme="x")


@pytest.mark.parametrize(
    "answer, expected",
    [
        (None, r"stage 'second' returned None for query 'q1'"),
        ("abc", r"stage 'second' returned str for query 'q1'"),
        ({"a": 1}, r"stage 'second' returned dict for query 'q1'"),
        (42, r"stage 'second' returned int for query 'q1'"),
        ([object()], r"stage 'second': query 'q1', hit 1: expected a Hit"),
        ([("a", "high")], r"stage 'second': query 'q1', hit 1: score 'high' is not a number"),
    ],
)
def test_a_stage_returning_junk_fails_its_query_named_and_the_run_goes_on(answer, expected):
    def second(query, hits):
        return answer if query == "bad" else hits

    pipe = Pipeline([("first", lambda q: ["a", "b"]), ("second", second)])
    res = ranklens.run_retriever(pipe, {"q1": "bad", "q2": "good"}, calls=QUIET)
    bad, good = res.records
    assert not bad.ok and re.match(expected, bad.error["message"]), bad.error
    assert bad.stages[0].doc_ids == ["a", "b"] and bad.stages[1].error is not None
    assert good.ok and good.doc_ids == ["a", "b"]


def test_empty_stages_and_stages_adding_documents_are_allowed():
    got = {}

    def second(query, hits):
        got["hits"] = hits
        return [] if query == "empty" else [*hits, "z"]

    def third(query, hits):
        got["third"] = hits
        return hits

    pipe = Pipeline([("first", lambda q: ["a"]), ("second", second), ("third", third)])
    res = ranklens.run_retriever(pipe, {"q1": "empty"}, calls=QUIET)
    assert got["third"] == [] and res.records[0].ok and res.records[0].doc_ids == []
    assert [s.doc_ids for s in res.records[0].stages] == [["a"], [], []]
    res = ranklens.run_retriever(pipe, {"q1": "more"}, calls=QUIET)
    assert [s.doc_ids for s in res.records[0].stages] == [["a"], ["a", "z"], ["a", "z"]]


def test_hit_objects_changed_in_place_by_a_later_stage_keep_the_earlier_record():
    def first(query):
        return [Hit("a", 1.0), Hit("b", 0.5, metadata={"tag": "x"})]

    def rescore(query, hits):
        for h in hits:
            h.score = -h.score  # a reranker writing its scores into the same objects
        return hits[::-1]

    def tag(query, hits):
        hits[0].metadata["tag"] = "y"  # the same metadata dict, changed in place
        return hits

    def keep(query, hits):
        return hits  # unchanged: the same recorded hits as the stage before

    pipe = Pipeline([("first", first), ("rescore", rescore), ("tag", tag), ("keep", keep)])
    res = ranklens.run_retriever(pipe, {"q1": "x"}, key="meta.tag", calls=QUIET)
    one, two, three, four = res.records[0].stages
    assert one.scores == [0.5] and two.scores == [-0.5] and one.doc_ids == ["x"]
    assert [h["score"] for h in two.hits] == [-0.5, -1.0]
    assert three.doc_ids == ["y"] and two.doc_ids == ["x"] and four.hits == three.hits


def test_an_adapter_hands_its_stages_over_with_staged_hits():
    def retriever(query):
        stages = [
            Stage(
                "dense",
                hits=[
                    {"id": "c1", "parent": "A", "start": 0, "end": 10},
                    {"id": "c2", "parent": "B", "start": 5, "end": 9},
                ],
            ),
            Stage("fusion", hits=[("c2", 0.9)], kind="fusion", latency_ms=1.5),
        ]
        return Staged([("c2", 0.9)], stages)

    res = ranklens.run_retriever(retriever, {"q1": "x"}, calls=QUIET)
    rec = res.records[0]
    assert [s.doc_ids for s in rec.stages] == [["c1", "c2"], ["c2"]]
    assert rec.stages[0].hits[0] == {"id": "c1", "score": None, "parent": "A", "start": 0,
                                     "end": 10}  # fmt: skip
    assert rec.stages[1].kind == "fusion" and rec.stages[1].latency_ms == 1.5
    res = ranklens.run_retriever(retriever, {"q1": "x"}, key="parent", calls=QUIET)
    assert [s.doc_ids for s in res.records[0].stages] == [["A", "B"], []]
    assert res.records[0].stages[1].unmapped == 1
    with pytest.raises(ParameterError, match=r"Staged: stage 1 must be a ranklens\.capture\.Stage"):
        Staged([], [("dense", [])])


def test_stage_records_check_their_fields():
    with pytest.raises(ParameterError, match="Stage: latency_ms must be a number >= 0 or NaN"):
        Stage("a", latency_ms=-1.0)
    with pytest.raises(ParameterError, match="Stage 'a': hits must be a list"):
        Stage("a", hits="abc")
    with pytest.raises(ParameterError, match="Stage: name"):
        Stage("")
    with pytest.raises(ParameterError, match="did you mean 'latency_ms'"):
        Stage("a", latency=3)
    st_ = Stage("a", hits=("x", "y"), latency_ms=2)
    assert st_.hits == ["x", "y"] and st_.latency_ms == 2.0
    assert Stage.from_dict(st_.to_dict()).to_dict() == st_.to_dict()
    assert math.isnan(Stage.from_dict({"name": "a", "latency_ms": None}).latency_ms)


# ---------------------------------------------------------------- the Recorder


def _stage_list(i):
    return [
        Stage(
            "bm25",
            hits=[
                Hit(f"c{i}", 2.0, parent=f"d{i}", start=0, end=20),
                Hit("cx", 1.0, parent="dx"),
                Hit(f"c{i}b", 0.5, parent=f"d{i}"),
            ],
            latency_ms=1.25,
            kind="retriever",
        ),
        Stage("rerank", hits=[Hit(f"c{i}b", 0.9, parent=f"d{i}")], latency_ms=0.5),
    ]


def test_the_recorder_keeps_stages_through_spilling(tmp_path):
    rec = Recorder(key="parent", max_records=4, spill=tmp_path / "spill.jsonl")
    seen = []
    rec.subscribe(seen.append)
    for i in range(10):
        rec.record(f"question {i}", query_id=f"q{i}", stages=_stage_list(i))
    rec.record("plain", query_id="p", hits=[Hit("c", 1.0, parent="d")])
    records = list(rec.records())
    assert len(records) == 11 and rec._spilled > 0  # some went through the spill file
    for i, r in enumerate(records[:10]):
        assert [s.doc_ids for s in r.stages] == [[f"d{i}", "dx"], [f"d{i}"]]
        assert r.stages[0].duplicates == 1 and r.stages[0].hits[0]["start"] == 0
        assert r.stages[0].latency_ms == 1.25 and r.stages[0].kind == "retriever"
        assert r.doc_ids == [f"d{i}"]  # no hits given: the last stage's
    assert records[10].stages is None
    assert len(seen[0]) == RecordSlots.STAGES + 1 and len(seen[10]) == RecordSlots.STAGES
    assert stages_of(seen[10]) is None and stages_of(seen[0])[1][0] == "rerank"
    staged = rec.staged()
    assert staged.names == ("bm25", "rerank")
    assert staged["bm25"].to_lists()["q3"] == ["d3", "dx"]
    assert staged["rerank"].failures["p"]["type"] == "NoStages"
    assert staged.latency_ms["bm25"]["q0"] == 1.25


def test_stages_handed_over_already_mapped_keep_their_rankings():
    """A stage given with doc_ids (in the labels' id space) is kept as given under any key,
    never mapped again (key="parent" would find no parent in them and drop them all)."""
    stages = [
        Stage("bm25", ["d1", "d2", "d3"], [3.0, 2.0, 1.0], []),
        Stage("rerank", ["d3", "d1"], [], [Hit("c9", 0.9, parent="d3")]),
    ]
    rec = Recorder(key="parent")
    rec.record("when was the light lit?", query_id="q1", stages=stages)
    (r,) = rec.records()
    assert [(s.doc_ids, s.scores) for s in r.stages] == [
        (["d1", "d2", "d3"], [3.0, 2.0, 1.0]),
        (["d3", "d1"], [None, None]),
    ]
    assert r.stages[1].hits == [{"id": "c9", "score": 0.9, "parent": "d3"}]
    assert r.doc_ids == ["d3", "d1"]  # no hits given: the last stage's ranking
    res = ranklens.run_retriever(lambda q: Staged([], stages), {"q1": "x"}, key="parent",
                                 calls=QUIET)  # fmt: skip
    assert [s.doc_ids for s in res.records[0].stages] == [["d1", "d2", "d3"], ["d3", "d1"]]
    with pytest.raises(ParameterError, match="Stage 'a': 1 scores for 2 doc_ids"):
        Stage("a", ["x", "y"], [1.0])


def test_the_recorder_turns_bad_stages_into_the_retrievals_error():
    rec = Recorder()
    rec.record("a", query_id="q1", stages=[("bm25", ["x"])])
    rec.record("b", query_id="q2", stages=[Stage("bm25", hits=[object()])])
    rec.record("c", query_id="q3", stages="bm25")
    rec.record("d", query_id="q4", hits=["y"], stages=[Stage("s", hits=["x"])])
    a, b, c, d = rec.records()
    assert a.error["type"] == "TypeError" and "stage 1 must be a ranklens.capture.Stage" in (
        a.error["message"])  # fmt: skip
    assert b.error is not None and c.error is not None and not a.stages and not b.stages
    assert d.doc_ids == ["y"] and d.stages[0].doc_ids == ["x"]  # hits given: they are final
    assert rec.errors == 3


def test_the_recorder_matches_staged_queries_by_text():
    ds = ranklens.Dataset({"q1": "What is X?", "q2": "Where is Y?"},
                          ranklens.Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}}))  # fmt: skip
    rec = Recorder(key="parent")
    rec.record("what is x?", stages=_stage_list(1))
    rec.record("unknown question", stages=_stage_list(2))
    staged = rec.staged(ds)
    assert staged["bm25"].to_lists() == {"q1": ["d1", "dx"]}
    with pytest.raises(InputError, match="no record has stages"):
        Recorder().staged(ds)


# ---------------------------------------------------------------- staged() shapes


def _rec(qid, *stages, error=None):
    return Retrieval(qid, qid, stages=[Stage(n, list(ids), [None] * len(ids)) for n, ids in stages],
                     error=error)  # fmt: skip


def test_staged_orders_merges_and_refuses_conflicting_orders():
    from ranklens.capture.stage_runs import staged_run

    pairs = [("q1", _rec("q1", ("a", "x"), ("c", "y"))),
             ("q2", _rec("q2", ("a", "x"), ("b", "z"), ("c", "zy")))]  # fmt: skip
    staged = staged_run(pairs, "id", "p")
    assert staged.names == ("a", "b", "c")
    assert staged["b"].to_lists() == {"q2": ["z"]}  # q1 lacks b: absent, not empty
    bad = [*pairs, ("q3", _rec("q3", ("c", "y"), ("a", "x")))]
    with pytest.raises(InputError, match=r"query 'q3' has c -> a, query 'q1' has a -> c"):
        staged_run(bad, "id", "p")
    twice = [("q1", _rec("q1", ("a", "x"), ("a", "y")))]
    with pytest.raises(InputError, match="query 'q1': the stage 'a' appears twice"):
        staged_run(twice, "id", "p")


def test_staged_chunk_runs_judge_span_labels_per_stage():
    """Chunks with their ranges at every stage: each stage's chunk run equals the chunk
    run of a retriever that is that stage alone, and span labels judge each of them."""
    from ranklens.app.demo_data import load_spans

    ds = load_spans()
    chunks = []
    for doc, body in ds.corpus.items():
        text = body["text"]
        for start in range(0, len(text), 160):
            chunks.append({"id": f"{doc}@{start}", "parent": doc, "start": start,
                           "end": min(start + 160, len(text)),
                           "text": text[start:start + 160]})  # fmt: skip

    def first(query):
        q = words(query)
        scored = sorted(chunks, key=lambda c: -len(q & words(c["text"])))
        return [dict(c, score=float(len(q & words(c["text"])))) for c in scored[:8]]

    def second(query, hits):
        return [h for h in hits if len(h["text"]) > 100][:4]

    queries = dict(list(ds.queries.items())[:10])
    res = ranklens.run_retriever(Pipeline([("lexical", first), ("trim", second)]), queries,
                                 key="parent", calls=QUIET)  # fmt: skip
    staged = res.staged(chunks=True)
    alone = ranklens.run_retriever(first, queries, key="parent", calls=QUIET).chunk_run()
    assert staged["lexical"].to_lists() == alone.to_lists()
    assert staged["trim"].to_lists() == res.chunk_run().to_lists()
    a = ranklens.evaluate(ds.qrels, staged["lexical"], ["evidence_recall@8"])
    b = ranklens.evaluate(ds.qrels, alone, ["evidence_recall@8"])
    assert a["evidence_recall@8"] == b["evidence_recall@8"]


# ---------------------------------------------------------------- Ray


def make_factory():
    """A factory of the pipeline each Ray actor builds, over the demo corpus (a closure
    using only what an actor can import: cloudpickle ships it by value)."""

    def factory():
        import re
        import zlib

        from ranklens import Pipeline
        from ranklens.app.demo_data import load

        def words(text):
            return set(re.findall(r"\w+", text.lower()))

        corpus = {d: words(v["title"] + " " + v["text"]) for d, v in load().corpus.items()}

        def first(query):
            q = words(query)
            scored = sorted(((len(q & t), d) for d, t in corpus.items()), reverse=True)[:8]
            return [(d, float(s)) for s, d in scored]

        def second(query, hits):
            if zlib.crc32(query.encode()) % 7 == 0:
                raise ValueError("planted")
            return sorted(hits, key=lambda h: zlib.crc32(h[0].encode()))[:3]

        return Pipeline([("overlap", first), ("shuffle", second)])

    return factory


def test_the_ray_backend_keeps_each_records_stages(local_ray, demo, tmp_path):
    queries = dict(list(demo.queries.items())[:16])
    local = ranklens.run_retriever(make_factory()(), queries, calls=QUIET)
    remote = ranklens.run_retriever(None, queries, backend="ray", retriever_factory=make_factory(),
                                    actors=2, calls=Calling(progress=False,
                                                            cache=tmp_path / "shards"))  # fmt: skip

    def view(res):
        return [(r.query_id, r.error and r.error["message"],
                 [(s.name, s.doc_ids, s.error and s.error["type"]) for s in r.stages or []])
                for r in res.records]  # fmt: skip

    assert view(remote) == view(local)
    assert any(r.error for r in local.records) and any(r.ok for r in local.records)
    assert remote.staged()["overlap"].to_lists() == local.staged()["overlap"].to_lists()
