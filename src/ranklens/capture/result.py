"""The outcome of :func:`ranklens.run_retriever`: a :class:`RunResult`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import NoSharedQueryError
from ..evaluation import Evaluation, evaluate
from ..io import coerce_qrels, write_run
from ..judging.options import failure_note, failure_summary
from ..model import Run
from ..model.spans import SpanLabels
from ..model.stages import StagedRun
from .chunks import chunk_run
from .hits import KeyLike, doc_metadata
from .matching import warn_if_wrong_key
from .records import Retrieval
from .stage_runs import staged_run


class RunResult:
    """The outcome of :func:`run`: one :class:`Retrieval` per query, in query order.

    * ``run``: a :class:`~ranklens.Run` of the answered queries, in the order the
      retriever ranked them (failed queries are absent, so evaluation scores them 0 as
      missing, unless ``evaluate(..., skip_failed=True)``);
    * ``failed``: the failed records; ``report_info()``: latency percentiles and counts,
      which :func:`ranklens.compare` puts in the report.
    """

    def __init__(
        self, records: list[Retrieval], name: str, config: dict[str, Any], **info: Any
    ) -> None:
        self.records = records
        self.name = name
        self.config = config
        self.info = info
        self._run: Run | None = None
        # how hits name documents: the runner's key= (its name in the log for a result
        # rebuilt from elsewhere)
        self.key: KeyLike = str(config.get("key") or "id")

    @property
    def run(self) -> Run:
        if self._run is None:
            run = Run.from_dict({_id(r): r.doc_ids for r in self.records if r.ok}, name=self.name)
            run.failures = self.failures
            self._run = run
        return self._run

    @property
    def failures(self) -> dict[str, dict[str, str]]:
        """The failed queries' errors: ``{query id: {"type", "message"}}``."""
        return {_id(r): r.error for r in self.records if r.error is not None}

    def chunk_run(self) -> Run:
        """Every chunk each query's retriever returned (not only the first of each
        document), with its source document and character range: the run span labels
        judge (:func:`~ranklens.capture.chunks.chunk_run`; ``ranklens.evaluate`` takes it
        from a result by itself when the labels are spans)."""
        return chunk_run(((_id(r), r) for r in self.records), self.key, self.name)

    def staged(self, *, chunks: bool = False) -> StagedRun:
        """The pipeline's stages as runs, one per stage in pipeline order
        (:class:`~ranklens.StagedRun`, with each stage's kind and per-query latency), from
        the records' ``Retrieval.stages`` (a run of a
        :class:`~ranklens.Pipeline`, or of an adapter handing its stages over). A failed
        query keeps the stages before its failure and is recorded as failed from there on;
        ``chunks=True`` gives each stage's run of chunks, as :meth:`chunk_run` does for the
        final output (the runs span labels judge). A run with no stages is an error saying
        how to capture them (:mod:`ranklens.capture.stage_runs`)."""
        return staged_run(((_id(r), r) for r in self.records), self.key, self.name, chunks)

    @property
    def failed(self) -> list[Retrieval]:
        return [r for r in self.records if not r.ok]

    @property
    def latencies_ms(self) -> np.ndarray:
        return np.array([r.latency_ms for r in self.records if r.ok], dtype=np.float64)

    def hit_texts(self) -> dict[tuple[str, str], str]:
        """``(query, document) -> text`` from the raw hits kept in the records: a hit names
        a document by its id, its parent or an id-like metadata value (the log keeps 200
        characters of a hit's text)."""
        out: dict[tuple[str, str], str] = {}
        for rec in self.records:
            if not rec.ok or rec.query_id is None:
                continue
            wanted = set(rec.doc_ids)
            for raw in rec.hits or []:
                text = raw.get("text")
                if not text:
                    continue
                names = [raw.get("id"), raw.get("parent"), *(raw.get("metadata") or {}).values()]
                for n in names:
                    if isinstance(n, (str, int)) and str(n) in wanted:
                        out.setdefault((rec.query_id, str(n)), text)
        return out

    def doc_metadata(self) -> dict[str, dict[str, Any]]:
        """``{document: metadata}`` of every document the run retrieved, named as the run
        names it (the runner's ``key=``), from its first hit's metadata as the log keeps it
        (strings and integers): what ``ranklens.Versions.from_metadata(result,
        time="updated_at", group=...)`` reads each document's time and version group from."""
        return doc_metadata(self.records, self.key)

    @property
    def cpu_ms(self) -> np.ndarray:
        """Each answered query's CPU time (ms) in the thread that ran a sync retriever
        (empty for an async one, whose calls share the event loop's thread)."""
        vals = [r.cpu_ms for r in self.records if r.ok and r.cpu_ms is not None]
        return np.array(vals, dtype=np.float64)

    def report_info(self) -> dict[str, Any]:
        """Counts and percentiles (ms) for reports: ``latency_ms``, the wall time of each
        call at the run's ``concurrency`` (waits for the CPU and the GIL included), and
        ``cpu_ms``, each call's own CPU time for a sync retriever (what a call costs
        alone when it computes rather than waits on a service)."""
        pct, cpu = _percentiles(self.latencies_ms), _percentiles(self.cpu_ms)
        errors: dict[str, int] = {}
        for error in self.failures.values():
            errors[error["type"]] = errors.get(error["type"], 0) + 1
        return {
            "queries": len(self.records),
            "errors": len(self.failed),
            "error_types": errors,
            "latency_ms": pct,
            "cpu_ms": cpu,
            "duplicates_dropped": sum(r.duplicates for r in self.records),
            "unmapped_hits": sum(r.unmapped for r in self.records),
            "retries": sum(max(r.attempts - 1, 0) for r in self.records),
            **{k: v for k, v in self.info.items() if isinstance(v, int | float | str)},
            "retriever": self.config.get("retriever"),
        }

    def evaluate(
        self, qrels: Any, metrics: Any, *, skip_failed: bool = False, **kwargs: Any
    ) -> Evaluation:
        """Evaluate the run (on span labels, its chunks: :meth:`chunk_run`); failed queries
        score 0 unless ``skip_failed`` (then they are left out of the labels too)."""
        if type(qrels) is dict and not self.failed:  # the hits' lists joined as they are
            ev = self._evaluate_lists(qrels, metrics, kwargs)
            if ev is not None:
                return ev
        q = coerce_qrels(qrels)
        if skip_failed and self.failed:
            failed = {r.query_id for r in self.failed}
            q = q.subset(x for x in map(str, q.query_ids) if x not in failed)
        if isinstance(q, SpanLabels):  # evidence spans judge every chunk, with its place
            return evaluate(q, self.chunk_run(), metrics, **kwargs)
        ev = evaluate(q, self.run, metrics, **kwargs)
        warn_if_wrong_key(ev, {_id(r): r for r in self.records}, q, self.config.get("key"))
        return ev

    def _evaluate_lists(
        self, qrels: dict[Any, Any], metrics: Any, kwargs: dict[str, Any]
    ) -> Evaluation | None:
        """Labels given as dicts, every query answered: the records' ranked lists of ids
        evaluated as they are (the dict join reads them in place, with the compiled helpers)
        instead of first making the :attr:`run`'s columns; the same numbers. None when no
        labelled query was answered (the run's columns then name the run in the error)."""
        lists = {_id(r): r.doc_ids for r in self.records}
        try:
            ev = evaluate(qrels, lists, metrics, **kwargs)
        except NoSharedQueryError:
            return None
        warn_if_wrong_key(ev, {_id(r): r for r in self.records}, qrels, self.config.get("key"))
        return ev

    def to_trec(self, path: str | Path) -> None:
        """Write the run as a TREC run file (scores that keep the retriever's order)."""
        write_run(self.run, path, name=self.name)

    def __repr__(self) -> str:
        info = self.report_info()
        p50 = info["latency_ms"].get("p50", math.nan)
        errors = f"{info['errors']} errors"
        if info["errors"]:
            errors = failure_note(failure_summary(self.failures), "no hits")
        timing = f"p50 {p50:.1f} ms"
        cpu, workers = info["cpu_ms"].get("p50"), info.get("concurrency")
        if cpu is not None and isinstance(workers, int) and workers > 1:
            # wall time at concurrency waits for the CPU too: each call's own cost beside it
            timing += f" at concurrency {workers}, CPU p50 {cpu:.1f} ms"
        return f"RunResult({self.name!r}: {info['queries']} queries, {errors}, {timing})"


def _percentiles(values: np.ndarray) -> dict[str, float]:
    """``{"p50", "p95", "p99", "mean"}`` of ``values`` (empty when there are none)."""
    if not len(values):
        return {}
    out = {p: float(np.percentile(values, int(p[1:]))) for p in ("p50", "p95", "p99")}
    out["mean"] = float(values.mean())
    return out


def _id(record: Retrieval) -> str:
    """A runner's record's query id (always given; a recorder's may be None)."""
    return record.query_id or ""
