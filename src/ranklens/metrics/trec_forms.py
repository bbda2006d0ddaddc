"""trec_eval's ``-m`` forms as ranklens metrics: ``P.5,10`` → ``P_5``, ``P_10``; a bare
family (``ndcg_cut``) → its default cutoffs; the nicknames ``all_trec``, ``official`` and
``set``; parameters after a dot (``set_F.0.5``, ``utility.2,-1,0,0``, ``ndcg.1=3.5,2=9``),
each reported under trec_eval's label. :func:`parse_metrics` expands, parses and de-duplicates
a list of names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..declared import Option, declare
from ..errors import MetricNameError
from .names import NAME_TABLES, Metric, parse_metric
from .registry import FAMILIES, TREC_NICKNAMES, TREC_ORDER, Family

# Bare names that are metrics on their own (over the whole ranking), not trec_eval families
# to expand: "P" is set precision, "recall" set recall, "success" a hit anywhere.
_MEANINGFUL_BARE = {"P", "recall", "success"}


def _trec_expand(measure: str) -> list[str]:
    """One trec_eval measure name of :data:`TREC_ORDER`, with its default suffixes."""
    fam_name = NAME_TABLES.trec_cut.get(measure.lower())
    if fam_name is None or FAMILIES[fam_name].trec_plain == measure:
        return [measure]
    fam = FAMILIES[fam_name]
    return [f"{fam.trec_name}_{_fmt_suffix(v, fam)}" for v in fam.trec_defaults]


def _fmt_suffix(v: Any, fam: Family, label: bool = False) -> str:
    """A trec_eval suffix: two decimals for a value parameter (``0.10``), more when the
    value needs them (``0.125`` is computed at 0.125, never rounded; ``label``: the two
    decimals trec_eval prints whatever the value); a cutoff written with decimals is its
    integer part, as trec_eval reads it (``ndcg_cut.23.4`` is ``ndcg_cut_23``)."""
    if fam.value_param:
        try:
            x = float(v)
        except ValueError:
            return str(v)
        short = f"{x:.2f}"
        return short if label or float(short) == x else repr(x)
    text = str(v)
    if re.fullmatch(r"[0-9]+\.[0-9]*", text):  # trec_eval reads cutoffs as integers: 23.4 is 23
        return text.split(".")[0]
    return text


PRINTED_ONLY = ("runid", "relstring")
"""trec_eval measures that are strings, printed by the command line, not computed."""

PREFERENCE_NICKNAMES = ("prefs", "all_prefs")


def trec_nickname(name: str) -> tuple[str, ...]:
    """The measures of trec_eval's nickname ``name`` (``official``, ``set``, ``all_trec``,
    ``qrels_jg``) in trec_eval's print order; the preference nicknames are refused by name.

    >>> trec_nickname("set")[-5:]
    ('set_P', 'set_relative_P', 'set_recall', 'set_map', 'set_F')
    """
    low = name.strip().lower()
    if low in PREFERENCE_NICKNAMES:
        raise MetricNameError(
            f"metric {name!r}: trec_eval's preference measures (-R prefs / qrels_prefs) are "
            "not implemented in ranklens"
        )
    wanted = TREC_NICKNAMES[low]
    return tuple(m for m in TREC_ORDER if m in wanted)


def expand_metric_names(
    names: str | Metric | Iterable[str | Metric], trec_bare: bool = False
) -> list[str | Metric]:
    """Expand trec_eval ``-m`` forms: ``P.5,10`` → ``P_5``, ``P_10``; a bare trec_eval-only
    family (``ndcg_cut``, ``map_cut``, ``relative_P``, ``iprec_at_recall``, ``Rprec_mult``,
    ``unj``) → trec_eval's default cutoffs; the nicknames ``all_trec``, ``official`` and
    ``set`` → their measures in trec_eval's print order (``runid`` and ``relstring`` are
    strings the command line prints). Bare ``P``, ``recall`` and
    ``success`` are measures over the whole ranking (write ``P.5,10`` for trec_eval's
    cutoffs), unless ``trec_bare`` (the command line's ``-m``, as trec_eval): then they too
    expand to trec_eval's default cutoffs. Other names pass through unchanged.

    >>> expand_metric_names(["P.5,10", "ndcg_cut.20", "map"])
    ['P_5', 'P_10', 'ndcg_cut_20', 'map']
    """
    if isinstance(names, (str, Metric)):
        names = [names]
    out: list[str | Metric] = []
    for item in names:
        if isinstance(item, Metric):
            out.append(item)
            continue
        text = item.strip()
        low = text.lower()
        if low in TREC_NICKNAMES or low in PREFERENCE_NICKNAMES:
            for measure in trec_nickname(text):
                if measure not in PRINTED_ONLY:
                    out.extend(_trec_expand(measure))
            continue
        head, dot, tail = text.partition(".")
        fam_name = NAME_TABLES.trec_cut.get(head.lower())
        if fam_name and "(" not in text and "@" not in text:
            fam = FAMILIES[fam_name]
            if dot:
                values = [v.strip() for v in tail.split(",") if v.strip()]
            elif text.lower() == head.lower() and (
                fam.name not in _MEANINGFUL_BARE or (trec_bare and text == fam.trec_name)
            ):
                values = list(fam.trec_defaults)
            else:
                out.append(text)
                continue
            for v in values:
                name = f"{fam.trec_name}_{_fmt_suffix(v, fam)}"
                label = f"{fam.trec_name}_{_fmt_suffix(v, fam, label=True)}"
                # trec_eval prints a value parameter to 2 decimals, computing at all of it
                out.append(name if label == name else replace(parse_metric(name), name=label))
            continue
        if dot and head.lower() in NAME_TABLES.trec_plain:
            out.append(_trec_params(head, tail, text))
            continue
        out.append(text)
    return out


def _trec_params(head: str, tail: str, text: str) -> str | Metric:
    """A trec_eval ``-m measure.params`` form of a measure without cutoffs, as a ranklens
    metric reported under trec_eval's label (``measure_params``): ``set_F.0.5``
    (trec_eval's weight x = β²: ``(x+1)PR / (xP+R)``) is ``set_F(beta=√x)``;
    ``utility.2,-1,0,0`` is ``utility(a=2,b=-1,c=0,d=0)``; ``11pt_avg.0.2,0.5,0.8`` averages
    those recall points; ``grade=gain`` pairs (``ndcg.1=3.5,2=9``) are custom gains;
    ``rbp.p=0.8`` is ``rbp(p=0.8)``; no parameter (``map.``) is the measure itself. A
    parameter ranklens cannot honour is an error, never dropped."""
    tail = tail.strip()
    if not tail:
        return head
    fam = FAMILIES[NAME_TABLES.lookup[head.lower()][0]]
    label = f"{head}_{tail}"
    values = [v.strip() for v in tail.split(",")]
    numbers = _numbers(values)
    if fam.name == "set_F" and "=" not in tail:
        if numbers is None or len(numbers) != 1 or numbers[0] < 0:
            raise MetricNameError(
                f"metric {text!r}: set_F's parameter is trec_eval's weight x of recall "
                "against precision, a number >= 0 (set_F.0.5)"
            )
        return replace(parse_metric(f"set_F(beta={math.sqrt(numbers[0])!r})"), name=label)
    if fam.name == "utility" and numbers is not None and len(numbers) == 4:
        given = ",".join(f"{k}={x!r}" for k, x in zip("abcd", numbers))
        return replace(parse_metric(f"utility({given})"), name=label)
    if fam.name == "11pt_avg" and numbers is not None:
        return replace(
            parse_metric(f"11pt_avg(points=[{','.join(map(repr, numbers))}])"), name=label
        )
    items = [item.partition("=") for item in values]
    gains = [(k.strip(), x.strip()) for k, eq, x in items if eq and _is_int(k.strip())]
    named = [f"{k.strip()}={x.strip()}" for k, eq, x in items if eq and not _is_int(k.strip())]
    honoured = all(eq for _, eq, _ in items) and (not gains or "gains" in fam.params)
    if honoured and all(n.partition("=")[0].lower() in fam.params for n in named):
        if gains:
            named.append("gains={" + ",".join(f"{k}:{x}" for k, x in gains) + "}")
        return replace(parse_metric(f"{head}({','.join(named)})"), name=label)
    allowed = ", ".join(f"{k}=..." for k in fam.params) or "none"
    raise MetricNameError(
        f"metric {text!r}: ranklens cannot honour the parameters {tail!r} of {head} (its "
        f"parameters: {allowed})"
    )


def _is_int(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def _numbers(values: list[str]) -> list[float] | None:
    try:
        out = [float(v) for v in values]
    except ValueError:
        return None
    return out if all(math.isfinite(x) for x in out) else None


@dataclass(frozen=True)
class MetricsOption(Option):
    """Metrics: a non-empty list of metric names or :class:`Metric` objects, or one of them
    (a list of one; a name is never iterated by character).

    >>> METRICS.validate("ndcg@10", "metrics", "evaluate")
    ['ndcg@10']
    """

    def _own_words(self) -> str:
        return "a non-empty list of metric names or Metric objects (or one)"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, Metric) or (isinstance(value, str) and value.strip()):
            return True, [value]
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            return False, None
        if isinstance(value, dict):
            return False, None
        items = list(value)
        ok = bool(items) and all(
            isinstance(x, Metric) or (isinstance(x, str) and x.strip()) for x in items
        )
        return ok, items


METRICS = MetricsOption("names", None, "metric names such as 'ndcg@10', 'P(rel=2)@5', 'map'")
"""The ``metrics=`` of every entry point that computes metrics, declared once."""

PARSE_METRICS = declare("parse_metrics", {"names": METRICS})


@PARSE_METRICS.checks
def parse_metrics(names: str | Metric | Sequence[str | Metric]) -> list[Metric]:
    """Expand and parse a list of metric names, keeping their order and dropping repeats.

    >>> [str(m) for m in parse_metrics(["ndcg@10", "P_5", "ndcg_cut_10"])]
    ['ndcg@10', 'P@5', 'ndcg@10']
    """
    seen: dict[str, Metric] = {}
    for item in expand_metric_names(names):
        metric = parse_metric(item)
        key = metric.name or metric.canonical()
        seen.setdefault(key, metric)
    return list(seen.values())
