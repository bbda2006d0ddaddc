"""A LangChain retrieval pipeline's stages, seen through LangChain's own callbacks.

A pipeline call is one retriever run (the *root*: the outermost retriever of a chain, or the
retriever called) and the retriever runs nested in it, which LangChain reports with
``on_retriever_start``/``on_retriever_end`` and a ``parent_run_id``: an
``EnsembleRetriever``'s child retrievers (``retriever_1``, ``retriever_2``, ...), a
``ContextualCompressionRetriever``'s base retriever, any retriever that passes its run's
callbacks to another. Each run is one stage, in pipeline order: a run's children first (in
the order they were called: an ensemble's by its ``retriever_N`` tags, so ``abatch``'s
interleaving cannot reorder them), then the run itself (its output). A run with two or more
child retrievers is a ``"fusion"`` stage, one with a single child a ``"postprocessor"``, a
run with none a ``"retriever"``.

What callbacks cannot see: a document compressor or transformer (``EmbeddingsFilter``,
``LongContextReorder``, a ``DocumentCompressorPipeline``'s steps) reports nothing, so a
``ContextualCompressionRetriever`` shows its base retriever's output and its own (the last
compressor's) and nothing between. :func:`observe` returns a copy of a retriever whose
compressors and transformers each report their output as a nested run (exactly what each
returned, in the call the pipeline makes anyway: nothing is computed twice); the runner
(:class:`~ranklens_langchain.LangChainRetriever`) does this by itself. A live hook that
meets a wrapper whose work it cannot see says so once (:class:`UnseenStagesWarning`).

Scores: a hit's score is what its Document carries (``metadata["score"]``, ...), except at
a fusion stage, whose Documents are its children's objects with the children's scores
(``EnsembleRetriever`` does not expose its fused scores): a fusion stage's scores are None
rather than another stage's numbers.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from inspect import signature
from typing import Any
from uuid import UUID

from langchain_core.callbacks import (
    AsyncCallbackManager,
    BaseCallbackHandler,
    CallbackManager,
    Callbacks,
)
from langchain_core.documents import BaseDocumentCompressor, BaseDocumentTransformer, Document
from pydantic import ConfigDict

from ranklens.capture import Converter, Hit, LightHit, Stage
from ranklens.errors import InputError, UnseenStagesWarning

KIND_KEY = "ranklens_kind"
"""The field of ``serialized`` in which an observed step names its kind (``"compressor"``,
``"transformer"``)."""


@dataclass(slots=True)
class CollectedStage:
    """One stage of one pipeline call as the callbacks gave it: the Documents it returned
    (the very objects), its wall time and its error."""

    name: str
    kind: str | None
    documents: list[Any]
    latency_ms: float = math.nan
    error: BaseException | None = None


@dataclass(slots=True)
class RunNode:
    """One retriever run of a pipeline call: its name and kind, sibling order, start and
    end (``perf_counter``), the Documents it returned or its error, the runs nested in
    it."""

    run_id: UUID
    name: str
    kind: str | None
    order: tuple[int, int]
    t0: float
    t1: float = math.nan
    documents: list[Any] | None = None
    error: BaseException | None = None
    children: list[RunNode] = field(default_factory=list)

    def own_ms(self) -> float:
        """Wall milliseconds of this run outside its children's (the union of their
        intervals taken away, so children run concurrently are not counted twice)."""
        if math.isnan(self.t0) or math.isnan(self.t1):
            return math.nan
        covered, reach = 0.0, -math.inf
        for c0, c1 in sorted((c.t0, c.t1) for c in self.children if not math.isnan(c.t1)):
            c0, c1 = max(c0, self.t0, reach), min(c1, self.t1)
            if c1 > c0:
                covered += c1 - c0
                reach = c1
        return max(0.0, (self.t1 - self.t0 - covered) * 1000)


def _order(tags: Sequence[str] | None, seq: int) -> tuple[int, int]:
    """Sibling order: an ensemble's ``retriever_N`` tag, then the order of the starts."""
    for tag in reversed(tags or ()):
        if tag.startswith("retriever_") and tag[10:].isdigit():
            return (int(tag[10:]), seq)
    return (0, seq)


class StageTree:
    """The retriever runs nested in one pipeline call (its root's ``run_id``), as the
    callbacks report them; :meth:`stages` lists them in pipeline order."""

    __slots__ = ("_lock", "_runs", "_seq", "root")

    def __init__(self, root: UUID, name: str, t0: float = math.nan) -> None:
        self.root = RunNode(root, name, None, (0, 0), t0)
        self._runs: dict[UUID, RunNode] = {root: self.root}
        self._seq = 0
        self._lock = threading.Lock()

    def start(
        self,
        run_id: UUID,
        parent: UUID,
        name: str,
        serialized: dict[str, Any] | None = None,
        tags: Sequence[str] | None = None,
    ) -> None:
        kind = serialized.get(KIND_KEY) if isinstance(serialized, dict) else None
        with self._lock:
            self._seq += 1
            node = RunNode(run_id, name, kind, _order(tags, self._seq), time.perf_counter())
            self._runs[run_id] = node
            self._runs[parent].children.append(node)

    def end(self, run_id: UUID, documents: Sequence[Any]) -> None:
        node = self._runs[run_id]
        node.t1 = time.perf_counter()
        node.documents = list(documents)

    def fail(self, run_id: UUID, error: BaseException) -> None:
        node = self._runs[run_id]
        node.t1 = time.perf_counter()
        node.error = error

    @property
    def run_ids(self) -> list[UUID]:
        return list(self._runs)

    @property
    def nested(self) -> bool:
        """Whether any run was nested in the root (a pipeline, not one retriever)."""
        return bool(self.root.children)

    def unseen(self) -> list[str]:
        """Names of runs that wrap exactly one retriever run and report no step of their
        own (a ``ContextualCompressionRetriever`` whose compressors are not observed)."""
        return [
            r.name
            for r in self._runs.values()
            if len(r.children) == 1 and r.children[0].kind is None and r.error is None
        ]

    def stages(
        self, documents: Sequence[Any] | None = None, error: BaseException | None = None
    ) -> list[CollectedStage]:
        """Every run as a stage, in pipeline order (children before their parent, siblings
        as called), names made unique (``name``, ``name_2``, ...). A stage's latency is
        its run's own wall time: outside its children's runs (an ensemble's fusion, a
        compression retriever's unobserved compressors). The root's output and error are
        given here when the tree did not see the root end (a hook's own root)."""
        root = self.root
        if documents is not None or error is not None:
            root.t1 = time.perf_counter()
            root.documents = None if documents is None else list(documents)
            root.error = error
        out: list[CollectedStage] = []
        seen: dict[str, int] = {}

        def visit(node: RunNode) -> None:
            for child in sorted(node.children, key=lambda c: c.order):
                visit(child)
            kind = node.kind or _kind_of(node)
            n = seen[node.name] = seen.get(node.name, 0) + 1
            name = node.name if n == 1 else f"{node.name}_{n}"
            docs = node.documents if node.documents is not None else []
            out.append(CollectedStage(name, kind, docs, node.own_ms(), node.error))

        visit(root)
        return out


def _kind_of(node: RunNode) -> str:
    retrievers = [c for c in node.children if c.kind is None]
    if len(retrievers) >= 2:
        return "fusion"
    return "postprocessor" if node.children else "retriever"


def recorded_stages(
    collected: Sequence[CollectedStage],
    needs: frozenset[str],
    convert: Converter,
    light_hits: bool = False,
) -> list[Stage]:
    """The core's :class:`~ranklens.capture.Stage` records of collected stages, each hit
    read from its Document by ``convert`` (the package's ``to_light``) with ``needs``; a
    fusion stage's scores dropped (its Documents carry their child stages' scores). The
    runner or the recorder maps the hits with its ``key``. ``light_hits``: the hits as
    light tuples (for ``Recorder.record`` with :func:`as_is`), else
    :class:`~ranklens.Hit` objects (the runner's)."""
    out = []
    for c in collected:
        light = [convert(d, needs) for d in c.documents]
        if c.kind == "fusion":
            light = [(t[0], None, *t[2:]) for t in light]
        error = None if c.error is None else {"type": type(c.error).__name__,
                                              "message": str(c.error)[:500]}  # fmt: skip
        hits = light if light_hits else [Hit.from_light(t) for t in light]
        out.append(Stage(c.name, hits=hits, latency_ms=c.latency_ms, error=error, kind=c.kind))
    return out


def as_is(light: LightHit, needs: frozenset[str]) -> LightHit:
    """The converter of hits that are light tuples already."""
    return light


class StageCollector(BaseCallbackHandler):
    """A callback handler that keeps the :class:`StageTree` of each pipeline call it sees
    (the runner passes one per query): :meth:`trees` after the call."""

    run_inline = True  # called in the event loop's own order under ainvoke

    def __init__(self, names: Mapping[str, str] | None = None) -> None:
        self._trees: dict[UUID, StageTree] = {}
        self._roots: list[StageTree] = []
        self.names = dict(names or {})

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or "retriever"
        name = self.names.get(name, name)
        tree = self._trees.get(parent_run_id) if parent_run_id is not None else None
        if tree is None:
            tree = StageTree(run_id, name, time.perf_counter())
            self._roots.append(tree)
        else:
            tree.start(run_id, parent_run_id, name, serialized, tags)  # type: ignore[arg-type]
        self._trees[run_id] = tree

    def on_retriever_end(
        self, documents: Sequence[Document], *, run_id: UUID, **kwargs: Any
    ) -> None:
        tree = self._trees.get(run_id)
        if tree is not None:
            tree.end(run_id, documents)

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        tree = self._trees.get(run_id)
        if tree is not None:
            tree.fail(run_id, error)

    def trees(self) -> list[StageTree]:
        """The pipeline calls seen (one per outermost retriever run), in call order."""
        return list(self._roots)


# --------------------------------------------------------------------- observed steps
class ObservedStep(BaseDocumentCompressor):
    """A document compressor or transformer that reports its output to LangChain's
    callbacks as a retriever run nested in the pipeline's (named ``name``, its kind in
    ``serialized["ranklens_kind"]``), so the hooks see each step of a
    ``DocumentCompressorPipeline``. It returns exactly what ``step`` returns; called with
    no callback manager (outside a retriever run) it only calls ``step``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    step: Any
    name: str | None = None

    def __init__(self, step: Any, name: str | None = None, **kwargs: Any) -> None:
        if not isinstance(step, (BaseDocumentCompressor, BaseDocumentTransformer)):
            raise InputError(
                "ObservedStep wraps a langchain BaseDocumentCompressor or "
                f"BaseDocumentTransformer, got {type(step).__name__}"
            )
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise InputError(f"ObservedStep: name must be a non-empty text, got {name!r}")
        fields: dict[str, Any] = {"step": step, "name": name, **kwargs}
        super().__init__(**fields)

    @property
    def stage_name(self) -> str:
        return self.name or type(self.step).__name__

    @property
    def kind(self) -> str:
        return "compressor" if isinstance(self.step, BaseDocumentCompressor) else "transformer"

    def _serialized(self) -> dict[str, Any]:
        return {"name": self.stage_name, KIND_KEY: self.kind}

    def _compress(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks
    ) -> Sequence[Document]:
        step = self.step
        if isinstance(step, BaseDocumentCompressor):
            if "callbacks" in signature(step.compress_documents).parameters:
                return step.compress_documents(documents, query, callbacks=callbacks)
            return step.compress_documents(documents, query)
        transformer: BaseDocumentTransformer = step
        return transformer.transform_documents(documents)

    async def _acompress(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks
    ) -> Sequence[Document]:
        step = self.step
        if isinstance(step, BaseDocumentCompressor):
            if "callbacks" in signature(step.acompress_documents).parameters:
                return await step.acompress_documents(documents, query, callbacks=callbacks)
            return await step.acompress_documents(documents, query)
        transformer: BaseDocumentTransformer = step
        return await transformer.atransform_documents(documents)

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        if not isinstance(callbacks, CallbackManager):
            return self._compress(documents, query, callbacks)
        run = callbacks.on_retriever_start(self._serialized(), query, name=self.stage_name)
        try:
            out = self._compress(documents, query, run.get_child())
        except BaseException as exc:
            run.on_retriever_error(exc)
            raise
        run.on_retriever_end(list(out))
        return out

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        if not isinstance(callbacks, AsyncCallbackManager):
            return await self._acompress(documents, query, callbacks)
        run = await callbacks.on_retriever_start(self._serialized(), query, name=self.stage_name)
        try:
            out = await self._acompress(documents, query, run.get_child())
        except BaseException as exc:
            await run.on_retriever_error(exc)
            raise
        await run.on_retriever_end(list(out))
        return out


def observe(retriever: Any) -> Any:
    """A copy of ``retriever`` whose document compressors and transformers each report
    their output (:class:`ObservedStep`), through ``ContextualCompressionRetriever``
    (``base_compressor``, ``base_retriever``), ``DocumentCompressorPipeline``
    (``transformers``), ensembles and mergers (``retrievers``) and ``with_config``
    bindings (``bound``), at any depth. The given retriever is left as it is; a retriever
    with none of these is returned itself. Results are identical: each wrapper returns
    what its step returned."""
    return _observe(retriever, 0)


def _observe(obj: Any, depth: int) -> Any:
    if depth > 50:
        raise InputError("observe(): the retriever nests more than 50 levels (a cycle?)")
    copy: Callable[..., Any] | None = getattr(obj, "model_copy", None)
    if copy is None:
        return obj
    update: dict[str, Any] = {}
    compressor = getattr(obj, "base_compressor", None)
    if isinstance(compressor, BaseDocumentCompressor):
        new_compressor = _observe_compressor(compressor)
        if new_compressor is not compressor:
            update["base_compressor"] = new_compressor
    for attr in ("base_retriever", "bound"):
        inner = getattr(obj, attr, None)
        if inner is not None:
            new = _observe(inner, depth + 1)
            if new is not inner:
                update[attr] = new
    children = getattr(obj, "retrievers", None)
    if isinstance(children, list):
        new_children = [_observe(r, depth + 1) for r in children]
        if any(a is not b for a, b in zip(new_children, children)):
            update["retrievers"] = new_children
    return copy(update=update) if update else obj


def _observe_compressor(compressor: BaseDocumentCompressor) -> BaseDocumentCompressor:
    if isinstance(compressor, ObservedStep):
        return compressor
    steps = getattr(compressor, "transformers", None)
    if isinstance(steps, list) and all(
        isinstance(s, (BaseDocumentCompressor, BaseDocumentTransformer)) for s in steps
    ):
        if all(isinstance(s, ObservedStep) for s in steps):
            return compressor
        wrapped = [s if isinstance(s, ObservedStep) else ObservedStep(step=s) for s in steps]
        return compressor.model_copy(update={"transformers": wrapped})
    return ObservedStep(step=compressor)


def observed(retriever: Any) -> bool:
    """Whether every compressor reachable in ``retriever`` already reports its output."""
    return observe(retriever) is retriever


_WARNED_LOCK = threading.Lock()


def warn_unseen(tree: StageTree, warned: set[str], stacklevel: int = 2) -> None:
    """Say once per stage name (in ``warned``) that a wrapper's own steps are unseen."""
    names = [n for n in tree.unseen() if n not in warned]
    if not names:
        return
    with _WARNED_LOCK:
        names = [n for n in names if n not in warned]
        warned.update(names)
    for name in names:
        warnings.warn(
            f"ranklens: {name!r} wraps one retriever, and what it does to that retriever's "
            "output is not reported to LangChain's callbacks (document compressors and "
            "transformers emit none): its retriever's output and its own are recorded as "
            "stages, nothing between. To record each step, call "
            "ranklens_langchain.observe(retriever) in its place (the same results, each "
            "compressor's output reported), or wrap a step in "
            "ranklens_langchain.ObservedStep(step, name=...).",
            UnseenStagesWarning,
            stacklevel=stacklevel,
        )


def warn_side_by_side(names: Sequence[str], warned: set[str]) -> None:
    """Say once that a Runnable called several outermost retrievers (``names``)."""
    key = "|".join(names)
    if key in warned:
        return
    warned.add(key)
    warnings.warn(
        f"ranklens: one call ran {len(names)} retrievers side by side ({', '.join(names)}), "
        "not nested in one retriever run: no stages are recorded, only the Runnable's "
        "output. To record each as a stage, combine them in one retriever (an "
        "EnsembleRetriever, or a BaseRetriever that calls them with its run's callbacks), "
        "or run each on its own.",
        UnseenStagesWarning,
        stacklevel=2,
    )
