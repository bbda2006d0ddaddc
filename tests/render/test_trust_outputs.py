"""Every output escapes user strings for its medium: Markdown, CSV (formula injection),
the terminal (rich markup, ESC sequences), LaTeX, HTML, and bidi controls shown visibly in
all of them; saved reports are validated when loaded; the CLI reports bad files cleanly."""

from __future__ import annotations

import json

import pytest

import ranklens
from ranklens import load_report
from ranklens.app.cli import main
from ranklens.errors import InputError

QRELS = {"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]}
RUN_A = {"q1": ["d1"], "q2": ["x"], "q3": ["d3"]}
RUN_B = {"q1": ["x"], "q2": ["d2"], "q3": ["y"]}

HOSTILE = {
    "markup": "[/]",
    "formula": '=HYPERLINK("http://x")',
    "esc": "run\x1b[2J\x1b[31mred",
    "bidi": "abc\u202egnp.exe",
    "md": "a|b*c_[x](y)",
}


@pytest.fixture(scope="module")
def report():
    runs = {HOSTILE["markup"]: RUN_A, HOSTILE["formula"]: RUN_B, HOSTILE["esc"]: RUN_A,
            HOSTILE["bidi"]: RUN_B, HOSTILE["md"]: RUN_A}  # fmt: skip
    return ranklens.compare(QRELS, runs, ["P@1"], baseline=HOSTILE["markup"])


def test_terminal_never_reads_names_as_markup_or_passes_escapes(report):
    text = report.to_text()  # a run named "[/]" used to raise MarkupError
    assert "[/]" in text and "\x1b" not in text and "\\x1b[2J" in text
    assert "\u202e" not in text and "<U+202E>" in text
    colored = report.to_text(color=True)
    assert "\x1b[2J" not in colored


def test_markdown_escapes_names_in_tables_legend_and_notes(report):
    md = report.to_markdown()
    assert "a\\|b\\*c\\_\\[x\\](y)" in md
    assert "\u202e" not in md and "\x1b" not in md
    legend = next(line for line in md.splitlines() if line.startswith("Letters"))
    assert "\\[/\\]" in legend  # the baseline's name in the legend is escaped too


def test_csv_neutralises_formulas(report):
    for kind in ("summary", "comparisons", "per_query"):
        rows = report.to_csv(kind=kind).splitlines()
        assert not any(cell.startswith(("=", "+", "@")) for row in rows for cell in row.split(","))
    assert "'=HYPERLINK" in report.to_csv(kind="summary")


def test_latex_and_html_escape_and_show_bidi(report):
    tex = report.to_latex()
    assert "\u202e" not in tex and "\\textless{}U+202E\\textgreater{}" in tex
    html = report.to_html()
    assert "\u202e" not in html and "&lt;U+202E&gt;" in html and "\x1b" not in html


def test_pandas_keeps_the_data_as_it_is(report):
    pytest.importorskip("pandas")
    assert HOSTILE["bidi"] in set(report.to_pandas()["run"])


def test_evaluation_table_shows_ids_visibly():
    ev = ranklens.evaluate({"q\x1b[31m": ["d1"]}, {"q\x1b[31m": ["d1"]}, ["P@1"])
    assert "\x1b" not in ev.to_table(per_query=True) and "q\\x1b[31m" in ev.to_table(per_query=True)
    assert "<td>q\\x1b[31m</td>" in ev._repr_html_()


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("not json", "invalid JSON"),
        ("[" * 50_000 + "]" * 50_000, "nested too deeply"),
        (
            json.dumps({"schema": "ranklens.report", "version": 1, "runs": [{"x": 1}]}),
            r"runs\[0\] must be a string",
        ),
        (json.dumps({"schema": "nope"}), "not a ranklens report|field"),
    ],
)
def test_bad_report_files_are_clean_errors(tmp_path, capsys, content, match):
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(InputError, match=match):
        load_report(path)
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ranklens: error:") and "Traceback" not in err
    assert main(["report", str(tmp_path / "missing.json")]) == 2


def test_type_tampered_report_fields_are_named(report, tmp_path):
    base = report.to_dict()
    cases = [
        (("summary", '=HYPERLINK("http://x")', "P@1", "value"), "<b>", "summary"),
        (("comparisons", 0, "significant"), "yes", "significant"),
        (("query_ids",), "q1", "query_ids"),
    ]
    for keys, value, field in cases:
        data = json.loads(json.dumps(base))
        target = data
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
        with pytest.raises(InputError, match=field):
            ranklens.comparison.Report.from_dict(data)


def test_missing_optional_dependency_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *a, **kw):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    import importlib

    monkeypatch.setattr(importlib, "import_module", lambda n: no_pandas(n))
    ev = ranklens.evaluate(QRELS, RUN_A, ["P@1"])
    with pytest.raises(ImportError, match=r"ranklens\[pandas\]"):
        ev.to_pandas()


def test_means_sum_queries_in_order_as_trec_eval_does():
    # trec_eval adds per-query values one after another; numpy's pairwise sum gives 0.1 here
    # where the running sum gives 0.09999999999999999, which can flip a 4-decimal rounding
    import numpy as np

    from ranklens.evaluation import aggregate

    x = np.full(10, 0.1)
    running = 0.0
    for v in x:
        running += v
    assert aggregate(x, "mean") == running / 10 != float(np.mean(x))
    logs = np.log(np.maximum(np.array([0.2, 0.0, 0.7]), 1e-5))
    assert aggregate(np.array([0.2, 0.0, 0.7]), "gmean") == np.exp(
        (logs[0] + logs[1] + logs[2]) / 3
    )
