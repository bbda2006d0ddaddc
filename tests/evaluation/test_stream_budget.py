"""The memory budget of out-of-core evaluation is kept with labels of any depth: the plan
accounts for the labels, every query's values and the judging working set (measured), and
labels too large to read whole are read in shards by query with the run partitioned
alike; the numbers stay those of the in-memory evaluation, to the last bit."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import numpy as np
import pytest
from _stream_case import METRICS, same, write_case

import ranklens
from ranklens.errors import InputError
from ranklens.evaluation import labelshards
from ranklens.evaluation import stream as stream_mod
from ranklens.evaluation.stream import evaluate_file

DEEP = ["ndcg@10", "map", "P@10", "recall@100", "err@10"]


def write_deep(folder, n_q=6_000, depth=100, labels=100, seed=0):
    """A run of ``n_q`` x ``depth`` (MS MARCO-shaped ids, grouped by query, ties) and
    ``labels`` judged documents per query (a third of them retrieved, grades 0-3): about as
    many label rows as run rows, as TREC-style deep judgments are."""
    rng = np.random.default_rng(seed)
    docs = rng.permutation(8_800_000)[: n_q * depth].reshape(n_q, depth).tolist()
    scores = (100 - np.arange(depth) / 7.0 - rng.integers(0, 2, (n_q, depth)) / 8).tolist()
    with (folder / "run.txt").open("w") as f:
        for i in range(n_q):
            f.writelines(f"q{i} Q0 {d} {r} {s:.4f} r\n"
                         for r, (d, s) in enumerate(zip(docs[i], scores[i]), 1))  # fmt: skip
    other = (9_000_000 + rng.permutation(1_000_000)[: n_q * labels]).reshape(n_q, labels)
    grades = rng.integers(0, 4, (n_q, labels)).tolist()
    with (folder / "qrels.txt").open("w") as f:
        for i in range(n_q):
            judged = docs[i][: labels // 3] + other[i, labels // 3 :].tolist()
            f.writelines(f"q{i} 0 {d} {g}\n" for d, g in zip(judged, grades[i]))
    return folder / "qrels.txt", folder / "run.txt"


def streamed(qrels, run, memory, old_plan=False):
    """``evaluate_file`` in a fresh process: its per-query values, means and peak memory
    (VmHWM, bytes). ``old_plan``: the chunk size taken from the run alone (nine bytes of
    working set per byte of run, nothing for the labels), as before the labels counted."""
    lines = [
        "import json",
        "from ranklens.evaluation import stream as stream_mod",
        "from ranklens.evaluation.stream import evaluate_file",
    ]
    if old_plan:
        lines += [
            "import ranklens.evaluation.stream_plan as P",
            "P.RUN_BYTES, P.LABEL_ROW_BYTES, P.WORKING_FIXED = 9, 0, 0",
            "P._per_query_bytes = lambda n, m: n * (8 * m + 80)",
            "stream_mod.label_shard_count = lambda *a: 1",
        ]
    lines += [
        f"ev = evaluate_file({str(qrels)!r}, {str(run)!r}, {DEEP!r}, memory={memory!r})",
        'hwm = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0]',
        "print(json.dumps([ev.query_ids, {m: ev.per_query[m].tolist() for m in ev.names},",
        "                  dict(ev.aggregate), int(hwm.split()[1]) * 1024]))",
    ]
    script = "\n".join(lines)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def test_peak_memory_stays_within_the_budget_with_deep_labels(tmp_path):
    """6k x 100 with 100 labels per query (0.6M label rows): sized from the run alone,
    the chunks pass the budget; sized with the labels counted, and with the labels read
    in shards when even they do not fit, the peak stays within it, the numbers equal."""
    qrels, run = write_deep(tmp_path)
    ref = ranklens.evaluate(str(qrels), str(run), DEEP, memory=float("inf"))
    budget = 200 << 20  # the labels fit: the chunks are sized for them
    # the defect this test would catch again: chunks sized from the run alone pass the
    # budget (checked at 120M, where the labels' share is large enough that a leaner
    # process still shows it)
    before = streamed(qrels, run, "120M", old_plan=True)
    assert before[3] > 120 << 20, before[3] / 2**20
    for memory, limit in (("200M", budget), ("150M", 150 << 20)):  # 150M: labels in shards
        ids, values, means, peak = streamed(qrels, run, memory)
        assert peak <= limit, (memory, peak / 2**20)
        assert ids == ref.query_ids
        for m in DEEP:
            assert means[m] == ref.aggregate[m], m  # bit-identical
            assert values[m] == ref.per_query[m].tolist(), m


def test_labels_in_shards_give_the_in_memory_numbers(tmp_path, monkeypatch):
    """Labels read in shards by query (forced here on a small case): missing and unlabelled
    queries, ties and every metric exactly as in memory; a bad line is named by the file's
    own line, in the run and in the labels."""
    qrels, run = write_case(tmp_path, n_queries=1500)
    ref = ranklens.evaluate(str(qrels), str(run), METRICS, memory=float("inf"))
    monkeypatch.setattr(stream_mod, "label_shard_count", lambda *a: 7)
    got = evaluate_file(qrels, run, METRICS, memory=10_000_000)
    same(got, ref)
    skip = evaluate_file(qrels, run, METRICS, memory=10_000_000, missing="skip")
    same(skip, ranklens.evaluate(str(qrels), str(run), METRICS, missing="skip",
                                 memory=float("inf")))  # fmt: skip
    lines = run.read_text().splitlines(keepends=True)
    bad = len(lines) // 2
    fields = lines[bad].split()
    fields[4] = "high"
    lines[bad] = " ".join(fields) + "\n"
    run.write_text("".join(lines))
    with pytest.raises(InputError, match=rf"run.txt:{bad + 1}:"):
        evaluate_file(qrels, run, ["P@5"], memory=10_000_000)
    run.write_text("".join(lines[:bad] + lines[bad + 1 :]))
    labels = qrels.read_text().splitlines(keepends=True)
    fields = labels[3].split()
    labels[3] = " ".join([*fields[:3], "x"]) + "\n"  # not a grade
    qrels.write_text("".join(labels))
    with pytest.raises(InputError, match=r"qrels.txt:4:"):
        evaluate_file(qrels, run, ["P@5"], memory=10_000_000)


def test_the_shard_count_follows_what_reading_the_labels_takes(tmp_path):
    """One shard when reading the labels fits in the budget, more as it leaves less room;
    labels in memory or in another format are read whole."""
    qrels, _ = write_case(tmp_path, n_queries=300)
    need = labelshards.label_bytes(qrels)
    size, lines = qrels.stat().st_size, qrels.read_bytes().count(b"\n")
    assert need == pytest.approx(labelshards.LABEL_READ_LINE_BYTES * lines
                                 + labelshards.LABEL_READ_FILE_BYTES * size, rel=0.01)  # fmt: skip
    gz = tmp_path / "qrels.txt.gz"
    gz.write_bytes(gzip.compress(qrels.read_bytes()))
    read = gz.stat().st_size * labelshards.GZ_RATIO * labelshards.LABEL_READ_BYTES
    assert labelshards.label_bytes(gz) == read
    assert labelshards.label_shard_count(qrels, "trec", float("inf")) == 1
    assert labelshards.label_shard_count(qrels, "trec", 10**12) == 1
    held = labelshards.resident_bytes()
    tight = int((held + need // 3) / labelshards.LABEL_SHARE)
    assert labelshards.label_shard_count(qrels, "trec", tight) > 1
    assert labelshards.label_shard_count(qrels, "jsonl", tight) == 1
    assert labelshards.label_shard_count({"q": ["d"]}, "trec", tight) == 1
