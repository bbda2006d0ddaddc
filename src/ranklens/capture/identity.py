"""What identifies a retriever in the run log: :func:`fingerprint`.

The run log refuses to resume with a retriever of another configuration, so the
configuration must see what makes two retrievers differ, not only their class or function
name. :func:`fingerprint` describes an object as plain JSON data, stable across processes:

* a function: its qualified name, a hash of its byte code and constants, its defaults and
  the values its closure captured (two closures over ``k=5`` and ``k=10`` differ);
* a ``functools.partial``: the function and the bound arguments;
* a bound method: the method and its instance;
* an object: its class and its attributes (``vars()``, or a pydantic model's fields),
  recursively to a few levels: an index's top-k, its store's size, a model's name;
* containers: their items (the first :data:`MAX_ITEMS`, and their length); numpy arrays:
  shape, dtype and a hash of their bytes; long strings and bytes: a hash;
* an object past the depth limit: its class, its model, index or collection name
  (:data:`IDENTITY_ATTRS`) and the sizes of the containers it holds.

Values that cannot be stable across processes are left out: memory addresses (no ``repr``
of arbitrary objects is used) and random identifiers (UUID-like strings become
``"<uuid>"``, so an index rebuilt in a new process still resumes its log). ``name=`` and
``config=`` of :func:`ranklens.run_retriever` stay as overrides and additions.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import re
import types
from typing import Any

MAX_ITEMS = 64
"""Items of a container described one by one; the rest are counted."""

MAX_DEPTH = 4
"""Levels of object attributes described; deeper objects are named by their class."""

MAX_NODES = 4000
"""Values described in all; past this budget objects are named by their class only."""

IDENTITY_ATTRS = frozenset(
    {"model", "model_name", "model_id", "index_name", "collection_name", "table_name", "path"}
)
"""String attributes that name what an object past the depth limit stands for."""

_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_PRIMITIVE = (bool, int, float, type(None))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


_VOLATILE = re.compile(r"(0x)?[0-9a-f]{12,}|\d{9,}")


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def _code_digest(code: types.CodeType) -> str:
    consts = [_code_digest(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts]
    return _digest(code.co_code + repr((consts, code.co_names)).encode())


def fingerprint(obj: Any, depth: int = MAX_DEPTH) -> Any:
    """``obj`` described as JSON-able data that is equal for equally configured retrievers
    and differs where their configuration differs (see the module docstring)."""
    budget = [MAX_NODES]

    def fp(x: Any, d: int, seen: set[int]) -> Any:
        budget[0] -= 1
        return _fp(x, d if budget[0] > 0 else min(d, 0), seen, fp)

    return fp(obj, depth, set())


def state_digest(obj: Any, depth: int = MAX_DEPTH) -> str:
    """A short hash of :func:`fingerprint` (what run-log headers store). Framework
    adapters pass ``depth=1``: the retriever's own settings (top-k, filters, patterns) and
    the class and size of what it holds (its store, its index), because the internals of
    many indexes differ between processes for the same documents (token ids assigned in
    hash order)."""
    import json

    return _digest(json.dumps(fingerprint(obj, depth), sort_keys=True, default=str).encode())


def _fp(obj: Any, depth: int, seen: set[int], recurse: Any) -> Any:
    """One level of :func:`fingerprint`; ``recurse`` describes what ``obj`` holds (within
    the budget of :data:`MAX_NODES`)."""
    if isinstance(obj, _PRIMITIVE):
        return obj
    if isinstance(obj, str):
        if _UUID.match(obj):
            return "<uuid>"
        if _VOLATILE.search(obj):  # addresses and ids embedded in names
            obj = _VOLATILE.sub("<id>", obj)
        return obj if len(obj) <= 200 else {"str": len(obj), "sha256": _digest(obj.encode())}
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return {"bytes": len(obj), "sha256": _digest(bytes(obj))}
    if isinstance(obj, type):
        return {"type": _qualname(obj)}
    if isinstance(obj, types.ModuleType):
        return {"module": obj.__name__}
    if id(obj) in seen:
        return {"cycle": type(obj).__name__}
    seen = seen | {id(obj)}
    down = depth - 1
    if isinstance(obj, functools.partial):
        return {
            "partial": recurse(obj.func, depth, seen),
            "args": [recurse(a, down, seen) for a in obj.args],
            "keywords": {k: recurse(v, down, seen) for k, v in sorted(obj.keywords.items())},
        }
    if isinstance(obj, types.MethodType):
        return {
            "method": recurse(obj.__func__, depth, seen),
            "self": recurse(obj.__self__, down, seen),
        }
    if isinstance(obj, types.FunctionType):
        closure = obj.__closure__ or ()
        cells = []
        for cell in closure:
            try:
                cells.append(recurse(cell.cell_contents, down, seen))
            except ValueError:  # an empty cell
                cells.append(None)
        return {
            "function": _qualname(obj),
            "code": _code_digest(obj.__code__),
            "defaults": [recurse(d, down, seen) for d in obj.__defaults__ or ()],
            "kwdefaults": {
                k: recurse(v, down, seen) for k, v in (obj.__kwdefaults__ or {}).items()
            },
            "closure": cells,
        }
    if inspect.isbuiltin(obj) or isinstance(obj, (types.BuiltinMethodType,)):
        return {"builtin": _qualname(obj)}
    if type(obj).__module__ == "numpy" and hasattr(obj, "shape") and hasattr(obj, "tobytes"):
        if depth < 0:
            return {"ndarray": list(obj.shape), "dtype": str(obj.dtype)}
        data = obj.tobytes()
        return {"ndarray": list(obj.shape), "dtype": str(obj.dtype), "sha256": _digest(data)}
    if depth < 0:
        if isinstance(obj, (dict, list, tuple, set, frozenset)):
            return {"class": _qualname(type(obj)), "len": len(obj)}
        return _summary(obj)
    if isinstance(obj, dict):
        items = list(obj.items())
        out: dict[str, Any] = {
            str(k): recurse(v, down, seen) for k, v in items[:MAX_ITEMS] if not _private(k)
        }
        if len(items) > MAX_ITEMS:
            out["<len>"] = len(items)
        return out
    if isinstance(obj, (list, tuple, set, frozenset)):
        seq = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else list(obj)
        described = [recurse(x, down, seen) for x in seq[:MAX_ITEMS]]
        if len(seq) > MAX_ITEMS:
            described.append({"<len>": len(seq)})
        return described
    name = _qualname(type(obj))
    state = _state(obj) if depth > 0 else None
    if state is None:
        return _summary(obj)
    return {"class": name, "state": recurse(state, depth, seen)}


def _summary(obj: Any) -> dict[str, Any]:
    """An object past the depth limit: its class, its identity strings
    (:data:`IDENTITY_ATTRS`, such as a model or index name) and the sizes of the containers
    it holds (a store's documents)."""
    out: dict[str, Any] = {"class": _qualname(type(obj))}
    for k, v in (_state(obj) or {}).items():
        if isinstance(v, str) and k.lstrip("_") in IDENTITY_ATTRS:
            out[k] = fingerprint(v)
        elif isinstance(v, (dict, list, tuple, set, frozenset)) and not _private(k):
            out[f"len({k})"] = len(v)
    return out


def _private(key: Any) -> bool:
    return isinstance(key, str) and key.startswith("__")


def _state(obj: Any) -> dict[str, Any] | None:
    """An object's attributes: a pydantic model's fields, else ``vars()`` (and slots)."""
    fields = getattr(type(obj), "model_fields", None)
    if isinstance(fields, dict):
        state = {k: getattr(obj, k, None) for k in fields}
        private = getattr(obj, "__pydantic_private__", None)
        if isinstance(private, dict):
            state.update(private)
        return state
    state = {}
    with contextlib.suppress(TypeError):  # no __dict__
        state.update(vars(obj))
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if isinstance(slot, str) and slot not in state and hasattr(obj, slot):
                state[slot] = getattr(obj, slot)
    return state or None


def plain(value: Any) -> Any:
    """``value`` as plain JSON data for a run log's ``config=``: dict keys as strings,
    tuples as lists, sets sorted, numpy scalars and paths as their values, and anything
    else as its :func:`fingerprint`, so that any configuration a user writes is accepted
    and hashes the same in every process."""
    if isinstance(value, (*_PRIMITIVE, str)):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v) for v in value), key=repr)
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
        return value.item()  # a numpy scalar
    if isinstance(value, os.PathLike):
        return str(value)
    return fingerprint(value)
