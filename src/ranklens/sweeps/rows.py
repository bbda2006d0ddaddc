"""A sweep's per-configuration facts (:func:`row`: parameters, metrics, latency, build,
index, failures, cost per 1,000 queries), the conditions that keep a configuration out of
the selection (:func:`all_failed`, :func:`unmatched`: no retrieved id has a label, with
the ``key=`` that would match) and the significance matrix (:func:`matrix`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..capture import suggest_key
from ..comparison import stats
from ..settings import Statistics
from .execute import Outcome
from .grid import value_text
from .records import Choice, FloatArray, MetricValue, PairMatrix, SweepRow


class Prices(NamedTuple):
    """Each configuration's price per call and per token (by name, checked:
    :func:`~.params.resolve_costs`), and each query's tokens (None: no tokens priced)."""

    per_call: dict[str, float] | None = None
    per_token: dict[str, float] | None = None
    tokens: dict[str, int] | None = None


def all_failed(o: Outcome) -> dict[str, str]:
    """The build error of a configuration every query of which failed."""
    assert o.result is not None
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
    if hasattr(qrels, "to_dict") and o.result is not None:
        found = suggest_key(
            {str(r.query_id): r for r in o.result.records if r.ok},
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


def row(o: Outcome, report: Any, costs: Prices) -> SweepRow:
    """One configuration's facts: parameters, metrics, latency, build, index, failures,
    cost per 1,000 queries, every attempt counted: ``1000 · Σ_q a_q (c + t · n_q) / |Q|``
    with ``a_q`` the attempts of query ``q``, ``c`` the configuration's price per call,
    ``t`` its price per token and ``n_q`` the query's tokens (``costs``)."""
    index = o.index or {}
    out = SweepRow(
        name=o.config.name,
        params={k: value_text(v) for k, v in o.config.params.items()},
        status="ok" if o.result is not None and not o.error else "failed",
        message=None if not o.error else f"{o.error['type']}: {o.error['message']}",
        build_s=o.build.get("seconds"),
        factory_s=o.build.get("factory_seconds"),
        shared_build=len(o.build.get("shared_by") or []),
        index_size=index.get("documents"),
        index_bytes=index.get("bytes"),
        build_note=o.build.get("not_measured"),  # why build_s/index_size are None
        resumed=o.resumed,
        log=o.log,
    )
    if o.result is None:
        return out
    info = o.result.report_info()
    lat, cpu = info.get("latency_ms") or {}, info.get("cpu_ms") or {}
    out.p50, out.p95, out.p99 = lat.get("p50"), lat.get("p95"), lat.get("p99")
    out.cpu_p50, out.queries, out.errors = cpu.get("p50"), info["queries"], info["errors"]
    if o.config.name in report.summary:
        out.metrics = {
            m: MetricValue(*(num(s.get(k)) for k in ("value", "ci_low", "ci_high")))
            for m, s in report.summary[o.config.name].items()
        }
    if costs.per_call is not None or costs.per_token is not None:
        name = o.config.name
        price = costs.per_call[name] if costs.per_call is not None else 0.0
        token_price = costs.per_token[name] if costs.per_token is not None else 0.0
        records = o.result.records
        attempts = sum(max(r.attempts, 1) for r in records)
        tokens = costs.tokens or {}
        spent = sum(max(r.attempts, 1) * tokens.get(str(r.query_id), 0) for r in records)
        total = attempts * price + spent * token_price
        out.cost = 1000.0 * total / max(len(records), 1)
    return out


def num(v: Any) -> float | None:
    """A finite number as float, else None."""
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


def matrix(
    v: FloatArray,
    pvalues: FloatArray,
    names: list[str],
    stats_: Statistics,
    lower_is_better: bool = False,
) -> PairMatrix:
    """Every pair of configurations (raw paired p-values ``pvalues``), corrected over all
    pairs and ordered best first (the highest mean; the lowest when ``lower_is_better``):
    ``diff[i][j]`` is row minus column, ``p_adj`` the corrected p-value."""
    order = np.argsort((1.0 if lower_is_better else -1.0) * v.mean(axis=1), kind="stable")
    v, names, pvalues = v[order], [names[i] for i in order], pvalues[np.ix_(order, order)]
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    adj = stats.correct(np.array([pvalues[i, j] for i, j in pairs]), stats_.correction)
    size = len(names)
    diff = [[0.0] * size for _ in range(size)]
    padj: list[list[float | None]] = [[None] * size for _ in range(size)]
    for (i, j), pa in zip(pairs, adj):
        dd = float((v[i] - v[j]).mean())
        diff[i][j], diff[j][i] = dd, -dd
        padj[i][j] = padj[j][i] = float(pa)
    return PairMatrix(names, diff, padj, stats_.alpha, stats_.correction, len(pairs))


def nothing_chosen(rows: list[SweepRow], selection: Choice, constraint: str | None) -> str | None:
    """Why a selection chose nothing, in words (None when it chose): no configuration was
    measured (the first failures named), or none that was measured satisfies the
    constraint."""
    if selection.chosen is not None:
        return None
    measured = [r for r in rows if r.status == "ok"]
    if not measured:
        bad = [r for r in rows if r.status != "ok"]
        kinds = {r.status for r in bad}
        head = (
            "no configuration's retrieved ids match a label"
            if kinds == {"unmatched"}
            else "no configuration could be measured"
        )
        listed = ", ".join(repr(r.name) for r in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        why = str(bad[0].message or bad[0].status)
        own = f"configuration {bad[0].name!r}: "
        why = why[len(own) :] if why.startswith(own) else why
        return f"{head} ({listed}{more}); the first: {why}"
    what = f"the constraint {constraint!r}" if constraint else "the constraint"
    return (
        f"none of the {len(measured)} measured configuration"
        f"{'s' if len(measured) > 1 else ''} satisfies {what}"
    )


def counts_line(counts: Mapping[str, Any]) -> str:
    """What a sweep asked, in words (said when some queries were not asked)."""
    out = f"asking the {counts['asked']:,} labelled queries of {counts['dataset']:,}"
    if counts.get("unlabelled"):
        out += (
            f"; {counts['unlabelled']:,} without labels are not asked (they would not be "
            "scored; queries='all' asks them)"
        )
    if counts.get("labelled_without_text"):
        out += (
            f"; {counts['labelled_without_text']:,} labelled queries have no text in the "
            "dataset: never asked, scored as missing"
        )
    return out
