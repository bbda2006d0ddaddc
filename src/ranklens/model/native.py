"""The optional compiled helpers (the ``ranklens-native`` package, ``_ranklens_native``): the
loops over millions of Python objects (a run's dicts, its ``(doc, score)`` pairs) done in C.
Every helper reads only what the numpy path reads the same way and gives None for anything
else, so the numbers are the same with them or without (``NATIVE`` is None then; the tests
run both ways)."""

from __future__ import annotations

from typing import Any

try:
    import _ranklens_native as _loaded
except ImportError:  # pragma: no cover - not built here: numpy alone
    _loaded = None

NATIVE: Any = _loaded
"""The compiled module, or None (set to None to use numpy alone)."""

if _loaded is not None and hasattr(_loaded, "set_number_types"):
    import numpy as np  # the helpers read numpy's scalars as numpy reads them into arrays

    _loaded.set_number_types(
        (np.float16, np.float32),  # float64 is a float: read as one
        tuple({np.dtype(c).type for c in "bhilqpBHILQP"}),  # every C integer type
    )
