"""A pipeline's stages as runs: :class:`StagedRun`.

A RAG pipeline passes each query through ordered stages: one or more retrievers, fusion,
a reranker, filters and postprocessors, and context packing. Each stage's output for each
query is a ranked list, so a pipeline's record is one :class:`~ranklens.model.runs.Run`
per stage, in pipeline order. Judging reads every stage against the same labels
(:mod:`ranklens.judging.stages` says where each relevant unit was lost).

>>> staged = StagedRun({"bm25": {"q1": ["d1", "d2", "d3"]}, "rerank": {"q1": ["d3", "d1"]}})
>>> staged.names, len(staged), staged.final.name
(('bm25', 'rerank'), 2, 'rerank')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..declared import data, declare, mapping, text
from ..errors import InputError, suggest
from .runs import Run

STAGED_RUN = declare("StagedRun", {
    "stages": data("{stage: run} in pipeline order, or (stage, run) pairs"),
    "name": text("pipeline", "the pipeline's name"),
    "kinds": mapping(None, "{stage: kind} ('retriever', 'reranker', ...)", none=True, empty=True),
    "latency_ms": mapping(None, "{stage: {query id: milliseconds}}", none=True, empty=True),
    "inputs": mapping(None, "{stage: [the stages it reads]} (default: the stage before)",
                      none=True, empty=True),
})  # fmt: skip


@STAGED_RUN.checks
class StagedRun:
    """The runs of a pipeline's stages, in pipeline order.

    ``stages``: ``{name: run}`` (in order) or ``[(name, run), ...]``; each run a
    :class:`~ranklens.Run` or anything :meth:`Run.coerce` takes (``{query: [doc, ...]}``,
    ``{query: {doc: score}}``; files are read by :func:`ranklens.read_run` first, or passed
    to :func:`ranklens.evaluate_stages`, which reads them). ``name``: the pipeline's name.
    ``kinds``: what each stage is (``"retriever"``, ``"reranker"``, ``"filter"``, ...),
    when known. ``latency_ms``: per stage, ``{query id: wall milliseconds}`` of its calls,
    when captured. ``inputs``: ``{stage: [stages it reads]}`` where the pipeline is not a
    chain (parallel retrievers fused: ``{"fused": ["bm25", "dense"], "dense": []}``); a stage
    not named reads the stage before it, the first stage nothing. Without ``inputs``, the
    retrievers listed right before a ``"fusion"`` stage (by ``kinds``) are read as its
    parallel inputs, each reading what the first of them reads.

    A stage name given twice, an empty pipeline, or a name that is not a non-empty
    string is an :class:`~ranklens.errors.InputError`. A query absent from a stage's run
    has an empty list at that stage (its evidence is lost there), unless the stage's run
    records the query's retrieval as failed (``Run.failures``).
    """

    __slots__ = ("inputs", "kinds", "latency_ms", "name", "names", "runs")

    def __init__(
        self,
        stages: Mapping[str, Any] | Sequence[tuple[str, Any]],
        *,
        name: str = "pipeline",
        kinds: Mapping[str, str | None] | None = None,
        latency_ms: Mapping[str, Mapping[str, float]] | None = None,
        inputs: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        items = list(stages.items()) if isinstance(stages, Mapping) else list(stages)
        if not items:
            raise InputError(
                "a staged run needs at least one stage, e.g. "
                "StagedRun({'bm25': run1, 'rerank': run2})"
            )
        names: list[str] = []
        runs: list[Run] = []
        for i, item in enumerate(items):
            if not (isinstance(item, tuple) and len(item) == 2):
                raise InputError(
                    f"stage {i + 1}: give each stage as (name, run), got {type(item).__name__}"
                )
            stage, run = item
            if not isinstance(stage, str) or not stage.strip():
                raise InputError(
                    f"stage {i + 1}: a stage's name must be a non-empty text, got {stage!r}"
                )
            if stage in names:
                raise InputError(
                    f"stage {stage!r} is given twice (stages {names.index(stage) + 1} and "
                    f"{i + 1}); name each stage once, e.g. 'rerank' and 'rerank_2'"
                )
            try:
                r = Run.coerce(run, name=stage)
            except InputError as exc:
                raise InputError(f"stage {stage!r}: {exc}") from exc
            names.append(stage)
            runs.append(r)
        self.names: tuple[str, ...] = tuple(names)
        self.runs: tuple[Run, ...] = tuple(runs)
        self.name = str(name)
        unknown = sorted(set(kinds or {}) - set(names)) + sorted(set(latency_ms or {}) - set(names))
        unknown += sorted(set(inputs or {}) - set(names))
        if unknown:
            raise InputError(
                f"kinds/latency_ms name a stage the pipeline does not have: {unknown[0]!r}"
            )
        self.kinds: dict[str, str | None] = {n: (kinds or {}).get(n) for n in names}
        self.latency_ms: dict[str, dict[str, float]] | None = (
            {n: {str(q): float(v) for q, v in (latency_ms.get(n) or {}).items()} for n in names}
            if latency_ms
            else None
        )

        self.inputs: dict[str, tuple[str, ...]] = _inputs(self.names, self.kinds, inputs)

    @property
    def input_indices(self) -> tuple[tuple[int, ...], ...]:
        """Per stage, the positions of the stages it reads."""
        return tuple(tuple(self.names.index(i) for i in self.inputs[n]) for n in self.names)

    @property
    def final(self) -> Run:
        """The last stage's run: what the pipeline returns."""
        return self.runs[-1]

    def __getitem__(self, stage: str) -> Run:
        try:
            return self.runs[self.names.index(stage)]
        except ValueError:
            raise KeyError(f"no stage {stage!r}{suggest(stage, self.names)}") from None

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def items(self) -> Iterator[tuple[str, Run]]:
        return iter(zip(self.names, self.runs))

    def latency_of(self, stage: str, query_ids: Sequence[str]) -> np.ndarray:
        """Per query (in ``query_ids`` order) the stage's latency in milliseconds (NaN
        where it was not captured)."""
        table = (self.latency_ms or {}).get(stage, {})
        return np.array([table.get(str(q), np.nan) for q in query_ids], dtype=np.float64)

    def __repr__(self) -> str:
        return f"StagedRun({self.name!r}: {' -> '.join(self.names)})"


def _inputs(
    names: tuple[str, ...],
    kinds: Mapping[str, str | None],
    given: Mapping[str, Sequence[str]] | None,
) -> dict[str, tuple[str, ...]]:
    """Each stage's inputs: as given, else the stage before (fusion's retrievers parallel)."""
    out: dict[str, tuple[str, ...]] = {
        n: (() if i == 0 else (names[i - 1],)) for i, n in enumerate(names)
    }
    if given is None:
        for i, n in enumerate(names):
            if (kinds.get(n) or "") != "fusion":
                continue
            j = i
            while j > 0 and (kinds.get(names[j - 1]) or "") == "retriever":
                j -= 1
            if i - j >= 2:  # two or more retrievers right before: parallel inputs
                out[n] = names[j:i]
                for r in names[j + 1 : i]:
                    out[r] = out[names[j]]
        return out
    for n, read in given.items():
        read = (read,) if isinstance(read, str) else tuple(read)
        for r in read:
            if r not in names:
                raise InputError(f"inputs: stage {n!r} reads {r!r}, which is not a stage")
            if names.index(r) >= names.index(n):
                raise InputError(
                    f"inputs: stage {n!r} reads {r!r}, which comes after it; list the stages "
                    "in pipeline order"
                )
        out[n] = read
    return out


__all__ = ["StagedRun"]
