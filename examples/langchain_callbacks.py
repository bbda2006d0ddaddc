"""A LangChain chain with the ranklens callback handler: capture the retrievals a chain
makes under `batch`, evaluate them, and watch the rolling summary.

    uv run python examples/langchain_callbacks.py
"""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from ranklens_langchain import BM25sRetriever, RanklensCallbackHandler

from ranklens.app.demo_data import load

dataset = load()
docs = [
    Document(page_content=f"{v['title']}. {v['text']}", id=d, metadata={"doc_id": d})
    for d, v in dataset.corpus.items()
]
retriever = BM25sRetriever.from_documents(docs, k=5)
# A chain whose first step is the retriever; the second builds the context for an LLM.
chain = retriever | RunnableLambda(lambda found: "\n\n".join(d.page_content for d in found))

handler = RanklensCallbackHandler(key="meta.doc_id")  # map hits by the metadata field
questions = list(dataset.queries.items())
configs = [{"callbacks": [handler], "metadata": {"query_id": q}} for q, _ in questions]
contexts = chain.batch([text for _, text in questions], configs, max_concurrency=4)

recorder = handler.recorder
print(recorder.summary_line())
print(recorder.evaluate(dataset, ["ndcg@5", "recall@5", "P@5"]).to_table())
first = next(iter(recorder.records()))
print(f"first retrieval: run id {first.trace_id}, inside chain run {first.parent_trace_id}")
