"""The retrieval quality gate: a run against a saved baseline report, metric by metric.

Each gated metric ends **pass**, **fail** or **inconclusive**:

* a *floor* (``ndcg@10 >= 0.65``) compares the mean with the floor; on a metric better
  lower (``lower_is_better`` in the registry: ``outdated@k``, ``undated@k``, ``unj@k``)
  the limit is a *ceiling* (``outdated@10 <= 0.1``);
* a *margin* ``m >= 0`` (the drop allowed; ``-0.01`` and ``0.01`` both allow 0.01) is a
  non-inferiority rule on the per-query changes in the better direction ``g = s · (now −
  baseline)``, ``s = 1`` for a metric better higher and ``−1`` for one better lower (so
  there the margin is the rise allowed): it passes when a one-sided paired test shows
  ``mean(g) > −m`` (on ``g + m``), fails when one shows ``mean(g) < −m`` (on ``−(g +
  m)``), and is inconclusive when neither does. Holm's correction runs over the gated
  metrics, for each of the two families of tests. A run whose per-query values all equal
  the baseline's passes. Deltas and intervals are in the metric's units (``now −
  baseline``); the flip is made once, in :func:`_aligned` (directions: :mod:`.gate_floors`).

An inconclusive metric reports its minimum detectable effect at 80% power over the
current queries and the number of queries that would detect the margin
(:mod:`.power_analysis`). Whether inconclusive fails the gate is a setting.

A baseline is a :class:`Report` saved as JSON with a fingerprint of the labelled set
(query ids, labels, metric names, judging options) and, per query, the relevant documents
found in the top k; gating against a different set is an error naming what changed. On
span labels, a runner's result is judged by its chunks (``chunk_run()``), the fingerprint
holds each span's place and evidence text and the overlap rule, and a regressed query lists
the evidence spans it no longer finds in the top k.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..declared import (
    LEVEL,
    NONNEGATIVE,
    STATISTICS,
    ParameterError,
    choice,
    count,
    data,
    declare,
    flag,
    mapping,
    names,
    number,
    path,
    renamed_option,
)
from ..errors import InputError
from ..io import coerce_qrels, coerce_run
from ..metrics import parse_metrics
from ..model import Dataset, Run
from ..model.spans import SpanLabels
from ..settings import Statistics
from . import stats as st
from .baseline import check_fingerprint, fingerprint, found_relevant
from .bounds import METHODS as FLOOR_METHODS
from .bounds import check_level
from .compare import compare
from .contents import ReportContents
from .evidence import found_evidence
from .gate_floors import apply_confident_floors, gate_limits, profile_floors, sense, settle
from .power_analysis import mde, queries_needed
from .report import Report, load_report
from .settings_use import GATE_STATISTICS, STATS_OPTION, split_statistics, statistics

STATUSES = ("pass", "fail", "inconclusive")
INCONCLUSIVE = ("fail", "pass")
"""What an inconclusive metric does to the gate."""

EVERY = "*"
"""The key of a margin mapping that stands for every metric not named in it."""

_LIMITS = mapping(
    None,
    "{metric: value}; each value within the range of the metric's values",
    values=number(None),
    none=True,
)
GATE = declare(
    "gate",
    {
        "labels": data("qrels, span labels or a Dataset (anything compare takes)"),
        "run": data("the run gated: a run, a run file or a runner's result"),
        "baseline": path(None, "the baseline report (JSON)"),
        "metrics": names(None, "the gated metrics", single=True),
        "margin": number(
            0.0,
            description="the drop allowed (the rise on a metric better lower) for every "
            "metric, or {metric: margin} ('*' for every metric not named); None: limits only",
            none=True,
            also=mapping(None, values=number(None)),
        ),
        "floors": _LIMITS,
        "ceilings": _LIMITS,
        "update_baseline": flag(False, "write this run's report as the baseline"),
        "stats": STATS_OPTION,
        "test": renamed_option(STATISTICS["test"], default="bootstrap"),
        "alpha": renamed_option(STATISTICS["alpha"], description="one-sided level"),
        "inconclusive": choice("fail", INCONCLUSIVE, "what an inconclusive metric does"),
        "n_resamples": STATISTICS["n_resamples"],
        "seed": STATISTICS["seed"],
        "show": count(5, NONNEGATIVE, "regressed queries listed per metric"),
        "floor_confidence": number(
            None,
            LEVEL,
            "judge floors and ceilings by one-sided bounds at this level (None: the mean)",
            none=True,
        ),
        "floor_method": choice("auto", FLOOR_METHODS, "the bound of floor_confidence"),
        "profile": data("a profile (name or object) whose targets are limits"),
    },
)


@dataclass
class Verdict:
    """One gated metric: its ``status``, the value now and in the baseline, the mean
    difference ``now − baseline`` with its interval (one-sided level ``alpha`` on each
    side; in the metric's units), the rules (``margin``: the drop allowed, or the rise
    allowed where ``better`` is ``"lower"``; ``floor``, or ``ceiling`` on a metric better
    lower), the Holm-adjusted p-values of the non-inferiority and regression tests, the
    minimum detectable effect ``mde`` over ``n`` queries and the queries ``needed`` to
    detect the margin, and the ``reason`` in words. ``rules``: each rule applied
    (``"margin"``, ``"floor"``, ``"ceiling"``) and its own outcome; the status is the
    worst of them (fail, then inconclusive, then pass) and ``decided_by`` names the rules
    that gave it."""

    metric: str
    status: str
    value: float
    n: int
    baseline: float | None = None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    margin: float | None = None
    floor: float | None = None
    p_noninferior: float | None = None
    p_regression: float | None = None
    mde: float | None = None
    needed: int | None = None
    reason: str = ""
    floor_check: dict[str, Any] | None = None
    ceiling: float | None = None
    ceiling_check: dict[str, Any] | None = None
    better: str = "higher"
    rules: dict[str, str] = field(default_factory=dict)
    decided_by: str = ""


@dataclass
class Regression:
    """A query that lost on a gated metric (its value fell, or rose on a metric better
    lower): its id and text, both values, and the relevant documents (on span labels, the
    evidence spans) the baseline found in the top ``k`` that the run no longer does."""

    query_id: str
    metric: str
    baseline: float
    now: float
    text: str | None = None
    dropped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GateSettings(Mapping[str, Any]):
    """What a gate ran with: the one-sided ``test`` at ``alpha``, what an ``inconclusive``
    metric does, the top ``k`` of the regressed queries' documents, the resamples and seed,
    ``evidence`` on span labels, and the floors' ``floor_confidence``/``floor_method`` when
    floors are judged by their bounds. Read by attribute, or as the mapping
    :meth:`to_dict` gives (``settings["alpha"]``), the layout of the JSON output."""

    test: str
    alpha: float
    inconclusive: str
    k: int
    n_resamples: int
    seed: int | None
    evidence: bool = False
    floor_confidence: float | None = None
    floor_method: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The settings as the gate's JSON output holds them (keys absent when unused)."""
        out: dict[str, Any] = {
            "test": self.test,
            "alpha": self.alpha,
            "inconclusive": self.inconclusive,
            "k": self.k,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
        }
        if self.evidence:
            out["evidence"] = True
        if self.floor_confidence is not None:
            out.update(floor_confidence=self.floor_confidence, floor_method=self.floor_method)
        return out

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())


@dataclass
class GateResult:
    """The verdicts, the queries that regressed most, and the settings; ``passed`` and
    ``exit_code`` (0 pass, 1 fail) decide the gate."""

    verdicts: list[Verdict]
    regressions: list[Regression]
    settings: GateSettings
    report: Report
    baseline_path: str | None = None
    updated: bool = False

    @property
    def passed(self) -> bool:
        allowed = {"pass"} | ({"inconclusive"} if self.settings.inconclusive == "pass" else set())
        return all(v.status in allowed for v in self.verdicts)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "verdicts": [asdict(v) for v in self.verdicts],
            "regressions": [asdict(r) for r in self.regressions],
            "settings": self.settings.to_dict(),
            "baseline": self.baseline_path,
            "updated": self.updated,
        }

    def to_text(self) -> str:
        """The verdict table and the regressed queries, as plain text."""
        from .renderers import render_text

        return render_text("gate_text", self)

    def to_markdown(self) -> str:
        """The verdicts, deltas with intervals and regressed queries for a PR summary."""
        from .renderers import render_text

        return render_text("gate_markdown", self)

    def __str__(self) -> str:
        return self.to_text()


@GATE.checks
def gate(
    labels: Any,
    run: Any,
    baseline: str | Path,
    metrics: str | Sequence[str],
    *,
    margin: float | Mapping[str, float] | None = 0.0,
    floors: Mapping[str, float] | None = None,
    ceilings: Mapping[str, float] | None = None,
    update_baseline: bool = False,
    stats: Statistics | None = None,
    inconclusive: str = "fail",
    show: int = 5,
    floor_confidence: float | None = None,
    floor_method: str = "auto",
    profile: Any = None,
    **judge_options: Any,
) -> GateResult:
    """Gate ``run`` on ``labels`` (anything :func:`ranklens.compare` takes, a
    :class:`~ranklens.Dataset` included) against the baseline report at ``baseline``.

    ``margin``: the drop allowed, one number for every metric or ``{metric: drop}``
    (``"*"`` for every metric not named; a metric not named gets no margin); None gates
    on the limits only. Every gated metric must get a rule (a margin, a floor or a
    ceiling): one with none is an error naming it, never a silent pass. On a metric
    better lower (``outdated@10``, ``unj@10``: ``ranklens.metrics.lower_is_better``) the
    margin is the rise allowed and the regression tested is a rise.
    ``floors``: ``{metric: least mean}`` for metrics better higher; ``ceilings``:
    ``{metric: greatest mean}`` for metrics better lower (each refuses the other kind,
    naming the metric). ``stats``: a :class:`~ranklens.Statistics` (default
    ``Statistics(test="bootstrap")``): its ``test`` ``"bootstrap"`` (the paired
    percentile bootstrap, whose verdicts agree with the printed intervals),
    ``"randomization"``, ``"t"`` or ``"wilcoxon"``, one-sided at ``alpha`` with Holm over
    the gated metrics (the intervals shown are not adjusted), ``n_resamples`` and
    ``seed``. The flat keywords ``test=``, ``alpha=``, ``n_resamples=``, ``seed=`` still
    work for one release with a ``DeprecationWarning`` (write
    ``stats=ranklens.Statistics(test="bootstrap", alpha=0.05)``); one beside ``stats=`` is
    an error. ``inconclusive``: ``"fail"`` (default) or ``"pass"``.
    ``update_baseline``: write this run's report as the baseline (the limits still gate).
    A missing baseline is an error unless ``update_baseline``.
    ``floor_confidence`` (e.g. 0.95): judge each floor and ceiling by one-sided confidence
    bounds of the mean (:mod:`.gate_floors`: pass on the right side of it with confidence,
    fail on the wrong side with confidence, inconclusive otherwise) by ``floor_method``;
    None (default) compares the mean itself.
    ``profile``: a use-case profile whose ``>=`` targets are floors and ``<=`` targets
    ceilings (explicit limits win).
    """
    flat, judge_options = split_statistics(judge_options)
    stats = statistics("gate", stats, GATE.check(flat, unknown="keep"), GATE_STATISTICS)
    parsed = parse_metrics(metrics)
    names = [m.name for m in parsed]
    if not names:
        raise InputError("gate needs at least one metric")
    if profile is not None:
        names, floors, ceilings = profile_floors(profile, floors, names, ceilings)
    margins = _per_metric(margin, names, "margin")
    limit_of = gate_limits(floors or None, ceilings or None, names)  # {metric: floor/ceiling}
    _every_metric_has_a_rule(names, margins, limit_of)
    path = str(baseline)
    if not update_baseline and not Path(path).exists():
        raise InputError(f"{path}: no baseline report here; create it with --update-baseline")
    confident = dict(limit_of) if floor_confidence is not None else {}
    level_of_floors = 0.0 if floor_confidence is None else floor_confidence
    if confident:  # the floors are judged by their bounds below, not by the mean
        check_level(level_of_floors)
        limit_of = {}
    texts = dict(labels.queries) if isinstance(labels, Dataset) else {}
    qrels = coerce_qrels(labels)
    spans = isinstance(qrels, SpanLabels)
    the_run = run.run if hasattr(run, "report_info") and hasattr(run, "run") else run
    if spans and callable(getattr(run, "chunk_run", None)):  # every chunk, with its place
        the_run = run.chunk_run()
    if isinstance(the_run, (str, Path)):
        the_run = coerce_run(the_run)
    source = run if hasattr(run, "report_info") else the_run  # a runner's result keeps its info
    report = compare(
        qrels,
        {"now": source},
        names,
        stats=stats,
        queries=texts,
        contents=ReportContents(tie_range=False),
        **judge_options,
    )
    level = int((report.metadata.get("options") or {}).get("relevance_level", 1))
    k = max((m.k for m in parsed if m.k), default=10)
    if isinstance(qrels, SpanLabels) and _is_run(the_run):  # the evidence spans in the top k
        options = report.metadata.get("options") or {}
        placement = str((options.get("switches") or {}).get("placement", "unique"))
        found = found_evidence(qrels, coerce_run(the_run), k, level, options.get("overlap"),
                               report.query_ids, placement)  # fmt: skip
    else:
        found = found_relevant(qrels, Run.coerce(the_run), k, level) if _is_run(the_run) else {}
    print_now = fingerprint(qrels, report, judge_options)
    settings = GateSettings(
        stats.test, stats.alpha, inconclusive, k, stats.n_resamples, stats.seed, spans
    )
    if floor_confidence is not None:
        settings = replace(settings, floor_confidence=floor_confidence, floor_method=floor_method)
    if update_baseline:
        report.metadata["gate"] = {"fingerprint": print_now, "k": k, "found": found}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        report.to_json(path, indent=1)
        verdicts = [_floor_only(report, m, limit_of.get(m)) for m in names]
        if confident:
            apply_confident_floors(verdicts, report.per_query["now"], confident,
                                   level_of_floors, floor_method)  # fmt: skip
        return GateResult(verdicts, [], settings, report, path, updated=True)
    base = load_report(path)
    saved = (base.metadata.get("gate") or {}).get("fingerprint")
    if saved is None:
        raise InputError(
            f"{path}: not a gate baseline (no fingerprint); rewrite it with --update-baseline"
        )
    check_fingerprint(saved, print_now, base, report, path)
    pairs = _aligned(report, base, names)
    verdicts = _verdicts(report, base, pairs, margins, limit_of, settings)
    if confident:
        apply_confident_floors(verdicts, report.per_query["now"], confident, level_of_floors,
                               floor_method)  # fmt: skip
    base_found = (base.metadata.get("gate") or {}).get("found") or {}
    regs = _regressions(base.query_ids, pairs, found, base_found, texts, show)
    return GateResult(verdicts, regs, settings, report, path)


Aligned = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""A gated metric's values now and in the baseline, ``d`` and ``g`` (:func:`_aligned`)."""


def _aligned(report: Report, base: Report, names: list[str]) -> dict[str, Aligned]:
    """Per metric: the run's and the baseline's per-query values in the baseline's query
    order, their differences ``d`` (now − baseline, NaN as 0) and the changes in the
    better direction ``g = sign · d`` (``−d`` on a metric better lower): the one place
    the numbers are flipped; every test, power figure and regressed query reads ``g``,
    what is shown (deltas, intervals) reads ``d``."""
    at = {q: i for i, q in enumerate(report.query_ids)}
    order = np.array([at[q] for q in base.query_ids], dtype=np.int64)
    out = {}
    for m in names:
        now, before = report.per_query["now"][m][order], base.per_query[base.runs[0]][m]
        d = np.nan_to_num(now - before)
        out[m] = (now, before, d, sense(m).sign * d)
    return out


def _is_run(x: Any) -> bool:
    return isinstance(x, (Run, Mapping))


def _per_metric(value: Any, names: list[str], what: str) -> dict[str, float]:
    """``{metric: margin}``: one number for every metric, or a mapping whose ``"*"`` stands
    for every metric it does not name."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        rest = value.get(EVERY)
        parsed = {parse_metrics([m])[0].name: float(v) for m, v in value.items() if m != EVERY}
        unknown = set(parsed) - set(names)
        if unknown:
            raise ParameterError(
                f"gate: {what} for {sorted(unknown)}, which the gate does not measure "
                f"(it measures {', '.join(names)})"
            )
        fill = {} if rest is None else {m: float(rest) for m in names}
        return {**fill, **parsed}
    return {m: float(value) for m in names}


def _every_metric_has_a_rule(
    names: Sequence[str], margins: Mapping[str, float], limits: Mapping[str, float]
) -> None:
    """A gated metric with neither a margin nor a floor/ceiling would pass whatever it
    did: an error naming it and both ways to give it a rule."""
    bare = [m for m in names if m not in margins and m not in limits]
    if bare:
        m = bare[0]
        s = sense(m)
        raise ParameterError(
            f"gate: {', '.join(bare)} {'has' if len(bare) == 1 else 'have'} no rule, so "
            f"{'it' if len(bare) == 1 else 'they'} would pass whatever the run does: give a "
            f"margin (margin={{{m!r}: 0.0}}, --margin {m}=0) or a {s.limit} "
            f"({s.param}={{{m!r}: ...}}, {s.flag} {m}=...)"
        )


def _floor_only(report: Report, m: str, limit: float | None) -> Verdict:
    """A written baseline's verdict: its floor or ceiling checked on the mean, if any."""
    value, s = report.value("now", m), sense(m)
    ok = limit is None or not s.breaks(value, limit)
    why = "baseline written" + ("" if limit is None else f"; {s.limit} {limit:g}")
    reason = why if ok or limit is None else s.limit_reason(value, limit)
    v = Verdict(m, "pass" if ok else "fail", value, report.summary["now"][m]["n"],
                better=s.better, reason=reason)  # fmt: skip
    setattr(v, s.limit, limit)
    if limit is not None:
        v.rules[s.limit] = v.status
        settle(v)
    return v


def _verdicts(
    report: Report,
    base: Report,
    pairs: Mapping[str, Aligned],
    margins: Mapping[str, float],
    limit_of: Mapping[str, float],
    settings: GateSettings,
) -> list[Verdict]:
    alpha, test = settings.alpha, settings.test
    resamples, seed = settings.n_resamples, settings.seed
    names, n = list(pairs), len(base.query_ids)
    gated = [m for m in names if m in margins]
    d = np.column_stack([pairs[m][2] for m in gated]) if gated else np.zeros((n, 0))
    g = np.column_stack([pairs[m][3] for m in gated]) if gated else np.zeros((n, 0))
    shift = np.array([abs(margins[m]) for m in gated])
    p_ok = st.correct(st.one_sided(g + shift, test, resamples, seed))
    p_bad = st.correct(st.one_sided(-(g + shift), test, resamples, seed))
    conf = 1 - 2 * alpha
    if d.shape[1]:
        lo, hi = (
            st.t_interval(d, conf)
            if test == "t"
            else st.bootstrap_interval(d, conf, resamples, seed)
        )
    out = []
    for m in names:
        value, s, limit = report.value("now", m), sense(m), limit_of.get(m)
        before = base.value(base.runs[0], m)
        v = Verdict(m, "pass", value, n, baseline=before, better=s.better)
        setattr(v, s.limit, limit)
        v.delta = value - before
        reasons = []
        if limit is not None:
            v.rules[s.limit] = "fail" if s.breaks(value, limit) else "pass"
            if v.rules[s.limit] == "fail":
                reasons.append(s.limit_reason(value, limit))
        if m in margins:
            j = gated.index(m)
            col = g[:, j]
            v.margin = float(shift[j])
            v.ci_low, v.ci_high = float(lo[j]), float(hi[j])
            v.p_noninferior, v.p_regression = float(p_ok[j]), float(p_bad[j])
            sd = float(col.std(ddof=1)) if n > 1 else 0.0
            v.mde = mde(sd, n, alpha, 0.8, test)
            identical = not np.any(np.abs(col) > 1e-12)
            v.rules["margin"] = "pass"
            if identical or v.p_noninferior < alpha:
                reasons.append(
                    "per-query values equal the baseline's"
                    if identical
                    else f"{s.loss} within {v.margin:g} shown (p = {v.p_noninferior:.4f})"
                )
            elif v.p_regression < alpha:
                v.rules["margin"] = "fail"
                reasons.append(f"{s.lost} by more than {v.margin:g} (p = {v.p_regression:.4f})")
            else:
                v.rules["margin"] = "inconclusive"
                v.needed = queries_needed(sd, v.margin, alpha, 0.8, test) if v.margin > 0 else None
                reasons.append(
                    f"{n} queries cannot tell: they detect a {s.loss} of {v.mde:.4f} with 80% "
                    "power"
                    + (
                        f"; about {v.needed} queries would detect {v.margin:g}"
                        if v.needed
                        else "; set a margin > 0 to size the set"
                    )
                )
        settle(v)
        within = f"{s.within} the {s.limit} {limit:g}" if limit is not None else ""
        v.reason = "; ".join(reasons) or within
        out.append(v)
    return out


def _regressions(
    qids: Sequence[str],
    pairs: Mapping[str, Aligned],
    found: Mapping[str, Any],
    base_found: Mapping[str, Any],
    texts: Mapping[str, str],
    show: int,
) -> list[Regression]:
    out: list[Regression] = []
    for m, (now, before, _, g) in pairs.items():
        for i in np.argsort(g, kind="stable")[:show]:  # the worst change in the better direction
            if g[i] >= -1e-12:
                break
            q = qids[i]
            lost = sorted(set(base_found.get(q, [])) - set(found.get(q, [])))
            out.append(Regression(q, m, float(before[i]), float(now[i]), texts.get(q), lost))
    return out
