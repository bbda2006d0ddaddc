"""What a ranklens hook adds to a BM25 retrieval over 1,000 documents, per framework.

    uv run python benchmarks/bench_hooks.py                    # wall time
    uv run python benchmarks/bench_hooks.py --instructions     # valgrind: exact counts

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
  do-nothing pass-through component (``Haystack``), and ``ranklens_haystack.instrument()``
  (a tracer, no extra component) against a do-nothing tracer (``HaystackTracer``).
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

    return plain, noop, hooked


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

    return (
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

    return pipe(None), pipe(PassThrough()), pipe(RanklensRecorder())


def haystack_tracer() -> tuple:
    """Haystack through its tracer: no extra component (against a do-nothing tracer)."""
    from haystack import Document, Pipeline, tracing
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack.tracing.tracer import NullTracer
    from ranklens_haystack import instrument

    store = InMemoryDocumentStore()
    store.write_documents([Document(id=f"d{i}", content=t) for i, t in enumerate(DOCS)])
    p = Pipeline()
    p.add_component("retriever", InMemoryBM25Retriever(store, top_k=10))

    def plain(qs):
        for q in qs:
            p.run({"retriever": {"query": q}})

    def noop(qs):
        previous = tracing.tracer.actual_tracer
        tracing.enable_tracing(NullTracer())  # a tracer installed that does nothing
        plain(qs)
        tracing.tracer.actual_tracer = previous

    def hooked(qs):
        with instrument():
            plain(qs)

    return plain, noop, hooked


FRAMEWORKS = {
    "LlamaIndex": llamaindex,
    "LangChain": langchain,
    "Haystack": haystack,
    "HaystackTracer": haystack_tracer,
}
MODES = ("plain", "noop", "ranklens")


def one(framework: str, mode: str, n: int, gate: str | None = None) -> None:
    """Run ``n`` queries once in one mode (after 20 to warm up): the unit that
    ``--instructions`` counts under valgrind. With ``gate``, the script writes
    ``gate.ready`` and waits for ``gate.go`` (the parent turns instrumentation on between
    the two), and writes ``gate.done`` at the end."""
    import pathlib

    fn = dict(zip(MODES, FRAMEWORKS[framework]()))[mode]
    fn(QUERIES[:20])
    if gate:
        pathlib.Path(gate + ".ready").touch()
        while not pathlib.Path(gate + ".go").exists():
            time.sleep(0.05)
    fn(QUERIES[:n])
    if gate:
        pathlib.Path(gate + ".done").touch()
        while not pathlib.Path(gate + ".end").exists():
            time.sleep(0.05)


def instructions(framework: str, n: int = 200) -> None:
    """Instructions per query from valgrind (callgrind), deterministic unlike time on this
    VM: instrumentation is off through imports and index building and on only around the
    ``n`` measured queries (``callgrind_control -i on/off`` at the script's gates)."""
    import pathlib
    import re
    import subprocess
    import sys
    import tempfile

    def wait(path: pathlib.Path) -> None:
        while not path.exists():
            if proc.poll() is not None:  # the script failed before reaching its gate
                raise RuntimeError(f"{framework} {mode}: {proc.stderr.read()[-2000:]}")
            time.sleep(0.1)

    per_query = {}
    for mode in MODES:
        with tempfile.TemporaryDirectory() as tmp:
            gate = f"{tmp}/gate"
            proc = subprocess.Popen(
                ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                 f"--callgrind-out-file={tmp}/cg", sys.executable, __file__,
                 "--one", framework, mode, str(n), gate],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            wait(pathlib.Path(gate + ".ready"))
            subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True,
                           capture_output=True)  # fmt: skip
            pathlib.Path(gate + ".go").touch()
            wait(pathlib.Path(gate + ".done"))
            subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True,
                           capture_output=True)  # fmt: skip
            pathlib.Path(gate + ".end").touch()
            _, err = proc.communicate()
            per_query[mode] = int(re.search(r"Collected : (\d+)", err).group(1)) / n
    base = per_query["plain"]
    print(
        f"{framework:<11} {base / 1e6:7.3f} M instr/query   "
        f"do-nothing {100 * (per_query['noop'] - base) / base:+5.1f}%   "
        f"ranklens {100 * (per_query['ranklens'] - base) / base:+5.1f}%",
        flush=True,
    )


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    elif sys.argv[1:2] == ["--instructions"]:
        print("instructions per query (valgrind callgrind, only the measured queries)")
        for name in sys.argv[2:] or FRAMEWORKS:
            instructions(name)
    else:
        print(f"BM25 over 1,000 documents, 300 queries, {ROUNDS} rotating rounds (medians)")
        print("added: median paired difference (in brackets: fastest round against fastest round)")
        print(f"{'framework':<11} {'plain':>10}   {'do-nothing hook':>26}   {'ranklens hook':>26}")
        for name, make in FRAMEWORKS.items():
            measure(name, *make())
