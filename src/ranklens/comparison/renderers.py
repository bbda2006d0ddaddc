"""The registry of report renderers: a name (``"markdown"``, ``"html"``...) → a function
``fn(report, **options)``.

:class:`~ranklens.Report` renders itself through this table (``report.render("markdown")``,
``report.to_markdown()``), so the report knows no renderer module. The built-in renderers
(:mod:`ranklens.render`) and any other package's are found through the
``ranklens.renderers`` entry-point group; :func:`register_renderer` adds one at run time::

    import ranklens

    ranklens.register_renderer("plain", lambda report, **kw: "\\n".join(report.runs))
    report.render("plain")

A renderer's own signature is its contract (``to_markdown(report, digits=4,
details=False) -> str``), so the registry holds :data:`Renderer`, any callable; what a
caller that expects text gets is checked once by :func:`render_text`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..declared import declare, function, text
from ..errors import InputError
from ..plugins import entry_point_table

ENTRY_POINT_GROUP = "ranklens.renderers"

Renderer = Callable[..., Any]
"""``fn(obj, **options)``: a report (or a gate's result, a sweep's ``to_dict()``, ...) and
the renderer's own options; what it returns is the format's (text, a data frame, a rich
table, a run id)."""

R = TypeVar("R", bound=Renderer)

_RENDERERS: dict[str, Renderer] = {}


REGISTER_RENDERER = declare("register_renderer", {
    "name": text(None, "the format's name (``text``, ``markdown``, or a new one)"),
    "fn": function("the renderer: fn(report, **options)"),
})  # fmt: skip


@REGISTER_RENDERER.checks
def register_renderer(name: str, fn: R) -> R:
    """Register ``fn(report, **options)`` under ``name`` (a later registration replaces an
    earlier one, so a project may restyle a built-in format); returns ``fn`` as it is."""
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
    loaded: Renderer = ep.load()
    _RENDERERS[name] = loaded
    return loaded


def render_text(name: str, obj: object, **options: Any) -> str:
    """``get_renderer(name)(obj, **options)`` for a format that is text (Markdown, HTML,
    plain text): the result is a ``str``, or an :class:`~ranklens.errors.InputError`
    naming the renderer and what it returned instead."""
    out = get_renderer(name)(obj, **options)
    if not isinstance(out, str):
        raise InputError(
            f"renderer {name!r} returned {type(out).__name__}, not text (a str); "
            "register_renderer(name, fn) with fn returning a str"
        )
    return out


def renderer_names() -> list[str]:
    """Every renderer name available."""
    return sorted(set(_RENDERERS) | set(entry_point_table(ENTRY_POINT_GROUP)))
