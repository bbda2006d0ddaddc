"""A drop-in evaluator for a LlamaIndex app: measure the retrieval inside a query engine.

    uv run python examples/llamaindex_query_engine.py

The "app" is a query engine over the demo's lighthouse passages (BM25; the answer step is
"no_text" so no LLM is needed). `instrument()` records every retrieval it makes; the
recorded traffic is then evaluated against the labels, matched by query id (passed with
instrument_tags) or, for the questions users typed themselves, by their text.
"""

from __future__ import annotations

from llama_index.core import Settings
from llama_index.core.instrumentation.dispatcher import instrument_tags
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import get_response_synthesizer
from llama_index.core.schema import TextNode
from llama_index.retrievers.bm25 import BM25Retriever
from ranklens_llamaindex import instrument

from ranklens import Recorder
from ranklens.app.demo_data import load

dataset = load()
nodes = [TextNode(id_=d, text=f"{v['title']}. {v['text']}") for d, v in dataset.corpus.items()]
retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5)
Settings.llm = MockLLM()  # the no_text synthesizer never calls it
engine = RetrieverQueryEngine(
    retriever=retriever, response_synthesizer=get_response_synthesizer(response_mode="no_text")
)

with instrument(Recorder()) as recorder:
    for i, (qid, question) in enumerate(dataset.queries.items()):
        if i % 2:  # half the traffic carries its query id...
            with instrument_tags({"query_id": qid}):
                engine.query(question)
        else:  # ...the other half is matched to the labels by its (normalised) text
            engine.query(question.upper())

print(recorder.summary_line())
evaluation = recorder.evaluate(dataset, ["ndcg@5", "recall@5", "mrr@5"])
print(evaluation.to_table())
print("matched:", evaluation.recorder_counts)
