"""Evaluating run files larger than memory: :func:`evaluate_file`.

The run (a TREC, JSONL or Parquet file, or a folder of them) is read in chunks of whole
queries, each judged and scored on its own against its queries' labels, and the per-query
values gathered; the aggregates are then computed from all per-query values in the labels'
query order, so every number equals the in-memory :func:`ranklens.evaluate`'s to the last
bit (a query's values depend on its rows only). The memory budget is spent on what is
measured: the process as it stands once the labels are read, room for every query's
values and for the reader, and chunks sized by what judging holds per byte of a chunk
(its run bytes and the rows of its queries' labels: :data:`~.stream_plan.RUN_BYTES`,
:data:`~.stream_plan.LABEL_ROW_BYTES`). Labels too large to read whole within the budget are
read in shards by query, the run partitioned alike (:mod:`.labelshards`). The pieces are
in :mod:`.stream_plan`, the formats in
:mod:`.sources`, the Ray backend in :mod:`.on_ray`.

* A run grouped by query (every TREC run file a system writes) is streamed once. A TREC or
  Parquet run whose queries come back after another query's rows is first partitioned by
  a hash of the query id into temporary shard files (each holding whole queries), then
  each shard is evaluated; the shards are deleted afterwards. A JSONL query on two lines
  is an error naming both.
* Labelled queries absent from the whole run are scored as ``evaluate`` scores them
  (``missing="zero"``: 0, counted; ``"skip"``: left out); what judging counted (ignored run
  queries, duplicates, ties) is summed over the chunks.
* A line the fast reader cannot read sends its chunk to the line parser, whose error names
  the file's own line number; a Parquet error names the file's row.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, cast

from ..errors import InputError
from ..io.jsonl import is_run_log
from ..judging import JudgeOptions
from ..judging.options import check_judging, check_options
from ..model import QrelsLike
from . import MetricsLike
from .labelshards import evaluate_in_label_shards, label_bytes, label_shard_count
from .options import EVALUATE_FILE, parse_bytes
from .per_query import write_per_query
from .progress import ByteProgress
from .run_files import run_files
from .sources import file_format, files_format
from .stream_plan import (
    BYTES_PER_CHUNK_BYTE,
    StreamedEvaluation,
    finish,
    plan,
    score_files,
    whole_trec_bytes,
)

DEFAULT_MEMORY = 2_000_000_000
"""The default budget in bytes (about 2 GB)."""


def streams(run: Any, memory: int | float | str | None, qrels: Any = None) -> bool:
    """Whether :func:`ranklens.evaluate` gives the path ``run`` to :func:`evaluate_file`: a
    folder (a run in shards) always; a TREC, JSONL or Parquet file whose in-memory working
    set would pass ``memory`` (default about 2 GB): at most about nine times its size, and
    reading the labels when ``qrels`` is a TREC file; a plain TREC file past that bound is
    sized by its lines and bytes and its labels' (:func:`.stream_plan.whole_trec_bytes`)."""
    if not isinstance(run, (str, Path)) or memory == float("inf"):
        return False
    p = Path(run)
    if p.is_dir():
        return True
    budget = DEFAULT_MEMORY if memory is None else parse_bytes(memory)
    if not p.is_file():
        return False
    if p.stat().st_size * BYTES_PER_CHUNK_BYTE + label_bytes(qrels) <= budget:
        return False
    try:
        fmt = file_format(p)
    except InputError:  # a single JSON object: read whole
        return False
    if fmt == "trec":  # sized by its lines: the first bound is far above short ids' needs
        need = whole_trec_bytes(p, qrels)
        return need is None or need > budget
    return not (fmt == "jsonl" and is_run_log(p))  # a runner's log: read whole


@EVALUATE_FILE.checks
def evaluate_file(
    qrels: QrelsLike,
    run: Any,
    metrics: MetricsLike,
    *,
    memory: int | float | str = DEFAULT_MEMORY,
    options: JudgeOptions | None = None,
    tmp_dir: str | Path | None = None,
    per_query: str | Path | None = None,
    progress: bool | None = None,
    backend: str = "local",
    ray: Mapping[str, Any] | None = None,
    trec_eval_version: str = "10",
    **judge_options: Any,
) -> StreamedEvaluation:
    """Evaluate the run file ``run`` (TREC, ``.jsonl`` or ``.parquet``; or a folder of
    run files: one run written in shards, read in name order) in chunks of whole queries,
    within about ``memory`` bytes (or ``"2G"``; see the module docstring); the result equals
    ``ranklens.evaluate(qrels, run, metrics, ...)``.

    ``judge_options`` and ``trec_eval_version``: as for :func:`ranklens.evaluate`
    (``relevance_level``, ``missing``, ``convention``...). ``tmp_dir``: where an
    ungrouped file's shards go (default: the system's temporary folder). ``per_query``:
    also write every query's values to this ``.parquet``, ``.csv``, ``.tsv`` or ``.jsonl``
    file (:func:`write_per_query`). ``progress``: a progress bar on standard error
    (default: when it is a terminal).

    ``backend="ray"``: the folder's shard files are scored on Ray tasks, each within
    ``memory``, and merged exactly (:mod:`.on_ray`; ``run`` may also be a Ray Dataset);
    ``ray``: ``address``, ``num_cpus`` (of a local Ray), ``cpus_per_task``.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "r.run").write_text("q1 Q0 a 1 2 r\\nq1 Q0 b 2 1 r\\nq2 Q0 c 1 1 r\\n")
    >>> ev = evaluate_file({"q1": ["b"], "q2": ["c"]}, d / "r.run", ["P@1", "mrr"], memory=1e3)
    >>> ev.aggregate, ev.chunks
    ({'P@1': 0.5, 'mrr': 0.75}, 1)
    """
    again = partial(evaluate_file, qrels, run, memory=memory, options=options, tmp_dir=tmp_dir,
                    backend=backend, ray=ray, trec_eval_version=trec_eval_version,
                    progress=progress, **judge_options)  # fmt: skip
    judge_options = check_judging(judge_options, "evaluate_file")
    check_options(options, "evaluate_file")
    if isinstance(memory, str):
        memory = parse_bytes(memory)
    if backend == "ray":
        from .on_ray import evaluate_on_ray

        ev = evaluate_on_ray(qrels, run, metrics, memory=memory, options=options,
                             version=trec_eval_version, judge_options=judge_options,
                             again=again, progress=progress, **dict(ray or {}))  # fmt: skip
    else:
        path = Path(run)
        files = run_files(path)
        fmt = files_format(files)
        shards = label_shard_count(qrels, fmt, memory)
        total = sum(f.stat().st_size for f in files)
        if shards > 1:  # the labels do not fit either: both read in shards by query
            with ByteProgress(total, path.name, progress) as bar:
                labels_file = cast("str | Path", qrels)  # only a labels file is sharded
                ev = evaluate_in_label_shards(
                    labels_file, files, shards, metrics, memory, options, trec_eval_version,
                    judge_options, tmp_dir, bar, path, again,
                )  # fmt: skip
        else:
            p = plan(qrels, metrics, files, memory, options, trec_eval_version, judge_options)
            with ByteProgress(total, path.name, progress) as bar:
                part = score_files(p, files, fmt, tmp_dir, bar)
            ev = finish(p, part, path, again)
    if per_query is not None:
        write_per_query(ev, per_query)
    return ev
