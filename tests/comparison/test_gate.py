"""The CI quality gate: verdicts on real differences and on noise, inconclusive small sets,
baselines and their fingerprints, the CLI's exit codes and summaries, and the one-sided
tests and power figures checked against scipy and simulation."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ranklens
from ranklens.app.cli import main
from ranklens.comparison import stats
from ranklens.comparison.power_analysis import mde, queries_needed
from ranklens.errors import InputError


def labelled_set(n: int) -> dict:
    """``n`` queries, three relevant chunks each (one graded 2)."""
    return {f"q{i}": {f"d{i}-0": 2, f"d{i}-1": 1, f"d{i}-2": 1} for i in range(n)}


def retrieval(n: int, boost: float, seed: int) -> dict:
    """A run of 23 scored documents per query: relevant ones lifted by ``boost``."""
    rng = np.random.default_rng(seed)
    run = {}
    for i in range(n):
        docs = [f"d{i}-{j}" for j in range(3)] + [f"x{i}-{j}" for j in range(20)]
        scores = rng.random(23) + np.r_[np.full(3, boost), np.zeros(20)]
        run[f"q{i}"] = dict(zip(docs, scores.round(6).tolist()))
    return run


METRICS = ["ndcg@10", "mrr@10", "recall@5"]


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "baselines" / "faq.json"
    first = ranklens.gate(
        labelled_set(200), retrieval(200, 0.6, 1), path, METRICS, update_baseline=True
    )
    assert first.updated and first.passed and path.exists()
    return path


def test_an_unchanged_run_passes(baseline):
    result = ranklens.gate(labelled_set(200), retrieval(200, 0.6, 1), baseline, METRICS)
    assert result.passed and result.exit_code == 0
    assert {v.status for v in result.verdicts} == {"pass"}
    assert all(v.delta == 0 and "equal the baseline" in v.reason for v in result.verdicts)
    assert result.regressions == []


def test_a_real_regression_fails_and_names_the_queries(baseline):
    result = ranklens.gate(
        labelled_set(200), retrieval(200, 0.3, 2), baseline, METRICS, margin=0.02
    )
    assert not result.passed and result.exit_code == 1
    assert {v.status for v in result.verdicts} == {"fail"}
    ndcg = result.verdicts[0]
    assert ndcg.ci_high < -0.02 and ndcg.p_regression < 0.05
    worst = [r for r in result.regressions if r.metric == "ndcg@10"]
    assert len(worst) == 5 and worst[0].now < worst[0].baseline
    assert any(r.dropped for r in worst)  # relevant documents that left the top 10
    for r in worst:
        assert all(d.startswith(f"d{r.query_id[1:]}-") for d in r.dropped)
    text = result.to_text()
    assert "gate FAILED" in text and worst[0].query_id in text and "dropped out of" in text


def test_a_run_different_only_by_noise_passes(baseline):
    margins = {"ndcg@10": 0.05, "mrr@10": 0.05, "recall@5": 0.1}
    result = ranklens.gate(
        labelled_set(200), retrieval(200, 0.6, 7), baseline, METRICS, margin=margins
    )
    assert any(v.delta != 0 for v in result.verdicts)  # really another run
    assert result.passed, result.to_text()
    assert all(v.p_noninferior < 0.05 for v in result.verdicts)
    # recall@5 (values in thirds) is noisier: 200 queries cannot vouch for a 0.05 margin,
    # and the gate says so instead of passing or failing it
    tight = ranklens.gate(labelled_set(200), retrieval(200, 0.6, 7), baseline, METRICS, margin=0.05)
    recall = tight.verdicts[2]
    assert recall.status == "inconclusive" and recall.mde > 0.05 and recall.needed > 200


def test_a_small_set_with_a_small_drop_is_inconclusive_with_its_detectable_effect(tmp_path):
    path = tmp_path / "small.json"
    labels = labelled_set(20)
    ranklens.gate(labels, retrieval(20, 0.6, 1), path, ["ndcg@10"], update_baseline=True)
    result = ranklens.gate(labels, retrieval(20, 0.5, 3), path, ["ndcg@10"], margin=0.02)
    (v,) = result.verdicts
    assert v.status == "inconclusive", result.to_text()
    assert v.mde > 0.02 and v.needed > 20
    assert f"detect a drop of {v.mde:.4f}" in v.reason and f"about {v.needed} queries" in v.reason
    assert not result.passed  # inconclusive fails by default...
    lenient = ranklens.gate(
        labels, retrieval(20, 0.5, 3), path, ["ndcg@10"], margin=0.02, inconclusive="pass"
    )
    assert lenient.passed  # ...or passes when the setting says so
    assert v.mde == pytest.approx(mde(float(np.std(_diffs(result), ddof=1)), 20), rel=1e-12)


def _diffs(result):
    base = ranklens.load_report(result.baseline_path)
    return result.report.per_query["now"]["ndcg@10"] - base.per_query["now"]["ndcg@10"]


def test_floors_gate_on_the_mean_even_without_a_baseline_rule(baseline):
    result = ranklens.gate(
        labelled_set(200),
        retrieval(200, 0.6, 1),
        baseline,
        METRICS,
        margin=None,
        floors={"mrr@10": 0.99, "ndcg@10": 0.5, "recall@5": 0.1},
    )
    status = {v.metric: v.status for v in result.verdicts}
    assert status == {"ndcg@10": "pass", "mrr@10": "fail", "recall@5": "pass"}
    assert "below the floor 0.99" in result.verdicts[1].reason
    assert {v.metric: v.decided_by for v in result.verdicts}["mrr@10"] == "floor"


def test_a_metric_without_any_rule_is_refused_never_passed(baseline):
    """A metric with neither a margin nor a limit would pass whatever the run did (the
    command line passed a total regression that way): an error naming it."""
    with pytest.raises(ranklens.InputError, match=r"recall@5 has no rule.*--margin recall@5=0"):
        ranklens.gate(labelled_set(200), retrieval(200, 0.6, 1), baseline, METRICS,
                      margin=None, floors={"mrr@10": 0.99, "ndcg@10": 0.5})  # fmt: skip
    with pytest.raises(ranklens.InputError, match=r"recall@5 has no rule"):
        ranklens.gate(labelled_set(200), retrieval(200, 0.6, 1), baseline, METRICS,
                      margin={"mrr@10": 0.01, "ndcg@10": 0.01})  # fmt: skip


def test_a_baseline_of_another_labelled_set_is_refused_naming_what_changed(baseline):
    labels = labelled_set(200)
    del labels["q3"]
    labels["new"] = {"z": 1}
    with pytest.raises(InputError, match=r"1 added \(e.g. 'new'\), 1 removed \(e.g. 'q3'\)"):
        ranklens.gate(labels, retrieval(200, 0.6, 1), baseline, METRICS)
    relabelled = labelled_set(200)
    relabelled["q0"]["d0-1"] = 2
    with pytest.raises(InputError, match="the labels"):
        ranklens.gate(relabelled, retrieval(200, 0.6, 1), baseline, METRICS)
    with pytest.raises(InputError, match=r"baseline has no values of P@5 \(it holds ndcg@10"):
        ranklens.gate(labelled_set(200), retrieval(200, 0.6, 1), baseline, ["ndcg@10", "P@5"])
    with pytest.raises(InputError, match="options: baseline"):
        ranklens.gate(
            labelled_set(200), retrieval(200, 0.6, 1), baseline, METRICS, relevance_level=2
        )
    with pytest.raises(InputError, match="no baseline report here"):
        ranklens.gate(labelled_set(200), {}, baseline.parent / "none.json", METRICS)


def _files(tmp_path, n, boost, seed, name):
    q = tmp_path / "qrels.txt"
    q.write_text(
        "".join(
            f"{qid} 0 {d} {g}\n" for qid, row in labelled_set(n).items() for d, g in row.items()
        )
    )
    r = tmp_path / name
    r.write_text(
        "".join(
            f"{qid} Q0 {d} 0 {s} t\n"
            for qid, row in retrieval(n, boost, seed).items()
            for d, s in row.items()
        )
    )
    return str(q), str(r)


def test_cli_exit_codes_and_summaries(tmp_path, capsys, monkeypatch):
    q, good = _files(tmp_path, 200, 0.6, 1, "good.run")
    _, bad = _files(tmp_path, 200, 0.3, 2, "bad.run")
    base = str(tmp_path / "b.json")
    args = ["-m", "ndcg@10", "-m", "mrr@10", "--baseline", base]
    assert main(["gate", q, good, *args]) == 2  # no baseline yet
    assert "--update-baseline" in capsys.readouterr().err
    assert main(["gate", q, good, *args, "--update-baseline"]) == 0
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert main(["gate", q, good, *args, "--margin", "0.01"]) == 0
    capsys.readouterr()
    summary = tmp_path / "s.md"
    code = main(
        [
            "gate",
            q,
            bad,
            *args,
            "--margin",
            "ndcg@10=-0.02",
            "--floor",
            "mrr@10=0.9",
            "--summary",
            str(summary),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1 and "gate FAILED" in out and "queries that regressed most" in out
    md = summary.read_text()
    assert "| ndcg@10 | ❌ fail |" in md and "<details>" in md
    assert (
        step.read_text().startswith("earlier step\n")
        and step.read_text().count("### ranklens gate") == 2
    )
    assert main(["gate", q, good, *args, "--margin", "x"]) == 2
    assert main(["gate", q, good, *args, "--floor", "0.5"]) == 2


def test_power_cli_and_api_from_a_baseline(tmp_path, capsys, baseline):
    rows = ranklens.power(baseline, "ndcg@10", effect=0.02)
    (row,) = rows
    assert row.n == 200 and row.needed > 0 and row.mde == pytest.approx(mde(row.sd, 200))
    assert main(["power", str(baseline), "-m", "ndcg@10", "--effect", "0.02"]) == 0
    out = capsys.readouterr().out
    assert f"{row.needed} queries detect 0.02" in out


def test_compare_reports_show_the_detectable_effect():
    rep = ranklens.compare(
        labelled_set(50),
        {"a": retrieval(50, 0.6, 1), "b": retrieval(50, 0.5, 2)},
        ["ndcg@10", "num_ret"],
        stats=ranklens.Statistics(n_resamples=200),
    )
    pw = rep.metadata["power"]
    assert set(pw["mde"]) == {"ndcg@10"} and pw["n"] == 50
    assert "detected 80% of the time" in rep.to_markdown()
    assert json.loads(rep.to_json())["metadata"]["power"]["mde"]["ndcg@10"] == pw["mde"]["ndcg@10"]


# ------------------------------------------------------------------ the statistics
@pytest.mark.parametrize("n", [6, 30])
def test_one_sided_tests_agree_with_scipy(n):
    from scipy.stats import permutation_test, ttest_1samp, wilcoxon

    rng = np.random.default_rng(n)
    d = rng.normal(0.1, 0.3, size=(n, 4))
    t = stats.one_sided(d, "t")
    assert t == pytest.approx(ttest_1samp(d, 0, alternative="greater").pvalue, rel=1e-9)
    w = stats.one_sided(d, "wilcoxon")
    assert w == pytest.approx([wilcoxon(d[:, j], alternative="greater").pvalue for j in range(4)])
    if n <= 10:  # exact: every sign vector
        r = stats.one_sided(d, "randomization", n_resamples=2**n)
        want = [
            permutation_test(
                (d[:, j],),
                np.mean,
                permutation_type="samples",
                alternative="greater",
                n_resamples=np.inf,
            ).pvalue
            for j in range(4)
        ]
        assert r == pytest.approx(want, rel=1e-12)
    b = stats.one_sided(d, "bootstrap", n_resamples=4000)
    assert np.all(np.abs(b - t) < 0.05)  # the same question, asked by resampling
    assert stats.one_sided(np.zeros((n, 2)), "randomization").tolist() == [1.0, 1.0]


def test_power_figures_match_simulation():
    """Differences drawn with mean = MDE are detected 80% of the time by each test."""
    rng = np.random.default_rng(0)
    sd, n, sims = 0.2, 40, 1500
    for test in ("t", "randomization", "bootstrap"):
        effect = mde(sd, n, 0.05, 0.8, test)
        d = rng.normal(effect, sd, size=(n, sims))
        rate = float((stats.one_sided(d, test, n_resamples=1000) < 0.05).mean())
        assert abs(rate - 0.8) < 0.04, (test, rate)
    effect = mde(sd, n, 0.05, 0.8, "wilcoxon")
    d = rng.normal(effect, sd, size=(n, 600))
    rate = float((stats.one_sided(d, "wilcoxon") < 0.05).mean())
    assert abs(rate - 0.8) < 0.06, rate
    # and the queries needed: the least n whose MDE is within the effect
    k = queries_needed(sd, 0.05)
    assert mde(sd, k) <= 0.05 < mde(sd, k - 1)
    d = rng.normal(0.05, sd, size=(k, sims))
    assert abs(float((stats.one_sided(d, "t") < 0.05).mean()) - 0.8) < 0.04


def test_the_commands_offer_every_paired_test():
    from ranklens.app.gate_cli import PAIRED_TESTS

    assert set(PAIRED_TESTS) == set(stats.TESTS)


def test_gating_on_some_of_the_baselines_metrics_works(baseline):
    """A baseline holding ndcg@10, mrr@10 and recall@5 gates ndcg@10 alone."""
    result = ranklens.gate(labelled_set(200), retrieval(200, 0.3, 2), baseline, ["ndcg@10"])
    assert [v.metric for v in result.verdicts] == ["ndcg@10"]
    assert result.verdicts[0].status == "fail" and result.verdicts[0].baseline > 0
    same = ranklens.gate(labelled_set(200), retrieval(200, 0.6, 1), baseline, ["mrr@10"])
    assert same.passed


def test_writing_a_baseline_says_so_and_shows_no_verdict(tmp_path):
    path = tmp_path / "b.json"
    result = ranklens.gate(
        labelled_set(30), retrieval(30, 0.6, 1), path, METRICS, update_baseline=True
    )
    text, md = result.to_text(), result.to_markdown()
    assert "baseline written to" in text and "nothing compared" in text
    assert "PASS" not in text and "pass" not in md.lower().replace("passed", "")
    assert "value written" in text and "value written" in md
    floored = ranklens.gate(
        labelled_set(30), retrieval(30, 0.6, 1), path, METRICS, update_baseline=True,
        floors={"ndcg@10": 0.99},
    )  # fmt: skip
    assert not floored.passed and ">= 0.99: FAIL" in floored.to_text()
