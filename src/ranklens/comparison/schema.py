"""The shape of a saved report, checked field by field before a report is rebuilt.

A report file is data from outside: it may be hand-edited, truncated or hostile. Every
field a renderer reads is checked for its type and shape here, and a mismatch is an
:class:`~ranklens.errors.InputError` naming the field's path (``per_query['bm25']['ndcg@10']
[3]``), so a loaded report holds only what a report made by :func:`ranklens.compare` holds:
strings where strings go (escaped by every renderer), numbers where numbers go.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InputError

AGGREGATIONS = frozenset({"mean", "sum", "gmean"})
SPECIAL_NUMBERS = frozenset({"inf", "-inf"})
COMPARISON_FIELDS = {
    "metric": "str", "run": "str", "other": "str", "diff": "num", "pvalue": "num",
    "pvalue_adjusted": "num", "significant": "bool", "effect_size": "num", "wins": "int",
    "ties": "int", "losses": "int", "n": "int",
}  # fmt: skip
MAX_DEPTH = 12
"""Nesting allowed in free-form fields (metadata, counts, settings)."""


def _fail(path: str, what: str, value: Any) -> None:
    raise InputError(f"report field {path} must be {what}, got {type(value).__name__}")


def _is_num(v: Any) -> bool:
    return (
        v is None
        or v in SPECIAL_NUMBERS
        or (isinstance(v, (int, float)) and not isinstance(v, bool))
    )


def _num(v: Any, path: str) -> None:
    if not _is_num(v):
        _fail(path, "a number", v)


def _int(v: Any, path: str) -> None:
    if not isinstance(v, int) or isinstance(v, bool):
        _fail(path, "an integer", v)


def _str(v: Any, path: str) -> None:
    if not isinstance(v, str):
        _fail(path, "a string", v)


def _names(v: Any, path: str, unique: bool = True) -> list[str]:
    if not isinstance(v, list):
        _fail(path, "a list of strings", v)
    for i, x in enumerate(v):
        _str(x, f"{path}[{i}]")
    if unique and len(set(v)) != len(v):
        raise InputError(f"report field {path} lists a name twice")
    names: list[str] = v
    return names


def _dict(v: Any, path: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        _fail(path, "an object", v)
    fields: dict[str, Any] = v
    return fields


def _keys(d: dict[str, Any], expected: list[str], path: str) -> None:
    if sorted(d) != sorted(expected):
        missing = sorted(set(expected) - set(d))
        extra = sorted(set(d) - set(expected))
        raise InputError(
            f"report field {path} must have one entry per name: missing {missing}, extra {extra}"
        )


def _plain(v: Any, path: str, depth: int = 0) -> None:
    """Free-form JSON (metadata): any nesting of objects, lists, strings, numbers, bools."""
    if depth > MAX_DEPTH:
        raise InputError(f"report field {path} is nested too deeply")
    if isinstance(v, dict):
        for k, x in v.items():
            _plain(x, f"{path}[{k!r}]", depth + 1)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _plain(x, f"{path}[{i}]", depth + 1)
    elif not (v is None or isinstance(v, (str, int, float, bool))):
        _fail(path, "JSON data", v)


def _each(d: dict[str, Any], path: str, check: Callable[[Any, str], object]) -> None:
    for k, v in d.items():
        check(v, f"{path}[{k!r}]")


def validate_report_dict(data: Any) -> None:
    """Check a report's JSON form (see the module docstring); raises InputError."""
    d = _dict(data, "(top level)")
    runs = _names(d.get("runs"), "runs")
    metrics = _names(d.get("metrics"), "metrics")
    qids = _names(d.get("query_ids"), "query_ids")
    aggregations = _dict(d.get("aggregations", {}), "aggregations")
    for m, how in aggregations.items():
        if how not in AGGREGATIONS:
            raise InputError(
                f"report field aggregations[{m!r}] must be one of {sorted(AGGREGATIONS)}"
            )
    per_query = _dict(d.get("per_query"), "per_query")
    summary = _dict(d.get("summary"), "summary")
    _keys(per_query, runs, "per_query")
    _keys(summary, runs, "summary")
    for r in runs:
        pq = _dict(per_query[r], f"per_query[{r!r}]")
        sm = _dict(summary[r], f"summary[{r!r}]")
        _keys(pq, metrics, f"per_query[{r!r}]")
        _keys(sm, metrics, f"summary[{r!r}]")
        for m in metrics:
            values = pq[m]
            path = f"per_query[{r!r}][{m!r}]"
            if not isinstance(values, list) or len(values) != len(qids):
                raise InputError(f"report field {path} must list one value per query id")
            for i, v in enumerate(values):
                _num(v, f"{path}[{i}]")
            cell = _dict(sm[m], f"summary[{r!r}][{m!r}]")
            if "value" not in cell:
                raise InputError(f"report field summary[{r!r}][{m!r}] has no 'value'")
            _each(cell, f"summary[{r!r}][{m!r}]", _num)
    counts = _dict(d.get("counts", {}), "counts")
    for r, c in counts.items():
        _plain(_dict(c, f"counts[{r!r}]"), f"counts[{r!r}]")
        for k, v in c.items():
            if k != "failures":
                _int(v, f"counts[{r!r}][{k!r}]")
    comparisons = d.get("comparisons", [])
    if not isinstance(comparisons, list):
        _fail("comparisons", "a list", comparisons)
    checks = {"str": _str, "num": _num, "int": _int}
    for i, c in enumerate(comparisons):
        c = _dict(c, f"comparisons[{i}]")
        _keys(c, list(COMPARISON_FIELDS), f"comparisons[{i}]")
        for k, kind in COMPARISON_FIELDS.items():
            path = f"comparisons[{i}][{k!r}]"
            if kind == "bool":
                if not isinstance(c[k], bool):
                    _fail(path, "true or false", c[k])
            else:
                checks[kind](c[k], path)
        if c["metric"] not in metrics or c["run"] not in runs or c["other"] not in runs:
            raise InputError(
                f"report field comparisons[{i}] names a run or metric not in the report"
            )
    curves = _dict(d.get("curves", {}), "curves")
    for r, fams in curves.items():
        for fam, pts in _dict(fams, f"curves[{r!r}]").items():
            for k, v in _dict(pts, f"curves[{r!r}][{fam!r}]").items():
                if not k.isdigit():
                    raise InputError(f"report field curves[{r!r}][{fam!r}] has a cutoff {k!r}")
                _num(v, f"curves[{r!r}][{fam!r}][{k!r}]")
    _each(_dict(d.get("queries", {}), "queries"), "queries", _str)
    settings = _dict(d.get("settings", {}), "settings")
    for k, v in settings.items():
        if not (v is None or isinstance(v, (str, int, float, bool))):
            _fail(f"settings[{k!r}]", "a string, number or bool", v)
        elif v is not None and k in SETTINGS:  # what the renderers read, typed
            SETTINGS[k](v, f"settings[{k!r}]")
    if settings.get("baseline") is not None and settings["baseline"] not in runs:
        raise InputError(
            f"report field settings['baseline'] names {settings['baseline']!r}, not a run of "
            f"the report ({', '.join(map(repr, runs))})"
        )
    _plain(_dict(d.get("metadata", {}), "metadata"), "metadata")
    check_metadata(d.get("metadata", {}))


SETTINGS: dict[str, Callable[[Any, str], object]] = {
    "baseline": _str,
    "test": _str,
    "correction": _str,
    "ci": _str,
    "alpha": _num,
    "confidence": _num,
    "n_resamples": _int,
}
"""The settings the renderers read, with the type each must have (None: not set)."""


# --- metadata fields the renderers read: typed, checked on load, on rendering and when a
# --- caller passes them (compare's run_info=) ------------------------------------------------


def _opt(check: Callable[[Any, str], object]) -> Callable[[Any, str], object]:
    def run(v: Any, path: str) -> None:
        if v is not None:
            check(v, path)

    return run


def _map_of(check: Callable[[Any, str], object]) -> Callable[[Any, str], object]:
    def run(v: Any, path: str) -> None:
        for k, x in _dict(v, path).items():
            check(x, f"{path}[{k!r}]")

    return run


def _fields(spec: dict[str, Callable[[Any, str], object]]) -> Callable[[Any, str], object]:
    def run(v: Any, path: str) -> None:
        d = _dict(v, path)
        for k, check in spec.items():
            if k in d:
                check(d[k], f"{path}[{k!r}]")

    return run


def _pairs(v: Any, path: str) -> None:
    if not isinstance(v, list):
        _fail(path, "a list of [query, count] pairs", v)
    for i, x in enumerate(v):
        if not (isinstance(x, list) and len(x) == 2):
            _fail(f"{path}[{i}]", "a [query, count] pair", x)
        _str(x[0], f"{path}[{i}][0]")
        _int(x[1], f"{path}[{i}][1]")


def _real(v: Any, path: str) -> None:
    """A number read by arithmetic (metadata): int or float, or None; no "inf" strings."""
    if not (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))):
        _fail(path, "a number", v)


def _names_list(v: Any, path: str) -> None:
    _names(v, path, unique=False)


def _list_of(check: Callable[[Any, str], object]) -> Callable[[Any, str], object]:
    def run(v: Any, path: str) -> None:
        if not isinstance(v, list):
            _fail(path, "a list", v)
        for i, x in enumerate(v):
            check(x, f"{path}[{i}]")

    return run


def _ints(n: int) -> Callable[[Any, str], object]:
    def run(v: Any, path: str) -> None:
        if not (isinstance(v, list) and len(v) == n):
            _fail(path, f"a list of {n} integers", v)
        for i, x in enumerate(v):
            _int(x, f"{path}[{i}]")

    return run


def _piece(v: Any, path: str) -> None:
    if not (isinstance(v, list) and len(v) == 2):
        _fail(path, "a [start, text] piece", v)
    _int(v[0], f"{path}[0]")
    _str(v[1], f"{path}[1]")


SPAN_DRILL: dict[str, Callable[[Any, str], object]] = {
    "spans": _list_of(_list_of(_ints(5))),
    "place": _map_of(_list_of(_list_of(_ints(4)))),
    "grade": _map_of(_list_of(_list_of(_opt(_int)))),
    "first": _map_of(_list_of(_list_of(_ints(2)))),
    "pieces": _map_of(_list_of(_piece)),
    "own": _map_of(_str),
    "overlap": _opt(_str),
}
"""The drill-down's fields on span labels (:mod:`.spandrill`) and their shapes."""

_TIMES = _map_of(_real)
RUN_INFO_FIELDS: dict[str, Callable[[Any, str], object]] = {
    "queries": _opt(_int), "errors": _opt(_int), "error_types": _map_of(_int),
    "latency_ms": _TIMES, "cpu_ms": _TIMES, "concurrency": _opt(_int),
    "duplicates_dropped": _opt(_int), "unmapped_hits": _opt(_int), "retries": _opt(_int),
}  # fmt: skip
"""What the renderers read of ``metadata["run_info"][run]`` and its type."""

METADATA_FIELDS: dict[str, Callable[[Any, str], object]] = {
    "dataset": _opt(_str),
    "convention": _opt(_str),
    "created": _opt(_str),
    "versions": _map_of(_str),
    "options": _fields({"relevance_level": _opt(_int), "switches": _dict}),
    "run_info": _map_of(_fields(RUN_INFO_FIELDS)),
    "power": _fields(
        {
            "alpha": _real,
            "power": _real,
            "n": _opt(_int),
            "mde": _map_of(_real),
            "span": _map_of(_opt(_real)),
        }
    ),
    "holes": _map_of(
        _fields({"unjudged": _opt(_int), "depth": _opt(_int), "worst_queries": _pairs})
    ),
    "drilldown": _fields({"depth": _opt(_int), "docs": _names_list, "top": _dict, **SPAN_DRILL}),
    "fusion": _dict,
    "sweep": _dict,
}
"""What the renderers read of a report's metadata and its type: each field is checked
when a report is loaded, before it is rendered, and where a caller supplies it."""


def check_metadata(md: Any, path: str = "metadata") -> None:
    """Check the metadata fields renderers read (:data:`METADATA_FIELDS`); an
    :class:`~ranklens.errors.InputError` names the first field of the wrong type."""
    d = _dict(md, path)
    for k, check in METADATA_FIELDS.items():
        if d.get(k) is not None:
            check(d[k], f"{path}[{k!r}]")


def check_run_info(info: Any, path: str = "run_info") -> None:
    """Check per-run facts a caller passes to ``compare(run_info=...)``."""
    _map_of(_fields(RUN_INFO_FIELDS))(info, path)
