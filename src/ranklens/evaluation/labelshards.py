"""Labels too large for what the memory budget leaves: the labels file and the run are
partitioned alike by a hash of the query id into shard files, and each shard's labels are
read and its run streamed (in chunks, :mod:`.stream_plan`) on their own, so neither the labels
nor the run is ever whole in memory; the parts are merged as :func:`~.stream_plan.finish` merges
chunks, into the numbers ``evaluate`` gives, to the last bit.

Reading a TREC qrels file peaks at about :data:`LABEL_READ_LINE_BYTES` bytes per line of
it and :data:`LABEL_READ_FILE_BYTES` per byte (a gzipped one :data:`LABEL_READ_BYTES` per
byte once read); when that would take the process past :data:`LABEL_SHARE` of the budget,
the labels are sharded. TREC runs only: a JSONL or Parquet run's labels are read whole.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import find_format, read_qrels
from ..io.trec import read_trec_qrels, read_trec_run
from ..judging import JudgeCounts, JudgeOptions
from ..judging.freshness import check_as_of_queries, require_versions
from ..judging.freshness_rules import get_freshness_rule
from ..judging.overlap_check import no_shared_query
from . import Evaluation, MetricsLike, versioned_metrics
from .run_files import SHARDS_MAX, partition
from .sources import chunks
from .stream_plan import (
    Partial,
    StreamedEvaluation,
    assemble,
    merge_counts,
    plan,
    release_memory,
    resident_bytes,
    score_files,
    settle,
    trec_lines,
)
from .stream_versions import split_versions

LABEL_READ_BYTES = 8
"""Reading a gzipped TREC qrels file peaks at about this many bytes per byte of it once
read (measured: 7.2, 400 MB for a 55 MB file of 3 million labels; the labels kept take
under half of that). A plain file is sized by its lines and bytes: ..."""
LABEL_READ_LINE_BYTES = 150
"""... about this many bytes per line ..."""
LABEL_READ_FILE_BYTES = 0.6
"""... beside this many per byte of it (measured: 3 x 10^6 labels of 20 and of 78 bytes a
line peaked at 448 and 550 MB: 138 a line and 0.59 a byte; eight bytes a byte would have
said 482 MB and 1.9 GB)."""
LABEL_SHARE = 0.9
"""The most of the budget the process may hold once one shard of labels is being read."""
GZ_RATIO = 4
"""How much larger a gzipped file is taken to be once read."""


def label_bytes(qrels: Any) -> int:
    """About the peak of reading ``qrels`` when it is a TREC qrels file, else 0 (labels
    in memory are in the process's size already; other formats are not sharded)."""
    if not isinstance(qrels, (str, Path)):
        return 0
    p = Path(qrels)
    if not p.is_file() or find_format("qrels", p) is not None:
        return 0
    size = p.stat().st_size
    if p.name.endswith(".gz"):
        return size * GZ_RATIO * LABEL_READ_BYTES
    return int(LABEL_READ_LINE_BYTES * trec_lines(p, size) + LABEL_READ_FILE_BYTES * size)


def label_shard_count(qrels: Any, fmt: str, memory: int | float) -> int:
    """How many shards the labels are read in: 1 (whole) unless they are a TREC qrels
    file whose reading would take the process past :data:`LABEL_SHARE` of the budget, with
    a TREC run."""
    need = label_bytes(qrels)
    if fmt != "trec" or not need or memory == float("inf"):
        return 1
    room = int(memory) * LABEL_SHARE - resident_bytes()
    if need <= room or room <= 0:  # they fit; or no budget is left that shards could keep
        return 1
    return int(min(SHARDS_MAX, math.ceil(1.5 * need / room)))


def evaluate_in_label_shards(
    qrels: str | Path, files: list[Path], n: int, metrics: MetricsLike, memory: int | float,
    options: JudgeOptions | None, version: str, judge_options: dict[str, Any],
    tmp_dir: str | Path | None, bar: Any, path: Path,
    again: Callable[[MetricsLike], Evaluation],
) -> StreamedEvaluation:  # fmt: skip
    """The run in ``files`` evaluated against the TREC qrels file ``qrels`` in ``n``
    shards of both (see the module docstring)."""
    rest, versions, as_of = split_versions(judge_options)
    parsed = versioned_metrics(metrics, version, rest)
    opts = JudgeOptions.build(options, **rest)
    require_versions(versions, as_of, opts.freshness)
    if versions is not None:  # the rule judging applies, as the notes describe it
        opts = replace(opts, freshness=get_freshness_rule(opts.freshness))
    try:
        pieces, counts, n_chunks = _in_shards(
            qrels, files, n, metrics, memory, options, version, judge_options, tmp_dir, bar,
            path,
        )  # fmt: skip
    except InputError as exc:
        if "ranklens-labels-" not in str(exc):
            raise
        # a bad line, found in a shard: the files' own line parser names it
        read_trec_qrels(qrels, fast=False)
        for f in files:
            read_trec_run(f, fast=False)
        raise
    return assemble(pieces, merge_counts(counts), parsed, opts, path, again, n_chunks)


def _in_shards(
    qrels: str | Path, files: list[Path], n: int, metrics: MetricsLike, memory: int | float,
    options: JudgeOptions | None, version: str, judge_options: dict[str, Any],
    tmp_dir: str | Path | None, bar: Any, path: Path,
) -> tuple[list[Any], list[JudgeCounts], int]:  # fmt: skip
    with tempfile.TemporaryDirectory(dir=tmp_dir, prefix="ranklens-labels-") as tmp:
        block = max(int(memory) // 32, 1 << 20)
        label_parts = partition([Path(qrels)], Path(tmp) / "labels", n, block, Path(qrels).name)
        run_parts = partition(files, Path(tmp) / "run", n, block, files[0].name)
        if bar is not None:
            bar.restart("partitioning labels and run by query")
        top = _top_grade(label_parts, judge_options.get("as_of"))  # the whole set's
        pieces: list[Any] = []
        counts: list[JudgeCounts] = []
        n_chunks, seen, shared = 0, False, False
        run_ids: list[str] = []
        label_ids: list[str] = []  # examples for the error of a run sharing no query
        for labels, run in zip(label_parts, run_parts):
            has_run = run.stat().st_size > 0
            if not labels.stat().st_size:
                if has_run:  # queries without labels: counted as ignored
                    counts.append(_ignored(run, int(memory)))
                    seen = True
                continue
            p = plan(labels, metrics, [run] if has_run else [], memory, options, version,
                     judge_options, check_as_of=False)  # fmt: skip
            p.top_grade = top
            part = score_files(p, [run], "trec", tmp_dir, bar) if has_run else Partial()
            seen |= bool(part.seen)
            shared |= any(str(q) in part.seen for q in p.Q.query_ids)
            if len(run_ids) < 5:
                run_ids += [str(q) for q in list(part.seen)[:5]]
            if len(label_ids) < 5:
                label_ids += [str(q) for q in p.Q.query_ids[:5]]
            got, total = settle(p, part, path.name, require_shared=False)
            pieces += got
            counts.append(total)
            n_chunks += part.chunks
            del p, part, got
            release_memory()
    if not seen:
        raise InputError(f"{path}: no run lines (the file is empty or only comments)")
    if not shared:  # the promise of every path: no mean over no answered query
        raise no_shared_query(path.name, run_ids, label_ids)
    return pieces, counts, n_chunks


def _top_grade(label_parts: list[Path], as_of: Any = None) -> int:
    """The labels' highest grade (ERR and custom gains read the whole set's); with as-of
    times per query, an error naming those the labels do not have, as ``evaluate``
    names them, before anything is scored."""
    top = None
    named = set(map(str, as_of)) if isinstance(as_of, Mapping) else set()
    for labels in label_parts:
        if labels.stat().st_size:
            Q = read_qrels(labels)
            if len(Q.grade):
                top = int(Q.grade.max()) if top is None else max(top, int(Q.grade.max()))
            named -= set(map(str, Q.query_ids))
            del Q
        release_memory()
    if named:
        check_as_of_queries(dict.fromkeys(named), [])
    return 0 if top is None else top


def _ignored(run: Path, memory: int) -> JudgeCounts:
    """The queries of a run shard no label names (read in chunks)."""
    ids: list[str] = []
    for chunk in chunks(run, "trec", lambda: max(memory // 16, 1 << 20)):
        ids += [str(q) for q in chunk.run.query_ids]
    return JudgeCounts(queries_ignored=len(ids), ignored_ids=ids)
