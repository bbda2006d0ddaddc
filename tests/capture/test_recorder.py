"""The Recorder: thread and asyncio safety, bounded memory with a spill file, matching
recorded queries to labels, the rolling summary."""

from __future__ import annotations

import asyncio
import json
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens import Dataset, Hit, Qrels, Recorder
from ranklens.errors import InputError

QRELS = {f"q{i}": {f"d{i}": 1} for i in range(200)}
DATASET = Dataset({q: f"Question number {q}?" for q in QRELS}, Qrels.from_dict(QRELS), name="t")


def hits_for(i: int) -> list[Hit]:
    return [Hit(f"x{i}", 2.0), Hit(f"d{i}", 1.0), Hit(f"d{i}", 0.5)]


def test_threads_start_and_end_concurrently():
    rec = Recorder()

    def one(i):
        rec.start(("tok", i), f"Question number q{i}?", query_id=f"q{i}")
        rec.end(("tok", i), hits_for(i))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(200)))
    assert rec.total == 200 and rec.in_flight == 0
    records = list(rec.records())
    assert all(r.doc_ids == [f"x{r.query_id[1:]}", f"d{r.query_id[1:]}"] for r in records)
    assert all(r.duplicates == 1 and r.latency_ms >= 0 for r in records)
    ev = rec.evaluate(DATASET, ["mrr"])
    assert ev["mrr"] == 0.5 and ev.recorder_counts["matched"] == 200


def test_asyncio_tasks_interleave():
    rec = Recorder()

    async def one(i):
        rec.start(i, f"question NUMBER q{i}?")  # no id: matched by normalised text
        await asyncio.sleep(0.001 * (i % 5))
        rec.end(i, hits_for(i)[1:])

    async def main():
        await asyncio.gather(*(one(i) for i in range(100)))

    asyncio.run(main())
    ev = rec.evaluate(DATASET, ["P@1"])
    assert ev["P@1"] == 1.0 and len(ev.query_ids) == 100
    with pytest.raises(InputError, match="matching by text needs a Dataset"):
        rec.evaluate(QRELS, ["P@1"], match="text")
    # bare qrels: only ids can match, and there are none: an error, not a mean over nothing
    with pytest.raises(InputError, match="100 recorded retrievals, but none"):
        rec.evaluate(QRELS, ["P@1"])
    with pytest.raises(InputError, match="100 recorded retrievals, but none"):
        rec.evaluate(QRELS, ["P@1"], missing="zero")  # a mean of zeros over nothing answered


def test_memory_is_bounded_and_spilled_records_come_back(tmp_path):
    spill = tmp_path / "spill.jsonl"
    rec = Recorder(max_records=50, spill=spill)
    for i in range(200):
        rec.record(f"Question number q{i}?", hits_for(i), query_id=f"q{i}", latency_ms=float(i))
    assert len(rec._memory) <= 50 and spill.exists()
    assert [r.query_id for r in rec.records()] == [f"q{i}" for i in range(200)]
    assert rec.to_run().to_lists()["q0"] == ["x0", "d0"]
    out = tmp_path / "all.jsonl"
    rec.to_jsonl(out)
    assert len(out.read_text().splitlines()) == 200
    assert json.loads(out.read_text().splitlines()[0])["query_id"] == "q0"


def test_errors_repeats_summary_and_stray_ends():
    rec = Recorder(window=10)
    rec.record("Question number q1?", hits_for(1), query_id="q1", latency_ms=5.0)
    rec.record("Question number q1?", hits_for(2), query_id="q1", latency_ms=7.0)  # repeat
    rec.start("t", "Question number q2?", query_id="q2")
    assert rec.abort("t", RuntimeError("boom")) and not rec.abort("other", RuntimeError())
    assert rec.end("never-started", []) is False and rec.unmatched_ends == 1
    s = rec.summary()
    assert s["retrievals"] == 3 and s["errors"] == 1 and s["latency_ms_p50"] == 6.0
    assert s["window_error_rate"] == pytest.approx(1 / 3)
    assert "3 retrievals, 1 failed in the retriever (no hits; RuntimeError 1" in rec.summary_line()
    ev = rec.evaluate(DATASET, ["mrr"])
    assert ev.recorder_counts == {
        "unmatched": 0,
        "repeats": 1,
        "failed": 1,
        "ambiguous": 0,
        "matched": 1,
    }
    assert ev.query("q1")["mrr"] == 0.5  # the first retrieval of q1 counts
    rec.clear()
    assert rec.total == 0 and list(rec.records()) == []
    assert math.isnan(rec.summary()["latency_ms_p50"])


def test_summary_window_reaches_into_spilled_records(tmp_path):
    rec = Recorder(max_records=4, window=6, spill=tmp_path / "s.jsonl")
    for i in range(10):
        err = RuntimeError("x") if i == 9 else None
        rec.record(f"q{i}", hits_for(i)[:2], latency_ms=float(i), error=err)
    s = rec.summary()
    assert len(rec._memory) <= 4 and s["retrievals"] == 10 and s["errors"] == 1
    assert s["window"] == 6 and s["window_error_rate"] == pytest.approx(1 / 6)
    assert s["latency_ms_p50"] == 6.0  # latencies 4..8 of the successful ones
    assert rec.errors == 1 and len(rec) == 10


def test_started_is_wall_clock_time():
    import time

    rec = Recorder()
    before = time.time()
    rec.start("t", "q")
    rec.end("t", hits_for(1))
    (r,) = rec.records()
    assert before - 0.5 <= r.started <= time.time() + 0.5 and r.trace_id == "t"


def test_metadata_is_kept_as_it_stood_when_retrieved():
    """``Recorder(metadata=True)`` copies each hit's metadata at capture: an app that later
    changes the dict in place (a docstore updating a time) does not rewrite the record."""
    meta = {"updated_at": "2024-01-01", "group": "refunds"}
    rec = Recorder(metadata=True)
    rec.record("refund policy?", [Hit("policy-2024", 1.0, metadata=meta)], query_id="q1")
    meta["updated_at"] = "2026-01-01"
    assert rec.doc_metadata() == {"policy-2024": {"updated_at": "2024-01-01", "group": "refunds"}}
    with pytest.raises(InputError, match=r"Recorder\(metadata=True\)"):
        Recorder().doc_metadata()


def _as_coerced(hits, meta):
    """The light tuples of hits made one by one as the runner makes them (coerce_hit)."""
    from ranklens.capture import coerce_hit

    out = []
    for i, h in enumerate(hits):
        hit = coerce_hit(h, "recorded", i + 1)
        out.append((hit.id, hit.score, hit.text, hit.parent,
                    dict(hit.metadata) if meta else None, (hit.start, hit.end)))  # fmt: skip
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.text(max_size=3), st.floats()),
    st.tuples(st.text(max_size=3).map(np.str_), st.floats().map(np.float64)),
    st.tuples(st.text(max_size=3), st.integers(-3, 3) | st.none() | st.booleans()),
    st.text(max_size=3), st.text(max_size=3).map(np.str_), st.integers(0, 9),
    st.builds(Hit, st.text(min_size=1, max_size=3), st.floats(0, 1)),
    st.fixed_dictionaries({"id": st.text(min_size=1, max_size=3), "score": st.floats(0, 1)}),
), max_size=8), st.booleans())  # fmt: skip
def test_plain_hits_are_recorded_as_the_runner_reads_them(hits, meta):
    """Whatever a retrieval returns (pairs and ids of plain or numpy types, hits, dicts,
    mixed, NaN or missing scores), the record holds what coerce_hit makes of each, or the
    retrieval records the error coerce_hit raises."""
    rec = Recorder(spill=False, metadata=meta)
    try:
        want = _as_coerced(hits, meta)
    except InputError as e:
        want = e
    rec.record("q", hits, query_id="q1")
    raw = next(iter(rec._memory))
    if isinstance(want, InputError):
        assert rec.errors == 1 and str(want) in raw[8]
    else:
        assert rec.errors == 0 and raw[5] == want
        assert [type(x[0]) for x in raw[5]] == [type(x[0]) for x in want]  # str, never str_
    rec.record("q", iter(hits), query_id="q2")  # a generator is read once, as a list is
    assert list(rec._memory)[1][5:6] == raw[5:6]
