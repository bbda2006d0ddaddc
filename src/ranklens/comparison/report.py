"""``Report``: one uniform result object for one or many runs on several metrics.

A report holds per-query values, aggregates with confidence intervals, the counts judging
reported, paired comparisons with their p-values, metric@k curves and metadata (dataset,
convention, options, versions, time, and the runner's latency and error counts when a run
came from a retriever). It saves to a versioned JSON schema and loads back equal, and it
renders itself through the renderer registry (:mod:`.renderers`): ``print(report)``
(terminal), :meth:`Report.to_markdown`, :meth:`Report.to_csv`, :meth:`Report.to_latex`,
:meth:`Report.to_pandas`, :meth:`Report.to_json`, :meth:`Report.to_html`, ``_repr_html_``
in Jupyter, and :meth:`Report.render` for any registered format.

Reports are made by :func:`ranklens.compare`.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ..declared import NONNEGATIVE, ParameterError, choice, count, declare, flag, path, text
from ..errors import InputError, closest
from ..io.records import load_json
from ..metrics import lower_is_better
from .display import RAW_FORMATS, display_copy
from .renderers import get_renderer, render_text
from .schema import check_metadata, validate_report_dict

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table

TextFormat = Literal["text", "markdown", "csv", "latex", "html", "html_fragment"]
"""The built-in formats whose renderers return text."""

_DIGITS = count(4, NONNEGATIVE, "digits after the decimal point")
_DETAILS = flag(False, "every metric of each note and the queries behind it")
_PATH = path(None, "the file to write (None: only returned)", none=True)
_KIND = choice("summary", ("summary", "per_query", "comparisons"), "which table")
TO_TEXT = declare("Report.to_text", {
    "digits": _DIGITS, "color": flag(False, "ANSI colours"), "details": _DETAILS,
})  # fmt: skip
PRINT = declare("Report.print", {"digits": _DIGITS, "details": _DETAILS})
TO_MARKDOWN = declare("Report.to_markdown", {"digits": _DIGITS, "details": _DETAILS})
TO_LATEX = declare("Report.to_latex", {
    "digits": _DIGITS, "caption": text(None, "the table's caption", none=True, empty=True),
})  # fmt: skip
TO_CSV = declare("Report.to_csv", {"path": _PATH, "kind": _KIND})
TO_PANDAS = declare("Report.to_pandas", {"kind": _KIND})
TO_HTML = declare("Report.to_html", {
    "path": _PATH, "title": text(None, "the page's title", none=True, empty=True),
})  # fmt: skip
TO_JSON = declare("Report.to_json", {"path": _PATH})
RENDER = declare("Report.render", {"fmt": text(None, "a renderer's name (text, markdown, ...)")})
LOAD_REPORT = declare("load_report", {"path": path(None, "a report saved with Report.save")})


def write_output(text: str, path: str | Path, where: str) -> Path:
    """``text`` written to ``path`` (UTF-8); a folder that does not exist, or a path that
    cannot be written, is an error naming ``where`` and the path."""
    p = Path(path)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as exc:
        why = "its folder does not exist" if not p.parent.is_dir() else exc.strerror or exc
        raise InputError(f"{where}: cannot write {str(p)!r}: {why}") from None
    return p


SCHEMA = "ranklens.report"
SCHEMA_VERSION = 1

RUN_LETTERS = "abcdefghijklmnoprstuvwxyz"
"""Each run's marker letter, in run order (``q`` is skipped: it has no superscript form)."""


@dataclass(frozen=True)
class Comparison:
    """One paired test: ``run`` against ``other`` on ``metric``.

    ``diff`` is ``mean(run) - mean(other)`` over the ``n`` queries both evaluated;
    ``pvalue`` is the raw two-sided p-value, ``pvalue_adjusted`` after the correction
    (over the comparisons of the same metric); ``significant`` is
    ``pvalue_adjusted < alpha``; ``effect_size`` is Cohen's d_z; ``wins``/``ties``/
    ``losses`` count queries where ``run`` is above, equal to, below ``other``.
    """

    metric: str
    run: str
    other: str
    diff: float
    pvalue: float
    pvalue_adjusted: float
    significant: bool
    effect_size: float
    wins: int
    ties: int
    losses: int
    n: int

    @property
    def winner(self) -> str | None:
        """The significantly better run of the pair, or None."""
        if not self.significant or self.diff == 0:
            return None
        up = (self.diff > 0) != lower_is_better(self.metric)  # outdated@k: lower is better
        return self.run if up else self.other


@dataclass
class Report:
    """Runs x metrics with per-query values, intervals, comparisons and metadata.

    * ``runs``, ``metrics``: names in display order; ``query_ids``: every query any run was
      evaluated on;
    * ``per_query[run][metric]``: values aligned with ``query_ids`` (NaN where that run did
      not evaluate the query, e.g. skipped missing queries);
    * ``summary[run][metric]``: ``{"value", "ci_low", "ci_high", "n"}`` (the interval is of
      the mean; None for metrics aggregated as sums or geometric means);
    * ``counts[run]``: what judging counted (missing, ignored, duplicates...);
    * ``comparisons``: :class:`Comparison` rows; ``settings``: test, correction, alpha,
      resamples, interval method, seed, baseline;
    * ``curves[run][family]``: ``{k: mean}`` for the cutoff metrics;
    * ``queries``: query id → text when a dataset was given; ``metadata``: dataset,
      convention, options, versions, creation time, ``run_info`` (latency, errors).
    """

    runs: list[str]
    metrics: list[str]
    query_ids: list[str]
    per_query: dict[str, dict[str, np.ndarray]]
    summary: dict[str, dict[str, dict[str, Any]]]
    counts: dict[str, dict[str, Any]] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    curves: dict[str, dict[str, dict[int, float]]] = field(default_factory=dict)
    queries: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    aggregations: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ access
    @property
    def baseline(self) -> str | None:
        return self.settings.get("baseline")

    @property
    def alpha(self) -> float:
        return float(self.settings.get("alpha", 0.05))

    def _known(self, where: str, run: str | None = None, metric: str | None = None) -> None:
        """A run or metric the report does not hold is an error naming the method, what it
        holds and the closest (never a bare KeyError)."""
        for name, value, held in (("run", run, self.runs), ("metric", metric, self.metrics)):
            if value is not None and value not in held:
                near = closest(str(value), held)
                hint = f"; did you mean {near!r}?" if near else ""
                raise ParameterError(
                    f"Report.{where}: {name} must be one of the report's {name}s "
                    f"({', '.join(map(repr, held))}), got {value!r}{hint}"
                )

    def value(self, run: str, metric: str) -> float:
        """The aggregate of ``metric`` for ``run``."""
        self._known("value", run, metric)
        return float(self.summary[run][metric]["value"])

    @property
    def target_verdicts(self) -> dict[str, list[Any]]:
        """``{run: [TargetVerdict, ...]}`` when compared with a profile or targets."""
        from .verdict import report_verdicts

        return report_verdicts(self)

    def letter(self, run: str) -> str:
        """The marker letter of ``run``."""
        self._known("letter", run)
        i = self.runs.index(run)
        return RUN_LETTERS[i] if i < len(RUN_LETTERS) else str(i + 1)

    def comparison(self, run: str, other: str, metric: str) -> Comparison | None:
        """The comparison of two runs on a metric, oriented as ``run - other``."""
        self._known("comparison", run, metric)
        self._known("comparison", other)
        for c in self.comparisons:
            if c.metric != metric:
                continue
            if (c.run, c.other) == (run, other):
                return c
            if (c.run, c.other) == (other, run):
                return _flip(c)
        return None

    def beats(self, run: str, metric: str) -> list[str]:
        """The runs that ``run`` is significantly better than on ``metric``."""
        self._known("beats", run, metric)
        out = []
        for c in self.comparisons:
            if c.metric == metric and c.winner == run:
                out.append(c.other if c.run == run else c.run)
        return sorted(out, key=self.runs.index)

    def best(self, metric: str) -> str | None:
        """The run with the highest aggregate of ``metric`` (the lowest for a metric where
        lower is better, such as ``outdated@k``)."""
        self._known("best", metric=metric)
        vals = [(self.value(r, metric), r) for r in self.runs]
        vals = [(v, r) for v, r in vals if math.isfinite(v)]
        pick = min if lower_is_better(metric) else max
        return pick(vals, key=lambda t: t[0])[1] if vals else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Report):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """The versioned JSON-ready form (NaN and infinities become None/strings)."""
        return {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "runs": list(self.runs),
            "metrics": list(self.metrics),
            "aggregations": dict(self.aggregations),
            "query_ids": list(self.query_ids),
            "per_query": {
                r: {m: [_num(x) for x in self.per_query[r][m].tolist()] for m in self.metrics}
                for r in self.runs
            },
            "summary": {
                r: {m: {k: _num(v) for k, v in self.summary[r][m].items()} for m in self.metrics}
                for r in self.runs
            },
            "counts": self.counts,
            "comparisons": [{k: _num(v) for k, v in asdict(c).items()} for c in self.comparisons],
            "settings": self.settings,
            "curves": {
                r: {fam: {str(k): _num(v) for k, v in pts.items()} for fam, pts in fams.items()}
                for r, fams in self.curves.items()
            },
            "queries": self.queries,
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """Rebuild a report from :meth:`to_dict` output (checks schema and version)."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise InputError(f"not a ranklens report: field 'schema' is not {SCHEMA!r}")
        version = data.get("version")
        if version != SCHEMA_VERSION:
            raise InputError(
                f"report schema version {version!r} is not supported "
                f"(this ranklens reads version {SCHEMA_VERSION})"
            )
        validate_report_dict(data)
        try:
            runs, metrics = list(data["runs"]), list(data["metrics"])
            per_query = {
                r: {
                    m: np.array([_unnum(x) for x in data["per_query"][r][m]], dtype=np.float64)
                    for m in metrics
                }
                for r in runs
            }
            summary = {
                r: {m: {k: _unnum(v) for k, v in data["summary"][r][m].items()} for m in metrics}
                for r in runs
            }
            comparisons = [
                Comparison(**{k: _unnum(v) if k in _FLOAT_FIELDS else v for k, v in c.items()})
                for c in data["comparisons"]
            ]
            curves = {
                r: {fam: {int(k): _unnum(v) for k, v in pts.items()} for fam, pts in fams.items()}
                for r, fams in data.get("curves", {}).items()
            }
            return cls(
                runs=runs,
                metrics=metrics,
                query_ids=list(data["query_ids"]),
                per_query=per_query,
                summary=summary,
                counts=data.get("counts", {}),
                comparisons=comparisons,
                settings=data.get("settings", {}),
                curves=curves,
                queries=data.get("queries", {}),
                metadata=data.get("metadata", {}),
                aggregations=data.get("aggregations", {}),
            )
        except (KeyError, TypeError) as exc:
            raise InputError(f"malformed ranklens report: missing or bad field {exc}") from None

    @TO_JSON.checks
    def to_json(self, path: str | Path | None = None, **kwargs: Any) -> str:
        """The report as JSON text (valid JSON: no NaN), also written to ``path`` if given."""
        kwargs.setdefault("indent", 1)
        text = json.dumps(self.to_dict(), allow_nan=False, **kwargs)
        if path is not None:
            write_output(text + "\n", path, "Report.to_json")
        return text

    save = to_json

    @classmethod
    def load(cls, path: str | Path) -> Report:
        """Read a report saved with :meth:`save` (a missing, non-JSON or malformed file is
        an InputError naming it and the field at fault)."""
        data = load_json(Path(path))
        try:
            return cls.from_dict(data)
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None

    # ------------------------------------------------------------------ renderers
    @overload
    def render(self, fmt: TextFormat, **options: Any) -> str: ...
    @overload
    def render(self, fmt: Literal["print"], **options: Any) -> None: ...
    @overload
    def render(self, fmt: Literal["rich"], **options: Any) -> Table: ...
    @overload
    def render(self, fmt: Literal["pandas"], **options: Any) -> pd.DataFrame: ...
    @overload
    def render(self, fmt: str, **options: Any) -> Any: ...

    @RENDER.checks
    def render(self, fmt: str, **options: Any) -> Any:
        """The report in format ``fmt`` through the renderer registry
        (:mod:`ranklens.comparison.renderers`): ``text``, ``markdown``, ``csv``, ``latex``,
        ``pandas``, ``html``, ``html_fragment``, ``rich`` or any registered name. Every
        format but ``pandas`` is given a copy whose strings are made visible
        (:mod:`.display`: control and bidi characters shown as escapes)."""
        return get_renderer(fmt)(self._shown(fmt), **options)

    def _shown(self, fmt: str) -> Report:
        """What format ``fmt`` is given: the report itself (pandas), else its display copy."""
        check_metadata(self.metadata)  # a report built or edited by hand: named, not a crash
        return self if fmt in RAW_FORMATS else display_copy(self)

    def _text(self, fmt: str, **options: Any) -> str:
        """A text format through the registry (:func:`.renderers.render_text`)."""
        return render_text(fmt, self._shown(fmt), **options)

    @TO_PANDAS.checks
    def to_pandas(self, kind: str = "summary") -> pd.DataFrame:
        """A DataFrame: ``summary`` (run x metric means, CIs), ``per_query`` (one row per
        query and run, a column per metric) or ``comparisons``."""
        return self.render("pandas", kind=kind)

    @TO_MARKDOWN.checks
    def to_markdown(self, digits: int = 4, details: bool = False) -> str:
        """A Markdown table with significance letters and the notes (``details``: every
        metric of each note and the queries behind it)."""
        return self._text("markdown", digits=digits, details=details)

    @TO_CSV.checks
    def to_csv(self, path: str | Path | None = None, kind: str = "summary") -> str:
        """CSV text (``summary``, ``per_query`` or ``comparisons``), written to ``path``
        if given."""
        return _written(self._text("csv", kind=kind), path, "Report.to_csv")

    @TO_LATEX.checks
    def to_latex(self, digits: int = 4, caption: str | None = None) -> str:
        """A booktabs LaTeX table with superscript significance letters."""
        return self._text("latex", digits=digits, caption=caption)

    @TO_TEXT.checks
    def to_text(self, digits: int = 4, color: bool = False, details: bool = False) -> str:
        """The terminal table (rich), as text, with a line per note and run (``details``:
        every metric of each note and the queries behind it)."""
        return self._text("text", digits=digits, color=color, details=details)

    @PRINT.checks
    def print(self, digits: int = 4, details: bool = False) -> None:
        """Print the terminal table (with colours on a terminal)."""
        self.render("print", digits=digits, details=details)

    @TO_HTML.checks
    def to_html(self, path: str | Path | None = None, title: str | None = None) -> str:
        """A self-contained HTML report (no network assets, inline SVG charts, sortable
        per-query table), written to ``path`` if given."""
        return _written(self._text("html", title=title), path, "Report.to_html")

    def log_mlflow(self, **options: Any) -> str:
        """Log aggregates and intervals (metrics), settings (params), the per-query table,
        the JSON and the HTML report (artifacts) to the active MLflow run or a new one;
        returns the run id (``run_id=``, ``experiment=``, ``run_name=``,
        ``artifacts=``; needs ``ranklens[mlflow]``)."""
        return render_text("mlflow", self, **options)

    def _repr_html_(self) -> str:
        return self._text("html_fragment")

    def __rich__(self) -> Table:
        return self.render("rich", digits=4)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"Report({len(self.runs)} runs x {len(self.metrics)} metrics, "
            f"{len(self.query_ids)} queries, {len(self.comparisons)} comparisons)"
        )


_FLOAT_FIELDS = frozenset({"diff", "pvalue", "pvalue_adjusted", "effect_size"})


def _flip(c: Comparison) -> Comparison:
    return Comparison(
        metric=c.metric,
        run=c.other,
        other=c.run,
        diff=-c.diff,
        pvalue=c.pvalue,
        pvalue_adjusted=c.pvalue_adjusted,
        significant=c.significant,
        effect_size=-c.effect_size,
        wins=c.losses,
        ties=c.ties,
        losses=c.wins,
        n=c.n,
    )


def _num(x: Any) -> Any:
    """JSON has no NaN or infinity: NaN → None, ±inf → "inf"/"-inf"."""
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def _unnum(x: Any) -> Any:
    if x is None:
        return math.nan
    if x == "inf":
        return math.inf
    if x == "-inf":
        return -math.inf
    return x


def _written(text: str, path: str | Path | None, where: str) -> str:
    if path is not None:
        write_output(text, path, where)
    return text


@LOAD_REPORT.checks
def load_report(path: str | Path) -> Report:
    """Read a report saved with :meth:`Report.save`."""
    return Report.load(path)
