"""Document ids, one per row: codes into a sorted vocabulary, or the UTF-8 bytes a file
reader parsed, kept packed as they are until something needs more.

Real runs draw their documents from corpora of millions (an MS MARCO run of 100k queries x
100 holds over a million distinct ids), so interning every id — hashing it into a
dictionary, making a Python string of it, sorting the vocabulary — would cost more than
everything else together. A :class:`DocIds` of packed bytes (``offsets``, ``body``: row
``i`` is ``body[offsets[i]:offsets[i + 1]]``, the layout of an Arrow string column, held in
numpy) therefore offers:

* :meth:`DocIds.hashes`: a 64-bit hash per row, computed with vectorised numpy over the
  bytes (no Python loop over ids), for joining runs with labels. Equal ids hash equal in
  every form; the join checks every match and every suspected repeat against the bytes,
  so a collision can only send it to the exact path, never give a wrong number;
* :meth:`DocIds.strings`, :meth:`DocIds.desc_order`, :meth:`DocIds.equal_rows`: the ids of
  some rows, for checks, messages and breaking score ties (trec_eval compares ids only
  inside ties);
* :meth:`DocIds.codes`: the interned form ``(codes, sorted vocabulary)``, built on first use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .idbytes import (
    FIXED_MAX,
    HASH_EXACT_BYTES,
    PAD,
    SURROGATES,
    fixed_bytes,
    fixed_words,
    gather_packed,
    hash_slices,
    pack_groups,
    pack_strings,
)
from .segments import order_by, run_starts, sorted_with_rows
from .vocab import encode

__all__ = ["HASH_EXACT_BYTES", "PAD", "DocIds", "HoldsDocIds", "first_repeat", "hash_strings"]


class DocIds:
    """The document id of each row (see the module docstring)."""

    __slots__ = ("_body", "_codes", "_hash", "_len", "_nul", "_packed_vocab", "_start", "_vocab")

    def __init__(self, codes: np.ndarray | None = None, vocab: np.ndarray | None = None) -> None:
        self._codes = codes
        self._vocab = vocab
        self._body: np.ndarray | None = None
        self._start: np.ndarray | None = None
        self._len: np.ndarray | None = None
        self._nul = False  # some id holds a zero byte
        self._hash: np.ndarray | None = None
        self._packed_vocab: DocIds | None = None  # the vocabulary as byte slices, once

    @classmethod
    def slices(
        cls, body: np.ndarray, start: np.ndarray, length: np.ndarray, nul: bool = False,
        end: int | None = None, hashes: np.ndarray | None = None,
    ) -> DocIds:  # fmt: skip
        """Row ``i``'s id is ``body[start[i]:start[i] + length[i]]``: UTF-8, non-empty,
        with no zero byte unless ``nul``. ``body`` (uint8) ends in at least :data:`PAD`
        bytes past the last id, ``end`` (found when not given; copied on if not).
        ``hashes``: the rows' :func:`hash_slices`, when already computed."""
        out = cls()
        end = int((start + length).max()) if end is None and len(start) else (end or 0)
        if len(body) < end + PAD:
            padded = np.zeros(end + PAD, dtype=np.uint8)
            padded[: len(body)] = body[:end]
            body = padded
        out._body, out._start, out._len, out._nul = body, start, length, nul
        out._hash = hashes
        return out

    @classmethod
    def packed(cls, offsets: np.ndarray, body: np.ndarray) -> DocIds:
        """From packed UTF-8 bytes: row ``i`` is ``body[offsets[i]:offsets[i + 1]]`` (as
        an Arrow string column lays them out; no zero byte)."""
        length = np.diff(offsets).astype(np.int32)
        return cls.slices(body, offsets[:-1].astype(np.int64), length, end=int(offsets[-1]))

    @classmethod
    def from_strings(cls, strings: Iterable[str]) -> DocIds:
        """Packed from Python strings (UTF-8; any iterable of them): see
        :func:`~.idbytes.pack_strings`. A string of length zero gives an empty id (callers
        refuse it). Raises TypeError for an item that is not a string and
        UnicodeEncodeError for one that is not UTF-8 (a lone surrogate)."""
        return cls.slices(*pack_strings(strings))

    @classmethod
    def from_groups(cls, groups: Iterable[Iterable[str]], n: int) -> DocIds | None:
        """:meth:`from_strings` of the strings of non-empty ``groups`` one after another,
        ``n`` in all (e.g. each query's documents), each group joined while its strings
        are in the cache (:func:`~.idbytes.pack_groups`); None when some string holds a
        newline (then pack them with :meth:`from_strings`). Raises as it does."""
        packed = pack_groups(groups, n)
        return None if packed is None else cls.slices(*packed)

    def lengths(self) -> np.ndarray:
        """The byte length (UTF-8) of each row's id."""
        return self.sliced()._len  # type: ignore[return-value]

    def sliced(self) -> DocIds:
        """The same ids as byte slices (itself when not interned; an interned vocabulary is
        packed once, each row pointing at its id's bytes), hashes kept."""
        if self._codes is None:
            return self
        if self._packed_vocab is None:
            self._packed_vocab = DocIds.from_strings(self._vocab)  # type: ignore[arg-type]
        vocab, codes = self._packed_vocab, self._codes
        out = DocIds.slices(vocab._body, vocab._start[codes], vocab._len[codes], vocab._nul)  # type: ignore[arg-type,index]
        out._hash = self._hash
        return out

    @classmethod
    def stack(cls, parts: Sequence[DocIds]) -> DocIds:
        """The rows of ``parts``, one after another, as byte slices of one body (a part
        whose rows use under half of the body they point into is packed first)."""
        sl = []
        for p in parts:
            p = p.sliced()
            if len(p) and 2 * int(p._len.sum()) < len(p._body):  # type: ignore[union-attr,arg-type]
                off, packed = gather_packed(p._body, p._start, p._len)  # type: ignore[arg-type]
                q = DocIds.slices(packed, off[:-1], np.diff(off), p._nul, int(off[-1]))
                q._hash = p._hash
                p = q
            sl.append(p)
        ends = [int((p._start + p._len).max()) if len(p) else 0 for p in sl]  # type: ignore[operator]
        shift = np.concatenate(([0], np.cumsum(ends)))
        body = np.zeros(int(shift[-1]) + PAD, dtype=np.uint8)
        for p, e, at in zip(sl, ends, shift.tolist()):
            body[at : at + e] = p._body[:e]  # type: ignore[index]
        start = np.concatenate([p._start + at for p, at in zip(sl, shift.tolist())])
        length = np.concatenate([p._len for p in sl])
        hashes = None
        if all(p._hash is not None for p in sl):
            hashes = np.concatenate([p._hash for p in sl])
        return cls.slices(body, start, length, any(p._nul for p in sl), int(shift[-1]), hashes)

    def __len__(self) -> int:
        return len(self._codes) if self._codes is not None else len(self._start)  # type: ignore[arg-type]

    @property
    def interned(self) -> bool:
        """True when codes and vocabulary exist (then joins compare codes, exactly)."""
        return self._codes is not None

    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(code per row, sorted vocabulary)``; interned on first call."""
        if self._codes is None:
            fixed = None if self._nul else fixed_bytes(self._body, self._start, self._len)  # type: ignore[arg-type]
            if fixed is not None:
                vocab_b, codes = np.unique(fixed, return_inverse=True)
                vocab = np.empty(len(vocab_b), dtype=object)
                vocab[:] = [b.decode("utf-8", SURROGATES) for b in vocab_b.tolist()]
            else:
                codes, vocab = encode(self.strings(np.arange(len(self))))
            self._codes, self._vocab = codes.astype(np.int32, copy=False), vocab
        return self._codes, self._vocab  # type: ignore[return-value]

    def _packed(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, body)`` of ``rows``, packed."""
        if self._codes is not None:
            other = DocIds.from_strings(self._vocab[self._codes[rows]].tolist())  # type: ignore[index]
            return gather_packed(other._body, other._start, other._len)  # type: ignore[arg-type]
        return gather_packed(self._body, self._start[rows], self._len[rows])  # type: ignore[arg-type,index]

    def take(self, rows: np.ndarray) -> DocIds:
        """The ids of ``rows``, in that order (the bytes are shared, not copied)."""
        if self._codes is not None:
            out = DocIds(self._codes[rows], self._vocab)
        else:
            out = DocIds.slices(self._body, self._start[rows], self._len[rows], self._nul)  # type: ignore[arg-type,index]
        if self._hash is not None:
            out._hash = self._hash[rows]
        return out

    def strings(self, rows: np.ndarray) -> list[str]:
        """The ids of ``rows`` as Python strings."""
        if self._codes is not None:
            strings: list[str] = self._vocab[self._codes[rows]].tolist()  # type: ignore[index]
            return strings
        body, rows = self._body, np.asarray(rows)
        return [
            body[i : i + k].tobytes().decode("utf-8", SURROGATES)  # type: ignore[index]
            for i, k in zip(self._start[rows].tolist(), self._len[rows].tolist())  # type: ignore[index]
        ]

    def hashes(self) -> np.ndarray:
        """A 64-bit hash of each row's id (uint64; equal ids hash equal, whatever the form)."""
        if self._hash is None:
            if self._codes is None:
                self._hash = hash_slices(self._body, self._start, self._len)  # type: ignore[arg-type]
            elif len(self._vocab) == 0:  # type: ignore[arg-type]
                self._hash = np.zeros(len(self._codes), dtype=np.uint64)
            else:  # the packed vocabulary is kept: sliced() reads the same bytes
                if self._packed_vocab is None:
                    self._packed_vocab = DocIds.from_strings(self._vocab)  # type: ignore[arg-type]
                self._hash = self._packed_vocab.hashes()[self._codes]
        return self._hash

    def desc_order(self, rows: np.ndarray, group: np.ndarray) -> np.ndarray:
        """Positions into ``rows`` sorting them by ``group`` (ascending, non-negative ints)
        and, within a group, by id descending in byte order (trec_eval's tie order).

        When the groups come as runs (runs of tied scores do), a group of two (most of
        them) is settled by one comparison of its ids, and only larger groups are sorted."""
        n = len(rows)
        if not n:
            return np.zeros(0, dtype=np.int64)
        group = group.astype(np.int64, copy=False)
        if n < 3 or bool((group[1:] < group[:-1]).any()):
            return self._desc_sorted(rows, group)
        starts = np.flatnonzero(run_starts(group))
        size = np.diff(np.append(starts, n))
        two = starts[size == 2]
        swap = self._before(rows[two], rows[two + 1])
        if swap is None:
            return self._desc_sorted(rows, group)
        out = np.arange(n, dtype=np.int64)
        out[two[swap]] += 1  # the second id is the larger: it goes first
        out[two[swap] + 1] -= 1
        big = size > 2
        if big.any():
            at = np.repeat(starts[big] - np.cumsum(size[big]) + size[big], size[big])
            at += np.arange(len(at))
            out[at] = at[self._desc_sorted(rows[at], group[at])]
        return out

    def _desc_sorted(self, rows: np.ndarray, group: np.ndarray) -> np.ndarray:
        """:meth:`desc_order` by one sort of (group, id)."""
        if self._codes is not None:
            dm = self._codes[rows].astype(np.int64)
        else:
            length = self._len[rows]  # type: ignore[index]
            if self._nul or int(length.max()) > FIXED_MAX:
                dm = self.take(rows).codes()[0].astype(np.int64)
            else:
                words = self._be_words(rows)
                if words.shape[1] > 1:
                    return np.lexsort([~words[:, k] for k in range(words.shape[1] - 1, -1, -1)]
                                      + [group])  # fmt: skip
                dm = np.unique(words[:, 0], return_inverse=True)[1].astype(np.int64)
        return order_by(group, int(dm.max()) - dm)

    def _be_words(self, rows: np.ndarray) -> np.ndarray:
        """The ids of ``rows`` (byte slices, no zero byte, at most :data:`FIXED_MAX`
        bytes) as big-endian 8-byte words, zero padded: compared as numbers, word by word,
        they compare as the ids' bytes do."""
        words: np.ndarray = fixed_words(self._body, self._start[rows], self._len[rows])  # type: ignore[arg-type,index]
        swapped: np.ndarray = words.byteswap()
        return swapped

    def _before(self, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        """Per pair, whether the id of row ``a[i]`` sorts before that of ``b[i]`` (byte
        order); None when the ids are not compared as words (a zero byte, a long id)."""
        if self._codes is not None:
            before_codes: np.ndarray = self._codes[a] < self._codes[b]
            return before_codes
        if self._nul or (len(a) and int(self._len[np.concatenate((a, b))].max()) > FIXED_MAX):  # type: ignore[index]
            return None
        words = self._be_words(np.concatenate((a, b)))
        wa, wb = words[: len(a)], words[len(a) :]
        before = np.zeros(len(a), dtype=bool)
        equal = np.ones(len(a), dtype=bool)
        for k in range(words.shape[1]):
            before |= equal & (wa[:, k] < wb[:, k])
            equal &= wa[:, k] == wb[:, k]
        return before

    def equal_rows(self, rows: np.ndarray, other: DocIds, other_rows: np.ndarray) -> bool:
        """True when ``self``'s ids at ``rows`` equal ``other``'s at ``other_rows``."""
        return bool(self.same(rows, other, other_rows).all())

    def same(self, rows: np.ndarray, other: DocIds, other_rows: np.ndarray) -> np.ndarray:
        """Per pair, whether ``self``'s id at ``rows[i]`` equals ``other``'s at
        ``other_rows[i]`` (exact: codes of one vocabulary, else the bytes)."""
        rows, other_rows = np.asarray(rows), np.asarray(other_rows)
        if len(rows) == 0:
            return np.zeros(0, dtype=bool)
        if self._codes is not None and other._codes is not None and self._vocab is other._vocab:
            same_codes: np.ndarray = self._codes[rows] == other._codes[other_rows]
            return same_codes
        if (
            self._codes is None and other._codes is None
            and self._hash is not None and other._hash is not None
        ):  # fmt: skip
            # hashes at hand: different hashes or lengths are different ids, and short ids
            # of one length with one hash are the same id (HASH_EXACT_BYTES); the bytes
            # decide the rest
            a_len, b_len = self._len[rows], other._len[other_rows]  # type: ignore[index]
            out: np.ndarray = (self._hash[rows] == other._hash[other_rows]) & (a_len == b_len)
            unsure = np.flatnonzero(out & (a_len > HASH_EXACT_BYTES))
            if len(unsure):
                out[unsure] = self._same_bytes(rows[unsure], other, other_rows[unsure])
            return out
        return self._same_bytes(rows, other, other_rows)

    def _same_bytes(self, rows: np.ndarray, other: DocIds, other_rows: np.ndarray) -> np.ndarray:
        """:meth:`same` by the ids' bytes."""
        if self._codes is None and other._codes is None:
            a_len, b_len = self._len[rows], other._len[other_rows]  # type: ignore[index]
            if max(int(a_len.max()), int(b_len.max())) <= FIXED_MAX:
                a = fixed_words(self._body, self._start[rows], a_len)  # type: ignore[arg-type,index]
                b = fixed_words(other._body, other._start[other_rows], b_len)  # type: ignore[arg-type,index]
                if a.shape[1] == b.shape[1]:
                    same_words: np.ndarray = (a_len == b_len) & (a == b).all(axis=1)
                    return same_words
        a_off, a_body = self._packed(rows)
        b_off, b_body = other._packed(other_rows)
        out: np.ndarray = np.diff(a_off) == np.diff(b_off)
        at = np.flatnonzero(out)
        if len(at) < len(out):  # compare the rows of equal length, packed alike
            a_off, a_body = gather_packed(a_body, a_off[at], np.diff(a_off)[at])
            b_off, b_body = gather_packed(b_body, b_off[at], np.diff(b_off)[at])
        total = int(a_off[-1])
        differ = np.flatnonzero(a_body[:total] != b_body[:total])
        out[at[np.searchsorted(a_off, differ, side="right") - 1]] = False
        return out


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


def hash_strings(strings: Sequence[str]) -> np.ndarray:
    """A 64-bit hash (uint64) of each of ``strings`` (of its UTF-8 bytes)."""
    return DocIds.from_strings(strings).hashes()


def first_repeat(group: np.ndarray, docs: DocIds) -> tuple[int, int] | None:
    """Two rows ``(earlier, later)`` with the same ``group`` (non-negative ints, e.g. query
    codes) and the same id, or None when every (group, id) is unique. Exact: rows whose
    hashes agree are compared as strings."""
    n = len(group)
    if n < 2:
        return None
    key: np.ndarray | None
    if docs.interned:
        codes = docs.codes()[0].astype(np.int64)
        key = (group.astype(np.int64) << max(int(codes.max()).bit_length(), 1)) | codes
        if int(group.max()).bit_length() + max(int(codes.max()).bit_length(), 1) > 62:
            key = None
    else:
        key = None
    if key is None and _no_repeat_in_rows(group, docs.hashes()):
        return None
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


def _no_repeat_in_rows(group: np.ndarray, h: np.ndarray) -> bool:
    """True when no group holds one hash twice, found by sorting each group's hashes as a
    row of a matrix (far faster than one sort of all rows); False when some may (or the
    groups do not come in order, or are too ragged for a matrix): the exact search
    decides."""
    n = len(group)
    if bool((group[1:] < group[:-1]).any()):
        return False
    starts = np.flatnonzero(run_starts(group))
    sizes = np.diff(np.append(starts, n))
    width = int(sizes.max())
    if len(starts) * width > 2 * n + 4096:
        return False
    mat = np.full((len(starts), width), np.iinfo(np.uint64).max, dtype=np.uint64)
    mat[np.repeat(np.arange(len(starts)), sizes), np.arange(n) - np.repeat(starts, sizes)] = h
    mat.sort(axis=1)
    same = mat[:, 1:] == mat[:, :-1]
    same &= np.arange(1, width)[None, :] < sizes[:, None]  # not the padding
    return not bool(same.any())
