"""Speed of ``ranklens.compare``: 5 runs x 6 metrics x 10,000 queries with a
10,000-permutation randomization test (target: under 5 s on 2 cores), against ranx's
``compare`` (Fisher's randomization test) on the same inputs, in one run.

    uv run python benchmarks/bench_compare.py             # 10,000 queries
    uv run python benchmarks/bench_compare.py --queries 2000 --no-ranx

Phases: ranklens from ready Qrels/Run objects (judging, 6 metrics, bootstrap intervals,
curves, 10 pairs x 6 metrics of tests, Holm), and from Python dicts; ranx from its
Qrels/Run objects (numba compiled beforehand, as a warm session would have it). Also checks
that both tools' means agree.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _synthetic import generate

METRICS = ["P@10", "recall@100", "mrr@10", "map", "ndcg@10", "ndcg@100"]
RANX = ["precision@10", "recall@100", "mrr@10", "map", "ndcg@10", "ndcg@100"]


def make_runs(n_queries: int, n_runs: int) -> tuple[dict, dict[str, dict]]:
    qrels, base = generate(n_queries, 100, seed=0)
    rng = np.random.default_rng(1)
    runs = {}
    for i in range(n_runs):
        # Run i lifts relevant documents by a bonus growing with i, so runs truly differ.
        bonus = 40.0 * i
        run = {}
        for q, docs in base.items():
            ids = list(docs)
            sc = np.fromiter(docs.values(), dtype=np.float64)
            rel = np.array([qrels[q].get(d, 0) > 0 for d in ids])
            sc = np.round((sc + bonus * rel * rng.random(len(sc))) * 1024) / 1024
            run[q] = dict(zip(ids, sc.tolist()))
        runs[f"run{i}"] = run
    return qrels, runs


def timed(fn, reps: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-ranx", action="store_true")
    ap.add_argument(
        "--ranx-permutations",
        type=int,
        default=1_000,
        help="ranx's permutations (default 1,000: at 10,000 ranx takes about 9 minutes here; "
        "its time grows with the permutations, so the printed ratio understates the gap)",
    )
    args = ap.parse_args()

    from ranklens import Qrels, Run, compare

    qrels_d, runs_d = make_runs(args.queries, args.runs)
    qrels, runs = Qrels.from_dict(qrels_d), {k: Run.from_dict(v) for k, v in runs_d.items()}
    kw = dict(test="randomization", n_resamples=args.permutations, correction="holm")
    print(
        f"{args.runs} runs x {len(METRICS)} metrics x {args.queries} queries, "
        f"{args.permutations} permutations, all pairs ({args.runs * (args.runs - 1) // 2})"
    )
    t_obj, rep = timed(lambda: compare(qrels, runs, METRICS, **kw), args.reps)
    print(f"ranklens compare, ready objects:  {t_obj:7.2f} s   (target < 5 s)")
    t_dict, _ = timed(lambda: compare(qrels_d, runs_d, METRICS, **kw), args.reps)
    print(f"ranklens compare, Python dicts:   {t_dict:7.2f} s")
    t_t, _ = timed(lambda: compare(qrels, runs, METRICS, test="t", ci="t"), args.reps)
    print(f"ranklens compare, t test, t CIs:  {t_t:7.2f} s")
    n_sig = sum(c.significant for c in rep.comparisons)
    print(f"  {n_sig} of {len(rep.comparisons)} comparisons significant")
    if args.no_ranx:
        return

    import ranx

    rq = ranx.Qrels(qrels_d)
    rr = [ranx.Run(v, name=k) for k, v in runs_d.items()]
    # Warm numba on a small copy first (ranx compiles on first use).
    small = list(qrels_d)[:50]
    ranx.compare(
        ranx.Qrels({q: qrels_d[q] for q in small}),
        [ranx.Run({q: v[q] for q in small}, name=k) for k, v in runs_d.items()],
        RANX,
        stat_test="fisher",
        n_permutations=100,
    )
    t_ranx, rx = timed(
        lambda: ranx.compare(
            rq, rr, RANX, stat_test="fisher", n_permutations=args.ranx_permutations, max_p=0.05
        ),
        1,
    )
    print(f"ranx compare (fisher, {args.ranx_permutations} permutations), objects: {t_ranx:7.2f} s")
    print(f"ratio ranx / ranklens (ranklens at {args.permutations}): {t_ranx / t_obj:7.1f}x")
    # Means must agree (ties: the synthetic scores are multiples of 1/1024 with few ties;
    # the check allows the rare tie-order difference).
    worst = 0.0
    for name in runs_d:
        for ours, theirs in zip(METRICS, RANX):
            worst = max(worst, abs(rep.value(name, ours) - rx.results[name][theirs]))
    print(f"largest difference of a mean, ranklens vs ranx: {worst:.2e}")


if __name__ == "__main__":
    main()
