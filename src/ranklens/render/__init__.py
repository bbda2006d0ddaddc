"""The render floor: a :class:`~ranklens.Report` as a terminal table (:mod:`.terminal`),
Markdown, CSV, LaTeX and pandas (:mod:`.tables`) or a self-contained HTML page
(:mod:`.html`, with its stylesheet and script in ``assets/``), all from the cells computed
once in :mod:`.table_cells`. Every piece of user text (names, ids, query texts, metadata,
titles, notes quoting them) is placed through the one function of its format in
:mod:`ranklens.escape` (HTML and SVG, Markdown, LaTeX, CSV cells, terminal text, rich
markup); data embedded in a page goes through :func:`ranklens.text.script_json`.

Each renderer is registered under a name in the ``ranklens.renderers`` entry-point group
(see the core's ``pyproject.toml``) and reached through
:func:`ranklens.comparison.get_renderer`; nothing below this floor imports it.
"""

from __future__ import annotations

from . import svg
from .html import asset, styled
from .table_cells import fmt, fmt_p

__all__ = ["asset", "fmt", "fmt_p", "styled", "svg"]
