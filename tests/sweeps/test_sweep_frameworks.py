"""The done-when of sweeps: a real sweep of 12 configurations across LlamaIndex, LangChain
and Haystack (BM25 on the shipped Merrow Isles set, offline) killed with SIGKILL midway,
then resumed without building a finished configuration or asking a finished query again;
its numbers equal the same retrievers run by hand."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import ranklens

pytest.importorskip("ranklens_llamaindex")
pytest.importorskip("ranklens_langchain")
pytest.importorskip("ranklens_haystack")

TESTS = Path(__file__).resolve().parents[1]  # the shared cases

CHILD = textwrap.dedent(
    """
    import functools, os, signal, sys
    sys.path.insert(0, {tests!r})
    import ranklens
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from ranklens.app.demo_data import load
    from _sweep_case import GRID, OPTIONS, build

    calls = [0]
    run_async = InMemoryBM25Retriever.run_async

    @functools.wraps(run_async)  # the same signature: Haystack compares it with run's
    async def crashing(self, *args, **kwargs):  # the 15th Haystack query kills the process
        calls[0] += 1
        if calls[0] == 15:
            os.kill(os.getpid(), signal.SIGKILL)
        return await run_async(self, *args, **kwargs)

    InMemoryBM25Retriever.run_async = crashing
    ranklens.sweep(build, GRID, load(), cache={cache!r}, **OPTIONS)
    """
)


def query_lines(log: Path) -> list[str]:
    lines = [json.loads(x) for x in log.read_text().splitlines()[1:] if x.strip()]
    return [x["query_id"] for x in lines]


def test_real_sweep_killed_midway_resumes_without_rerunning_finished_work(tmp_path):
    import _sweep_case
    from _sweep_case import GRID, OPTIONS, build

    from ranklens.app.demo_data import load

    cache = tmp_path / "sweep"
    child = subprocess.run(
        [sys.executable, "-c", CHILD.format(tests=str(TESTS), cache=str(cache))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    logs = sorted(cache.glob("*.jsonl"))
    logs = {p.name.rsplit("-", 1)[0]: p for p in logs if p.name != "sweep.jsonl"}
    assert len(logs) == 9  # 8 configurations finished, the 9th (Haystack) under way
    partial = logs["framework-haystack-chunks-passages-top_k-10"]
    before = {name: query_lines(p) for name, p in logs.items()}
    assert all(len(q) == 40 for n, q in before.items() if "haystack" not in n)
    assert 0 < len(before["framework-haystack-chunks-passages-top_k-10"]) < 40

    _sweep_case.BUILDS.clear()
    dataset = load()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ranklens.RanklensWarning)  # merged sentence chunks
        res = ranklens.sweep(build, GRID, dataset, cache=cache, **OPTIONS)
    assert _sweep_case.BUILDS == [("haystack", "passages"), ("haystack", "sentences")]
    assert [r["resumed"] for r in res.rows] == [True] * 8 + [False] * 4
    resumed = res.results["framework=haystack, chunks=passages, top_k=10"].info["resumed"]
    assert resumed == len(before["framework-haystack-chunks-passages-top_k-10"])
    for log in cache.glob("framework-*.jsonl"):  # each query asked once, killed or not
        asked = query_lines(log)
        assert sorted(asked) == sorted(dataset.queries), log.name
    assert partial.exists()

    assert len(res.rows) == 12 and all(r["status"] == "ok" for r in res.rows)
    assert {r["index_size"] for r in res.rows} == {150, 510}  # passages, sentence chunks
    assert all(r["build_s"] is not None and r["p95"] > 0 for r in res.rows)
    sel = res.selection["ndcg@10"]
    assert sel["chosen"] in sel["tied"] and sel["runner_up"] in res.results
    assert res.chosen["framework"] in GRID["framework"]

    # the numbers are those of the same retriever run by hand
    name = "framework=langchain, chunks=sentences, top_k=30"
    by_hand = ranklens.run_retriever(
        build("langchain", "sentences")(30), dataset, k=10, key="parent", progress=False
    )
    ev = by_hand.evaluate(dataset, ["ndcg@10", "recall@10", "mrr@10"])
    for m in ("ndcg@10", "recall@10", "mrr@10"):
        assert res.row(name)["metrics"][m]["value"] == pytest.approx(ev[m], abs=1e-12)
