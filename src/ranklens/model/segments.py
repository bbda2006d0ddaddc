"""Vectorised helpers over ragged per-query arrays stored flat with offsets (CSR layout).

``off`` has one entry more than there are queries; query ``i`` owns ``x[off[i]:off[i+1]]``.
"""

from __future__ import annotations

import numpy as np


def lengths(off: np.ndarray) -> np.ndarray:
    """Number of entries of each segment."""
    return np.diff(off)


def seg_sum(x: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Sum of each segment (0 for an empty one), summed left to right like a C loop."""
    n = len(off) - 1
    out = np.zeros(n, dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    if len(x) == 0 or n == 0:
        return out
    starts = off[:-1]
    nonempty = off[1:] > starts
    if nonempty.any():
        out[nonempty] = np.add.reduceat(x, starts[nonempty])
    return out


def seg_positions(off: np.ndarray) -> np.ndarray:
    """0-based position of every flat entry within its segment."""
    total = int(off[-1]) if len(off) else 0
    starts = np.repeat(off[:-1], lengths(off))
    out: np.ndarray = np.arange(total, dtype=np.int64) - starts
    return out


def seg_cumsum(x: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Running sum that restarts at every segment (exact for integer input)."""
    c = np.cumsum(x)
    if len(c) == 0:
        return c
    lens = lengths(off)
    base = np.concatenate(([0], c))[off[:-1]]
    out: np.ndarray = c - np.repeat(base, lens)
    return out


def seg_cumsum_exact(x: np.ndarray, off: np.ndarray) -> np.ndarray:
    """:func:`seg_cumsum` for floats, each segment summed on its own: a segment's values do
    not depend on the segments before it (a global running sum minus a base rounds with
    whatever came first). One vectorised step per position of the longest segment."""
    out = np.array(x, dtype=np.float64, copy=True)
    lens = lengths(off)
    if len(out) == 0:
        return out
    starts = off[:-1]
    for k in range(1, int(lens.max())):
        alive = lens > k
        at = starts[alive] + k
        out[at] += out[at - 1]
    return out


def seg_reverse_cummax(x: np.ndarray, off: np.ndarray, block: int = 1 << 22) -> np.ndarray:
    """``out[i] = max(x[i:end_of_segment])`` within each segment, computed exactly.

    Segments are laid into padded rows (in blocks of about ``block`` cells) and a reversed
    running maximum runs along each row.
    """
    out = np.empty(len(x), dtype=np.float64)
    lens = lengths(off)
    n = len(lens)
    i = 0
    while i < n:
        width = 1
        j = i
        while j < n and (j - i + 1) * max(width, int(lens[j])) <= max(block, int(lens[j])):
            width = max(width, int(lens[j]))
            j += 1
        rows = lens[i:j]
        pad = np.full((j - i, width), -np.inf)
        col = seg_positions(off[i : j + 1] - off[i])
        row = np.repeat(np.arange(j - i), rows)
        seg = slice(int(off[i]), int(off[j]))
        pad[row, col] = x[seg]
        acc = np.maximum.accumulate(pad[:, ::-1], axis=1)[:, ::-1]
        out[seg] = acc[row, col]
        i = j
    return out


def sorted_with_rows(key: np.ndarray, grouped: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted keys, row of each)``, ties kept in row order.

    When key and row index fit in 63 bits together they are packed into one int64 and
    sorted with a plain ``np.sort``, several times faster than ``argsort`` on 10^7 rows.
    The packed keys are distinct, so any sort gives the same order: ``grouped`` (the keys
    already in order but for short stretches, as rows grouped by query and ranked within
    each) picks the merge sort, which finds the ordered stretches (about 5x faster there,
    20% slower on keys in random order)."""
    n = len(key)
    if n == 0:
        return key, np.zeros(0, dtype=np.int64)
    ibits = max(int(n).bit_length(), 1)
    kmax = int(key.max())
    if kmax.bit_length() + ibits <= 63:
        packed = key << ibits
        packed |= np.arange(n, dtype=np.int64)
        packed.sort(kind="stable" if grouped else None)
        rows = packed & ((1 << ibits) - 1)
        packed >>= ibits  # in place: the sorted keys
        return packed, rows
    o = np.argsort(key, kind="stable")
    return key[o], o


def order_by(primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """Stable permutation sorting rows by ``(primary, secondary)``, both non-negative
    integers: one packed-integer sort where both fit in 62 bits, else ``np.lexsort``."""
    if len(primary) == 0:
        return np.zeros(0, dtype=np.int64)
    sbits = max(int(secondary.max()).bit_length(), 1)
    if int(primary.max()).bit_length() + sbits <= 62:
        key = primary.astype(np.int64) << sbits
        key |= secondary
        grouped = len(primary) > 1 and bool((primary[1:] >= primary[:-1]).all())
        return sorted_with_rows(key, grouped)[1]
    return np.lexsort((secondary, primary))


def count_top(
    q: np.ndarray, rank: np.ndarray, n_q: int, k: int | None, weights: np.ndarray | None = None
) -> np.ndarray:
    """Per query, the number (or weighted sum) of entries ranked within the top k."""
    if k is not None:
        keep = rank <= k
        q = q[keep]
        if weights is not None:
            weights = weights[keep]
    out = np.bincount(q, weights=weights, minlength=n_q)
    return out.astype(np.float64)


def run_starts(*keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the entries that begin a new run of equal values: ``True`` at 0 and
    wherever any of ``keys`` (equal-length arrays, read together) differs from the entry
    before. The one place the ``x[1:] != x[:-1]`` idiom lives."""
    n = len(keys[0])
    new = np.ones(n, dtype=bool)
    if n > 1:
        diff = keys[0][1:] != keys[0][:-1]
        for k in keys[1:]:
            diff |= k[1:] != k[:-1]
        new[1:] = diff
    return new


def run_start_index(*keys: np.ndarray) -> np.ndarray:
    """Indices where a new run of equal ``keys`` begins (see :func:`run_starts`)."""
    return np.flatnonzero(run_starts(*keys))


def repeats(*keys: np.ndarray) -> np.ndarray:
    """Boolean mask, one shorter than ``keys``: entry ``i`` is True when entry ``i + 1``
    equals entry ``i`` in every key (the complement of :func:`run_starts` without its
    first entry)."""
    return ~run_starts(*keys)[1:]


def seg_running_count(q_sorted: np.ndarray) -> np.ndarray:
    """For a sorted array of query indices, the 1-based position of each entry in its run."""
    n = len(q_sorted)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = run_starts(q_sorted)
    idx = np.arange(n)
    first = np.maximum.accumulate(np.where(starts, idx, 0))
    return idx - first + 1


def gather_ranges(first: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The rows ``first[i] .. first[i] + sizes[i] - 1`` of every range ``i``, one range
    after another (int64)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    out: np.ndarray = np.repeat(np.asarray(first, dtype=np.int64) - np.cumsum(sizes) + sizes,
                                sizes) + np.arange(int(sizes.sum()), dtype=np.int64)  # fmt: skip
    return out


def blocks_in_order(key: np.ndarray) -> np.ndarray | None:
    """The rows of ``key`` (e.g. query codes) with its blocks of equal keys put in key
    order, each block's rows kept in order: a stable sort by key, in one gather. None when
    some key's rows form more than one block (then sort)."""
    starts = run_start_index(key)
    block_key = key[starts]
    order = np.argsort(block_key, kind="stable")
    if len(order) > 1 and bool((block_key[order][1:] == block_key[order][:-1]).any()):
        return None
    sizes = np.diff(np.append(starts, len(key)))[order]
    return gather_ranges(starts[order], sizes)
