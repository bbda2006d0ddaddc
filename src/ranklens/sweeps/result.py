"""What :func:`ranklens.sweep` returns: :class:`SweepResult`, a table of configurations
(quality, latency, build, index, failures, cost) with the honest selection per metric, the
per-parameter effects, the significance matrix, and the comparison :class:`~ranklens.Report`
of every measured configuration (whose HTML page draws the Pareto and effect charts and
keeps the query drill-down)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..escape import terminal
from .execute import Outcome
from .params import RESULT_CHOSEN, RESULT_HTML, RESULT_JSON, RESULT_ROW, RESULT_SAVE, one_of
from .records import Choice, Effect, PairMatrix, SweepRow
from .rows import counts_line

FORMAT = 1
"""Version of :meth:`SweepResult.to_dict`'s layout."""

COLUMNS = (
    ("p50", "p50 ms"),
    ("p95", "p95 ms"),
    ("cpu_p50", "CPU p50 ms"),
    ("build_s", "build s"),
    ("index_size", "indexed"),
    ("errors", "errors"),
    ("cost", "cost / 1k"),
)
"""The cost and latency columns of the table, as ``(row field, heading)``."""


@dataclass
class SweepResult:
    """A sweep's outcome (see the module docstring).

    ``rows``: one :class:`~ranklens.sweeps.records.SweepRow` per configuration, in grid
    order (``name``, ``params``, ``status`` ``"ok"``/``"failed"``/``"unmatched"`` with
    ``message``, ``metrics``: each metric's ``value``, ``ci_low``, ``ci_high``;
    ``p50``/``p95``/``p99``/``cpu_p50`` ms, ``build_s``, ``factory_s``, ``shared_build``,
    ``index_size``/``index_bytes``, ``queries``, ``errors``, ``cost`` per 1,000 queries,
    ``feasible``, ``pareto``, ``pareto_cost``, ``tied``, ``resumed``); ``selection``: per
    metric, the :class:`~ranklens.sweeps.records.Choice`
    (:func:`ranklens.sweeps.select.select`); ``effects``: per metric, each parameter
    value's :class:`~ranklens.sweeps.records.Effect` (marginal mean); ``matrices``: per
    metric, every pair tested (:class:`~ranklens.sweeps.records.PairMatrix`); each record
    has attributes and ``to_dict()`` (the layout of :meth:`to_dict`). ``report``: the
    :class:`~ranklens.Report` comparing the measured configurations; ``outcomes``: each
    configuration's :class:`~ranklens.sweeps.execute.Outcome` (its ``RunResult``);
    ``queries``: what was asked (``dataset``: the dataset's queries, ``asked``,
    ``unlabelled``: not asked, having no labels, ``labelled_without_text``, ``which``: the
    ``queries=`` switch)."""

    rows: list[SweepRow]
    metrics: list[str]
    keys: list[str]
    baseline: str
    selection: dict[str, Choice]
    effects: dict[str, list[Effect]]
    matrices: dict[str, PairMatrix]
    report: Any = field(repr=False)
    outcomes: list[Outcome] = field(repr=False)
    folder: str | None = None
    constraint: str | None = None
    dataset: str | None = None
    queries: dict[str, Any] | None = None

    # ---------------------------------------------------------------- answers
    @property
    def primary(self) -> str:
        """The first metric: the Pareto view's and :attr:`chosen`'s."""
        return self.metrics[0]

    @RESULT_CHOSEN.checks
    def chosen_name(self, metric: str | None = None) -> str | None:
        """The configuration chosen on ``metric`` (default: the primary one); None when
        nothing was chosen (:attr:`reason` says why)."""
        if metric is not None and metric not in self.selection:
            raise one_of("SweepResult.chosen_name", "metric", metric, self.metrics,
                         "one of the sweep's metrics")  # fmt: skip
        return self.selection[metric or self.primary].chosen

    @property
    def reason(self) -> str | None:
        """Why nothing was chosen on the primary metric (no configuration measured, the
        first failures named; or none satisfying the constraint), or None."""
        return self.selection[self.primary].reason

    @property
    def chosen(self) -> dict[str, Any] | None:
        """The parameters of the configuration chosen on the primary metric (the best on
        all queries within the constraint): what to deploy."""
        name = self.chosen_name()
        if not any(r.name == name for r in self.rows):
            return None
        return next(o.config.params for o in self.outcomes if o.config.name == name)

    @property
    def cv_estimate(self) -> float | None:
        """The held-out estimate of the primary metric for choosing by this sweep (None
        when nothing was chosen, or when there were too few queries to cross-validate a
        choice among several configurations)."""
        s = self.selection[self.primary]
        if s.chosen is not None and not s.folds and len(s.feasible) > 1:
            return None  # the in-sample best is not a held-out value
        return s.cv_estimate

    @property
    def in_sample_best(self) -> float | None:
        """The chosen configuration's mean on all queries (optimistic)."""
        return self.selection[self.primary].in_sample_best

    @property
    def tied(self) -> list[str]:
        """Configurations the chosen one does not significantly beat (primary metric)."""
        return list(self.selection[self.primary].tied or [])

    @property
    def notes(self) -> list[str]:
        """What the sweep says beside its numbers: the dataset's queries it did not ask
        (no labels), labelled queries without a text, a significance matrix not computed
        (too many configurations), and queries left out of a metric's selection because
        the metric is undefined on them for some configuration."""
        q = self.queries or {}
        out = [counts_line(q)] if q.get("unlabelled") or q.get("labelled_without_text") else []
        note = self.selection[self.primary].matrix_note
        if note:
            out.append(note)
        for m, s in self.selection.items():
            n = s.queries_left_out
            if n:
                out.append(
                    f"{m}: {n:,} {'query' if n == 1 else 'queries'} on which it is undefined "
                    f"for some configuration {'is' if n == 1 else 'are'} left out of the "
                    f"selection (made on {s.n_queries:,})"
                )
        return out

    @property
    def results(self) -> dict[str, Any]:
        """Each measured configuration's :class:`~ranklens.RunResult`, by name."""
        return {o.config.name: o.result for o in self.outcomes if o.result is not None}

    @property
    def failed(self) -> dict[str, str | None]:
        """Configurations that could not be measured, and why."""
        return {r.name: r.message for r in self.rows if r.status == "failed"}

    @RESULT_ROW.checks
    def row(self, name: str) -> SweepRow:
        """The row of the configuration called ``name`` (a :class:`SweepRow`)."""
        for r in self.rows:
            if r.name == name:
                return r
        raise one_of("SweepResult.row", "name", name, [r.name for r in self.rows],
                     "a configuration's name")  # fmt: skip

    # ---------------------------------------------------------------- outputs
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (the HTML report's ``metadata["sweep"]``)."""
        selection = {m: s.to_dict(values=False) for m, s in self.selection.items()}
        out: dict[str, Any] = _clean(
            {
                "format": FORMAT,
                "dataset": self.dataset,
                "metrics": self.metrics,
                "keys": self.keys,
                "baseline": self.baseline,
                "constraint": self.constraint,
                "queries": self.queries,
                "notes": self.notes,
                "folder": self.folder,
                "rows": [r.to_dict() for r in self.rows],
                "selection": selection,
                "effects": {m: [e.to_dict() for e in es] for m, es in self.effects.items()},
                "matrices": {m: x.to_dict() for m, x in self.matrices.items()},
            }
        )
        return out

    @RESULT_JSON.checks
    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    @RESULT_SAVE.checks
    def save(self, path: str | Path) -> None:
        """The sweep as JSON (:meth:`to_dict`)."""
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    def table(self) -> list[dict[str, Any]]:
        """One flat dict per configuration: parameters, each metric's mean, latency,
        build, index, errors, cost and flags (the rows of :meth:`to_pandas`)."""
        out = []
        for r in self.rows:
            flat: dict[str, Any] = {"configuration": r.name, **r.params}
            for m in self.metrics:
                flat[m] = r.value(m)
            for k, _ in COLUMNS:
                flat[k] = getattr(r, k)
            flat.update(status=r.status, feasible=r.feasible, pareto=r.pareto, tied=r.tied)
            out.append(flat)
        return out

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame indexed by configuration."""
        from ..errors import require

        pd = require("pandas", "pandas", "SweepResult.to_pandas()")
        return pd.DataFrame(self.table()).set_index("configuration")  # type: ignore[attr-defined]

    def to_markdown(self) -> str:
        """The summary and the table as Markdown."""
        from ..comparison import get_renderer

        return str(get_renderer("sweep_markdown")(self.to_dict()))

    @RESULT_HTML.checks
    def to_html(self, path: str | Path | None = None, **options: Any) -> str | None:
        """The comparison report with the sweep's section (Pareto and effect charts,
        significance matrix) as one self-contained page; written to ``path`` if given."""
        page: str | None = self.report.to_html(path, **options)
        return page

    def __str__(self) -> str:
        from ..comparison import get_renderer

        return str(get_renderer("sweep_text")(self.to_dict()))

    def _repr_html_(self) -> str:
        from ..comparison import get_renderer

        return str(get_renderer("sweep_html")(self.to_dict()))

    def __repr__(self) -> str:
        s = self.selection[self.primary]
        if s.chosen is None or s.cv_estimate is None or s.in_sample_best is None:
            why = terminal(s.reason or "none satisfies the constraint")
            return f"SweepResult({len(self.rows)} configurations, none chosen: {why})"
        return (
            f"SweepResult({len(self.rows)} configurations, {self.primary}: chosen "
            f"{s.chosen!r}, cross-validated {s.cv_estimate:.4f}, "
            f"in-sample {s.in_sample_best:.4f})"
        )


def _clean(x: Any) -> Any:
    """NaN and infinities as None (strict JSON), tuples as lists, recursively."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    return x
