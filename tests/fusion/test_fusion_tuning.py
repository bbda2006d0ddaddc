"""tune_fusion: on synthetic tasks whose best weights are known it recovers them; when the
grid can only fit noise its cross-validated estimate is below the in-sample best; the
held-out values equal an independent computation (fuse + evaluate per fold with the
setting chosen on the other folds); supervised methods are trained without the held-out
queries; the report, HTML chart and command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ranklens
from ranklens.app.cli import main
from ranklens.errors import InputError
from ranklens.fusion import tune_fusion, weight_grid


def synthetic(n_queries: int, strengths: list[float], seed: int = 0, n_docs: int = 40):
    """Labels and one run per strength: each document's score is strength x relevance
    plus unit Gaussian noise, so the best linear fusion of z-scored runs weighs run i in
    proportion to its strength (Fisher's discriminant for equal, independent noise)."""
    rng = np.random.default_rng(seed)
    labels, runs = {}, [{} for _ in strengths]
    for q in range(n_queries):
        docs = [f"doc-{q}-{i}" for i in range(n_docs)]
        rel = np.zeros(n_docs)
        rel[rng.choice(n_docs, 3, replace=False)] = 1
        labels[f"q{q}"] = {d: 1 for d, r in zip(docs, rel) if r}
        for run, s in zip(runs, strengths):
            run[f"q{q}"] = dict(zip(docs, (s * rel + rng.normal(size=n_docs)).tolist()))
    return labels, {f"r{i}": r for i, r in enumerate(runs)}


def test_weight_grid():
    assert len(weight_grid(2)) == 11 and len(weight_grid(3)) == 66
    assert all(abs(sum(w) - 1) < 1e-9 for w in weight_grid(3, 0.05))
    with pytest.raises(InputError, match="weight_grid: step must be 1/n"):
        weight_grid(2, 0.3)


def test_recovers_the_known_best_weights():
    """Strengths 2 and 1: the best weight of the first run is 2/3, so 0.6 or 0.7 on the
    0.1 grid; every fold agrees, and the fusion beats the better run significantly."""
    labels, runs = synthetic(300, [1.0, 0.5], seed=1)
    t = tune_fusion(labels, runs, "wsum", "ndcg@10", norm="zmuv")
    assert t.weights["r0"] in (0.6, 0.7)
    assert all(c["weights"][0] in (0.6, 0.7) for c in t.fold_choices)
    assert t.best_single == "r0" and t.difference > 0 and t.p_value < 0.01
    assert t.difference_interval[0] > 0
    # a run of pure noise gets weight 0
    labels, runs = synthetic(300, [1.0, 0.0], seed=2)
    t = tune_fusion(labels, runs, "wsum", "ndcg@10", norm="zmuv")
    assert t.weights == {"r0": 1.0, "r1": 0.0}


def test_cross_validation_is_below_the_in_sample_best_when_the_grid_fits_noise():
    """Three runs of pure noise: every weighting is equally good in expectation, so the
    in-sample best of 66 settings on 30 queries is the luckiest; held out, the luck is
    gone (the estimate stays near chance)."""
    optimism = []
    for seed in range(4):
        labels, runs = synthetic(30, [0.0, 0.0, 0.0], seed=10 + seed)
        t = tune_fusion(labels, runs, "wsum", "ndcg@10", norm="zmuv", seed=seed)
        assert t.cv_estimate < t.in_sample_best
        optimism.append(t.optimism)
    assert np.mean(optimism) > 0.01


def _independent_cv(
    labels, runs, method, metric, settings, folds, seed, norm=None, supervised=False
):
    """Held-out values by brute force: ranklens.fuse and evaluate per fold and setting."""
    qids = sorted(labels)
    fold = np.empty(len(qids), dtype=int)
    fold[np.random.default_rng(seed).permutation(len(qids))] = np.arange(len(qids)) % folds
    out = {}
    for f in range(folds):
        train = [q for q, g in zip(qids, fold) if g != f]
        test = [q for q, g in zip(qids, fold) if g == f]
        best, best_val = None, -1.0
        for s in settings:
            kw = dict(s)
            if supervised:
                kw["labels"] = {q: labels[q] for q in train}
            fused = ranklens.fuse(runs, method, norm=norm, **kw)
            ev = ranklens.evaluate({q: labels[q] for q in train}, fused.to_dict(), [metric])
            val = float(np.mean([ev.query(q)[metric] for q in train]))
            if val > best_val + 1e-12:  # the first of tied settings
                best, best_val = kw, val
        fused = ranklens.fuse(runs, method, norm=norm, **best)
        ev = ranklens.evaluate({q: labels[q] for q in test}, fused.to_dict(), [metric])
        out.update({q: ev.query(q)[metric] for q in test})
    return [out[q] for q in qids]


def test_held_out_values_equal_an_independent_computation():
    labels, runs = synthetic(40, [0.9, 0.6, 0.3], seed=5, n_docs=15)
    grid = [{"weights": w} for w in weight_grid(3, 0.25)]
    t = tune_fusion(labels, runs, "wsum", "P@5", grid, folds=4, seed=3, norm="min-max")
    want = _independent_cv(labels, runs, "wsum", "P@5", grid, 4, 3, norm="min-max")
    assert t.per_query["cv"].tolist() == pytest.approx(want, abs=1e-12)
    # the cross-validated run, evaluated, gives the same values; it holds every query
    ev = ranklens.evaluate(labels, t.cv_run, ["P@5"])
    assert ev.per_query["P@5"].tolist() == pytest.approx(t.per_query["cv"].tolist())
    # the rrf parameter grid, from a mapping
    t = tune_fusion(labels, runs, "rrf", "P@5", {"k": [1, 60]}, folds=4, seed=3)
    want = _independent_cv(labels, runs, "rrf", "P@5", [{"k": 1}, {"k": 60}], 4, 3)
    assert t.per_query["cv"].tolist() == pytest.approx(want, abs=1e-12)


def test_supervised_methods_never_train_on_held_out_queries():
    labels, runs = synthetic(24, [0.9, 0.4], seed=6, n_docs=12)
    grid = [{"n_segments": n} for n in (1, 3, 6)]
    t = tune_fusion(labels, runs, "probfuse", "ndcg@5", grid, folds=3, seed=1)
    want = _independent_cv(labels, runs, "probfuse", "ndcg@5", grid, 3, 1, supervised=True)
    assert t.per_query["cv"].tolist() == pytest.approx(want, abs=1e-12)


def test_report_html_and_errors(tmp_path):
    labels, runs = synthetic(30, [0.9, 0.6, 0.3], seed=7, n_docs=12)
    t = tune_fusion(labels, runs, "wsum", "ndcg@10", norm="min-max", folds=3)
    text = str(t)
    assert "cross-validated" in text and "in-sample best" in text and "vs r0" in text
    rep = t.report(labels)
    assert rep.runs == ["r0", "r1", "r2", "wsum (cv)"]
    assert rep.metadata["fusion"]["chosen"]["weights"] == list(t.chosen["weights"])
    html = rep.to_html()
    assert "Fusion tuning" in html and 'data-chart="fusion-grid"' in html
    assert html.count("<rect") >= 66
    two = tune_fusion(labels, {"a": runs["r0"], "b": runs["r1"]}, "rrf", "P@5", folds=3)
    assert 'data-chart="curve"' in two._repr_html_() and ">k</text>" in two._repr_html_()
    with pytest.raises(InputError, match="no weights or parameter"):
        tune_fusion(labels, runs, "sum", "P@5")
    with pytest.raises(InputError, match="folds must lie between 2"):
        tune_fusion(labels, runs, "rrf", "P@5", folds=31)


def test_tune_fusion_command(tmp_path, capsys):
    labels, runs = synthetic(30, [1.0, 0.4], seed=8, n_docs=12)
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, ds in labels.items() for d, g in ds.items())
    )
    paths = []
    for name, run in runs.items():
        p = tmp_path / f"{name}.run"
        lines = [
            f"{q} Q0 {d} {i} {s!r} {name}\n"
            for q, ds in run.items()
            for i, (d, s) in enumerate(sorted(ds.items(), key=lambda x: -x[1]), 1)
        ]
        p.write_text("".join(lines))
        paths.append(str(p))
    out = tmp_path / "fused.run"
    code = main(["tune-fusion", str(tmp_path / "qrels.txt"), *paths, "-m", "P@5", "--norm",
                 "zmuv", "--folds", "3", "--step", "0.25", "--json", str(tmp_path / "t.json"),
                 "--html", str(tmp_path / "t.html"), "-o", str(out)])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "P@5 cross-validated" in printed
    saved = json.loads((tmp_path / "t.json").read_text())
    assert len(saved["settings"]) == 5 and saved["folds"] == 3
    assert "Fusion tuning" in (tmp_path / "t.html").read_text()
    assert ranklens.read_run(out).to_dict().keys() == labels.keys()
    assert main(["tune-fusion", str(tmp_path / "qrels.txt"), *paths, "--method", "rrf",
                 "--grid", "k=x"]) == 2  # fmt: skip


def test_a_rate_of_the_unwanted_is_refused_not_maximised():
    labels = {"q1": {"a": 1}, "q2": {"b": 1}}
    runs = {"x": {"q1": ["a", "z"], "q2": ["b", "z"]}, "y": {"q1": ["z", "a"], "q2": ["z", "b"]}}
    with pytest.raises(InputError, match="'unj@10' is a rate of something unwanted"):
        ranklens.tune_fusion(labels, runs, "rrf", "unj@10", folds=2)
