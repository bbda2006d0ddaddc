"""``ranklens stages``: the command's numbers are evaluate_stages' on the same files, in
every format; bad input exits 2 naming the flag or the file, never with a traceback."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from ranklens import Statistics, evaluate_stages
from ranklens.app.cli import main

LABELS = {"q1": {"a": 1, "b": 1, "c": 1}, "q2": {"d": 2, "e": 1}, "q3": {"f": 1}, "q4": {"g": 0}}
STAGES = {
    "bm25": {"q1": ["a", "x", "b", "c"], "q2": ["d", "e", "y"], "q3": ["z"], "q4": ["g"]},
    "rerank": {"q1": ["b", "x"], "q2": ["e", "d"], "q3": ["f"], "q4": ["g"]},
    "dedup": {"q1": ["b"], "q2": ["e", "d"], "q3": ["f"], "q4": []},
}


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in LABELS.items() for d, g in docs.items())
    )
    runs = {}
    for name, run in STAGES.items():
        path = tmp_path / f"{name}.txt"
        path.write_text(
            "".join(
                f"{q} Q0 {d} {r} {10 - r} {name}\n"
                for q, docs in run.items()
                for r, d in enumerate(docs, 1)
            )
        )
        runs[name] = path
    return qrels, runs


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def stage_args(runs):
    return [x for name, path in runs.items() for x in ("--stage", f"{name}={path}")]


def expected(qrels, runs):
    return evaluate_stages(
        str(qrels),
        {n: str(p) for n, p in runs.items()},
        ["recall", "ndcg@10"],
        stats=Statistics(n_resamples=500, seed=3),
    )


def test_json_equals_evaluate_stages(capsys, files):
    qrels, runs = files
    code, out, _ = run_cli(
        capsys, "stages", qrels, *stage_args(runs), "--format", "json", "--resamples", 500,
        "--seed", 3, "--metrics", "recall", "ndcg@10",
    )  # fmt: skip
    assert code == 0
    got = json.loads(out)
    want = expected(qrels, runs).to_dict()
    assert got["stages"] == ["bm25", "rerank", "dedup"]
    for stage, values in want["metrics"].items():
        assert got["metrics"][stage] == pytest.approx(values)
    assert got["fates"] == want["fates"] == {
        "found": 4, "outside the budget": 0, "filtered": 1, "cut by rank": 1,
        "never retrieved": 0,
    }  # fmt: skip
    for a, b in zip(got["losses"], want["losses"]):
        assert a == pytest.approx(b)
    assert got["counts"]["dedup"]["empty"] == 1 and got["counts"]["rerank"]["added"] == 1


def test_markdown_and_terminal_show_the_stage_table(capsys, files):
    qrels, runs = files
    ev = expected(qrels, runs)
    code, out, _ = run_cli(capsys, "stages", qrels, *stage_args(runs), "--format", "markdown",
                           "--resamples", 500, "--seed", 3, "--query", "q1")  # fmt: skip
    assert code == 0
    rows = [
        [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        for line in out.splitlines()
        if line.startswith("| ")
    ]
    head = rows[0]
    table = {r[0]: dict(zip(head, r)) for r in rows[2:5]}
    for row in ev.table_rows():
        cells = table[row["stage"]]
        assert float(cells["held"]) == pytest.approx(row["held"], abs=5e-5)
        assert float(cells["recall"]) == pytest.approx(row["metrics"]["recall"], abs=5e-5)
        assert int(cells["cut by rank"]) == row["lost"].get("cut by rank", 0)
    assert "    query q1: 3 relevant units" in out  # the drill-down as an indented block
    assert "a (grade 1): bm25 #1  rerank –  dedup –  -> filtered at rerank" in out
    assert "c (grade 1): bm25 #4  rerank –  dedup –  -> cut by rank at rerank" in out
    code, out, _ = run_cli(capsys, "stages", qrels, *stage_args(runs), "--resamples", 500)
    assert code == 0 and "bm25 → rerank" in out and "\x1b[" not in out  # no colour in a pipe


def test_a_small_memory_budget_gives_the_same_numbers(capsys, files):
    qrels, runs = files
    args = ["stages", qrels, *stage_args(runs), "--format", "json", "--resamples", 200]
    _, whole, _ = run_cli(capsys, *args)
    code, sharded, _ = run_cli(capsys, *args, "--memory", "2K")
    assert code == 0 and json.loads(sharded) == json.loads(whole)


def test_html_is_written_to_output(capsys, files, tmp_path):
    qrels, runs = files
    path = tmp_path / "out" / "stages.html"
    path.parent.mkdir()
    code, out, err = run_cli(capsys, "stages", qrels, *stage_args(runs), "--format", "html",
                             "-o", path, "--resamples", 200)  # fmt: skip
    assert code == 0 and out == "" and str(path) in err
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>")
    svg = re.search(r"<svg class=\"chart\" data-chart=\"waterfall\".*?</svg>", page, re.S)
    root = ET.fromstring(svg.group())
    held = [r.get("data-stage") for r in root.iter("{http://www.w3.org/2000/svg}rect")
            if r.get("class") == "held"]  # fmt: skip
    assert held == ["bm25", "rerank", "dedup"]


def test_a_budget_counts_the_texts_of_a_corpus(capsys, files, tmp_path):
    """--budget 8char with --texts: rerank keeps b (10 characters: nothing fits) for q1 and
    e (5), d (5) for q2 (e fits, d is past 8); f (3) fits for q3."""
    qrels, runs = files
    corpus = tmp_path / "corpus.jsonl"
    sizes = {"a": 10, "b": 10, "c": 30, "d": 5, "e": 5, "f": 3, "g": 4, "x": 10, "y": 3, "z": 2}
    corpus.write_text("".join(json.dumps({"_id": d, "text": "w" * n}) + "\n"
                              for d, n in sizes.items()))  # fmt: skip
    two = {k: runs[k] for k in ("bm25", "rerank")}
    code, out, _ = run_cli(capsys, "stages", qrels, *stage_args(two), "--budget", "8char",
                           "--texts", corpus, "--format", "json", "--resamples", 200)  # fmt: skip
    assert code == 0
    got = json.loads(out)
    assert got["budget"] == "8char"
    assert got["fates"]["outside the budget"] == 2  # b of q1, d of q2
    assert got["losses"][-1]["stage"] == "context"
    # held in the context: q1 0 of 3, q2 1 of 2, q3 1 of 1
    assert got["losses"][-1]["held_after"] == pytest.approx((0 + 1 / 2 + 1) / 3)


def test_a_dataset_folder_brings_its_corpus_for_the_budget(capsys, files, tmp_path):
    """LABELS as a BEIR folder: its corpus gives the sizes, as --texts would."""
    from ranklens import Dataset, read_qrels
    from ranklens.io.beir import write_beir

    qrels, runs = files
    corpus = tmp_path / "corpus.jsonl"
    sizes = {"a": 10, "b": 10, "c": 30, "d": 5, "e": 5, "f": 3, "g": 4, "x": 10, "y": 3, "z": 2}
    corpus.write_text("".join(json.dumps({"_id": d, "text": "w" * n}) + "\n"
                              for d, n in sizes.items()))  # fmt: skip
    labels = read_qrels(qrels)
    folder = tmp_path / "beir"
    write_beir(
        Dataset(qrels=labels, queries={q: q for q in labels.query_ids},
                corpus={d: {"text": "w" * n} for d, n in sizes.items()}),
        folder,
    )  # fmt: skip
    two = [*stage_args({k: runs[k] for k in ("bm25", "rerank")})]
    common = ["--budget", "8char", "--format", "json", "--resamples", 200]
    _, by_texts, _ = run_cli(capsys, "stages", qrels, *two, *common, "--texts", corpus)
    code, by_folder, _ = run_cli(capsys, "stages", folder, *two, *common)
    assert code == 0 and json.loads(by_folder)["fates"] == json.loads(by_texts)["fates"]
    assert json.loads(by_folder)["fates"]["outside the budget"] == 2


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--stage", "bm25={missing}"], "--stage 'bm25="),
        (["--stage", "{bm25}"], "give NAME=RUN"),
        (["--stage", "a={bm25}", "--stage", "a={rerank}"], "the stage 'a' is given twice"),
        (["--stage", "a={bm25}", "--confidence", "2"], "argument --confidence"),
        (["--stage", "a={bm25}", "--resamples", "0"], "argument --resamples"),
        (["--stage", "a={bm25}", "--seed", "1.5"], "argument --seed"),
        (["--stage", "a={bm25}", "--straddle", "partal"], "did you mean 'partial'"),
        (["--stage", "a={bm25}", "--budget", "12xyz"], "--budget '12xyz'"),
        (["--stage", "a={bm25}", "--budget", "12"], "--budget '12': a rank, not a budget"),
        (["--stage", "a={bm25}", "--format", "pdf"], "argument --format"),
        (["--stage", "a={bm25}", "-o", "{tmp}/no/such/dir/x.html"], "--output"),
        (["--stage", "a={bm25}", "--query", "q9"], "--query 'q9'"),
        (["--stage", "a={bm25}", "--texts", "{tmp}/none.jsonl", "--budget", "10char"],
         "--texts"),
        (["--stage", "a={bm25}", "-m", "nosuch@3"], "nosuch"),
        (["--stage", "a={bm25}", "--memory", "12"], "ranklens stages --memory: memory"),
        (["--stage", "a={bm25}", "--memory", "lots"], "ranklens stages --memory: memory"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_naming_it(capsys, files, tmp_path, args, said):
    qrels, runs = files
    argv = [a.format(missing=tmp_path / "missing.txt", bm25=runs["bm25"], rerank=runs["rerank"],
                     tmp=tmp_path) for a in args]  # fmt: skip
    try:
        code, _, err = run_cli(capsys, "stages", qrels, *argv)
    except SystemExit as exc:  # argparse's own refusal of a flag's value
        code, err = exc.code, capsys.readouterr().err
    assert code == 2
    assert said in err
    assert "Traceback" not in err
