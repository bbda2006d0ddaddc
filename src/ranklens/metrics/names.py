"""Metric names parse into :class:`Metric` objects, from the registry's declarations.

Accepted names (case-insensitive):

* ranklens/ir_measures style: ``family[(param=value, ...)][@k]``, e.g. ``ndcg@10``,
  ``P@5``, ``recall@100``, ``mrr@10``, ``map``, ``map@100``, ``rprec``, ``bpref``,
  ``err@20``, ``rbp(p=0.8)``, ``P(rel=2)@10``, ``ndcg_exp@10``, ``hit_rate@5``;
  ``rel=`` sets the relevance level ℓ of that metric alone.
* trec_eval's names: ``P_5``, ``recall_1000``, ``ndcg_cut_10``, ``map_cut_100``,
  ``recip_rank``, ``Rprec``, ``success_10``, ``set_F``, ``num_rel_ret``,
  ``iprec_at_recall_0.10``, ``11pt_avg``, …; trec_eval's ``-m`` forms (``P.5,10``,
  ``ndcg.1=3,2=9``, ``all_trec``) are expanded by :mod:`.trec_forms`.

* a context budget instead of a rank cutoff, for any family with a cutoff:
  ``recall@1024tok``, ``ndcg@2000char`` (``tok``/``token``/``tokens``,
  ``char``/``chars``/``characters``): the metric at each query's cutoff ``c_q``, the chunks
  that fit the budget whole (:mod:`ranklens.judging.budget`); ``straddle=include`` adds the
  chunk straddling its end, ``straddle=partial`` (evidence metrics) its part within it.

* ir_measures' strings, unchanged: ``nDCG(dcg='exp-log2')@10``, ``IPrec@0.5``,
  ``SetP(relative=True)``, ``NumRet(rel=1)``, ``alpha_nDCG(alpha=0.5)@20``; any family
  takes ``judged_only=True`` (condensed lists); see :mod:`.ir_names` for the spellings
  that keep ir_measures' meaning (``ERR``, ``SetF``) and those refused.

A metric is reported under the name it was given.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..declared import Option, declare
from ..errors import MetricNameError, suggest
from ..judging import Budget, condensed_pair
from ..judging.budget import UNITS
from .ir_names import IR_MEASURES_EXACT, IR_MEASURES_REFUSED, ir_param
from .params import JUDGED_ONLY, LEVEL, STRADDLE
from .registry import FAMILIES, Family, on_change


class _Names:
    """The name tables derived from :data:`FAMILIES` (rebuilt when a family registers)."""

    def __init__(self) -> None:
        self.rebuild()
        on_change(self.rebuild)

    def rebuild(self) -> None:
        lookup: dict[str, tuple[str, dict[str, Any]]] = {}
        for fam in FAMILIES.values():
            lookup[fam.name.lower()] = (fam.name, {})
            for a in fam.aliases:
                lookup[a.lower()] = (fam.name, {})
            if fam.trec_plain:
                lookup[fam.trec_plain.lower()] = (fam.name, {})
        for fam in FAMILIES.values():
            for preset, values in fam.presets.items():
                lookup[preset.lower()] = (fam.name, dict(values))
        self.lookup = lookup
        self.trec_cut = {f.trec_name.lower(): f.name for f in FAMILIES.values() if f.trec_name}
        self.trec_plain = {f.trec_plain.lower() for f in FAMILIES.values() if f.trec_plain}
        self.trec_cut_re = re.compile(
            r"^("
            + "|".join(sorted(map(re.escape, self.trec_cut), key=len, reverse=True))
            + r")_(\d+(?:\.\d+)?)$",
            re.IGNORECASE,
        )


NAME_TABLES = _Names()
"""The name tables derived from the registry (rebuilt on change)."""
_SPEC_RE = re.compile(
    r"^\s*([A-Za-z0-9α][A-Za-z0-9_\-]*?)\s*(?:\(([^()]*)\))?\s*"
    r"(?:@\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]+)?)?\s*$"
)


@dataclass(frozen=True)
class Metric:
    """A parsed metric: family, cutoff, parameters and optional relevance level.

    ``name`` is the name as given (results are reported under it); ``str(metric)`` is the
    canonical spelling. ``budget``: a context budget (:class:`~ranklens.judging.Budget`)
    in place of the rank cutoff ``k``, with ``straddle`` (``"exclude"``, ``"include"`` or
    ``"partial"``) saying what the chunk straddling its end counts for.

    >>> m = Metric("rbp", params=(("gains", None), ("p", 0.8)), name="rbp(p=0.8)")
    >>> str(m), m.aggregate
    ('rbp(p=0.8)', 'mean')
    """

    family: str
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    level: int | None = None
    name: str = ""
    judged_only: bool = False
    budget: Budget | None = None
    straddle: str = "exclude"

    @property
    def spec(self) -> Family:
        return FAMILIES[self.family]

    @property
    def aggregate(self) -> str:
        return self.spec.aggregate

    def canonical(self) -> str:
        fam = self.spec
        defaults = fam.defaults
        shown = [(k, v) for k, v in self.params if defaults.get(k) != v]
        base = self.family
        for values in fam.presets.values():
            if values and all(dict(self.params).get(k) == v for k, v in values.items()):
                base = min((p for p, vs in fam.presets.items() if vs == values), key=len)
                shown = [(k, v) for k, v in shown if k not in values]
                break
        parts = [f"{k}={fmt_value(v)}" for k, v in shown]
        if self.level is not None:
            parts.insert(0, f"rel={self.level}")
        if self.judged_only:
            parts.append("judged_only=True")
        if self.budget is not None and self.straddle != "exclude":
            parts.append(f"straddle={self.straddle}")
        s = base + (f"({','.join(parts)})" if parts else "")
        if self.budget is not None:
            return f"{s}@{self.budget}"
        return s + (f"@{self.k}" if self.k is not None else "")

    def __str__(self) -> str:
        return self.canonical()

    def with_params(self, **changes: Any) -> Metric:
        """The same metric (and name) with some parameters set to other values."""
        declared = self.spec.params
        params = dict(self.params)
        params.update({k: declared[k].validate(v, k, self.name) for k, v in changes.items()})
        return replace(self, params=tuple(sorted(params.items())))

    def compute(self, judged: Any) -> np.ndarray:
        """Per-query values on a :class:`~ranklens.judging.Judged` pair (the family's
        implementation for the pair's variant)."""
        fam = self.spec
        kwargs = {(fam.params[k].arg or k): v for k, v in self.params}
        if self.budget is not None:
            return self._at_budget(judged, self.budget, kwargs)
        if self.judged_only:
            judged = condensed_pair(judged)
        view = judged.view(self.level)
        return fam.implementation(judged.variant)(view, self.k, **kwargs)

    def _at_budget(self, judged: Any, budget: Budget, kwargs: dict[str, Any]) -> np.ndarray:
        """Per query the metric at its budget's cutoff ``c_q``: the family at each distinct
        cutoff, each query taking its own (``c_q = 0``: 0); under ``straddle="partial"``
        the family with no cutoff on the pair whose straddling chunk is cut at the budget
        (:meth:`~ranklens.judging.Judged.budget_partial`). With ``judged_only`` (what
        :func:`ranklens.holes` asks), the condensed list at the cutoffs of the full one:
        ``metric(judged_only)@c_q``."""
        fn = self.spec.implementation(judged.variant)
        if self.straddle == "partial":  # evidence metrics, which condensed lists leave be
            cut_pair = judged.budget_partial(budget)
            values: np.ndarray = fn(cut_pair.view(self.level), None, **kwargs)
            return values
        cut = judged.budget_cutoffs(budget, self.straddle)
        if self.judged_only:  # (holes' view) the condensed list at the same cutoffs
            judged = condensed_pair(judged)
        view = judged.view(self.level)
        out = np.zeros(judged.n_queries, dtype=np.float64)
        for c in np.unique(cut[cut > 0]).tolist():
            at = cut == c
            out[at] = np.asarray(fn(view, int(c), **kwargs), dtype=np.float64)[at]
        return out


def fmt_value(v: Any) -> str:
    """A parameter value as written in a metric name.

    >>> fmt_value(0.5), fmt_value(((1, 3.5), (2, 9.0))), fmt_value(0.1 + 0.2)
    ('0.5', '{1:3.5,2:9}', '0.30000000000000004')
    """
    if isinstance(v, float):
        short = f"{v:g}"
        return short if float(short) == v else repr(v)  # exact, so it parses back the same
    if isinstance(v, tuple) and v and isinstance(v[0], tuple):
        return "{" + ",".join(f"{g}:{fmt_value(x)}" for g, x in v) + "}"
    if isinstance(v, tuple):
        return "[" + ",".join(fmt_value(x) for x in v) + "]"
    return str(v)


@dataclass(frozen=True)
class MetricOption(Option):
    """One metric: a name or a :class:`Metric`.

    >>> PARSE_METRIC["name"].validate("ndcg@10", "name", "parse_metric")
    'ndcg@10'
    """

    def _own_words(self) -> str:
        return "a metric name or a Metric"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        ok = isinstance(value, Metric) or (isinstance(value, str) and bool(value.strip()))
        return ok, value


PARSE_METRIC = declare("parse_metric", {
    "name": MetricOption("text", None, "a metric name such as 'ndcg@10' (or a Metric)"),
})  # fmt: skip


@PARSE_METRIC.checks
def parse_metric(name: str | Metric) -> Metric:
    """Parse a metric name (see the module docstring) into a :class:`Metric`.

    Raises :class:`~ranklens.errors.MetricNameError` listing the closest valid names.

    >>> m = parse_metric("ndcg_cut_10")
    >>> m.family, m.k, str(m)
    ('ndcg', 10, 'ndcg@10')
    """
    if isinstance(name, Metric):
        return name
    if not isinstance(name, str):
        raise MetricNameError(f"a metric name must be a string, got {name!r}")
    text = name.strip()
    mt = NAME_TABLES.trec_cut_re.match(text)
    if mt:
        fam = FAMILIES[NAME_TABLES.trec_cut[mt.group(1).lower()]]
        val = mt.group(2)
        if fam.value_param:
            key = fam.value_param
            value = fam.params[key].validate(float(val), key, name)
            return Metric(fam.name, None, _params(fam, {key: value}), None, name)
        if "." in val:
            raise MetricNameError(f"metric {name!r}: the cutoff must be a whole number")
        return Metric(fam.name, int(val), _params(fam, {}), None, name)
    ms = _SPEC_RE.match(text)
    if not ms and text.count("@") > 1:
        raise MetricNameError(
            f"metric {name!r}: a rank cutoff and a budget together; a budget is itself a "
            "per-query cutoff: write one, e.g. recall@10 or recall@1024tok"
        )
    if not ms:
        raise MetricNameError(_unknown(name))
    base, param_text, k_text, unit_text = ms.groups()
    if base in IR_MEASURES_REFUSED:
        raise MetricNameError(f"metric {name!r}: {IR_MEASURES_REFUSED[base]}")
    entry = IR_MEASURES_EXACT.get(base) or NAME_TABLES.lookup.get(base.lower())
    if entry is None:
        raise MetricNameError(_unknown(name))
    fam_name, preset = entry
    fam = FAMILIES[fam_name]
    given: dict[str, Any] = dict(preset)
    level = None
    judged_only = False
    straddle = None
    if param_text and param_text.strip():
        for item in _split_params(param_text):
            if "=" not in item:
                raise MetricNameError(
                    f"metric {name!r}: parameter {item.strip()!r} must be written key=value"
                )
            key, raw = (s.strip() for s in item.split("=", 1))
            key = key.lower()
            if key == "judged_only":
                judged_only = JUDGED_ONLY.parse(raw, key, name)
                continue
            if key == "straddle":
                straddle = STRADDLE.parse(raw, key, name)
                continue
            fam, key, raw = ir_param(fam, base, key, raw, name)
            if not key:
                continue
            if key in ("rel", "l", "level"):
                level = _level(fam, raw, name)
                continue
            if key not in fam.params:
                raise MetricNameError(_unknown_param(fam, key, name))
            given[key] = fam.params[key].parse(raw, key, name)
    k = None
    if unit_text is not None:
        budget = _budget(fam, k_text, unit_text, name)
        return Metric(fam.name, None, _params(fam, given), level, name, judged_only, budget,
                      _straddle(fam, straddle, name, judged_only))  # fmt: skip
    if straddle is not None:
        raise MetricNameError(
            f"metric {name!r}: straddle= says what the chunk straddling a context budget "
            f"counts for; it needs a budget, e.g. {fam.name}(straddle={straddle})@1024tok"
        )
    if k_text is not None and k_text.startswith("-"):
        raise MetricNameError(f"metric {name!r}: the cutoff must be at least 1")
    if k_text is not None and fam.value_param:  # ir_measures' IPrec@0.5
        given[fam.value_param] = fam.params[fam.value_param].parse(k_text, fam.value_param, name)
    elif k_text is not None:
        if "." in k_text:
            raise MetricNameError(f"metric {name!r}: the cutoff must be a whole number")
        if not fam.cutoff:
            raise MetricNameError(f"metric {name!r}: {fam.name} takes no cutoff")
        k = int(k_text)
        if k <= 0:
            raise MetricNameError(f"metric {name!r}: the cutoff must be at least 1")
    if fam.value_param and given.get(fam.value_param) is None:
        key = fam.value_param
        raise MetricNameError(
            f"metric {name!r}: {fam.name} needs {key}=..., e.g. "
            f"{fam.name}({key}=0.5) or {fam.trec_name}_0.50"
        )
    return Metric(fam.name, k, _params(fam, given), level, name, judged_only)


def _budget(fam: Family, amount: str, unit: str, name: str) -> Budget:
    """The budget of ``@<amount><unit>``: a whole number >= 1 of a known unit, on a family
    with a cutoff."""
    canonical = UNITS.get(unit.lower())
    if canonical is None:
        raise MetricNameError(
            f"metric {name!r}: unknown budget unit {unit!r}{suggest(unit.lower(), list(UNITS))}"
            " (a budget is @<number>tok or @<number>char, e.g. recall@1024tok; tok, token, "
            "tokens, char, chars and characters are its spellings)"
        )
    if not fam.cutoff:
        raise MetricNameError(
            f"metric {name!r}: {fam.name} takes no cutoff, so no budget either (a budget is a "
            f"per-query rank cutoff); write {fam.name} alone, or a family with a cutoff such "
            "as recall@1024tok"
        )
    if "." in amount or amount.startswith("-") or int(amount) < 1:
        raise MetricNameError(
            f"metric {name!r}: a budget is a whole number >= 1 of "
            f"{'tokens' if canonical == 'tok' else 'characters'}, e.g. {fam.name}@1024{canonical}"
        )
    return Budget(int(amount), canonical)


def _straddle(fam: Family, straddle: str | None, name: str, judged_only: bool) -> str:
    """``straddle`` of a budget metric: ``partial`` only where the family counts amounts
    of evidence (its ``partial_budget``)."""
    if judged_only:
        raise MetricNameError(
            f"metric {name!r}: judged_only removes chunks a reader would read; a budget counts "
            "every chunk (leave judged_only out)"
        )
    if straddle == "partial" and not fam.partial_budget:
        takes = ", ".join(f.name for f in FAMILIES.values() if f.partial_budget)
        raise MetricNameError(
            f"metric {name!r}: straddle=partial counts part of a chunk, which only the "
            f"evidence families measure ({takes}); {fam.name} takes straddle=exclude "
            "(the default) or straddle=include"
        )
    return straddle or "exclude"


def _unknown_param(fam: Family, key: str, name: str) -> str:
    """An unknown parameter: the closest valid name, and what the family takes."""
    valid = ["rel"] * fam.uses_level + list(fam.params) + ["judged_only"]
    valid += ["straddle"] * fam.cutoff
    takes = ", ".join(valid[:-1]) + f" and {valid[-1]}" if len(valid) > 1 else valid[0]
    return (
        f"metric {name!r}: unknown parameter {key!r}{suggest(key, valid)} ({fam.name} takes "
        f"{takes}; `ranklens explain -m {fam.name}` describes each)"
    )


def _split_params(text: str) -> list[str]:
    """``a=1, gains={1:3,2:9}`` split at the commas outside brackets."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "[{") - (ch in "]}")
        if ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


def _level(fam: Family, raw: str, name: str) -> int:
    if not fam.uses_level:
        raise MetricNameError(
            f"metric {name!r}: {fam.name} does not use a "
            "relevance level (its gains are the raw grades)"
        )
    level: int = LEVEL.parse(raw, "rel", name)
    return level


def _params(fam: Family, given: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    merged = fam.defaults
    merged.update(given)
    return tuple(sorted(merged.items()))


def lower_is_better(name: str) -> bool:
    """Whether the metric ``name`` is a rate of something unwanted (its family says
    ``lower_is_better``); False for a name that does not parse.

    >>> lower_is_better("outdated@5"), lower_is_better("ndcg@10"), lower_is_better("nonsense")
    (True, False, False)
    """
    try:
        return parse_metric(name).spec.lower_is_better
    except Exception:
        return False


def known_names() -> list[str]:
    """Every family name, alias and trec_eval name form (for messages and docs).

    >>> [n for n in known_names() if n.lower().startswith("ndcg_")]
    ['ndcg_burges', 'ndcg_burges@10', 'ndcg_cut_10', 'ndcg_exp', 'ndcg_exp@10', 'ndcg_rel']
    """
    names = set()
    for fam in FAMILIES.values():
        names.add(fam.name)
        names.update(fam.aliases)
        if fam.trec_plain:
            names.add(fam.trec_plain)
        if fam.trec_name:
            example = "0.10" if fam.value_param else "10"
            names.add(f"{fam.trec_name}_{example}")
        if fam.cutoff:
            names.add(f"{fam.name}@10")
        for preset in fam.presets:
            names.add(preset)
            names.add(f"{preset}@10")
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
