"""Out-of-core evaluation (ranklens.evaluation.stream.evaluate_file): equal to the in-memory
evaluate to the last bit on files grouped by query and on shuffled ones, errors naming the
file's own line, and a peak memory that follows the budget, not the file."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from _stream_case import METRICS, write_case

import ranklens
from ranklens import InputError
from ranklens.app.cli import main
from ranklens.evaluation.stream import evaluate_file


@pytest.mark.parametrize("shuffle", [False, True], ids=["grouped", "shuffled"])
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_equal_to_the_in_memory_evaluation_to_the_last_bit(tmp_path, shuffle, missing):
    qrels, run = write_case(tmp_path, shuffle=shuffle)
    ours = evaluate_file(qrels, run, METRICS, memory=400_000, missing=missing)
    ref = ranklens.evaluate(qrels, run, METRICS, missing=missing)
    assert ours.chunks > 5  # really in pieces
    assert ours.query_ids == ref.query_ids
    for m in METRICS:
        assert ours.aggregate[m] == ref.aggregate[m], m  # bit-identical
        assert np.array_equal(ours.per_query[m], ref.per_query[m]), m
    for key in ("queries_evaluated", "queries_missing", "queries_ignored", "hits_retrieved",
                "hits_labelled", "tied_documents", "tie_queries"):  # fmt: skip
        assert ours.counts[key] == ref.counts[key], key
    assert ours.to_trec() == ref.to_trec()
    assert ours.notes() == ref.notes()
    assert ours.evaluate(["P@10"])["P@10"] == ref.evaluate(["P@10"])["P@10"]


def test_options_pass_through_and_one_chunk_when_it_fits(tmp_path):
    qrels, run = write_case(tmp_path, n_queries=300)
    for kw in ({"relevance_level": 2}, {"judged_only": True}, {"convention": "llamaindex"}):
        ours = evaluate_file(qrels, run, ["ndcg@10", "P@5", "map"], memory=300_000, **kw)
        ref = ranklens.evaluate(qrels, run, ["ndcg@10", "P@5", "map"], **kw)
        assert ours.aggregate == ref.aggregate, kw
    assert evaluate_file(qrels, run, ["P@5"], memory=1e12).chunks == 1  # all fits: one chunk


def test_a_bad_line_is_named_by_the_files_own_line_number(tmp_path):
    qrels, run = write_case(tmp_path, n_queries=3000)
    lines = run.read_text().splitlines(keepends=True)
    bad = len(lines) - 40
    fields = lines[bad].split()
    fields[4] = "high"  # not a score
    lines[bad] = " ".join(fields) + "\n"
    run.write_text("".join(lines))
    with pytest.raises(InputError, match=rf"run.txt:{bad + 1}:"):
        evaluate_file(qrels, run, ["P@5"], memory=200_000)
    shuffled = tmp_path / "shuffled.txt"
    rng = random.Random(1)
    body = lines[:bad] + lines[bad + 1 :]
    rng.shuffle(body)
    body.insert(bad, lines[bad])
    shuffled.write_text("".join(body))
    with pytest.raises(InputError, match=rf"shuffled.txt:{bad + 1}:"):
        evaluate_file(qrels, shuffled, ["P@5"], memory=200_000)
    with pytest.raises(InputError, match="no such run file"):
        evaluate_file(qrels, tmp_path / "none.run", ["P@5"])
    (tmp_path / "run.jsonl").write_text("{}\n")
    with pytest.raises(InputError, match=r"run.jsonl:1: missing field 'query_id'"):
        evaluate_file(qrels, tmp_path / "run.jsonl", ["P@5"])


def test_the_command_line_takes_a_memory_budget(tmp_path, capsys):
    qrels, run = write_case(tmp_path, n_queries=400)
    assert main(["evaluate", str(qrels), str(run), "-m", "map", "-m", "P@5",
                 "--memory", "300K", "--format", "trec"]) == 0  # fmt: skip
    streamed = capsys.readouterr().out
    assert main(["evaluate", str(qrels), str(run), "-m", "map", "-m", "P@5", "--format",
                 "trec"]) == 0  # fmt: skip
    assert streamed == capsys.readouterr().out
    assert main(["evaluate", str(qrels), str(run), "-m", "map", "--memory", "lots"]) == 2


def test_peak_memory_follows_the_budget_not_the_file(tmp_path):
    """A 50k x 60 run (3M lines, 160 MB) evaluated with a 60 MB budget in a fresh process
    peaks at under half the in-memory evaluation of the same file (imports and the labels
    take their share in both)."""
    rng = np.random.default_rng(0)
    n_q, depth = 50_000, 60
    q = np.repeat(np.arange(n_q), depth)
    d = rng.permutation(8_800_000)[: n_q * depth]  # distinct MS MARCO-shaped ids
    r = np.tile(np.arange(1, depth + 1), n_q)
    with (tmp_path / "run.txt").open("w") as f:
        f.writelines(f"q{a} Q0 {b} {c} {100 - c} run\n" for a, b, c in zip(q.tolist(),
                     d.tolist(), r.tolist()))  # fmt: skip
    with (tmp_path / "qrels.txt").open("w") as f:
        f.writelines(f"q{a} 0 {b} 1\n" for a, b in zip(range(n_q), d[::depth].tolist()))

    def peak(code: str) -> int:
        script = textwrap.dedent(f"""
            import ranklens
            from ranklens.evaluation.stream import evaluate_file
            qrels, run = {str(tmp_path / "qrels.txt")!r}, {str(tmp_path / "run.txt")!r}
            ev = {code}
            assert ev["P@5"] > 0
            hwm = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0]
            print(hwm.split()[1])  # kB; ru_maxrss would carry the parent's across exec
        """)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return int(out.stdout.split()[-1]) * 1024

    base = peak("ranklens.evaluate(qrels, run, ['P@5', 'map'], memory=float('inf'))")
    streamed = peak("evaluate_file(qrels, run, ['P@5', 'map'], memory=60_000_000)")
    assert streamed < 0.5 * base, (streamed, base)
    lines = (tmp_path / "run.txt").read_bytes().splitlines(keepends=True)
    rng.shuffle(lines)  # scattered queries: partitioned first, within the same budget
    (tmp_path / "run.txt").write_bytes(b"".join(lines))
    del lines
    shuffled = peak("evaluate_file(qrels, run, ['P@5', 'map'], memory=60_000_000)")
    assert shuffled < 0.5 * base, (shuffled, base)


def test_a_folder_of_shard_files_is_one_run(tmp_path):
    qrels, run = write_case(tmp_path, n_queries=1200)
    lines = run.read_text().splitlines(keepends=True)
    folder = tmp_path / "shards"
    folder.mkdir()
    for i in range(4):  # grouped within files; a split query would make it ungrouped
        (folder / f"part-{i}.run").write_text("".join(lines[i::4]))
    ours = evaluate_file(qrels, folder, ["map", "P@5"], memory=300_000)
    ref = ranklens.evaluate(qrels, run, ["map", "P@5"])
    assert ours.aggregate == ref.aggregate and ours.query_ids == ref.query_ids
    (folder / "part-2.run").write_text("q1 Q0 D1 1 high run\n")
    with pytest.raises(InputError, match=r"part-2.run:1:"):
        evaluate_file(qrels, folder, ["map"], memory=300_000)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no run file"):
        evaluate_file(qrels, tmp_path / "empty", ["map"])
