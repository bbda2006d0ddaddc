"""Distributed evaluation on a real local Ray (ray.init(num_cpus=2)): a run written in
shard files (TREC, JSONL, Parquet) and a Ray Dataset, each scored in Ray tasks and merged,
equal the in-memory evaluate to the last bit; a query split across TREC shards is refused
by name, across Parquet shards it goes through the Dataset path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _stream_case import METRICS, as_of_times, same, versions_records, write_case

import ranklens
from ranklens import InputError
from ranklens.app.cli import main
from ranklens.evaluation.stream import evaluate_file

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # before ray is imported
ray = pytest.importorskip("ray")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def local_ray(local_ray):
    """The conftest's Ray, its Ray Data quiet and shuffling sort-based."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    # Ray Data's default hash shuffle starts aggregator actors: 20-30 s per Dataset grouped
    # on 2 CPUs, against 10-17 s sort-based; ranklens calls groupby the same way under both
    from ray.data.context import ShuffleStrategy

    context.shuffle_strategy = ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
    yield local_ray


def shard(lines, folder: Path, fmt: str, n=4, by_query=True):
    """The run's lines written as ``n`` shard files, each query in one file (or cut
    anywhere with ``by_query=False``)."""
    folder.mkdir()
    rows = [line.split() for line in lines]
    qs = sorted({r[0] for r in rows})
    where = {q: i * n // len(qs) for i, q in enumerate(qs)}
    parts = [[r for r in rows if where[r[0]] == i] for i in range(n)]
    if not by_query:
        parts = [rows[i * len(rows) // n : (i + 1) * len(rows) // n] for i in range(n)]
    for i, part in enumerate(parts):
        if fmt == "trec":
            (folder / f"part-{i}.run").write_text("".join(" ".join(r) + "\n" for r in part))
        elif fmt == "jsonl":
            by_q: dict[str, list] = {}
            for q, _, d, _, s, _ in part:
                by_q.setdefault(q, []).append({"id": d, "score": float(s)})
            text = "".join(json.dumps({"query_id": q, "hits": h}) + "\n" for q, h in by_q.items())
            (folder / f"part-{i}.jsonl").write_text(text)
        else:
            table = pa.table({"query_id": [r[0] for r in part], "doc_id": [r[2] for r in part],
                              "score": [float(r[4]) for r in part]})  # fmt: skip
            pq.write_table(table, folder / f"part-{i}.parquet")
    return folder


@pytest.mark.parametrize("fmt", ["trec", "jsonl", "parquet"])
def test_shard_files_scored_on_ray_equal_one_process(local_ray, tmp_path, fmt):
    qrels, run = write_case(tmp_path, n_queries=1500, shuffle=True)
    folder = shard(run.read_text().splitlines(), tmp_path / "shards", fmt)
    ours = evaluate_file(qrels, folder, METRICS, backend="ray", memory=200_000)
    assert ours.chunks > 4  # every shard in chunks of its own
    same(ours, ranklens.evaluate(qrels, run, METRICS))


def test_a_ray_dataset_and_split_parquet_shards(local_ray, tmp_path):
    qrels, run = write_case(tmp_path, n_queries=800, shuffle=True)
    lines = run.read_text().splitlines()
    ref = ranklens.evaluate(qrels, run, METRICS)
    rows = [line.split() for line in lines]
    table = pa.table({"qid": [r[0] for r in rows], "docno": [r[2] for r in rows],
                      "score": [float(r[4]) for r in rows]})  # fmt: skip
    ds = ray.data.from_arrow(table).repartition(3)
    same(evaluate_file(qrels, ds, METRICS, backend="ray", ray={"buckets": 4}), ref)
    split = shard(lines, tmp_path / "split", "parquet", by_query=False)
    same(evaluate_file(qrels, split, METRICS, backend="ray", ray={"buckets": 4}), ref)
    cut = shard(lines, tmp_path / "cut", "trec", by_query=False)
    with pytest.raises(InputError, match=r"query '.*' has rows in part-\d.run and in part-\d.run"):
        evaluate_file(qrels, cut, ["P@5"], backend="ray")
    same(evaluate_file(qrels, cut, METRICS), ref)  # the local backend partitions it
    bad = shard(lines, tmp_path / "bad", "trec")
    text = (bad / "part-2.run").read_text().splitlines(keepends=True)
    text[7] = " ".join(text[7].split()[:4]) + " high r\n"  # not a score
    (bad / "part-2.run").write_text("".join(text))
    with pytest.raises(InputError, match=r"part-2.run:8:"):  # the task's error, unwrapped
        evaluate_file(qrels, bad, ["P@5"], backend="ray")
    with pytest.raises(InputError, match="a folder of run files or a Ray Dataset"):
        evaluate_file(qrels, {"q1": ["d"]}, ["P@5"], backend="ray")


def test_the_command_line_evaluates_on_ray(local_ray, tmp_path, capsys):
    qrels, run = write_case(tmp_path, n_queries=400)
    folder = shard(run.read_text().splitlines(), tmp_path / "shards", "trec")
    out = tmp_path / "per.csv"
    assert main(["evaluate", str(qrels), str(folder), "-m", "ndcg@10", "--ray",
                 "--per-query-out", str(out), "--format", "json"]) == 0  # fmt: skip
    got = json.loads(capsys.readouterr().out)
    assert got["aggregate"]["ndcg@10"] == ranklens.evaluate(qrels, run, "ndcg@10")["ndcg@10"]
    assert len(out.read_text().splitlines()) == got["counts"]["queries_evaluated"] + 1


def test_document_versions_on_ray(local_ray, tmp_path):
    """Versions, per-query as-of times and a freshness rule: the plan (the table once, the
    labels carried) travels to every task, which scores its shard file as one process
    scores a chunk (a Ray Dataset's buckets too); counts summed."""
    qrels, run = write_case(tmp_path, n_queries=800, shuffle=True)
    ids = sorted({line.split()[0] for line in qrels.read_text().splitlines()})
    kw = {"versions": ranklens.Versions.from_records(versions_records(1)),
          "as_of": as_of_times("each", ids, 1), "freshness": "demote"}  # fmt: skip
    metrics = [*METRICS, "outdated@5", "current_first@10", "undated@10"]
    ref = ranklens.evaluate(qrels, run, metrics, memory=float("inf"), **kw)
    folder = shard(run.read_text().splitlines(), tmp_path / "shards", "parquet")
    ours = evaluate_file(qrels, folder, metrics, backend="ray", memory=200_000, **kw)
    same(ours, ref)
    assert ours.counts == ref.counts and ref.counts["labels_carried"] > 0


def test_relative_paths_are_read_where_the_caller_is_not_where_ray_started(
    local_ray, tmp_path, monkeypatch
):
    """A task runs in the working directory Ray was started in: a run folder named
    relatively from another directory is resolved on the driver, never looked for there
    (the module's Ray was started in the repository)."""
    qrels, run = write_case(tmp_path, n_queries=200)
    shard(run.read_text().splitlines(), tmp_path / "shards", "trec")
    monkeypatch.chdir(tmp_path)
    ours = evaluate_file(qrels.name, "shards", METRICS, backend="ray")
    same(ours, ranklens.evaluate(qrels, run, METRICS))
