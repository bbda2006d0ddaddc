"""``ranklens synthesize``, ``ranklens check`` and ``ranklens estimate`` end to end on the
demo corpus: a test set written with its provenance, its leakage found, two runs estimated
with a judge named as module:function and a human sample; bad input named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _nolabels_case import bm25, word_overlap

import ranklens
from ranklens.app.cli import main
from ranklens.app.demo_data import load
from ranklens.io.beir import write_beir


def flat():
    """The demo set with its grouped labels flattened (BEIR has no groups)."""
    demo = load()
    return ranklens.Dataset(demo.queries, demo.qrels.to_dict(), demo.corpus, "demo")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nolabels-cli")
    demo = flat()
    write_beir(demo, tmp / "demo")
    for name, retrieve in (
        ("bm25", bm25(demo.corpus)),
        ("overlap", word_overlap(demo.corpus, 0.4)),
    ):
        run = ranklens.Run.from_dict({q: dict(retrieve(t)) for q, t in demo.queries.items()})
        ranklens.write_run(run, tmp / f"{name}.txt")
    (tmp / "judges.py").write_text(
        "def strict(query, passage):\n"
        "    words = {w.strip('?,.').lower() for w in query.split() if len(w) > 3}\n"
        "    return int(len(words & set(passage.lower().split())) >= 2)\n"
    )
    return tmp


def test_synthesize_then_check(files, capsys):
    out = files / "synthetic"
    assert (
        main(
            [
                "synthesize",
                str(files / "demo" / "corpus.jsonl"),
                "-o",
                str(out),
                "--max-overlap",
                "none",
                "-n",
                "60",
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    assert "questions kept from 60 passages by offline-stand-in" in printed.out
    assert (out / "provenance.jsonl").exists() and (out / "qrels" / "test.tsv").exists()
    rows = [json.loads(x) for x in (out / "provenance.jsonl").read_text().splitlines()]
    assert all(r["generator"] == "offline-stand-in" for r in rows)
    assert main(["check", str(out), "--json", str(files / "check.json")]) == 0
    shown = capsys.readouterr().out
    assert "contained in a passage they label relevant" in shown
    assert main(["check", str(out), "--strict"]) == 1
    found = json.loads((files / "check.json").read_text())
    assert found["findings"][0]["kind"] == "query_in_relevant"


def test_check_reports_missing_documents_and_contamination(files, capsys):
    broken = files / "broken"
    write_beir(flat(), broken)
    qrels = broken / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text() + "q01\tno-such-doc\t1\n")
    (broken / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq02\tlh01-visit\t2\n")
    assert main(["check", str(broken), "--against", "train"]) == 0
    shown = capsys.readouterr().out
    assert "point at documents the corpus does not hold: q01" in shown
    assert "appear (equal or near-equal) in split 'train'" in shown


def test_estimate_with_a_judge_named_on_the_command_line(files, capsys):
    argv = [
        "estimate",
        str(files / "demo"),
        f"bm25={files / 'bm25.txt'}",
        f"overlap={files / 'overlap.txt'}",
        "--judge",
        f"{files / 'judges.py'}:strict",
        "--human-sample",
        "30",
        "-m",
        "ndcg@10",
        "-m",
        "P@5",
        "--plan",
        "0.1",
        "--html",
        str(files / "est.html"),
        "--json",
        str(files / "est.json"),
        "--cache",
        str(files / "judge.jsonl"),
    ]
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert "judge only" in shown and "PPI++" in shown and "overlap − bm25" in shown
    assert "Human-labelled queries for a 95% interval 0.1 wide" in shown
    saved = json.loads((files / "est.json").read_text())
    assert saved["n"] == 30 and saved["judge"]["source"] == "model:strict"
    assert "<svg" in (files / "est.html").read_text()
    assert main(argv) == 0  # again: every judgment from the log
    assert "judge answers were read from the log" in capsys.readouterr().out


def test_bad_input_is_named(files, capsys):
    assert (
        main(
            [
                "synthesize",
                str(files / "demo"),
                "-o",
                str(files / "x"),
                "--generator",
                "no_such_module:gen",
            ]
        )
        == 2
    )
    assert "cannot import 'no_such_module'" in capsys.readouterr().err
    assert (
        main(
            [
                "estimate",
                str(files / "demo"),
                str(files / "bm25.txt"),
                "--judge",
                "offline",
                "--human-sample",
                "4",
            ]
        )
        == 2
    )
    assert "too small for an interval" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["synthesize", str(files / "demo"), "-o", str(Path(files / "y")),
              "--max-overlap", "lots"])  # fmt: skip
    assert e.value.code == 2
    assert "argument --max-overlap: must be a finite number in [0, 1] or 'none'" in (
        capsys.readouterr().err
    )


def test_demo_section_shows_the_leak_and_the_calibrated_estimate(tmp_path):
    from ranklens.app.demo import overlap_judge
    from ranklens.app.demo_nolabels import nolabels_section

    demo = load()
    retrievers = {
        "llamaindex-bm25": bm25(demo.corpus),
        "llamaindex-bm25-sentences": word_overlap(demo.corpus, 0.4),
    }
    results = {
        n: ranklens.run_retriever(r, demo, k=10, calls=ranklens.Calling(progress=False))
        for n, r in retrievers.items()
    }
    report = ranklens.compare(demo, results, ["ndcg@10"])
    html = tmp_path / "report.html"
    text = nolabels_section(
        demo,
        results,
        "llamaindex-bm25",
        overlap_judge,
        (retrievers["llamaindex-bm25"], {}),
        report,
        html,
    )
    assert "150 questions from the 150 passages" in text
    assert "are contained in\ntheir own passage" in text or "contained in their own" in text
    assert "on the generated questions" in text and "PPI++" in text
    assert "Estimated without full labels" in html.read_text()
