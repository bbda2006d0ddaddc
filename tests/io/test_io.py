"""TREC, JSON and JSONL readers and writers; malformed input names file, line and field."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ranklens
from ranklens import InputError, Qrels, Run, read_qrels, read_run
from ranklens.io.jsonl import write_qrels_jsonl, write_run_jsonl
from ranklens.io.trec import write_qrels, write_run


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_trec_round_trip(tmp_path):
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}})
    run = Run.from_dict({"q1": {"a": 1.5, "b": 2.5, "x": 0.1}, "q2": {"c": 3.0}}, name="mine")
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.txt")
    assert read_qrels(tmp_path / "qrels.txt") == qrels
    back = read_run(tmp_path / "run.txt")
    assert back.name == "mine"
    assert back.to_dict() == run.to_dict()
    lines = (tmp_path / "run.txt").read_text().splitlines()
    assert lines[0] == "q1 Q0 b 1 2.5 mine"


def test_comments_blank_lines_hash_in_ids_and_extra_columns(tmp_path):
    q = write(tmp_path, "q.txt", "# a comment\n\nq1 0 CR#93 1\n  # indented comment\nq1 0 d2 0\n")
    r = write(tmp_path, "r.txt", "q1 Q0 CR#93 1 2.0 tag extra junk\nq1\tQ0\td2\t2\t1.0\ttag\n")
    ev = ranklens.evaluate(q, r, ["P@1", "num_ret"])
    assert ev["P@1"] == 1.0 and ev["num_ret"] == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 0 d1 1\nq1 0 d2\n", r"q.txt:2: expected 4 fields \(qid iter docno rel\), found 3"),
        ("q1 0 d1 1\nq1 0 d2 x\n", r"q.txt:2: relevance 'x' of document 'd2' is not an integer"),
        ("q1 0 d1 1\nq1 0 d2 1.5\n", r"q.txt:2: relevance '1.5'"),
        ("q1 0 d1 1\n# c\nq1 0 d1 0\n", r"judged twice for query 'q1' \(lines 1 and 3\)"),
    ],
)
def test_malformed_qrels_name_file_and_line(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_qrels(write(tmp_path, "q.txt", text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n", r"r.txt:2: expected 6 fields"),
        ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 high t\n", r"r.txt:2: score 'high' of document 'd2'"),
        ("q1 Q0 d1 1 nan t\n", r"r.txt:1: score 'nan' of document 'd1' is not a finite"),
    ],
)
def test_malformed_runs_name_file_and_line(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_run(write(tmp_path, "r.txt", text))


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match=r"nope\.txt: cannot read the file"):
        read_run(tmp_path / "nope.txt")


def test_duplicate_in_run_file_is_named(tmp_path):
    q = write(tmp_path, "q.txt", "q1 0 d1 1\n")
    r = write(tmp_path, "r.txt", "q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\n")
    with pytest.raises(
        ranklens.DuplicateDocumentError, match=r"'d1' appears more than once in query 'q1'"
    ):
        ranklens.evaluate(q, r, ["P@1"])


def test_large_file_fast_path_equals_line_parser(tmp_path):
    """pyarrow's reader (files over 64 KiB) and the line parser give identical runs."""
    rng = np.random.default_rng(0)
    lines = []
    for q in range(60):
        for d in rng.choice(400, 60, replace=False):
            lines.append(f"q{q} Q0 doc{d} 0 {rng.integers(0, 20) / 4} tag\n")
    big = write(tmp_path, "big.txt", "".join(lines))
    assert big.stat().st_size > 1 << 16
    commented = write(tmp_path, "commented.txt", "# header\n" + "".join(lines))
    a, b = read_run(big), read_run(commented)
    assert a.to_dict() == b.to_dict() and a.name == b.name == "tag"
    bad = write(tmp_path, "bad.txt", "".join(lines[:-1]) + "q9 Q0 docX 0 oops tag\n")
    with pytest.raises(InputError, match=rf"bad.txt:{len(lines)}: score 'oops'"):
        read_run(bad)


def test_jsonl_round_trip_plain_and_grouped(tmp_path):
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0}})
    write_qrels_jsonl(qrels, tmp_path / "q.jsonl")
    assert read_qrels(tmp_path / "q.jsonl") == qrels
    grouped = Qrels.from_groups({"q1": [["a", "b"], ["c"]]}, {"q1": [2, 1]})
    write_qrels_jsonl(grouped, tmp_path / "g.jsonl")
    assert read_qrels(tmp_path / "g.jsonl") == grouped
    run = Run.from_dict({"q1": {"a": 1.0, "b": 2.0}})
    write_run_jsonl(run, tmp_path / "r.jsonl")
    assert read_run(tmp_path / "r.jsonl").to_dict() == run.to_dict()


def test_json_objects(tmp_path):
    (tmp_path / "q.json").write_text(json.dumps({"q1": {"a": 1}}))
    (tmp_path / "r.json").write_text(json.dumps({"q1": ["b", "a"]}))
    assert ranklens.evaluate(tmp_path / "q.json", tmp_path / "r.json", ["rr"])["rr"] == 0.5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"query_id": "q1", "relevant": {"a": 1}}\n{"query_id": "q2"\n', r"q.jsonl:2: invalid"),
        ('{"relevant": {"a": 1}}\n', r"q.jsonl:1: missing field 'query_id'"),
        ('{"query_id": "q1"}\n', r"q.jsonl:1: no labels: give 'relevant' \(or 'relevant_d"),
        ('{"query_id": "q1", "groups": "a"}\n', r"q.jsonl:1: field 'groups' must be"),
        (
            '{"query_id": "q1", "relevant": ["a"]}\n{"query_id": "q1", "relevant": ["b"]}\n',
            r"q.jsonl:2: query 'q1' appears on more than one line",
        ),
    ],
)
def test_malformed_jsonl_qrels(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_qrels(write(tmp_path, "q.jsonl", text))


def test_malformed_jsonl_run(tmp_path):
    p = write(tmp_path, "r.jsonl", '{"query_id": "q1", "hits": [{"id": "a", "score": "x"}]}\n')
    with pytest.raises(InputError, match=r"r.jsonl:1: hit 0 \('a'\) needs a numeric 'score'"):
        read_run(p)


def test_grouped_qrels_cannot_be_written_as_trec(tmp_path):
    with pytest.raises(InputError, match="write it as JSONL"):
        write_qrels(Qrels.from_groups({"q": [["a", "b"]]}), tmp_path / "x.txt")
