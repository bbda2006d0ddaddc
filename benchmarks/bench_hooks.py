"""What a ranklens hook adds to a BM25 retrieval over 1,000 documents, per framework.

    uv run python benchmarks/bench_hooks.py

Each framework retrieves 300 queries three ways, in rounds that rotate their order:
without a hook, with a do-nothing hook in the same slot (what the framework itself charges
for having a hook there), and with the ranklens hook. Added latency is the median over
rounds of the paired difference with the plain round (so this VM's slow drifts cancel).
Target: the ranklens hook adds under 5%.

* LlamaIndex: BM25Retriever (bm25s); ``instrument(Recorder())`` on the root dispatcher
  against a do-nothing event handler;
* LangChain: a bm25s BaseRetriever; ``RanklensCallbackHandler`` against a do-nothing
  ``BaseCallbackHandler``;
* Haystack: InMemoryBM25Retriever in a Pipeline; ``RanklensRecorder`` after it against a
  do-nothing pass-through component.
"""

import logging
import os
import statistics
import time

import numpy as np

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
logging.getLogger("haystack").setLevel(logging.ERROR)
ROUNDS = 15


def texts(n: int, words: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(3000)]
    return [" ".join(rng.choice(vocab, words)) for _ in range(n)]


DOCS = texts(1000, 60, 0)
QUERIES = texts(300, 5, 1)


def measure(label: str, plain, noop, hooked) -> None:
    fns = {"plain": plain, "noop": noop, "ranklens": hooked}
    for fn in fns.values():
        fn(QUERIES[:20])
    times: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for r in range(ROUNDS):
        for name in names[r % 3 :] + names[: r % 3]:
            t = time.perf_counter()
            fns[name](QUERIES)
            times[name].append((time.perf_counter() - t) / len(QUERIES) * 1e6)
    base = statistics.median(times["plain"])
    fastest = min(times["plain"])

    def added(name: str) -> str:
        d = statistics.median(y - x for x, y in zip(times["plain"], times[name]))
        f = min(times[name]) - fastest  # the least disturbed rounds of each
        return f"{d:+6.1f} us {100 * d / base:+5.1f}% ({100 * f / fastest:+5.1f}%)"

    print(f"{label:<11} {base:7.1f} us   {added('noop')}   {added('ranklens')}")


def llamaindex() -> None:
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever
    from ranklens_llamaindex import instrument

    class Noop(BaseEventHandler):
        def handle(self, event, **kwargs):
            return None

    r = BM25Retriever.from_defaults(
        nodes=[TextNode(id_=f"d{i}", text=t) for i, t in enumerate(DOCS)], similarity_top_k=10
    )
    dispatcher = get_dispatcher()

    def plain(qs):
        for q in qs:
            r.retrieve(q)

    def noop(qs):
        h = Noop()
        dispatcher.add_event_handler(h)
        plain(qs)
        dispatcher.event_handlers.remove(h)

    def hooked(qs):
        with instrument():
            plain(qs)

    measure("LlamaIndex", plain, noop, hooked)


def langchain() -> None:
    import bm25s
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from ranklens_langchain import RanklensCallbackHandler

    index = bm25s.BM25()
    index.index(bm25s.tokenize(DOCS, show_progress=False), show_progress=False)

    class BM25(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            tok = bm25s.tokenize([query], show_progress=False)
            idx, sc = index.retrieve(tok, k=10, show_progress=False, n_threads=1)
            return [
                Document(page_content=DOCS[i], id=f"d{i}", metadata={"score": float(s)})
                for i, s in zip(idx[0].tolist(), sc[0].tolist())
            ]

    r = BM25()

    def with_handler(handler):
        def go(qs):
            for q in qs:
                r.invoke(q, config={"callbacks": [handler]} if handler else None)

        return go

    measure(
        "LangChain",
        with_handler(None),
        with_handler(BaseCallbackHandler()),
        with_handler(RanklensCallbackHandler()),
    )


def haystack() -> None:
    from haystack import Document, Pipeline, component
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from ranklens_haystack import RanklensRecorder

    @component
    class PassThrough:
        @component.output_types(documents=list[Document])
        def run(self, documents: list[Document], query: str | None = None):
            return {"documents": documents}

    store = InMemoryDocumentStore()
    store.write_documents([Document(id=f"d{i}", content=t) for i, t in enumerate(DOCS)])

    def pipe(after):
        p = Pipeline()
        p.add_component("retriever", InMemoryBM25Retriever(store, top_k=10))
        if after is not None:
            p.add_component("after", after)
            p.connect("retriever.documents", "after.documents")

        def go(qs):
            for q in qs:
                data = {"retriever": {"query": q}}
                if after is not None:
                    data["after"] = {"query": q}
                p.run(data)

        return go

    measure("Haystack", pipe(None), pipe(PassThrough()), pipe(RanklensRecorder()))


if __name__ == "__main__":
    print(f"BM25 over 1,000 documents, 300 queries, {ROUNDS} rotating rounds (medians)")
    print("added: median paired difference (in brackets: fastest round against fastest round)")
    print(f"{'framework':<11} {'plain':>10}   {'do-nothing hook':>26}   {'ranklens hook':>26}")
    llamaindex()
    langchain()
    haystack()
