"""A sweep's configurations: the grid expanded and checked against ``build`` before anything
runs, each configuration named, build and query parameters split, and the ``constraint=``
of a selection parsed.

Every fault here is an :class:`~ranklens.errors.InputError` naming the parameter, the
configuration or the field, and the fix: an empty grid or a parameter without values, a
parameter ``build`` does not take (or one it needs and the grid never gives), the same
configuration twice, ``query_params=`` naming no parameter of the grid."""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..capture import plain
from ..errors import InputError, closest


@dataclass(frozen=True)
class Config:
    """One configuration of a sweep: its ``name``, all its ``params`` (in grid order), the
    ones ``build`` receives (``build_params``) and those that only affect the query
    (``query_params``, given to the retriever factory ``build`` returned)."""

    name: str
    params: dict[str, Any]
    build_params: dict[str, Any]
    query_params: dict[str, Any]

    @property
    def key(self) -> str:
        """A short hash of the parameters (as plain JSON), stable across processes: the
        configuration's file in the sweep folder."""
        return params_hash(self.params)

    @property
    def build_key(self) -> str:
        """A hash of the build parameters: configurations sharing it share one build."""
        return params_hash(self.build_params)


def params_hash(params: Mapping[str, Any]) -> str:
    """SHA-256 (16 hex digits) of ``params`` as plain JSON with sorted keys."""
    text = json.dumps(plain(dict(params)), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def value_text(value: Any) -> str:
    """A parameter value as a configuration name shows it (a function by its name)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:g}"
    if isinstance(value, str | int | float | bool) or value is None:
        return str(value)
    name = getattr(value, "__name__", None)
    if name:
        return str(name)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def default_name(params: Mapping[str, Any]) -> str:
    """``"retriever=bm25, chunk=200, top_k=10"``: each parameter and its value."""
    return ", ".join(f"{k}={value_text(v)}" for k, v in params.items()) or "(defaults)"


def expand(grid: Any) -> list[dict[str, Any]]:
    """The configurations of ``grid``: a dict of lists (every combination, in the order
    of the dict and of each list) or a list of dicts (as given)."""
    if isinstance(grid, Mapping):
        if not grid:
            raise InputError(
                "the grid is empty: give {parameter: [values, ...]} or a list of dicts"
            )
        values = {}
        for k, v in grid.items():
            if not isinstance(k, str) or not k.isidentifier():
                raise InputError(f"grid parameter {k!r}: a parameter is named by an identifier")
            if isinstance(v, str | bytes) or not isinstance(v, Sequence | set | frozenset | range):
                raise InputError(
                    f"grid parameter {k!r}: give a list of values, got {type(v).__name__} "
                    f"(write {k}=[{v!r}] for a single value)"
                )
            if not len(v):
                raise InputError(f"grid parameter {k!r} has no values: the grid would be empty")
            values[k] = list(v)
        return [dict(zip(values, combo)) for combo in itertools.product(*values.values())]
    if isinstance(grid, str | bytes) or not isinstance(grid, Sequence):
        raise InputError(
            f"grid must be a dict of lists or a list of dicts, got {type(grid).__name__}"
        )
    configs = []
    for i, item in enumerate(grid, 1):
        if not isinstance(item, Mapping):
            raise InputError(f"grid item {i}: a configuration is a dict, got {type(item).__name__}")
        for k in item:
            if not isinstance(k, str) or not k.isidentifier():
                raise InputError(f"grid item {i}: parameter {k!r} is not an identifier")
        configs.append(dict(item))
    if not configs:
        raise InputError("the grid is empty: give {parameter: [values, ...]} or a list of dicts")
    return configs


def accepted(fn: Callable[..., Any]) -> tuple[set[str] | None, set[str]]:
    """The keyword parameters ``fn`` takes (None when it takes ``**kwargs``) and those it
    needs (no default)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None, set()
    takes: set[str] = set()
    needs: set[str] = set()
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            return None, needs
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            takes.add(p.name)
            if p.default is inspect.Parameter.empty:
                needs.add(p.name)
    return takes, needs


def check_call(fn: Callable[..., Any], given: set[str], what: str, fix: str) -> None:
    """``fn`` must take every parameter of ``given`` and need none other."""
    takes, needs = accepted(fn)
    name = getattr(fn, "__name__", type(fn).__name__)
    if takes is not None:
        extra = sorted(given - takes)
        if extra:
            raise InputError(
                f"{what} {name}() does not take {', '.join(map(repr, extra))} (it takes "
                f"{', '.join(sorted(takes)) or 'no keyword parameters'}): {fix}"
            )
    missing = sorted(needs - given)
    if missing:
        raise InputError(
            f"{what} {name}() needs {', '.join(map(repr, missing))}, which the grid never "
            f"gives: add {'it' if len(missing) == 1 else 'them'} to the grid or give "
            f"{'it' if len(missing) == 1 else 'them'} a default"
        )


def given_name(name: Callable[[dict[str, Any]], str], params: dict[str, Any]) -> str:
    """``name(params)``, which must be a non-empty text (``None`` or a number would be
    made a name silently)."""
    try:
        got = name(dict(params))
    except Exception as exc:
        raise InputError(
            f"sweep: name raised {type(exc).__name__} for {default_name(params)}: {exc}"
        ) from exc
    if not isinstance(got, str) or not got.strip():
        raise InputError(
            f"sweep: name must return a non-empty text for every configuration; for "
            f"{default_name(params)} it returned {got!r:.80}"
        )
    return got


def configurations(
    grid: Any,
    build: Callable[..., Any],
    query_params: Sequence[str] = (),
    name: Callable[[dict[str, Any]], str] | None = None,
) -> list[Config]:
    """The checked configurations of a sweep (see the module docstring)."""
    if not callable(build):
        raise InputError(f"build must be a function of the grid's parameters, got {build!r}")
    items = expand(grid)
    keys = list(dict.fromkeys(k for item in items for k in item))
    query = list(dict.fromkeys(query_params or ()))
    unknown = [q for q in query if q not in keys]
    if unknown:
        near = closest(unknown[0], keys)
        raise InputError(
            f"sweep: query_params {', '.join(map(repr, unknown))} name no parameter of the grid "
            f"({', '.join(keys)})" + (f"; did you mean {near!r}?" if near else "")
        )
    build_keys = {k for k in keys if k not in query}
    fix = "rename it in the grid, add it to build's parameters" + (
        ", or list it in query_params= if it only affects the query" if not query else ""
    )
    check_call(build, build_keys, "build", fix)
    out: list[Config] = []
    seen: dict[str, int] = {}
    names: dict[str, int] = {}
    for i, params in enumerate(items, 1):
        missing_q = [q for q in query if q not in params]
        if missing_q:
            raise InputError(
                f"grid item {i} ({default_name(params)}) has no value for the query parameter "
                f"{missing_q[0]!r}"
            )
        cfg = Config(
            name=given_name(name, params) if name is not None else default_name(params),
            params=dict(params),
            build_params={k: v for k, v in params.items() if k not in query},
            query_params={k: params[k] for k in query},
        )
        if cfg.key in seen:
            raise InputError(
                f"the grid has the same configuration twice: {cfg.name} (items "
                f"{seen[cfg.key]} and {i}); each configuration is run once"
            )
        if cfg.name in names:
            raise InputError(
                f"two configurations are named {cfg.name!r} (items {names[cfg.name]} and {i}): "
                "name= must give each configuration its own name"
            )
        seen[cfg.key], names[cfg.name] = i, i
        out.append(cfg)
    return out


# ---------------------------------------------------------------- constraints
_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
_CLAUSE = re.compile(r"^\s*([A-Za-z_][\w]*)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*(ms|s)?\s*$")

CONSTRAINT_FIELDS = {
    "p50": "latency p50 (ms)",
    "p95": "latency p95 (ms)",
    "p99": "latency p99 (ms)",
    "cpu_p50": "CPU time per call, p50 (ms)",
    "build_s": "build time (s)",
    "cost": "cost per 1,000 queries",
    "errors": "failed queries",
    "index_size": "documents (or chunks) indexed",
}
"""What a ``constraint=`` string may bound (each configuration's row of the sweep)."""


def parse_constraint(constraint: Any) -> Callable[[Mapping[str, Any]], bool] | None:
    """``constraint=`` as a test of a configuration's row: None; a callable of the row
    (a dict with the fields of :data:`CONSTRAINT_FIELDS` and the parameters); or a string
    such as ``"p95 <= 200"`` or ``"p95 <= 200 ms and cost < 0.5"``. A row without a value
    for a bounded field (no latency: the configuration failed) does not satisfy it."""
    if constraint is None:
        return None
    if callable(constraint):
        given: Callable[[Mapping[str, Any]], bool] = constraint
        return given
    if not isinstance(constraint, str):
        raise InputError(
            f"constraint must be a string such as 'p95 <= 200' or a function of a row, got "
            f"{type(constraint).__name__}"
        )
    clauses = []
    for part in re.split(r"\s+and\s+|\s*,\s*", constraint.strip()):
        m = _CLAUSE.match(part)
        if not m or m.group(1) not in CONSTRAINT_FIELDS:
            fields = ", ".join(CONSTRAINT_FIELDS)
            raise InputError(
                f"constraint {constraint!r}: cannot read {part!r}; write FIELD OP NUMBER "
                f"joined by 'and', e.g. 'p95 <= 200' (fields: {fields})"
            )
        field, op, number, unit = m.groups()
        try:
            bound = float(number)
        except ValueError:
            raise InputError(f"constraint {constraint!r}: {number!r} is not a number") from None
        if not math.isfinite(bound):
            raise InputError(
                f"constraint {constraint!r}: the bound of {field} must be a finite number, "
                f"got {number!r}"
            )
        if unit == "s" and field in ("p50", "p95", "p99", "cpu_p50"):
            bound *= 1000.0
        if unit == "ms" and field == "build_s":
            bound /= 1000.0
        clauses.append((field, _OPS[op], bound))

    def test(row: Mapping[str, Any]) -> bool:
        for field, op, bound in clauses:
            v = row.get(field)
            if v is None or (isinstance(v, float) and math.isnan(v)) or not op(v, bound):
                return False
        return True

    test.text = constraint  # type: ignore[attr-defined]
    return test


def satisfies(check: Callable[[Mapping[str, Any]], Any], row: Mapping[str, Any]) -> bool:
    """Whether ``row`` satisfies a ``constraint=`` (a parsed string or the user's function,
    which must return True or False: NaN or None is never read as an answer)."""
    try:
        got = check(row)
    except Exception as exc:
        raise InputError(
            f"sweep: constraint raised {type(exc).__name__} on configuration "
            f"{row.get('name')!r}: {exc}"
        ) from exc
    if not isinstance(got, bool) and type(got).__name__ != "bool_":
        raise InputError(
            f"sweep: constraint must return True or False for every configuration's row; "
            f"for {row.get('name')!r} it returned {got!r:.80}"
        )
    return bool(got)
