"""Framework-exact fusion: ranklens.fuse(..., method="langchain" | "llamaindex:..." |
"haystack:...") equals the frameworks' own fusion code (LangChain's EnsembleRetriever,
LlamaIndex's QueryFusionRetriever, Haystack's DocumentJoiner) on generated lists."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens


@st.composite
def lists(draw):
    """2-3 retrievers' result lists for one query, sorted by score, distinct scores."""
    out = []
    for _ in range(draw(st.integers(2, 3))):
        docs = draw(st.lists(st.sampled_from([f"d{i}" for i in range(10)]), min_size=1,
                             max_size=8, unique=True))  # fmt: skip
        scores = draw(st.lists(st.integers(-20, 200), min_size=len(docs), max_size=len(docs),
                               unique=True))  # fmt: skip
        out.append(sorted(zip(docs, (x / 11 for x in scores)), key=lambda t: -t[1]))
    weights = draw(st.lists(st.sampled_from([0.1, 0.3, 1.0, 2.5]), min_size=len(out),
                            max_size=len(out)))  # fmt: skip
    return out, weights


def ours(result_lists, method, weights):
    runs = {f"r{i}": {"q": dict(lst)} for i, lst in enumerate(result_lists)}
    return ranklens.fuse(runs, method, weights=weights).to_dict()["q"]


def assert_scores(got, want):
    assert set(got) == set(want)
    for d, v in want.items():
        assert math.isclose(got[d], v, rel_tol=1e-12, abs_tol=1e-12), (d, got[d], v)


SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(lists(), st.sampled_from(["reciprocal_rerank", "relative_score", "dist_based_score",
                                 "simple"]), st.booleans())  # fmt: skip
def test_llamaindex_query_fusion_retriever(case, mode, weighted):
    from llama_index.core.llms import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    result_lists, weights = case
    weights = weights if weighted else None

    class Fixed:  # QueryFusionRetriever only stores its retrievers here
        pass

    fusion = QueryFusionRetriever(
        [Fixed() for _ in result_lists], mode=mode, num_queries=1, use_async=False,
        retriever_weights=weights, similarity_top_k=100, llm=MockLLM(),
    )  # fmt: skip
    results = {
        ("q", i): [NodeWithScore(node=TextNode(text=d, id_=d), score=s) for d, s in lst]
        for i, lst in enumerate(result_lists)
    }
    fused = {
        "reciprocal_rerank": fusion._reciprocal_rerank_fusion,
        "relative_score": fusion._relative_score_fusion,
        "dist_based_score": lambda r: fusion._relative_score_fusion(r, dist_based=True),
        "simple": fusion._simple_fusion,
    }[mode](results)
    want = {n.node.text: n.score for n in fused}
    assert_scores(ours(result_lists, f"llamaindex:{mode}", weights), want)


@SETTINGS
@given(lists(), st.sampled_from(["concatenate", "merge", "reciprocal_rank_fusion",
                                 "distribution_based_rank_fusion"]), st.booleans())  # fmt: skip
def test_haystack_document_joiner(case, mode, weighted):
    from haystack import Document
    from haystack.components.joiners import DocumentJoiner

    result_lists, weights = case
    weights = weights if weighted else None
    joiner = DocumentJoiner(join_mode=mode, weights=weights)
    out = joiner.run(documents=[[Document(id=d, content=d, score=s) for d, s in lst]
                                for lst in result_lists])["documents"]  # fmt: skip
    want = {doc.id: doc.score for doc in out}
    assert_scores(ours(result_lists, f"haystack:{mode}", weights), want)


@SETTINGS
@given(lists(), st.booleans())
def test_langchain_ensemble_retriever(case, weighted):
    pytest.importorskip("langchain_classic")
    from collections import defaultdict

    import langchain_classic.retrievers.ensemble as ensemble_module
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    result_lists, weights = case
    n = len(result_lists)
    weights = weights if weighted else [1.0 / n] * n

    class Fixed(BaseRetriever):
        docs: list

        def _get_relevant_documents(self, query, *, run_manager=None):
            return self.docs

    seen: list[dict] = []

    class Recording(defaultdict):  # LangChain's own score table, kept for the comparison
        def __init__(self, *args):
            super().__init__(*args)
            seen.append(self)

    retrievers = [Fixed(docs=[Document(page_content=d) for d, _ in lst]) for lst in result_lists]
    ensemble = EnsembleRetriever(retrievers=retrievers, weights=weights)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ensemble_module, "defaultdict", Recording)
        order = [doc.page_content for doc in ensemble.invoke("q")]
    got = ours(result_lists, "langchain", weights)
    (scores,) = seen
    assert_scores(got, dict(scores))
    # and its order is ours, tied documents in either order
    values = [got[d] for d in order]
    assert sorted(order) == sorted(got)
    assert all(a >= b - 1e-15 for a, b in itertools.pairwise(values)), (order, got)
