"""Reading a TREC run file for :mod:`.stream`: chunks of whole queries with the number
of their first line, a chunk parsed by the fast reader (or by the line parser, its error
moved to the file's own line), a folder of run files, and the partition of an ungrouped
file into shard files of whole queries."""

from __future__ import annotations

import os
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io.files import BOM, open_binary
from ..io.scan import scan
from ..io.trec import read_trec_run
from ..model import Run

SHARDS_MAX = 256
"""Shard files at most when an ungrouped file is partitioned."""


def query_chunks(path: Path, size: Any) -> Iterator[tuple[bytes, int]]:
    """``(bytes, number of the chunk's first line)``: the file in chunks of whole lines of
    at least ``size()`` bytes (asked before each read), each cut where a query's lines end
    (a query longer than a chunk stays whole)."""
    line_no = 1
    rest = b""
    first = True
    with open_binary(path) as fh:
        while True:
            want = size()
            block = fh.read(want)
            data = rest + block
            if first:
                first = False
                if data.startswith(BOM):
                    data = data[len(BOM) :]
            if len(block) < want:  # the end of the file: the rest is one chunk
                if data.strip():
                    yield (data if data.endswith(b"\n") else data + b"\n"), line_no
                return
            cut = last_query_start(data)
            if cut <= 0:  # one query so far: read on
                rest = data
                continue
            chunk, rest = data[:cut], data[cut:]
            yield chunk, line_no
            line_no += chunk.count(b"\n")


def query_id_of(line: bytes) -> bytes:
    parts = line.split(None, 1)
    return parts[0] if parts else b""


def last_query_start(data: bytes) -> int:
    """Where the lines of the last query of ``data`` begin (whole lines only: a partial last
    line belongs to that query or a later one); 0 when ``data`` holds one query."""
    end = data.rfind(b"\n")
    if end < 0:
        return 0
    start = data.rfind(b"\n", 0, end) + 1
    last = query_id_of(data[start:end])
    while start > 0:
        prev = data.rfind(b"\n", 0, start - 1) + 1
        line = data[prev : start - 1]
        if line.strip() and not line.lstrip().startswith(b"#") and query_id_of(line) != last:
            return start
        start = prev
    return 0


def read_chunk(path: Path, data: bytes, first_line: int | None,
                files: list[Path] | None = None) -> Run:  # fmt: skip
    """One chunk as a Run: the fast reader on the bytes, else the line parser on a
    temporary copy, its error moved to the file's own line (``first_line``; a shard's
    lines are not the files': the line parser then reads ``files`` to name the line)."""
    got = scan(path, 6, 0, [2], [(4, "float")], more_fields=True, data=data)
    if got is not None:
        try:
            return Run.from_arrays(
                None, None, got["nums"][0], source=str(path), name=path.name,
                encoded=(*got["q"], got["ids"][0], None),
            )  # fmt: skip
        except InputError:
            pass
    fd, tmp = tempfile.mkstemp(suffix=".run")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return read_trec_run(tmp, name=path.name, fast=False)
    except InputError as exc:
        msg = str(exc)
        prefix = f"{tmp}:"
        if first_line is None:  # a shard: the files' own line parser names the line
            for f in files or [path]:
                read_trec_run(f, fast=False)
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


def query_shards(files: list[Path], folder: Path, size: int) -> Iterator[Path]:
    """The files' lines partitioned by a hash of the query id into shard files of about
    ``size`` bytes (each holding whole queries), yielded one at a time and deleted after."""
    total = sum(f.stat().st_size for f in files)
    n = int(min(SHARDS_MAX, max(1, -(-3 * total // (2 * size)))))  # room for uneven hashes
    outs = [(folder / f"shard-{i:03d}.run").open("wb") for i in range(n)]
    try:
        for data in (d for f in files for d, _ in line_chunks(f, 1 << 22)):
            buckets: list[list[bytes]] = [[] for _ in range(n)]
            for line in data.splitlines(keepends=True):
                if not line.strip() or line.lstrip().startswith(b"#"):
                    continue
                buckets[zlib.crc32(query_id_of(line)) % n].append(line)
            for out, b in zip(outs, buckets):
                if b:
                    out.write(b"".join(b))
    finally:
        for out in outs:
            out.close()
    for i in range(n):
        shard = folder / f"shard-{i:03d}.run"
        if shard.stat().st_size:
            yield shard
        shard.unlink()


def line_chunks(path: Path, size: int) -> Iterator[tuple[bytes, int]]:
    """The file in blocks of whole lines (the second item is unused: 0)."""
    rest = b""
    with open_binary(path) as fh:
        while True:
            block = fh.read(size)
            data = rest + block
            if not block:
                if data:
                    yield (data if data.endswith(b"\n") else data + b"\n"), 0
                return
            cut = data.rfind(b"\n") + 1
            data, rest = data[:cut], data[cut:]
            if data:
                yield data, 0
