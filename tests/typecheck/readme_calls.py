"""The README's calls as a user's type checker sees them (checked by mypy in
tests/project/test_typing.py, never imported by the suite).

``assert_type`` fails when a public function loses its annotations (its result would be
``Any``); each ``# type: ignore[...]`` marks a call the types must refuse, and mypy's
``warn_unused_ignores`` fails the check the day they stop refusing it.
"""

from __future__ import annotations

from typing import Any

from ranklens_haystack import RanklensRecorder
from ranklens_langchain import instrument as instrument_langchain
from ranklens_llamaindex import instrument
from typing_extensions import assert_type

import ranklens
from ranklens import (
    Evaluation,
    Hit,
    Metric,
    Qrels,
    Recorder,
    Report,
    Run,
    RunResult,
    SpanLabels,
)
from ranklens.capture import Instrumentation

qrels = {"q1": {"d1": 2, "d2": 1, "d7": 0}, "q2": ["d3"]}
run = {"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.4}, "q2": ["d5", "d3"]}

# evaluate, and what an Evaluation gives back
ev = ranklens.evaluate(qrels, run, ["ndcg@10", "P@5", "recall@100", "mrr@10", "map"])
assert_type(ev, Evaluation)
assert_type(ev["ndcg@10"], float)
assert_type(ev.query("q2"), dict[str, float])
assert_type(ev.evaluate(["bpref", "P(rel=2)@5"]), Evaluation)
ranklens.evaluate("qrels.txt", "run.txt", profile="faq")
groups = {"alice": {"q1": {"d1": 1}}, "bob": {"q1": {"d2": 1}}}
ranklens.evaluate_judgment_groups(groups, {"q1": ["d1", "d3"]}, ["map_avgjg", "ndcg@3"])
ranklens.evaluate_file("qrels.txt", "run.txt", ["ndcg@10", "map"], memory="2G")

# files and the model
assert_type(ranklens.read_qrels("qrels.txt"), Qrels)
assert_type(ranklens.read_run("run.txt"), Run)
assert_type(ranklens.parse_metric("ndcg@10"), Metric)

# compare, the gate, the planner
report = ranklens.compare("qrels.txt", {"bm25": "bm25.run", "dense": "dense.run"}, ["P@1"])
assert_type(report, Report)
assert_type(report.to_markdown(), str)
assert_type(ranklens.load_report("report.json"), Report)
ranklens.gate("qrels.txt", "run.txt", "baseline.json", ["mrr@10"], margin=0.01)
ranklens.plan_queries("P@1 >= 0.9", expected=1.0)

# span labels and runs of chunks
texts = {"d1": "The Merrow light was first lit in 1821. Its lamp burns white."}
labels = ranklens.SpanLabels.from_spans({"q1": [("d1", "first lit in 1821")]}, texts)
assert_type(labels, SpanLabels)
chunks = ranklens.Run.from_chunks({"q1": [{"doc_id": "d1", "start": 0, "end": 39}]})
assert_type(chunks, Run)
ranklens.evaluate(labels, chunks, ["mrr", "evidence_recall@1"])


# running a retriever, recording a live app
def retriever(text: str, k: int) -> list[Hit]:
    return [Hit("d1", 1.0)]


result = ranklens.run_retriever(retriever, {"q1": "the red light"}, k=10, cache="runs/bm25.jsonl")
assert_type(result, RunResult)
assert_type(result.run, Run)
recorder = Recorder(key="parent", spill=False)
recorder.summary_line()
with instrument(Recorder(key="parent")) as rec:
    assert_type(rec, Recorder)
assert_type(instrument_langchain(Recorder()), Instrumentation)
assert_type(rec.to_run(), Run)
RanklensRecorder()

# fusion, holes, pooling
assert_type(ranklens.fuse({"bm25": run, "dense": run}, "rrf"), Run)
ranklens.holes(qrels, run, ["ndcg@10"], depth=10)
ranklens.pool(qrels, {"bm25": run}, depth=10)

# what the types refuse (each line must stay an error)
ranklens.evaluate(qrels, run, ["ndcg@10"], profile=3)  # type: ignore[arg-type]
ranklens.read_qrels(42)  # type: ignore[arg-type]
ranklens.fuse({"a": run}, "rrf", weights="equal")  # type: ignore[arg-type]
Recorder(max_records="many")  # type: ignore[arg-type]
unknown: Any = ranklens.no_such_name  # type: ignore[attr-defined]
