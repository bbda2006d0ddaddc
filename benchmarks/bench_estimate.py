"""What ``ranklens.estimate`` costs beyond the evaluations it needs (one process, ratio).

    uv run python benchmarks/bench_estimate.py               # 2,000 queries x 3 runs x 2 metrics
    uv run python benchmarks/bench_estimate.py --queries 500 --rounds 3   # quick

An estimate over judged labels (``judged=``: no judge is called) and a human sample of
200 queries needs, per run, one evaluation on the judge's labels over every query and one
on the human labels over the sample: six ``evaluate`` calls for three runs. Both are
timed in the same process, in alternating rounds; printed: the median seconds of each
(wall and CPU time) and the ratio estimate / evaluations (the target: at most 2).

Before timing, the estimate's per-query values are checked against the evaluations'.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

import ranklens
from ranklens import Dataset, Qrels, evaluate


def data(n_queries: int, n_runs: int, depth: int = 100, seed: int = 0):
    """A dataset of ``n_queries`` queries with graded labels (~20 judged a query), runs of
    ``depth`` hits each, and a judge's labels of every run's top 10 (the truth with noise)."""
    rng = np.random.default_rng(seed)
    corpus_size = 20_000
    queries = {f"q{i}": f"question {i}" for i in range(n_queries)}
    truth: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {f"run{r}": {} for r in range(n_runs)}
    for q in queries:
        rel = rng.choice(corpus_size, 20, replace=False)
        truth[q] = {f"d{d}": int(g) for d, g in zip(rel, rng.choice(4, 20, p=[0.4, 0.3, 0.2, 0.1]))}
        for r, name in enumerate(runs):
            hits = np.concatenate(
                [
                    rng.choice(rel, 5 + 2 * r, replace=False),
                    rng.choice(corpus_size, depth, replace=False),
                ]
            )
            ids = list(dict.fromkeys(f"d{d}" for d in rng.permutation(hits)))[:depth]
            runs[name][q] = {d: float(depth - i) for i, d in enumerate(ids)}
    judged: dict[str, dict[str, int]] = {}
    for q in queries:
        top = {d for run in runs.values() for d in list(run[q])[:10]}
        judged[q] = {d: int(np.clip(truth[q].get(d, 0) + rng.integers(-1, 2), 0, 3)) for d in top}
    ds = Dataset(queries=queries, qrels=Qrels.from_dict(truth), name="synthetic")
    return ds, runs, Qrels.from_dict(judged)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--human", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    metrics = ["ndcg@10", "P@10"]
    ds, runs, judged = data(args.queries, args.runs)
    stats = ranklens.Statistics(seed=0)

    def run_estimate():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ranklens.estimate(ds, runs, judged=judged, human=args.human,
                                     metrics=metrics, stats=stats)  # fmt: skip

    res = run_estimate()
    human_q = ds.qrels.subset(res.labelled)

    def run_evaluations():
        return [(evaluate(judged, run, metrics), evaluate(human_q, run, metrics))
                for run in runs.values()]  # fmt: skip

    evs = run_evaluations()
    naive = {r.target: r.estimates["naive"].value for r in res.rows
             if r.kind == "run" and r.metric == "ndcg@10"}  # fmt: skip
    for name, (on_judge, _) in zip(runs, evs):
        want = on_judge.per_query["ndcg@10"].sum() / len(ds.queries)
        assert abs(naive[name] - want) < 1e-12, (name, naive[name], want)

    times: dict[str, list[tuple[float, float]]] = {"estimate": [], "evaluations": []}
    for _ in range(args.rounds):
        for name, fn in (("estimate", run_estimate), ("evaluations", run_evaluations)):
            w, c = time.perf_counter(), time.process_time()
            fn()
            times[name].append((time.perf_counter() - w, time.process_time() - c))
    med = {k: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v))
           for k, v in times.items()}  # fmt: skip
    n_ev = 2 * args.runs
    print(f"estimate: {args.queries} queries x {args.runs} runs x {len(metrics)} metrics, "
          f"human sample {args.human}; median of {args.rounds} rounds")  # fmt: skip
    est = med["estimate"]
    print(f"  estimate                 {est[0]:7.3f} s wall {est[1]:7.3f} s cpu")
    print(f"  its {n_ev} evaluate calls   {med['evaluations'][0]:7.3f} s wall "
          f"{med['evaluations'][1]:7.3f} s cpu")  # fmt: skip
    print(f"  ratio                    {med['estimate'][0] / med['evaluations'][0]:7.2f}x wall "
          f"{med['estimate'][1] / med['evaluations'][1]:7.2f}x cpu")  # fmt: skip


if __name__ == "__main__":
    main()
