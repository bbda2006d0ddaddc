"""A griffe extension for the docs site: the docstrings of ranklens are written for ``help()``
and doctest (reStructuredText roles, ``>>>`` examples); on the site each example becomes a
highlighted console block and each role its code span. Nothing in the code changes."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj|ref):`~?([^`]+)`")


def to_markdown(text: str) -> str:
    """``text`` with doctest runs fenced as ``pycon`` and RST roles as code spans."""
    out: list[str] = []
    block: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>") or (block and stripped and not _ends_example(block)):
            block.append(line)
            continue
        if block:
            out += ["```pycon", *_dedent(block), "```"]
            block = []
        out.append(line)
    if block:
        out += ["```pycon", *_dedent(block), "```"]
    return ROLE.sub(lambda m: f"`{m.group(1)}`", "\n".join(out))


def _ends_example(block: list[str]) -> bool:
    return False  # an example runs to the next blank line, as doctest reads it


def _dedent(lines: list[str]) -> list[str]:
    pad = min(len(x) - len(x.lstrip()) for x in lines if x.strip())
    return [x[pad:] for x in lines]


class DoctestFences(griffe.Extension):
    """Rewrites each docstring's value for Markdown (examples fenced, roles as code)."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
