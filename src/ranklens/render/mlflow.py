"""Experiment tracking: a report (or a gate's result) logged to MLflow (``ranklens[mlflow]``).

Aggregates and their interval bounds become metrics, settings and judging options become
params, and the per-query table (CSV), the report (JSON) and the HTML report become
artifacts, under the active MLflow run or a new one. MLflow keys allow letters, digits and
``_-. /`` only, so ``ndcg@10`` is logged as ``ndcg_10`` (the original name is kept in the
artifacts and in a ``ranklens.metric_names`` param).
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from ..comparison import GateResult, Report
from ..declared import data, declare, flag, text
from ..errors import require

_BAD = re.compile(r"[^0-9A-Za-z_\-. /]")

LOG_MLFLOW = declare("log_mlflow", {
    "obj": data("a Report or a gate's result"),
    "run_id": text(None, "the MLflow run to log into (None: the active run, else a new one)",
                   none=True),
    "experiment": text(None, "the experiment of a new run", none=True),
    "run_name": text(None, "the name of a new run (None: the dataset's)", none=True),
    "artifacts": flag(True, "the per-query CSV, the JSON and the HTML report as artifacts"),
})  # fmt: skip


def mlflow_key(name: str) -> str:
    """``name`` as an MLflow metric or param key (other characters become ``_``)."""
    return _BAD.sub("_", str(name))[:250] or "_"


@LOG_MLFLOW.checks
def log_mlflow(
    obj: Report | GateResult,
    run_id: str | None = None,
    experiment: str | None = None,
    run_name: str | None = None,
    artifacts: bool = True,
) -> str:
    """Log ``obj`` (a :class:`Report` or a gate result) to MLflow and return the run id.

    Logs into ``run_id`` if given, else the active run, else a new run (in ``experiment``
    when named) that is ended afterwards. Metrics: ``{metric}`` (one run) or
    ``{run}.{metric}``, with ``/ci_low`` and ``/ci_high``; for a gate also
    ``gate.{metric}/passed`` (1, 0 or 0.5 for inconclusive) and ``gate.passed``."""
    mlflow: Any = require("mlflow", "mlflow", "log_mlflow()")
    gate = obj if isinstance(obj, GateResult) else None
    report = obj.report if isinstance(obj, GateResult) else obj
    if experiment is not None:
        mlflow.set_experiment(experiment)
    active = mlflow.active_run()
    started = None
    if run_id is not None:
        started = mlflow.start_run(run_id=run_id)
    elif active is None:
        name = run_name or str(report.metadata.get("dataset") or "ranklens")
        started = mlflow.start_run(run_name=name)
    try:
        run = mlflow.active_run()
        mlflow.log_metrics(_metrics(report, gate))
        mlflow.log_params(_params(report, gate))
        if artifacts:
            _artifacts(mlflow, report, gate)
        run_id_: str = run.info.run_id
        return run_id_
    finally:
        if started is not None:
            mlflow.end_run()


def _metrics(report: Report, gate: GateResult | None) -> dict[str, float]:
    one = len(report.runs) == 1
    out: dict[str, float] = {}
    for r in report.runs:
        for m in report.metrics:
            key = mlflow_key(m if one else f"{r}.{m}")
            s = report.summary[r][m]
            out[key] = float(s["value"])
            for bound in ("ci_low", "ci_high"):
                v = s.get(bound)
                if v is not None and v == v:  # not NaN
                    out[f"{key}/{bound}"] = float(v)
    if gate is not None:
        score = {"pass": 1.0, "fail": 0.0, "inconclusive": 0.5}
        for v in gate.verdicts:
            out[mlflow_key(f"gate.{v.metric}") + "/passed"] = score[v.status]
            if v.delta is not None:
                out[mlflow_key(f"gate.{v.metric}") + "/delta"] = float(v.delta)
        out["gate.passed"] = 1.0 if gate.passed else 0.0
    return out


def _params(report: Report, gate: GateResult | None) -> dict[str, str]:
    s = report.settings
    opts = report.metadata.get("options") or {}
    params = {
        "ranklens.runs": ",".join(report.runs),
        "ranklens.metric_names": ",".join(report.metrics),
        "ranklens.queries": str(len(report.query_ids)),
        "ranklens.dataset": str(report.metadata.get("dataset")),
        "ranklens.convention": str(report.metadata.get("convention")),
        "ranklens.relevance_level": str(opts.get("relevance_level")),
        **{f"ranklens.{k}": str(v) for k, v in s.items()},
    }
    if gate is not None:
        params.update({f"ranklens.gate.{k}": str(v) for k, v in gate.settings.items()})
        params["ranklens.gate.baseline"] = str(gate.baseline_path)
    return {mlflow_key(k): v[:500] for k, v in params.items()}


def _artifacts(mlflow: Any, report: Report, gate: GateResult | None) -> None:
    with tempfile.TemporaryDirectory(prefix="ranklens-mlflow-") as tmp:
        d = Path(tmp)
        report.to_csv(d / "per_query.csv", kind="per_query")
        report.to_json(d / "report.json")
        report.to_html(d / "report.html")
        if gate is not None:
            (d / "gate.json").write_text(json.dumps(gate.to_dict(), indent=1, default=str))
            (d / "gate.md").write_text(gate.to_markdown(), encoding="utf-8")
        mlflow.log_artifacts(str(d), artifact_path="ranklens")
