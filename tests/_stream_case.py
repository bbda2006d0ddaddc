"""The out-of-core tests' shared case: a labelled set and a run written as TREC files
(some run queries unlabelled, some labelled queries missing from the run, tied scores,
optionally shuffled), the metrics they check, and the bit-for-bit comparison.

Imported by name: the root conftest puts this folder on ``sys.path``."""

from __future__ import annotations

import json
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


def run_rows(run_path):
    return [line.split() for line in run_path.read_text().splitlines()]


def write_jsonl(rows, path):
    """TREC run rows as a JSONL run (a query per line)."""
    by_q: dict[str, list] = {}
    for q, _, d, _, s, _ in rows:
        by_q.setdefault(q, []).append({"id": d, "score": float(s)})
    path.write_text("".join(json.dumps({"query_id": q, "hits": h}) + "\n" for q, h in by_q.items()))
    return path


def write_parquet(rows, path, ints=False):
    """TREC run rows as a Parquet run of several row groups, queries across them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    q = [int(r[0][1:]) if ints else r[0] for r in rows]
    table = pa.table({"query_id": q, "doc_id": [r[2] for r in rows],
                      "score": [float(r[4]) for r in rows]})  # fmt: skip
    pq.write_table(table, path, row_group_size=4000)
    return path


DAY = 86400.0
T0 = 1_700_000_000.0  # 2023-11-14


def versions_records(seed=0, n_docs=200, timed_chains=False):
    """A versions table over :func:`write_case`'s documents ``D0``..``D199`` as records:
    chains ordered by ``supersedes`` links (with times or, unless ``timed_chains``,
    without), groups ordered by time with some times missing, single documents with or
    without an end of validity, and unlisted documents."""
    rng = random.Random(seed)
    docs = [f"D{i}" for i in range(n_docs)]
    rng.shuffle(docs)
    records, i = [], 0
    while i < len(docs):
        group = docs[i : i + rng.randint(1, 4)]
        i += len(group)
        kind = rng.choice(["chain", "timed", "single"]) if len(group) > 1 else "single"
        name = f"g{i}"
        if kind == "chain":
            timed, day = timed_chains or rng.random() < 0.5, rng.randint(0, 50)
            for j, d in enumerate(group):
                day += rng.randint(1, 60)
                rec = {"doc_id": d, "group": name, "valid_from": T0 + day * DAY if timed else None}
                records.append({**rec, "supersedes": group[j - 1]} if j else rec)
        elif kind == "timed":
            for d, day in zip(group, rng.sample(range(400), len(group))):
                gone = rng.random() < 0.15  # a time field missing on a document
                records.append({"doc_id": d, "group": name,
                                "valid_from": None if gone else T0 + day * DAY})  # fmt: skip
        else:
            for d in group:
                if rng.random() < 0.2:
                    continue  # unlisted
                day = rng.randint(0, 400)
                end = rng.choice([None, T0 + rng.randint(day, 500) * DAY])
                records.append({"doc_id": d, "valid_from": T0 + day * DAY, "superseded_at": end})
    records.append({"doc_id": "D-first", "valid_from": T0})  # nothing before T0
    return records


def as_of_times(kind, query_ids, seed=0):
    """No as-of time, one for every query, or one for some queries (``{query: time}``)."""
    rng = random.Random(seed)
    if kind == "one":
        return T0 + 250 * DAY
    if kind == "each":
        return {q: T0 + rng.randint(0, 500) * DAY for q in query_ids if rng.random() < 0.7}
    return None
