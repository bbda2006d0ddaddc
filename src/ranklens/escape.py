"""User text made safe for each output format, one function per format: every renderer
places names, metadata and query text through these and nothing else (a run named
``<img src=x onerror=alert(1)>``, ``=HYPERLINK(...)`` or ``[red]x[/red]`` shows as text
everywhere).

=================  ==========================================================================
format             function
=================  ==========================================================================
HTML (and SVG)     :func:`html`: text and attribute values (JSON inside ``<script>``:
                   :func:`ranklens.text.script_json`)
Markdown           :func:`markdown`: table cells, list items, inline text
LaTeX              :func:`latex`
CSV / TSV          :func:`csv_cell`: each cell (the data otherwise as it is)
terminal text      :func:`terminal`: what is printed as it is (``print``, a ``rich`` ``Text``)
rich markup        :func:`rich_markup`: text inside a string ``rich`` reads as markup
=================  ==========================================================================

Every function but :func:`csv_cell` first makes the text :func:`~ranklens.text.visible`:
control characters (ESC sequences, NUL; newlines inside a name) shown as ``\\x1b``-style
escapes and bidi controls as ``<U+202E>`` marks, so that a name can neither drive a
terminal nor pretend to be another (visible text stays as it is, so applying it twice
changes nothing). A CSV file is data: only what a spreadsheet would run is changed.

>>> markdown("a|b <i>"), html("<b>&"), latex("50% & $x_1$"), csv_cell("=1+1")
('a\\\\|b \\\\<i\\\\>', '&lt;b&gt;&amp;', '50\\\\% \\\\& \\\\$x\\\\_1\\\\$', "'=1+1")
>>> terminal("red\\x1b[31m [bold]x[/bold]"), rich_markup("[bold]x[/bold]")
('red\\\\x1b[31m [bold]x[/bold]', '\\\\[bold]x\\\\[/bold]')
"""

from __future__ import annotations

import html as _html
import math
import re

from .text import visible

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet runs as a formula at the start of a cell (OWASP's CSV injection)."""

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}
_MARKDOWN_SPECIAL = "\\|*_`[]<>~#&$!"
"""Characters backslash-escaped in Markdown (CommonMark escapes any ASCII punctuation):
tables' ``|``, emphasis, code, links and images, HTML and entities, strikethrough,
headings and GitHub's math."""
_MARKDOWN = re.compile("[" + re.escape(_MARKDOWN_SPECIAL) + "]")
_RICH_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
"""A ``rich`` markup tag and the backslashes before it (``rich.markup.escape``'s pattern)."""


def _shown(text: object) -> str:
    return visible(text if isinstance(text, str) else str(text))


def html(text: object) -> str:
    """Text and attribute values in HTML and SVG: visible, then ``& < > " '`` as
    entities."""
    return _html.escape(_shown(text), quote=True)


def markdown(text: object) -> str:
    """A Markdown table cell, list item or inline text: newlines as spaces, visible, then
    ``\\ | * _ ` [ ] < > ~ # & $ !`` backslash-escaped (no table cell split, no emphasis,
    code, link, image, HTML, entity, heading or math)."""
    out = str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return _MARKDOWN.sub(lambda m: "\\" + m.group(), visible(out))


def latex(text: object) -> str:
    """Text in LaTeX: visible, then the special characters as their commands."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in _shown(text))


def csv_cell(x: object) -> object:
    """A CSV or TSV cell: NaN empty; a text that a spreadsheet would run as a formula
    (starting with ``= + - @``, tab or CR, after any spaces) prefixed with ``'`` (OWASP's
    CSV injection advice); anything else as it is."""
    if isinstance(x, float) and math.isnan(x):
        return ""
    if isinstance(x, str) and x.lstrip(" ").startswith(FORMULA_START):
        return "'" + x
    return x


def terminal(text: object) -> str:
    """Text printed to a terminal as it is (``print``, a ``rich.text.Text``): visible, so
    ESC sequences and bidi controls show as escapes instead of acting. Text that ``rich``
    reads as markup takes :func:`rich_markup`."""
    return _shown(text)


def rich_markup(text: object) -> str:
    """Text inside a string that ``rich`` reads as markup (``console.print(str)``, a table
    cell given as a string, a progress bar's description): :func:`terminal`, then every
    markup tag escaped as ``rich.markup.escape`` does (``[bold]`` prints as ``[bold]``)."""
    out = _RICH_TAG.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), terminal(text))
    return out + "\\" if out.endswith("\\") and not out.endswith("\\\\") else out
