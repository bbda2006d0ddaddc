"""Reports and gate results logged to a real local MLflow tracking store (SQLite, no
server): metrics, params and artifacts arrive, under a new run or the active one."""

from __future__ import annotations

import json

import pytest

import ranklens
from ranklens.app.cli import main

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("sqlalchemy")
pytest.importorskip("alembic")

QRELS = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 1}}
RUNS = {
    "bm25": {"q1": ["a", "x", "b"], "q2": ["y", "c"], "q3": ["d"]},
    "dense@v2": {"q1": ["b", "a"], "q2": ["c"], "q3": ["z", "d"]},
}


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    mlflow.create_experiment("ranklens-tests", artifact_location=str(tmp_path / "artifacts"))
    mlflow.set_experiment("ranklens-tests")
    yield mlflow.tracking.MlflowClient()
    if mlflow.active_run():
        mlflow.end_run()
    mlflow.set_tracking_uri(None)


def _artifacts(client, run_id):
    return sorted(f.path for f in client.list_artifacts(run_id, "ranklens"))


def test_a_report_logs_metrics_params_and_artifacts(store):
    rep = ranklens.compare(
        QRELS, RUNS, ["ndcg@10", "mrr@10", "num_ret"], stats=ranklens.Statistics(n_resamples=200)
    )
    run_id = rep.log_mlflow(run_name="retrievers")
    got = store.get_run(run_id)
    metrics = got.data.metrics
    assert metrics["bm25.ndcg_10"] == pytest.approx(rep.value("bm25", "ndcg@10"))
    assert metrics["dense_v2.mrr_10"] == pytest.approx(rep.value("dense@v2", "mrr@10"))
    assert metrics["bm25.ndcg_10/ci_low"] == pytest.approx(rep.summary["bm25"]["ndcg@10"]["ci_low"])
    assert "bm25.num_ret/ci_low" not in metrics  # a sum has no interval
    params = got.data.params
    assert params["ranklens.metric_names"] == "ndcg@10,mrr@10,num_ret"
    assert params["ranklens.test"] == "randomization" and params["ranklens.queries"] == "3"
    assert got.info.run_name == "retrievers" and got.info.status == "FINISHED"
    assert _artifacts(store, run_id) == [
        "ranklens/per_query.csv",
        "ranklens/report.html",
        "ranklens/report.json",
    ]
    local = store.download_artifacts(run_id, "ranklens/report.json")
    assert ranklens.load_report(local).runs == ["bm25", "dense@v2"]


def test_an_active_run_receives_the_report_and_stays_open(store):
    rep = ranklens.compare(
        QRELS, {"bm25": RUNS["bm25"]}, ["P@1"], stats=ranklens.Statistics(n_resamples=100)
    )
    with mlflow.start_run() as active:
        assert rep.log_mlflow(artifacts=False) == active.info.run_id
        assert mlflow.active_run() is not None
    assert store.get_run(active.info.run_id).data.metrics["P_1"] == pytest.approx(2 / 3)


def test_gate_and_compare_log_from_the_command_line(store, tmp_path, capsys):
    q = tmp_path / "q.txt"
    q.write_text("".join(f"{k} 0 {d} {g}\n" for k, row in QRELS.items() for d, g in row.items()))
    r = tmp_path / "r.run"
    r.write_text(
        "".join(
            f"{k} Q0 {d} {i + 1} {10 - i} t\n"
            for k, docs in RUNS["bm25"].items()
            for i, d in enumerate(docs)
        )
    )
    base = str(tmp_path / "base.json")
    assert (
        main(["gate", str(q), str(r), "--baseline", base, "-m", "mrr@10", "--update-baseline"]) == 0
    )
    assert main(["gate", str(q), str(r), "--baseline", base, "-m", "mrr@10", "--mlflow"]) == 0
    run_id = capsys.readouterr().err.split("logged to MLflow run ")[1].split()[0]
    got = store.get_run(run_id)
    assert got.data.metrics["gate.mrr_10/passed"] == 1.0 and got.data.metrics["gate.passed"] == 1.0
    assert "ranklens/gate.md" in _artifacts(store, run_id)
    with open(store.download_artifacts(run_id, "ranklens/gate.json")) as fh:
        gate_json = json.load(fh)
    assert gate_json["verdicts"][0]["status"] == "pass"
    assert main(["compare", str(q), str(r), "-m", "P@1", "--mlflow", "--format", "none"]) == 0
    assert "logged to MLflow run" in capsys.readouterr().err
