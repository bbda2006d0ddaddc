"""Captured stages as runs: the records' ``Retrieval.stages`` turned into a
:class:`~ranklens.StagedRun` (``RunResult.staged()``, ``Recorder.staged()``), one run per
stage in pipeline order, each query's list the stage's output.

* The stage order is the records' (the union of their stage names, each record's order
  kept); two records ordering the same stages differently is an error naming both queries
  and both orders, as a name repeated within one record is.
* A query whose record lacks a stage the others have is absent from that stage's run (its
  list there is empty when judged: ``stage_absent``); a stage that returned nothing has
  the query with an empty list.
* A failed query (a stage raised, or the runner's timeout struck) keeps the lists of the
  stages before the failure; from the failing stage on, the query is recorded in each
  stage's ``Run.failures`` with its error, never an empty list (which would say its
  evidence was lost there). A record with no stages at all (a retrieval that was not a
  pipeline's) is a failure of every stage, ``{"type": "NoStages"}``, counted, never an
  empty list either.
* ``chunks=True``: each stage's run of chunks (every hit with its source document and
  character range, as :meth:`RunResult.chunk_run` gives for the final output), the runs
  span labels judge.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from ..model import Run
from ..model.stages import StagedRun
from .chunks import chunk_run
from .hits import KeyLike
from .records import Retrieval, Stage

NO_STAGES = "NoStages"
"""The failure type of a query whose record has no stages."""
NO_STAGES_ERROR = {"type": NO_STAGES, "message": "the retrieval was recorded without its stages"}


def staged_run(
    records: Iterable[tuple[str, Retrieval]], key: KeyLike, name: str, chunks: bool = False
) -> StagedRun:
    """The stages of ``records`` (``(label query id, record)`` pairs) as a
    :class:`~ranklens.StagedRun` named ``name``: see the module docstring."""
    pairs = list(records)
    order = _order(pairs)
    if not order:
        raise InputError(
            f"{name}: no record has stages; capture a pipeline's stages with "
            "ranklens.Pipeline([...]) (run_retriever), an adapter returning "
            "ranklens.capture.Staged, or Recorder.record(..., stages=[...])"
        )
    lists: dict[str, dict[str, Stage]] = {s: {} for s in order}
    failures: dict[str, dict[str, dict[str, Any]]] = {s: {} for s in order}
    kinds: dict[str, str | None] = dict.fromkeys(order)
    latency: dict[str, dict[str, float]] = {s: {} for s in order}
    for qid, rec in pairs:
        if not rec.stages:
            error = dict(rec.error or NO_STAGES_ERROR)
            for s in order:
                failures[s][qid] = error
            continue
        failed_at = None
        for st in rec.stages:
            if kinds[st.name] is None:
                kinds[st.name] = st.kind
            if math.isfinite(st.latency_ms):
                latency[st.name][qid] = st.latency_ms
            if st.error is not None:
                failed_at = st.name
                break
            lists[st.name][qid] = st
        if failed_at is None and not rec.ok:  # failed after its last stage (the key, a hit)
            failed_at = rec.stages[-1].name
            lists[failed_at].pop(qid, None)
        if failed_at is not None:
            error = dict(rec.error or {}) or dict(rec.stages[-1].error or {})
            for s in order[order.index(failed_at) :]:
                failures[s][qid] = error
    runs = []
    for s in order:
        if chunks:
            run = chunk_run(((q, _as_record(q, st)) for q, st in lists[s].items()), key, s)
        else:
            run = Run.from_dict({q: st.doc_ids for q, st in lists[s].items()}, name=s)
        run.failures = {**run.failures, **failures[s]}
        runs.append((s, run))
    return StagedRun(
        runs, name=name, kinds=kinds,
        latency_ms={s: v for s, v in latency.items() if v} or None,
    )  # fmt: skip


def _as_record(qid: str, st: Stage) -> Retrieval:
    return Retrieval(qid, "", st.doc_ids, st.scores, st.hits)


def _order(pairs: list[tuple[str, Retrieval]]) -> list[str]:
    """The stage names in pipeline order, from every record's; a record repeating a name,
    or two records ordering two stages differently, is an error naming them."""
    order: list[str] = []
    first: dict[tuple[str, str], str] = {}  # (earlier, later) -> the query that said so
    for qid, rec in pairs:
        names = [st.name for st in rec.stages or ()]
        if len(set(names)) < len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise InputError(
                f"query {qid!r}: the stage {twice!r} appears twice in its record "
                f"({' -> '.join(names)}); each stage of a pipeline needs its own name"
            )
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if (b, a) in first:
                    other = first[(b, a)]
                    theirs = [st.name for st in dict(pairs)[other].stages or ()]
                    raise InputError(
                        f"the stages are in different orders: query {qid!r} has "
                        f"{' -> '.join(names)}, query {other!r} has {' -> '.join(theirs)}; "
                        "a pipeline's records must keep one order"
                    )
                first.setdefault((a, b), qid)
        pos = 0
        for n in names:
            if n in order:
                pos = order.index(n) + 1
            else:
                order.insert(pos, n)
                pos += 1
    return order
