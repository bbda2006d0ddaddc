"""``ranklens evaluate --format trec`` as a drop-in for trec_eval 10: the very command lines
of trec_eval's own ``make quicktest`` (and of the shared real runs) print, byte for byte,
what trec_eval 10.0 printed — measure order, per-query blocks, ``runid``, ``relstring``,
``-c``, ``-M``, ``-l``, ``-Z``, parameters after a dot, judgment groups (``-R qrels_jg``).
(The preference formats, ``-R prefs``/``qrels_prefs``, are refused by name.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ranklens.app.cli import main

QUICKTEST = [
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.comment.test", "qrels.comment.test results.comment.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    (
        "out.test.meas_params",
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
        "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
        "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test",
    ),
    ("out.test.aqZ", "-q -m all_trec -Z zscores_file qrels.test results.test"),
    ("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg qrels.123 results.test"),
    ("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg qrels.comments.123 results.test"),
]


def _argv(args: str, folder) -> list[str]:
    out = []
    for a in args.split():
        out.append(str(folder / a) if (folder / a).is_file() else a)
    return ["evaluate", "--format", "trec", *out]


def _printed(capsys, argv: list[str]) -> str:
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize(("expected", "args"), QUICKTEST)
def test_trec_eval_quicktest_byte_for_byte(shared, capsys, expected, args):
    d = shared("trec_eval_test")
    want = (d / expected).read_text()
    got = _printed(capsys, _argv(args, d))
    assert got.splitlines() == want.splitlines()
    assert len(got.splitlines()) >= 30


@pytest.mark.parametrize(
    ("folder", "qrels", "run", "expected", "flags"),
    [
        (
            "trec_dl19_passage_bm25",
            "qrels.dl19-passage.txt",
            "run.msmarco-v1-passage.bm25-default.dl19.txt",
            "trec_eval-10.0.q.all_trec.txt",
            [],
        ),
        (
            "trec_dl19_passage_bm25",
            "qrels.dl19-passage.txt",
            "run.msmarco-v1-passage.bm25-default.dl19.txt",
            "trec_eval-10.0.q.l2.all_trec.txt",
            ["-l", "2"],
        ),
        (
            "trec_covid_beir_bm25",
            "qrels.beir-v1.0.0-trec-covid.test.txt",
            "run.beir.bm25-flat.trec-covid.txt",
            "trec_eval-10.0.q.all_trec.txt",
            [],
        ),
    ],
)
def test_real_runs_byte_for_byte(shared, capsys, folder, qrels, run, expected, flags):
    d = shared(folder)
    argv = ["evaluate", "--format", "trec", "-q", "-m", "all_trec", *flags]
    got = _printed(capsys, [*argv, str(d / qrels), str(d / run)])
    assert got.splitlines() == (d / "expected" / expected).read_text().splitlines()


def test_run_from_standard_input_and_no_summary(shared):
    """``-`` reads the run from standard input; ``-n`` prints no summary."""
    d = shared("trec_eval_test")
    cmd = [sys.executable, "-m", "ranklens.app.cli", "evaluate", "--format", "trec"]
    with open(d / "results.test", "rb") as fh:
        done = subprocess.run(
            [*cmd, "-q", "-n", "-m", "all_trec", str(d / "qrels.test"), "-"],
            stdin=fh,
            capture_output=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    want = [x for x in (d / "out.test.aq").read_text().splitlines() if "\tall\t" not in x]
    assert done.stdout.decode().splitlines() == want


def test_judged_only_flag_is_the_api_option(shared, capsys):
    import ranklens

    d = shared("trec_eval_test")
    got = _printed(
        capsys,
        ["evaluate", "--format", "json", "-J", "-m", "P.100", str(d / "qrels.test"),
         str(d / "results.test")],
    )  # fmt: skip
    ev = ranklens.evaluate(d / "qrels.test", d / "results.test", ["P_100"], judged_only=True)
    plain = ranklens.evaluate(d / "qrels.test", d / "results.test", ["P_100"])
    assert f'"P_100": {ev["P_100"]!r}' in got
    assert ev["P_100"] > plain["P_100"]  # unjudged documents left the top 100


def test_collection_size_feeds_utility(shared, capsys):
    d = shared("trec_eval_test")
    base = ["evaluate", "--format", "trec", "-m", "utility.0,0,0,1"]
    files = [str(d / "qrels.test"), str(d / "results.test")]
    without = _printed(capsys, [*base, *files])
    with_n = _printed(capsys, [*base, "-N", "100000", *files])
    # d * (N + rel_ret - ret - R), averaged: N moves it by exactly N
    value = float(with_n.split()[-1]) - float(without.split()[-1])
    assert value == pytest.approx(100000, abs=1e-3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-R", "prefs"], "preference formats and measures are not implemented"),
        (["-R", "qrels_prefs"], "preference formats and measures are not implemented"),
        (["-R", "qrels_jg", "-m", "relstring"], "not with -R qrels_jg"),
        (["-R", "qrels_jg", "--subtopics"], "pick one"),
        (["-R", "xml"], "the formats are qrels"),
        (["-m", "all_prefs"], "preference measures"),
        (["-m", "relstring.x"], "relstring takes a number"),
        (["--format", "table", "-n"], "add --format trec"),
    ],
)
def test_trec_eval_flags_ranklens_cannot_honour_are_refused(shared, capsys, argv, message):
    d = shared("trec_eval_test")
    fmt = [] if "--format" in argv else ["--format", "trec"]
    code = main(["evaluate", *fmt, *argv, str(d / "qrels.test"), str(d / "results.test")])
    assert code == 2
    assert message in capsys.readouterr().err


def test_trec_eval_version_9_is_pytrec_eval(shared):
    """--trec-version 9: float32 scores and trec_eval 9's recall cutoffs, as pytrec_eval."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    import ranklens

    d = shared("trec_eval_test")
    qrels = ranklens.read_qrels(d / "qrels.rel_level").to_dict()
    run = ranklens.read_run(d / "results.test").to_dict()
    measures = {"iprec_at_recall", "11pt_avg", "map", "P.5"}
    want = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    names = [f"iprec_at_recall_{r / 10:.2f}" for r in range(11)] + ["11pt_avg", "map", "P_5"]
    v9 = ranklens.evaluate(qrels, run, names, trec_eval_version="9")
    v10 = ranklens.evaluate(qrels, run, names)
    differs = 0
    for q in want:
        for name in names:
            assert v9.query(q)[name] == pytest.approx(want[q][name], abs=1e-12), (q, name)
            differs += v10.query(q)[name] != pytest.approx(want[q][name], abs=1e-12)
    assert differs > 0  # trec_eval 10's rounding does change some values here
