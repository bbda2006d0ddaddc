"""The first hour of a new user: no silent zero and no misleading message, on every path.

Each test names the defect it guards against (a mean over nothing, a note that points the
wrong way, a crash where an error should name the fault)."""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens.app.cli import main
from ranklens.errors import DuplicateDocumentError, InputError, NoSharedQueryError

LABELS = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 2}}


def write_trec(path, rows):
    path.write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(rows)))
    return path


# --- 1: a run that shares no query with the labels is an error on every path -------------


@pytest.mark.parametrize("run", [{}, {"x": {"d1": 1.0}}, {"x": ["d1"]}, {"x": [("d1", 1.0)]}])
def test_a_run_sharing_no_query_is_an_error_in_the_api(run):
    with pytest.raises(NoSharedQueryError, match="no query to evaluate") as err:
        ranklens.evaluate(LABELS, run, ["ndcg@10"])
    msg = str(err.value)
    assert ("is empty" in msg) == (not run)
    assert "'q1'" in msg and ("'x'" in msg or not run)


def test_compare_names_the_run_as_the_user_named_it():
    with pytest.raises(NoSharedQueryError, match="run 'covid'"):
        ranklens.compare(LABELS, {"ok": {"q1": ["d1"]}, "covid": {"c1": ["d1"]}}, ["P@1"])


def test_gate_refuses_a_run_sharing_no_query(tmp_path):
    base = tmp_path / "b.json"
    ranklens.gate(LABELS, {"q1": ["d1"]}, base, ["P@1"], update_baseline=True)
    with pytest.raises(NoSharedQueryError):
        ranklens.gate(LABELS, {"zz": ["d1"]}, base, ["P@1"])


def test_streaming_and_the_cli_refuse_a_run_sharing_no_query(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, r in LABELS.items() for d, g in r.items()))
    run = write_trec(tmp_path / "run.txt", [("101", "d1", 2.0), ("102", "d2", 1.0)])
    with pytest.raises(NoSharedQueryError, match=r"run\.txt"):
        ranklens.evaluate_file(qrels, run, ["P@1"], memory=1e3)
    with pytest.raises(NoSharedQueryError, match=r"run\.txt"):
        ranklens.evaluate_file(qrels, run, ["P@1"], memory=1e3, missing="skip")
    for extra in ([], ["--memory", "1K"]):
        assert main(["evaluate", str(qrels), str(run), "-m", "P@1", *extra]) == 2
        assert "shares no query id with the labels" in capsys.readouterr().err
    assert main(["compare", str(qrels), f"a={run}", "-m", "P@1"]) == 2
    assert "run 'a'" in capsys.readouterr().err


def test_ids_of_another_form_are_pointed_out():
    with pytest.raises(NoSharedQueryError, match=r"run 'Q-001', labels '1'"):
        ranklens.evaluate({"1": ["a"], "2": ["b"]}, {"Q-001": ["a"]}, ["P@1"])


def test_a_run_whose_every_labelled_query_failed_is_scored_not_refused():
    result = ranklens.run_retriever(lambda q: 1 / 0, {"q1": "a", "q2": "b"}, retries=0)
    ev = result.evaluate({"q1": ["d1"], "q2": ["d2"]}, ["P@1"])
    assert ev["P@1"] == 0 and "2 failed in the retriever" in ev.notes()


# --- 2 and 14: labelled queries without a relevant document --------------------------------


def test_queries_without_a_relevant_document_are_counted_and_shown():
    ev = ranklens.evaluate({"q1": {"d1": 0}, "q2": {"d2": 1}}, {"q1": ["d1"], "q2": ["d2"]},
                           ["ndcg@10"])  # fmt: skip
    assert ev.counts["queries_without_relevant"] == 1
    assert ev.judged.counts.without_relevant_ids == ["q1"]
    assert "1 labelled query has no relevant document" in ev.notes()
    assert "no_relevant='skip'" in ev.notes()
    skipped = ranklens.evaluate({"q1": {"d1": 0}, "q2": {"d2": 1}}, {"q1": ["d1"], "q2": ["d2"]},
                                ["ndcg@10"], no_relevant="skip")  # fmt: skip
    assert skipped["ndcg@10"] == 1.0 and skipped.counts["queries_no_relevant_skipped"] == 1


def test_empty_labels_get_the_right_hint_not_the_chunk_id_one():
    notes = ranklens.evaluate({"q1": {}}, {"q1": ["x"]}, ["P@1"]).notes()
    assert "the only labelled query has no relevant document" in notes
    assert "key=" not in notes and "name no document" in notes


def test_relevance_level_moves_the_count():
    ev = ranklens.evaluate({"q1": {"a": 1}, "q2": {"b": 2}}, {"q1": ["a"], "q2": ["b"]}, ["P@1"],
                           relevance_level=2)  # fmt: skip
    assert ev.judged.counts.without_relevant_ids == ["q1"]


def test_no_relevant_query_left_under_a_framework_convention_says_why():
    with pytest.raises(NoSharedQueryError, match="has no relevant document") as err:
        ranklens.evaluate({"q0": {"d1": 0}}, {"q0": ["d1"]}, ["mrr@10"], convention="llamaindex")
    assert "shares no query" not in str(err.value) and "llamaindex convention" in str(err.value)


def test_streamed_counts_of_queries_without_relevant_documents_match(tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 a 0\nq2 0 b 1\nq3 0 c 0\n")
    run = write_trec(tmp_path / "r.txt", [("q1", "a", 2), ("q2", "b", 1), ("q3", "z", 1)])
    whole = ranklens.evaluate(qrels, run, ["P@1"], memory=float("inf"))
    streamed = ranklens.evaluate_file(qrels, run, ["P@1"], memory=1e3)
    assert whole.counts["queries_without_relevant"] == 2
    assert streamed.counts["queries_without_relevant"] == 2
    assert whole.notes() == streamed.notes()


# --- 10: the gate on some of a baseline's metrics ------------------------------------------


def test_cli_gate_on_a_subset_of_the_baselines_metrics(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(30)))
    run = write_trec(tmp_path / "run.txt", [(f"q{i}", f"d{i}", 1.0) for i in range(30)])
    base = tmp_path / "base.json"
    args = ["gate", str(qrels), str(run), "--baseline", str(base)]
    assert main([*args, "-m", "ndcg@10", "-m", "mrr@10", "--update-baseline"]) == 0
    out = capsys.readouterr().out
    assert "baseline written" in out and "PASS" not in out
    assert main([*args, "-m", "ndcg@10"]) == 0
    assert "gate passed" in capsys.readouterr().out
    assert main([*args, "-m", "P@5"]) == 2
    assert "baseline has no values of P@5" in capsys.readouterr().err
    assert json.loads(base.read_text())["metrics"] == ["ndcg@10", "mrr@10"]


def test_a_missing_baseline_is_named_before_anything_is_evaluated(tmp_path):
    with pytest.raises(InputError, match="no baseline report here"):
        ranklens.gate(LABELS, {}, tmp_path / "none.json", ["P@1"])


# --- 3: recorded queries matched to a dataset by text --------------------------------------


def test_a_shared_text_goes_to_the_labelled_query_and_the_counts_agree(shared):
    dataset = ranklens.read_dataset(shared("scifact"))
    text = dataset.queries["1292"]
    assert dataset.queries["1291"] == text and "1291" not in set(dataset.qrels.query_ids)
    rec = ranklens.Recorder()
    rec.record(text, ["56893404", "x"])  # no query id: matched by text
    rec.record("what is dark matter made of", ["y"])
    ev = rec.evaluate(dataset, ["P@1"])
    assert ev.query_ids == ["1292"] and ev["P@1"] == 1.0
    assert ev.recorder_counts["matched"] == 1 == ev.counts["queries_evaluated"]
    assert ev.recorder_counts["ambiguous"] == 0  # one labelled query has that text
    assert "1 recorded retrieval matched no labelled query" in ev.notes()
    assert "1 labelled query matched by recorded retrievals" in ev.notes()
    assert rec.to_run(dataset).to_lists() == {"1292": ["56893404", "x"]}


def test_a_text_shared_with_an_unlabelled_query_is_counted_and_said():
    ds = ranklens.Dataset({"1291": "Same text?", "1292": "same  text?"}, {"1292": {"d1": 1}})
    rec = ranklens.Recorder()
    rec.record("same text?", ["d1"])
    ev = rec.evaluate(ds, ["P@1"])
    assert ev.query_ids == ["1292"] and ev.recorder_counts["shared_text"] == 1
    assert "1 recorded retrieval matched by a text that an unlabelled dataset query" in (ev.notes())


def test_two_labelled_queries_with_one_text_are_both_answered_and_said():
    ds = ranklens.Dataset(
        {"a": "Same  question?", "b": "same question?", "c": "other"},
        {"a": {"d1": 1}, "b": {"d2": 1}, "c": {"d3": 1}},
    )
    rec = ranklens.Recorder()
    rec.record("same question?", ["d2", "d1"])
    with pytest.warns(ranklens.RanklensWarning, match="several dataset queries share"):
        ev = rec.evaluate(ds, ["P@1", "recall@2"])
    assert ev.query_ids == ["a", "b"]
    assert ev.query("a")["recall@2"] == 1.0 and ev.query("b")["P@1"] == 1.0
    assert ev.recorder_counts["ambiguous"] == 1 and ev.recorder_counts["matched"] == 2
    assert "several dataset queries share" in ev.notes()


# --- 8: the recorder suggests key="parent" for chunk hits ----------------------------------


def test_the_recorder_suggests_key_parent_for_chunk_hits():
    rec = ranklens.Recorder()  # key="id": chunk ids scored against document labels
    labels = {f"q{i}": {f"doc{i}": 1} for i in range(5)}
    for i in range(5):
        hits = [ranklens.Hit(f"c{i}-{j}", 1.0 - j / 10, parent=f"doc{i + j}") for j in range(3)]
        rec.record(f"question {i}", hits, query_id=f"q{i}")
    with pytest.warns(ranklens.RanklensWarning, match="key='parent' would match 5 hits"):
        ev = rec.evaluate(labels, ["P@1"])
    assert ev["P@1"] == 0
    ok = ranklens.Recorder(key="parent")
    for r in rec.records():
        ok.record(r.query, [ranklens.Hit(h["id"], h["score"], parent=h["parent"]) for h in r.hits],
                  query_id=r.query_id)  # fmt: skip
    assert ok.evaluate(labels, ["P@1"])["P@1"] == 1.0


# --- 4: chunks merged into fewer documents than k -------------------------------------------


def chunked(q, k=None):
    """Three chunks per document, so k chunks name about k/3 documents."""
    n = k or 9
    return [ranklens.Hit(f"{q}-c{i}", 1 - i / 100, parent=f"doc{i // 3}") for i in range(n)]


def test_merging_chunks_into_fewer_than_k_documents_warns_with_the_fix():
    queries = {f"q{i}": f"question {i}" for i in range(4)}
    with pytest.warns(ranklens.RanklensWarning, match=r"4 of 4 queries have fewer than k=6") as w:
        result = ranklens.run_retriever(chunked, queries, k=6, key="parent")
    assert "fetch_k=" in str(w[0].message) and "as few as 2" in str(w[0].message)
    assert all(len(r.doc_ids) == 2 for r in result.records)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        full = ranklens.run_retriever(chunked, queries, k=6, key="parent", fetch_k=18)
    assert all(r.doc_ids == [f"doc{i}" for i in range(6)] for r in full.records)


def test_fetch_k_is_refused_where_the_retriever_sets_its_own_top_k():
    class OwnTopK(ranklens.RetrieverAdapter):
        takes_k = False

        def retrieve(self, query, query_id, k):
            return chunked(query_id)

    with pytest.raises(InputError, match="its own top-k setting decides"):
        ranklens.run_retriever(OwnTopK(), {"q": "x"}, k=3, key="parent", fetch_k=9)
    from ranklens.capture.run_checks import merged_message

    msg = merged_message("r", "parent", 10, 5, [3, 4], None, False, ("similarity_top_k", 10))
    assert "similarity_top_k=20" in msg and "fetch_k" not in msg


# --- 5: latency at concurrency and the call's own CPU time ---------------------------------


def busy(q):
    """A retriever that computes in Python (about 15 ms of CPU), as an in-memory BM25."""
    t, x = time.thread_time(), 0
    while time.thread_time() - t < 0.015:
        x += 1
    return ["a"]


def test_cpu_time_is_reported_beside_latency_at_concurrency():
    result = ranklens.run_retriever(busy, {f"q{i}": "x" for i in range(24)}, concurrency=6)
    info = result.report_info()
    assert info["concurrency"] == 6
    # no speed in these checks: busy() spins until its own thread has used 15 ms of CPU, and
    # a call's wall time holds its thread's CPU time, call by call (so the medians too)
    assert info["cpu_ms"]["p50"] >= 15  # one call's own cost
    assert info["latency_ms"]["p50"] >= info["cpu_ms"]["p50"]
    assert f"at concurrency 6, CPU p50 {info['cpu_ms']['p50']:.1f} ms" in repr(result)
    report = ranklens.compare({"q0": ["a"]}, {"busy": result}, ["P@1"])
    html = report.to_html()
    assert "CPU p50 ms" in html and "waits on a service" in html
    text = report.to_markdown()  # the terminal and Markdown say it too, one line per run
    assert "Retrieval time per query" in text
    assert f"busy: p50 {info['latency_ms']['p50']:.1f} ms" in text
    assert f"(concurrency 6; CPU p50 {info['cpu_ms']['p50']:.1f} ms)" in text


# --- 6 and 19: a retriever's own TimeoutError; a function's run is named after it ----------


def test_a_retrievers_own_timeout_error_is_recorded_and_retried():
    calls = []

    def flaky(q):
        calls.append(q)
        raise TimeoutError("upstream took too long")

    for timeout in (None, 5.0):
        calls.clear()
        result = ranklens.run_retriever(
            flaky, {"q1": "x"}, retries=2, backoff=0.001, timeout=timeout
        )
        err = result.records[0].error
        assert err == {"type": "TimeoutError", "message": "upstream took too long"}
        assert len(calls) == 3 and result.records[0].attempts == 3


def test_a_function_retrievers_run_is_named_after_it():
    def bm25_top10(q):
        return ["a"]

    assert ranklens.run_retriever(bm25_top10, {"q": "x"}).name == "bm25_top10"
    assert ranklens.run_retriever(lambda q: ["a"], {"q": "x"}).name == "lambda"
    assert ranklens.run_retriever(bm25_top10, {"q": "x"}, name="mine").name == "mine"


# --- 7: a key that maps no hit blames the key, not the retriever's top-k -------------------


def test_a_key_that_names_no_hit_says_so_and_lists_the_fields_that_exist():
    def hits(q):
        return [ranklens.Hit(f"c{i}", 1.0, metadata={"doc_id": f"d{i}"}) for i in range(5)]

    with pytest.warns(ranklens.RanklensWarning) as caught:
        ranklens.run_retriever(hits, {"q": "x"}, k=5, key="meta.doc_idd")
    messages = [str(w.message) for w in caught]
    assert any(
        "gave no document id for 5 of 5 hits" in m and "'meta.doc_id'" in m for m in messages
    )
    assert not any("smaller top-k" in m for m in messages)


def test_a_recorders_key_that_names_no_hit_is_said_never_a_silent_zero():
    rec = ranklens.Recorder(key="meta.doc_idd")  # a typo of the field the hits carry
    ds = ranklens.Dataset({"q1": "a", "q2": "b"}, {"q1": {"d1": 1}, "q2": {"d2": 1}})
    rec.record("a", [ranklens.Hit("c1", metadata={"doc_id": "d1"})], query_id="q1")
    rec.record("b", [ranklens.Hit("c2", metadata={"doc_id": "d2"})], query_id="q2")
    with pytest.warns(ranklens.RanklensWarning, match="gave no document id for 2 of 2 hits"):
        ev = rec.evaluate(ds, ["P@1"])
    assert "key='meta.doc_idd' gave no document id for 2 of 2 recorded hits" in ev.notes()


# --- 9: Ctrl-C says what was saved and how to resume ---------------------------------------

INTERRUPTED = """
import os, signal, sys, time
import ranklens
calls = []

def saved():
    with open(sys.argv[1]) as log:
        return len(log.read().splitlines()) - 1  # the first line is the log's header

def slow(q):
    calls.append(q)
    if sys.argv[2] == "kill" and len(calls) == 10:  # Ctrl-C once some queries are saved:
        while saved() < 3:                          # by progress, never by the clock
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.01)
    return ["a"]

ranklens.run_retriever(slow, {f"q{i}": "x" for i in range(60)}, cache=sys.argv[1], concurrency=2)
print(len(calls))
"""


def test_ctrl_c_says_how_many_queries_are_saved_and_how_to_resume(tmp_path):
    log = tmp_path / "run.jsonl"

    def script(mode):
        return subprocess.run([sys.executable, "-c", INTERRUPTED, str(log), mode],
                              capture_output=True, text=True, timeout=600)  # fmt: skip

    killed = script("kill")
    err = killed.stderr
    assert killed.returncode != 0
    assert (
        "RunInterrupted: ranklens.run_retriever interrupted:" in err
        and "run again with the same" in err
    )
    assert "CancelledError" not in err and "During handling" not in err and "no running" not in err
    saved = int(re.search(r"(\d+) of 60 queries are saved", err).group(1))
    assert 3 <= saved < 60 and len(log.read_text().splitlines()) == saved + 1
    resumed = script("resume")
    assert resumed.returncode == 0, resumed.stderr
    assert int(resumed.stdout.split()[-1]) == 60 - saved  # no finished query asked again


def test_an_interrupt_in_a_notebook_stops_the_runs_thread_and_says_so(tmp_path):
    """In a running event loop (Jupyter) the run has a thread of its own: an interrupt of
    the main thread stops it and says what was saved."""
    import _thread
    import asyncio
    import threading

    from ranklens.errors import RunInterrupted

    calls = []

    def slow(q):  # the interrupt comes with the 20th call: by progress, never by the clock
        calls.append(q)
        if len(calls) == 20:
            _thread.interrupt_main()
        time.sleep(0.02)
        return ["a"]

    async def notebook_cell():
        ranklens.run_retriever(slow, {f"q{i}": "x" for i in range(500)}, cache=tmp_path / "l.jsonl",
                     concurrency=2)  # fmt: skip

    loop = asyncio.new_event_loop()  # as a kernel's loop: no SIGINT handler of asyncio's
    try:
        with pytest.raises(RunInterrupted, match=r"of 500 queries are saved") as err:
            loop.run_until_complete(notebook_cell())
    finally:
        loop.close()
    saved = int(re.search(r"(\d+) of 500", str(err.value)).group(1))
    for thread in threading.enumerate():  # the log no longer grows once the run's thread ends
        if thread.name == "ranklens-run":
            thread.join(600)
    assert len((tmp_path / "l.jsonl").read_text().splitlines()) - 1 <= saved + 2


# --- 15: any plain config= is accepted --------------------------------------------------------


def test_a_config_of_any_plain_shape_is_accepted_and_resumes(tmp_path):
    config = {1: "int key", ("a", 2): {3, 1}, "nested": {"k": (1, 2.5, None)}, "n": np.int64(3),
              "path": Path("/data/index"), "flag": True}  # fmt: skip
    first = ranklens.run_retriever(
        lambda q: ["a"], {"q": "x"}, config=config, cache=tmp_path / "l.jsonl"
    )
    again = ranklens.run_retriever(
        lambda q: ["b"], {"q": "x"}, config=config, cache=tmp_path / "l.jsonl"
    )
    assert first.records[0].doc_ids == again.records[0].doc_ids == ["a"]  # resumed, not re-run
    assert again.info["resumed"] == 1
    with pytest.raises(InputError, match="config must be a mapping"):
        ranklens.run_retriever(lambda q: ["a"], {"q": "x"}, config=["not", "a", "dict"])


# --- 11: datasets: a missing path, swapped files, one schema --------------------------------


def test_a_missing_dataset_path_says_so(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        ranklens.read_dataset(tmp_path / "no" / "such" / "path")
    (tmp_path / "scifact").mkdir()
    with pytest.raises(InputError, match=r"no such file or folder \(in .*: scifact\)"):
        ranklens.read_dataset(tmp_path / "scifakt")


def test_swapped_qrels_and_run_files_get_a_hint(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = write_trec(tmp_path / "run.txt", [("q1", "d1", 2.0)])
    for a, b in ((run, qrels), (run, run), (qrels, qrels)):
        with pytest.raises(InputError, match="the other way round"):
            ranklens.evaluate(a, b, ["P@1"])
    assert main(["evaluate", str(run), str(qrels), "-m", "P@1"]) == 2


def test_jsonl_and_csv_datasets_read_one_schema_with_the_same_aliases(tmp_path):
    (tmp_path / "a.jsonl").write_text(
        json.dumps({"qid": "q1", "question": "why?", "relevant": {"d1": 2}}) + "\n"
    )
    (tmp_path / "a.csv").write_text("qid,question,docno,relevance\nq1,why?,d1,2\n")
    j, c = ranklens.read_dataset(tmp_path / "a.jsonl"), ranklens.read_dataset(tmp_path / "a.csv")
    assert j.queries == c.queries == {"q1": "why?"}
    assert j.qrels.to_dict() == c.qrels.to_dict() == {"q1": {"d1": 2}}
    (tmp_path / "b.jsonl").write_text(json.dumps({"qid": "q1", "relevant": ["d1"]}) + "\n")
    with pytest.raises(InputError, match=r"b.jsonl:1: missing field 'query' \(or 'text', 'q"):
        ranklens.read_dataset(tmp_path / "b.jsonl")
    (tmp_path / "c.jsonl").write_text(json.dumps({"qid": "q1", "query": 5, "relevant": []}))
    with pytest.raises(InputError, match="field 'query' must be a string, got int"):
        ranklens.read_dataset(tmp_path / "c.jsonl")
    (tmp_path / "d.csv").write_text("id,text\nq1,why\n")
    with pytest.raises(InputError, match=r"missing column 'doc_id' \(or 'docno'.*header has id"):
        ranklens.read_dataset(tmp_path / "d.csv")


def test_read_datasets_parameters_are_in_its_signature():
    import inspect

    params = inspect.signature(ranklens.read_dataset).parameters
    assert "split" in params and "corpus" in params
    assert "split" in ranklens.read_dataset.__doc__


# --- 12: the runner's log reads as a run, in Python and on the command line -----------------


def test_the_runners_log_reads_as_a_run(tmp_path):
    log = tmp_path / "runs" / "bm25.jsonl"
    answers = {"a": ["d1", "x"], "b": ["y", "d2"], "c": ["d3"]}

    def retriever(q):
        if q == "a":
            raise RuntimeError("down")
        return answers[q]

    result = ranklens.run_retriever(
        retriever, {"q1": "a", "q2": "b", "q3": "c"}, cache=log, retries=0
    )
    assert [r.query_id for r in result.failed] == ["q1"]
    run = ranklens.read_run(log)
    assert run.to_lists() == result.run.to_lists() == {"q2": ["y", "d2"], "q3": ["d3"]}
    assert set(run.failures) == {"q1"}
    labels = {"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]}
    ev = ranklens.evaluate(labels, log, ["mrr"])
    assert ev["mrr"] == result.evaluate(labels, ["mrr"])["mrr"] == pytest.approx(0.5)
    assert "1 failed in the retriever" in ev.notes()
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    assert main(["compare", str(qrels), f"bm25={log}", "-m", "mrr", "--format", "none"]) == 0
    assert main(["evaluate", str(qrels), str(log), "-m", "mrr"]) == 0


# --- 13: python -m ranklens.cli ---------------------------------------------------------------


def test_python_m_ranklens_runs_the_command():
    """``python -m ranklens`` is the command (0.1's ``ranklens.cli`` path, never published,
    is not served)."""
    proc = subprocess.run([sys.executable, "-m", "ranklens", "--help"], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0 and "usage: ranklens" in proc.stdout
    assert "Traceback" not in proc.stderr


# --- 15: classes found by independent checks ---------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        ({"q": [["a"], 5]}, "group 1 of query 'q' must be a list of document ids"),
        ({"q": {"a": [1]}}, r"grade \[1\] of document 'a' in query 'q' is not an integer"),
        ({"q": 5}, "labels of query 'q' must be a dict"),
        ({"q": {"a": 10**400}}, r"grade 1000.*… of document 'a' in query 'q' is out of range"),
    ],
)
def test_labels_of_a_wrong_shape_are_named_never_a_type_error(labels, match):
    with pytest.raises(InputError, match=match):
        ranklens.evaluate(labels, {"q": ["a"]}, ["P@1"])


@pytest.mark.parametrize("side", ["labels", "run"])
def test_two_keys_naming_one_query_are_refused_never_merged(side):
    labels, run = {"1": {"a": 1}, "2": {"b": 1}}, {"1": ["a"], "2": ["b"]}
    if side == "labels":
        labels = {1: {"a": 1}, "1": {"b": 1}, "2": {"b": 1}}
    else:
        run = {1: ["a"], "1": ["b"], "2": ["b"]}
    with pytest.raises(InputError, match=r"query keys 1 and '1' both name query '1'"):
        ranklens.evaluate(labels, run, ["P@1"])


def test_an_integer_and_a_string_key_naming_one_document_are_a_repeat_never_merged():
    with pytest.raises(DuplicateDocumentError, match="document '1' appears more than once"):
        ranklens.evaluate({"q": {"1": 1}}, {"q": {1: 0.2, "1": 0.9}}, ["P@1"])
    with pytest.raises(DuplicateDocumentError, match="document '1' is labelled twice"):
        ranklens.evaluate({"q": {1: 1, "1": 0}}, {"q": ["1"]}, ["P@1"])


@pytest.mark.parametrize("container", [dict, collections.OrderedDict, types.MappingProxyType])
@pytest.mark.parametrize(
    ("labels", "run", "match"),
    [
        ({"q": {"d1": [1]}}, {"q": {"d1": 1.0, "d2": 2.0}}, r"grade \[1\] of document 'd1'"),
        ({"q": {"d1": [1], "d2": 0}}, {"q": {"d1": 1.0}}, r"grade \[1\] of document 'd1'"),
        ({"q": {"d1": 1}}, {"q": {"d1": [0.5]}}, r"score \[0.5\] of document 'd1'"),
        ({"q": {"a": 1}}, {"q": {"a": [0.1], "b": [0.9]}}, r"score \[0.1\] of document 'a'"),
        ({"q": {"d1": 1}}, {"q": {"d1": np.array([0.5])}}, r"score array\(\[0.5\]\) of"),
    ],
)
def test_a_list_as_a_grade_or_a_score_is_named_on_every_reader(labels, run, match, container):
    """Whichever reader takes the dicts (the run's own join, the columns, one by one), with
    and without the compiled helpers: never a numpy error, never accepted."""
    from ranklens.model import native

    loaded = native.NATIVE
    try:
        for helpers in (loaded, None):
            native.NATIVE = helpers
            with pytest.raises(InputError, match=match):
                ranklens.evaluate(labels, container(run), ["map"])
    finally:
        native.NATIVE = loaded


def test_an_id_with_a_lone_surrogate_is_read_alike_on_every_path():
    labels, ids = {"q": {"\ud800": 1, "d1": 1}}, ["\ud800", "\ud7ff", "\ue000", "d1"]
    as_given = [{"q": ids}, {"q": list(zip(ids, [4, 3, 2, 1]))},
                types.MappingProxyType({"q": dict(zip(ids, [4.0, 3.0, 2.0, 1.0]))})]  # fmt: skip
    for run in as_given:  # relevant at ranks 1 and 4
        assert ranklens.evaluate(labels, run, ["map"])["map"] == pytest.approx((1 + 2 / 4) / 2)
    tied = {"q": dict(zip(ids, [2.0, 2.0, 2.0, 1.0]))}  # ties by id, code point order: ue000
    for run in (tied, types.MappingProxyType(tied)):  # first, then ud800, ud7ff
        assert ranklens.evaluate(labels, run, ["map"])["map"] == pytest.approx((1 / 2 + 2 / 4) / 2)


def test_expected_ties_on_a_ranked_list_are_the_list_itself():
    labels, run = {"q1": {"a": 1}}, {"q1": ["b", "a"]}
    ev = ranklens.evaluate(labels, run, ["map", "ndcg@10"], ties="expected")
    assert ev.aggregate == ranklens.evaluate(labels, run, ["map", "ndcg@10"]).aggregate
    assert ranklens.evaluate(labels, {"q1": []}, ["map"], ties="expected")["map"] == 0.0


def test_integer_query_keys_of_groups_and_datasets_are_read_as_their_strings():
    with pytest.raises(InputError, match=r"query keys 1 and '1' both name query '1'"):
        ranklens.Qrels.from_groups({1: [["a"]], "1": [["b"]]})
    with pytest.raises(InputError, match=r"queries: query keys 1 and '1' both name query '1'"):
        ranklens.Dataset(queries={1: "x", "1": "y"}, qrels={"1": {"a": 1}})
    ds = ranklens.Dataset(queries={1: "x", 2: "y"}, qrels={1: {"a": 1}})
    assert ds.queries == {"1": "x", "2": "y"} and ds.labelled_queries == {"1": "x"}


def test_grades_of_a_wrong_shape_are_named(tmp_path):
    with pytest.raises(InputError, match="grades of query 'q' must be a list"):
        ranklens.Qrels.from_groups({"q": [["a"]]}, grades={"q": 5})
    (tmp_path / "g.jsonl").write_text(
        json.dumps({"qid": "q", "query": "x", "groups": [["a"]], "grades": 5}) + "\n"
    )
    with pytest.raises(InputError, match="grades of query 'q' must be a list"):
        ranklens.read_dataset(tmp_path / "g.jsonl")


@pytest.mark.parametrize("number", ["9" * 400, "1e400", "-1e400", "NaN", "Infinity"])
def test_json_numbers_outside_the_float_range_are_named_never_an_overflow(tmp_path, number):
    run = tmp_path / "r.jsonl"
    run.write_text(f'{{"query_id": "q", "hits": [{{"id": "a", "score": {number}}}]}}\n')
    with pytest.raises(InputError, match=r"r\.jsonl:1: hit 0 \('a'\): score .* finite"):
        ranklens.evaluate({"q": ["a"]}, run, ["P@1"])
    with pytest.raises(InputError, match="is beyond the range of a float"):
        ranklens.evaluate({"q": ["a"]}, {"q": {"a": 10**400}}, ["P@1"])


def test_effect_sizes_of_constant_differences_are_definite_and_shown():
    labels = {"q1": ["a"], "q2": ["b"], "q3": ["c"]}
    runs = {"good": {"q1": ["a"], "q2": ["b"], "q3": ["c"]}, "bad": {"q1": ["z"], "q2": ["z"],
            "q3": ["z"]}, "bad2": {"q1": ["z"], "q2": ["z"], "q3": ["z"]}}  # fmt: skip
    report = ranklens.compare(labels, runs, ["P@1"], baseline="good")
    effects = {c.run: c.effect_size for c in report.comparisons}
    assert effects == {"bad": -np.inf, "bad2": -np.inf}
    same = ranklens.compare(labels, {"a": runs["bad"], "b": runs["bad2"]}, ["P@1"])
    assert same.comparisons[0].effect_size == 0.0
    assert "−∞" in report.to_text() and "−∞" in report.to_markdown() and "−∞" in report.to_html()
    again = ranklens.Report.from_dict(json.loads(report.to_json()))
    assert [c.effect_size for c in again.comparisons] == [-np.inf, -np.inf]


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("baseline", "zzz", r"settings\['baseline'\] names 'zzz', not a run"),
        ("baseline", 3, r"settings\['baseline'\] must be a string"),
        ("confidence", "x", r"settings\['confidence'\] must be a number"),
        ("n_resamples", 2.5, r"settings\['n_resamples'\] must be an integer"),
    ],
)
def test_settings_a_renderer_reads_are_checked_on_load(field, value, match):
    runs = {"x": {"q": ["a"], "p": ["b"]}, "y": {"q": ["b"], "p": ["a"]}}
    data = json.loads(ranklens.compare({"q": ["a"], "p": ["b"]}, runs, ["P@1"]).to_json())
    ranklens.Report.from_dict(json.loads(json.dumps(data))).to_html()  # as saved: renders
    data["settings"][field] = value
    with pytest.raises(InputError, match=match):
        ranklens.Report.from_dict(data)


def test_metadata_of_the_wrong_type_is_named_not_a_renderer_crash(tmp_path):
    labels, run = {"q1": ["a"], "q2": ["b"]}, {"q1": ["a"], "q2": ["x"]}
    with pytest.raises(InputError, match=r"run_info\['r'\]\['errors'\] must be an integer"):
        ranklens.compare(labels, {"r": run}, ["P@1"], run_info={"r": {"errors": "two"}})
    report = ranklens.compare(labels, {"r": run}, ["P@1"])
    for field, bad, match in [
        ("run_info", {"r": {"latency_ms": "fast"}}, r"latency_ms'\] must be an object"),
        ("power", {"mde": {"P@1": "big"}}, r"mde'\]\['P@1'\] must be a number"),
        ("options", {"relevance_level": "one"}, r"relevance_level'\] must be an integer"),
        ("holes", {"r": {"worst_queries": [["q1"]]}}, r"worst_queries'\]\[0\] must be a"),
        ("dataset", 7, r"metadata\['dataset'\] must be a string"),
    ]:
        edited = ranklens.Report.from_dict(json.loads(report.to_json()))
        edited.metadata[field] = bad
        for render in (edited.to_text, edited.to_markdown, edited.to_html):
            with pytest.raises(InputError, match=match):
                render()
        saved = json.loads(report.to_json())
        saved["metadata"][field] = bad
        (tmp_path / "r.json").write_text(json.dumps(saved))
        with pytest.raises(InputError, match=match):
            ranklens.load_report(tmp_path / "r.json")


# --- 16 and 18: notes a line per run, details behind a flag; difference bars by sign ----------


def holey_report():
    labels = {str(i): {f"d{i}": 1} for i in range(1, 9)}
    a = {str(i): [f"x{i}-{j}" for j in range(5)] + [f"d{i}"] for i in range(1, 9)}
    b = {str(i): [f"d{i}"] + [f"y{i}-{j}" for j in range(5)] for i in range(1, 9)}
    return ranklens.compare(labels, {"a": a, "b": b}, ["ndcg@10", "P@5", "recall@10"])


def test_notes_are_a_short_line_per_run_with_details_on_request():
    report = holey_report()
    text = report.to_text()
    caption = text.split("paired comparisons")[0]
    run_lines = [line.strip() for line in caption.splitlines() if line.strip().startswith("a:")]
    assert run_lines and all(len(line) <= 120 for line in run_lines)
    assert "(and 2 more metrics)" in caption and "details=True" in caption
    assert "in query" not in caption  # the queries behind a note are details
    full = report.to_text(details=True)
    assert "5 in query 1" in full and "1 (5)" not in full  # numeric ids read as ids
    assert "P@5" in full.split("paired comparisons")[0].split("Unjudged")[1]
    md = report.to_markdown()
    assert "\n- a: 40 unjudged" in md and "\n- b: 40 unjudged" in md
    html = report.to_html()
    assert '<details class="note-details"><summary>Details</summary>' in html
    assert "<li>a: 40 unjudged" in html


def test_difference_bars_are_coloured_by_sign_and_the_runs_named():
    from ranklens.render import svg

    chart = svg.difference_chart("t", [0.5, -0.25, 0.0, 0.1], "d", names=("dense", "bm25"))
    assert chart.count('class="better"') == 1 and chart.count('class="worse"') == 1
    assert f'fill="{svg.BETTER}"' in chart and f'fill="{svg.WORSE}"' in chart
    assert "dense better than bm25" in chart and "dense worse than bm25" in chart
    assert "stroke-dasharray" not in chart.split("legend")[-1]
    html = holey_report().to_html()
    chart = re.search(r'<svg[^>]*aria-label="ndcg@10: b − a, per query".*?</svg>', html, re.S)
    assert chart is not None and "b better than a" in chart.group(0)
    assert 'class="better"' in chart.group(0) and 'class="worse"' not in chart.group(0)


def test_the_power_note_never_quotes_a_difference_wider_than_the_metric_allows():
    # with 2 queries the t test's detectable difference exceeds 1: no P@2 difference is
    # detectable, said so, never "from about 3.5"
    qrels = {"q1": ["a"], "q2": ["b"]}
    runs = {"a": {"q1": ["a"], "q2": ["b"]}, "b": {"q1": ["x", "y", "a"], "q2": ["b", "z"]}}
    rep = ranklens.compare(qrels, runs, ["P@2", "rr"], test="t", ci="t")
    assert rep.metadata["power"]["mde"]["P@2"] > 1 and rep.metadata["power"]["span"]["P@2"] == 1
    text = " ".join(rep.to_text().split())
    assert "no difference within the range of P@2, rr is detected" in text
    assert "from about" not in text
    many = {f"q{i}": ["a"] for i in range(60)}
    runs = {"a": {q: ["a"] for q in many}, "b": {q: ["x", "a"] if i % 2 else ["a"]
                                                for i, q in enumerate(many)}}  # fmt: skip
    text = " ".join(ranklens.compare(many, runs, ["rr", "dcg"], ci=None).to_text().split())
    assert "from about: rr 0." in text and "dcg" in text.split("Power:")[1]
