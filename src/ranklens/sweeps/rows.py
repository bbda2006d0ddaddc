"""A sweep's per-configuration facts (:func:`row`: parameters, metrics, latency, build,
index, failures, cost per 1,000 queries), the conditions that keep a configuration out of
the selection (:func:`all_failed`, :func:`unmatched`: no retrieved id has a label, with
the ``key=`` that would match) and the significance matrix (:func:`matrix`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..capture.matching import suggest_key
from ..comparison import stats
from .execute import Outcome
from .grid import value_text


def all_failed(o: Outcome) -> dict[str, str]:
    errs = o.result.report_info().get("error_types") or {}
    kinds = ", ".join(f"{n} {t}" for t, n in errs.items())
    return {
        "type": "AllQueriesFailed",
        "message": f"every one of its {len(o.result.records)} queries failed ({kinds}); "
        "its records say why (SweepResult.results[name].failed)",
    }


def unmatched(o: Outcome, report: Any, labels: Any) -> str | None:
    """A note for a configuration none of whose retrieved ids has a label."""
    c = report.counts.get(o.config.name) or {}
    if not c.get("hits_retrieved") or c.get("hits_labelled"):
        return None
    qrels = getattr(labels, "qrels", labels)
    fix = "pass key= naming the field of the hits that holds document ids (docs/hit-identity.md)"
    if hasattr(qrels, "to_dict"):
        found = suggest_key(
            {r.query_id: r for r in o.result.records if r.ok},
            qrels.to_dict(),
            o.result.config.get("key") or "id",
        )
        if found is not None:
            fix = f"key={found[0]!r} would match {found[1]:,} hits: pass key={found[0]!r}"
    return (
        f"configuration {o.config.name!r}: none of its {c['hits_retrieved']:,} retrieved ids "
        f"has a label, so every metric reads 0 (chunk or node ids against document labels?); "
        f"{fix}. It is left out of the selection."
    )


def row(o: Outcome, report: Any, costs: tuple) -> dict[str, Any]:
    """One configuration's facts: parameters, metrics, latency, build, index, failures,
    cost (per 1,000 queries, every attempt counted)."""
    row: dict[str, Any] = {
        "name": o.config.name,
        "params": {k: value_text(v) for k, v in o.config.params.items()},
        "status": "ok" if o.result is not None and not o.error else "failed",
        "message": None if not o.error else f"{o.error['type']}: {o.error['message']}",
        "metrics": {},
        "p50": None,
        "p95": None,
        "p99": None,
        "cpu_p50": None,
        "build_s": o.build.get("seconds"),
        "factory_s": o.build.get("factory_seconds"),
        "shared_build": len(o.build.get("shared_by") or []),
        "index_size": (o.index or {}).get("documents"),
        "index_bytes": (o.index or {}).get("bytes"),
        "build_note": o.build.get("not_measured"),  # why build_s/index_size are None
        "queries": None,
        "errors": None,
        "cost": None,
        "resumed": o.resumed,
        "log": o.log,
    }
    if o.result is None:
        return row
    info = o.result.report_info()
    lat, cpu = info.get("latency_ms") or {}, info.get("cpu_ms") or {}
    row.update(
        p50=lat.get("p50"),
        p95=lat.get("p95"),
        p99=lat.get("p99"),
        cpu_p50=cpu.get("p50"),
        queries=info["queries"],
        errors=info["errors"],
    )
    if o.config.name in report.summary:
        row["metrics"] = {
            m: {k: num(s.get(k)) for k in ("value", "ci_low", "ci_high")}
            for m, s in report.summary[o.config.name].items()
        }
    per_call, per_token, count = costs
    if per_call is not None or per_token is not None:
        params = o.config.params
        price = per_call(params) if callable(per_call) else per_call or 0.0
        token_price = per_token(params) if callable(per_token) else per_token or 0.0
        attempts = sum(max(r.attempts, 1) for r in o.result.records)
        tokens = sum(max(r.attempts, 1) * count(r.query) for r in o.result.records) if count else 0
        total = attempts * float(price) + tokens * float(token_price)
        row["cost"] = 1000.0 * total / max(len(o.result.records), 1)
    return row


def num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


def matrix(
    v: np.ndarray,
    pvalues: np.ndarray,
    names: list[str],
    settings: dict[str, Any],
    lower_is_better: bool = False,
) -> dict[str, Any]:
    """Every pair of configurations (raw paired p-values ``pvalues``), corrected over all
    pairs and ordered best first (the highest mean; the lowest when ``lower_is_better``):
    ``diff[i][j]`` is row minus column, ``p_adj`` the corrected p-value."""
    order = np.argsort((1.0 if lower_is_better else -1.0) * v.mean(axis=1), kind="stable")
    v, names, pvalues = v[order], [names[i] for i in order], pvalues[np.ix_(order, order)]
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    adj = stats.correct(np.array([pvalues[i, j] for i, j in pairs]), settings["correction"])
    size = len(names)
    diff = [[0.0] * size for _ in range(size)]
    padj = [[None] * size for _ in range(size)]
    for (i, j), pa in zip(pairs, adj):
        dd = float((v[i] - v[j]).mean())
        diff[i][j], diff[j][i] = dd, -dd
        padj[i][j] = padj[j][i] = float(pa)
    return {
        "names": names,
        "diff": diff,
        "p_adj": padj,
        "alpha": settings["alpha"],
        "correction": settings["correction"],
        "tests": len(pairs),
    }
