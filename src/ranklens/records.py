"""The one base of the typed records that replaced dicts (sweep rows, estimate rows,
snapshots' rows, ...): a record is read by attribute and ``to_dict()`` is its plain data
(JSON, the renderers). Reading it as a dict (``row["p95"]``, ``"p95" in row``,
``row.get("p95")``) still works for one release, with a ``DeprecationWarning`` naming the
attribute to read instead.

>>> from dataclasses import dataclass
>>> @dataclass
... class Row(DictReading):
...     p95: float
>>> Row(3.0).to_dict(), Row(3.0).p95
({'p95': 3.0}, 3.0)
"""

from __future__ import annotations

import warnings
from dataclasses import fields, is_dataclass
from typing import Any

from .settings import outside_stacklevel


class DictReading:
    """Dict-style reading of a record, deprecated: each read warns with the new spelling
    (``spelled(key)``: ``.key`` unless a record says otherwise)."""

    def to_dict(self) -> dict[str, Any]:
        """The record's fields as a dict, in their order (records with a layout of their
        own override this)."""
        if not is_dataclass(self):
            raise NotImplementedError
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def spelled(self, key: str) -> str:
        """How ``record[key]`` is read now."""
        return f".{key}"

    def _as_dict(self, key: object, how: str) -> dict[str, Any]:
        kind = type(self).__name__
        warnings.warn(
            f"{kind}{how} is deprecated: read {self.spelled(str(key))} (or .to_dict()[{key!r}])",
            DeprecationWarning,
            stacklevel=outside_stacklevel(),
        )
        return self.to_dict()

    def __getitem__(self, key: str) -> Any:
        return self._as_dict(key, f"[{key!r}]")[key]

    def __contains__(self, key: object) -> bool:
        return key in self._as_dict(key, f" ({key!r} in ...)")

    def get(self, key: str, default: Any = None) -> Any:
        """``to_dict().get(key, default)`` (deprecated: read the attribute)."""
        return self._as_dict(key, f".get({key!r})").get(key, default)
