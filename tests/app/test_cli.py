"""The ``ranklens`` command: evaluate (table, json, trec) and demo."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ranklens.app.cli import main
from ranklens.app.demo import demo_paths


def run_cli(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def evaluate_demo(capsys, *args):
    """``ranklens evaluate`` on the bundled demo qrels and BM25 run."""
    p = demo_paths()
    return run_cli(capsys, "evaluate", str(p["qrels"]), str(p["bm25"]), *args)


def test_json_output_reports_trec_names_as_given(capsys):
    code, out, _ = evaluate_demo(
        capsys,
        "-m",
        "ndcg_cut_10",
        "-m",
        "P.5,10",
        "-m",
        "mrr@10",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    assert set(data["aggregate"]) == {"ndcg_cut_10", "P_5", "P_10", "mrr@10"}
    assert set(data["per_query"]) == {f"q{i:02d}" for i in range(1, 13)}
    mean = sum(v["ndcg_cut_10"] for v in data["per_query"].values()) / 12
    assert data["aggregate"]["ndcg_cut_10"] == pytest.approx(mean)
    assert data["counts"]["queries_evaluated"] == 12


def test_trec_output_layout(capsys):
    _, out, _ = evaluate_demo(
        capsys,
        "-m",
        "map",
        "-m",
        "num_rel",
        "--format",
        "trec",
        "-q",
    )
    lines = out.splitlines()
    # trec_eval's order whatever the order of -m: num_rel before map
    assert lines[-1].startswith("map                   \tall\t0.")
    assert lines[-2].startswith("num_rel               \tall\t")
    assert lines[-2].split("\t")[2].isdigit()
    assert len(lines) == 2 * 12 + 2


def test_level_and_skip_missing_flags(capsys, tmp_path):
    (tmp_path / "q").write_text("a 0 d1 1\na 0 d2 2\nb 0 d3 2\n")
    (tmp_path / "r").write_text("a Q0 d1 1 2 t\na Q0 d2 2 1 t\n")
    args = [
        "evaluate",
        str(tmp_path / "q"),
        str(tmp_path / "r"),
        "-m",
        "P@2",
        "-l",
        "2",
        "--format",
        "json",
    ]
    _, out, _ = run_cli(capsys, *args)
    assert json.loads(out)["aggregate"]["P@2"] == 0.25
    _, out, _ = run_cli(capsys, *args, "--skip-missing")
    assert json.loads(out)["aggregate"]["P@2"] == 0.5


def test_errors_go_to_stderr_with_status_2(capsys, tmp_path):
    (tmp_path / "q").write_text("a 0 d1 1\n")
    (tmp_path / "r").write_text("a Q0 d1 1 two t\n")
    code, out, err = run_cli(capsys, "evaluate", str(tmp_path / "q"), str(tmp_path / "r"))
    assert code == 2 and out == ""
    assert "r:1: score 'two'" in err
    code, _, err = run_cli(
        capsys, "evaluate", str(tmp_path / "q"), str(tmp_path / "q"), "-m", "ndgc@10"
    )
    assert code == 2 and "closest valid names: ndcg" in err


def test_table_output(capsys):
    code, out, _ = evaluate_demo(capsys)
    assert code == 0 and "ndcg@10" in out and "12 queries evaluated" in out


def test_demo_runs_as_a_console_script(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "ranklens", "demo"],
        capture_output=True,
        text=True,
        timeout=1800,  # a guard against a hang, not a speed check (benchmarks time things)
        check=True,
        cwd=tmp_path,
    )
    out = proc.stdout
    for name in (
        "llamaindex-bm25",
        "llamaindex-bm25-sentences",
        "langchain-bm25s",
        "haystack-bm25",
    ):
        assert f"ran {name}" in out
    assert "paired comparisons" in out and "Holm correction" in out
    assert "What LlamaIndex's own RetrieverEvaluator reports" in out and "Next:" in out
    assert "One sweep over the frameworks' BM25" in out and "cross-validated" in out
    assert "BM25 (LlamaIndex) puts an outdated page first for 11 of 36" in " ".join(out.split())
    html = (tmp_path / "ranklens-demo" / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "merrow-lighthouses" in html
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ranklens-demo"]  # nothing else
    assert "the demo writes its files to ranklens-demo/" in out


def test_demo_data_files_are_the_generator_output(tmp_path):
    from ranklens.app import demo_data

    demo_data.write(tmp_path)
    for name in ("corpus.jsonl", "questions.jsonl", "evidence.jsonl"):
        assert (tmp_path / name).read_text() == (demo_data.demo_folder() / name).read_text()
    ds = demo_data.load()
    assert len(ds.queries) == 40 and len(ds.corpus) == 150 and ds.qrels.grouped


def test_convention_and_duplicates_flags(capsys, tmp_path):
    (tmp_path / "q").write_text("a 0 d1 1\na 0 d2 1\n")
    (tmp_path / "r").write_text("a Q0 d9 1 3 t\na Q0 d1 2 2 t\n")
    args = ["evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "P@5", "--format", "json"]
    _, out, _ = run_cli(capsys, *args)
    assert json.loads(out)["aggregate"]["P@5"] == 0.2  # trec: ÷ k
    _, out, _ = run_cli(capsys, *args, "--convention", "llamaindex")
    data = json.loads(out)
    assert data["aggregate"]["P@5"] == 0.5  # LlamaIndex: ÷ distinct retrieved
    assert data["options"]["convention"] == "llamaindex"
    (tmp_path / "r2").write_text("a Q0 d1 1 3 t\na Q0 d1 2 2 t\n")
    code, _, err = run_cli(capsys, "evaluate", str(tmp_path / "q"), str(tmp_path / "r2"))
    assert code == 2 and "appears more than once" in err
    _, out, _ = run_cli(
        capsys,
        "evaluate",
        str(tmp_path / "q"),
        str(tmp_path / "r2"),
        "-m",
        "num_ret",
        "--duplicates",
        "first",
        "--format",
        "json",
    )
    assert json.loads(out)["aggregate"]["num_ret"] == 1


def test_bare_p_recall_success_on_the_command_line_are_trec_evals_cutoff_families(capsys):
    code, out, _ = evaluate_demo(
        capsys, "-m", "P", "-m", "recall", "-m", "success", "-m", "map", "--format", "trec"
    )
    assert code == 0
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    cutoffs = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    want = [f"P_{k}" for k in cutoffs] + [f"recall_{k}" for k in cutoffs]
    assert sorted(names) == sorted([*want, "success_1", "success_5", "success_10", "map"])
    # in Python a bare "P" stays precision over the whole ranking
    import ranklens

    p = demo_paths()
    assert list(ranklens.evaluate(str(p["qrels"]), str(p["bm25"]), ["P"]).per_query) == ["P"]


def test_trec_evals_c_flag_is_accepted_and_is_the_default(capsys):
    _, with_c, _ = evaluate_demo(capsys, "-c", "-m", "map", "--format", "trec")
    _, without, _ = evaluate_demo(capsys, "-m", "map", "--format", "trec")
    assert with_c == without and with_c.startswith("map")
    code, _, err = evaluate_demo(capsys, "-c", "--skip-missing", "-m", "map")
    assert code == 2 and "pick one" in err


def test_max_docs_keeps_each_querys_first_n_in_trec_order(capsys, tmp_path):
    import ranklens

    qp, rp = tmp_path / "q.txt", tmp_path / "r.txt"
    qp.write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d4 1\nq2 0 e1 1\n")
    # q1: d3 and d4 tie at 2.0 (trec order: d4 before d3); q2 shorter than N
    rp.write_text(
        "q1 Q0 d1 1 3.0 r\nq1 Q0 d3 2 2.0 r\nq1 Q0 d4 3 2.0 r\nq1 Q0 d2 4 1.0 r\n"
        "q2 Q0 x 1 5.0 r\nq2 Q0 e1 2 4.0 r\n"
    )
    code, out, _ = run_cli(
        capsys, "evaluate", str(qp), str(rp), "-M", "2", "-m", "recall_1000", "-q",
        "--format", "trec",
    )  # fmt: skip
    assert code == 0
    got = {tuple(line.split()[:2]): float(line.split()[2]) for line in out.splitlines()}
    # q1 keeps d1, d4 (d4 wins the tie by id): 2 of 3 relevant; q2 keeps both
    assert got[("recall_1000", "q1")] == 0.6667  # printed to 4 decimals, as trec_eval
    assert got[("recall_1000", "q2")] == 1.0
    run = ranklens.read_run(rp)
    assert run.top(2).to_lists() == {"q1": ["d1", "d4"], "q2": ["x", "e1"]}
    with pytest.raises(ranklens.InputError, match=">= 1"):
        run.top(0)
