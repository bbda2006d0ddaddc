"""Reading a TREC run file for :mod:`.stream`: chunks of whole queries with the number
of their first line, a chunk parsed by the fast reader (or by the line parser, its error
moved to the file's own line), a folder of run files, and the partition of an ungrouped
file into shard files of whole queries."""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io.files import BOM, open_binary
from ..io.scan import line_blocks, read_into, scan
from ..io.trec import read_trec_run
from ..model import Run
from ..model.idbytes import PAD, hash_slices

SHARDS_MAX = 256
"""Shard files at most when an ungrouped file is partitioned."""


def query_chunks(path: Path, size: Any) -> Iterator[tuple[memoryview, int]]:
    """``(bytes, number of the chunk's first line)``: the file in chunks of whole lines of
    at least ``size()`` bytes (asked before each read), each cut where a query's lines end
    (a query longer than a chunk stays whole). Each chunk is a view of a buffer the file is
    read into in place (only the last query's lines are copied, to the next)."""
    line_no = 1
    rest = b""
    first = True
    with open_binary(path) as fh:
        while True:
            want = size()
            buf = bytearray(len(rest) + want + 1)  # + 1: room for a last line feed
            buf[: len(rest)] = rest
            end = len(rest) + read_into(fh, memoryview(buf)[len(rest) : len(rest) + want])
            lo = len(BOM) if first and buf.startswith(BOM) else 0
            first = False
            if end < len(rest) + want:  # the end of the file: the rest is one chunk
                if _has_content(buf, lo, end):
                    if buf[end - 1] != 10:
                        buf[end] = 10
                        end += 1
                    yield memoryview(buf)[lo:end], line_no
                return
            cut = last_query_start(buf, lo, end)
            if cut <= lo:  # one query so far: read on
                rest = bytes(buf[lo:end])
                continue
            rest = bytes(buf[cut:end])
            yield memoryview(buf)[lo:cut], line_no
            line_no += buf.count(b"\n", lo, cut)


def _has_content(buf: bytearray, lo: int, end: int) -> bool:
    """Whether ``buf[lo:end]`` holds more than whitespace (looked at without a copy)."""
    if end <= lo:
        return False
    if not bytes(buf[lo : min(end, lo + 4096)]).isspace():
        return True
    return not bool(WHITESPACE[np.frombuffer(buf, np.uint8, end - lo, lo)].all())


def query_id_of(line: bytes) -> bytes:
    parts = line.split(None, 1)
    return parts[0] if parts else b""


def last_query_start(data: Any, lo: int = 0, end: int | None = None) -> int:
    """Where the lines of the last query of ``data[lo:end]`` begin (whole lines only: a
    partial last line belongs to that query or a later one); ``lo`` when it holds one
    query."""
    stop = data.rfind(b"\n", lo, len(data) if end is None else end)
    if stop < lo:
        return lo
    start = data.rfind(b"\n", lo, stop) + 1 or lo
    start = max(start, lo)
    last = query_id_of(bytes(data[start:stop]))
    while start > lo:
        prev = max(data.rfind(b"\n", lo, start - 1) + 1, lo)
        line = bytes(data[prev : start - 1])
        if line.strip() and not line.lstrip().startswith(b"#") and query_id_of(line) != last:
            return start
        start = prev
    return lo


def consecutive(keys: np.ndarray, distinct: int | None = None) -> bool:
    """Whether equal keys (a query's code or hash per row) sit together: as many runs of
    equal neighbours as distinct keys (``distinct``, when already known)."""
    if not len(keys):
        return True
    runs = int(np.count_nonzero(keys[1:] != keys[:-1])) + 1
    return runs == (len(np.unique(keys)) if distinct is None else distinct)


def read_chunk(path: Path, data: bytes | memoryview, first_line: int | None,
                files: list[Path] | None = None) -> tuple[Run, bool]:  # fmt: skip
    """One chunk as ``(Run, whether each of its queries' lines are consecutive)``: the fast
    reader on the bytes, else the line parser on a temporary copy (taken as grouped), its
    error moved to the file's own line (``first_line``; a shard's lines are not the files':
    the line parser then reads ``files`` to name the line)."""
    got = scan(path, 6, 0, [2], [(4, "float")], more_fields=True, data=data)
    if got is not None:
        codes, vocab = got["q"]
        try:
            return Run.from_arrays(
                (), (), got["nums"][0], source=str(path), name=path.name,
                encoded=(codes, vocab, got["ids"][0], None),
            ), consecutive(codes, len(vocab))  # fmt: skip
        except InputError:
            pass
    fd, tmp = tempfile.mkstemp(suffix=".run")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return read_trec_run(tmp, name=path.name, fast=False), True
    except InputError as exc:
        msg = str(exc)
        prefix = f"{tmp}:"
        if first_line is None:  # a shard: the files' own line parser names the line
            for shard in files or [path]:
                read_trec_run(shard, fast=False)
        elif msg.startswith(prefix):
            n_str, _, rest = msg[len(prefix) :].partition(":")
            if n_str.isdigit():
                raise InputError(f"{path}:{first_line + int(n_str) - 1}:{rest}") from None
        raise InputError(msg.replace(tmp, str(path))) from None
    finally:
        os.unlink(tmp)


def run_files(path: Path) -> list[Path]:
    """The run files of ``path``: itself, or a folder's files in name order (a run written
    in shards; names starting with ``.`` or ``_``, such as Spark's ``_SUCCESS``, skipped)."""
    if path.is_dir():
        files = sorted(
            f for f in path.iterdir() if f.is_file() and not f.name.startswith((".", "_"))
        )
        if not files:
            raise InputError(f"{path}: the folder holds no run file")
    elif path.is_file():
        files = [path]
    else:
        raise InputError(f"{path}: no such run file or folder")
    return files


def shard_count(total: float, size: int) -> int:
    """How many shards a partition of ``total`` bytes into shards of about ``size`` bytes
    makes: half as many again as an even split needs (hashes are uneven), at most
    :data:`SHARDS_MAX`."""
    return int(min(SHARDS_MAX, max(1, -(-3 * total // (2 * size)))))


def query_shards(files: list[Path], folder: Path, size: int) -> Iterator[Path]:
    """The files' lines partitioned by a hash of the query id into shard files of about
    ``size`` bytes (each holding whole queries), yielded one at a time and deleted after."""
    total = sum(f.stat().st_size for f in files)
    n = shard_count(total, size)
    partition(files, folder, n, size)
    for i in range(n):
        shard = folder / f"shard-{i:03d}.run"
        if shard.stat().st_size:
            yield shard
        shard.unlink()


def partition(files: list[Path], folder: Path, n: int, size: int = 1 << 26,
              name: str | None = None) -> list[Path]:  # fmt: skip
    """The files' lines (whole lines of a TREC run or qrels file, the query id first) in
    ``n`` shard files ``folder/shard-NNN.run`` (or ``folder/NNN/name``, so that a shard
    reads under the file's own name) by a hash of the query id (:func:`bucket_lines`: a
    file of labels and a run partitioned alike put each query's labels and lines in shards
    of the same number); read in blocks of about ``size`` bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"shard-{i:03d}.run" if name is None else folder / f"{i:03d}" / name
             for i in range(n)]  # fmt: skip
    for p in paths:
        p.parent.mkdir(exist_ok=True)
    outs = [p.open("wb") for p in paths]
    try:
        block = max(min(size // 2, 1 << 28), 1 << 20)  # fewer blocks: fewer runs per query
        # blocks cut where a query's lines end: a grouped file gives grouped shards
        blocks = (bytes(d) for f in files for d, _ in query_chunks(f, lambda: block))
        for data in blocks:
            for out, part in zip(outs, bucket_lines(data, n)):
                if part:
                    out.write(part)
    finally:
        for out in outs:
            out.close()
    return paths


WHITESPACE = np.zeros(256, dtype=bool)
WHITESPACE[[9, 10, 11, 12, 13, 32]] = True  # what bytes.split() splits on


def line_query_hashes(
    body: np.ndarray, end: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(starts, lengths, query id hashes)`` of the content lines of ``body[:end]`` (whole
    lines; blank and ``#`` lines left out), or None when a line starts with whitespace."""
    nl = np.flatnonzero(body[:end] == 10)
    if not len(nl):
        z = np.zeros(0, np.int64)
        return z, z, z.astype(np.uint64)
    starts = np.r_[0, nl[:-1] + 1]
    lens = nl + 1 - starts
    first = body[starts]
    blank = (lens == 1) | ((lens == 2) & (first == 13))
    if (WHITESPACE[first] & ~blank).any():  # indented lines: as bytes.split() reads them
        return None
    keep = ~blank & (first != 35)  # '#' comments
    starts, lens = starts[keep], lens[keep]
    ws = np.flatnonzero(WHITESPACE[body[:end]])
    qlen = ws[np.searchsorted(ws, starts)] - starts  # a newline always ends the id
    return starts, lens, hash_slices(body, starts, qlen)


def scattered(data: bytes) -> bool:
    """Whether some query's lines in ``data`` (whole lines up to its last line feed) come
    back after another query's: a cheap look before a chunk is read."""
    end = data.rfind(b"\n") + 1
    got = line_query_hashes(np.frombuffer(data[:end] + bytes(PAD), dtype=np.uint8), end)
    if got is None or not len(got[2]):
        return False
    return not consecutive(got[2])


def bucket_lines(data: bytes, n: int) -> list[bytes]:
    """The whole lines of ``data`` in ``n`` buckets by a hash of their first field (the
    query id), blank and comment lines dropped; vectorised (the ids hashed as byte slices,
    the lines gathered in bucket order at once, each query's lines together and in file
    order, so that a shard reads as a few runs per query, not one per line). A line that
    starts with whitespace takes the line-by-line path for its block."""
    body = np.frombuffer(data + bytes(PAD), dtype=np.uint8)
    got = line_query_hashes(body, len(data))
    if got is None:
        return _bucket_lines_slowly(data, n)
    starts, lens, qhash = got
    bucket = (qhash % np.uint64(n)).astype(np.int64)
    order = np.lexsort((qhash, bucket))  # stable: a query's lines stay in file order
    s_lens = lens[order]
    raw = gather_lines(body, starts[order], s_lens).tobytes()
    cuts = np.r_[0, np.cumsum(s_lens)][np.r_[0, np.cumsum(np.bincount(bucket, minlength=n))]]
    return [raw[int(a) : int(b)] for a, b in itertools.pairwise(cuts.tolist())]


def gather_lines(body: np.ndarray, start: np.ndarray, length: np.ndarray,
                 step: int = 1 << 22) -> np.ndarray:  # fmt: skip
    """``body[start[i]:start[i] + length[i]]`` for every i, one after another, gathered
    about ``step`` bytes at a time (a byte index per byte of one step only)."""
    out = np.empty(int(length.sum()), dtype=np.uint8)
    ends = np.cumsum(length)
    i, pos, n = 0, 0, len(start)
    while i < n:
        j = max(int(np.searchsorted(ends, pos + step, side="right")), i + 1)
        ln = length[i:j]
        total = int(ends[j - 1]) - pos
        base = np.repeat(start[i:j] - (np.cumsum(ln) - ln), ln)
        out[pos : pos + total] = body[base + np.arange(total)]
        i, pos = j, pos + total
    return out


def _bucket_lines_slowly(data: bytes, n: int) -> list[bytes]:
    buckets: list[list[bytes]] = [[] for _ in range(n)]
    for line in data.splitlines(keepends=True):
        if not line.strip() or line.lstrip().startswith(b"#"):
            continue
        qid = query_id_of(line)
        body = np.frombuffer(qid + bytes(PAD), dtype=np.uint8)
        h = hash_slices(body, np.zeros(1, np.int64), np.array([len(qid)], np.int64))
        buckets[int(h[0] % np.uint64(n))].append(line)
    return [b"".join(b) for b in buckets]


def file_blocks(path: Path, size: int) -> Iterator[bytes]:
    """The file in blocks of whole lines of about ``size`` bytes (:func:`line_blocks`: a
    BOM dropped, the last line ended)."""
    with open_binary(path) as fh:
        for block in line_blocks(fh, size):
            yield bytes(block)
