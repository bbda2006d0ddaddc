"""A sweep's configurations in parallel on Ray against one after another, in one run.

    uv run python benchmarks/bench_sweep_ray.py                          # 8 configs, 4 workers
    uv run python benchmarks/bench_sweep_ray.py --configs 4 --queries 20 --workers 2  # quick

A simulated sweep: every configuration's retriever sleeps ``--sleep`` seconds a query (an
embedding or ANN call's latency; sleeping, so the workers do not compete for this
machine's cores) and its build sleeps ``--build`` seconds; ``query_params`` pairs share a
build. The same sweep runs with ``Execution()`` (the local backend: configurations one
after another, each asking its queries one at a time, ``concurrency=1``) and with
``Execution(backend="ray")`` on a local Ray of ``--workers`` CPUs (one configuration per
worker at a time), after a warm-up sweep that starts Ray. Printed: both wall times, the
speed-up and the speed-up per worker (the target: at least 0.8 x the workers).

Before the times are compared, the two sweeps' rows are checked equal (timings aside).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from typing import Any

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # before ray is imported

MEASURED = {"p50", "p95", "p99", "cpu_p50", "build_s", "factory_s", "pareto", "log"}


def sleeper(per_query: float, per_build: float) -> Any:
    """``build(index)`` sleeping ``per_build`` s, returning ``top_k -> retriever`` whose
    every query sleeps ``per_query`` s and returns ``top_k`` documents of the index."""

    def build(index: int) -> Any:
        import time as _time

        _time.sleep(per_build)

        def at(top_k: int) -> Any:
            def retrieve(query: str) -> list[tuple[str, float]]:
                _time.sleep(per_query)
                n = sum(map(ord, query)) + index
                return [(f"d{(n + i) % 50}", 1.0 - i / 100) for i in range(top_k)]

            return retrieve

        return at

    return build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", type=int, default=8, help="configurations (an even number)")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--sleep", type=float, default=0.05, help="seconds a query")
    ap.add_argument("--build", type=float, default=0.5, help="seconds a build")
    ap.add_argument("--workers", type=int, default=4, help="the local Ray's CPUs")
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # top_k=5 under k=10, on purpose

    import ray

    import ranklens
    from ranklens.sweeps import Execution

    queries = {f"q{i}": f"question {i}" for i in range(args.queries)}
    labels = {q: {f"d{(sum(map(ord, t)) + 1) % 50}": 1} for q, t in queries.items()}
    ds = ranklens.Dataset(queries=queries, qrels=ranklens.Qrels.from_dict(labels), name="sim")
    grid = {"index": list(range(args.configs // 2)), "top_k": [5, 10]}
    build = sleeper(args.sleep, args.build)
    common: dict[str, Any] = dict(
        query_params=["top_k"],
        calls=ranklens.Calling(concurrency=1, progress=False),
        stats=ranklens.Statistics(n_resamples=200),
    )
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    on_ray = Execution(backend="ray", ray_options={"num_cpus": 1})
    # warm-up: as many configurations as workers, so that each worker has imported ranklens
    warm = {"index": list(range(args.workers)), "top_k": [5]}
    ranklens.sweep(sleeper(0.0, 0.0), warm, ds, ["P@5"], execution=on_ray, **common)

    t = time.perf_counter()
    serial = ranklens.sweep(build, grid, ds, ["P@5"], execution=Execution(), **common)
    t_serial = time.perf_counter() - t
    t = time.perf_counter()
    parallel = ranklens.sweep(build, grid, ds, ["P@5"], execution=on_ray, **common)
    t_ray = time.perf_counter() - t
    ray.shutdown()

    def plain(rows: list[Any]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.to_dict().items() if k not in MEASURED} for r in rows]

    assert plain(serial.rows) == plain(parallel.rows), "the two sweeps' rows differ"
    ideal = args.configs * args.queries * args.sleep + args.configs // 2 * args.build
    print(f"sweep of {args.configs} configurations ({args.configs // 2} builds of "
          f"{args.build} s, {args.queries} queries of {args.sleep * 1000:.0f} ms each; "
          f"{ideal:.1f} s of sleeping)")  # fmt: skip
    print(f"  one after another (local)      {t_serial:7.2f} s")
    print(f"  in parallel on Ray, {args.workers} workers  {t_ray:7.2f} s")
    speedup = t_serial / t_ray
    print(f"  speed-up {speedup:.2f}x = {speedup / args.workers:.2f} x workers "
          "(target: at least 0.8 x workers)")  # fmt: skip


if __name__ == "__main__":
    main()
