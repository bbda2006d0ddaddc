"""compare() and the Report: values, pairing, tests, JSON round trip and renderers."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

import ranklens
from ranklens import Report, compare, evaluate, load_report
from ranklens.app.cli import main
from ranklens.app.demo import demo_paths
from ranklens.errors import InputError

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"

QRELS = {
    "q1": {"d1": 2, "d2": 1, "d3": 0},
    "q2": {"d4": 1, "d5": 1},
    "q3": {"d6": 3},
    "q4": {"d7": 1, "d8": 2},
    "q5": {"d9": 1},
}
RUNS = {
    "bm25": {
        "q1": ["d1", "x", "d2"],
        "q2": ["d4", "d5"],
        "q3": ["x", "y", "d6"],
        "q4": ["d8", "d7"],
        "q5": ["x", "d9"],
    },
    "dense": {
        "q1": ["x", "d2", "d1"],
        "q2": ["x", "y", "d5"],
        "q3": ["d6"],
        "q4": ["x", "y", "z"],
        "q5": ["x", "y", "d9"],
    },
    "hybrid": {
        "q1": ["d1", "d2", "x"],
        "q2": ["d4", "d5"],
        "q3": ["d6", "x"],
        "q4": ["d8", "x", "d7"],
        "q5": ["d9"],
    },
}
METRICS = ["ndcg@3", "mrr", "P@2", "recall@3", "num_rel_ret"]


@pytest.fixture
def fixed_report() -> Report:
    rep = compare(QRELS, RUNS, METRICS, dataset="toy", stats=ranklens.Statistics(test="t", ci="t"))
    rep.metadata["created"] = "2026-01-01T00:00:00+00:00"
    rep.metadata["versions"] = {"ranklens": "test"}
    return rep


def test_values_equal_evaluate_and_pairs_equal_scipy(fixed_report):
    rep = fixed_report
    for name, run in RUNS.items():
        ev = evaluate(QRELS, run, METRICS)
        for m in METRICS:
            assert rep.value(name, m) == pytest.approx(ev[m], abs=1e-12)
            np.testing.assert_allclose(rep.per_query[name][m], ev.per_query[m])
    # Every pair, oriented later - earlier; p from the t test equals scipy's ttest_rel.
    assert {(c.run, c.other) for c in rep.comparisons} == {
        ("dense", "bm25"),
        ("hybrid", "bm25"),
        ("hybrid", "dense"),
    }
    for c in rep.comparisons:
        a, b = rep.per_query[c.run][c.metric], rep.per_query[c.other][c.metric]
        assert c.diff == pytest.approx(a.mean() - b.mean())
        if np.std(a - b) > 0:
            assert c.pvalue == pytest.approx(sps.ttest_rel(a, b).pvalue, rel=1e-9)
        assert (c.wins, c.ties, c.losses) == ((a > b).sum(), (a == b).sum(), (a < b).sum())
        assert c.n == 5
    # Holm over the three comparisons of each metric.
    for m in METRICS:
        cs = [c for c in rep.comparisons if c.metric == m]
        p = np.array([c.pvalue for c in cs])
        order = np.argsort(p)
        holm = np.maximum.accumulate(p[order] * (3 - np.arange(3)))
        np.testing.assert_allclose(sorted(c.pvalue_adjusted for c in cs), np.minimum(holm, 1))


def test_intervals_and_counts(fixed_report):
    s = fixed_report.summary["bm25"]["ndcg@3"]
    vals = fixed_report.per_query["bm25"]["ndcg@3"]
    lo, hi = sps.t.interval(0.95, 4, loc=vals.mean(), scale=sps.sem(vals))
    assert (s["ci_low"], s["ci_high"]) == pytest.approx((lo, hi))
    # Counts are sums: no interval of a mean.
    assert math.isnan(fixed_report.summary["bm25"]["num_rel_ret"]["ci_low"])
    assert fixed_report.summary["bm25"]["num_rel_ret"]["value"] == 8
    assert fixed_report.counts["bm25"]["queries_evaluated"] == 5


def test_baseline_markers_and_significance():
    # 40 queries where "good" finds the relevant document first and "bad" never does.
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(40)}
    good = {f"q{i}": [f"d{i}", "x"] for i in range(40)}
    bad = {f"q{i}": ["x", "y"] for i in range(40)}
    mixed = {f"q{i}": ([f"d{i}"] if i % 2 else ["x"]) for i in range(40)}
    rep = compare(qrels, {"bad": bad, "good": good, "mixed": mixed}, ["mrr"], baseline="bad")
    assert [(c.run, c.other) for c in rep.comparisons] == [("good", "bad"), ("mixed", "bad")]
    assert all(c.significant for c in rep.comparisons)
    assert rep.beats("good", "mrr") == ["bad"]
    assert rep.beats("bad", "mrr") == []
    assert rep.comparison("bad", "good", "mrr").diff == -1.0
    assert rep.best("mrr") == "good"
    assert rep.settings["test"] == "randomization"
    # p-value of a 40-query all-wins randomization test: (1 + 0) / (1 + 10000).
    assert rep.comparison("good", "bad", "mrr").pvalue == pytest.approx(1 / 10001)
    md = rep.to_markdown()
    assert "**1.0000**<sup>a</sup>" in md


def test_skipped_missing_queries_pair_on_the_common_ones():
    runs = {"a": {"q1": ["d1"], "q2": ["x"]}, "b": {"q1": ["x"], "q3": ["d6"]}}
    qrels = {"q1": ["d1"], "q2": ["d4"], "q3": ["d6"]}
    rep = compare(qrels, runs, ["P@1"], missing="skip", stats=ranklens.Statistics(test="t"))
    assert rep.query_ids == ["q1", "q2", "q3"]
    assert np.isnan(rep.per_query["a"]["P@1"][2])
    assert rep.summary["a"]["P@1"]["n"] == 2
    (c,) = rep.comparisons
    assert c.n == 1 and c.diff == -1.0


def test_inputs_and_errors(tmp_path):
    p = demo_paths()
    rep = compare(
        p["qrels"],
        [p["bm25"], p["bm25-short-chunks"]],
        ["ndcg@10"],
        stats=ranklens.Statistics(test="t"),
    )
    assert rep.runs == ["demo_run_bm25", "demo_run_bm25-short-chunks"]
    ev = evaluate(p["qrels"], p["bm25"], ["map"])
    rep2 = compare(p["qrels"], {"from-eval": ev}, ["ndcg@10"])
    assert rep2.value("from-eval", "ndcg@10") == rep.value("demo_run_bm25", "ndcg@10")
    assert rep2.comparisons == []
    with pytest.raises(InputError, match=r"baseline must be one of the runs .*got 'x'"):
        compare(QRELS, RUNS, ["mrr"], baseline="x")
    with pytest.raises(InputError, match=r"compare: test must be one of .*got 'anova'"):
        compare(QRELS, RUNS, ["mrr"], test="anova")
    with pytest.raises(InputError, match="at least one run"):
        compare(QRELS, {}, ["mrr"])


def test_dataset_gives_query_texts():
    from ranklens import Dataset, Qrels

    ds = Dataset(queries={q: f"text {q}" for q in QRELS}, qrels=Qrels.from_dict(QRELS), name="toy")
    rep = compare(ds, RUNS, ["mrr"], stats=ranklens.Statistics(test="t"))
    assert rep.queries["q3"] == "text q3"
    assert rep.metadata["dataset"] == "toy"
    html = rep.to_html()
    assert "text q3" in html


def test_json_round_trip(tmp_path, fixed_report):
    path = tmp_path / "report.json"
    fixed_report.save(path)
    data = json.loads(path.read_text())  # valid JSON: no NaN
    assert data["schema"] == "ranklens.report" and data["version"] == 1
    back = load_report(path)
    assert back == fixed_report
    assert back.to_dict()["comparisons"] == fixed_report.to_dict()["comparisons"]  # NaN-safe
    np.testing.assert_array_equal(
        back.per_query["dense"]["mrr"], fixed_report.per_query["dense"]["mrr"]
    )
    assert back.to_markdown() == fixed_report.to_markdown()
    data["version"] = 99
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="version 99 is not supported"):
        load_report(path)
    path.write_text("{}")
    with pytest.raises(InputError, match="not a ranklens report"):
        load_report(path)


@pytest.mark.parametrize(
    "name,render",
    [
        ("report.md", lambda r: r.to_markdown()),
        ("report.tex", lambda r: r.to_latex(caption="Toy & co")),
        ("report.csv", lambda r: r.to_csv()),
        ("report_comparisons.csv", lambda r: r.to_csv(kind="comparisons")),
        ("report.txt", lambda r: r.to_text()),
    ],
)
def test_renderers_snapshot(fixed_report, name, render):
    text = render(fixed_report)
    snap = SNAPSHOTS / name
    if os.environ.get("RANKLENS_UPDATE_SNAPSHOTS"):
        snap.write_text(text)
    assert text == snap.read_text(), f"{name} changed; RANKLENS_UPDATE_SNAPSHOTS=1 rewrites it"


def test_pandas(fixed_report):
    df = fixed_report.to_pandas()
    assert list(df.columns) == ["run", "metric", "value", "ci_low", "ci_high", "n"]
    assert len(df) == 3 * len(METRICS)
    pq = fixed_report.to_pandas("per_query")
    assert len(pq) == 15 and "mrr" in pq.columns
    cmp = fixed_report.to_pandas("comparisons")
    assert set(cmp["significant"]) <= {True, False}
    with pytest.raises(InputError, match="kind must be one of"):
        fixed_report.to_pandas("wide")


def test_escaping_in_text_outputs():
    runs = {"a|b_<x>": RUNS["bm25"], "50% & $x$": RUNS["dense"]}
    rep = compare(QRELS, runs, ["mrr"], stats=ranklens.Statistics(test="t"))
    assert r"a\|b\_\<x\>" in rep.to_markdown()
    assert r"50\% \& \$x\$" in rep.to_latex()
    html = rep.to_html()
    assert "<x>" not in html and "a|b_&lt;x&gt;" in html
    assert rep._repr_html_().startswith('<div class="rl-report"')


def test_cli_compare_and_report(tmp_path, capsys):
    p = demo_paths()
    out_json, out_html = tmp_path / "r.json", tmp_path / "r.html"
    code = main(
        [
            "compare",
            str(p["qrels"]),
            f"base={p['bm25']}",
            f"short={p['bm25-short-chunks']}",
            "-m",
            "ndcg@10",
            "-m",
            "map",
            "--baseline",
            "base",
            "--test",
            "t",
            "--json",
            str(out_json),
            "--html",
            str(out_html),
            "--format",
            "markdown",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "| (a) | base |" in out and "<sup>b</sup>" in out
    rep = load_report(out_json)
    assert rep.baseline == "base" and rep.settings["test"] == "t"
    assert out_html.read_text().startswith("<!DOCTYPE html>")
    assert main(["report", str(out_json), "--format", "latex"]) == 0
    assert r"\toprule" in capsys.readouterr().out
    assert main(["compare", str(p["qrels"]), str(p["bm25"]), "--baseline", "nope"]) == 2
    assert "baseline must be one of the runs (demo_run_bm25), got 'nope'" in capsys.readouterr().err
