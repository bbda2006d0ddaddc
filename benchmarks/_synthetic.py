"""Seeded synthetic qrels and runs for the benchmarks (written once, cached in _data/)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "_data"


def generate(n_queries: int, depth: int, seed: int = 0) -> tuple[dict, dict]:
    """Qrels and run as Python dicts: graded labels 0-3, about 5% of run rows in score ties.

    Each query judges ~20 documents (a third of them also retrieved); the run retrieves
    ``depth`` documents per query from a corpus of 50 x depth ids; scores are multiples of
    1/1024 (exact in float32, so float32 and float64 tools rank alike).
    """
    rng = np.random.default_rng(seed)
    corpus = max(50 * depth, 10_000)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = rng.choice(corpus, depth, replace=False)
        n_j = 20
        judged = np.concatenate(
            [
                rng.choice(docs, n_j // 3, replace=False),
                rng.choice(corpus, n_j - n_j // 3, replace=False),
            ]
        )
        labels = rng.choice(4, len(judged), p=[0.5, 0.25, 0.15, 0.1])
        qrels[qid] = {f"D{d}": int(g) for d, g in zip(judged.tolist(), labels.tolist())}
        scores = np.sort(rng.integers(0, 1 << 20, depth))[::-1] / 1024.0
        tie = rng.random(depth) < 0.05
        tie[0] = False
        scores[tie] = scores[np.flatnonzero(tie) - 1]  # copy the score above: an exact tie
        run[qid] = {f"D{d}": float(s) for d, s in zip(docs.tolist(), scores.tolist())}
    return qrels, run


def paths(n_queries: int, depth: int) -> tuple[Path, Path]:
    """TREC qrels and run files for a size, written on first use."""
    DATA.mkdir(parents=True, exist_ok=True)
    qp = DATA / f"qrels_{n_queries}x{depth}.txt"
    rp = DATA / f"run_{n_queries}x{depth}.txt"
    if not (qp.exists() and rp.exists()):
        qrels, run = generate(n_queries, depth)
        with open(qp, "w") as fh:
            for q, labels in qrels.items():
                fh.writelines(f"{q} 0 {d} {g}\n" for d, g in labels.items())
        with open(rp, "w") as fh:
            for q, docs in run.items():
                fh.writelines(
                    f"{q} Q0 {d} {i} {s} synthetic\n" for i, (d, s) in enumerate(docs.items(), 1)
                )
    return qp, rp
