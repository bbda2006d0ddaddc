"""Document ids, one per row: codes into a sorted vocabulary, or the strings a file reader
parsed, kept as they are until something needs more.

Real runs draw their documents from corpora of millions (an MS MARCO run of 100k queries x
100 holds over a million distinct ids), so interning every id — hashing it into a
dictionary, making a Python string of it, sorting the vocabulary — would cost more than
everything else together. A :class:`DocIds` built from parsed strings therefore offers:

* :meth:`DocIds.hashes`: a 64-bit hash per row, computed with vectorised numpy over the
  strings' bytes (no Python loop over ids), for joining runs with labels. Equal ids hash
  equal; the join checks every match and every suspected repeat against the strings, so a
  collision can only send it to the exact path, never give a wrong number;
* :meth:`DocIds.strings` and :meth:`DocIds.desc_order`: the ids of a few rows, for checks,
  messages and breaking score ties (trec_eval compares ids only inside ties);
* :meth:`DocIds.codes`: the interned form ``(codes, sorted vocabulary)``, built on first use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .segments import order_by, run_starts, sorted_with_rows
from .vocab import arrow_take, arrow_to_numpy, encode_arrow, numpy_to_arrow, strings_to_arrow

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


class DocIds:
    """The document id of each row (see the module docstring)."""

    __slots__ = ("_arrow", "_codes", "_hash", "_vocab")

    def __init__(
        self, codes: np.ndarray | None = None, vocab: np.ndarray | None = None, arrow: Any = None
    ) -> None:
        self._codes = codes
        self._vocab = vocab
        self._arrow = arrow
        self._hash: np.ndarray | None = None

    @classmethod
    def from_arrow(cls, strings: Any) -> DocIds:
        """From a pyarrow string array or chunked array (no empty id, no null)."""
        return cls(arrow=strings)

    def __len__(self) -> int:
        return len(self._codes) if self._codes is not None else len(self._arrow)

    @property
    def interned(self) -> bool:
        """True when codes and vocabulary exist (then joins compare codes, exactly)."""
        return self._codes is not None

    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(code per row, sorted vocabulary)``; interned on first call."""
        if self._codes is None:
            codes, vocab = encode_arrow(self._arrow)
            self._codes, self._vocab = codes.astype(np.int32, copy=False), vocab
        return self._codes, self._vocab  # type: ignore[return-value]

    def take(self, rows: np.ndarray) -> DocIds:
        """The ids of ``rows``, in that order."""
        if self._codes is not None:
            return DocIds(self._codes[rows], self._vocab)
        return DocIds(arrow=arrow_take(self._arrow, rows))

    def arrow(self, rows: np.ndarray | None = None) -> Any:
        """The ids of ``rows`` (all rows when None) as a pyarrow string array."""
        import pyarrow as pa

        if self._arrow is not None:
            out = self._arrow if rows is None else arrow_take(self._arrow, rows)
            return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out
        codes = self._codes if rows is None else self._codes[rows]  # type: ignore[index]
        return strings_to_arrow(self._vocab[codes].tolist())  # type: ignore[index]

    def strings(self, rows: np.ndarray) -> list[str]:
        """The ids of ``rows`` as Python strings."""
        if self._codes is not None:
            return self._vocab[self._codes[rows]].tolist()  # type: ignore[index]
        return arrow_take(self._arrow, rows).to_pylist()

    def hashes(self) -> np.ndarray:
        """A 64-bit hash of each row's id (uint64; equal ids hash equal, whatever the form)."""
        if self._hash is None:
            if self._arrow is not None:
                self._hash = hash_strings(self._arrow)
            elif len(self._vocab) == 0:  # type: ignore[arg-type]
                self._hash = np.zeros(len(self._codes), dtype=np.uint64)  # type: ignore[arg-type]
            else:
                vocab_hash = hash_strings(strings_to_arrow(self._vocab.tolist()))  # type: ignore[union-attr]
                self._hash = vocab_hash[self._codes]
        return self._hash

    def desc_order(self, rows: np.ndarray, group: np.ndarray) -> np.ndarray:
        """Positions into ``rows`` sorting them by ``group`` (ascending, non-negative ints)
        and, within a group, by id descending in byte order (trec_eval's tie order)."""
        if self._codes is not None:
            dm = self._codes[rows].astype(np.int64)
            return order_by(group.astype(np.int64), int(dm.max()) - dm) if len(dm) else dm
        import pyarrow as pa
        import pyarrow.compute as pc

        g = numpy_to_arrow(np.asarray(group, dtype=np.int64))
        table = pa.Table.from_arrays([g, self.arrow(rows)], names=["g", "d"])
        order = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")])
        return arrow_to_numpy(order).astype(np.int64)

    def equal_rows(self, rows: np.ndarray, other: DocIds, other_rows: np.ndarray) -> bool:
        """True when ``self``'s ids at ``rows`` equal ``other``'s at ``other_rows``."""
        if len(rows) == 0:
            return True
        if self._codes is not None and other._codes is not None and self._vocab is other._vocab:
            return bool(np.array_equal(self._codes[rows], other._codes[other_rows]))
        import pyarrow.compute as pc

        return bool(pc.all(pc.equal(self.arrow(rows), other.arrow(other_rows))).as_py())


class HoldsDocIds:
    """``d`` and ``doc_ids`` for a model (:class:`~ranklens.Qrels`, :class:`~ranklens.Run`)
    that holds each row's document as a :class:`DocIds` named ``docs``."""

    __slots__ = ()
    docs: DocIds

    @property
    def d(self) -> np.ndarray:
        """Each row's document code into :attr:`doc_ids` (interned on first use)."""
        return self.docs.codes()[0]

    @property
    def doc_ids(self) -> np.ndarray:
        """The sorted distinct document ids (interned on first use)."""
        return self.docs.codes()[1]


def hash_strings(strings: Any) -> np.ndarray:
    """A 64-bit hash (uint64) of each string of a pyarrow string array or chunked array.

    Vectorised over rows: the bytes are read eight at a time (one gather per 8-byte word of
    the longest id), mixed with a multiply-xorshift and finished with splitmix64's mixer.
    """
    import pyarrow as pa

    chunks = strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]
    parts = [_hash_chunk(c) for c in chunks if len(c)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def _hash_chunk(arr: Any) -> np.ndarray:
    import pyarrow as pa

    wide = pa.types.is_large_string(arr.type)
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], dtype=np.int64 if wide else np.int32)
    off = off[arr.offset : arr.offset + len(arr) + 1]
    lo, hi = int(off[0]), int(off[-1])
    data = np.zeros(hi - lo + 16, dtype=np.uint8)
    if bufs[2] is not None and hi > lo:
        data[: hi - lo] = np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi]
    # words[i] = the 8 bytes starting at byte i (unaligned little-endian loads)
    words = np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    start = off[:-1].astype(np.int64)
    start -= lo
    length = np.diff(off).astype(np.int64)
    with np.errstate(over="ignore"):
        h = length.astype(np.uint64) * _M1
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
            short = rem < 8
            if short.any():
                bits = (np.minimum(rem, 7) * 8).astype(np.uint64)
                v = np.where(short, v & ((np.uint64(1) << bits) - np.uint64(1)), v)
            x = h if rows is None else h[rows]
            x ^= v
            x *= _M2
            x ^= x >> np.uint64(31)
            if rows is not None:
                h[rows] = x
        h ^= h >> np.uint64(30)
        h *= _M3
        h ^= h >> np.uint64(31)
    return h


def first_repeat(group: np.ndarray, docs: DocIds) -> tuple[int, int] | None:
    """Two rows ``(earlier, later)`` with the same ``group`` (non-negative ints, e.g. query
    codes) and the same id, or None when every (group, id) is unique. Exact: rows whose
    hashes agree are compared as strings."""
    n = len(group)
    if n < 2:
        return None
    if docs.interned:
        codes = docs.codes()[0].astype(np.int64)
        key = (group.astype(np.int64) << max(int(codes.max()).bit_length(), 1)) | codes
        if int(group.max()).bit_length() + max(int(codes.max()).bit_length(), 1) > 62:
            key = None
    else:
        key = None
    if key is None:
        hb = 63 - max(int(group.max()).bit_length(), 1) - max(int(n).bit_length(), 1)
        if hb < 16:  # too few bits left for a useful hash: intern
            return first_repeat(group, DocIds(*docs.codes()))
        h = (docs.hashes() >> np.uint64(64 - hb)).astype(np.int64)
        key = (group.astype(np.int64) << hb) | h
    skey, rows = sorted_with_rows(key)
    same = ~run_starts(skey)
    if not same.any():
        return None
    # runs of equal keys: compare their members' ids exactly (few rows)
    cand = np.flatnonzero(same | np.append(same[1:], False))
    cand_rows = np.sort(rows[cand])
    seen: dict[tuple[int, str], int] = {}
    for r, g, s in zip(cand_rows.tolist(), group[cand_rows].tolist(), docs.strings(cand_rows)):
        first = seen.setdefault((g, s), r)
        if first != r:
            return first, r
    return None
