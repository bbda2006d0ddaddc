"""``evaluate_file(..., backend="ray")``: a sharded run scored on Ray and merged exactly.

* A folder of run files (TREC, JSONL or Parquet; one run written in shards): each file is
  one Ray task, which streams it within the memory budget as the local path does
  (:func:`.stream.score_files`); the labels and metrics travel once through Ray's object
  store. Every task returns its queries' values and judging's counts, and the driver
  merges them as the local path merges chunks, so every number equals
  ``ranklens.evaluate``'s to the last bit.
* Each query's rows must sit in one file (as a run is written per query range or per
  worker). A query found in two Parquet files sends the run through the Ray Dataset path
  below; in two TREC or JSONL files it is refused by name (the local backend partitions).
* A Ray Dataset (``ray.data.read_parquet(...)``, columns as a Parquet run's): its rows are
  partitioned by a hash of the query id (one group per bucket, each holding whole
  queries), each bucket scored in a task, and merged the same way.
* The files must be readable from every node (a shared file system); the results come back
  to the driver, the only place anything is written.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError, RanklensError, require
from ..judging import JudgeOptions
from . import Evaluation, MetricsLike
from .progress import ByteProgress
from .run_files import run_files
from .sources import files_format, query_buckets
from .stream_plan import Partial, Plan, StreamedEvaluation, finish, plan, score_chunk, score_files

BUCKET = "__ranklens_bucket"


def connect(address: str | None = None, num_cpus: int | None = None) -> Any:
    """The ``ray`` module, connected: to an initialised Ray as it is, to the cluster at
    ``address`` (``"auto"``, ``"ray://head:10001"``), or to a new local Ray with
    ``num_cpus`` (default: every core)."""
    # workers run this interpreter, not a `uv run` of their own (Ray's uv hook, read when
    # ray is imported, would re-create the environment on each node)
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    ray: Any = require("ray", "ray", 'backend="ray"')
    if not ray.is_initialized():
        if address is not None:
            ray.init(address=address, ignore_reinit_error=True)
        else:
            ray.init(num_cpus=num_cpus, include_dashboard=False, ignore_reinit_error=True,
                     log_to_driver=False)  # fmt: skip
    return ray


def _score_file(p: Plan, path: str, fmt: str) -> Partial:
    """One Ray task: a file streamed within the budget (partitioned in the worker's own
    temporary folder if its queries are scattered)."""
    return score_files(p, [Path(path)], fmt)


def evaluate_on_ray(
    qrels: Any,
    run: Any,
    metrics: MetricsLike,
    *,
    memory: int | float,
    options: JudgeOptions | None,
    version: str,
    judge_options: dict[str, Any],
    again: Callable[[MetricsLike], Evaluation],
    address: str | None = None,
    num_cpus: int | None = None,
    cpus_per_task: float = 1,
    buckets: int | None = None,
    progress: bool | None = None,
) -> StreamedEvaluation:
    """See the module docstring; ``buckets``: how many groups a Ray Dataset is hashed
    into (default: two per CPU of the cluster)."""
    ray = connect(address, num_cpus)
    if not isinstance(run, (str, Path)):
        return _dataset(ray, qrels, run, metrics, memory, options, version, judge_options,
                        again, cpus_per_task, buckets)  # fmt: skip
    path = Path(run)
    files = run_files(path)
    fmt = files_format(files)
    p = plan(qrels, metrics, files, memory, options, version, judge_options)
    ref = ray.put(p)
    task = ray.remote(num_cpus=cpus_per_task, max_retries=2)(_score_file)
    # absolute: a task runs in the working directory Ray was started in, not the caller's
    futures = {task.remote(ref, str(f.resolve()), fmt): f for f in files}
    parts: dict[Path, Partial] = {}
    with ByteProgress(sum(f.stat().st_size for f in files), path.name, progress) as bar:
        waiting = list(futures)
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            f = futures[ready[0]]
            try:
                parts[f] = ray.get(ready[0])
            except ray.exceptions.RayTaskError as exc:  # a bad line: its own error, unwrapped
                if isinstance(getattr(exc, "cause", None), RanklensError):
                    raise exc.cause from None
                raise
            bar.advance(f.stat().st_size)
    try:
        merged = merge([parts[f] for f in files], [f.name for f in files])
    except SplitQuery:
        if fmt != "parquet":
            raise
        data = ray.data.read_parquet([str(f) for f in files])
        return _dataset(ray, qrels, data, metrics, memory, options, version, judge_options,
                        again, cpus_per_task, buckets, name=path)  # fmt: skip
    return finish(p, merged, path, again)


class SplitQuery(InputError):
    """A query's rows in two shards."""


def merge(parts: list[Partial], names: list[str]) -> Partial:
    """The parts of one run as one: values and counts gathered; a query in two parts is a
    :class:`SplitQuery` naming it and both."""
    out = Partial()
    for part, name in zip(parts, names):
        again = next((q for q in part.seen if q in out.seen), None)
        if again is not None:
            raise SplitQuery(
                f"query {again!r} has rows in {out.seen[again]} and in {name}: distributed "
                "evaluation needs each query's rows in one shard file (write the run by "
                "query, or evaluate it with backend='local', which partitions it)"
            )
        out.seen.update(dict.fromkeys(part.seen, name))
        out.pieces += part.pieces
        out.counts += part.counts
        out.chunks += part.chunks
    return out


def _dataset(ray: Any, qrels: Any, data: Any, metrics: MetricsLike, memory: int | float,
             options: JudgeOptions | None, version: str, judge_options: dict[str, Any],
             again: Callable[[MetricsLike], Evaluation], cpus_per_task: float, buckets: int | None,
             name: Path | None = None) -> StreamedEvaluation:  # fmt: skip
    """A Ray Dataset of run rows: hashed into buckets of whole queries, each scored in a
    task (its Partial pickled into one row), merged on the driver."""
    from ..io.parquet import run_columns

    if not hasattr(data, "groupby") or not hasattr(data, "schema"):
        raise InputError(
            "backend='ray' evaluates a folder of run files or a Ray Dataset, got "
            f"{type(data).__name__}"
        )
    label = name or Path("ray-dataset")
    qcol = run_columns(list(data.schema().names), label)[0]
    n = buckets or max(2 * int(ray.cluster_resources().get("CPU", 1)), 1)
    p = plan(qrels, metrics, [], memory, options, version, judge_options)
    ref = ray.put(p)

    def bucket(batch: Any) -> Any:
        import pyarrow as pa

        return batch.append_column(BUCKET, pa.array(query_buckets(batch.column(qcol), n)))

    def score(group: Any) -> Any:
        import pyarrow as pa

        from ..io.parquet import run_from_table

        run = run_from_table(group.drop_columns([BUCKET]), label, label.name)
        part = Partial(seen=dict.fromkeys((str(q) for q in run.query_ids), "a bucket"), chunks=1)
        score_chunk(ray.get(ref), run, part)
        return pa.table({"partial": [pickle.dumps(part)]})

    rows = (
        data.map_batches(bucket, batch_format="pyarrow")
        .groupby(BUCKET, num_partitions=n)
        .map_groups(score, batch_format="pyarrow", num_cpus=cpus_per_task)
        .take_all()
    )
    parts = [pickle.loads(r["partial"]) for r in rows]
    merged = merge(parts, [f"bucket {i}" for i in range(len(parts))])
    return finish(p, merged, label, again)
