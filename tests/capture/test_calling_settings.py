"""The runner's calling settings (``calls=Calling(...)``), the deprecated flat keywords, and
a Recorder that never raises into the app's request path."""

from __future__ import annotations

import asyncio
import math
import warnings

import pytest

import ranklens
from ranklens.capture import Calling, Recorder
from ranklens.declared import ParameterError
from ranklens.settings import TRANSIENT

QUERIES = {"q1": "alpha", "q2": "beta"}


def retriever(query: str) -> list[str]:
    return ["a", "b"] if query == "alpha" else ["c"]


def test_calls_object_is_taken_and_nothing_warns(tmp_path):
    log = tmp_path / "run.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = ranklens.run_retriever(
            retriever, QUERIES, calls=Calling(concurrency=2, progress=False, cache=log)
        )
    assert res.run.to_dict()["q1"] and log.exists()
    again = ranklens.run_retriever(retriever, QUERIES, calls=Calling(progress=False, cache=log))
    assert again.info["resumed"] == 2


def test_runner_transient_is_the_settings_one():
    from ranklens.capture.runner import CALLS
    from ranklens.capture.runner import TRANSIENT as RUNNER_TRANSIENT

    assert RUNNER_TRANSIENT == TRANSIENT and CALLS.retry_on == TRANSIENT


def test_flat_keywords_warn_once_with_the_new_spelling():
    with pytest.warns(DeprecationWarning) as caught:
        res = ranklens.run_retriever(retriever, QUERIES, concurrency=2, progress=False)
    deprecations = [w for w in caught if w.category is DeprecationWarning]
    assert len(deprecations) == 1
    message = str(deprecations[0].message)
    assert "calls=ranklens.Calling(concurrency=2, progress=False)" in message
    assert deprecations[0].filename == __file__
    assert len(res.records) == 2


def test_flat_keywords_and_calls_together_are_a_named_error():
    with pytest.raises(ParameterError, match="both calls= and timeout= were given"):
        ranklens.run_retriever(retriever, QUERIES, calls=Calling(progress=False), timeout=1.0)


def test_flat_keywords_are_still_validated():
    with pytest.raises(ParameterError, match="concurrency"):
        ranklens.run_retriever(retriever, QUERIES, concurrency=0)
    with pytest.raises(ParameterError, match=r"calls must be a ranklens\.Calling"):
        ranklens.run_retriever(retriever, QUERIES, calls={"concurrency": 2})


def test_retry_on_is_checked_in_the_object():
    with pytest.raises(ParameterError, match="retry_on must be an exception type"):
        ranklens.run_retriever(retriever, QUERIES, calls=Calling(retry_on=(), progress=False))


def test_retries_follow_the_calls_object():
    seen: list[str] = []

    def flaky(query: str) -> list[str]:
        seen.append(query)
        raise ConnectionError("down")

    res = ranklens.run_retriever(
        flaky, {"q": "x"}, calls=Calling(retries=3, backoff=0, progress=False)
    )
    assert len(seen) == 4 and res.records[0].attempts == 4


def test_arun_takes_calls_and_warns_on_flat_keywords():
    res = asyncio.run(ranklens.arun_retriever(retriever, QUERIES, calls=Calling(progress=False)))
    assert len(res.records) == 2
    with pytest.warns(DeprecationWarning, match=r"arun_retriever\(progress=\.\.\.\)"):
        asyncio.run(ranklens.arun_retriever(retriever, QUERIES, progress=False))


def test_recorder_records_a_latency_that_is_not_a_number_as_an_error():
    rec = Recorder()
    rec.record("q text", ["a"], query_id="q1", latency_ms="5")  # type: ignore[arg-type]
    (r,) = rec.records()
    assert r.error is not None and r.error["type"] == "TypeError" and r.doc_ids == []
    assert math.isnan(r.latency_ms) and rec.errors == 1


def test_recorder_records_a_refused_hit_as_an_error():
    rec = Recorder()
    rec.record("q text", [object()], query_id="q1", latency_ms=3.0)
    rec.record("q text", ["a"], query_id="q2", latency_ms=3.0)
    first, second = rec.records()
    assert first.error is not None and first.latency_ms == 3.0 and first.doc_ids == []
    assert second.ok and second.doc_ids == ["a"] and rec.errors == 1
