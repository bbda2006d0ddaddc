"""The pytest plugin and the example CI project (examples/ci_gate), run through pytester in
subprocesses as a user's suite runs: the committed baseline passes, a chunker change fails
with the verdict table and regressed queries, --ranklens-update-baselines accepts it,
-p no:ranklens turns the plugin off, pytest-xdist works, GitHub's step summary is written,
and the workflow's own commands run."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ci_gate"


@pytest.fixture
def project(pytester):
    for item in EXAMPLE.iterdir():
        if item.name in ("__pycache__", ".pytest_cache"):
            continue
        target = pytester.path / item.name
        if item.is_dir():
            shutil.copytree(item, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(item, target)
    return pytester


def test_the_committed_baseline_passes_and_a_regression_fails(project, monkeypatch):
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    monkeypatch.setenv("FAQ_CHUNK_WORDS", "6")  # a chunker that keeps 6 words per passage
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "gate FAILED (24 queries" in out
    assert "mrr@10    FAIL" in out and "dropped by more than 0.05" in out
    assert "faq-09 'restore an old backup of my notes'" in out
    assert "dropped out of the top 10: backup-1" in out
    assert "Traceback" not in out  # a pytest failure, not a stack trace


def test_update_baselines_accepts_the_change(project, monkeypatch):
    monkeypatch.setenv("FAQ_CHUNK_WORDS", "6")
    baseline = project.path / "tests" / "baselines" / "faq.json"
    before = baseline.read_text()
    project.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(failed=1)
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--ranklens-update-baselines")
    result.assert_outcomes(passed=1)
    assert baseline.read_text() != before
    project.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_plugin_can_be_turned_off(project):
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:ranklens")
    result.assert_outcomes(errors=1)
    assert "fixture 'ranklens_gate' not found" in result.stdout.str()


def test_it_runs_under_xdist_and_writes_the_step_summary(project, monkeypatch):
    pytest.importorskip("xdist")
    tests = project.path / "tests"
    second = (
        (tests / "test_retrieval_quality.py")
        .read_text()
        .replace("def test_faq_retrieval_did_not_regress", "def test_faq_retrieval_again")
    )
    (tests / "test_second.py").write_text(second)
    summary = project.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=2)
    text = summary.read_text()
    assert text.count("### ranklens gate: gate passed (24 queries") == 2
    assert "| mrr@10 | ✅ pass |" in text


def test_the_workflow_commands_run(project):
    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load(
        (project.path / ".github" / "workflows" / "retrieval-gate.yml").read_text()
    )
    steps = [s["run"] for s in flow["jobs"]["gate"]["steps"] if "run" in s]
    assert steps and any("pytest" in s for s in steps) and any("ranklens gate" in s for s in steps)
    for step in steps:
        for line in step.strip().splitlines():
            words = shlex.split(line.split(" > ")[0])
            assert words[:2] == ["uv", "run"], line
            tool = {
                "pytest": ["-m", "pytest", "-p", "no:cacheprovider"],
                "python": [],
                "ranklens": ["-m", "ranklens"],
            }[words[2]]
            out = subprocess.run(
                [sys.executable, *tool, *words[3:]],
                cwd=project.path,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert out.returncode == 0, (line, out.stdout[-2000:], out.stderr[-2000:])
            if " > " in line:
                (project.path / line.split(" > ")[1].strip()).write_text(out.stdout)
            if words[2] == "ranklens":
                assert "gate passed" in out.stdout


FRESHNESS_SUITE = """
from pathlib import Path

import ranklens

VERSIONS = ranklens.Versions.from_records(
    [{"doc_id": f"{v}{i}", "group": f"g{i}", "valid_from": t}
     for i in range(40) for v, t in (("old", "2020-01-01"), ("new", "2025-01-01"))]
)
LABELS = {f"q{i}": {f"new{i}": 1} for i in range(40)}
BASELINE = Path(__file__).parent / "baselines" / "fresh.json"


def first_hits_outdated(stale):
    return {q: ([f"old{i}", f"new{i}"] if i < stale else [f"new{i}", f"old{i}"])
            for i, q in enumerate(LABELS)}


ranklens.gate(LABELS, first_hits_outdated(4), BASELINE, ["outdated@1"], versions=VERSIONS,
              update_baseline=True)  # 4 of 40 first hits outdated


def test_more_outdated_first_hits(ranklens_gate):  # 20 of 40: +0.4
    ranklens_gate(LABELS, first_hits_outdated(20), "baselines/fresh.json", ["outdated@1"],
                  margin=0.05, ceilings={"outdated@1": 0.5}, versions=VERSIONS)


def test_no_outdated_first_hit(ranklens_gate):  # 0 of 40: a fall
    ranklens_gate(LABELS, first_hits_outdated(0), "baselines/fresh.json", ["outdated@1"],
                  margin=0.05, ceilings={"outdated@1": 0.5}, versions=VERSIONS)
"""


def test_the_plugin_gates_a_metric_where_lower_is_better(pytester):
    """outdated@1 through the fixture: a rise of the outdated first hits fails its test with
    the rise in words, a fall passes."""
    pytester.makepyfile(test_fresh=FRESHNESS_SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert "FAILED test_fresh.py::test_more_outdated_first_hits" in out
    assert "outdated@1 (lower is better): rose by more than 0.05" in out
    assert "rise <= 0.05, <= 0.5" in out and "+0.4000" in out
