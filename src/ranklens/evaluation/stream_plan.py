"""The pieces of out-of-core evaluation, shared by :mod:`.stream` (one process) and
:mod:`.on_ray` (Ray tasks): a :class:`Plan` (labels, metrics, options and chunk size, fixed
once), the scoring of a run's chunks into a :class:`Partial` (per-query values and counts),
and :func:`finish`, which merges parts into a :class:`StreamedEvaluation` equal to the
in-memory one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, NoSharedQueryError
from ..io import coerce_qrels, find_format
from ..judging import JudgeCounts, JudgeOptions, judge
from ..judging.overlap_check import no_relevant_query, no_shared_query
from ..metrics import Metric
from ..model import Qrels, QrelsLike, Run
from ..model import segments as seg
from ..model.spans import SpanLabels
from ..model.vocab import sort_order
from . import Evaluation, MetricsLike, versioned_metrics
from .sources import chunks, shards
from .stream_versions import VERSION_ROW_BYTES, StreamVersions, split_versions, with_versions

BYTES_PER_CHUNK_BYTE = 9
"""Judging a run file whole holds at most about this many bytes per byte of it (ids,
codes, orders; measured with few labels per query): the first, cheap bound. A TREC file
is then sized by its lines (:func:`whole_trec_bytes`)."""
LINE_BYTES = 48
"""Judging a TREC run file whole holds about this many bytes per line of it ..."""
FILE_BYTES = 1.0
"""... beside about this many per byte of it (its ids), and ..."""
LABEL_LINE_BYTES = 220
"""... about this many per line of a TREC qrels file read with it (the labels, their side
of the join and of the judged arrays) ..."""
LABEL_FILE_BYTES = 1.1
"""... beside about this many per byte of it. Measured (peak resident size, 10^7 run
lines of 40 and of 99 bytes, 3 x 10^6 label lines of 20 and of 78 bytes): 46 and 0.92 for
runs, 216 and 1.1 for labels; benchmarks/README.md has the runs."""
WHOLE_MARGIN = 1.15
"""What the estimate of a whole read is raised by before it is held against the budget."""
RUN_BYTES = 6
"""A chunk's working set per byte of run file in it (reading, the join, the judged
arrays), measured on MS MARCO-shaped runs ..."""
LABEL_ROW_BYTES = 500
"""... plus this many per label row of the chunk's queries (the labels' side of the join
and of the judged arrays: about 400 measured with 30 labels per query) ..."""
WORKING_FIXED = 64 << 20
"""... plus this much whatever the chunk (the reader's threads and buffers, the interpreter's
pools): ``benchmarks/README.md`` has the measurements."""
BUDGET_SHARE = 0.9
"""The share of the budget chunks are sized for: the rest covers the estimates' error (a
10^6 x 100 run with 30 labels per query peaked 1.4% over a 2 GiB budget sized for all of
it)."""
MIN_CHUNK = 1 << 16
"""The smallest chunk read (a query longer than a chunk is read whole all the same)."""


def trec_lines(path: Path, size: int) -> int:
    """About how many lines a plain TREC file of ``size`` bytes holds, from the lines in
    its first MiB."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 20)
    return max(1, round(size * max(head.count(b"\n"), 1) / max(len(head), 1)))


def whole_trec_bytes(run: Path, qrels: Any) -> int | None:
    """About the peak of judging the plain (not gzipped) TREC run file ``run`` whole, with
    ``qrels`` when it is a plain TREC qrels file too (labels held in memory are in the
    process's size already): see :data:`LINE_BYTES`. None for any other file."""
    if run.name.endswith(".gz"):
        return None
    size = run.stat().st_size
    need = LINE_BYTES * trec_lines(run, size) + FILE_BYTES * size
    if isinstance(qrels, (str, Path)) and Path(qrels).is_file():
        q = Path(qrels)
        if q.name.endswith(".gz") or find_format("qrels", q) is not None:  # not plain TREC
            return None
        qsize = q.stat().st_size
        need += LABEL_LINE_BYTES * trec_lines(q, qsize) + LABEL_FILE_BYTES * qsize
    return int(need * WHOLE_MARGIN) + WORKING_FIXED


def release_memory() -> None:
    """Give freed memory back to the system (glibc keeps what the reader's threads freed in
    their own arenas; elsewhere nothing to do)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def resident_bytes() -> int:
    """This process's resident memory in bytes (0 where ``/proc`` is not there)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class StreamedEvaluation(Evaluation):
    """An :class:`~ranklens.Evaluation` of a run read in chunks: the same per-query values,
    aggregates and counts; it keeps no judged arrays, so more metrics need another pass
    (:meth:`evaluate` reads the file again)."""

    def __init__(self, judged: Any, metrics: list[Metric], values: dict[str, np.ndarray],
                 again: Callable[[MetricsLike], Evaluation], chunks: int):  # fmt: skip
        super().__init__(judged, metrics, values)
        self._again = again
        self.chunks = chunks

    def evaluate(self, metrics: MetricsLike) -> Evaluation:
        return self._again(metrics)


class _Summary:
    """What :class:`Evaluation` reads of a judged pair, for a run judged in chunks; the
    judged arrays themselves were let go chunk by chunk, and asking for them says so."""

    def __init__(self, query_ids: np.ndarray, counts: JudgeCounts, options: JudgeOptions,
                 run_name: str):  # fmt: skip
        self.query_ids, self.counts, self.options = query_ids, counts, options
        self.run_name = run_name

    @property
    def convention(self) -> Any:
        return self.options.convention

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise InputError(
            f"this evaluation streamed run {self.run_name!r} in chunks within a memory budget "
            f"and kept per-query values only, not the judged arrays ({name!r}); for what needs "
            "them, evaluate in memory: ranklens.evaluate(..., memory=float('inf'))"
        )


@dataclass
class Plan:
    """What every chunk of one evaluation shares (shipped whole to Ray workers): the
    labels, the metrics, the judging options (missing queries skipped per chunk), the
    chunk size in bytes, and the document versions (:mod:`.stream_versions`)."""

    Q: Qrels
    q_str: np.ndarray
    metrics: list[Metric]
    options: JudgeOptions
    chunk_options: JudgeOptions
    top_grade: int
    size: int
    work: int = 1 << 30  # the bytes a chunk's judging may hold (size times what a byte costs)
    fresh: StreamVersions | None = None
    budget: dict[str, Any] = field(default_factory=dict)
    """What budget metrics size chunks with (``texts``, ``budget_tokenizer``), given to
    every chunk's judging."""

    def judge_kwargs(self, query_ids: Any) -> dict[str, Any]:
        """What judging a chunk of ``query_ids`` takes besides the options: the budget
        metrics' sizes (``texts``, ``budget_tokenizer``), the versions and those queries'
        as-of times."""
        return {**self.budget, **({} if self.fresh is None else self.fresh.judge_kwargs(query_ids))}


@dataclass
class Partial:
    """What chunks of a run give, to be merged: per-query values, judging's counts, and
    where each query was read (a query met twice is refused or partitioned)."""

    pieces: list[tuple[np.ndarray, dict[str, np.ndarray]]] = field(default_factory=list)
    counts: list[JudgeCounts] = field(default_factory=list)
    seen: dict[str, str] = field(default_factory=dict)
    chunks: int = 0


def plan(
    qrels: QrelsLike, metrics: MetricsLike, files: list[Path], memory: int | float,
    options: JudgeOptions | None, version: str, judge_options: dict[str, Any],
    check_as_of: bool = True,
) -> Plan:  # fmt: skip
    """The labels read once (carried to versions, with ``versions=``) and the chunk size
    fixed: what the budget leaves after the process's memory, every query's values and
    what judging with versions holds per table row, over :data:`BYTES_PER_CHUNK_BYTE`.
    ``check_as_of=False``: the labels are one shard of them (:mod:`.labelshards`)."""
    budget = int(memory)
    if budget < 1000:
        raise InputError(f"memory must be at least 1000 bytes, got {memory!r}")
    judge_options, versions, as_of = split_versions(judge_options)
    parsed = versioned_metrics(metrics, version, judge_options)
    budget_kw: dict[str, Any] = {
        k: judge_options.pop(k) for k in ("texts", "budget_tokenizer") if k in judge_options
    }
    opts = JudgeOptions.build(options, **judge_options)
    Q = coerce_qrels(qrels)
    Q, opts, fresh = with_versions(Q, opts, versions, as_of, check_as_of)  # as evaluate refuses
    if isinstance(Q, SpanLabels):
        raise InputError(
            "span labels are evaluated in memory (ranklens.evaluate(..., memory=float('inf'))): "
            "a run of chunks with positions is not streamed"
        )
    Q.docs.hashes()  # computed once: each chunk's labels take their rows' hashes
    top_grade = int(Q.grade.max()) if len(Q.grade) else 0
    q_str = Q.query_ids.astype(str)
    release_memory()  # what reading the labels freed, before the process's size is taken
    left = (
        int(budget * BUDGET_SHARE)
        - resident_bytes()
        - _per_query_bytes(len(q_str), len(parsed))
        - WORKING_FIXED
        - (VERSION_ROW_BYTES * fresh.table_rows() if fresh is not None else 0)
    )
    # never ask for more than a file (a Ray Dataset's buckets come whole: no files)
    sizes = [f.stat().st_size for f in files]
    largest = max(sizes, default=budget) + 1
    labels_per_byte = len(Q.q) / max(sum(sizes), 1) if sizes else 0.0
    per_byte = RUN_BYTES + LABEL_ROW_BYTES * labels_per_byte
    size = min(max(int(left // per_byte), MIN_CHUNK), largest)
    chunk_opts = replace(opts, convention=replace(opts.convention, missing="skip"))
    work = int(size * per_byte)
    return Plan(Q, q_str, parsed, opts, chunk_opts, top_grade, size, work, fresh, budget_kw)


def score_files(p: Plan, files: list[Path], fmt: str, tmp_dir: str | Path | None = None,
                bar: Any = None) -> Partial:  # fmt: skip
    """Score the run in ``files`` chunk by chunk; a TREC or Parquet run whose queries come
    back after other queries is partitioned into shards of whole queries first."""
    out = Partial()
    if not _score_in_order(p, files, fmt, bar, out):
        out = Partial()  # what was scored goes: every row is read again, by query
        release_memory()
        return _partitioned(p, files, fmt, tmp_dir, bar)
    return out


def _score_in_order(p: Plan, files: list[Path], fmt: str, bar: Any, out: Partial) -> bool:
    """Score the files' chunks into ``out`` in file order; False (the chunk in hand let
    go) at the first sign that a query's rows are not consecutive."""
    for f in files:
        for chunk in chunks(f, fmt, lambda: p.size):
            ids = [str(q) for q in chunk.run.query_ids]
            again = next((q for q in ids if q in out.seen), None)
            if again is not None and fmt == "jsonl":
                raise InputError(
                    f"{f}:{(chunk.lines or {}).get(again, '?')}: query {again!r} appears on "
                    f"more than one line (also on {out.seen[again]})"
                )
            if again is not None or not chunk.grouped:  # found before scoring, if it can be
                return False  # the generator, and the chunk with it, closed here
            if chunk.lines is None:
                out.seen.update(dict.fromkeys(ids, f.name))
            else:
                out.seen.update({q: f"{f.name}:{line}" for q, line in chunk.lines.items()})
            out.chunks += 1
            score_chunk(p, chunk.run, out)
            if bar is not None:
                bar.advance(chunk.nbytes)
    return True


def _partitioned(p: Plan, files: list[Path], fmt: str, tmp_dir: str | Path | None,
                 bar: Any) -> Partial:  # fmt: skip
    out = Partial()
    if bar is not None:
        bar.restart("partitioning by query")
    with tempfile.TemporaryDirectory(dir=tmp_dir, prefix="ranklens-shards-") as tmp:
        for run_chunk, nbytes in shards(files, fmt, Path(tmp), p.size):
            out.seen.update(dict.fromkeys((str(q) for q in run_chunk.query_ids), "a shard"))
            out.chunks += 1
            score_chunk(p, run_chunk, out)
            if bar is not None:
                bar.advance(nbytes)
    return out


def finish(p: Plan, part: Partial, path: Path,
           again: Callable[[MetricsLike], Evaluation]) -> StreamedEvaluation:  # fmt: skip
    """The evaluation of the merged parts: missing labelled queries settled (as
    ``evaluate`` settles them), counts summed, values in the labels' query order."""
    if not part.seen:
        raise InputError(f"{path}: no run lines (the file is empty or only comments)")
    pieces, total = settle(p, part, path.name)
    return assemble(pieces, total, p.metrics, p.options, path, again, part.chunks)


def settle(
    p: Plan, part: Partial, name: str, require_shared: bool = True
) -> tuple[list[Any], JudgeCounts]:
    """The parts' per-query values and counts, with the labelled queries the run never
    retrieved settled as ``evaluate`` settles them (scored 0, or skipped and counted).
    ``require_shared=False`` for one shard of labels: the whole run is checked by the
    caller."""
    Q, opts = p.Q, p.options
    absent = [str(q) for q in Q.query_ids if str(q) not in part.seen]
    if require_shared and len(absent) == len(Q.query_ids):  # no labelled query answered
        raise no_shared_query(name, list(part.seen), [str(q) for q in p.q_str])
    pieces = list(part.pieces)
    missing_counts = [JudgeCounts()]
    if absent and opts.missing == "zero":
        placeholder = Run.from_dict({_unused_id(Q, part.seen): ["-"]}, name=name)
        # in batches of labels as large as a chunk's judging may hold
        for batch in _label_batches(Q, p.q_str, absent, max(p.work // LABEL_ROW_BYTES, 4096)):
            judged = judge(_labels_of(Q, p.q_str, batch), placeholder, opts,
                           require_shared=False, **p.judge_kwargs(batch))  # fmt: skip
            judged.max_grade = p.top_grade
            ev = Evaluation.from_judged(judged, p.metrics)
            pieces.append((np.array(ev.query_ids, dtype=object), ev.per_query))
            missing_counts.append(replace(judged.counts, queries_ignored=0, ignored_ids=[]))
            del judged, ev
            release_memory()
    elif absent:
        missing_counts = [JudgeCounts(queries_missing=len(absent), missing_ids=absent)]
    plan_counts = [p.fresh.counts()] if p.fresh is not None else []  # labels carried
    return pieces, merge_counts([*part.counts, *missing_counts, *plan_counts])


def _label_batches(Q: Qrels, q_str: np.ndarray, ids: list[str], rows: int) -> list[np.ndarray]:
    """``ids`` (labelled queries) in batches whose labels hold about ``rows`` rows."""
    want = np.array(ids, dtype=object)
    at = np.minimum(np.searchsorted(q_str, want.astype(str)), max(len(q_str) - 1, 0))
    per_q = np.bincount(Q.q, minlength=len(q_str))[at]
    batch = np.cumsum(per_q) // max(rows, 1)
    cuts = np.flatnonzero(np.diff(batch)) + 1
    return np.split(want, cuts)


def assemble(
    pieces: list[Any], total: JudgeCounts, metrics: list[Metric], options: JudgeOptions, path: Path,
    again: Callable[[MetricsLike], Evaluation], chunks: int,
) -> StreamedEvaluation:  # fmt: skip
    """Every query's values in the labels' query order (sorted ids), as ``evaluate``
    orders them, so the aggregates equal its own to the last bit."""
    if not pieces or sum(len(q) for q, _ in pieces) == 0:
        level, conv = options.relevance_level, options.convention.name
        raise no_relevant_query(path.name, total.no_relevant_ids, level, conv)
    qids = np.concatenate([q for q, _ in pieces])
    order = sort_order(qids)
    values = {mt.name: np.concatenate([v[mt.name] for _, v in pieces])[order] for mt in metrics}
    summary = _Summary(qids[order], replace(total, queries_evaluated=len(qids)), options,
                       path.name)  # fmt: skip
    return StreamedEvaluation(summary, metrics, values, again, chunks)


def _labels_of(Q: Qrels, q_str: np.ndarray, run: Run | np.ndarray) -> Qrels:
    """The labels of the run's queries (or of the query ids given) only, sliced from
    ``Q``'s rows (grouped by query), so a chunk costs in proportion to itself."""
    ids = run.query_ids if isinstance(run, Run) else run
    want = np.asarray(ids).astype(str)
    at = np.minimum(np.searchsorted(q_str, want), max(len(q_str) - 1, 0))
    codes = np.unique(at[q_str[at] == want]) if len(q_str) else np.zeros(0, np.int64)
    lo, hi = np.searchsorted(Q.q, codes), np.searchsorted(Q.q, codes, side="right")
    sizes = hi - lo
    rows = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    unit = np.cumsum(seg.run_starts(Q.unit[rows])) - 1 if len(rows) else Q.unit[:0]
    return Qrels(
        Q.query_ids[codes], None, np.repeat(np.arange(len(codes)), sizes), None,
        Q.grade[rows], unit, Q.grouped, docs=Q.docs.take(rows),
        intent=None if Q.intent is None else Q.intent[rows],
    )  # fmt: skip


def _per_query_bytes(n_queries: int, n_metrics: int) -> int:
    """What the gathered per-query values and ids take at the end, with the final merge's
    copies and sort (about)."""
    return n_queries * (24 * n_metrics + 200)


def score_chunk(p: Plan, run: Run, out: Partial) -> None:
    """Judge one chunk (missing queries skipped: they are settled once at the end); the
    labels' highest grade is the whole set's (ERR and custom gains read it)."""
    labels = _labels_of(p.Q, p.q_str, run)
    if len(labels.query_ids) == 0:  # a chunk of unlabelled queries only
        ignored = [str(q) for q in run.query_ids]
        out.counts.append(JudgeCounts(queries_ignored=len(ignored), ignored_ids=ignored))
        return
    try:
        judged = judge(labels, run, p.chunk_options, **p.judge_kwargs(labels.query_ids))
    except NoSharedQueryError as exc:  # no query left: none with a relevant document
        skipped = list(getattr(exc, "no_relevant_ids", []))
        ignored = [str(q) for q in run.query_ids if str(q) not in set(skipped)]
        out.counts.append(JudgeCounts(queries_ignored=len(ignored), ignored_ids=ignored,
                                      queries_no_relevant_skipped=len(skipped),
                                      no_relevant_ids=skipped))  # fmt: skip
        return
    judged.max_grade = p.top_grade
    ev = Evaluation.from_judged(judged, p.metrics)
    out.pieces.append((np.array(ev.query_ids, dtype=object), ev.per_query))
    out.counts.append(replace(judged.counts, queries_missing=0, missing_ids=[]))
    del judged, ev
    release_memory()


def merge_counts(parts: list[JudgeCounts]) -> JudgeCounts:
    out: dict[str, Any] = {}
    for f in fields(JudgeCounts):
        vals = [getattr(p, f.name) for p in parts]
        if f.name == "failures":
            out[f.name] = {k: v for d in vals for k, v in d.items()}
        elif f.name == "freshness":  # counts of judging with versions (None without)
            given = [v for v in vals if v]
            out[f.name] = {k: sum(v.get(k, 0) for v in given) for k in given[0]} if given else None
        elif isinstance(vals[0], list):
            out[f.name] = [x for v in vals for x in v]
        else:
            out[f.name] = sum(vals)
    return JudgeCounts(**out)


def _unused_id(Q: Any, seen: Mapping[str, str]) -> str:
    taken = {str(q) for q in Q.query_ids} | set(seen)
    name = "ranklens-no-query"
    while name in taken:
        name += "_"
    return name
