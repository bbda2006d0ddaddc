"""Speed of ``ranklens.fuse`` against ``ranx.fuse`` on the same three runs, in one run:
RRF and min-max CombSUM over Q queries x 100 documents per run (overlapping candidate
pools, BEIR-like ids), ranx warm (numba compiled beforehand) and both from their own
run objects. Checks that the fused scores agree before timing.

    uv run python benchmarks/bench_fusion.py --queries 10000
    uv run python benchmarks/bench_fusion.py --queries 100000   # the issue's size
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def make_runs(n_queries: int, depth: int, seed: int = 0) -> list[dict]:
    """Three runs whose top ``depth`` documents come from one pool of 2·depth per query."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(3):
        run = {}
        for q in range(n_queries):
            pool = rng.choice(2 * depth, size=depth, replace=False)
            scores = np.sort(rng.random(depth))[::-1]
            run[f"PLAIN-{q}"] = {f"MED-{q * 7 + int(d)}": float(s) for d, s in zip(pool, scores)}
        runs.append(run)
    return runs


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    import ranx

    import ranklens
    from ranklens import Run

    dicts = make_runs(args.queries, args.depth)
    ours = {f"r{i}": Run.from_dict(d) for i, d in enumerate(dicts)}
    theirs = [ranx.Run(d, name=f"r{i}") for i, d in enumerate(dicts)]
    ranx.fuse(theirs[:2], method="rrf", norm=None)  # compile
    ranx.fuse(theirs[:2], method="sum", norm="min-max")
    for method, norm in (("rrf", None), ("sum", "min-max")):
        a = ranklens.fuse(ours, method, norm=norm).to_dict()
        b = ranx.fuse(theirs, method=method, norm=norm).to_dict()
        q = next(iter(b))
        assert all(abs(a[q][d] - v) < 1e-9 for d, v in b[q].items()), method
        t_ours = best_of(lambda m=method, n=norm: ranklens.fuse(ours, m, norm=n))
        t_ranx = best_of(lambda m=method, n=norm: ranx.fuse(theirs, method=m, norm=n))
        rows = 3 * args.queries * args.depth
        print(
            f"{method:>4} norm={norm}: ranklens {t_ours:.2f} s, ranx {t_ranx:.2f} s "
            f"(warm) for {rows:,} rows: ranx/ranklens = {t_ranx / t_ours:.2f}x"
        )


if __name__ == "__main__":
    main()
