"""Metric specs: each metric family is declared once; names parse into :class:`Metric`.

Accepted names (case-insensitive):

* ranklens/ir_measures style: ``family[(param=value, ...)][@k]``, e.g. ``ndcg@10``,
  ``P@5``, ``recall@100``, ``mrr@10``, ``map``, ``map@100``, ``rprec``, ``bpref``,
  ``err@20``, ``rbp(p=0.8)``, ``P(rel=2)@10``, ``ndcg_exp@10``, ``hit_rate@5``;
  ``rel=`` sets the relevance level ℓ of that metric alone.
* trec_eval's names: ``P_5``, ``recall_1000``, ``ndcg_cut_10``, ``map_cut_100``,
  ``recip_rank``, ``Rprec``, ``success_10``, ``set_F``, ``num_rel_ret``,
  ``iprec_at_recall_0.10``, ``11pt_avg``, …, and trec_eval's ``-m`` forms: ``P.5,10`` and a
  bare family such as ``ndcg_cut`` (its default cutoffs), expanded by
  :func:`expand_metric_names`.

A metric is reported under the name it was given.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import metrics as m
from .errors import MetricNameError

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class Family:
    """One metric family, declared once with its parameters."""

    name: str
    fn: Callable[..., np.ndarray]
    aliases: tuple[str, ...] = ()
    cutoff: bool = True
    params: dict[str, Any] = field(default_factory=dict)
    uses_level: bool = True
    aggregate: str = "mean"  # "mean", "sum" or "gmean"
    trec_name: str | None = None  # trec_eval family name when it takes a cutoff suffix
    trec_plain: str | None = None  # trec_eval name of the uncut measure
    trec_defaults: tuple[Any, ...] = ()

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip()


def _f(name: str, fn: Callable[..., np.ndarray], **kw: Any) -> Family:
    return Family(name, fn, **kw)


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in [
        _f(
            "P",
            m.precision,
            aliases=("precision", "prec"),
            trec_name="P",
            trec_defaults=TREC_CUTOFFS,
        ),
        _f("recall", m.recall, aliases=("r",), trec_name="recall", trec_defaults=TREC_CUTOFFS),
        _f("f1", m.f1, aliases=("f",)),
        _f(
            "success",
            m.success,
            params={"granular": False},
            aliases=("hit_rate", "hitrate", "hit-rate"),
            trec_name="success",
            trec_defaults=(1, 5, 10),
        ),
        _f(
            "rr",
            m.reciprocal_rank,
            params={"granular": False},
            aliases=("mrr", "recip_rank", "reciprocal_rank"),
            trec_plain="recip_rank",
        ),
        _f(
            "ap",
            m.average_precision,
            aliases=("map", "average_precision"),
            trec_name="map_cut",
            trec_plain="map",
            trec_defaults=TREC_CUTOFFS,
        ),
        _f(
            "gm_ap",
            m.average_precision,
            aliases=("gm_map",),
            aggregate="gmean",
            cutoff=False,
            trec_plain="gm_map",
        ),
        _f(
            "ndcg",
            m.ndcg,
            params={"gain": None},
            uses_level=False,
            trec_name="ndcg_cut",
            trec_plain="ndcg",
            trec_defaults=TREC_CUTOFFS,
        ),
        _f("dcg", m.dcg, params={"gain": None}, uses_level=False),
        _f("idcg", m.ideal_dcg, aliases=("ideal_dcg",), params={"gain": None}, uses_level=False),
        _f(
            "rprec",
            m.r_precision,
            aliases=("r-precision", "r_precision", "rprecision"),
            cutoff=False,
            trec_plain="Rprec",
        ),
        _f("bpref", m.bpref, trec_plain="bpref"),
        _f("gm_bpref", m.bpref, aggregate="gmean", cutoff=False, trec_plain="gm_bpref"),
        _f("err", m.err, params={"max": None}, uses_level=False),
        _f("rbp", m.rbp, params={"p": 0.9}, uses_level=False, trec_plain="rbp"),
        _f("judged", m.judged_at, uses_level=False),
        _f("num_rel", m.num_rel, cutoff=False, aggregate="sum", trec_plain="num_rel"),
        _f("num_ret", m.num_ret, aggregate="sum", uses_level=False, trec_plain="num_ret"),
        _f("num_rel_ret", m.num_rel_ret, aggregate="sum", trec_plain="num_rel_ret"),
        _f("set_P", m.set_precision, cutoff=False, trec_plain="set_P"),
        _f("set_recall", m.set_recall, aliases=("set_r",), cutoff=False, trec_plain="set_recall"),
        _f("set_F", m.set_f, params={"beta": 1.0}, cutoff=False, trec_plain="set_F"),
        _f("relative_P", m.relative_precision, trec_name="relative_P", trec_defaults=TREC_CUTOFFS),
        _f(
            "iprec",
            m.interpolated_precision,
            aliases=("iprec_at_recall",),
            params={"r": None, "legacy": False},
            cutoff=False,
            trec_name="iprec_at_recall",
            trec_defaults=m.RECALL_POINTS,
        ),
        _f(
            "Rprec_mult",
            m.r_precision_mult,
            params={"m": None},
            cutoff=False,
            trec_name="Rprec_mult",
            trec_defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
        ),
        _f("unj", m.unjudged_at, uses_level=False, trec_name="unj", trec_defaults=(5, 10, 20)),
        _f(
            "rbp_resid", m.rbp_residual, params={"p": 0.9}, uses_level=False, trec_plain="rbp_resid"
        ),
        _f("set_map", m.set_map, cutoff=False, trec_plain="set_map"),
        _f("set_relative_P", m.set_relative_precision, cutoff=False, trec_plain="set_relative_P"),
        _f(
            "num_nonrel_judged_ret",
            m.num_nonrel_judged_ret,
            aggregate="sum",
            trec_plain="num_nonrel_judged_ret",
        ),
        _f("num_q", m.num_q, cutoff=False, aggregate="sum", uses_level=False, trec_plain="num_q"),
        _f(
            "11pt_avg",
            m.eleven_point_average,
            params={"legacy": False},
            cutoff=False,
            trec_plain="11pt_avg",
        ),
    ]
}

# aliases that preset a parameter
_PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "ndcg_exp": ("ndcg", {"gain": "exp"}),
    "ndcg_burges": ("ndcg", {"gain": "exp"}),
    "dcg_exp": ("dcg", {"gain": "exp"}),
    "dcg_burges": ("dcg", {"gain": "exp"}),
}

_LOOKUP: dict[str, tuple[str, dict[str, Any]]] = {}
for _fam in FAMILIES.values():
    _LOOKUP[_fam.name.lower()] = (_fam.name, {})
    for _a in _fam.aliases:
        _LOOKUP[_a.lower()] = (_fam.name, {})
    if _fam.trec_plain:
        _LOOKUP[_fam.trec_plain.lower()] = (_fam.name, {})
_LOOKUP.update(_PRESETS)

_TREC_VALUE_PARAM = {"iprec": "r", "Rprec_mult": "m"}  # trec suffix is a parameter, not k

_TREC_CUT: dict[str, str] = {f.trec_name.lower(): f.name for f in FAMILIES.values() if f.trec_name}
_TREC_CUT_RE = re.compile(
    r"^("
    + "|".join(sorted(map(re.escape, _TREC_CUT), key=len, reverse=True))
    + r")_(\d+(?:\.\d+)?)$",
    re.IGNORECASE,
)
_SPEC_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_\-]*?)\s*(?:\(([^()]*)\))?\s*(?:@\s*(\d+))?\s*$")


@dataclass(frozen=True)
class Metric:
    """A parsed metric: family, cutoff, parameters and optional relevance level.

    ``name`` is the name as given (results are reported under it); ``str(metric)`` is the
    canonical spelling.
    """

    family: str
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    level: int | None = None
    name: str = ""

    @property
    def spec(self) -> Family:
        return FAMILIES[self.family]

    @property
    def aggregate(self) -> str:
        return self.spec.aggregate

    def canonical(self) -> str:
        fam = self.spec
        shown = [(k, v) for k, v in self.params if fam.params.get(k) != v]
        base = self.family
        if self.family in ("ndcg", "dcg") and dict(self.params).get("gain") == "exp":
            base = f"{self.family}_exp"
            shown = [(k, v) for k, v in shown if k != "gain"]
        parts = [f"{k}={_fmt(v)}" for k, v in shown]
        if self.level is not None:
            parts.insert(0, f"rel={self.level}")
        s = base + (f"({','.join(parts)})" if parts else "")
        return s + (f"@{self.k}" if self.k is not None else "")

    def __str__(self) -> str:
        return self.canonical()

    def compute(self, judged: Any) -> np.ndarray:
        """Per-query values on a :class:`~ranklens.judging.Judged` pair."""
        view = judged.view(self.level)
        kwargs = dict(self.params)
        if self.family == "err":
            kwargs = {"max_grade": kwargs.get("max")}
        return self.spec.fn(view, self.k, **kwargs)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _coerce_param(family: Family, key: str, raw: str, name: str) -> Any:
    default = family.params.get(key)
    if key == "gain":
        if raw.lower() not in ("linear", "exp", "binary"):
            raise MetricNameError(
                f"metric {name!r}: gain must be 'linear', 'exp' or 'binary', got {raw!r}"
            )
        return raw.lower()
    if key in ("legacy", "granular"):
        return raw.lower() in ("1", "true", "yes", "9")
    try:
        if key == "max":
            return int(raw)
        value = float(raw)
    except ValueError:
        raise MetricNameError(f"metric {name!r}: parameter {key}={raw!r} is not a number") from None
    if key == "p" and not 0.0 < value < 1.0:
        raise MetricNameError(f"metric {name!r}: p must lie strictly between 0 and 1")
    if key == "m" and value < 0:
        raise MetricNameError(f"metric {name!r}: m must be >= 0")
    if key == "r" and not 0.0 <= value <= 1.0:
        raise MetricNameError(f"metric {name!r}: r must lie between 0 and 1")
    return (
        type(default)(value)
        if isinstance(default, (int, float)) and not isinstance(default, bool)
        else value
    )


def parse_metric(name: str | Metric) -> Metric:
    """Parse a metric name (see the module docstring) into a :class:`Metric`.

    Raises :class:`~ranklens.errors.MetricNameError` listing the closest valid names.
    """
    if isinstance(name, Metric):
        return name
    if not isinstance(name, str):
        raise MetricNameError(f"a metric name must be a string, got {name!r}")
    text = name.strip()
    mt = _TREC_CUT_RE.match(text)
    if mt:
        fam = FAMILIES[_TREC_CUT[mt.group(1).lower()]]
        val = mt.group(2)
        if fam.name in _TREC_VALUE_PARAM:
            key = _TREC_VALUE_PARAM[fam.name]
            return Metric(fam.name, None, _params(fam, {key: float(val)}), None, name)
        if "." in val:
            raise MetricNameError(f"metric {name!r}: the cutoff must be a whole number")
        return Metric(fam.name, int(val), _params(fam, {}), None, name)
    ms = _SPEC_RE.match(text)
    if not ms:
        raise MetricNameError(_unknown(name))
    base, param_text, k_text = ms.groups()
    entry = _LOOKUP.get(base.lower())
    if entry is None:
        raise MetricNameError(_unknown(name))
    fam_name, preset = entry
    fam = FAMILIES[fam_name]
    given: dict[str, Any] = dict(preset)
    level = None
    if param_text and param_text.strip():
        for item in param_text.split(","):
            if "=" not in item:
                raise MetricNameError(
                    f"metric {name!r}: parameter {item.strip()!r} must be written key=value"
                )
            key, raw = (s.strip() for s in item.split("=", 1))
            key = key.lower()
            if key in ("rel", "l", "level"):
                if not fam.uses_level:
                    raise MetricNameError(
                        f"metric {name!r}: {fam.name} does not use a "
                        "relevance level (its gains are the raw grades)"
                    )
                try:
                    level = int(raw)
                except ValueError:
                    raise MetricNameError(
                        f"metric {name!r}: rel={raw!r} is not an integer"
                    ) from None
                if level < 0:
                    raise MetricNameError(f"metric {name!r}: rel must be >= 0")
                continue
            if key not in fam.params:
                allowed = ", ".join(["rel"] * fam.uses_level + list(fam.params)) or "none"
                raise MetricNameError(
                    f"metric {name!r}: unknown parameter {key!r} (allowed: {allowed})"
                )
            given[key] = _coerce_param(fam, key, raw, name)
    k = None
    if k_text is not None:
        if not fam.cutoff:
            raise MetricNameError(f"metric {name!r}: {fam.name} takes no cutoff")
        k = int(k_text)
        if k <= 0:
            raise MetricNameError(f"metric {name!r}: the cutoff must be at least 1")
    if fam.name in _TREC_VALUE_PARAM and given.get(_TREC_VALUE_PARAM[fam.name]) is None:
        key = _TREC_VALUE_PARAM[fam.name]
        raise MetricNameError(
            f"metric {name!r}: {fam.name} needs {key}=..., e.g. "
            f"{fam.name}({key}=0.5) or {fam.trec_name}_0.50"
        )
    return Metric(fam.name, k, _params(fam, given), level, name)


def _params(fam: Family, given: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    merged = dict(fam.params)
    merged.update(given)
    return tuple(sorted(merged.items()))


def known_names() -> list[str]:
    """Every family name, alias and trec_eval name form (for messages and docs)."""
    names = set()
    for fam in FAMILIES.values():
        names.add(fam.name)
        names.update(fam.aliases)
        if fam.trec_plain:
            names.add(fam.trec_plain)
        if fam.trec_name:
            example = "0.10" if fam.name in _TREC_VALUE_PARAM else "10"
            names.add(f"{fam.trec_name}_{example}")
        if fam.cutoff:
            names.add(f"{fam.name}@10")
    names.update(_PRESETS)
    names.update(f"{p}@10" for p in _PRESETS)
    return sorted(names)


def _unknown(name: str) -> str:
    base = re.split(r"[@(]", name.strip(), maxsplit=1)[0]
    pool = known_names()
    lower = {n.lower(): n for n in pool}
    close = difflib.get_close_matches(base.lower(), list(lower), n=5, cutoff=0.5)
    close += [
        n
        for n in difflib.get_close_matches(name.lower(), list(lower), n=5, cutoff=0.5)
        if n not in close
    ]
    hint = (
        ", ".join(lower[c] for c in close[:6])
        if close
        else ", ".join(["ndcg@10", "P@5", "recall@100", "mrr@10", "map", "bpref"])
    )
    return f"unknown metric {name!r}; closest valid names: {hint}"


# Bare names that are metrics on their own (over the whole ranking), not trec_eval families
# to expand: "P" is set precision, "recall" set recall, "success" a hit anywhere.
_MEANINGFUL_BARE = {"P", "recall", "success"}


def expand_metric_names(names: str | Iterable[str | Metric]) -> list[str | Metric]:
    """Expand trec_eval ``-m`` forms: ``P.5,10`` → ``P_5``, ``P_10``; a bare trec_eval-only
    family (``ndcg_cut``, ``map_cut``, ``relative_P``, ``iprec_at_recall``, ``Rprec_mult``,
    ``unj``) → trec_eval's default cutoffs; ``all_trec`` → every trec_eval measure ranklens
    implements; ``official`` → trec_eval's default set. Bare ``P``, ``recall`` and
    ``success`` are measures over the whole ranking (write ``P.5,10`` for trec_eval's
    cutoffs). Other names pass through unchanged."""
    if isinstance(names, (str, Metric)):
        names = [names]
    out: list[str | Metric] = []
    for item in names:
        if isinstance(item, Metric):
            out.append(item)
            continue
        text = item.strip()
        low = text.lower()
        if low in ("all_trec", "official"):
            out.extend(_all_trec() if low == "all_trec" else _official())
            continue
        head, dot, tail = text.partition(".")
        fam_name = _TREC_CUT.get(head.lower())
        if fam_name and "(" not in text and "@" not in text:
            fam = FAMILIES[fam_name]
            if dot:
                values = [v.strip() for v in tail.split(",") if v.strip()]
            elif text.lower() == head.lower() and fam.name not in _MEANINGFUL_BARE:
                values = [_fmt_cut(v) for v in fam.trec_defaults]
            else:
                out.append(text)
                continue
            for v in values:
                shown = _fmt_recall(v) if fam.name in _TREC_VALUE_PARAM else v
                out.append(f"{fam.trec_name}_{shown}")
            continue
        if dot and head.lower() in {
            f.trec_plain.lower() for f in FAMILIES.values() if f.trec_plain
        }:
            out.append(head)  # e.g. "map." with no values
            continue
        out.append(text)
    return out


def _fmt_cut(v: Any) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def _fmt_recall(v: str) -> str:
    try:
        return f"{float(v):.2f}"
    except ValueError:
        return v


def _all_trec() -> list[str]:
    names = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"]
    names += [f"iprec_at_recall_{r:.2f}" for r in m.RECALL_POINTS]
    names += [f"P_{k}" for k in TREC_CUTOFFS]
    names += [f"recall_{k}" for k in TREC_CUTOFFS]
    names += ["gm_bpref", "11pt_avg", "ndcg"]
    names += [f"ndcg_cut_{k}" for k in TREC_CUTOFFS]
    names += [f"map_cut_{k}" for k in TREC_CUTOFFS]
    names += [f"relative_P_{k}" for k in TREC_CUTOFFS]
    names += [
        "success_1",
        "success_5",
        "success_10",
        "set_P",
        "set_recall",
        "set_F",
        "rbp",
        "num_q",
        "num_nonrel_judged_ret",
        "set_map",
        "set_relative_P",
        "rbp_resid",
    ]
    names += [f"Rprec_mult_{m:.2f}" for m in FAMILIES["Rprec_mult"].trec_defaults]
    names += ["unj_5", "unj_10", "unj_20"]
    return names


def _official() -> list[str]:
    return [
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        *[f"iprec_at_recall_{r:.2f}" for r in m.RECALL_POINTS],
        *[f"P_{k}" for k in TREC_CUTOFFS],
    ]


def parse_metrics(names: str | Metric | Sequence[str | Metric]) -> list[Metric]:
    """Expand and parse a list of metric names, keeping their order and dropping repeats."""
    seen: dict[str, Metric] = {}
    for item in expand_metric_names(names):
        metric = parse_metric(item)
        key = metric.name or metric.canonical()
        seen.setdefault(key, metric)
    return list(seen.values())


def metric_reference() -> str:
    """``docs/metrics.md``: every metric family with its names, trec_eval name, parameters,
    aggregation, and its docstring (formula, edge cases, reference). Generated from
    :data:`FAMILIES`, so the page cannot drift from the code."""
    import inspect

    lines = [
        "# Metric reference",
        "",
        "Generated from `ranklens.specs.FAMILIES` (`uv run python -m ranklens.specs >",
        "docs/metrics.md`); a test keeps this page equal to the code. Every family takes a",
        "relevance level `rel=` where it uses binary relevance, and a cutoff `@k` where",
        "marked. Names are case-insensitive; trec_eval's names and `-m` forms also parse.",
        "",
        "| family | also | cutoff | trec_eval | parameters | aggregate |",
        "|---|---|---|---|---|---|",
    ]
    for f in FAMILIES.values():
        trec = ", ".join(
            x
            for x in (
                f"`{f.trec_name}_k`" if f.trec_name else "",
                f"`{f.trec_plain}`" if f.trec_plain else "",
            )
            if x
        )
        params = ", ".join(f"`{k}={_fmt(v)}`" for k, v in f.params.items())
        also = ", ".join(f"`{a}`" for a in f.aliases)
        lines.append(
            f"| [`{f.name}`](#{f.name.lower()}) | {also} | {'yes' if f.cutoff else 'no'} | "
            f"{trec or '–'} | {params or '–'} | {f.aggregate} |"
        )
    for f in FAMILIES.values():
        lines += ["", f"## {f.name}", "", inspect.cleandoc(f.doc) if f.doc else "(no docstring)"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(metric_reference(), end="")
