"""The renderers' types as a user's type checker sees them: a report's text formats are
``str``, the rich renderers give ``rich.table.Table``, the gate's renderers take a
``GateResult`` (a ``Report`` is refused), ``register_renderer`` gives back the function it
registered with its own type, ``display_copy`` a copy of the same class; and at run time
``render_text`` returns text or names a renderer that returned something else.

The type checks run mypy on a small file of ``assert_type`` calls (ranklens and rich
followed silently, every other package skipped), as tests/project/test_typing.py does for the
README's calls."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ranklens
from ranklens.comparison.display import display_copy
from ranklens.comparison.renderers import get_renderer, register_renderer, render_text
from ranklens.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    qrels = {"q1": ["a"], "q2": ["b"], "q3": ["c"]}
    runs = {
        "r": {"q1": ["a"], "q2": ["x"], "q3": ["c"]},
        "s": {"q1": ["x"], "q2": ["b"], "q3": ["y"]},
    }
    return ranklens.compare(qrels, runs, ["P@1"], stats=ranklens.Statistics(n_resamples=100))


def test_register_renderer_gives_back_the_function_it_registered(report):
    def plain(rep, sep=","):
        return sep.join(rep.runs)

    assert register_renderer("test-plain-types", plain) is plain
    assert ranklens.register_renderer("test-plain-types", plain) is plain
    assert get_renderer("test-plain-types") is plain
    assert report.render("test-plain-types", sep=";") == "r;s"


def test_render_text_returns_the_text_of_a_text_renderer(report):
    assert render_text("markdown", report) == get_renderer("markdown")(report)
    register_renderer("test-joined", lambda rep, sep=",": sep.join(rep.runs))
    assert render_text("test-joined", report, sep="|") == "r|s"


def test_render_text_names_a_renderer_that_returns_no_text(report):
    register_renderer("test-count", lambda rep: len(rep.runs))
    with pytest.raises(InputError, match=r"renderer 'test-count' returned int, not text"):
        render_text("test-count", report)
    with pytest.raises(InputError, match="no renderer named 'test-missing'"):
        render_text("test-missing", report)


def test_display_copy_is_of_the_report_class(report):
    assert type(display_copy(report)) is type(report)
    assert display_copy(report) is report  # nothing to make visible: the report itself


TYPED = """\
from rich.table import Table
from typing_extensions import assert_type

import ranklens
from ranklens import Report
from ranklens.comparison.display import display_copy
from ranklens.comparison.renderers import register_renderer, render_text
from ranklens.render.gate import gate_markdown, gate_text
from ranklens.render.html import to_fragment, to_html
from ranklens.render.mlflow import log_mlflow
from ranklens.render.tables import to_csv, to_latex, to_markdown
from ranklens.render.terminal import comparisons_table, rich_table, to_text

report = ranklens.compare({"q": ["a"]}, {"r": {"q": ["a"]}}, ["P@1"])
assert_type(report.to_markdown(), str)
assert_type(report.to_text(), str)
assert_type(report.to_html(), str)
assert_type(to_markdown(report), str)
assert_type(to_csv(report), str)
assert_type(to_latex(report, caption="c"), str)
assert_type(to_text(report), str)
assert_type(to_html(report, max_rows=10), str)
assert_type(to_fragment(report), str)
assert_type(rich_table(report), Table)
assert_type(comparisons_table(report), Table)
assert_type(display_copy(report), Report)
assert_type(render_text("markdown", report), str)


def plain(rep: Report, sep: str = ",") -> str:
    return sep.join(rep.runs)


assert_type(register_renderer("plain", plain)(report, sep=";"), str)
assert_type(ranklens.register_renderer("plain", plain)(report), str)
register_renderer("plain", plain)(report, sep=1)  # type: ignore[arg-type]

result = ranklens.gate({"q": ["a"]}, {"q": ["a"]}, "baseline.json", ["P@1"])
assert_type(gate_text(result), str)
assert_type(gate_markdown(result), str)
assert_type(log_mlflow(result), str)
assert_type(log_mlflow(report), str)
gate_text(report)  # type: ignore[arg-type]
to_markdown(result)  # type: ignore[arg-type]
to_html(report, max_rows="10")  # type: ignore[arg-type]
"""

CONFIG = """\
[mypy]
python_version = 3.10
warn_unused_ignores = True
follow_imports = skip
ignore_missing_imports = True

[mypy-ranklens,ranklens.*,rich,rich.*]
follow_imports = silent
"""


def test_the_renderers_types_check_as_a_user_sees_them(tmp_path):
    pytest.importorskip("mypy", reason="mypy is a dev dependency (uv sync)")
    pytest.importorskip("rich")
    usage = tmp_path / "render_calls.py"
    usage.write_text(TYPED)
    config = tmp_path / "mypy.ini"
    config.write_text(CONFIG)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config),
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(usage)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.stdout.strip() == "", proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the check sees the types at all: a wrong one is reported
    usage.write_text(TYPED + "assert_type(report.to_markdown(), int)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config),
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(usage)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert 'Expression is of type "str", not "int"' in proc.stdout, proc.stdout
    assert proc.stdout.count("error:") == 1, proc.stdout
