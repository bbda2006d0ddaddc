"""A Haystack pipeline with the ranklens recorder, and the ranklens evaluator component
next to Haystack's own (same contract, any metric, any convention).

    uv run python examples/haystack_evaluator.py
"""

from __future__ import annotations

import logging
import os

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
logging.getLogger("haystack").setLevel(logging.ERROR)

from haystack import Document, Pipeline  # noqa: E402
from haystack.components.evaluators import DocumentNDCGEvaluator  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402
from ranklens_haystack import RanklensEvaluator, RanklensRecorder  # noqa: E402

from ranklens.app.demo_data import load  # noqa: E402

dataset = load()
store = InMemoryDocumentStore()
store.write_documents(
    [Document(id=d, content=f"{v['title']}. {v['text']}") for d, v in dataset.corpus.items()]
)

# 1. The app's pipeline, with the recorder after the retriever.
app = Pipeline()
app.add_component("retriever", InMemoryBM25Retriever(store, top_k=5))
app.add_component("recorder", RanklensRecorder())
app.connect("retriever.documents", "recorder.documents")
retrieved = []
for qid, question in dataset.queries.items():
    out = app.run(
        {"retriever": {"query": question}, "recorder": {"query": question, "query_id": qid}}
    )
    retrieved.append(out["recorder"]["documents"])
recorder = app.get_component("recorder").recorder
print(recorder.evaluate(dataset, ["ndcg@5", "recall@5"]).to_table())

# 2. An evaluation pipeline: Haystack's nDCG and ranklens' under two conventions.
graded = dataset.qrels.to_dict()  # {query: {doc: grade}}; Haystack takes grades as scores
ground_truth = [
    [Document(id=d, content=dataset.corpus[d]["text"], score=g) for d, g in graded[qid].items()]
    for qid in dataset.queries
]
evaluation = Pipeline()
evaluation.add_component("haystack_ndcg", DocumentNDCGEvaluator(document_comparison_field="id"))
evaluation.add_component("ranklens_haystack", RanklensEvaluator("ndcg", convention="haystack"))
evaluation.add_component("ranklens_trec", RanklensEvaluator("ndcg@5"))  # cut at 5
inputs = {"ground_truth_documents": ground_truth, "retrieved_documents": retrieved}
scores = evaluation.run(
    {name: inputs for name in ("haystack_ndcg", "ranklens_haystack", "ranklens_trec")}
)
for name, result in scores.items():
    print(f"{name:<18} {result['score']:.4f}")
