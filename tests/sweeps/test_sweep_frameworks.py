"""The done-when of sweeps: a real sweep of 12 configurations across frameworks, killed
with SIGKILL midway in a child process, then resumed in this one without building a
finished configuration or asking a finished query again; the resumed configuration's
numbers equal the same retriever run by hand.

* On SciFact (``../shared/data/scifact``, real abstracts and labels): 40 labelled test
  queries over 3,000 abstracts (every one they label and others drawn with a fixed seed),
  BM25 in LlamaIndex and LangChain over abstracts or sentence chunks, three top-k each.
  Skipped, naming the folder, when the shared data is absent.
* On the generated Merrow Isles set ranklens ships, with Haystack as a third framework:
  only where SciFact is absent (the suite's time budget keeps one of the two).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from _sweep_case import as_settings

import ranklens

pytest.importorskip("ranklens_llamaindex")
pytest.importorskip("ranklens_langchain")

TESTS = Path(__file__).resolve().parents[1]  # the shared cases
SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "scifact"
METRICS = ["ndcg@10", "recall@10", "mrr@10"]

SCIFACT_CHILD = textwrap.dedent(
    """
    import itertools, os, signal, sys
    sys.path.insert(0, {tests!r})
    import ranklens
    from ranklens_langchain import BM25sRetriever
    from _sweep_case import SCIFACT_GRID, SCIFACT_OPTIONS, build_scifact, scifact

    calls = itertools.count(1)
    ask = BM25sRetriever._get_relevant_documents

    def crashing(self, *args, **kwargs):  # the n-th LangChain query kills the process
        if next(calls) == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)
        return ask(self, *args, **kwargs)

    BM25sRetriever._get_relevant_documents = crashing
    ranklens.sweep(build_scifact, SCIFACT_GRID, scifact(), cache={cache!r}, **SCIFACT_OPTIONS)
    """
)

MERROW_CHILD = textwrap.dedent(
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
    """The query ids a runner log holds, one per answered line (its header skipped)."""
    lines = [json.loads(x) for x in log.read_text().splitlines()[1:] if x.strip()]
    return [x["query_id"] for x in lines]


def kill_child(script: str, cache: Path) -> dict[str, list[str]]:
    """Run ``script`` in a child process until it kills itself; each configuration's log
    (by its file name without the hash) and the queries it holds."""
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    logs = {p.name.rsplit("-", 1)[0]: p for p in cache.glob("*.jsonl") if p.name != "sweep.jsonl"}
    return {name: query_lines(p) for name, p in logs.items()}


def test_scifact_sweep_killed_midway_resumes_without_rerunning_finished_work(
    shared, tmp_path, monkeypatch
):
    """12 configurations on real SciFact, the child killed in the 5th; see the module."""
    shared("scifact")  # skips, naming the folder, when ../shared/data has no SciFact
    import _sweep_case
    from _sweep_case import SCIFACT_GRID, SCIFACT_OPTIONS, build_scifact, scifact
    from ranklens_langchain import BM25sRetriever

    dataset = scifact()
    n = len(dataset.queries)
    assert n == 40 and len(dataset.corpus) == 3000
    assert {str(d) for d in dataset.qrels.doc_ids} <= set(dataset.corpus)
    # killed at the 15th query of the 5th LangChain configuration (sentences, top-k 20),
    # so the child never imports LlamaIndex: 4 configurations finished, the 5th under way
    cache = tmp_path / "sweep"
    script = SCIFACT_CHILD.format(tests=str(TESTS), cache=str(cache), kill_at=4 * n + 15)
    before = kill_child(script, cache)
    partial = "framework-langchain-chunks-sentences-top_k-20"
    assert len(before) == 5 and partial in before
    assert all(len(q) == n for name, q in before.items() if name != partial)
    assert 0 < len(before[partial]) < n

    _sweep_case.BUILDS.clear()
    asked: list[tuple[int, str]] = []  # every LangChain query of the resumed sweep
    ask = BM25sRetriever._get_relevant_documents

    def counted(self: BM25sRetriever, query: str, *args: object, **kwargs: object) -> list:
        """The retriever's own answer, the question noted with its top-k."""
        asked.append((self.k, query))
        return ask(self, query, *args, **kwargs)

    monkeypatch.setattr(BM25sRetriever, "_get_relevant_documents", counted)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", ranklens.RanklensWarning)  # merged sentence chunks
        res = ranklens.sweep(
            build_scifact, SCIFACT_GRID, dataset, **as_settings(cache=cache, **SCIFACT_OPTIONS)
        )
    monkeypatch.undo()
    assert any("took over the lock left by pid" in str(w.message) for w in said)  # the kill

    # the build shared with an unfinished configuration is made again, the others not
    assert _sweep_case.BUILDS == [
        ("langchain", "sentences"), ("llamaindex", "passages"), ("llamaindex", "sentences")
    ]  # fmt: skip
    assert [r["resumed"] for r in res.rows] == [True] * 4 + [False] * 8
    name = "framework=langchain, chunks=sentences, top_k=20"
    assert res.results[name].info["resumed"] == len(before[partial])
    # the killed configuration asks only what its log lacks, the last one everything
    texts = {q: t for q, t in dataset.queries.items()}
    missing = sorted(texts[q] for q in texts if q not in set(before[partial]))
    assert sorted(q for k, q in asked if k == 20) == missing
    assert sorted(q for k, q in asked if k == 30) == sorted(texts.values())
    assert {k for k, _ in asked} == {20, 30}
    for log in cache.glob("framework-*.jsonl"):  # each query answered once, killed or not
        assert sorted(query_lines(log)) == sorted(dataset.queries), log.name

    assert len(res.rows) == 12 and all(r["status"] == "ok" and r["errors"] == 0 for r in res.rows)
    sentences = len(_sweep_case.pieces(dataset, "sentences"))
    assert {r["index_size"] for r in res.rows} == {3000, sentences}
    assert all(r["build_s"] is not None and r["p95"] > 0 for r in res.rows)
    sel = res.selection["ndcg@10"]
    assert sel["chosen"] in sel["tied"] and sel["runner_up"] in res.results
    assert res.chosen["framework"] in SCIFACT_GRID["framework"]

    # the resumed configuration is the same retriever run by hand, query by query
    retriever = _sweep_case.INDEXES["langchain", "sentences"](20)
    with pytest.warns(ranklens.RanklensWarning, match="merged chunks"):  # 20 chunks, < 10 docs
        by_hand = ranklens.run_retriever(retriever, dataset, k=10, key="parent", progress=False)
    resumed = {r.query_id: r.doc_ids for r in res.results[name].records}
    assert resumed == {r.query_id: r.doc_ids for r in by_hand.records}
    ev = by_hand.evaluate(dataset, METRICS)
    for m in METRICS:
        assert res.row(name)["metrics"][m]["value"] == pytest.approx(ev[m], abs=1e-12)


def test_merrow_sweep_killed_midway_resumes_without_rerunning_finished_work(tmp_path):
    """The fallback where ../shared/data has no SciFact: three frameworks on the shipped
    Merrow Isles set."""
    if SCIFACT.exists():
        pytest.skip(f"{SCIFACT} is present: the SciFact sweep test covers kill and resume")
    pytest.importorskip("ranklens_haystack")
    import _sweep_case
    from _sweep_case import GRID, OPTIONS, build

    from ranklens.app.demo_data import load

    cache = tmp_path / "sweep"
    before = kill_child(MERROW_CHILD.format(tests=str(TESTS), cache=str(cache)), cache)
    partial = "framework-haystack-chunks-passages-top_k-10"
    assert len(before) == 9  # 8 configurations finished, the 9th (Haystack) under way
    assert all(len(q) == 40 for n, q in before.items() if "haystack" not in n)
    assert 0 < len(before[partial]) < 40

    _sweep_case.BUILDS.clear()
    dataset = load()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", ranklens.RanklensWarning)  # merged sentence chunks
        res = ranklens.sweep(build, GRID, dataset, **as_settings(cache=cache, **OPTIONS))
    assert any("took over the lock left by pid" in str(w.message) for w in said)  # the kill
    assert _sweep_case.BUILDS == [("haystack", "passages"), ("haystack", "sentences")]
    assert [r["resumed"] for r in res.rows] == [True] * 8 + [False] * 4
    resumed = res.results["framework=haystack, chunks=passages, top_k=10"].info["resumed"]
    assert resumed == len(before[partial])
    for log in cache.glob("framework-*.jsonl"):  # each query asked once, killed or not
        assert sorted(query_lines(log)) == sorted(dataset.queries), log.name

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
    ev = by_hand.evaluate(dataset, METRICS)
    for m in METRICS:
        assert res.row(name)["metrics"][m]["value"] == pytest.approx(ev[m], abs=1e-12)
