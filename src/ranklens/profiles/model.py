"""What a use-case profile is: the metrics that fit a use case (each with why), the targets
it sets (each with why and the source of the number) and the published typical values it
quotes (each with its reference). A profile is data, like a judging convention: frozen,
checked when it is made, derived with :meth:`Profile.with_targets`.

A target is ``metric >= value`` (or ``<=`` for a metric where less is better, such as the
share of unjudged documents); its ``source`` is a reference, or :data:`RULE_OF_THUMB` where
no published source exists. Every metric named must parse, be averaged over queries (a
verdict is about a mean) and, for a target, the value must lie in the metric's range.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..declared import ParameterError, choice, declare, items, names, number, text
from ..errors import InputError, MetricNameError
from ..metrics import Metric, parse_metric

RULE_OF_THUMB = "rule of thumb"
"""The source of a target that no publication gives: a common practitioners' value."""

OPERATORS = (">=", "<=")

UNIT_RANGE = frozenset({
    "P", "recall", "f1", "success", "rr", "ap", "gm_ap", "ndcg", "rprec", "bpref", "gm_bpref",
    "err", "rbp", "judged", "set_P", "set_recall", "set_F", "relative_P", "iprec",
    "Rprec_mult", "unj", "set_map", "set_relative_P", "11pt_avg", "infAP", "binG", "ndcg_rel",
    "yaap", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "alpha_ndcg", "nerr_ia", "nnrbp",
    "p_ia", "ap_ia", "strec", "current", "outdated", "undated", "current_first",
    "evidence_recall", "evidence_precision", "evidence_iou", "precision_omega",
})  # fmt: skip
"""Families whose per-query values lie in [0, 1]."""

UNBOUNDED = frozenset({
    "dcg", "idcg", "G", "Rndcg", "utility", "num_q", "num_rel", "num_ret", "num_rel_ret",
    "num_nonrel_judged_ret", "evidence_chars", "alpha_dcg", "err_ia", "nrbp", "rbp_resid",
})  # fmt: skip
"""Families with no [0, 1] bound known in advance (sums, counts, unnormalised gains, and
ndeval's ERR-IA / NRBP, which it does not divide by their ideal): verdicts bound them with
plain t. Every built-in family is in one of the two sets (a test checks), so a new one
cannot fall to plain t's bounds unnoticed: on per-query values of 0 and 1 plain t's
interval collapses to a point (``outdated@1`` of 0 over three queries read as certain)."""


def metric_range(metric: Metric) -> tuple[float, float] | None:
    """``(0.0, 1.0)`` for a metric whose per-query values lie in [0, 1], else None
    (DCG, counts, utility: no bound known in advance)."""
    return (0.0, 1.0) if metric.family in UNIT_RANGE else None


def is_binary(metric: Metric) -> bool:
    """Whether every per-query value is 0 or 1 by the metric's definition: success@k (hit
    rate), P@1 and RR@1 (trec_eval's forms; not a granular success)."""
    params = dict(metric.params)
    if metric.family == "success":
        return not params.get("granular", False)
    return metric.family in ("P", "rr") and metric.k == 1 and not params.get("granular", False)


def checked_metric(name: str, where: str) -> Metric:
    """``name`` parsed, with an error naming ``where`` it was declared."""
    try:
        metric = parse_metric(name)
    except MetricNameError as exc:
        raise InputError(f"{where}: {exc}") from None
    if metric.aggregate != "mean":
        raise InputError(
            f"{where}: {metric.name} is aggregated as a {metric.aggregate}, not a mean over "
            "queries; a profile names metrics averaged over queries"
        )
    return metric


@dataclass(frozen=True)
class MetricUse:
    """A metric a profile names, and why it fits the use case (one line)."""

    metric: str
    why: str = ""


@dataclass(frozen=True)
class Target:
    """``metric op value`` (``op`` is ``>=`` or ``<=``), why, and where the number comes
    from (a reference, or :data:`RULE_OF_THUMB`)."""

    metric: str
    value: float
    why: str = ""
    source: str = RULE_OF_THUMB
    op: str = ">="

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"

    @property
    def rule_of_thumb(self) -> bool:
        return self.source.strip().lower() == RULE_OF_THUMB


@dataclass(frozen=True)
class Typical:
    """A published value of ``metric``: ``system`` on ``dataset``, from ``source``."""

    metric: str
    value: float
    system: str
    dataset: str
    source: str


@dataclass(frozen=True)
class Profile:
    """A use case: its ``metrics`` (each with why), ``targets``, published ``typical``
    values, a ``title`` and a one-line ``summary``. ``origin`` says where it was declared
    (``built-in``, a file, ``python``).

    >>> p = Profile("support-bot", "Support bot", "one answer",
    ...             targets=[Target("mrr@10", 0.8, "the answer first")])
    >>> [m.metric for m in p.metrics], str(p.targets[0])
    (['mrr@10'], 'mrr@10 >= 0.8')
    """

    name: str
    title: str = ""
    summary: str = ""
    metrics: tuple[MetricUse, ...] = ()
    targets: tuple[Target, ...] = ()
    typical: tuple[Typical, ...] = ()
    origin: str = "python"
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        where = f"profile {self.name!r}"
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(f"a profile needs a name, got {self.name!r}")
        uses = [m if isinstance(m, MetricUse) else MetricUse(str(m)) for m in self.metrics]
        seen: dict[str, MetricUse] = {}  # by canonical name: P_1 and P@1 are one metric
        for use in uses:
            metric = checked_metric(use.metric, f"{where}: metric {use.metric!r}")
            if str(metric) in seen:
                raise InputError(f"{where}: metric {metric.name!r} is named twice")
            seen[str(metric)] = replace(use, metric=metric.name)
        targets: dict[str, Target] = {}
        for t in self.targets:
            checked = _checked_target(t, where)
            key = str(parse_metric(checked.metric))
            if key in targets:
                raise InputError(f"{where}: two targets for {checked.metric!r}")
            targets[key] = checked
            if key not in seen:
                seen[key] = MetricUse(checked.metric, checked.why)
        for typical in self.typical:
            checked_metric(typical.metric, f"{where}: typical value of {typical.metric!r}")
            if not typical.source.strip():
                raise InputError(
                    f"{where}: the typical value {typical.metric} = {typical.value} has no source"
                )
        object.__setattr__(self, "metrics", tuple(seen.values()))
        object.__setattr__(self, "targets", tuple(targets.values()))
        object.__setattr__(self, "typical", tuple(self.typical))
        object.__setattr__(self, "notes", tuple(self.notes))

    @property
    def metric_names(self) -> list[str]:
        """Every metric the profile names, targets' metrics included, in order."""
        return [m.metric for m in self.metrics]

    def target(self, metric: str) -> Target | None:
        """The target on ``metric`` (any spelling that parses to the same name), or None."""
        key = str(parse_metric(metric))
        return next((t for t in self.targets if str(parse_metric(t.metric)) == key), None)

    def with_targets(
        self,
        targets: Mapping[str, Any] | None = None,
        *,
        source: str = "set by the user",
        name: str | None = None,
        **changes: Any,
    ) -> Profile:
        """A derived profile whose targets are overridden or added: ``{"mrr@10": 0.85}``,
        ``{"unj@10": ("<=", 0.1)}``, ``{"P@1": Target(...)}`` or ``{"P@1": {"value": 0.8,
        "why": ..., "source": ...}}``; a target set to None is removed. An override keeps
        the target's why and operator unless it gives its own; its source is ``source``
        unless it names one."""
        where = f"profile {self.name!r}: targets"
        if targets is not None and not isinstance(targets, Mapping):
            if isinstance(targets, (bytes, int, float)) or not isinstance(targets, (str, Iterable)):
                raise ParameterError(
                    f"{where} must be a mapping of metric to target or a list of "
                    f"'METRIC >= VALUE' texts, got {targets!r}"
                )
            targets = target_texts(targets, where)
        current = {str(parse_metric(t.metric)): t for t in self.targets}
        for key, spec in (targets or {}).items():
            metric = checked_metric(key, f"profile {self.name!r}: target {key!r}")
            ident = str(metric)
            if spec is None:
                current.pop(ident, None)
                continue
            previous = current.get(ident)
            shown = previous.metric if previous else metric.name
            current[ident] = coerce_target(shown, spec, previous, source)
        return replace(self, name=name or self.name, targets=tuple(current.values()), **changes)

    def to_dict(self) -> dict[str, Any]:
        """The declaration as JSON-ready data (reports carry it, so a saved report says
        what its verdicts were measured against)."""
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "origin": self.origin,
            "metrics": [{"metric": m.metric, "why": m.why} for m in self.metrics],
            "targets": [vars(t).copy() for t in self.targets],
            "typical": [vars(t).copy() for t in self.typical],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Profile:
        """Rebuild a profile from :meth:`to_dict` output (a field it does not have, or
        one missing, is an error naming it)."""
        if not isinstance(data, Mapping) or "name" not in data:
            raise ParameterError(f"Profile.from_dict: expected a mapping with a name, got {data!r}")
        unknown = set(data) - {*PROFILE.options, "targets", "typical"}
        if unknown:
            raise ParameterError(
                f"Profile.from_dict: no field {sorted(unknown)[0]!r} (it takes: "
                f"{', '.join(PROFILE.options)})"
            )
        uses = data.get("metrics", [])
        if isinstance(uses, str) or not all(
            isinstance(m, str) or (isinstance(m, Mapping) and "metric" in m) for m in uses
        ):
            raise ParameterError(
                "Profile.from_dict: metrics must be a list of names or {metric, why}, got "
                f"{uses!r}"
            )
        return cls(
            name=data["name"],
            title=data.get("title", ""),
            summary=data.get("summary", ""),
            origin=data.get("origin", "python"),
            metrics=tuple(
                MetricUse(m) if isinstance(m, str) else MetricUse(m["metric"], m.get("why", ""))
                for m in uses
            ),
            targets=tuple(from_fields(Target, t) for t in data.get("targets", ())),
            typical=tuple(from_fields(Typical, t) for t in data.get("typical", ())),
            notes=tuple(data.get("notes", ())),
        )


METRIC_USE = declare("MetricUse", {
    "metric": text(None, "the metric's name (``mrr@10``)"),
    "why": text("", "why it fits the use case (one line)", empty=True),
})  # fmt: skip
TARGET = declare("Target", {
    "metric": text(None, "the metric's name (``mrr@10``)"),
    "value": number(None, None, "the value to reach (within the metric's range)"),
    "why": text("", "why this value (one line)", empty=True),
    "source": text(RULE_OF_THUMB, "where the number comes from: a reference, or 'rule of thumb'"),
    "op": choice(">=", OPERATORS, "'>=' (at least) or '<=' (at most: lower is better)"),
})  # fmt: skip
TYPICAL = declare("Typical", {
    "metric": text(None, "the metric's name (``ndcg@10``)"),
    "value": number(None, None, "the published value"),
    "system": text(None, "the system measured"),
    "dataset": text(None, "the dataset it was measured on"),
    "source": text(None, "the publication that gives the number"),
})  # fmt: skip
PROFILE = declare("Profile", {
    "name": text(None, "the profile's name (``faq``)"),
    "title": text("", "a title", empty=True),
    "summary": text("", "what the use case is, in one line", empty=True),
    "metrics": items((), (str, MetricUse), "metric names or ranklens.MetricUse",
                     "the metrics that fit the use case; one name is a list of one",
                     single=True, empty=True),
    "targets": items((), (Target,), "ranklens.Target", "the values it needs", empty=True),
    "typical": items((), (Typical,), "ranklens.Typical", "published values it quotes",
                     empty=True),
    "origin": text("python", "where it was declared (built-in, a file, python)"),
    "notes": names((), "notes shown under its table; one text is a list of one", single=True,
                   empty=True),
})  # fmt: skip
METRIC_USE.checks(MetricUse)
TARGET.checks(Target)
TYPICAL.checks(Typical)
PROFILE.checks(Profile)


TARGET_TEXT = re.compile(r"^\s*(?P<metric>.+?)\s*(?P<op>>=|<=|=)\s*(?P<value>[-+0-9.eE]+)\s*$")
"""A target written as text: ``METRIC >= VALUE`` (or ``<=``; ``=`` means ``>=``)."""


def parse_target(text: str, where: str = "target") -> Target:
    """``"P@1 >= 0.9"`` (``=`` means ``>=``) as a :class:`Target` (source ``"given"``); a
    text that is not ``METRIC >= VALUE`` with a finite number is an error naming it."""
    m = TARGET_TEXT.match(text) if isinstance(text, str) else None
    try:
        value = float(m["value"]) if m else math.nan
    except ValueError:
        value = math.nan
    if m is None or not math.isfinite(value):
        raise ParameterError(
            f"{where}: a target is written METRIC >= VALUE (or <=), e.g. 'P@1 >= 0.9'; got {text!r}"
        )
    op = ">=" if m["op"] == "=" else m["op"]
    metric = checked_metric(m["metric"], f"{where} {text!r}")
    return Target(metric.name, value, op=op, source="given")


def target_texts(targets: Any, where: str) -> dict[str, Any]:
    """``{metric: (op, value)}`` from a list of ``METRIC >= VALUE`` texts (or one), as
    :meth:`Profile.with_targets` takes them; a metric given twice is an error."""
    out: dict[str, Any] = {}
    seen: set[str] = set()
    for item in [targets] if isinstance(targets, str) else targets:
        t = parse_target(item, where) if isinstance(item, str) else item
        if not isinstance(t, Target):
            raise ParameterError(
                f"{where}: targets must be a mapping of metric to target or a list of "
                f"'METRIC >= VALUE' texts, got {item!r}"
            )
        key = str(parse_metric(t.metric))  # P_1 and P@1 are one metric
        if key in seen:
            raise ParameterError(f"{where}: two targets for {t.metric!r}")
        seen.add(key)
        out[t.metric] = t
    return out


def from_fields(cls: type, fields_: Any) -> Any:
    """``cls(**fields_)``, a field it does not take named with the closest one."""
    table = {"Target": TARGET, "Typical": TYPICAL}[cls.__name__]
    if not isinstance(fields_, Mapping):
        raise ParameterError(f"{cls.__name__}: expected a mapping of its fields, got {fields_!r}")
    table.check(dict(fields_))  # names an unknown field with the closest
    return cls(**fields_)


def coerce_target(
    metric: str, spec: Any, previous: Target | None = None, source: str = "set by the user"
) -> Target:
    """A :class:`Target` on ``metric`` from a number, ``(op, value)``, a mapping of
    Target's fields (``value`` or ``at_least``/``at_most``) or a Target."""
    try:
        return _coerce_target(metric, spec, previous, source)
    except ParameterError as exc:
        raise ParameterError(f"target {metric!r}: {exc}") from None


def _coerce_target(metric: str, spec: Any, previous: Target | None, source: str) -> Target:
    why = previous.why if previous else ""
    if isinstance(spec, Target):
        return replace(spec, metric=metric)
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        op = previous.op if previous else ">="
        return Target(metric, float(spec), why, source, op)
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        return Target(metric, _number(spec[1], metric), why, source, str(spec[0]))
    if isinstance(spec, Mapping):
        fields_ = dict(spec)
        unknown = set(fields_) - {"value", "at_least", "at_most", "op", "why", "source"}
        if unknown:
            raise InputError(
                f"target {metric!r}: unknown field(s) {', '.join(sorted(unknown))}; a target "
                "takes at_least (or at_most, or value with op), why and source"
            )
        bounds = [k for k in ("value", "at_least", "at_most") if k in fields_]
        if len(bounds) != 1:
            raise InputError(f"target {metric!r}: give one of at_least, at_most or value")
        if "op" in fields_ and bounds[0] != "value":
            raise ParameterError(
                f"target {metric!r}: op goes with value (at_least and at_most say their "
                f"operator), got op={fields_['op']!r} with {bounds[0]}"
            )
        op = {"at_least": ">=", "at_most": "<="}.get(bounds[0], fields_.get("op", ">="))
        return Target(
            metric,
            _number(fields_[bounds[0]], metric),
            str(fields_.get("why", why)),
            str(fields_.get("source", source)),
            str(op),
        )
    raise InputError(
        f"target {metric!r}: expected a number, (op, number), a mapping or a Target, got {spec!r}"
    )


def _number(value: Any, metric: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"target {metric!r}: the value must be a finite number, got {value!r}")
    return float(value)


def _checked_target(t: Target, where: str) -> Target:
    metric = checked_metric(t.metric, f"{where}: target {t.metric!r}")
    what = f"{where}: target {metric.name}"
    if t.op not in OPERATORS:
        raise InputError(f"{what}: the operator must be '>=' or '<=', got {t.op!r}")
    value = t.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{what}: the value must be a finite number, got {value!r}")
    bounds = metric_range(metric)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise InputError(
            f"{what} {t.op} {value:g}: outside the metric's range [{bounds[0]:g}, {bounds[1]:g}]"
        )
    if not t.source.strip():
        raise InputError(f"{what}: no source; write the reference, or {RULE_OF_THUMB!r}")
    return replace(t, metric=metric.name, value=float(value))
