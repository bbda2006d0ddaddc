"""Document versions on the streamed path: ``evaluate_file`` (and ``evaluate`` streaming a
large file, and ``ranklens evaluate --versions --memory``) with ``versions=``, ``as_of=``
and each freshness rule, within a budget that forces many chunks, equals the in-memory
evaluation to the last bit: every query's values, the aggregates, and the counts the notes
show (labels carried to versions, outdated, undated and future versions retrieved, queries
with versioned evidence), summed over the chunks, the labels' shards and the labelled
queries the run never retrieved. What ``evaluate`` refuses, the stream refuses alike."""

from __future__ import annotations

import json

import pytest
from _stream_case import (
    METRICS,
    as_of_times,
    run_rows,
    same,
    versions_records,
    write_case,
    write_jsonl,
    write_parquet,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from judging.test_freshness import corpora  # the brute-force-checked generator

import ranklens
from ranklens import InputError
from ranklens.app.cli import main
from ranklens.evaluation import stream as stream_mod
from ranklens.evaluation.stream import evaluate_file

FRESH = ["outdated@1", "outdated@5", "current@5", "undated@10", "current_first@10"]
RULES = ["zero", "keep", "demote", "half", "demote=2", "factor=0.3", "half_life=60d"]
"""Every form of rule tests/judging/test_freshness.py checks against its brute force."""


def query_ids(qrels):
    return sorted({line.split()[0] for line in qrels.read_text().splitlines()})


def equal(ours, ref):
    """Bit-identical values and notes (``same``), every count, and the options shown."""
    same(ours, ref)
    assert ours.counts == ref.counts
    assert ours.counts["labels_carried"] > 0 and ours.counts["versioned_queries"] > 0
    assert ours.to_dict()["options"] == ref.to_dict()["options"]


def case(tmp_path, rule="zero", as_of="each", seed=0, shuffle=False, n_queries=1500):
    qrels, run = write_case(tmp_path, n_queries=n_queries, shuffle=shuffle, seed=seed)
    versions = ranklens.Versions.from_records(
        versions_records(seed, timed_chains=rule.startswith("half_life"))
    )
    kw = {"versions": versions, "as_of": as_of_times(as_of, query_ids(qrels), seed),
          "freshness": rule}  # fmt: skip
    return qrels, run, kw


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("as_of", ["none", "one", "each"])
def test_every_rule_and_as_of_streamed_equals_in_memory(tmp_path, rule, as_of):
    qrels, run, kw = case(tmp_path, rule, as_of, seed=len(rule) + len(as_of))
    ours = evaluate_file(qrels, run, METRICS + FRESH, memory=300_000, **kw)
    assert ours.chunks > 3  # really in pieces
    equal(ours, ranklens.evaluate(qrels, run, METRICS + FRESH, memory=float("inf"), **kw))


@pytest.mark.parametrize("missing", ["zero", "skip"])
@pytest.mark.parametrize("fmt", ["trec-shuffled", "jsonl", "parquet", "parquet-shuffled"])
def test_each_run_format_and_missing_queries(tmp_path, fmt, missing):
    """The stream's readers (a scattered run partitioned first), and labelled queries
    absent from the run scored 0 (judged at the end, with versions) or skipped (their
    carried labels counted all the same, as ``evaluate`` counts them)."""
    pytest.importorskip("pyarrow")
    qrels, run, kw = case(tmp_path, "demote", "each", shuffle=fmt.endswith("shuffled"))
    rows = run_rows(run)
    kind = fmt.split("-")[0]
    path = (run if kind == "trec" else write_jsonl(rows, tmp_path / "run.jsonl")
            if kind == "jsonl" else write_parquet(rows, tmp_path / "run.parquet"))  # fmt: skip
    ours = evaluate_file(qrels, path, METRICS + FRESH, memory=300_000, missing=missing, **kw)
    assert ours.chunks > 3
    ref = ranklens.evaluate(qrels, run, METRICS + FRESH, memory=float("inf"), missing=missing,
                            **kw)  # fmt: skip
    equal(ours, ref)
    assert ours.counts["queries_missing"] > 0


def test_labels_in_shards_and_evaluate_streaming_a_large_file(tmp_path, monkeypatch):
    """Labels read in shards by query: each shard carries its own labels, the counts are
    summed over shards; an as-of time for a query no shard labels is the error
    ``evaluate`` gives. ``ranklens.evaluate`` streams a file past its budget itself."""
    qrels, run, kw = case(tmp_path, "half", "each", n_queries=1200)
    ref = ranklens.evaluate(qrels, run, METRICS + FRESH, memory=float("inf"), **kw)
    equal(ranklens.evaluate(qrels, run, METRICS + FRESH, memory=300_000, **kw), ref)
    monkeypatch.setattr(stream_mod, "label_shard_count", lambda *a: 5)
    equal(evaluate_file(qrels, run, METRICS + FRESH, memory=10_000_000, **kw), ref)
    stray = {**kw, "as_of": {**kw["as_of"], "nope": "2024-01-01", "q00003": "2024-01-01"}}
    with pytest.raises(InputError) as memory_error:
        ranklens.evaluate(qrels, run, ["P@1"], memory=float("inf"), **stray)
    for budget in (10_000_000, 300_000):  # in label shards, then whole
        with pytest.raises(InputError) as streamed_error:
            evaluate_file(qrels, run, ["P@1"], memory=budget, **stray)
        assert str(streamed_error.value) == str(memory_error.value)
        assert "as_of names 2 queries the labels do not have" in str(memory_error.value)
        monkeypatch.setattr(stream_mod, "label_shard_count", lambda *a: 1)


def test_the_stream_refuses_what_evaluate_refuses(tmp_path):
    qrels, run, kw = case(tmp_path, n_queries=300)
    grouped = {"q00000": [["D1", "D2"]]}
    for bad, extra in (
        (grouped, kw),  # versions with grouped ground truth
        (qrels, {"as_of": "2024-01-01"}),  # as_of without versions
        (qrels, {"freshness": "demote"}),
        (qrels, {**kw, "versions": {"D1": "2024-01-01"}}),
        (qrels, {**kw, "as_of": T_EARLY}),  # before every document
    ):
        with pytest.raises(InputError) as memory_error:
            ranklens.evaluate(bad, run, ["P@1"], memory=float("inf"), **extra)
        with pytest.raises(InputError) as streamed_error:
            evaluate_file(bad, run, ["P@1"], memory=100_000, **extra)
        assert str(streamed_error.value) == str(memory_error.value)
    spans = ranklens.SpanLabels.from_spans({"q00000": [("D1", 0, 5)]})
    with pytest.raises(InputError, match=r"plain .graded. labels"):
        evaluate_file(spans, run, ["P@1"], memory=100_000, **kw)


T_EARLY = "2020-01-01"


def test_the_command_line_streams_versions(tmp_path, capsys):
    """``ranklens evaluate --versions FILE --as-of --freshness --memory``: the streamed
    evaluation prints what the in-memory one prints."""
    qrels, run, _ = case(tmp_path, n_queries=1200)
    versions = tmp_path / "versions.jsonl"
    versions.write_text("".join(json.dumps(r) + "\n" for r in versions_records(0)))
    args = ["evaluate", str(qrels), str(run), "-m", "ndcg@10", "-m", "outdated@5", "-m",
            "current_first@10", "--versions", str(versions), "--as-of", "2024-06-01",
            "--freshness", "half_life=30d"]  # fmt: skip
    outputs = {}
    for memory in ([], ["--memory", "300K"]):  # a small file: in memory without --memory
        for fmt in ("json", "table"):
            assert main([*args, *memory, "--format", fmt, "--no-progress"]) == 0
            outputs[bool(memory), fmt] = capsys.readouterr().out
    assert outputs[False, "json"] == outputs[True, "json"]
    assert outputs[False, "table"] == outputs[True, "table"]
    assert "labels carried to versions" in outputs[True, "table"]
    assert json.loads(outputs[True, "json"])["counts"]["labels_carried"] > 0


@st.composite
def tiled(draw):
    """A corpus of tests/judging/test_freshness.py's kind, its queries repeated (each copy
    with its own id and as-of time) until the run file takes several chunks."""
    records, qrels, run, as_of = draw(corpora())
    copies = 8000 // sum(len(v) for v in run.values()) + 1
    big_qrels, big_run, big_as_of = {}, {}, {} if isinstance(as_of, dict) else as_of
    for i in range(copies):
        for q in qrels:
            big_qrels[f"{q}_{i}"] = qrels[q]
            if q in run and (i + len(q)) % 9:  # some labelled queries absent from the run
                big_run[f"{q}_{i}"] = run[q]
            if isinstance(as_of, dict) and q in as_of:
                big_as_of[f"{q}_{i}"] = as_of[q]
    return records, big_qrels, big_run, big_as_of


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(tiled(), st.sampled_from(RULES), st.sampled_from(["undated", "current"]))
def test_generated_corpora_streamed_equal_in_memory(tmp_path, case, rule, unlisted):
    records, qrels, run, as_of = case
    try:
        versions = ranklens.Versions.from_records(records, unlisted=unlisted)
    except InputError:  # no time and no link anywhere: refused (test_freshness checks it)
        return
    path = tmp_path / f"run-{rule}.txt"
    path.write_text("".join(f"{q} Q0 {d} {r} {-r} r\n" for q, docs in sorted(run.items())
                            for r, d in enumerate(docs, 1)))  # fmt: skip
    metrics = ["ndcg@3", "P@3", "rr", "outdated@3", "undated@3", "current@3", "current_first@3"]
    kw = {"versions": versions, "as_of": as_of, "freshness": rule}
    try:
        ref = ranklens.evaluate(qrels, path, metrics, memory=float("inf"), **kw)
    except InputError as exc:  # an as-of before every document, a half-life unknown
        with pytest.raises(InputError) as streamed_error:
            evaluate_file(qrels, path, metrics, memory=20_000, **kw)
        assert type(streamed_error.value) is type(exc)
        if "before every document" in str(exc):  # read once, for every labelled query
            assert str(streamed_error.value) == str(exc)
        return
    ours = evaluate_file(qrels, path, metrics, memory=20_000, **kw)
    assert ours.chunks > 2
    same(ours, ref)
    assert ours.counts == ref.counts
