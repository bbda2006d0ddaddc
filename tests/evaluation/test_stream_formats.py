"""Out-of-core evaluation of JSONL and Parquet runs, per-query files and the progress bar:
each format streamed within a small budget equals the in-memory evaluate of the same file
to the last bit (a Parquet run whose queries are scattered is partitioned first), and an
error names the file's own line or row."""

from __future__ import annotations

import csv
import gzip
import itertools
import json

import numpy as np
import pytest
from _stream_case import METRICS, run_rows, same, write_case, write_jsonl, write_parquet

import ranklens
from ranklens import InputError
from ranklens.app.cli import main
from ranklens.evaluation.stream import evaluate_file

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "parquet-shuffled"])
def test_each_format_streamed_equals_the_in_memory_evaluation(tmp_path, fmt):
    qrels, run = write_case(tmp_path, shuffle=fmt.endswith("shuffled"))
    rows = run_rows(run)
    path = (write_jsonl(rows, tmp_path / "run.jsonl") if fmt == "jsonl"
            else write_parquet(rows, tmp_path / "run.parquet"))  # fmt: skip
    ours = evaluate_file(qrels, path, METRICS, memory=400_000)
    ref = ranklens.evaluate(qrels, run, METRICS)  # the TREC file the rows came from
    assert ours.chunks > 5
    same(ours, ref)
    same(ours, ranklens.evaluate(qrels, path, METRICS))  # the in-memory readers agree


def test_a_folder_of_parquet_shards_as_ray_data_writes_them(tmp_path):
    qrels, run = write_case(tmp_path, n_queries=1200)
    rows = run_rows(run)
    folder = tmp_path / "shards"
    folder.mkdir()
    cut = [0, 7000, 7000, 20000, len(rows)]  # an empty shard, and queries cut across files
    for i, (a, b) in enumerate(itertools.pairwise(cut)):
        write_parquet(rows[a:b], folder / f"part-{i:05d}.parquet")
    same(
        evaluate_file(qrels, folder, METRICS, memory=300_000),
        ranklens.evaluate(qrels, run, METRICS),
    )


def test_integer_ids_and_ranks_without_scores(tmp_path):
    path = tmp_path / "r.parquet"
    pq.write_table(
        pa.table({"qid": [1, 1, 1, 2], "docno": [7, 8, 9, 7], "rank": [3, 1, 2, 1]}), path
    )
    ev = evaluate_file({"1": ["9"], "2": ["7"]}, path, ["mrr", "P@1"], memory=1e4)
    assert ev.aggregate == {"mrr": 0.75, "P@1": 0.5}  # doc 9 has rank 2


def test_errors_name_the_line_or_the_row(tmp_path):
    qrels, run = write_case(tmp_path, n_queries=400)
    rows = run_rows(run)
    path = write_jsonl(rows, tmp_path / "run.jsonl")
    lines = path.read_text().splitlines(keepends=True)
    (tmp_path / "twice.jsonl").write_text("".join(lines + lines[5:6]))
    with pytest.raises(
        InputError,
        match=rf"twice.jsonl:{len(lines) + 1}: query 'q00006' appears on more than one line "
        r"\(also on twice.jsonl:6\)",
    ):
        evaluate_file(qrels, tmp_path / "twice.jsonl", ["P@5"], memory=20_000)
    lines[300] = lines[300].replace('"score": ', '"score": "x", "s": ', 1)
    (tmp_path / "bad.jsonl").write_text("".join(lines))
    with pytest.raises(InputError, match=r"bad.jsonl:301: hit 0 .* needs a numeric 'score'"):
        evaluate_file(qrels, tmp_path / "bad.jsonl", ["P@5"], memory=20_000)
    docs = [r[2] for r in rows]
    docs[9000] = None
    table = pa.table({"query_id": [r[0] for r in rows], "doc_id": docs, "score": [1.0] * len(rows)})
    pq.write_table(table, tmp_path / "null.parquet", row_group_size=1000)
    for shuffled in (False, True):
        if shuffled:  # the partition pass names the file's row too
            table = table.take(np.r_[np.arange(5000, len(rows)), np.arange(5000)])
            pq.write_table(table, tmp_path / "null.parquet", row_group_size=1000)
        at = 9001 if not shuffled else 9001 - 5000
        with pytest.raises(InputError, match=rf"null.parquet: row {at}: column 'doc_id' is null"):
            evaluate_file(qrels, tmp_path / "null.parquet", ["P@5"], memory=50_000)
    (tmp_path / "r.json").write_text("{}")
    with pytest.raises(InputError, match="a single JSON object is read whole"):
        evaluate_file(qrels, tmp_path / "r.json", ["P@5"])


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".tsv", ".jsonl"])
def test_per_query_values_written_to_a_file(tmp_path, suffix):
    qrels, run = write_case(tmp_path, n_queries=300)
    out = tmp_path / f"per{suffix}"
    ev = evaluate_file(qrels, run, ["ndcg@10", "P@5"], memory=50_000, per_query=out)
    if suffix == ".parquet":
        t = pq.read_table(out).to_pydict()
        got = {q: (a, b) for q, a, b in zip(t["query_id"], t["ndcg@10"], t["P@5"])}
    elif suffix == ".jsonl":
        recs = [json.loads(line) for line in out.read_text().splitlines()]
        got = {r["query_id"]: (r["ndcg@10"], r["P@5"]) for r in recs}
    else:
        with open(out, newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t" if suffix == ".tsv" else ",")
            got = {r["query_id"]: (float(r["ndcg@10"]), float(r["P@5"])) for r in reader}
    want = {q: (ev.query(q)["ndcg@10"], ev.query(q)["P@5"]) for q in ev.query_ids}
    assert got == want and list(got) == list(ev.query_ids)  # exact, in the evaluation's order


def test_per_query_ids_are_quoted_for_csv(tmp_path):
    ev = ranklens.evaluate({'a,"b"\nc': ["d"]}, {'a,"b"\nc': ["d"]}, ["mrr"])
    out = ranklens.write_per_query(ev, tmp_path / "q.csv")
    with open(out, newline="") as fh:
        assert list(csv.reader(fh)) == [["query_id", "mrr"], ['a,"b"\nc', "1.0"]]
    with pytest.raises(InputError, match="per-query values are written as"):
        ranklens.write_per_query(ev, tmp_path / "q.xlsx")


def test_the_command_line_writes_per_query_values_and_shows_progress(tmp_path, capsys):
    qrels, run = write_case(tmp_path, n_queries=300)
    rows = run_rows(run)
    path = write_parquet(rows, tmp_path / "run.parquet")
    out = tmp_path / "per.parquet"
    assert main(["evaluate", str(qrels), str(path), "-m", "P@5", "--memory", "100K",
                 "--per-query-out", str(out), "--progress"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert "evaluating run.parquet" in captured.err and "P@5" in captured.out
    assert pq.read_table(out).column_names == ["query_id", "P@5"]
    out.unlink()
    assert main(["evaluate", str(qrels), str(run), "-m", "P@5", f"--per-query={out}"]) == 0
    assert (
        pq.read_table(out).num_rows
        == ranklens.evaluate(qrels, run, "P@5").counts["queries_evaluated"]
    )


def test_parquet_ids_read_from_arrow_buffers_or_the_general_path(tmp_path):
    path = tmp_path / "r.parquet"
    table = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["a\x00b", "é", "c"],
                      "score": [2.0, 1.0, 1.0]})  # fmt: skip
    pq.write_table(table, path)  # a zero byte: the general path
    qrels = {"q1": ["a\x00b"], "q2": ["c"]}
    assert evaluate_file(qrels, path, ["mrr"], memory=1e4).aggregate == {"mrr": 1.0}
    pq.write_table(table.set_column(1, "doc_id", pa.array(["é", "ü", "c"])), path)
    assert ranklens.read_run(path).to_dict() == {"q1": {"é": 2.0, "ü": 1.0}, "q2": {"c": 1.0}}
    pq.write_table(table.set_column(1, "doc_id", pa.array(["x", "", "c"])), path)
    with pytest.raises(InputError, match="empty document id"):
        evaluate_file(qrels, path, ["mrr"], memory=1e4)


@pytest.mark.parametrize("indented", [False, True])
def test_partition_keeps_every_line_and_each_querys_lines_together_in_order(indented):
    import random

    from ranklens.evaluation.run_files import bucket_lines

    rng = random.Random(3)
    lines = [f"q{rng.randint(0, 300)}\tQ0 d{i} {i} {rng.random():.3f} r\n" for i in range(5000)]
    lines[10:10] = ["\n", "# a comment\n", "\r\n"]
    if indented:
        lines[20] = "  " + lines[20]
    parts = bucket_lines("".join(lines).encode(), 7)
    kept = [x for x in lines if x.strip() and not x.startswith("#")]
    got = [x.decode() for p in parts for x in p.splitlines(keepends=True)]
    assert sorted(got) == sorted(kept)  # every content line once, nothing else
    home = {}
    for i, p in enumerate(parts):
        for x in p.decode().splitlines(keepends=True):
            assert home.setdefault(x.split()[0], i) == i  # a query lives in one bucket
    for q in home:  # in file order within its bucket
        mine = [x for x in kept if x.split()[0] == q]
        assert [x for x in parts[home[q]].decode().splitlines(keepends=True)
                if x.split()[0] == q] == mine  # fmt: skip


def test_evaluate_streams_a_file_too_large_for_its_budget(tmp_path):
    from ranklens.evaluation.stream_plan import StreamedEvaluation

    qrels, run = write_case(tmp_path, n_queries=600)
    whole = ranklens.evaluate(qrels, run, METRICS, memory=float("inf"))
    assert not isinstance(whole, StreamedEvaluation)
    assert not isinstance(ranklens.evaluate(qrels, run, METRICS), StreamedEvaluation)  # fits 2G
    streamed = ranklens.evaluate(qrels, run, METRICS, memory="200K")
    assert isinstance(streamed, StreamedEvaluation) and streamed.chunks > 1
    same(streamed, whole)
    folder = tmp_path / "shards"
    folder.mkdir()
    (folder / "a.run").write_text(run.read_text())
    assert isinstance(ranklens.evaluate(qrels, folder, ["P@5"]), StreamedEvaluation)
    with pytest.raises(InputError, match=r"kept per-query values only.*memory=float\('inf'\)"):
        ranklens.holes(streamed)
    (tmp_path / "r.json").write_text(json.dumps({"q00001": ["D1"]}))  # read whole, always
    ranklens.evaluate(qrels, tmp_path / "r.json", ["P@5"], memory=1000)


def test_a_scattered_chunk_is_seen_before_it_is_read():
    from ranklens.evaluation.run_files import scattered

    grouped = b"".join(f"q{i // 3} Q0 d{i} 1 1.0 r\n".encode() for i in range(30))
    assert not scattered(grouped) and not scattered(b"# only\n\n") and not scattered(b"")
    lines = grouped.splitlines(keepends=True)
    assert scattered(b"".join(lines[1:] + lines[:1]))  # q0 comes back after q9
    assert not scattered(b"  q0 Q0 d 1 1 r\n")  # indented: left to the reader


def test_a_trec_file_is_sized_by_its_lines_not_only_its_bytes(tmp_path, monkeypatch):
    """A plain TREC run past the first bound (nine bytes per byte) is read whole when its
    lines and bytes, and its labels', fit the budget; a file of long ids (as many lines,
    more bytes) or a gzipped one still streams. The fixed part is set aside here so that
    small files show the rule."""
    from ranklens.evaluation import stream_plan
    from ranklens.evaluation.stream import streams

    monkeypatch.setattr(stream_plan, "WORKING_FIXED", 0)
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(1000)))
    short, long_ = tmp_path / "short.run", tmp_path / "long.run"
    short.write_text("".join(f"q{i % 1000} Q0 d{i} 1 1.5 r\n" for i in range(20_000)))
    long_.write_text("".join(f"q{i % 1000} Q0 doc-{i:032x} 1 1.5 r\n" for i in range(20_000)))
    size = short.stat().st_size
    need = stream_plan.whole_trec_bytes(short, qrels)
    assert need is not None and need < 9 * size  # below the first bound, above the file
    long_need = stream_plan.whole_trec_bytes(long_, qrels)
    assert long_need is not None and long_need > need  # as many lines, more bytes a line
    budget = (need + long_need) // 2
    assert budget < 9 * size  # the first bound alone would stream both
    assert not streams(str(short), budget, str(qrels))
    assert streams(str(short), need - 1, str(qrels))
    assert streams(str(long_), budget, str(qrels))
    gz = tmp_path / "short.run.gz"
    gz.write_bytes(gzip.compress(short.read_bytes()))
    assert stream_plan.whole_trec_bytes(gz, qrels) is None
    assert streams(str(gz), gz.stat().st_size * 9 - 1, str(qrels))
    # a wrong estimate of the lines would move the line: 20,000 lines counted from the head
    assert abs(stream_plan.trec_lines(short, size) - 20_000) < 200
