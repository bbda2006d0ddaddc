"""The run files :mod:`.stream` reads, by format: TREC run files and JSONL runs in chunks of
whole lines (a TREC chunk cut where a query's lines end; a JSONL line is one query), Parquet
runs in record batches (a batch's last query carried into the next, so each chunk holds
whole queries), and the partition of an ungrouped TREC or Parquet run into shard files of
whole queries."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io.jsonl import run_from_records
from ..io.parquet import (
    checked_columns,
    pyarrow_parquet,
    read_run_parquet,
    run_columns,
    run_from_table,
)
from ..io.records import json_records
from ..model import Run
from .run_files import (
    consecutive,
    file_blocks,
    query_chunks,
    query_shards,
    read_chunk,
    scattered,
    shard_count,
)

FORMATS = {".jsonl": "jsonl", ".parquet": "parquet"}
"""Suffixes read as other than TREC (a ``.gz`` suffix is looked through)."""
PARQUET_ROW_BYTES = 48
"""The fewest bytes a Parquet row is taken to hold once read (ids, score, codes)."""


@dataclass
class Chunk:
    """One chunk: the run of its queries, the bytes of file it stands for (for progress),
    for JSONL each query's line number (a query on two lines is an error), and whether
    each query's rows were consecutive (if not, the run is partitioned before scoring)."""

    run: Run
    nbytes: int
    lines: dict[str, int] | None = None
    grouped: bool = True


def file_format(path: Path) -> str:
    """``"trec"``, ``"jsonl"`` or ``"parquet"`` by the file's suffix (``.json`` refused)."""
    name = path.name.lower().removesuffix(".gz")
    suffix = Path(name).suffix
    if suffix == ".json" or (suffix == ".csv" and not path.is_dir()):
        raise InputError(
            f"{path}: evaluate_file streams TREC, JSONL and Parquet run files; a single "
            "JSON object is read whole: evaluate it with ranklens.evaluate, or write it as JSONL"
        )
    return FORMATS.get(suffix, "trec")


def files_format(files: list[Path]) -> str:
    """The one format of a run's files (a folder mixing formats is refused)."""
    kinds = {f: file_format(f) for f in files}
    if len(set(kinds.values())) > 1:
        a, b = sorted(kinds, key=lambda f: kinds[f])[:: len(kinds) - 1][:2]
        raise InputError(f"{a.parent}: the folder mixes run formats ({a.name}, {b.name})")
    return next(iter(kinds.values()))


def chunks(path: Path, fmt: str, size: Callable[[], int]) -> Iterator[Chunk]:
    """The file's chunks of whole queries, each of at least ``size()`` bytes of file."""
    if fmt == "trec":
        for data, first_line in query_chunks(path, size):
            if scattered(bytes(data[: 1 << 20])):  # seen in its first MB: not worth reading it
                yield Chunk(Run.from_dict({}), len(data), grouped=False)
                return
            run, grouped = read_chunk(path, data, first_line)
            yield Chunk(run, len(data), grouped=grouped)
    elif fmt == "jsonl":
        line_no = 1
        for block in file_blocks(path, size()):
            lines = _decoded(path, block, line_no)
            seen: dict[str, int] = {}
            run = run_from_records(path, json_records(path, lines), path.name.split(".")[0], seen)
            yield Chunk(run, len(block), seen)
            line_no += block.count(b"\n")
    else:
        yield from _parquet_chunks(path, size)


def _decoded(path: Path, data: bytes, first: int) -> Iterator[tuple[int, str]]:
    for i, raw in enumerate(data.splitlines(), first):
        try:
            yield i, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}:{i}: not UTF-8 text ({exc.reason})") from None


def _parquet_file(path: Path) -> Any:
    pq = pyarrow_parquet()
    try:
        return pq.ParquetFile(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read parquet ({exc})") from None


def _row_bytes(pf: Any) -> float:
    meta = pf.metadata
    raw = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    per_row: float = max(raw / max(meta.num_rows, 1), PARQUET_ROW_BYTES)
    return per_row


def query_buckets(column: Any, n: int) -> np.ndarray:
    """Each row's bucket, ``crc32(query id) % n``, hashed once per distinct id (pyarrow's
    dictionary encoding); integer ids are hashed as their decimal text."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type):
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            column = column.cast(pa.string())
        column = column.dictionary_encode()
    words = column.dictionary.to_pylist()
    hashed = np.array([zlib.crc32(str(w).encode()) % n for w in words], dtype=np.int64)
    buckets: np.ndarray = hashed[column.indices.to_numpy(zero_copy_only=False)]
    return buckets


def _grouped(column: Any) -> bool:
    """Whether each query's rows are consecutive in the column."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    enc = column if pa.types.is_dictionary(column.type) else column.dictionary_encode()
    return consecutive(enc.indices.to_numpy(zero_copy_only=False), len(enc.dictionary))


def _parquet_chunks(path: Path, size: Callable[[], int]) -> Iterator[Chunk]:
    import pyarrow as pa
    import pyarrow.compute as pc

    pf = _parquet_file(path)
    names = list(pf.schema_arrow.names)
    qcol = run_columns(names, path)[0]
    per_row = _row_bytes(pf)
    on_disk = path.stat().st_size / max(pf.metadata.num_rows, 1)
    batch = max(int(size() / per_row), 1024)
    rest, first_row = None, 0
    for b in pf.iter_batches(batch_size=batch):
        table = pa.Table.from_batches([b]) if rest is None else pa.concat_tables(
            [rest, pa.Table.from_batches([b])]
        )  # fmt: skip
        q = table.column(qcol)
        last = q[len(q) - 1]
        keep = len(q)
        if last.is_valid:  # the last query's rows may go on in the next batch
            same = pc.fill_null(pc.equal(q, last), False).to_numpy(zero_copy_only=False)
            keep = int(np.flatnonzero(~same)[-1]) + 1 if not same.all() else 0
        if keep == 0:
            rest = table
            continue
        head = table.slice(0, keep)
        yield Chunk(run_from_table(head, path, path.name.split(".")[0], first_row),
                    int(keep * on_disk), grouped=_grouped(head.column(qcol)))  # fmt: skip
        first_row += keep
        rest = table.slice(keep)
    if rest is not None and len(rest):
        yield Chunk(run_from_table(rest, path, path.name.split(".")[0], first_row),
                    int(len(rest) * on_disk), grouped=_grouped(rest.column(qcol)))  # fmt: skip


def shards(files: list[Path], fmt: str, folder: Path, size: int) -> Iterator[tuple[Run, int]]:
    """The files' rows partitioned by a hash of the query id into shards of whole queries
    (temporary files in ``folder``, each deleted once read): ``(run, the shard's bytes)``."""
    if fmt == "jsonl":  # cannot happen: a JSONL query is one line (refused if repeated)
        raise InputError(f"{files[0]}: a JSONL run holds each query on one line")
    if fmt == "trec":
        for shard in query_shards(files, folder, size):
            data = shard.read_bytes()
            yield read_chunk(files[0], data, None, files)[0], len(data)  # whole queries
        return
    yield from _parquet_shards(files, folder, size)


def _parquet_shards(files: list[Path], folder: Path, size: int) -> Iterator[tuple[Run, int]]:
    import pyarrow as pa

    pq = pyarrow_parquet()
    opened = [_parquet_file(f) for f in files]
    total = sum(pf.metadata.num_rows * _row_bytes(pf) for pf in opened)
    n = shard_count(total, size)
    writers: dict[int, Any] = {}
    schema = None
    try:
        for f, pf in zip(files, opened):
            qcol = run_columns(list(pf.schema_arrow.names), f)[0]
            first_row = 0
            for b in pf.iter_batches(batch_size=1 << 16):
                table = pa.Table.from_batches([b])
                checked_columns(table, f, first_row)  # a null is named by the file's row
                first_row += len(table)
                schema = schema or table.schema
                if table.schema != schema:
                    raise InputError(f"{f}: its columns differ from {files[0].name}'s")
                bucket = query_buckets(table.column(qcol), n)
                for k in np.unique(bucket).tolist():
                    if k not in writers:
                        writers[k] = pq.ParquetWriter(folder / f"shard-{k:03d}.parquet", schema)
                    writers[k].write_table(table.filter(pa.array(bucket == k)))
    finally:
        for w in writers.values():
            w.close()
    for k in sorted(writers):
        shard = folder / f"shard-{k:03d}.parquet"
        yield read_run_parquet(shard, name=files[0].name.split(".")[0]), shard.stat().st_size
        shard.unlink()
