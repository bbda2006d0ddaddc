"""Matching a run's rows with the labelled documents of their queries, and finding the rows
that repeat a document (the document half of :func:`~ranklens.judging.join.join_columnar`).

Rows and labels are compared through integer keys in one packed sort: exact codes when
both sides are interned, or the ids' 64-bit hashes (:mod:`ranklens.model.ids`) when either
side still holds parsed strings, which is what keeps the cost independent of how many
distinct documents a run holds. Every hash match and every suspected repeat is checked
against the strings; a collision (rare) sends the match to the interned codes, so the
result is exact either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DuplicateDocumentError
from ..model import Qrels, Run
from ..model import segments as seg
from ..model.vocab import translate

MIN_HASH_BITS = 24
"""Below this many hash bits per key, matching interns the ids instead."""


@dataclass
class DocMatch:
    """``ev``: evaluated query of each kept row (ranked, duplicates dropped under
    ``duplicates="first"``); ``lens``/``first_row`` per query; ``repeat_rows``: kept rows that
    repeat a document; ``qrows``: matched qrels rows (into the evaluated queries' rows) and
    ``m_row`` the kept row each matched; ``dropped``/``kept_dups`` counts; ``ranked_rows``
    maps kept rows back to run rows (see :func:`match_documents`)."""

    ev: np.ndarray
    lens: np.ndarray
    first_row: np.ndarray
    repeat_rows: np.ndarray
    qrows: np.ndarray
    m_row: np.ndarray
    dropped: int
    kept_dups: int
    ranked_rows: Any


class _Collision(Exception):
    """Two different ids shared a hash key: match again with interned codes."""


def match_documents(
    Q: Qrels, R: Run, conv: Any, ev: np.ndarray, ranked_rows: Any, q_rows: np.ndarray,
    qrow_q: np.ndarray, n_q: int, query_ids: np.ndarray,
) -> DocMatch:  # fmt: skip
    """Match the kept run rows (``ev``: their evaluated query, in ranking order;
    ``ranked_rows(positions)``: their original row numbers) with the qrels rows ``q_rows``
    (``qrow_q``: their evaluated query)."""
    hashed = not (R.docs.interned and Q.docs.interned)
    if hashed:
        try:
            return _match(Q, R, conv, ev, ranked_rows, q_rows, qrow_q, n_q, query_ids, True)
        except _Collision:
            pass
    return _match(Q, R, conv, ev, ranked_rows, q_rows, qrow_q, n_q, query_ids, False)


def _keys(
    Q: Qrels, R: Run, ev: np.ndarray, ranked_rows: Any, q_rows: np.ndarray, kbits: int,
    hashed: bool,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per kept run row and per qrels row, a non-negative key of ``kbits`` bits (-1 for a
    labelled document the run never retrieves)."""
    if hashed:
        shift = np.uint64(64 - kbits)
        # shifted right, the hashes fit int64 as they are (views, no copies)
        rkey = (ranked_rows(values=R.docs.hashes()) >> shift).view(np.int64)
        qkey = (Q.docs.hashes()[q_rows] >> shift).view(np.int64)
        return rkey, qkey
    rkey = ranked_rows(values=R.d).astype(np.int64)
    qkey = translate(Q.doc_ids, R.doc_ids)[Q.d[q_rows]]
    return rkey, qkey


def _match(
    Q: Qrels, R: Run, conv: Any, ev: np.ndarray, ranked_rows: Any, q_rows: np.ndarray,
    qrow_q: np.ndarray, n_q: int, query_ids: np.ndarray, hashed: bool,
) -> DocMatch:  # fmt: skip
    n = len(ev)
    first_row = _first_rows(ev, n_q)
    lens = np.bincount(ev, minlength=n_q).astype(np.int64)
    ebits = max(int(n_q).bit_length(), 1)
    # a position (or a label's place among its query's labels) < 2^pbits - 1
    widest = max(int(lens.max(initial=0)), int(np.bincount(qrow_q).max(initial=0)))
    pbits = max(widest.bit_length(), 1)
    if hashed:
        kbits = 63 - ebits - pbits
        if kbits < MIN_HASH_BITS:
            raise _Collision
    else:
        kbits = max(len(R.doc_ids).bit_length(), 1)
    rkey, qkey = _keys(Q, R, ev, ranked_rows, q_rows, kbits, hashed)
    blocks = _sorted_blocks(ev, rkey, first_row, lens, kbits, pbits) if n else None
    if blocks is not None and (R.unique_docs or not _has_repeat(blocks[0], pbits)):
        # every query's keys sorted, no document twice in a query: look each label up
        qrows, m_row = _lookup(*blocks, qrow_q, qkey, first_row, kbits, pbits)
        if Q.grouped:  # labels in their rows' order, as below (a row may find two units)
            o = np.argsort(qrows, kind="stable")
            qrows, m_row = qrows[o], m_row[o]
        if hashed and not Q.docs.equal_rows(q_rows[qrows], R.docs, ranked_rows(m_row)):
            raise _Collision
        none = np.zeros(0, dtype=np.int64)
        return DocMatch(ev, lens, first_row, none, qrows, m_row, 0, 0, ranked_rows)
    pos = np.arange(n, dtype=np.int64) - first_row[ev] if n else np.zeros(0, np.int64)
    skey, srow = _sort(ev, rkey, pos, first_row, kbits, pbits, n_q)
    del rkey
    dropped = kept_dups = 0
    repeat_rows = np.zeros(0, dtype=np.int64)
    if len(skey) > 1 and not R.unique_docs:
        again = seg.repeats(skey)
        if again.any():
            at = np.flatnonzero(again)
            if hashed:  # the same key twice in a query: the same id, or a collision
                earlier, later = ranked_rows(srow[at]), ranked_rows(srow[at + 1])
                if not R.docs.equal_rows(earlier, R.docs, later):
                    raise _Collision
            repeat_rows = np.sort(srow[at + 1])
            if conv.duplicates == "error":
                i = int(repeat_rows[0])
                doc = R.docs.strings(ranked_rows(np.array([i])))[0]
                raise DuplicateDocumentError(
                    f"run {R.name!r}: document {doc!r} appears more than once in query "
                    f"{query_ids[ev[i]]!r}; pass duplicates='first' to keep its "
                    "highest-ranked occurrence"
                )
            if conv.duplicates == "first":
                dropped = len(repeat_rows)
                keep_rows = np.ones(n, dtype=bool)
                keep_rows[repeat_rows] = False
                new_index = np.cumsum(keep_rows) - 1
                keep_sorted = np.ones(len(skey), dtype=bool)
                keep_sorted[1:] = ~again
                skey, srow = skey[keep_sorted], new_index[srow[keep_sorted]]
                kept = np.flatnonzero(keep_rows)
                ev = ev[keep_rows]
                ranked_rows = _compose(ranked_rows, kept)
                repeat_rows = np.zeros(0, dtype=np.int64)
                first_row = _first_rows(ev, n_q)
            else:
                kept_dups = len(repeat_rows)
    lens = np.bincount(ev, minlength=n_q).astype(np.int64)
    in_run = qkey >= 0
    qk = (qrow_q[in_run].astype(np.int64) << kbits) | qkey[in_run]
    lo = np.searchsorted(skey, qk, "left")
    if kept_dups:  # a key may match several run rows
        cnt = np.searchsorted(skey, qk, "right") - lo
        qrows = np.repeat(np.flatnonzero(in_run), cnt)
        within = np.arange(len(qrows)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        m_row = srow[np.repeat(lo, cnt) + within]  # run row of each match
    else:  # keys are unique: at most one match each
        hit = skey[np.minimum(lo, len(skey) - 1)] == qk if len(skey) else lo < 0
        qrows = np.flatnonzero(in_run)[hit]
        m_row = srow[lo[hit]]
    if hashed and not Q.docs.equal_rows(q_rows[qrows], R.docs, ranked_rows(m_row)):
        raise _Collision
    return DocMatch(ev, lens, first_row, repeat_rows, qrows, m_row, dropped, kept_dups, ranked_rows)


def _sorted_blocks(
    ev: np.ndarray, rkey: np.ndarray, first_row: np.ndarray, lens: np.ndarray, kbits: int,
    pbits: int,
) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """``(table, query of each block)``: every query's rows (a block) as one row of a
    matrix of packed ``(block, key, position)`` integers, each row sorted, flattened: one
    sorted array. Short rows are padded with the row's largest value (a key of all ones
    and a position no row has). None when the block number does not fit beside key and
    position, or when padding would add more than half again (ragged lists: :func:`_sort`).
    Sorting rows of a matrix is far faster than one sort of all rows, and the blocks stay
    in the order they come."""
    n = len(ev)
    ranked = np.flatnonzero(lens)  # the queries with rows
    nb, depth = len(ranked), int(lens.max())
    low_bits = kbits + pbits
    if max(nb.bit_length(), 1) + low_bits > 63:
        return None
    if nb * depth == n:  # every list the same length: the rows as they stand
        mat = (rkey << pbits).reshape(nb, depth)
        mat |= np.arange(depth, dtype=np.int64)
        block_q = ev[::depth]  # each block's query, in the order the blocks come
    elif nb * depth <= 1.5 * n + 4096:
        row_of = np.zeros(len(lens), dtype=np.int64)
        row_of[ranked] = np.arange(nb)
        pos = np.arange(n, dtype=np.int64) - first_row[ev]
        mat = np.full((nb, depth), (1 << low_bits) - 1, dtype=np.int64)
        mat[row_of[ev], pos] = (rkey << pbits) | pos
        block_q = ranked
    else:
        return None
    mat.sort(axis=1)
    mat |= (np.arange(nb, dtype=np.int64) << low_bits)[:, None]
    return mat.reshape(-1), block_q


def _has_repeat(table: np.ndarray, pbits: int) -> bool:
    """Whether some block of the sorted ``table`` (:func:`_sorted_blocks`) holds one key
    twice."""
    same = np.bitwise_xor(table[1:], table[:-1])  # the key bits agree: only position bits
    same = same < (1 << pbits)
    if not same.any():
        return False
    pad = (1 << pbits) - 1  # a padded cell's position bits
    at = np.flatnonzero(same)
    return bool(((table[at] & pad) != pad).any())


def _lookup(
    table: np.ndarray, block_q: np.ndarray, qrow_q: np.ndarray, qkey: np.ndarray,
    first_row: np.ndarray, kbits: int, pbits: int,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(qrels rows matched, the kept row each matched)``: each label ``(query, key)``
    looked up in the sorted ``table`` of :func:`_sorted_blocks` (keys unique within a
    block). The labels are packed as the table is, ``(block, key, place among the
    block's labels)``, and sorted the same way (each block's as one row of a matrix), so
    one search of sorted values walks the table once."""
    n_lab = np.bincount(qrow_q, minlength=len(first_row))[block_q]
    start = np.searchsorted(qrow_q, block_q)
    at = np.repeat(start - np.cumsum(n_lab) + n_lab, n_lab) + np.arange(int(n_lab.sum()))
    block = np.repeat(np.arange(len(block_q), dtype=np.int64), n_lab)
    key = qkey[at]
    if len(key) and key.min() < 0:  # a labelled document the run never retrieves
        keep = key >= 0
        at, block, key = at[keep], block[keep], key[keep]
        n_lab = np.bincount(block, minlength=len(block_q))
    low_bits = kbits + pbits
    first_lab = np.cumsum(n_lab) - n_lab
    place = np.arange(len(at), dtype=np.int64) - np.repeat(first_lab, n_lab)
    packed = (block << low_bits) | (key << pbits) | place
    widest = int(n_lab.max(initial=0))
    if len(block_q) * widest <= 2 * len(at) + 4096:
        # padded with the largest int64 (a place is never all ones): last in each row
        mat = np.full((len(block_q), widest), np.iinfo(np.int64).max, dtype=np.int64)
        mat[block, place] = packed
        mat.sort(axis=1)
        packed = mat[np.arange(widest) < n_lab[:, None]]
    else:
        packed.sort()
    pmask = (1 << pbits) - 1
    place = packed & pmask
    packed ^= place  # the wanted (block, key) with no position
    lo = np.searchsorted(table, packed)
    np.minimum(lo, len(table) - 1, out=lo)
    got = table[lo]
    got ^= packed  # the position bits alone when the key is the one wanted
    hit = got < pmask  # a padded cell has all position bits set
    b = packed[hit] >> low_bits
    return at[first_lab[b] + place[hit]], first_row[block_q[b]] + got[hit]


def _sort(
    ev: np.ndarray, rkey: np.ndarray, pos: np.ndarray, first_row: np.ndarray, kbits: int,
    pbits: int, n_q: int,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(sorted (query, key) pairs, kept row of each)``, rows of equal pairs in rank order.

    Keys and positions are packed into one integer per row and sorted within each query:
    as rows of a (query x depth) matrix when the queries' lists are of similar lengths (far
    faster than one sort of all rows), else with one sort of the packed (query, key, pos).
    """
    if len(ev) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ebits = max(int(ev.max()).bit_length(), 1)
    if ebits + kbits + pbits > 63:
        return seg.sorted_with_rows((ev.astype(np.int64) << kbits) | rkey)
    low = rkey << pbits
    low |= pos
    lens = np.bincount(ev, minlength=n_q)
    depth = int(lens.max())
    ranked = np.flatnonzero(lens)  # the queries with rows
    if len(ranked) * depth == len(ev) and bool(np.all(ev[depth::depth] > ev[:-depth:depth])):
        # every ranked query the same depth, in query order (a fixed-depth run): the rows
        # as they stand are the matrix
        mat = low.reshape(len(ranked), depth)
        mat.sort(axis=1)
        packed = mat.reshape(-1)
        packed |= np.repeat(ranked.astype(np.int64) << (kbits + pbits), depth)
    elif n_q * depth <= 1.5 * len(ev) + 4096:
        pad = (1 << (kbits + pbits)) - 1  # above every packed value (pos < 2^pbits - 1)
        mat = np.full((n_q, depth), pad, dtype=np.int64)
        mat[ev, pos] = low
        del low
        mat.sort(axis=1)
        packed = mat[np.arange(depth)[None, :] < lens[:, None]]
        del mat
        packed |= np.repeat(np.arange(n_q, dtype=np.int64), lens) << (kbits + pbits)
    else:
        packed = ev.astype(np.int64) << (kbits + pbits)
        packed |= low
        del low
        packed.sort()
    spos = packed & ((1 << pbits) - 1)
    packed >>= pbits
    return packed, first_row[packed >> kbits] + spos


def _first_rows(ev: np.ndarray, n_q: int) -> np.ndarray:
    """The first kept row of each query (each query's rows are one block)."""
    first_row = np.zeros(n_q, dtype=np.int64)
    if len(ev):
        block = seg.run_start_index(ev)
        first_row[ev[block]] = block
    return first_row


def _compose(ranked_rows: Any, kept: np.ndarray) -> Any:
    """``ranked_rows`` (see :func:`match_documents`) for the rows ``kept`` of its rows."""

    def composed(positions: np.ndarray | None = None, values: np.ndarray | None = None) -> Any:
        if values is not None:
            return ranked_rows(values=values)[kept]
        return ranked_rows(kept[positions])

    return composed
