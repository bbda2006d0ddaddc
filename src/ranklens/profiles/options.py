"""A kind of declared parameter that :mod:`ranklens.declared` lacks: a list of objects of
given types (a profile's metrics as names or :class:`~ranklens.MetricUse`, its targets as
:class:`~ranklens.Target`), checked like ``names`` (a lone text refused, never iterated by
character, unless ``single``: then a list of one; an item of another type refused)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..declared import Option


@dataclass(frozen=True)
class ItemsOption(Option):
    """A ``names``-kind option whose items may be any of ``types`` (texts non-empty)."""

    types: tuple[type, ...] = (str,)
    words: str = ""

    def _own_words(self) -> str:
        what = "a list" if self.empty else "a non-empty list"
        lone = " (or one name)" if self.single else ""
        return f"{what} of {self.words or 'texts'}{lone}"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, str):
            if self.single and str in self.types and value.strip():
                return True, [value]
            return False, None
        if not isinstance(value, Iterable) or isinstance(value, (bytes, Mapping)):
            return False, None
        items = list(value)
        if not items and not self.empty:
            return False, None
        for item in items:
            if not isinstance(item, self.types) or (isinstance(item, str) and not item.strip()):
                return False, None
            if isinstance(item, bool) and bool not in self.types:  # True is not a grade
                return False, None
        return (self.check is None or self.check(items)), items


def items(default: Any, types: tuple[type, ...], words: str, description: str = "",
          **more: Any) -> ItemsOption:  # fmt: skip
    """A list whose items are instances of ``types`` (``words``: them, for the message)."""
    return ItemsOption("names", default, description, types=types, words=words, **more)
