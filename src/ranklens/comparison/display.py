"""Strings from users made visible before any renderer shows them.

Run names, query ids and texts, dataset names and error messages come from users (or from a
loaded report file). Before a report is drawn in any medium, :func:`display_copy` passes
every string through :func:`visible`: control characters (ESC sequences that would drive a
terminal, NUL, newlines inside a name) become ``\\x1b``-style escapes, and the Unicode bidi
controls that reorder text (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) and the
line and paragraph separators become ``<U+202E>``-style marks, so a name cannot pretend to
be another. Each renderer then escapes for its medium through the one function of that
format in :mod:`ranklens.escape` (HTML, Markdown, LaTeX, terminal text, rich markup, CSV
formulas); pandas and JSON output keep the data as it is.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from ..text import visible

D = TypeVar("D", bound="Displayed")


class Displayed(Protocol):
    """What :func:`display_copy` copies: an object that is its ``to_dict()`` and is made
    again by ``from_dict`` (a :class:`~ranklens.Report`)."""

    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls: type[D], data: dict[str, Any]) -> D: ...


RAW_FORMATS = frozenset({"pandas"})
"""Renderers that receive the data as it is (not display text)."""


def _shown(x: Any) -> Any:
    if isinstance(x, str):
        return visible(x)
    if isinstance(x, dict):
        return {visible(k) if isinstance(k, str) else k: _shown(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_shown(v) for v in x]
    return x


OFFSET_TEXTS = ("pieces", "own")
"""The drill-down's texts addressed by character offsets (span labels: the documents'
pieces and the chunks' own texts, :mod:`.spandrill`): kept as they are, since an escape
would shift every offset after it; the page's script shows them as text and marks control
and bidi characters itself."""


def display_copy(report: D) -> D:
    """A copy of ``report`` with every string made :func:`visible` (names stay distinct:
    the escapes are reversible), but the drill-down's :data:`OFFSET_TEXTS`."""
    data = report.to_dict()
    md = data.get("metadata")
    drill = md.get("drilldown") if isinstance(md, dict) else None
    kept: dict[str, Any] = {}
    if isinstance(md, dict) and isinstance(drill, dict) and any(k in drill for k in OFFSET_TEXTS):
        kept = {k: drill[k] for k in OFFSET_TEXTS if k in drill}
        rest = {k: v for k, v in drill.items() if k not in kept}
        data = {**data, "metadata": {**md, "drilldown": rest}}  # the report's own untouched
    shown = _shown(data)
    if kept:
        shown["metadata"]["drilldown"].update(kept)
        data["metadata"]["drilldown"] = {**data["metadata"]["drilldown"], **kept}
    if shown == data:
        return report
    return type(report).from_dict(shown)
