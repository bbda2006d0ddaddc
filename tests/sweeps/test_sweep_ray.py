"""``ranklens.sweep(execution=Execution(backend="ray"))`` on a real local Ray
(``ray.init(num_cpus=2)``, the same fixture as ``tests/capture/test_ray.py``):
configurations in parallel, one Ray task each, with the same rows, numbers and selection as
the serial sweep; a ``query_params`` build made once in the cluster and shared; a killed
worker's configuration resumed from its log and counted once; a failing build recorded and
a build whose result does not pickle made by each configuration, said in its rows."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

import pytest

import ranklens
from ranklens.sweeps import Execution

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
STATS = ranklens.Statistics(n_resamples=500)
CALLS = ranklens.Calling(concurrency=2, progress=False)
OPTIONS: dict[str, Any] = dict(query_params=["top_k"], stats=STATS)


def on_ray(**ray_options: Any) -> Execution:
    return Execution(backend="ray", ray_options={"num_cpus": 1, **ray_options})


def same_rows(a: list[Any], b: list[Any]) -> bool:
    """Rows equal but for timings and the log path."""
    return [{k: v for k, v in r.to_dict().items() if k not in MEASURED} for r in a] == [
        {k: v for k, v in r.to_dict().items() if k not in MEASURED} for r in b
    ]


@pytest.mark.filterwarnings("ignore:.*smaller top-k")  # top_k=3 under k=10, on purpose
def test_a_sweep_on_ray_equals_the_serial_sweep_and_shares_each_build(local_ray, tmp_path):
    """4 configurations from 2 builds, serially and in parallel on Ray (each build made
    once in the cluster and shared by its two configurations), then again from the logs."""
    from ranklens.app.demo_data import load

    ds, metrics, build = load(), ["ndcg@10", "recall@10"], overlap()
    serial = ranklens.sweep(build, GRID, ds, metrics, calls=CALLS, **OPTIONS)
    cache = tmp_path / "sweep"
    calls = replace(CALLS, cache=cache)
    parallel = ranklens.sweep(build, GRID, ds, metrics, calls=calls, execution=on_ray(),
                              **OPTIONS)  # fmt: skip
    assert all(r.info["backend"] == "ray" for r in parallel.results.values())
    assert same_rows(parallel.rows, serial.rows)  # metrics, queries, errors, index, flags
    assert parallel.selection == serial.selection  # the choice, the held-out estimate, tests
    assert parallel.effects == serial.effects
    assert [r.shared_build for r in parallel.rows] == [2, 2, 2, 2]  # once per cluster
    for r in parallel.rows:  # timed where it was built, not a placeholder
        assert r.build_s and r.build_s > 0 and r.factory_s is not None, r
        assert r.index_size == 150 and r.build_note is None
    assert len(list(cache.glob("field-*.jsonl"))) == 4  # one log per configuration
    builds = [e for e in map(json.loads, (cache / "sweep.jsonl").read_text().splitlines())
              if e["type"] == "build"]  # fmt: skip
    assert len(builds) == 2
    # read again from the logs (on either backend): the builds' facts from sweep.jsonl
    for execution in (on_ray(), Execution()):
        again = ranklens.sweep(build, GRID, ds, metrics, calls=calls, execution=execution,
                               **OPTIONS)  # fmt: skip
        assert [r.resumed for r in again.rows] == [True] * 4
        assert [r.build_s for r in again.rows] == [r.build_s for r in parallel.rows]
        assert again.selection == parallel.selection


def killing(calls_file: str, first_try: str, after: int) -> Any:
    """``build(field)`` whose retriever, on its first try in the cluster, kills its own
    worker process after answering ``after`` queries; every call is written to
    ``calls_file`` (query and process) before it is answered."""

    def build(field: str) -> Any:
        import os

        def retrieve(query: str) -> list[tuple[str, float]]:
            with open(calls_file, "a") as fh:
                fh.write(query + "\n")
            with open(calls_file) as fh:
                answered = sum(1 for _ in fh)
            if field == "dies" and answered > after and not os.path.exists(first_try):
                open(first_try, "w").close()
                os._exit(1)  # the worker is lost mid-configuration
            return [(f"d{len(query) % 7}", 1.0), ("d1", 0.5)]

        return retrieve

    return build


def test_a_killed_workers_configuration_is_resumed_and_counted_once(local_ray, tmp_path):
    """The worker running a configuration dies after 5 queries: Ray runs the task again,
    which resumes the configuration's log: no query answered before the kill is asked
    again, and the configuration has one row with every query answered once."""
    queries = {f"q{i}": f"question number {i}" for i in range(12)}
    ds = ranklens.Dataset(queries=queries, qrels=ranklens.Qrels.from_dict(
        {q: {"d1": 1} for q in queries}))  # fmt: skip
    calls_file, first_try = str(tmp_path / "calls.txt"), str(tmp_path / "killed")
    calls = ranklens.Calling(concurrency=1, progress=False, cache=tmp_path / "sweep")
    res = ranklens.sweep(killing(calls_file, first_try, 5), {"field": ["dies"]}, ds, ["P@1"],
                         calls=calls, stats=STATS, execution=on_ray())  # fmt: skip
    assert os.path.exists(first_try)  # the worker was killed once
    with open(calls_file) as fh:
        asked = fh.read().split("\n")[:-1]
    assert len(asked) == len(queries) + 1  # the query in flight when it died, asked again
    assert sorted(set(asked)) == sorted(queries.values())
    (row,) = res.rows
    assert row.status == "ok" and row.queries == len(queries) and row.errors == 0
    (result,) = res.results.values()
    assert result.info["resumed"] == 5  # read from the log the lost worker wrote
    assert sorted(r.query_id for r in result.records) == sorted(queries)


def test_a_build_that_fails_or_does_not_pickle_on_ray(local_ray):
    """A build that raises is recorded for its configurations and the sweep goes on; a
    shared build whose result does not pickle is made by each configuration, and the rows
    say why their build time is their own."""
    import threading

    from ranklens.app.demo_data import load

    def build(field: str) -> Any:
        if field == "broken":
            raise RuntimeError("no index for you")
        lock = threading.Lock()  # does not pickle

        def at(top_k: int) -> Any:
            def retrieve(query: str) -> list[str]:
                with lock:
                    return ["lh00-light", "lh00-visit"][:top_k]

            return retrieve

        return at

    grid = {"field": ["text", "broken"], "top_k": [1, 2]}
    res = ranklens.sweep(build, grid, load(), ["P@1"], query_params=["top_k"], calls=CALLS,
                         stats=STATS, execution=on_ray())  # fmt: skip
    rows = {r.name: r for r in res.rows}
    for k in (1, 2):
        broken = rows[f"field=broken, top_k={k}"]
        assert broken.status == "failed" and "no index for you" in (broken.message or "")
        row = rows[f"field=text, top_k={k}"]
        assert row.status == "ok" and row.shared_build == 1
        assert "could not be read from Ray's object store" in (row.build_note or "")


def test_a_configuration_lost_past_its_retries_is_recorded_and_the_sweep_goes_on(local_ray):
    """A configuration whose worker dies on every try (``max_retries=0``: once) is a failed
    row naming the lost task and how to resume; the other configuration runs."""
    queries = {f"q{i}": f"question {i}" for i in range(4)}
    ds = ranklens.Dataset(queries=queries, qrels=ranklens.Qrels.from_dict(
        {q: {"d1": 1} for q in queries}))  # fmt: skip

    def build(field: str) -> Any:
        def retrieve(query: str) -> list[tuple[str, float]]:
            if field == "dies":
                os._exit(1)
            return [("d1", 1.0)]

        return retrieve

    res = ranklens.sweep(build, {"field": ["dies", "lives"]}, ds, ["P@1"], calls=CALLS,
                         stats=STATS, execution=on_ray(max_retries=0))  # fmt: skip
    lost, lives = res.rows
    assert lost.status == "failed" and "failed past its retries" in (lost.message or "")
    assert lives.status == "ok" and lives.metrics["P@1"].value == 1.0
