"""Stage metrics against a single-list evaluation, and the memory of a large pipeline.

    uv run python benchmarks/bench_stages.py                 # 10k and 100k queries x 3 stages x 100
    uv run python benchmarks/bench_stages.py --quick         # 2k queries
    uv run python benchmarks/bench_stages.py --sizes 100000 --memory 2G

(1) Cost: ``ranklens.evaluate_stages`` over a three-stage pipeline (a first stage of 100 hits,
    a reranked cut to 50 with some filtered, a cut to 20), against ``ranklens.evaluate`` of
    the first stage's list alone, both on the same Run objects (the judging and metrics, not
    the parsing of dicts), metrics recall@100, nDCG@10, P@10, MAP. Target: the three stages,
    their attribution and the loss tests in under 3x the single list.
(2) Memory: each measurement in a fresh worker process (``multiprocessing`` spawn) whose
    peak resident memory (``ru_maxrss``) is reported beside its time, with the memory budget
    ``evaluate_stages`` was given (``--memory``; the pipeline is judged in shards of whole
    queries when it would hold more).

Shape: ids from a 10^6-id space drawn per query without repeats (uniform, the shape that
flatters no one), 30 judged documents per query (grades 0-2), 20 of them in the first stage's
100. Before timing, each configuration's per-stage recall@100 is checked against a plain
Python count on 200 queries.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time
from typing import Any

import numpy as np


def make(n_q: int, seed: int = 0) -> tuple[Any, dict[str, Any]]:
    import ranklens

    rng = np.random.default_rng(seed)
    k = 100
    docs = np.concatenate([rng.choice(10**6, k, replace=False) for _ in range(n_q)])
    q = np.repeat(np.arange(n_q), k)
    qid = np.char.add("q", q.astype(str))
    did = np.char.add("d", docs.astype(str))
    score = rng.random(n_q * k)
    first = ranklens.Run.from_arrays(qid, did, score, name="bm25")
    # the labels: 20 of the first 100 and 10 never retrieved
    lq, ld, lg = [], [], []
    for i in range(n_q):
        mine = docs[i * k : (i + 1) * k]
        pick = rng.choice(mine, 20, replace=False)
        other = 10**6 + rng.choice(10**6, 10, replace=False)  # never retrieved, distinct
        lq += [f"q{i}"] * 30
        ld += [f"d{x}" for x in np.concatenate([pick, other])]
        lg += rng.integers(0, 3, 30).tolist()
    qrels = ranklens.Qrels.from_arrays(lq, ld, lg)
    # second stage: rescored, some filtered, cut to 50; third: cut to 20
    order = np.lexsort((-(score + rng.normal(0, 0.3, len(score))), q))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - np.repeat(np.arange(n_q) * k, k)
    keep2 = (rank < 50) & (rng.random(len(rank)) > 0.1)
    second = ranklens.Run.from_arrays(
        qid[keep2], did[keep2], -rank[keep2].astype(float), name="rerank"
    )
    keep3 = keep2 & (rank < 20)
    third = ranklens.Run.from_arrays(qid[keep3], did[keep3], -rank[keep3].astype(float), name="cut")
    return qrels, {"bm25": first, "rerank": second, "cut": third}


def check(qrels: Any, stages: dict[str, Any], ev: Any) -> None:
    """recall@100 of each stage against a plain count on 200 queries."""
    labels = qrels.to_dict()
    for name, run in stages.items():
        lists = run.to_lists()
        per = dict(
            zip(ev.evaluations[name].query_ids, ev.evaluations[name].per_query["recall@100"])
        )
        for q in list(labels)[:200]:
            rel = [d for d, g in labels[q].items() if g >= 1]
            want = sum(d in set(lists.get(q, [])[:100]) for d in rel) / len(rel) if rel else 0.0
            if abs(per[q] - want) > 1e-12:
                raise SystemExit(f"stage {name} query {q}: {per[q]} != {want}: outputs differ")


METRICS = ["recall@100", "ndcg@10", "P@10", "map"]


def worker(task: str, n_q: int, memory: str, out: Any) -> None:
    import ranklens

    qrels, stages = make(n_q)
    t = time.perf_counter()
    if task == "single":
        ranklens.evaluate(qrels, stages["bm25"], METRICS)
    else:
        ev = ranklens.evaluate_stages(qrels, stages, METRICS, memory=memory,
                                      stats=ranklens.Statistics(n_resamples=1000))  # fmt: skip
    elapsed = time.perf_counter() - t
    if task == "stages":
        check(qrels, stages, ev)
    out.put((elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def run(task: str, n_q: int, memory: str) -> tuple[float, float]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    p = ctx.Process(target=worker, args=(task, n_q, memory, out))
    p.start()
    while True:  # a worker that dies says so, never a wait forever
        try:
            got = out.get(timeout=5)
            break
        except Exception:
            if not p.is_alive():
                raise SystemExit(f"the {task} worker died (exit code {p.exitcode})") from None
    p.join()
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--reps", type=int, default=2)
    a = ap.parse_args()
    sizes = [2000] if a.quick else [int(s) for s in a.sizes.split(",")]
    head = ("queries", "single s", "stages s", "ratio", "single MB", "stages MB")
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (8, 9, 9, 6, 10, 10))))
    for n in sizes:
        single = min(run("single", n, a.memory) for _ in range(a.reps))
        staged = min(run("stages", n, a.memory) for _ in range(a.reps))
        print(f"{n:>8} {single[0]:>9.2f} {staged[0]:>9.2f} {staged[0] / single[0]:>6.2f} "
              f"{single[1]:>10.0f} {staged[1]:>10.0f}")  # fmt: skip
    print(f"(three stages of 100, <=50, <=20 hits; memory budget {a.memory}; peak RSS per worker)")


if __name__ == "__main__":
    main()
