"""UTF-8 ids as bytes, vectorised over rows: Python strings packed into one buffer, ids
read as 8-byte words, and a 64-bit hash of each id (the pieces :class:`~.ids.DocIds`
stands on; see that module for why ids are kept as bytes)."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import native as compiled

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
PAD = 8
"""Zero bytes after a packed body's last id (8-byte words are read unaligned)."""
_TAIL = "\0" * PAD
"""Joined after the last id by :func:`pack_strings`: the padding, encoded with it."""
SURROGATES = "surrogatepass"
"""How an id holding a lone surrogate (a Python string no UTF-8 text can hold, as
``os.fsdecode`` makes of broken bytes) is packed: as its code point's three bytes, so it is
read as on every other path (bytes order is still code point order) instead of failing."""
BYTE_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
HASH_EXACT_BYTES = 8
"""Ids of equal byte length up to this many bytes never share a hash: for them
:func:`hash_slices` is a chain of bijections of one 64-bit word (xor with a constant of
the length, multiplications by odd constants, xor-shifts), so equal hashes mean equal ids."""
HASH_PART = 1 << 20
"""Ids hashed in one part at most; more are split over :data:`HASH_THREADS` threads."""
HASH_THREADS = 2
FIXED_MAX = 64
"""Ids up to this many bytes are compared as fixed-width numpy bytes; longer ones in
Python."""


def pack_strings(strings: Iterable[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool, int]:
    """``(body, start, length, nul, end)`` of Python strings packed as UTF-8 (the arguments
    of :meth:`~.ids.DocIds.slices`).

    The strings are joined with newlines, the last followed by :data:`PAD` zero bytes,
    and encoded once (one copy of the text); the newline bytes then mark the boundaries,
    unless some string holds a newline itself (then there are more newline bytes than
    boundaries and each string is encoded on its own)."""
    items: list[str]
    if isinstance(strings, np.ndarray):
        items = strings.tolist()
    elif isinstance(strings, list):
        items = strings
    else:
        items = list(strings)
    n = len(items)
    items.append(_TAIL)  # the newline after the last id, then the padding
    try:
        joined = "\n".join(items).encode("utf-8", SURROGATES)
    finally:
        items.pop()
    got = _split(joined, n)
    if got is None:  # a string holds a newline
        enc = [s.encode("utf-8", SURROGATES) for s in items]
        length = np.fromiter(map(len, enc), dtype=np.int32, count=n)
        start = np.zeros(n, dtype=np.int64)
        np.cumsum(length[:-1], out=start[1:])
        joined = b"".join(enc) + bytes(PAD)
        got = start, length
    total = len(joined) - PAD
    return np.frombuffer(joined, np.uint8), *got, joined.find(b"\0", 0, total) >= 0, total


def pack_groups(
    groups: Iterable[Iterable[str]], n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool, int] | None:
    """:func:`pack_strings` of the strings of non-empty ``groups`` one after another, ``n``
    in all: each group is joined while its strings are in the cache, then the groups.
    None when some string holds a newline."""
    parts = list(map("\n".join, groups))
    parts.append(_TAIL)
    joined = "\n".join(parts).encode("utf-8", SURROGATES)
    del parts
    got = _split(joined, n)
    if got is None:
        return None
    total = len(joined) - PAD
    return np.frombuffer(joined, np.uint8), *got, joined.find(b"\0", 0, total) >= 0, total


def _split(joined: bytes, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(start, length)`` of ``n`` ids ended by newlines in ``joined`` (then the padding),
    or None when there are more newlines than ids."""
    body = np.frombuffer(joined, dtype=np.uint8)
    ends = np.flatnonzero(body[: len(joined) - PAD] == 10)
    if len(ends) != n:
        return None
    start = np.zeros(n, dtype=np.int64)
    start[1:] = ends[:-1] + 1
    return start, (ends - start).astype(np.int32)


def words_view(body: np.ndarray) -> np.ndarray:
    """``words[i]``: the 8 bytes of ``body`` from byte ``i`` as a little-endian uint64
    (unaligned loads; ``body`` ends in :data:`PAD` zero bytes)."""
    words: np.ndarray = np.ndarray((len(body) - 7,), dtype="<u8", buffer=body, strides=(1,))
    return words


def masked_words(v: np.ndarray, rem: np.ndarray) -> np.ndarray:
    """The first ``rem`` bytes (at most 8; none when ``rem <= 0``) of each little-endian
    word ``v``, the rest zeroed (in place when ``v`` is a fresh array)."""
    v &= BYTE_MASKS[np.clip(rem, 0, 8)]
    return v


def fixed_words(body: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The byte strings ``body[start:start + length]`` as rows of little-endian 8-byte
    words, zero past each string's end: a ``(rows, ceil(longest / 8))`` uint64 matrix (at
    least one column), read one unaligned gather per column."""
    n_words = max(-(-int(length.max()) // 8), 1) if len(length) else 1
    words = words_view(body)
    last = len(words) - 1
    out = np.empty((len(start), n_words), dtype="<u8")
    for k in range(n_words):
        out[:, k] = masked_words(words[np.minimum(start + 8 * k, last)], length - 8 * k)
    return out


def gather_packed(
    body: np.ndarray, start: np.ndarray, length: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The byte strings ``body[start:start + length]`` packed: ``(offsets, body)``
    (``body`` ends in :data:`PAD` zero bytes). Short strings are moved 8 bytes at a time."""
    n = len(start)
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(length, out=off[1:])
    total = int(off[-1])
    out = np.zeros(total + PAD, dtype=np.uint8)
    longest = int(length.max()) if n else 0
    if 0 < longest <= FIXED_MAX:
        mat = fixed_words(body, start, length).view(np.uint8).reshape(n, -1)
        out[:total] = mat[np.arange(mat.shape[1]) < length[:, None]]
    elif total:
        at = np.repeat(start - off[:-1], length)
        at += np.arange(total)
        out[:total] = body[at]
    return off, out


def fixed_bytes(body: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """The ids as fixed-width numpy bytes (``S`` dtype, zero padded: sorting and comparing
    them is byte order), or None when the longest is over :data:`FIXED_MAX` bytes."""
    if len(length) and int(length.max()) > FIXED_MAX:
        return None
    words = fixed_words(body, start, length)
    return words.view(f"S{8 * words.shape[1]}").ravel()


def hash_slices(body: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """A 64-bit hash (uint64) of each id ``body[start:start + length]`` (see
    :meth:`~.ids.DocIds.slices`).

    Vectorised over rows: the bytes are read eight at a time (one gather per 8-byte word of
    the longest id), mixed with a multiply-xorshift and finished with splitmix64's mixer.
    Large inputs are hashed in :data:`HASH_THREADS` parts at once (numpy releases the GIL).
    With the compiled helpers the same hash is computed in C, one id after another (tested
    equal, bit for bit, to this numpy one).
    """
    n = len(length)
    native = compiled.NATIVE
    usable = body.dtype == np.uint8 and body.flags.c_contiguous
    if native is not None and hasattr(native, "pack_hash") and n and usable:
        got = native.pack_hash(body, np.ascontiguousarray(start, dtype=np.int64),
                               np.ascontiguousarray(length, dtype=np.int64), False)  # fmt: skip
        if got is not None:  # the same hash in C, one pass, the GIL released
            hashes: np.ndarray = np.frombuffer(got[1], dtype=np.uint64).copy()
            return hashes
    if n < HASH_PART:
        return _hash_part(body, start, length)
    out = np.empty(n, dtype=np.uint64)
    cuts = np.linspace(0, n, HASH_THREADS + 1).astype(np.int64).tolist()

    def part(i: int) -> None:
        a, b = cuts[i], cuts[i + 1]
        out[a:b] = _hash_part(body, start[a:b], length[a:b])

    with ThreadPoolExecutor(HASH_THREADS) as pool:
        list(pool.map(part, range(HASH_THREADS)))
    return out


def _hash_part(body: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    words = words_view(body)
    with np.errstate(over="ignore"):
        h = length.astype(np.uint64)
        h *= _M1
        longest = int(length.max()) if len(length) else 0
        # round w mixes in bytes w..w+7 of the ids longer than w (so a hash never depends
        # on the other rows)
        rows = None  # all rows, for the first word
        for w in range(0, max(longest, 1), 8):
            if w:
                rows = np.flatnonzero(length > w)
                if not len(rows):
                    break
            st, rem = (start, length) if rows is None else (start[rows] + w, length[rows] - w)
            v = words[st]
            v &= BYTE_MASKS[np.minimum(rem, 8)]  # rem >= 1 here
            x = h if rows is None else h[rows]
            x ^= v
            del v
            x *= _M2
            x ^= x >> np.uint64(31)
            if rows is not None:
                h[rows] = x
        h ^= h >> np.uint64(30)
        h *= _M3
        h ^= h >> np.uint64(31)
    return h
