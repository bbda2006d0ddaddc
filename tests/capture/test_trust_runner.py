"""Faults in the runner, the run log and the Recorder are recorded for their query, never
raised into the app, never hang the process, and never give another run's results."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest

import ranklens
from ranklens import Recorder
from ranklens.errors import InputError, RanklensWarning, RunFailuresWarning

QUERIES = {"q1": "alpha", "q2": "beta", "q3": "gamma"}


@pytest.mark.parametrize("answer", ["d1", b"d1", {"d1": 1.0}, None, 42])
def test_a_retriever_returning_no_list_fails_that_query(answer):
    res = ranklens.run_retriever(lambda q: answer if q == "alpha" else ["d1"], QUERIES)
    bad = {r.query_id: r.error for r in res.failed}
    assert list(bad) == ["q1"] and bad["q1"]["type"] == "TypeError"
    assert "expected a list of hits" in bad["q1"]["message"]
    assert {r.query_id for r in res.records if r.ok} == {"q2", "q3"}


def test_one_bad_hit_or_a_raising_key_fails_only_its_query():
    def retriever(q):
        return [{"id": "d1", "text": 5}] if q == "alpha" else [{"id": "d2", "text": "ok"}]

    res = ranklens.run_retriever(retriever, QUERIES)
    assert [r.query_id for r in res.failed] == ["q1"] and "'text'" in res.failed[0].error["message"]

    def key(hit):
        if hit.id == "boom":
            raise ValueError("no parent")
        return hit.id

    res = ranklens.run_retriever(lambda q: ["boom"] if q == "beta" else ["d1"], QUERIES, key=key)
    assert [r.query_id for r in res.failed] == ["q2"] and res.failed[0].error[
        "type"
    ] == "ValueError"


@pytest.mark.parametrize("timeout", [0, -1.0])
def test_non_positive_timeout_is_refused(timeout):
    with pytest.raises(InputError, match="run_retriever: timeout must be a finite number > 0"):
        ranklens.run_retriever(lambda q: ["d1"], QUERIES, timeout=timeout)


def test_calls_queued_behind_hung_ones_are_not_timed_out():
    release = threading.Event()
    entered: dict[str, float] = {}

    def retriever(q, query_id):
        entered[query_id] = time.perf_counter()
        if q == "alpha":
            release.wait(30)  # hangs past its timeout, until the run is over
        return ["d1"]

    queries = {"q1": "alpha", **{f"x{i}": f"fast {i}" for i in range(6)}}
    try:
        res = ranklens.run_retriever(retriever, queries, concurrency=1, timeout=0.3, retries=0)
        ended = time.perf_counter()
    finally:
        release.set()
    failed = {r.query_id: r for r in res.failed}
    assert list(failed) == ["q1"] and failed["q1"].error["type"] == "TimeoutError"
    assert failed["q1"].latency_ms >= 299  # timed from its own start, to its timeout
    # each queued call is timed from when the retriever was called: its latency fits between
    # its own start and the run's end, never back to when it was queued (at least the 0.3 s
    # q1 held the only worker, as its own clock shows), whatever the machine's speed
    queued = [r for r in res.records if r.ok]
    assert len(queued) == 6
    for r in queued:
        waited = entered[r.query_id] - entered["q1"]
        assert waited >= 0.29  # it was queued behind q1's timeout
        assert r.latency_ms / 1000 < ended - entered[r.query_id] + waited / 2


def test_a_hung_sync_retriever_does_not_keep_the_process_alive(tmp_path):
    script = tmp_path / "hang.py"
    script.write_text(
        textwrap.dedent(
            """
            import threading, warnings, ranklens
            warnings.simplefilter("ignore")
            never = threading.Event()
            queries = {"q1": "x", "q2": "y"}
            res = ranklens.run_retriever(lambda q: never.wait(), queries, timeout=0.2, retries=0)
            print(len(res.failed))
            """
        )
    )
    # the subprocess's own timeout is the bound: a process kept alive by its hung threads
    # would raise TimeoutExpired (no wall-clock assertion of our own)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "2" and out.returncode == 0


def test_failures_warn_once_at_the_end_and_show_in_every_evaluation():
    def retriever(q):
        if q != "alpha":
            raise ConnectionRefusedError(f"backend down for {q}")
        return ["d1"]

    with pytest.warns(
        RunFailuresWarning, match=r"2 failed in the retriever.*ConnectionRefusedError 2"
    ) as rec:
        res = ranklens.run_retriever(retriever, QUERIES, retries=0)
    assert len([w for w in rec if issubclass(w.category, RunFailuresWarning)]) == 1
    ev = res.evaluate({"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]}, ["P@1"])
    assert ev.counts["queries_failed"] == 2 and ev.counts["failures"]["types"] == {
        "ConnectionRefusedError": 2
    }
    table = ev.to_table()
    assert "2 failed in the retriever" in table and "absent from the run" not in table
    report = ranklens.compare({"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]}, {"r": res}, ["P@1"])
    assert "2 failed in the retriever" in report.to_markdown()


def test_library_logs_without_printing(capfd):
    import logging

    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("ranklens").handlers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranklens.run_retriever(lambda q: 1 / 0, {"q1": "x"}, retries=0)
    assert capfd.readouterr().err == ""  # no handler output from the library itself


def test_asking_more_than_the_retriever_gives_warns_once():
    with pytest.warns(RanklensWarning, match="asked for k=10 .* at most 5 hits"):
        ranklens.run_retriever(lambda q: [f"d{i}" for i in range(5)], QUERIES, k=10)


def _scored(factor):
    return lambda q: [("d1", factor)]


def _retrieve(q, top_k=5):
    return [f"d{i}" for i in range(top_k)]


class Store:
    def __init__(self, n):
        self.n = n

    def __call__(self, q):
        return [f"d{self.n}"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (functools.partial(_retrieve, top_k=3), functools.partial(_retrieve, top_k=4)),
        (_scored(1.0), _scored(2.0)),  # two closures over different values
        (Store(1), Store(2)),  # two instances of one class
    ],
)
def test_a_differently_configured_retriever_never_reads_anothers_cache(tmp_path, first, second):
    cache = tmp_path / "log.jsonl"
    ranklens.run_retriever(first, QUERIES, cache=cache)
    with pytest.raises(InputError, match="another configuration"):
        ranklens.run_retriever(second, QUERIES, cache=cache)
    again = ranklens.run_retriever(first, QUERIES, cache=cache)  # the same configuration resumes
    assert again.info["resumed"] == 3


def test_a_changed_query_text_is_asked_again(tmp_path):
    cache = tmp_path / "log.jsonl"
    calls = []

    def retriever(q):  # its closure changes between runs: config= names it instead
        calls.append(q)
        return ["d1"]

    ranklens.run_retriever(retriever, QUERIES, cache=cache, config={"index": "v1"})
    with pytest.raises(InputError, match="pass config="):
        ranklens.run_retriever(retriever, QUERIES, cache=cache)  # the fingerprint saw `calls` grow
    res = ranklens.run_retriever(
        retriever, {**QUERIES, "q2": "beta, reworded"}, cache=cache, config={"index": "v1"}
    )
    assert calls[3:] == ["beta, reworded"] and res.info["requeried_changed_text"] == 1
    assert next(r for r in res.records if r.query_id == "q2").query == "beta, reworded"


def test_a_corrupt_last_log_line_is_repaired(tmp_path):
    cache = tmp_path / "log.jsonl"
    ranklens.run_retriever(lambda q: ["d1"], QUERIES, cache=cache)
    with open(cache, "a", encoding="utf-8") as fh:
        fh.write('{"query_id": "q9", "query": "cut mid-wri\n')  # torn, with its newline
    res = ranklens.run_retriever(lambda q: ["d1"], QUERIES, cache=cache)
    assert res.info["torn_log_lines"] == 1 and res.info["resumed"] == 3
    for line in cache.read_text().splitlines():
        json.loads(line)  # every line readable again
    assert ranklens.run_retriever(lambda q: ["d1"], QUERIES, cache=cache).info["resumed"] == 3


def _hits(i):
    return [ranklens.Hit(f"d{i}")]


def test_reused_spill_path_never_mixes_recorders(tmp_path):
    spill = tmp_path / "spill.jsonl"
    old = Recorder(max_records=2, spill=spill)
    for i in range(6):
        old.record(f"old {i}", _hits(i), query_id=f"old{i}")
    with pytest.raises(InputError, match="in use by another Recorder"):
        Recorder(spill=spill)
    old.close()
    del old
    new = Recorder(max_records=2, spill=spill)
    for i in range(6):
        new.record(f"new {i}", _hits(i), query_id=f"new{i}")
    assert [r.query_id for r in new.records()] == [f"new{i}" for i in range(6)]


def test_temporary_spill_files_are_deleted_on_close_and_at_exit(tmp_path):
    rec = Recorder(max_records=2)
    for i in range(6):
        rec.record(f"q {i}", _hits(i), query_id=f"q{i}")
    path = Path(rec._spill_path)
    assert path.exists()
    rec.close()
    assert not path.exists()
    script = tmp_path / "exit.py"
    script.write_text(
        "import ranklens\nrec = ranklens.Recorder(max_records=2)\n"
        "for i in range(6): rec.record('q', [ranklens.Hit('d')], query_id=f'q{i}')\n"
        "print(rec._spill_path)\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert not Path(out.stdout.strip()).exists()


def test_disk_full_while_spilling_drops_and_counts_never_raises(tmp_path, monkeypatch):
    rec = Recorder(max_records=2, spill=tmp_path / "s.jsonl")
    import builtins

    real_open = builtins.open

    def full(path, *a, **kw):
        if str(path).endswith("s.jsonl"):
            raise OSError(28, "No space left on device")
        return real_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", full)
    for i in range(10):
        rec.record(f"q {i}", _hits(i), query_id=f"q{i}")  # never raises
    monkeypatch.setattr(builtins, "open", real_open)
    assert rec.dropped > 0 and rec.summary()["dropped"] == rec.dropped
    assert len(list(rec.records())) == 10 - rec.dropped


def test_to_run_without_ids_says_how_to_pass_them():
    rec = Recorder()
    rec.record("what is x?", ["d1", "d2"])  # plain ids are hits too
    with pytest.raises(InputError, match=r"carry no query id.*query_id"):
        rec.to_run()
    ds = ranklens.Dataset({"q1": "What is X?"}, {"q1": ["d1"]})
    assert rec.to_run(ds).to_lists() == {"q1": ["d1", "d2"]}


@pytest.mark.parametrize("framework", ["llamaindex", "langchain", "haystack"])
def test_framework_retriever_identity_is_stable_across_processes(framework):
    pytest.importorskip(f"ranklens_{framework}")
    script = Path(__file__).resolve().parents[1] / "_retriever_identity.py"

    def digest(top_k):
        out = subprocess.run(
            [sys.executable, str(script), framework, str(top_k)],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        return out.stdout.strip().splitlines()[-1]

    first = digest(5)
    assert first == digest(5)  # a rebuilt index in a new process resumes its log
    assert first != digest(6)  # another top-k is another configuration


def test_node_ids_against_document_labels_name_the_key_that_fixes_them():
    def retriever(q):  # node ids; their parents and a metadata field are the documents
        return [{"id": f"node-{q}", "parent": f"doc-{q}", "metadata": {"doc_id": f"doc-{q}"}}]

    labels = {"q1": ["doc-alpha"], "q2": ["doc-beta"], "q3": ["doc-gamma"]}
    res = ranklens.run_retriever(retriever, QUERIES)
    with pytest.warns(RanklensWarning, match=r"0 of 3 retrieved ids have a label.*key='parent'"):
        ev = res.evaluate(labels, ["P@1"])
    assert ev["P@1"] == 0.0 and "0 of 3 retrieved ids have a label" in ev.to_table()
    fixed = ranklens.run_retriever(retriever, QUERIES, key="parent").evaluate(labels, ["P@1"])
    assert fixed["P@1"] == 1.0
    rec = Recorder()
    for qid, text in QUERIES.items():
        rec.record(text, [ranklens.Hit(f"n-{qid}", parent=f"doc-{text}")], query_id=qid)
    with pytest.warns(RanklensWarning, match=r"key='parent' would match 3"):
        rec.evaluate(labels, ["P@1"])
    # metadata fields the runner's log keeps: a metadata key is found as well
    meta_only = ranklens.run_retriever(
        lambda q: [{"id": "n", "metadata": {"doc_id": f"doc-{q}"}}], QUERIES
    )
    with pytest.warns(RanklensWarning, match=r"key='meta\.doc_id'"):
        meta_only.evaluate(labels, ["P@1"])


def test_held_stores_and_models_are_part_of_a_framework_retrievers_identity():
    from ranklens.capture import state_digest

    class Embedder:
        def __init__(self, model_name):
            self.model_name = model_name

    class VectorStore:
        def __init__(self, n, model):
            self.docs = {f"d{i}": i for i in range(n)}
            self.embedding = Embedder(model)

    class FrameworkRetriever:
        def __init__(self, store, top_k=5):
            self.store, self.top_k, self.embed = store, top_k, store.embedding

    def digest(n=10, model="minilm", top_k=5):
        return state_digest(FrameworkRetriever(VectorStore(n, model), top_k), depth=1)

    assert digest() == digest()
    assert digest() != digest(n=11)  # another store size
    assert digest() != digest(model="mpnet")  # another embedding model
    assert digest() != digest(top_k=6)


def test_summary_lines_report_failures_as_failures():
    rec = Recorder(max_records=2)  # failures both spilled and in memory
    for i in range(6):
        err = TimeoutError("slow backend") if i % 2 else None
        rec.record(f"question {i}", _hits(i), query_id=f"q{i}", error=err)
    line = rec.summary_line()
    assert "3 failed in the retriever" in line and "TimeoutError 3" in line
    assert "first: q1: TimeoutError: slow backend" in line
    assert rec.summary()["error_types"] == {"TimeoutError": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ranklens.run_retriever(lambda q: 1 / 0, {"q1": "x"}, retries=0)
    assert "1 failed in the retriever" in repr(res) and "ZeroDivisionError 1" in repr(res)
