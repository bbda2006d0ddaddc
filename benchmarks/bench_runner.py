"""Runner overhead and concurrency, in one run.

    uv run python benchmarks/bench_runner.py

(1) Overhead per query: a real BM25 retriever (bm25s over 1,000 synthetic passages, 10 hits)
    called directly in a loop, against ``ranklens.run_retriever`` at concurrency 1 on the same 1,000
    queries (thread hand-off, hit mapping, the record, and with ``cache=`` the JSONL log).
    Target: at most 1 ms per query.
(2) Concurrency: an async retriever with 50 ms of latency over 1,000 queries at concurrency
    32; the ideal is 1000 / 32 x 50 ms = 1.5625 s. Target: within 1.3x of the ideal.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import ranklens


def corpus(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(3000)]
    return [" ".join(rng.choice(vocab, 40)) for _ in range(n)]


def main() -> None:
    import bm25s

    docs = corpus(1000)
    ids = [f"d{i}" for i in range(len(docs))]
    index = bm25s.BM25()
    index.index(bm25s.tokenize(docs, show_progress=False), show_progress=False)
    queries = {f"q{i}": " ".join(t.split()[:4]) for i, t in enumerate(corpus(1000, seed=1))}

    def bm25(query: str) -> list[tuple[str, float]]:
        idx, sc = index.retrieve(
            bm25s.tokenize([query], show_progress=False), k=10, show_progress=False, n_threads=1
        )
        return [(ids[i], float(s)) for i, s in zip(idx[0].tolist(), sc[0].tolist())]

    def direct() -> None:
        for q in queries.values():
            bm25(q)

    def runner(cache: bool) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "log.jsonl" if cache else None
            ranklens.run_retriever(bm25, queries, concurrency=1, progress=False, cache=path)

    n = len(queries)
    direct()  # warm bm25s
    rows = {"direct": [], "runner": [], "runner+log": []}
    for _ in range(5):  # interleaved, so machine noise hits all three alike
        for label, fn in (
            ("direct", direct),
            ("runner", lambda: runner(False)),
            ("runner+log", lambda: runner(True)),
        ):
            t = time.perf_counter()
            fn()
            rows[label].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"BM25 over 1,000 passages, {n} queries, concurrency 1 (medians of 5)")
    print(f"  direct calls:          {med['direct'] / n * 1000:6.3f} ms/query")
    for label in ("runner", "runner+log"):
        over = (med[label] - med["direct"]) / n * 1000
        print(f"  {label:<21}  {med[label] / n * 1000:6.3f} ms/query, overhead {over:6.3f} ms")
    print("  target: overhead <= 1 ms per query")

    async def slow(query: str) -> list[tuple[str, float]]:
        await asyncio.sleep(0.05)
        return [("d1", 1.0)]

    ideal = 1000 / 32 * 0.05
    walls = []
    for _ in range(3):
        t = time.perf_counter()
        ranklens.run_retriever(
            slow, {f"q{i}": "x" for i in range(1000)}, concurrency=32, progress=False
        )
        walls.append(time.perf_counter() - t)
    wall = statistics.median(walls)
    print("async retriever, 50 ms latency, 1,000 queries, concurrency 32 (median of 3)")
    print(f"  wall {wall:.3f} s, ideal {ideal:.4f} s: {wall / ideal:.3f}x (target <= 1.3x)")


if __name__ == "__main__":
    main()
