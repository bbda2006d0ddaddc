"""User profiles from TOML: a file of ``[profiles.NAME]`` tables, or ``pyproject.toml``'s
``[tool.ranklens.profiles.NAME]``. A table may ``extends`` another profile (built-in or
declared before it in the same file); a table named like a built-in profile extends it, so
``[tool.ranklens.profiles.faq.targets] "mrr@10" = 0.85`` overrides one target and keeps the
rest. Unknown keys, unknown metrics and targets outside a metric's range are errors naming
the file and the table.

.. code-block:: toml

    [tool.ranklens.profiles.support-bot]
    extends = "faq"
    title = "Support bot"
    metrics = ["success@3", { metric = "ndcg@5", why = "graded answers" }]

    [tool.ranklens.profiles.support-bot.targets]
    "mrr@10" = 0.85
    "P@1" = { at_least = 0.75, why = "the bot answers from its top hit", source = "our SLA" }
    "unj@10" = { at_most = 0.1, why = "labels cover what we show" }
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..declared import declare, items, mapping, names, text
from ..errors import InputError, closest
from .model import MetricUse, Profile, Typical, from_fields

PROFILE_TABLE = declare("[profiles.NAME] (a profiles TOML file)", {
    "extends": text(None, "the profile it extends (built-in, or declared before it)"),
    "title": text(None, "a title", empty=True),
    "summary": text(None, "what the use case is, in one line", empty=True),
    "metrics": items(None, (str, Mapping), "metric names or { metric = ..., why = ... }",
                     "the metrics that fit the use case; one name is a list of one",
                     single=True, empty=True),
    "targets": mapping(None, "METRIC = value, { at_least = ..., why = ..., source = ... } "
                       "or false (removed)", empty=True),
    "typical": items(None, (Mapping,), "{ metric, value, system, dataset, source } tables",
                     "published values it quotes", empty=True),
    "notes": names(None, "notes shown under its table; one text is a list of one",
                   single=True, empty=True),
})  # fmt: skip
"""The keys of a profile's table in a TOML file: types checked, never coerced (``title =
1`` and ``metrics = 5`` are errors naming the file, the table and the key)."""

KEYS = tuple(PROFILE_TABLE.options)


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML file at ``path`` (an error names a missing file or the syntax error)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            table: dict[str, Any] = tomllib.load(fh)
            return table
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder; give a TOML file of [profiles.NAME]") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None


def profile_tables(data: Mapping[str, Any], path: Path) -> tuple[str, dict[str, Any]]:
    """``(prefix, {name: table})``: ``[tool.ranklens.profiles]`` in a pyproject.toml,
    ``[profiles]`` in any other file."""
    if path.name == "pyproject.toml":
        prefix = "tool.ranklens.profiles"
        tables = data.get("tool", {}).get("ranklens", {}).get("profiles", {})
    else:
        prefix = "profiles"
        tables = data.get("profiles", {})
        if not tables and data:
            raise InputError(
                f"{path}: no [profiles.NAME] table (found {', '.join(sorted(data))}); declare "
                "each profile as [profiles.NAME]"
            )
    if not isinstance(tables, Mapping):
        raise InputError(f"{path}: [{prefix}] must be a table of profiles")
    return prefix, dict(tables)


def parse_profiles(path: str | Path, resolve: Callable[[str], Profile | None]) -> list[Profile]:
    """The profiles declared in the TOML file at ``path``, in order; ``resolve(name)``
    finds a profile to extend (the file's earlier tables come first)."""
    path = Path(path)
    prefix, tables = profile_tables(read_toml(path), path)
    out: dict[str, Profile] = {}
    for name, table in tables.items():
        where = f"{path}: [{prefix}.{name}]"
        if not isinstance(table, Mapping):
            raise InputError(f"{where}: must be a table")
        unknown = sorted(set(table) - set(KEYS))
        if unknown:
            near = closest(unknown[0], KEYS)
            hint = f"; did you mean {near!r}?" if near else ""
            raise InputError(
                f"{where}: unknown key(s) {', '.join(unknown)}{hint}; a profile takes "
                + ", ".join(KEYS)
            )
        table = PROFILE_TABLE.check(table, where=where)
        base_name = str(table.get("extends", name))
        base = out.get(base_name) if base_name != name else None
        if base is None:
            base = resolve(base_name)
        if "extends" in table and base is None:
            raise InputError(
                f"{where}: extends {base_name!r}, which is not a known profile (a profile of "
                "this file must be declared before the one that extends it)"
            )
        try:
            out[name] = _profile(name, table, base, f"{path}")
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    return list(out.values())


def _profile(name: str, table: Mapping[str, Any], base: Profile | None, origin: str) -> Profile:
    metrics = list(base.metrics) if base else []
    for item in table.get("metrics", []):
        use = _metric_use(item)
        metrics = [m for m in metrics if m.metric != use.metric] + [use]
    typical = list(base.typical) if base else []
    for item in table.get("typical", []):
        typical.append(from_fields(Typical, item))
    notes = tuple(base.notes if base else ()) + tuple(table.get("notes", []))
    profile = Profile(
        name,
        table.get("title", base.title if base else name),
        table.get("summary", base.summary if base else ""),
        metrics=tuple(metrics),
        targets=base.targets if base else (),
        typical=tuple(typical),
        origin=origin,
        notes=notes,
    )
    targets = table.get("targets", {})
    if not isinstance(targets, Mapping):
        raise InputError("targets must be a table of METRIC = value")
    overrides = {k: (None if v is False else v) for k, v in targets.items()}
    return replace(profile.with_targets(overrides, source=f"set in {origin}"), origin=origin)


def _metric_use(item: Any) -> MetricUse:
    if isinstance(item, str):
        return MetricUse(item)
    if isinstance(item, Mapping) and set(item) <= {"metric", "why"} and "metric" in item:
        return MetricUse(item["metric"], item.get("why", ""))
    raise InputError(f"a metric is a name or {{ metric = ..., why = ... }}, got {item!r}")
