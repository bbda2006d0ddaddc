"""A generator or judge named on the command line: ``offline`` (the offline stand-ins),
``module:name`` or ``path/to/file.py:name`` (a class is instantiated with no arguments)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path
from typing import Any

from ..errors import InputError


def load_callable(spec: str, offline: Any) -> Any:
    """The callable ``spec`` names (``offline`` gives ``offline``)."""
    if spec == "offline":
        return offline
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"{spec!r}: expected offline, module:name or path/to/file.py:name")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.exists():
            raise InputError(f"{spec!r}: no file {path}")
        loader = importlib.util.spec_from_file_location(path.stem, path)
        if loader is None or loader.loader is None:
            raise InputError(f"{spec!r}: {path} cannot be imported as a module")
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise InputError(f"{spec!r}: cannot import {module_name!r} ({exc})") from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise InputError(f"{spec!r}: {module_name!r} has no {attr!r}") from None
    obj = obj() if inspect.isclass(obj) else obj
    if not callable(obj):
        raise InputError(f"{spec!r} is not callable")
    return obj
