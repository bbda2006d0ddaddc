"""Interning of string ids into integer codes that preserve the ids' sort order.

Codes are the rank of each id among the sorted distinct ids, so comparing codes compares
the ids by code point, which for UTF-8 is trec_eval's ``strcmp`` byte order. pyarrow's
hash-based dictionary encoding is used when it is installed; otherwise a dict does it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .errors import InputError


def _pyarrow() -> Any | None:
    try:
        import pyarrow
        import pyarrow.compute
    except ImportError:  # pragma: no cover - exercised when the extra is missing
        return None
    return pyarrow


def as_id_array(values: Iterable[Any], what: str) -> np.ndarray:
    """Return ``values`` as an object array of ``str``; integers are converted with ``str``.

    Anything else (None, floats, bytes, empty strings) is an :class:`InputError` naming
    ``what`` (e.g. ``"document id in query 'q1'"``).
    """
    if isinstance(values, np.ndarray) and values.dtype == object:
        arr = values
    elif isinstance(values, np.ndarray) and values.dtype.kind in "USiu":
        arr = values.astype(str).astype(object)
    else:
        seq = values if isinstance(values, Sequence) else list(values)
        arr = np.empty(len(seq), dtype=object)
        arr[:] = seq
    if len(arr) == 0:
        return arr
    kinds = set(map(type, arr))
    if kinds == {str}:
        bad = np.flatnonzero(arr == "")
        if len(bad):
            raise InputError(f"empty {what} at position {int(bad[0])}")
        return arr
    out = np.empty(len(arr), dtype=object)
    for i, v in enumerate(arr):
        if isinstance(v, str):
            if v == "":
                raise InputError(f"empty {what} at position {i}")
            out[i] = v
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[i] = str(int(v))
        else:
            raise InputError(f"{what} must be a string or an integer, got {v!r} at position {i}")
    return out


def encode(values: np.ndarray | Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Intern ``values`` (strings) into ``(codes, vocab)``.

    ``vocab`` is the sorted array of distinct values (object dtype) and
    ``vocab[codes] == values``; ``codes`` are int64.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    pa = _pyarrow()
    if pa is not None and not _is_arrow(values):
        values = pa.array(values, type=pa.string())
    if pa is not None and _is_arrow(values):
        return encode_arrow(values)
    table: dict[str, int] = {}
    setdefault = table.setdefault
    raw = np.fromiter((setdefault(v, len(table)) for v in values), dtype=np.int64, count=n)
    keys = np.empty(len(table), dtype=object)
    keys[:] = list(table)
    return _sort_vocab(raw, keys)


def _is_arrow(values: Any) -> bool:
    mod = type(values).__module__
    return mod.startswith("pyarrow")


def encode_arrow(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode` for a pyarrow string array or chunked array."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    enc = values.dictionary_encode()
    raw = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    keys = enc.dictionary.to_numpy(zero_copy_only=False).astype(object, copy=False)
    return _sort_vocab(raw, keys)


def _sort_vocab(raw: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys.astype(str), kind="stable") if len(keys) else np.zeros(0, np.int64)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank[raw], keys[order]


def translate(src_vocab: np.ndarray, dst_vocab: np.ndarray) -> np.ndarray:
    """For each id of ``src_vocab``, its code in ``dst_vocab`` or -1 where absent."""
    if len(src_vocab) == 0:
        return np.zeros(0, dtype=np.int64)
    if len(dst_vocab) == 0:
        return np.full(len(src_vocab), -1, dtype=np.int64)
    if len(src_vocab) * 16 < len(dst_vocab):
        # Few ids to look up in a large sorted vocabulary: bisection.
        pos = np.minimum(np.searchsorted(dst_vocab, src_vocab), len(dst_vocab) - 1)
        return np.where(dst_vocab[pos] == src_vocab, pos, -1).astype(np.int64)
    table = {v: i for i, v in enumerate(dst_vocab)}
    get = table.get
    return np.fromiter((get(v, -1) for v in src_vocab), dtype=np.int64, count=len(src_vocab))
