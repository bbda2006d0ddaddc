"""The out-of-core tests' shared case: a labelled set and a run written as TREC files
(some run queries unlabelled, some labelled queries missing from the run, tied scores,
optionally shuffled), the metrics they check, and the bit-for-bit comparison.

Imported by name: the root conftest puts this folder on ``sys.path``."""

from __future__ import annotations

import random

import numpy as np

METRICS = ["ndcg@10", "P@5", "map", "gm_map", "num_rel", "num_ret", "num_rel_ret", "recall@100",
           "bpref", "rr", "success@3", "Rprec", "err@10", "ndcg(gains={1:2,3:7})@10", "G",
           "ndcg_rel", "Rndcg", "infAP", "rbp", "11pt_avg"]  # fmt: skip


def same(ours, ref):
    """``ours`` equals ``ref`` to the last bit: queries, aggregates, per-query values, notes."""
    assert ours.query_ids == ref.query_ids
    for m in ref.names:
        assert ours.aggregate[m] == ref.aggregate[m], m  # bit-identical
        assert np.array_equal(ours.per_query[m], ref.per_query[m]), m
    assert ours.notes() == ref.notes()


def write_case(tmp_path, n_queries=2500, depth=30, shuffle=False, seed=0):
    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for i in range(n_queries):
        q = f"q{i:05d}"
        if i % 7 != 3:  # some run queries have no labels
            for d in rng.sample(range(200), rng.randint(1, 6)):
                qrels_lines.append(f"{q} 0 D{d} {rng.randint(-1, 3)}\n")
        if i % 11 == 5:  # some labelled queries are missing from the run
            continue
        for r, d in enumerate(rng.sample(range(200), depth), 1):
            score = round(rng.random(), 2)  # ties
            run_lines.append(f"{q} Q0 D{d} {r} {score} run\n")
    for i in range(n_queries, n_queries + 50):  # labelled, never retrieved
        qrels_lines.append(f"x{i} 0 D1 1\n")
    if shuffle:
        rng.shuffle(run_lines)
    (tmp_path / "qrels.txt").write_text("".join(qrels_lines))
    (tmp_path / "run.txt").write_text("".join(run_lines))
    return tmp_path / "qrels.txt", tmp_path / "run.txt"
