"""Text from users, made safe to show: :func:`visible` (used by every output that prints
ids, names or messages: evaluation tables, reports, the CLI), :func:`clip` for text cut to
a width, and :func:`script_json` for data embedded in an HTML page."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

BIDI_CONTROLS = frozenset(
    [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C, 0x2028, 0x2029]
)
"""Characters that reorder or break displayed text: shown as ``<U+202E>`` marks."""


def visible(text: str) -> str:
    """``text`` with control characters shown as ``\\x1b``-style escapes and bidi controls
    and line separators as ``<U+202E>`` marks, so that a name can neither drive a terminal
    nor pretend to be another.

    >>> visible("run\\x1b[31m\\u202egnp.exe")
    'run\\\\x1b[31m<U+202E>gnp.exe'
    """
    if text.isascii() and text.isprintable():
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if o in BIDI_CONTROLS:
            out.append(f"<U+{o:04X}>")
        elif unicodedata.category(ch) == "Cc":
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def clip(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters, the last one an ellipsis when anything was cut."""
    return text if len(text) <= n else text[: n - 1] + "…"


def shown(value: Any, n: int = 60) -> str:
    """``repr(value)`` for an error message, cut to ``n`` characters (a 400-digit number
    or a long list is named, not printed whole).

    >>> shown(10**100, 12)
    '10000000000…'
    """
    return clip(repr(value), n)


def script_json(obj: Any) -> str:
    """``obj`` as JSON safe inside an HTML ``<script>`` element: ``<``, ``>``, ``&`` and the
    line separators U+2028/U+2029 written as ``\\uXXXX`` escapes (a string can then close
    no element and open no comment).

    >>> print(script_json({"q": "</script>"}))
    {"q": "\\u003c/script\\u003e"}
    """
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):  # fmt: skip
        text = text.replace(ch, esc)
    return text
