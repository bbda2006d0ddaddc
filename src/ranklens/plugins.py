"""Entry points of installed packages, read once per group: how a lower floor reaches what a
higher floor or another package provides (renderers, framework adapters) without importing
it."""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, entry_points


@cache
def entry_point_table(group: str) -> dict[str, EntryPoint]:
    """``{name: entry point}`` of ``group`` (the first of a repeated name wins)."""
    table: dict[str, EntryPoint] = {}
    for ep in entry_points(group=group):
        table.setdefault(ep.name, ep)
    return table
