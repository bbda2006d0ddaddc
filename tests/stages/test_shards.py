"""A pipeline judged in shards of queries, locally or on a real local Ray, gives the numbers
and fates it gives judged whole."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ranklens import Statistics, evaluate_stages
from ranklens.stages.shards import JUDGED_ROW_BYTES, shard_count

STATS = Statistics(n_resamples=200, seed=3)


def pipeline(n_q: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    labels, first, second, third = {}, {}, {}, {}
    for i in range(n_q):
        q = f"q{i:03d}"
        rel = rng.choice(60, size=rng.integers(1, 6), replace=False)
        labels[q] = {f"d{d}": int(rng.integers(1, 3)) for d in rel}
        ranked = [f"d{d}" for d in rng.permutation(60)[:30]]
        first[q] = ranked
        second[q] = [d for d in ranked[:20] if rng.random() > 0.2]  # a filter and a cut
        third[q] = [*second[q][:5], f"d{int(rng.integers(60, 70))}"]  # a cut and an addition
    labels["unasked"] = {"d1": 1}  # a labelled query no stage answers
    first["stray"] = ["d1"]  # a query no label names: ignored, counted
    return labels, {"bm25": first, "rerank": second, "context": third}


def same(a, b):
    assert a.stages == b.stages
    for s in a.stages:
        ea, eb = a.evaluations[s], b.evaluations[s]
        assert ea.query_ids == eb.query_ids
        for m in ea.per_query:
            np.testing.assert_array_equal(ea.per_query[m], eb.per_query[m])
        assert dict(ea.aggregate) == dict(eb.aggregate)
        assert ea.counts == eb.counts
    np.testing.assert_array_equal(a.attribution.query_ids, b.attribution.query_ids)
    np.testing.assert_array_equal(a.attribution.rank, b.attribution.rank)
    np.testing.assert_array_equal(a.attribution.fate, b.attribution.fate)
    assert a.losses == b.losses
    assert a.labels == b.labels


def test_shards_equal_the_whole():
    labels, stages = pipeline()
    whole = evaluate_stages(labels, stages, ["recall", "ndcg@10", "P@5"], stats=STATS)
    rows = sum(len(v) for st in stages.values() for v in st.values())
    memory = rows * JUDGED_ROW_BYTES // 7  # about seven shards
    assert shard_count(rows, memory) >= 7
    parts = evaluate_stages(labels, stages, ["recall", "ndcg@10", "P@5"], stats=STATS,
                            memory=memory)  # fmt: skip
    same(whole, parts)
    with pytest.raises(Exception, match="per-query values"):
        parts.evaluations["bm25"].evaluate(["map"])


def test_shard_count_follows_the_budget():
    assert shard_count(10**7, float("inf")) == 1
    assert shard_count(3 * 10**7, 2e9) == int(np.ceil(3e7 * JUDGED_ROW_BYTES / 2e9))


def test_on_ray_equals_local(local_ray):
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    labels, stages = pipeline(seed=1)
    local = evaluate_stages(labels, stages, ["recall", "ndcg@10"], stats=STATS)
    on_ray = evaluate_stages(labels, stages, ["recall", "ndcg@10"], stats=STATS, backend="ray",
                             memory=10**5)  # fmt: skip
    same(local, on_ray)
