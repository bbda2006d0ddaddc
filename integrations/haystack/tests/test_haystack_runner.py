"""Haystack retrievers through the ranklens runner: InMemoryBM25Retriever as a component and
inside a Pipeline (run_async), documents mapped by meta fields."""

from __future__ import annotations

import pytest
from haystack import Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from ranklens_haystack import HaystackRetriever, run

from ranklens.errors import InputError


def test_bm25_component_on_cranfield_equals_trec_eval(
    store_of, assert_equals_trec_eval, cranfield, tmp_path
):
    retriever = InMemoryBM25Retriever(store_of(cranfield), top_k=10)
    adapter = HaystackRetriever(retriever)
    assert adapter.is_async  # InMemoryBM25Retriever has run_async
    result = run(retriever, cranfield, k=100, concurrency=4, name="haystack-bm25", progress=False)
    assert not result.failed
    # k reaches the component as top_k (its own default is 10).
    assert max(len(r.doc_ids) for r in result.records) == 100
    ev = assert_equals_trec_eval(result, cranfield, tmp_path)
    assert 0.2 < ev["map"] < 0.35


def test_pipeline_reads_the_named_component(
    store_of, assert_equals_trec_eval, scifact_slice, tmp_path
):
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store_of(scifact_slice)))
    with pytest.raises(InputError, match="component= one of retriever"):
        HaystackRetriever(pipe)
    result = run(
        pipe,
        scifact_slice,
        component="retriever",
        k=10,
        key="meta.file_id",
        progress=False,
        cache=tmp_path / "pipe.jsonl",
    )
    direct = run(
        InMemoryBM25Retriever(store_of(scifact_slice)), scifact_slice, k=10, progress=False
    )
    assert result.run.to_lists() == direct.run.to_lists()
    assert_equals_trec_eval(result, scifact_slice, tmp_path)
    # The configuration hash does not depend on the store's random index name: a pipeline
    # built anew (as in another process) resumes from the log.
    pipe2 = Pipeline()
    pipe2.add_component("retriever", InMemoryBM25Retriever(store_of(scifact_slice)))
    again = run(
        pipe2,
        scifact_slice,
        component="retriever",
        k=10,
        key="meta.file_id",
        progress=False,
        cache=tmp_path / "pipe.jsonl",
    )
    assert again.info["resumed"] == len(scifact_slice.queries)


def test_ranklens_run_wraps_components_through_the_entry_point(store_of, scifact_slice):
    """A Haystack component, built in or the user's own @component class (whose module is
    the user's: found through Haystack's metaclass), runs through ``ranklens.run_retriever``."""
    from haystack import Document, component

    import ranklens

    store = store_of(scifact_slice)
    builtin = InMemoryBM25Retriever(store, top_k=10)
    direct = ranklens.run_retriever(builtin, scifact_slice, progress=False)
    assert direct.config["retriever"]["framework"] == "haystack"
    assert direct.run.to_lists() == run(builtin, scifact_slice, progress=False).run.to_lists()

    @component
    class FirstDocs:
        @component.output_types(documents=list[Document])
        def run(self, query: str, top_k: int = 3):
            return {"documents": [Document(id=f"d{i}", content=query) for i in range(top_k)]}

    assert FirstDocs.__module__ == __name__
    own = ranklens.run_retriever(FirstDocs(), {"q": "anything"}, k=2, progress=False)
    assert own.run.to_lists() == {"q": ["d0", "d1"]}
