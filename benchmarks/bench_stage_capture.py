"""What capturing a pipeline's stages costs, against a BM25 query over 1,000 passages.

    uv run python benchmarks/bench_stage_capture.py            # 1,000 passages, 500 queries
    uv run python benchmarks/bench_stage_capture.py --quick    # small sizes: a check it runs

Three stages: bm25s top 20 -> a reranker (the 20 hits reversed) -> a cut to 5; the stage
work is the same in every variant, so the differences are what ranklens adds.

(1) The request path: ``Recorder.record(query, hits)`` with the 5 final hits, against
    ``Recorder.record(query, stages=[...])`` with the three stages' 20 + 20 + 5 hits (the
    final hits are the last stage's), per call, hits as ``ranklens.Hit`` objects made
    beforehand (what a hook hands over). Also ``record`` with ``stages=None`` given
    explicitly, which must cost what the call without it costs.
(2) The runner: ``run_retriever`` at concurrency 1 over the queries, a
    ``ranklens.Pipeline`` of the three stage callables against one function doing the same
    three steps (per query: the stage calls timed, each stage's hits mapped and recorded).

Rounds rotate the order of the variants; each line is the median over rounds of the
per-call time, and the added time is the median of the paired differences with the
baseline of its group (so the machine's slow drifts cancel). Each added time is also given
as a share of one direct bm25s query's time. Target: stage capture under 5% of a BM25
query on the request path (1). Timings belong here, never in the tests.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import ranklens
from ranklens import Calling, Hit, Pipeline, Recorder
from ranklens.capture import Stage


def texts(n: int, words: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(3000)]
    return [" ".join(rng.choice(vocab, words)) for _ in range(n)]


def rounds(variants: dict[str, Callable[[], int]], n_rounds: int) -> dict[str, list[float]]:
    """Per variant, its µs per call in each round (the variants' order rotating)."""
    names = list(variants)
    for fn in variants.values():  # warm
        fn()
    out: dict[str, list[float]] = {k: [] for k in names}
    for r in range(n_rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            t = time.perf_counter()
            calls = variants[name]()
            out[name].append((time.perf_counter() - t) / calls * 1e6)
    return out


def report(title: str, times: dict[str, list[float]], base: str, bm25_us: float) -> None:
    print(title)
    for name, values in times.items():
        med = statistics.median(values)
        line = f"  {name:<34} {med:9.1f} us/call"
        if name != base:
            added = statistics.median(y - x for x, y in zip(times[base], values))
            line += f"   added {added:+8.1f} us = {100 * added / bm25_us:+6.2f}% of a BM25 query"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a check that it runs")
    args = ap.parse_args()
    n_docs, n_queries, n_rounds = (200, 40, 3) if args.quick else (1000, 500, 15)

    import bm25s

    docs = texts(n_docs, 60, 0)
    ids = [f"d{i}" for i in range(n_docs)]
    index = bm25s.BM25()
    index.index(bm25s.tokenize(docs, show_progress=False), show_progress=False)
    queries = {f"q{i}": t for i, t in enumerate(texts(n_queries, 5, 1))}

    def bm25(query: str) -> list[tuple[str, float]]:
        idx, sc = index.retrieve(
            bm25s.tokenize([query], show_progress=False), k=20, show_progress=False, n_threads=1
        )
        return [(ids[i], float(s)) for i, s in zip(idx[0].tolist(), sc[0].tolist())]

    def rerank(query: str, hits: list) -> list:
        return hits[::-1]

    def cut(query: str, hits: list) -> list:
        return hits[:5]

    def direct() -> int:
        for q in queries.values():
            bm25(q)
        return len(queries)

    bm25_us = statistics.median(rounds({"bm25": direct}, n_rounds)["bm25"])
    print(f"bm25s over {n_docs:,} passages, top 20: {bm25_us:.1f} us per query (median)\n")

    # (1) the request path: hits as Hit objects, made beforehand as a hook's are
    made = {}
    for qid, text in queries.items():
        first = [Hit(d, s, text=docs[int(d[1:])][:200]) for d, s in bm25(text)]
        second = first[::-1]
        made[qid] = (text, first, second, second[:5])
    stage_lists = {
        qid: [
            Stage("bm25", hits=first, latency_ms=1.0, kind="retriever"),
            Stage("rerank", hits=second, latency_ms=0.1, kind="reranker"),
            Stage("cut", hits=final, latency_ms=0.01, kind="filter"),
        ]
        for qid, (_, first, second, final) in made.items()
    }

    def recorder_variant(mode: str) -> Callable[[], int]:
        def run() -> int:
            rec = Recorder(max_records=len(made) + 1)
            record = rec.record
            if mode == "hits":
                for qid, (text, _, _, final) in made.items():
                    record(text, final, query_id=qid)
            elif mode == "none":
                for qid, (text, _, _, final) in made.items():
                    record(text, final, query_id=qid, stages=None)
            else:
                for qid, (text, _, _, _) in made.items():
                    record(text, query_id=qid, stages=stage_lists[qid])
            return len(made)

        return run

    times = rounds(
        {
            "record(hits)": recorder_variant("hits"),
            "record(hits, stages=None)": recorder_variant("none"),
            "record(stages=3 stages, 45 hits)": recorder_variant("stages"),
        },
        n_rounds * 4,
    )
    report("(1) Recorder.record, the request path", times, "record(hits)", bm25_us)

    # (2) the runner
    def one_call(query: str) -> list:
        return cut(query, rerank(query, bm25(query)))

    pipe = Pipeline([("bm25", bm25), ("rerank", rerank), ("cut", cut)])
    quiet = Calling(progress=False, concurrency=1)

    def runner(retriever: object) -> Callable[[], int]:
        def run() -> int:
            ranklens.run_retriever(retriever, queries, calls=quiet)
            return len(queries)

        return run

    times = rounds(
        {"one retriever (3 steps)": runner(one_call), "Pipeline (3 stages)": runner(pipe)},
        n_rounds,
    )
    print()
    report("(2) run_retriever at concurrency 1, per query", times, "one retriever (3 steps)",
           bm25_us)  # fmt: skip
    print("\ntarget: stage capture on the request path under 5% of a BM25 query")


if __name__ == "__main__":
    main()
