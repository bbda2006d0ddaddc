"""The registry of report renderers: a name (``"markdown"``, ``"html"``...) → a function
``fn(report, **options)``.

:class:`~ranklens.Report` renders itself through this table (``report.render("markdown")``,
``report.to_markdown()``), so the report knows no renderer module. The built-in renderers
(:mod:`ranklens.render`) and any other package's are found through the
``ranklens.renderers`` entry-point group; :func:`register_renderer` adds one at run time::

    import ranklens

    ranklens.register_renderer("plain", lambda report, **kw: "\\n".join(report.runs))
    report.render("plain")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InputError
from ..plugins import entry_point_table

ENTRY_POINT_GROUP = "ranklens.renderers"

Renderer = Callable[..., Any]

_RENDERERS: dict[str, Renderer] = {}


def register_renderer(name: str, fn: Renderer) -> Renderer:
    """Register ``fn(report, **options)`` under ``name`` (a later registration replaces an
    earlier one, so a project may restyle a built-in format)."""
    if not name or not callable(fn):
        raise InputError("register_renderer needs a name and a callable")
    _RENDERERS[name] = fn
    return fn


def get_renderer(name: str) -> Renderer:
    """The renderer called ``name``: registered at run time, else from an entry point."""
    fn = _RENDERERS.get(name)
    if fn is not None:
        return fn
    ep = entry_point_table(ENTRY_POINT_GROUP).get(name)
    if ep is None:
        raise InputError(
            f"no renderer named {name!r}; available: {', '.join(renderer_names()) or 'none'} "
            "(is ranklens installed, so that its entry points are visible?)"
        )
    fn = _RENDERERS[name] = ep.load()
    return fn


def renderer_names() -> list[str]:
    """Every renderer name available."""
    return sorted(set(_RENDERERS) | set(entry_point_table(ENTRY_POINT_GROUP)))
