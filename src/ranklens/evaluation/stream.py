"""Evaluating run files larger than memory: :func:`evaluate_file`.

The run file is read in chunks of whole queries (what the budget leaves once the labels are
read and room is kept for every query's values, divided by six: judging holds up to about
six times a chunk's bytes), each chunk judged and scored on its own against its queries'
labels, and the per-query values gathered; the aggregates are then computed from all
per-query values in the labels' query order, so every number equals the in-memory
:func:`ranklens.evaluate`'s to the last bit (a query's values depend on its rows only).

* A file grouped by query (every TREC run file a system writes) is streamed once. A file
  whose queries come back after another query's lines is first partitioned by a hash of
  the query id into temporary shard files (each holding whole queries), then each shard is
  evaluated; the shards are deleted afterwards.
* Labelled queries absent from the whole file are scored as ``evaluate`` scores them
  (``missing="zero"``: 0, counted; ``"skip"``: left out); what judging counted (ignored run
  queries, duplicates, ties) is summed over the chunks.
* A line the fast reader cannot read sends its chunk to the line parser, whose error names
  the file's own line number.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io import coerce_qrels
from ..judging import JudgeCounts, JudgeOptions, judge
from ..model import Qrels, QrelsLike, Run
from ..model import segments as seg
from . import Evaluation, MetricsLike, versioned_metrics
from .chunks import query_chunks, query_shards, read_chunk, run_files

DEFAULT_MEMORY = 2_000_000_000
"""The default budget in bytes (about 2 GB)."""
BYTES_PER_CHUNK_BYTE = 9
"""Judging holds about this many bytes per byte of run file read (ids, codes, orders)."""
MIN_CHUNK = 1 << 16
"""The smallest chunk read (a query longer than a chunk is read whole all the same)."""


def _release() -> None:
    """Give freed memory back to the system (glibc keeps what the reader's threads freed in
    their own arenas; elsewhere nothing to do)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _resident() -> int:
    """This process's resident memory in bytes (0 where ``/proc`` is not there)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def parse_bytes(text: str | int | float) -> int:
    """A size such as ``2G``, ``500M``, ``64K`` or ``1e9`` in bytes (powers of 1024)."""
    s = str(text).strip().upper().removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(s[-1:], 1)
    try:
        value = float(s[:-1] if scale > 1 else s) * scale
    except ValueError:
        raise InputError(f"a memory size is a number with K, M or G, got {text!r}") from None
    if not value >= 1000:
        raise InputError(f"memory must be at least 1000 bytes, got {text!r}")
    return int(value)


class StreamedEvaluation(Evaluation):
    """An :class:`~ranklens.Evaluation` of a run read in chunks: the same per-query values,
    aggregates and counts; it keeps no judged arrays, so more metrics need another pass
    (:meth:`evaluate` reads the file again)."""

    def __init__(self, judged: Any, metrics: list, values: dict[str, np.ndarray],
                 source: tuple[Any, Path, dict[str, Any]], chunks: int):  # fmt: skip
        super().__init__(judged, metrics, values)
        self._source = source
        self.chunks = chunks

    def evaluate(self, metrics: MetricsLike) -> Evaluation:
        qrels, path, kw = self._source
        return evaluate_file(qrels, path, metrics, **kw)


class _Summary:
    """What :class:`Evaluation` reads of a judged pair, for a run judged in chunks."""

    def __init__(self, query_ids: np.ndarray, counts: JudgeCounts, options: JudgeOptions):
        self.query_ids, self.counts, self.options = query_ids, counts, options

    @property
    def convention(self) -> Any:
        return self.options.convention


def evaluate_file(
    qrels: QrelsLike,
    run: str | Path,
    metrics: MetricsLike,
    *,
    memory: int | float = DEFAULT_MEMORY,
    options: JudgeOptions | None = None,
    tmp_dir: str | Path | None = None,
    trec_eval_version: str = "10",
    **judge_options: Any,
) -> StreamedEvaluation:
    """Evaluate the TREC run file ``run`` (or a folder of run files: one run written in
    shards, read in name order) in chunks of whole queries, within about
    ``memory`` bytes (see the module docstring); the result equals
    ``ranklens.evaluate(qrels, run, metrics, ...)``.

    ``judge_options`` and ``trec_eval_version``: as for :func:`ranklens.evaluate`
    (``relevance_level``, ``missing``, ``convention``...). ``tmp_dir``: where an
    ungrouped file's shards go
    (default: the system's temporary folder).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "r.run").write_text("q1 Q0 a 1 2 r\\nq1 Q0 b 2 1 r\\nq2 Q0 c 1 1 r\\n")
    >>> ev = evaluate_file({"q1": ["b"], "q2": ["c"]}, d / "r.run", ["P@1", "mrr"], memory=1e3)
    >>> ev.aggregate, ev.chunks
    ({'P@1': 0.5, 'mrr': 0.75}, 1)
    """
    path = Path(run)
    files = run_files(path)
    budget = int(memory)
    if budget < 1000:
        raise InputError(f"memory must be at least 1000 bytes, got {memory!r}")
    kw = {"memory": memory, "options": options, "tmp_dir": tmp_dir,
          "trec_eval_version": trec_eval_version, **judge_options}  # fmt: skip
    parsed = versioned_metrics(metrics, trec_eval_version, judge_options)
    opts = JudgeOptions.build(options, **judge_options)
    Q = coerce_qrels(qrels)
    Q.docs.hashes()  # computed once: each chunk's labels take their rows' hashes
    top_grade = int(Q.grade.max()) if len(Q.grade) else 0
    q_str = Q.query_ids.astype(str)
    left = budget - _resident() - _per_query_bytes(len(q_str), len(parsed))
    largest = max(f.stat().st_size for f in files) + 1  # never ask for more than a file
    size = min(max(left // BYTES_PER_CHUNK_BYTE, MIN_CHUNK), largest)

    def chunk_bytes() -> int:
        return size

    chunk_opts = replace(opts, convention=replace(opts.convention, missing="skip"))
    pieces: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []
    counts: list[JudgeCounts] = []
    seen: set[str] = set()
    n_chunks = 0
    grouped = True
    chunks = ((f, c) for f in files for c in query_chunks(f, chunk_bytes))
    for n_chunks, (part, (data, first_line)) in enumerate(chunks, 1):  # noqa: B007
        run_chunk = read_chunk(part, data, first_line)
        ids = {str(q) for q in run_chunk.query_ids}
        if ids & seen:
            grouped = False
            break
        seen |= ids
        labels = _labels_of(Q, q_str, run_chunk)
        _score(labels, run_chunk, parsed, chunk_opts, pieces, counts, top_grade)
    if not grouped:  # partition by query first, then each shard holds whole queries
        pieces, counts, seen, n_chunks = [], [], set(), 0
        with tempfile.TemporaryDirectory(dir=tmp_dir, prefix="ranklens-shards-") as tmp:
            for shard in query_shards(files, Path(tmp), chunk_bytes()):
                run_chunk = read_chunk(path, shard.read_bytes(), None, files)  # whole queries
                seen |= {str(q) for q in run_chunk.query_ids}
                n_chunks += 1
                labels = _labels_of(Q, q_str, run_chunk)
                _score(labels, run_chunk, parsed, chunk_opts, pieces, counts, top_grade)
    if not seen:
        raise InputError(f"{path}: no run lines (the file is empty or only comments)")
    labelled = [str(q) for q in Q.query_ids]
    absent = [q for q in labelled if q not in seen]
    missing_counts = JudgeCounts()
    if absent and opts.missing == "zero":
        placeholder = Run.from_dict({_unused_id(Q, seen): ["-"]}, name=path.name)
        labels = _labels_of(Q, q_str, np.array(absent))
        judged = judge(labels, placeholder, opts)
        judged.max_grade = top_grade
        ev = Evaluation.from_judged(judged, parsed)
        pieces.append((np.array(ev.query_ids, dtype=object), ev.per_query))
        missing_counts = replace(judged.counts, queries_ignored=0, ignored_ids=[])
    elif absent:
        missing_counts = JudgeCounts(queries_missing=len(absent), missing_ids=absent)
    total = _merge_counts([*counts, missing_counts])
    if not pieces or sum(len(q) for q, _ in pieces) == 0:
        raise InputError(
            f"no query to evaluate: run {path.name!r} shares no query id with the qrels and "
            "missing queries are skipped"
        )
    qids = np.concatenate([q for q, _ in pieces])
    order = np.argsort(qids.astype(str), kind="stable")
    values = {mt.name: np.concatenate([v[mt.name] for _, v in pieces])[order] for mt in parsed}
    summary = _Summary(qids[order], replace(total, queries_evaluated=len(qids)), opts)
    return StreamedEvaluation(summary, parsed, values, (Q, path, kw), n_chunks)


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
    """What the gathered per-query values and ids take at the end (about)."""
    return n_queries * (8 * n_metrics + 80)


def _score(Q: Any, run: Run, parsed: list, opts: JudgeOptions, pieces: list, counts: list,
           max_grade: int) -> None:  # fmt: skip
    """Judge one chunk (missing queries skipped: they are settled once at the end); the
    labels' highest grade is the whole set's (ERR and custom gains read it)."""
    try:
        judged = judge(Q, run, opts)
    except InputError as exc:
        if "no query to evaluate" in str(exc):  # a chunk of unlabelled queries only
            counts.append(JudgeCounts(queries_ignored=len(run.query_ids),
                                      ignored_ids=[str(q) for q in run.query_ids]))  # fmt: skip
            return
        raise
    judged.max_grade = max_grade
    ev = Evaluation.from_judged(judged, parsed)
    pieces.append((np.array(ev.query_ids, dtype=object), ev.per_query))
    counts.append(replace(judged.counts, queries_missing=0, missing_ids=[]))
    del judged, ev
    _release()


def _merge_counts(parts: list[JudgeCounts]) -> JudgeCounts:
    out: dict[str, Any] = {}
    for f in fields(JudgeCounts):
        vals = [getattr(p, f.name) for p in parts]
        if f.name == "failures":
            out[f.name] = {k: v for d in vals for k, v in d.items()}
        elif isinstance(vals[0], list):
            out[f.name] = [x for v in vals for x in v]
        else:
            out[f.name] = sum(vals)
    return JudgeCounts(**out)


def _unused_id(Q: Any, seen: set[str]) -> str:
    taken = {str(q) for q in Q.query_ids} | seen
    name = "ranklens-no-query"
    while name in taken:
        name += "_"
    return name
