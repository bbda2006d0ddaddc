"""What live interleaving adds to each request, per impression (one process).

    uv run python benchmarks/bench_interleaving.py            # 20,000 impressions a case
    uv run python benchmarks/bench_interleaving.py --n 2000   # quick

Two plain function retrievers return fixed lists of ``(id, score)`` pairs (10 or 100
hits, half of B's documents in A's list; ``hits``: ranklens Hits with text and metadata, as
a framework integration hands them to ``interleave_hits``), so nearly all the time measured is the
interleaving's: asking both, reading their hits, the draft, the hits served (tagged with
the impression) and the impression kept. ``k`` hits are served (10, the default; and
100 from 100-hit lists). Printed per method and size: microseconds per impression (wall and CPU
time, each the median of the rounds: CPU time is what a loaded machine does not inflate)
and the two retrievers' own cost.

The numbers are checked before timing: the impressions of a seeded interleaving equal the
vectorised functions' rows of the same random numbers (``team_draft``/``probabilistic``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from ranklens.capture import Hit
from ranklens.monitoring import interleave
from ranklens.monitoring.interleave import probabilistic, team_draft

ROUNDS = 5


def lists(size: int, form: str = "pairs") -> tuple[list[Any], list[Any]]:
    """Two rankings of ``size`` documents, half of B's in A: ``(id, score)`` pairs, or
    hits with text and metadata (as a framework's hook hands them over)."""
    a = [(f"doc{i}", 1.0 - i / 1000) for i in range(size)]
    b = [(f"doc{i}", 1.0 - i / 1000) for i in range(size // 2, size + size // 2)]
    if form == "hits":
        return tuple(  # type: ignore[return-value]
            [Hit(d, s, f"text of {d}", {"doc_id": d}) for d, s in side] for side in (a, b)
        )
    return a, b


def check(method: str, size: int, k: int) -> None:
    """A seeded live interleaving serves what one row of the vectorised function gives."""
    a, b = lists(size)
    inter = interleave(lambda q: a, lambda q: b, method, k=k, seed=3)
    rng = np.random.default_rng(3)
    ids = list(dict.fromkeys(d for d, _ in a + b))
    pos = {d: i for i, d in enumerate(ids)}
    ra = np.array([[pos[d] for d, _ in a]])
    rb = np.array([[pos[d] for d, _ in b]])
    for i in range(50):
        served = [h.id for h in inter(f"q{i}")]
        if method == "team-draft":
            docs, _ = team_draft(ra, rb, k, rng.random((1, k)) < 0.5, len(ids))
        else:
            docs, _ = probabilistic(ra, rb, k, len(ids), rng)
        assert served == [ids[d] for d in docs[0] if d >= 0], (method, size, i)


def per_impression(method: str, size: int, k: int, n: int, form: str) -> tuple[float, float]:
    a, b = lists(size, form)

    def ret_a(query: str) -> list[Any]:
        return a

    def ret_b(query: str) -> list[Any]:
        return b

    inter = interleave(ret_a, ret_b, method, k=k, seed=0, max_impressions=n + 1)
    for i in range(200):  # warm up
        inter(f"question {i}", query_id=f"q{i}")
    wall, cpu = [], []
    for _ in range(ROUNDS):
        t, c = time.perf_counter(), time.process_time()
        for i in range(n):
            inter("question", query_id=f"q{i}")
        wall.append((time.perf_counter() - t) / n * 1e6)
        cpu.append((time.process_time() - c) / n * 1e6)
    return statistics.median(wall), statistics.median(cpu)


def retrievers_cost(size: int, n: int) -> float:
    a, b = lists(size)

    def ret_a(query: str) -> list[tuple[str, float]]:
        return a

    def ret_b(query: str) -> list[tuple[str, float]]:
        return b

    t = time.perf_counter()
    for _ in range(n):
        ret_a("question"), ret_b("question")
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20_000, help="impressions per round")
    args = ap.parse_args()
    cases = [(10, 10, "pairs"), (100, 10, "pairs"), (100, 100, "pairs"), (10, 10, "hits"),
             (100, 10, "hits")]  # fmt: skip
    print("live interleaving, us per impression (median of rounds; wall and CPU time)")
    print(f"{'method':<14} {'form':>5} {'hits':>5} {'k':>4} {'wall us':>8} {'cpu us':>8} "
          f"{'retrievers us':>14}")  # fmt: skip
    for method in ("team-draft", "probabilistic"):
        for size, k, form in cases:
            check(method, size, k)
            wall, cpu = per_impression(method, size, k, args.n, form)
            own = retrievers_cost(size, args.n)
            print(f"{method:<14} {form:>5} {size:>5} {k:>4} {wall:>8.1f} {cpu:>8.1f} "
                  f"{own:>14.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
