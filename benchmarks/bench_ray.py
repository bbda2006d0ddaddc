"""The runner on Ray against the local backend, in one run: a retriever that takes 5 ms per
query (sleeping: an ANN or embedding call's latency), one query at a time per worker
(``concurrency=1``), so throughput comes from the actors alone.

    uv run python benchmarks/bench_ray.py --queries 10000
    uv run python benchmarks/bench_ray.py --queries 2000     # quick

Prints queries per second for the local backend, 1 actor and 2 actors (this machine has
2 cores), the ratio 2 actors / 1 actor, and Ray's overhead per query over the ideal
(5 ms x queries / actors) with Ray's start-up excluded (a warm-up run comes first).

``--fault``: the 2-actor run again with one actor's process killed when it reaches the
query halfway through its shards (``cache=`` logs on): the time it costs, the queries asked
twice, and the merged records checked equal to the uninterrupted run's.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # before ray is imported


def factory():
    import time as _time

    def retrieve(query):
        _time.sleep(0.005)
        return [("d1", 1.0), ("d2", 0.5)]

    return retrieve


def crashing_factory(crash_on: str, marker: str, calls: str):
    """The 5 ms retriever, whose actor process dies the first time it is asked
    ``crash_on`` (``marker`` records that it did); every query asked is appended to
    ``calls``."""

    def build():
        import os as _os
        import time as _time

        def retrieve(query, query_id):
            with open(calls, "a") as f:
                f.write(query_id + "\n")
            if query_id == crash_on and not _os.path.exists(marker):
                open(marker, "w").close()
                _os._exit(1)
            _time.sleep(0.005)
            return [("d1", 1.0), ("d2", 0.5)]

        return retrieve

    return build


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--fault", action="store_true", help="also kill an actor mid-run")
    args = ap.parse_args()
    import ray

    import ranklens

    queries = {f"q{i}": f"question {i}" for i in range(args.queries)}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ranklens.run_retriever(None, dict(list(queries.items())[:40]), backend="ray",
                 retriever_factory=factory, actors=2, concurrency=1)  # fmt: skip
    t0 = time.perf_counter()
    ranklens.run_retriever(factory(), queries, concurrency=1, progress=False)
    local = time.perf_counter() - t0
    timings = {}
    for actors in (1, 2):
        t0 = time.perf_counter()
        result = ranklens.run_retriever(None, queries, backend="ray", retriever_factory=factory,
                              actors=actors, concurrency=1)  # fmt: skip
        timings[actors] = time.perf_counter() - t0
        assert len(result.records) == len(queries) and all(r.ok for r in result.records)
    ideal = 0.005 * len(queries)
    n = len(queries)
    print(f"{n:,} queries, 5 ms each, concurrency 1 per worker")
    rows = [("local   ", local, (local - ideal) / n)]
    rows += [(f"{a} actor{'s' if a > 1 else ' '}", t, (t - ideal / a) / (n / a))
             for a, t in timings.items()]  # fmt: skip
    for label, t, over in rows:
        print(f"{label} {n / t:7.1f} q/s  ({t:.1f} s; overhead {over * 1e3:.2f} ms/query)")
    print(f"2 actors / 1 actor: {timings[1] / timings[2]:.2f}x the throughput")
    if args.fault:
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as tmp:
            crash_on = f"q{n // 2}"
            calls, marker = Path(tmp) / "calls.txt", Path(tmp) / "crashed"
            calls.touch()
            t0 = time.perf_counter()
            hurt = ranklens.run_retriever(None, queries, backend="ray", actors=2, concurrency=1,
                                retriever_factory=crashing_factory(crash_on, str(marker),
                                                                   str(calls)),
                                cache=Path(tmp) / "logs")  # fmt: skip
            took = time.perf_counter() - t0
            asked = calls.read_text().split()
            twice = len(asked) - len(set(asked))
            same = [(r.query_id, r.doc_ids, r.scores) for r in hurt.records] == [
                (r.query_id, r.doc_ids, r.scores) for r in result.records
            ]
            verdict = "equal to" if same else "DIFFERENT from"
            print(f"2 actors, one killed at {crash_on}: {took:.1f} s ({took - timings[2]:+.1f} "
                  f"s), {hurt.info['actor_restarts']} restart, {twice} query asked twice, "
                  f"records {verdict} the uninterrupted run's")  # fmt: skip
            assert marker.exists() and same
    ray.shutdown()


if __name__ == "__main__":
    main()
