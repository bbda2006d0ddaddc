"""The runner with plain-function retrievers: hit forms, failures, timeouts, retries,
the resumable log (including a SIGKILL mid-run), concurrency and reports."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import zlib

import pytest

import ranklens
from ranklens import compare
from ranklens.capture import Hit, key_function, map_hits, text_hash
from ranklens.errors import InputError

CORPUS = [f"d{i}" for i in range(50)]
QRELS = {f"q{i}": {f"d{(i * 7) % 50}": 1, f"d{(i * 11) % 50}": 2} for i in range(100)}
QUERIES = {q: f"text of {q}" for q in QRELS}


def ranked(query: str) -> list[tuple[str, float]]:
    """A deterministic retriever: 10 documents ordered by a hash of (query, doc)."""
    scored = sorted(CORPUS, key=lambda d: zlib.crc32(f"{query}|{d}".encode()))
    return [(d, 1.0 - i / 10) for i, d in enumerate(scored[:10])]


def test_hit_forms_and_keys():
    forms = [
        ("a", "b"),
        [("a", 0.9), ("b", 0.5)],
        [{"id": "a", "score": 0.9, "metadata": {"doc": {"id": "A"}}}, Hit("b", 0.5)],
    ]
    for f in forms:
        res = ranklens.run_retriever(lambda q, f=f: f, {"q": "x"}, progress=False)
        assert res.run.to_lists() == {"q": ["a", "b"]}
    assert key_function("meta.doc.id")(Hit("x", metadata={"doc": {"id": 7}})) == "7"
    # The frameworks' words in a dict hit (Haystack's meta, LangChain's page_content) and
    # its other fields are read, never dropped: key="meta.<field>" finds them.
    framework_dicts = [
        {"id": "c1", "meta": {"source_id": "A"}, "content": "x"},
        {"id": "c2", "page_content": "y", "doc": "B", "metadata": {"doc": "A"}},
        {"id": "c3", "doc": "B"},
    ]
    res = ranklens.run_retriever(lambda q: framework_dicts, {"q": "x"}, key="meta.source_id",
                                 progress=False)  # fmt: skip
    assert res.run.to_lists() == {"q": ["A"]}  # the other two name no source_id: counted
    res = ranklens.run_retriever(lambda q: framework_dicts, {"q": "x"}, key="meta.doc",
                                 progress=False)  # fmt: skip
    assert res.run.to_lists() == {"q": ["A", "B"]}  # metadata's own field first, then c3's
    res = ranklens.run_retriever(lambda q: framework_dicts, {"q": "x"}, key="text",
                                 progress=False)  # fmt: skip
    assert res.run.to_lists() == {"q": ["x", "y"]}
    assert key_function("metadata.missing")(Hit("x")) is None
    assert key_function("text")(Hit("x", text="  Héllo\n WORLD ")) == "héllo world"
    assert key_function("text_hash")(Hit("x", text="Hello  world")) == text_hash("hello world")
    assert key_function(lambda h: h.id.upper())(Hit("x")) == "X"
    with pytest.raises(InputError, match="unknown key 'doc'"):
        key_function("doc")
    m = map_hits([Hit("c1", parent="A"), Hit("c2"), Hit("c3", parent="A")], "parent")
    assert (m.doc_ids, m.duplicates, m.unmapped) == (["A"], 1, 1)
    # A malformed answer is that query's error, named, and the run goes on.
    bad = ranklens.run_retriever(lambda q: [("a", "high")], {"q": "x"}, progress=False)
    assert bad.failed[0].error == {
        "type": "InputError",
        "message": "query 'q', hit 1: score 'high' is not a number",
    }


def test_failures_are_recorded_and_the_run_goes_on():
    def flaky(query, query_id):
        if int(query_id[1:]) % 10 == 3:
            raise RuntimeError(f"backend refused {query_id}")
        return ranked(query)

    res = ranklens.run_retriever(flaky, QUERIES, concurrency=4, progress=False)
    assert len(res.failed) == 10
    assert res.failed[0].error == {"type": "RuntimeError", "message": "backend refused q3"}
    assert res.failed[0].attempts == 1  # RuntimeError is not transient: no retry
    info = res.report_info()
    assert info["errors"] == 10 and info["error_types"] == {"RuntimeError": 10}
    ok = {q: ranked(QUERIES[q]) for q in QUERIES if int(q[1:]) % 10 != 3}
    full = ranklens.evaluate(QRELS, ok, ["ndcg@10"])
    assert res.evaluate(QRELS, ["ndcg@10"])["ndcg@10"] == pytest.approx(full["ndcg@10"])
    assert full.counts["queries_missing"] == 10  # failed queries scored 0
    skipped = res.evaluate(QRELS, ["ndcg@10"], skip_failed=True)
    assert len(skipped.query_ids) == 90
    assert skipped["ndcg@10"] == pytest.approx(full["ndcg@10"] * 100 / 90)


def test_timeouts_and_retries():
    calls: dict[str, int] = {}
    lock = threading.Lock()
    release = threading.Event()  # set only once the run has returned
    hung = {"now": 0, "peak": 0}

    def slow_or_transient(query, query_id):
        with lock:
            calls[query_id] = calls.get(query_id, 0) + 1
            n = calls[query_id]
        if query_id == "q1":  # hangs past the timeout, every time, until the run is over
            with lock:
                hung["now"] += 1
                hung["peak"] = max(hung["peak"], hung["now"])
            release.wait(30)
            with lock:
                hung["now"] -= 1
        if query_id == "q2" and n == 1:
            raise ConnectionError("reset by peer")  # transient: the retry succeeds
        return ranked(query)

    try:
        res = ranklens.run_retriever(
            slow_or_transient, {q: QUERIES[q] for q in ("q0", "q1", "q2")},
            timeout=0.2, retries=1, backoff=0.01, concurrency=3, progress=False,
        )  # fmt: skip
        # the run returned while both attempts of q1 were still hung: each timeout freed
        # its worker (no wall-clock bound: the calls in flight are counted instead)
        assert not release.is_set() and hung == {"now": 2, "peak": 2}
    finally:
        release.set()
    by_id = {r.query_id: r for r in res.records}
    assert by_id["q1"].error["type"] == "TimeoutError"
    assert "0.2 s" in by_id["q1"].error["message"] and by_id["q1"].attempts == 2
    assert by_id["q2"].ok and by_id["q2"].attempts == 2
    assert by_id["q0"].ok
    assert res.report_info()["retries"] >= 2


def test_async_function_runs_concurrently_and_inside_a_running_loop():
    active = peak = 0

    async def retriever(query):
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.02)
        active -= 1
        return ranked(query)

    res = ranklens.run_retriever(retriever, QUERIES, concurrency=16, progress=False)
    assert peak == 16 and not res.failed

    async def notebook_cell():  # Jupyter runs cells inside an event loop
        return ranklens.run_retriever(retriever, QUERIES, concurrency=8, progress=False)

    again = asyncio.run(notebook_cell())
    assert again.run.to_lists() == res.run.to_lists()


def test_log_resumes_refuses_other_configs_and_survives_a_torn_line(tmp_path):
    log = tmp_path / "run.jsonl"
    asked: list[str] = []

    def retriever(query, query_id):
        asked.append(query_id)
        return ranked(query)

    first = ranklens.run_retriever(
        retriever, dict(list(QUERIES.items())[:40]), cache=log, progress=False
    )
    assert len(asked) == 40
    lines = log.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "header" and len(lines) == 41
    # A kill in the middle of a write leaves half a line: it is dropped and re-asked.
    with open(log, "a") as fh:
        fh.write('{"type": "query", "query_id": "q40", "que')
    asked.clear()
    res = ranklens.run_retriever(retriever, QUERIES, cache=log, progress=False)
    assert sorted(asked) == sorted(list(QUERIES)[40:])
    assert res.info["resumed"] == 40 and res.info["torn_log_lines"] == 1
    assert (
        res.run.to_lists()
        == ranklens.run_retriever(retriever, QUERIES, progress=False).run.to_lists()
    )
    assert first.run.to_lists()["q0"] == res.run.to_lists()["q0"]
    with pytest.raises(InputError, match=r"another configuration .* k: None -> 5"):
        ranklens.run_retriever(retriever, QUERIES, cache=log, k=5, progress=False)


CHILD = textwrap.dedent(
    """
    import sys, time, zlib
    import ranklens

    CORPUS = [f"d{i}" for i in range(50)]

    def retrieve(query, query_id):
        with open(sys.argv[2], "a") as fh:
            fh.write(query_id + "\\n")
        time.sleep(0.01)
        scored = sorted(CORPUS, key=lambda d: zlib.crc32(f"{query}|{d}".encode()))
        return [(d, 1.0 - i / 10) for i, d in enumerate(scored[:10])]

    queries = {f"q{i}": f"text of q{i}" for i in range(300)}
    res = ranklens.run_retriever(retrieve, queries, cache=sys.argv[1], concurrency=4,
                                 progress=False)
    res.to_trec(sys.argv[3])
    """
)


def test_sigkill_mid_run_loses_nothing_finished(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    log, asked1, asked2, out = (tmp_path / n for n in ("run.jsonl", "a1", "a2", "out.run"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, str(script), str(log), str(asked1), str(out)], env=env
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        if log.exists() and log.read_text().count("\n") > 80:
            break
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL and not out.exists()  # killed mid-run
    finished = set()
    for line in log.read_text().splitlines()[1:]:
        with contextlib.suppress(json.JSONDecodeError):  # the line cut by the kill
            finished.add(json.loads(line)["query_id"])
    assert 60 < len(finished) < 300
    subprocess.run(
        [sys.executable, str(script), str(log), str(asked2), str(out)], env=env, check=True
    )
    re_asked = set(asked2.read_text().split())
    assert not (re_asked & finished)  # no finished query asked again
    assert re_asked | finished == {f"q{i}" for i in range(300)}
    # The resumed run equals an uninterrupted one.
    queries = {f"q{i}": f"text of q{i}" for i in range(300)}
    whole = ranklens.run_retriever(lambda q: ranked(q), queries, progress=False).run.to_lists()
    assert ranklens.read_run(out).to_lists() == whole


def test_compare_reports_latency_and_errors(tmp_path):
    def flaky(query, query_id):
        if query_id == "q5":
            raise RuntimeError("down")
        return ranked(query)

    a = ranklens.run_retriever(lambda q: ranked(q), QUERIES, name="a", progress=False)
    b = ranklens.run_retriever(flaky, QUERIES, name="b", progress=False)
    rep = compare(QRELS, {"a": a, "b": b}, ["ndcg@10"], test="t")
    info = rep.metadata["run_info"]
    assert info["b"]["errors"] == 1 and info["a"]["errors"] == 0
    assert set(info["a"]["latency_ms"]) == {"p50", "p95", "p99", "mean"}
    html = rep.to_html()
    assert "<h2>Retrieval</h2>" in html
    md = rep.to_markdown()  # the failure is said once, as a failure
    assert "b: 1 failed in the retriever" in md and "retrieval errors" not in md
    assert rep.value("a", "ndcg@10") == pytest.approx(
        rep.value("b", "ndcg@10") + rep.per_query["a"]["ndcg@10"][rep.query_ids.index("q5")] / 100
    )


def test_progress_bar_reports_errors(capsys):
    def flaky(query, query_id):
        if query_id == "q1":
            raise RuntimeError("x")
        return ranked(query)

    ranklens.run_retriever(flaky, dict(list(QUERIES.items())[:5]), progress=True, name="demo")
    err = capsys.readouterr().err
    assert "demo" in err and "1 errors" in err and "5/5" in err


def test_bad_inputs_are_named():
    with pytest.raises(InputError, match="query 'q1' appears twice"):
        ranklens.run_retriever(lambda q: [], [("q1", "a"), ("q1", "b")])
    with pytest.raises(InputError, match="query 'q': the text must be a string"):
        ranklens.run_retriever(lambda q: [], {"q": 3})
    with pytest.raises(InputError, match="not a retriever: int"):
        ranklens.run_retriever(3, {"q": "x"})
    with pytest.raises(InputError, match="run_retriever: concurrency must be a whole number >= 1"):
        ranklens.run_retriever(lambda q: [], {"q": "x"}, concurrency=0)
    empty = ranklens.run_retriever(lambda q: [], {}, progress=False)
    assert empty.records == [] and empty.report_info()["latency_ms"] == {}


def test_skip_failed_keeps_graded_groups():
    from ranklens import Qrels

    qrels = Qrels.from_groups(
        {"q1": [["a", "b"], ["c"]], "q2": [["d"]], "q3": [["e"]]},
        {"q1": [3, 1], "q2": [2], "q3": [1]},
    )

    def flaky(query, query_id):
        if query_id == "q3":
            raise RuntimeError("down")
        return ["c", "a"] if query_id == "q1" else ["d"]

    res = ranklens.run_retriever(flaky, {"q1": "x", "q2": "y", "q3": "z"}, progress=False)
    ev = res.evaluate(qrels, ["ndcg@2"], skip_failed=True)
    assert ev.query_ids == ["q1", "q2"]
    # Group grades survive the subset: c (grade 1) then a (grade 3) is not ideal.
    kept = Qrels.from_groups({"q1": [["a", "b"], ["c"]], "q2": [["d"]]}, {"q1": [3, 1], "q2": [2]})
    assert (
        ev["ndcg@2"]
        == ranklens.evaluate(kept, {"q1": ["c", "a"], "q2": ["d"]}, ["ndcg@2"])["ndcg@2"]
    )
    assert ev.query("q1")["ndcg@2"] < 1.0


def test_a_records_dict_equals_asdict_and_owns_its_lists():
    import dataclasses

    from ranklens.capture.records import Retrieval

    hits = [{"id": "c1", "score": 1.0, "text": "x", "metadata": {"a": [1]}, "parent": "d"}]
    r = Retrieval("q", "text", ["d"], [1.0], hits, 3.5, error={"type": "E", "message": "m"})
    d = r.to_dict()
    assert d == dataclasses.asdict(r) and list(d) == list(dataclasses.asdict(r))
    d["doc_ids"].append("x")
    d["hits"][0]["id"] = "changed"
    d["error"]["type"] = "changed"
    assert r.doc_ids == ["d"] and r.hits[0]["id"] == "c1" and r.error["type"] == "E"
    assert Retrieval.from_dict(r.to_dict()) == r


def test_a_misspelled_option_is_named_never_blamed_on_the_backend():
    from ranklens.errors import UnknownOptionError

    with pytest.raises(UnknownOptionError, match="'concurency'; did you mean 'concurrency'"):
        ranklens.run_retriever(lambda q: ["a"], {"q": "x"}, progress=False, concurency=2)
    with pytest.raises(UnknownOptionError, match="unexpected keyword 'log'"):
        ranklens.run_retriever(lambda q: ["a"], {"q": "x"}, progress=False, log="x.jsonl")


@pytest.mark.parametrize("case", ["plain", "repeats", "failed", "int ids", "none shared"])
def test_a_result_evaluates_its_lists_as_its_run_does(case):
    """``RunResult.evaluate`` with labels as dicts reads the records' lists as they are (the
    dict join, in C where built): per-query values, counts and notes equal the run's
    columns' (``evaluate(Qrels, result.run)``) on every case, errors name the run."""
    from ranklens.errors import NoSharedQueryError

    docs = {"q1": ["a", "b", "c"], "q2": ["c", "a"], "q3": ["x", "b", "a"]}
    if case == "repeats":
        docs["q1"] = ["a", "b", "a", "c"]

    def retriever(text):
        if case == "failed" and text == "q2":
            raise TimeoutError("slow")
        return [{"id": d} for d in docs[text]]

    labels = {"q1": {"a": 1, "c": 2}, "q2": ["a"], "q3": {"b": 1, "z": 3}, "q4": {"a": 1}}
    if case == "int ids":
        labels = {"q1": {1: 1}, "q2": {"a": 2}}
    if case == "none shared":
        labels = {"other": ["a"]}
    res = ranklens.run_retriever(retriever, {q: q for q in docs}, name="bm25")
    metrics = ["P@2", "ndcg", "map", "recall@2"]
    opts = {"duplicates": "first"} if case == "repeats" else {}
    if case == "none shared":
        with pytest.raises(NoSharedQueryError, match="run 'bm25' shares no query id"):
            res.evaluate(labels, metrics)
        return
    got = res.evaluate(labels, metrics, **opts)
    want = ranklens.evaluate(ranklens.Qrels.coerce(labels), res.run, metrics, **opts)
    assert got.query_ids == want.query_ids and got.counts == want.counts
    assert got.notes() == want.notes()
    for m in metrics:
        assert got.per_query[m].tobytes() == want.per_query[m].tobytes()
