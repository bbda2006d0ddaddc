"""One labelled set against several snapshots of a changing corpus: does the ranking of the
systems hold, and which labels point at documents that changed?

:func:`compare_snapshots` evaluates the same systems on each snapshot (one
:func:`~ranklens.compare` report per snapshot, every pair of systems tested), then, for each
pair of snapshots ``(A, B)`` and each metric:

* **Kendall's tau** between the systems' means on A and on B, ``τ_b = (C − D) /
  √((P − T_A)(P − T_B))`` over the ``P = m(m − 1)/2`` pairs of ``m`` systems (``C``
  concordant, ``D`` discordant, ``T`` pairs tied on one side; Kendall 1945), with a
  percentile bootstrap interval over the labelled queries: each resample draws queries
  with replacement and recomputes every system's mean on both snapshots from the same
  draw (:func:`~.stats.bootstrap_weights`), so the interval says how far the agreement is
  owed to the sample of queries. Voorhees (SIGIR 1998; IP&M 2000) takes τ ≥ 0.9 as "the
  same ranking" when judgments change; LongEval (CLEF 2023) re-evaluates systems on later
  snapshots of a collection in this way;
* the **swaps**: each pair of systems whose order flips, with its paired test's p-value on
  each snapshot (a swap between two systems no test could tell apart is noise);
* the **relative drop** of each system's mean, ``(m_A − m_B) / m_A`` (LongEval's relative
  nDCG drop for any metric).

With each snapshot's documents (``corpora=``: ``{doc: text}``, a corpus of records or a
:class:`~ranklens.Dataset`), every label whose document changed between consecutive
snapshots is listed: its text differs (``changed``), it is gone (``removed``), or it
appeared (``added``): the labels to check before trusting an old judgment on a new corpus.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

import numpy as np

from ..declared import STATISTICS, ParameterError, data, declare, mapping, path, text
from ..errors import InputError, closest
from ..io import coerce_qrels
from ..metrics import lower_is_better
from ..metrics.trec_forms import METRICS
from ..model import Dataset
from ..settings import Statistics
from . import stats as st
from .compare import compare
from .contents import ReportContents
from .report import Report, write_output
from .settings_use import STATS_OPTION, split_statistics, statistics
from .snapshot_rows import ChangedLabel, SnapshotAgreement, SnapshotSettings, Swap
from .targets import stray_keywords

SNAPSHOTS = declare("Snapshots", {
    "reports": data("{snapshot: Report}"),
    "agreement": data("per pair of snapshots and metric: tau, its interval, swaps, drops"),
    "changed": data("labels whose document changed"),
    "settings": data("the settings compare_snapshots used"),
})  # fmt: skip
SNAPSHOTS_TAU = declare("Snapshots.tau", {
    "a": text(None, "the earlier snapshot"),
    "b": text(None, "the later snapshot"),
    "metric": text(None, "a metric of the reports"),
})  # fmt: skip
SNAPSHOTS_SAVE = declare("Snapshots.save", {"path": path(None, "the JSON file to write")})
COMPARE_SNAPSHOTS = declare("compare_snapshots", {
    "labels": data("the labels: anything ranklens.compare takes, or a Dataset"),
    "snapshots": mapping(None, "{snapshot: {system: run}} in time order, two or more"),
    "metrics": METRICS,
    "corpora": mapping(None, "{snapshot: documents} to list the labels whose document changed",
                       none=True),
    "stats": STATS_OPTION,
    **{k: STATISTICS[k] for k in ("confidence", "n_resamples", "seed", "test")},
})  # fmt: skip


class Snapshots:
    """The outcome of :func:`compare_snapshots`: ``reports[snapshot]`` (a
    :class:`~ranklens.Report` each), ``agreement`` (per pair of snapshots and metric, a
    :class:`~.snapshot_rows.SnapshotAgreement`: tau, its interval, swaps and relative
    drops), ``changed`` (labels whose document changed, per pair of consecutive snapshots,
    :class:`~.snapshot_rows.ChangedLabel`), ``settings``
    (:class:`~.snapshot_rows.SnapshotSettings`); ``to_dict()`` is the plain data;
    :meth:`to_pandas` the agreement rows as a table; rendered by the ``snapshots_text`` and
    ``snapshots_markdown`` renderers (``str(snapshots)``, :meth:`to_markdown`)."""

    @SNAPSHOTS.checks
    def __init__(
        self,
        reports: dict[str, Report],
        agreement: list[SnapshotAgreement],
        changed: list[ChangedLabel],
        settings: SnapshotSettings,
    ) -> None:
        self.reports = reports
        self.agreement = agreement
        self.changed = changed
        self.settings = settings

    @property
    def snapshots(self) -> list[str]:
        return list(self.reports)

    @property
    def systems(self) -> list[str]:
        return list(next(iter(self.reports.values())).runs)

    @property
    def metrics(self) -> list[str]:
        return list(next(iter(self.reports.values())).metrics)

    @SNAPSHOTS_TAU.checks
    def tau(self, a: str, b: str, metric: str) -> tuple[float, float, float]:
        """``(tau, low, high)`` between snapshots ``a`` and ``b`` on ``metric`` (an unknown
        snapshot or metric is an error naming it and the closest)."""
        for row in self.agreement:
            if (row.a, row.b, row.metric) == (a, b, metric):
                return row.tau, row.low, row.high
        for name, value, known in (("a", a, self.snapshots), ("b", b, self.snapshots),
                                   ("metric", metric, self.metrics)):  # fmt: skip
            if value not in known:
                near = closest(value, known)
                hint = f"; did you mean {near!r}?" if near else ""
                raise ParameterError(
                    f"Snapshots.tau: {name} must be one of {', '.join(map(repr, known))}, got "
                    f"{value!r}{hint}"
                )
        raise ParameterError(
            f"Snapshots.tau: a must be a snapshot before b (order: {', '.join(self.snapshots)}),"
            f" got a={a!r}, b={b!r}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data: each snapshot's values, the agreement rows, the changed
        labels and the settings (what the renderers read)."""
        values = {
            s: {r: {m: rep.value(r, m) for m in rep.metrics} for r in rep.runs}
            for s, rep in self.reports.items()
        }
        return {
            "snapshots": self.snapshots,
            "systems": self.systems,
            "metrics": self.metrics,
            "values": values,
            "agreement": [row.to_dict() for row in self.agreement],
            "changed": [c.to_dict() for c in self.changed],
            "settings": self.settings.to_dict(),
        }

    def to_pandas(self) -> Any:
        """The agreement rows as a ``pandas.DataFrame``: one row per pair of snapshots and
        metric (``a``, ``b``, ``metric``, ``n``, ``tau``, ``low``, ``high``, ``swaps``:
        the number of swapped pairs)."""
        import pandas as pd

        rows = [{**row.to_dict(), "swaps": len(row.swaps)} for row in self.agreement]
        for row in rows:
            row.pop("drop")
        return pd.DataFrame(rows, columns=["a", "b", "metric", "n", "tau", "low", "high", "swaps"])

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(_plain(self.to_dict()), **kwargs)

    @SNAPSHOTS_SAVE.checks
    def save(self, path: str | Path) -> Path:
        """The JSON of :meth:`to_dict` written to ``path`` (a missing folder is named)."""
        return write_output(self.to_json(indent=1), path, "Snapshots.save")

    def to_text(self) -> str:
        from .renderers import render_text

        return render_text("snapshots_text", self.to_dict())

    def to_markdown(self) -> str:
        from .renderers import render_text

        return render_text("snapshots_markdown", self.to_dict())

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"Snapshots({len(self.reports)} snapshots x {len(self.systems)} systems x "
            f"{len(self.metrics)} metrics; {len(self.changed)} labels on changed documents)"
        )


@COMPARE_SNAPSHOTS.checks
def compare_snapshots(
    labels: Any,
    snapshots: Mapping[str, Mapping[str, Any]],
    metrics: Any = ("ndcg@10", "recall@100", "mrr@10"),
    *,
    corpora: Mapping[str, Any] | None = None,
    stats: Statistics | None = None,
    **options: Any,
) -> Snapshots:
    """Evaluate one labelled set on several snapshots of a corpus (see the module
    docstring). ``snapshots``: ``{snapshot: {system: run}}`` in time order, the same systems
    in each (a run is anything :func:`~ranklens.compare` takes: a file, a dict, a runner's
    result); ``corpora``: ``{snapshot: documents}`` to list the labels whose document
    changed; ``options``: as for :func:`~ranklens.compare` (``versions=``, ``convention=``,
    ...). ``stats``: a :class:`~ranklens.Statistics` for each snapshot's report and tau's
    interval, a ``stats.confidence`` percentile bootstrap of ``stats.n_resamples`` with
    ``stats.seed``. The flat keywords ``confidence=``, ``n_resamples=``, ``seed=``,
    ``test=`` still work for one release with a ``DeprecationWarning`` (write
    ``stats=ranklens.Statistics(n_resamples=2000)``); one beside ``stats=`` is an error."""
    flat, options = split_statistics(options)
    stray_keywords(options, COMPARE_SNAPSHOTS)
    stats = statistics("compare_snapshots", stats, COMPARE_SNAPSHOTS.check(flat, unknown="keep"))
    if len(snapshots) < 2:
        raise ParameterError(
            "compare_snapshots: snapshots must be {snapshot: {system: run}} for two or more "
            f"snapshots, got {len(snapshots)} ({', '.join(map(repr, snapshots))})"
        )
    names = [str(s) for s in snapshots]
    systems = None
    for s, runs in snapshots.items():
        if not isinstance(runs, Mapping) or not runs:
            raise ParameterError(
                f"compare_snapshots: snapshot {s!r} must give its systems' runs as "
                f"{{system: run}}, got {runs!r:.60}"
            )
        if systems is None:
            systems = list(map(str, runs))
        elif set(map(str, runs)) != set(systems):
            raise InputError(
                f"snapshot {s!r} has systems {sorted(map(str, runs))}, the first has "
                f"{sorted(systems)}: compare the same systems on every snapshot"
            )
    assert systems is not None
    if len(systems) < 2:
        raise ParameterError(
            f"compare_snapshots: each snapshot must have two or more systems (whether their "
            f"ranking holds needs a ranking), got {len(systems)}: {', '.join(map(repr, systems))}"
        )
    qrels = coerce_qrels(labels)
    reports = {
        str(s): compare(
            labels if isinstance(labels, Dataset) else qrels,
            {n: runs[n] for n in systems},
            metrics,
            baseline=None,
            stats=stats,
            contents=ReportContents(drilldown=None),
            **options,
        )
        for s, runs in snapshots.items()
    }
    agreement = [
        row
        for a, b in combinations(names, 2)
        for row in _agreement(reports[a], reports[b], a, b, stats)
    ]
    changed = _changed(qrels, names, corpora) if corpora is not None else []
    settings = SnapshotSettings(
        stats.confidence, stats.n_resamples, stats.seed, stats.test, corpora is not None
    )
    return Snapshots(reports, agreement, changed, settings)


def _agreement(A: Report, B: Report, a: str, b: str, stats: Statistics) -> list[SnapshotAgreement]:
    """Per metric: tau between the systems' means on A and B, its bootstrap interval over
    the queries both evaluated, the swapped pairs and the relative drops."""
    systems = list(A.runs)
    qa, qb = {q: i for i, q in enumerate(A.query_ids)}, {q: i for i, q in enumerate(B.query_ids)}
    common = [q for q in A.query_ids if q in qb]
    ia = np.array([qa[q] for q in common], dtype=np.int64)
    ib = np.array([qb[q] for q in common], dtype=np.int64)
    rows = []
    for m in A.metrics:
        va = np.nan_to_num(np.column_stack([A.per_query[s][m][ia] for s in systems]))
        vb = np.nan_to_num(np.column_stack([B.per_query[s][m][ib] for s in systems]))
        tau = float(kendall_tau(va.mean(axis=0)[None, :], vb.mean(axis=0)[None, :])[0])
        draws = []
        for w in st.bootstrap_weights(len(common), stats.n_resamples, stats.seed):
            n = max(len(common), 1)
            draws.append(kendall_tau(w @ va / n, w @ vb / n))
        t = np.concatenate(draws) if draws else np.zeros(0)
        t = t[~np.isnan(t)]
        lo, hi = (
            np.quantile(t, [(1 - stats.confidence) / 2, (1 + stats.confidence) / 2]).tolist()
            if len(t)
            else (np.nan, np.nan)
        )
        rows.append(
            SnapshotAgreement(
                a,
                b,
                m,
                len(common),
                tau,
                lo,
                hi,
                _swaps(A, B, m, systems),
                {s: _drop(A.value(s, m), B.value(s, m)) for s in systems},
            )
        )
    return rows


def kendall_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the rows of ``x`` and ``y`` (``(resamples, systems)``), one
    value per row; NaN where either side ties every pair."""
    i, j = np.triu_indices(x.shape[1], 1)
    sx = np.sign(x[:, i] - x[:, j])
    sy = np.sign(y[:, i] - y[:, j])
    pairs = len(i)
    nx = pairs - (sx == 0).sum(axis=1)
    ny = pairs - (sy == 0).sum(axis=1)
    den = np.sqrt(nx.astype(np.float64) * ny)
    out = np.full(x.shape[0], np.nan)
    np.divide((sx * sy).sum(axis=1), den, out=out, where=den > 0)
    return out


def _swaps(A: Report, B: Report, m: str, systems: list[str]) -> list[Swap]:
    """The pairs of systems ordered one way on A and the other on B, each with its paired
    test's (corrected) p-value on both."""
    sign = -1.0 if lower_is_better(m) else 1.0
    out = []
    for s, t in combinations(systems, 2):
        da = sign * (A.value(s, m) - A.value(t, m))
        db = sign * (B.value(s, m) - B.value(t, m))
        if da * db < 0:
            first, second = (s, t) if da > 0 else (t, s)
            out.append(Swap(first, second, _p(A, m, s, t), _p(B, m, s, t)))
    return out


def _p(R: Report, m: str, s: str, t: str) -> float | None:
    for c in R.comparisons:
        if c.metric == m and {c.run, c.other} == {s, t}:
            return float(c.pvalue_adjusted)
    return None


def _drop(va: float, vb: float) -> float | None:
    return (va - vb) / va if va else None


def _texts(docs: Any, snapshot: str) -> dict[str, str]:
    """``{doc: text}`` of a snapshot's documents."""
    if isinstance(docs, Dataset):
        docs = docs.corpus
        if docs is None:
            raise InputError(f"snapshot {snapshot!r}: the dataset has no corpus")
    if not isinstance(docs, Mapping):
        raise InputError(
            f"snapshot {snapshot!r}: documents must be {{doc: text}}, a corpus of records or a "
            f"Dataset, got {type(docs).__name__}"
        )
    out = {}
    for d, v in docs.items():
        if isinstance(v, Mapping):
            v = f"{v.get('title') or ''}\n{v.get('text') or ''}"
        out[str(d)] = hashlib.blake2b(str(v).strip().encode(), digest_size=16).hexdigest()
    return out


def _changed(qrels: Any, names: list[str], corpora: Mapping[str, Any]) -> list[ChangedLabel]:
    """Every label whose document changed between consecutive snapshots."""
    missing = [s for s in names if s not in corpora]
    if missing:
        raise InputError(f"corpora: no documents for snapshot(s) {', '.join(map(repr, missing))}")
    hashed = {s: _texts(corpora[s], s) for s in names}
    labels = [
        (str(qrels.query_ids[q]), str(qrels.doc_ids[d]), int(g))
        for q, d, g in zip(qrels.q.tolist(), qrels.d.tolist(), qrels.grade.tolist())
    ]
    out = []
    for a, b in pairwise(names):
        ha, hb = hashed[a], hashed[b]
        for q, d, g in labels:
            before, after = ha.get(d), hb.get(d)
            what = (
                None
                if before == after
                else "added"
                if before is None
                else "removed"
                if after is None
                else "changed"
            )
            if what:
                out.append(ChangedLabel(a, b, q, d, g, what))
    return out


def _plain(x: Any) -> Any:
    if isinstance(x, float) and not np.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x
