"""``ranklens.sweep(backend="ray")`` on a real local Ray (``ray.init(num_cpus=2)``, the
same fixture as ``tests/capture/test_ray.py``): the same numbers, rows and selection as the
local backend; each configuration's build timed and its index counted by the actors that
built it (under Ray each configuration builds its own retriever, ``shared_build`` 1);
and, when no actor's report reaches the driver, rows that say so instead of a number."""

from __future__ import annotations

import os
from typing import Any

import pytest

import ranklens
from ranklens.sweeps import execute

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # before ray is imported
ray = pytest.importorskip("ray")

MEASURED = {"p50", "p95", "p99", "cpu_p50", "build_s", "factory_s", "pareto", "log"}
"""Row fields that are timings (or the log's path): equal only by chance across backends."""


def overlap() -> Any:
    """``build(field)``: word overlap over the demo passages' ``field``, returning ``top_k
    -> retriever``, an adapter that reports its index (every passage). Made inside a
    function so that Ray ships it by value (the test module is not importable there)."""

    def build(field: str) -> Any:
        from ranklens.app.demo_data import load
        from ranklens.capture import FunctionRetriever

        words = {d: set(v[field].lower().split()) for d, v in load().corpus.items()}

        class Overlap(FunctionRetriever):
            def index_info(self) -> dict[str, Any]:
                return {"documents": len(words)}

        def at(top_k: int) -> FunctionRetriever:
            def retrieve(query: str) -> list[tuple[str, float]]:
                q = set(query.lower().split())
                scored = sorted(((len(q & w), d) for d, w in words.items()), reverse=True)
                return [(d, float(s)) for s, d in scored[:top_k]]

            return Overlap(retrieve)

        return at

    return build


GRID = {"field": ["text", "title"], "top_k": [3, 10]}
OPTIONS: dict[str, Any] = dict(query_params=["top_k"], n_resamples=500, concurrency=2)


def same_rows(a: list[Any], b: list[Any]) -> bool:
    """Rows equal but for timings, the log path and `shared_build`."""
    skip = MEASURED | {"shared_build"}
    return [{k: v for k, v in r.to_dict().items() if k not in skip} for r in a] == [
        {k: v for k, v in r.to_dict().items() if k not in skip} for r in b
    ]


@pytest.mark.filterwarnings("ignore:.*smaller top-k")  # top_k=3 under k=10, on purpose
def test_a_sweep_on_ray_equals_the_local_sweep_and_times_each_build(local_ray, tmp_path):
    """4 configurations from 2 builds, locally and on Ray, then again from the logs."""
    from ranklens.app.demo_data import load

    ds, metrics, build = load(), ["ndcg@10", "recall@10"], overlap()
    local = ranklens.sweep(build, GRID, ds, metrics, **OPTIONS)
    cache = tmp_path / "sweep"
    ray_options = {"actors": 1, "shards": 2}
    on_ray = ranklens.sweep(
        build, GRID, ds, metrics, cache=cache, backend="ray", ray_options=ray_options, **OPTIONS
    )
    assert all(r.info["backend"] == "ray" for r in on_ray.results.values())
    assert same_rows(on_ray.rows, local.rows)  # metrics, queries, errors, index, flags
    assert on_ray.selection == local.selection  # the choice, the held-out estimate, tests
    assert on_ray.effects == local.effects
    assert [r["shared_build"] for r in local.rows] == [2, 2, 2, 2]
    assert [r["shared_build"] for r in on_ray.rows] == [1, 1, 1, 1]  # each built on its actor
    for r in on_ray.rows:  # timed where it was built, not a placeholder
        assert r["build_s"] > 0 and r["factory_s"] >= 0 and r["index_size"] == 150, r
        assert r["build_note"] is None
    assert len(list(cache.glob("field-*/shard-*.jsonl"))) == 8
    # read again from the logs: the builds' facts come from sweep.jsonl
    again = ranklens.sweep(
        build, GRID, ds, metrics, cache=cache, backend="ray", ray_options=ray_options, **OPTIONS
    )
    assert [r["resumed"] for r in again.rows] == [True] * 4
    assert [r["build_s"] for r in again.rows] == [r["build_s"] for r in on_ray.rows]
    assert [r["index_size"] for r in again.rows] == [150] * 4
    assert again.selection == on_ray.selection


@pytest.mark.filterwarnings("ignore:.*smaller top-k")
def test_build_facts_that_never_reach_the_driver_are_said_not_measured(monkeypatch):
    """Actors on nodes whose files the driver cannot read (here: Ray replaced by the local
    runner, and the actors' report dropped): the rows say so, with no number."""
    from ranklens.app.demo_data import load

    def without_reports(_, queries, *, backend, retriever_factory, actors, shards, **options):
        """The Ray backend stood in for: the factory run here, its report dropped."""
        assert backend == "ray"
        retriever_factory.report = None  # the actor measures, its file never arrives
        return ranklens.run_retriever(retriever_factory(), queries, **options)

    monkeypatch.setattr(execute, "run_retriever", without_reports)
    res = ranklens.sweep(
        overlap(), {"field": ["text"], "top_k": [10]}, load(), ["ndcg@10"], backend="ray",
        ray_options={"actors": 1, "shards": 2}, **OPTIONS,
    )  # fmt: skip
    (row,) = res.rows
    assert row["status"] == "ok" and row["metrics"]["ndcg@10"]["value"] > 0
    assert row["build_s"] is None and row["factory_s"] is None and row["index_size"] is None
    assert row["build_note"].startswith("build time and index size not measured")
