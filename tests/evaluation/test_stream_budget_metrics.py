"""Budget metrics on the streamed path: a run file read in chunks within a memory budget
gives the values the in-memory evaluation gives."""

from __future__ import annotations

import numpy as np

import ranklens


def test_budget_metrics_streamed_equal_in_memory(tmp_path):
    rng = np.random.default_rng(5)
    docs = [f"d{i}" for i in range(40)]
    texts = {d: " ".join(["w"] * int(rng.integers(5, 60))) for d in docs}
    labels, lines = {}, []
    for q in range(800):
        ranked = rng.permutation(docs)[:20]
        labels[f"q{q}"] = {d: int(rng.integers(1, 3)) for d in rng.choice(docs, 4, replace=False)}
        lines += [f"q{q} Q0 {d} {r + 1} {20 - r} run" for r, d in enumerate(ranked)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    metrics = ["recall@100tok", "ndcg(straddle=include)@64tok", "P@300char", "recall@10"]
    whole = ranklens.evaluate(labels, path, metrics, texts=texts, memory=float("inf"))
    streamed = ranklens.evaluate_file(labels, path, metrics, texts=texts, memory=20_000)
    assert streamed.chunks > 1
    for m in metrics:
        np.testing.assert_array_equal(streamed.per_query[m], whole.per_query[m])
