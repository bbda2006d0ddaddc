"""User text made safe for each output format, one function per format: every renderer
places names, metadata and query text through these and nothing else (a run named
``<img src=x onerror=alert(1)>`` or ``=HYPERLINK(...)`` shows as text everywhere).

>>> markdown("a|b <i>"), html("<b>&"), latex("50% & $x_1$"), csv_cell("=1+1")
('a\\\\|b \\\\<i\\\\>', '&lt;b&gt;&amp;', '50\\\\% \\\\& \\\\$x\\\\_1\\\\$', "'=1+1")
>>> terminal("red\\x1b[31m [bold]x[/bold]")
'red\\\\x1b\\\\[31m \\\\[bold]x\\\\[/bold]'
"""

from __future__ import annotations

import html as _html
import math
import re
from typing import Any

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
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def html(text: Any) -> str:
    """Text and attribute values in HTML (``& < > " '`` as entities)."""
    return _html.escape(str(text), quote=True)


def markdown(text: Any) -> str:
    """A Markdown table cell or inline text: backslash-escaped ``|``, emphasis, code,
    link and HTML characters; newlines as spaces."""
    out = str(text).replace("\\", "\\\\").replace("|", "\\|")
    out = out.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    for ch in "*_`[]<>":
        out = out.replace(ch, "\\" + ch)
    return out


def latex(text: Any) -> str:
    """Text in LaTeX: the special characters as their commands."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def csv_cell(x: Any) -> Any:
    """A CSV cell: NaN empty; a text that a spreadsheet would run as a formula (starting
    with ``= + - @``, tab or CR) prefixed with ``'`` (OWASP's CSV injection advice)."""
    if isinstance(x, float) and math.isnan(x):
        return ""
    if isinstance(x, str) and x.startswith(FORMULA_START):
        return "'" + x
    return x


def terminal(text: Any) -> str:
    """Text for the terminal: control characters (ANSI escapes among them) shown as
    ``\\xNN`` instead of acting, rich's markup brackets escaped."""
    out = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
    return out.replace("[", "\\[")
