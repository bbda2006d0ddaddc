"""The declaration of :func:`register_renderer`, whose module holds no table of its own:
the package exports it checked (``ranklens.register_renderer``)."""

from __future__ import annotations

from ..declared import declare, function, text
from .renderers import register_renderer as plain_register_renderer

REGISTER_RENDERER = declare("register_renderer", {
    "name": text(None, "the format's name (``text``, ``markdown``, or a new one)"),
    "fn": function("the renderer: fn(report, **options)"),
})  # fmt: skip

register_renderer = REGISTER_RENDERER.checks(plain_register_renderer)
