"""Vectorised reading of plainly delimited TREC files (qrels and runs) with numpy only.

A file is read in blocks of whole lines (:data:`BLOCK` to :data:`MAX_BLOCK` bytes, on
:data:`THREADS` threads), so memory stays near the size of what is kept (packed ids,
numbers), never the file's. Each block is split with whole-array byte searches (line ends,
delimiters, then every field's start and end per line); ids are gathered into packed UTF-8
bytes (:class:`~ranklens.model.ids.DocIds`), numbers parsed column by column. No Python
loop runs over lines or ids: only over the distinct query ids of consecutive blocks of
lines.

With the compiled helpers (``ranklens-native``) a plainly laid out block is split, its
numbers parsed and its ids packed and hashed in C, in one pass each, without the GIL (the
same fields, numbers, bytes and hashes as numpy's: tested on generated blocks); anything
else, or no helpers, is read by numpy as below.

A block is split the fast way when every line holds exactly the expected fields separated
by single delimiters of one kind (space or tab), else by runs of any ASCII whitespace as
``bytes.split`` splits them (padded columns, CRLF line ends, extra run columns, blank and
``#`` comment lines skipped, as the line parser of :mod:`ranklens.io.trec` skips them).
Anything else (a line with too few fields, a lone CR, control bytes, numbers not in plain
decimal form, bytes that are not UTF-8) returns None and the line parser reads the file,
naming what is wrong. Scores are parsed exactly: up to 15 significant digits with one
correctly rounded division (an exact integer by an exact power of ten; Clinger's fast path),
longer or exponent forms with Python's ``float``, which is correctly rounded too.
"""

from __future__ import annotations

import contextlib
import re
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ..model import native as compiled
from ..model.idbytes import PAD, fixed_words, gather_packed, hash_slices
from ..model.ids import DocIds
from ..model.vocab import BadIdError, encode
from .files import BOM, open_binary, read_errors

BLOCK = 1 << 20
"""Bytes read per block at least (whole lines are parsed; the rest waits for the next
block). Large files are read in larger blocks, up to :data:`MAX_BLOCK`, a 32nd of the file:
fewer numpy calls per byte, so the threads wait less on each other for the GIL."""
MAX_BLOCK = 1 << 23
THREADS = 2
"""Blocks parsed at once."""

FieldSplit = Callable[[int], tuple[np.ndarray, np.ndarray]]
"""``field(j) -> (start, length)`` of field ``j`` on every content line of a block."""

DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
"""A score as TREC files may write it (plain ASCII decimal, optional exponent)."""
INTEGER = re.compile(rb"[+-]?[0-9]+\Z")
"""A relevance grade (plain ASCII integer)."""
INT64_LIMIT = 1 << 63
"""Grades lie in ``[-INT64_LIMIT, INT64_LIMIT)``."""
_POW10 = 10.0 ** np.arange(16)
_NL, _SPACE, _TAB, _HASH, _DOT = 10, 32, 9, 35, 46


class _Block:
    """What one block of lines gives."""

    def __init__(self) -> None:
        self.heads: list[str] = []  # the query id of each run of equal consecutive ids
        self.head_lens = np.zeros(0, dtype=np.int64)
        self.ids: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.nums: list[np.ndarray] = []
        self.last: bytes | None = None  # the last field of the last line


def scan(
    p: Path, n_fields: int, qid: int, ids: list[int], nums: list[tuple[int, str]],
    more_fields: bool = False, data: Any = None,
) -> dict[str, Any] | None:  # fmt: skip
    """Read ``p`` (or ``data``, whole lines of it, named ``p`` in errors: the out-of-core
    reader's chunks) (``n_fields`` per line): field ``qid`` interned as the query, fields
    ``ids`` packed (:class:`DocIds`), fields ``nums`` parsed as ``"int"`` or ``"float"``.

    Returns ``{"q": (codes, vocab), "ids": [DocIds...], "nums": [array...], "last":
    bytes of the last line's last field}``, or None when the line parser must read the file
    (see the module docstring). Raises InputError when the file cannot be read. Blocks are
    parsed on :data:`THREADS` threads (numpy releases the GIL), in order.
    """
    done: list[_Block] = []
    opened = open_binary(p) if data is None else contextlib.nullcontext(None)
    with opened as fh, read_errors(p), ThreadPoolExecutor(THREADS) as pool:
        pending: deque[Future[_Block | None]] = deque()
        if data is not None:
            size = len(data) // 32
        else:
            size = BLOCK if p.name.endswith(".gz") else p.stat().st_size // 32
        size = min(max(size, BLOCK), MAX_BLOCK)
        blocks = line_blocks(fh, size) if data is None else split_lines(data, size)
        for block in blocks:
            pending.append(pool.submit(_block, block, n_fields, qid, ids, nums, more_fields))
            while len(pending) > THREADS or (pending and pending[0].done()):
                got = pending.popleft().result()
                if got is None:
                    return None
                done.append(got)
        for fut in pending:
            got = fut.result()
            if got is None:
                return None
            done.append(got)
    done = [b for b in done if b.heads]
    if not done:
        return None  # no content line: the line parser says so
    try:
        codes, vocab = encode([h for b in done for h in b.heads])
    except BadIdError:
        return None
    qcode = np.repeat(codes, np.concatenate([b.head_lens for b in done]))
    return {
        "q": (qcode, vocab),
        "ids": [_concat_packed([b.ids[i] for b in done]) for i in range(len(ids))],
        "nums": [np.concatenate([b.nums[i] for b in done]) for i in range(len(nums))],
        "last": done[-1].last,
    }


def line_blocks(fh: Any, block: int) -> Iterator[memoryview]:
    """The file's bytes in blocks of whole lines (a BOM at the start dropped; the last line
    ended with a line feed), each a view of a buffer the file is read into in place (only
    a block's unfinished last line is copied, to the front of the next)."""
    rest = b""
    first = True
    while True:
        buf = bytearray(len(rest) + block + 1)  # + 1: room for a last line feed
        buf[: len(rest)] = rest
        want = len(rest) + block
        end = len(rest) + read_into(fh, memoryview(buf)[len(rest) : want])
        lo = len(BOM) if first and buf.startswith(BOM) else 0
        first = False
        if end < want:  # the end of the file: the rest is one block
            if end > lo:
                if buf[end - 1] != 10:
                    buf[end] = 10
                    end += 1
                yield memoryview(buf)[lo:end]
            return
        cut = buf.rfind(b"\n", lo, end) + 1
        if cut <= lo:  # a line longer than a block: read on
            rest = bytes(buf[lo:end])
            continue
        rest = bytes(buf[cut:end])
        yield memoryview(buf)[lo:cut]


def read_into(fh: Any, view: memoryview) -> int:
    """Fill ``view`` from ``fh``; the bytes read (fewer only at the end of the file)."""
    got = 0
    while got < len(view):
        n = fh.readinto(view[got:])
        if not n:
            break
        got += n
    return got


def split_lines(data: Any, block: int) -> Iterator[memoryview]:
    """``data`` (whole lines, bytes-like) as views of blocks of whole lines of about
    ``block`` bytes, without copying it."""
    view = memoryview(data).cast("B")
    arr = np.frombuffer(view, dtype=np.uint8)
    lo = 0
    while lo < len(view):
        hi = min(lo + block, len(view))
        if hi < len(view):  # back to the end of the last whole line
            back = np.flatnonzero(arr[lo:hi] == _NL)
            hi = lo + int(back[-1]) + 1 if len(back) else lo + block
            if not len(back):  # a line longer than a block: on to its end
                nxt = np.flatnonzero(arr[hi:] == _NL)
                hi = hi + int(nxt[0]) + 1 if len(nxt) else len(view)
        yield view[lo:hi]
        lo = hi


def _block(
    data: Any, n_fields: int, qid: int, ids: list[int], nums: list[tuple[int, str]],
    more_fields: bool,
) -> _Block | None:  # fmt: skip
    """Parse one block of whole lines; None when the line parser must read the file."""
    parts = _Block()
    n = len(data)
    a = np.empty(n + PAD, dtype=np.uint8)
    a[:n] = np.frombuffer(data, dtype=np.uint8)
    a[n:] = 0
    body = a[:n]
    if int(body.max()) >= 0x80:
        try:
            str(data, "utf-8")
        except UnicodeDecodeError:
            return None
    numbers = last = None
    split: FieldSplit | None
    in_c = _split_compiled(body, n_fields, qid, ids, nums)
    if in_c is not None:  # split and numbers parsed in C (the plain layout only)
        split, numbers, last = in_c
    else:
        split = _split_plain(body, n_fields)
    if split is None:  # not one delimiter between fields: any ASCII whitespace
        split = _split_any(body, n_fields, more_fields)
    if split is None:
        return None
    field = split  # field(j): (start, length) of field j on every content line
    if not len(field(0)[0]):
        return parts
    _query_blocks(a, *field(qid), parts)
    # packed bytes and hashes (computed here, on the block's thread)
    for j in ids:
        lo, length = field(j)
        parts.ids.append((length.astype(np.int32), *_packed_ids(a, lo, length)))
    for i, (j, kind) in enumerate(nums):
        values: np.ndarray | None
        if numbers is not None:  # the rows C left (exponents, long mantissas, odd ones)
            parsed, slow = numbers[i]
            values = parsed
            if len(slow):  # where those rows' fields are, asked of C again (rarely needed)
                at = compiled.NATIVE.trec_split(body, n_fields, (j,), ())
                starts = np.frombuffer(at[0][0], dtype=np.int64)
                lengths = np.frombuffer(at[1][0], dtype=np.int64)
                values = _parse_slowly(a, starts, lengths, kind, slow, parsed)
        else:
            values = _parse_numbers(a, *field(j), kind)
        if values is None:
            return None
        parts.nums.append(values)
    if last is None:
        lo, length = field(n_fields - 1)
        last = int(lo[-1]), int(length[-1])
    parts.last = bytes(body[last[0] : last[0] + last[1]])
    return parts


def _split_compiled(
    body: np.ndarray, n_fields: int, qid: int, ids: list[int], nums: list[tuple[int, str]]
) -> tuple[FieldSplit, list[tuple[np.ndarray, np.ndarray]], tuple[int, int]] | None:
    """:func:`_split_plain` and :func:`_parse_numbers` in the compiled helpers, in one pass
    over the block: ``(field, numbers, last)``: the query and id fields' ``(start,
    length)`` (``field(j)``; field 0 too), per number field its values and the rows left to
    :func:`_parse_slowly`, and where the last line's last field is. None without the
    helpers or when the block is not laid out plainly (numpy's split reads it then, as it
    always has)."""
    native = compiled.NATIVE
    if native is None or not hasattr(native, "trec_split"):
        return None
    wanted = sorted({0, qid, *ids})  # the numbers and the last field are read in C
    got = native.trec_split(body, n_fields, tuple(wanted),
                            tuple((j, int(kind == "float")) for j, kind in nums))  # fmt: skip
    if got is None:
        return None
    starts, lengths, values, slow, last = got
    where = {
        j: (np.frombuffer(s, dtype=np.int64), np.frombuffer(n, dtype=np.int64))
        for j, s, n in zip(wanted, starts, lengths)
    }
    numbers = [
        (np.frombuffer(v, dtype=np.float64 if kind == "float" else np.int64),
         np.frombuffer(r, dtype=np.int64))
        for (_, kind), v, r in zip(nums, values, slow)
    ]  # fmt: skip
    return where.__getitem__, numbers, last


def _packed_ids(a: np.ndarray, lo: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ids ``a[lo:lo + length]`` packed (then :data:`PAD` zero bytes) and their
    hashes (:func:`~ranklens.model.idbytes.hash_slices`): in one pass in the compiled
    helpers when they are built, else by numpy (the same bytes and hashes: tested)."""
    native = compiled.NATIVE
    if native is not None and hasattr(native, "pack_hash"):
        got = native.pack_hash(a, np.ascontiguousarray(lo, dtype=np.int64),
                               np.ascontiguousarray(length, dtype=np.int64))  # fmt: skip
        if got is not None:
            return np.frombuffer(got[0], dtype=np.uint8), np.frombuffer(got[1], dtype=np.uint64)
    return gather_packed(a, lo, length)[1], hash_slices(a, lo, length)


def _split_plain(body: np.ndarray, n_fields: int) -> FieldSplit | None:
    """``field(j) -> (start, length)`` of field ``j`` on every content line, when every line
    holds exactly ``n_fields`` fields split by single delimiters of one kind (space or tab)
    and no other byte at or below 0x20 appears; None otherwise."""
    # every byte at or below 0x20, found in one pass: line ends and delimiters only
    sep = np.flatnonzero(body <= 0x20)
    kind = body[sep]
    is_nl = kind == _NL
    nl = sep[is_nl]
    starts = np.empty_like(nl)
    starts[0] = 0
    starts[1:] = nl[:-1] + 1
    content = nl > starts
    if not content.all():  # blank lines
        nl, starts = nl[content], starts[content]
    if not len(nl):
        return lambda j: (nl, nl)
    delim = _TAB if bool((body[: int(nl[0])] == _TAB).any()) else _SPACE
    is_nl |= kind == delim
    if not is_nl.all():  # another byte at or below 0x20
        return None
    d = sep[kind == delim]
    k = n_fields - 1
    if len(d) != k * len(nl):
        return None
    d = d.reshape(-1, k)
    # each line's delimiters inside it, no empty field, no comment
    if (d[:, 0] <= starts).any() or (d[:, -1] >= nl - 1).any():
        return None
    if k > 1 and (np.diff(d, axis=1) <= 1).any():
        return None
    if (body[starts] == _HASH).any():
        return None

    def field(j: int) -> tuple[np.ndarray, np.ndarray]:
        lo = starts if j == 0 else d[:, j - 1] + 1
        return lo, (d[:, j] if j < k else nl) - lo

    return field


def _split_any(body: np.ndarray, n_fields: int, more_fields: bool) -> FieldSplit | None:
    """:func:`_split_plain` for fields split by runs of any ASCII whitespace (space, tab,
    VT, FF; CR only before a line feed), as ``bytes.split`` splits them: blank lines and
    lines whose first field starts with ``#`` skipped, lines with more than ``n_fields``
    fields kept when ``more_fields`` (their first ``n_fields``); None when a line has too
    few fields (or too many), a CR stands alone, or another control byte appears."""
    nl = body == _NL
    space = (body == _SPACE) | (body == _TAB) | (body == 11) | (body == 12)
    cr = np.flatnonzero(body == 13)
    if len(cr):
        if not nl[np.minimum(cr + 1, len(body) - 1)].all():
            return None  # a CR that ends a line by itself: the line parser's
        space[cr] = True
    if np.count_nonzero(body <= 0x20) != np.count_nonzero(space) + np.count_nonzero(nl):
        return None
    token = ~(space | nl)
    first = token.copy()
    first[1:] &= ~token[:-1]
    f_start = np.flatnonzero(first)
    last = token
    last[:-1] &= ~token[1:]
    f_end = np.flatnonzero(last) + 1
    line = np.cumsum(nl)[f_start]  # the line of each field
    new_line = np.ones(len(line), dtype=bool)
    new_line[1:] = line[1:] != line[:-1]
    head = np.flatnonzero(new_line)  # each content line's first field
    count = np.diff(np.append(head, len(line)))
    keep = body[f_start[head]] != _HASH  # comment lines are skipped
    head, count = head[keep], count[keep]
    if (count < n_fields).any() or (not more_fields and (count > n_fields).any()):
        return None

    def field(j: int) -> tuple[np.ndarray, np.ndarray]:
        lo = f_start[head + j]
        return lo, f_end[head + j] - lo

    return field


def _concat_packed(blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> DocIds:
    """One :class:`DocIds` of the blocks' ``(id lengths, packed bytes, hashes)``."""
    length = np.concatenate([n for n, _, _ in blocks])
    start = np.empty(len(length), dtype=np.int64)
    start[0] = 0
    np.cumsum(length[:-1], dtype=np.int64, out=start[1:])
    total = int(start[-1]) + int(length[-1])
    if len(blocks) == 1:
        body = blocks[0][1]
    else:
        body = np.zeros(total + PAD, dtype=np.uint8)
        np.concatenate([b[: len(b) - PAD] for _, b, _ in blocks], out=body[:total])
    hashes = np.concatenate([h for _, _, h in blocks])
    return DocIds.slices(body, start, length, end=total, hashes=hashes)


def _query_blocks(a: np.ndarray, lo: np.ndarray, length: np.ndarray, parts: _Block) -> None:
    """Record the query id (field ``a[lo:lo + length]``) of each block of equal consecutive
    lines, compared exactly 8 bytes at a time, and the block's length."""
    same = np.zeros(len(lo), dtype=bool)
    if len(lo) > 1:
        words = fixed_words(a, lo, length)
        same[1:] = (length[1:] == length[:-1]) & (words[1:] == words[:-1]).all(axis=1)
    head = np.flatnonzero(~same)
    parts.heads.extend(
        a[i : i + k].tobytes().decode() for i, k in zip(lo[head].tolist(), length[head].tolist())
    )
    parts.head_lens = np.diff(np.append(head, len(lo)))


def _parse_numbers(
    a: np.ndarray, lo: np.ndarray, length: np.ndarray, kind: str
) -> np.ndarray | None:
    """The numbers ``a[lo:lo + length]`` as float64 (``kind="float"``) or int64; None when
    one is not a plain decimal (the line parser names it). Column by column: byte j of
    every field at once (faster in numpy than reading eight digits per word, measured)."""
    n = len(lo)
    n_words = -(-int(length.max()) // 8)
    if n_words > 4:  # 33 bytes or more: Python's parser, row by row
        empty = np.zeros(n, dtype=np.float64 if kind == "float" else np.int64)
        return _parse_slowly(a, lo, length, kind, np.arange(n), empty)
    # byte j of every field as one contiguous row: cols[j] (zero past the field's end)
    rows = fixed_words(a, lo, length).view(np.uint8).reshape(n, -1)
    cols = np.ascontiguousarray(rows[:, : int(length.max())].T)
    digit = cols - np.uint8(48)  # wraps below '0'
    is_dig = digit <= 9
    is_dot = cols == _DOT
    ok = is_dig | is_dot
    ok |= cols == 0
    neg = cols[0] == ord("-")
    ok[0] |= neg | (cols[0] == ord("+"))
    n_dig = is_dig.sum(axis=0)
    n_dots = is_dot.sum(axis=0)
    bad = ~ok.all(axis=0) | (n_dots > 1) | (n_dig == 0)
    mant = np.zeros(n, dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    n_frac = np.zeros(n, dtype=np.uint8)  # digits after the dot
    past_dot = np.zeros(n, dtype=bool)
    for j in range(len(cols)):  # wraps past 18 digits: those rows are parsed slowly
        np.multiply(mant, 10, out=tmp)
        tmp += digit[j]
        np.copyto(mant, tmp, where=is_dig[j])
        past_dot |= is_dot[j]
        n_frac += past_dot & is_dig[j]
    if kind == "float":
        bad |= n_dig > 15
        values = mant / _POW10[np.minimum(n_frac, 15)]
        np.negative(values, out=values, where=neg)
    else:
        bad |= (n_dots > 0) | (n_dig > 18)
        values = np.where(neg, -mant, mant)
    return _parse_slowly(a, lo, length, kind, np.flatnonzero(bad), values)


def _parse_slowly(
    a: np.ndarray, lo: np.ndarray, length: np.ndarray, kind: str, rows: np.ndarray,
    values: np.ndarray,
) -> np.ndarray | None:  # fmt: skip
    """Parse ``rows`` with Python (exponents, long mantissas, anything odd) into
    ``values``; None when one is not a plain decimal."""
    for r in rows.tolist():
        raw = a[lo[r] : lo[r] + length[r]].tobytes()
        if kind == "float":
            if not DECIMAL.match(raw) or abs(float(raw)) == float("inf"):
                return None
            values[r] = float(raw)
        else:
            if not INTEGER.match(raw) or not -INT64_LIMIT <= int(raw) < INT64_LIMIT:
                return None
            values[r] = int(raw)
    return values
