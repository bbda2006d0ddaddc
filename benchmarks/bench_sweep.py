"""What ``ranklens.sweep`` costs over running the same configurations by hand, in one run.

    uv run python benchmarks/bench_sweep.py                # SciFact (../shared/data), 300 queries
    uv run python benchmarks/bench_sweep.py --queries 100  # a quicker look

Twelve configurations on SciFact (5,183 abstracts; the demo's Merrow Isles set when the
shared data is absent): BM25 in LlamaIndex, LangChain (bm25s) and Haystack, over whole
abstracts or sentence chunks (mapped back with ``key="parent"``), each index built once
and asked at top-k 10 and 30. Both sides do the same work a user would:

* **by hand**: each index built, each configuration run with ``ranklens.run_retriever`` (a run log
  per configuration, concurrency 4), then one ``ranklens.compare`` of the twelve runs;
* **sweep**: one ``ranklens.sweep`` call with ``query_params=["top_k"]`` and a sweep
  folder, which also cross-validates the choice, tests the chosen configuration against
  every other, computes the significance matrix, the effects and the Pareto frontier.

``--scenario light`` is the sweep's worst case: a bm25s function retriever over one index
built beforehand (``build`` only binds the top-k and a field), so each configuration costs
its queries alone and the sweep's own work (the selection, 66 paired tests per metric for
the matrix, the effects' bootstrap, its folder) is the largest share it can be.

Times are CPU seconds of this process (``time.process_time``: every thread, so the
runner's worker threads count), taken alternately (by hand, sweep, by hand, sweep, ...)
after a warm-up of both, so imports and first-call costs are out. Target: the sweep's
overhead under 5%. Wall clock is left to a quiet machine.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import statistics
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

import ranklens

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
GRID = {"framework": ["llamaindex", "langchain", "haystack"],
        "chunks": ["passages", "sentences"], "top_k": [10, 30]}  # fmt: skip
METRICS = ["ndcg@10", "recall@10", "mrr@10"]
DATA: dict[str, ranklens.Dataset] = {}


def pieces(chunks: str) -> list[tuple[str, str, str]]:
    out = []
    for d, v in DATA["ds"].corpus.items():
        text = f"{v.get('title') or ''}. {v.get('text') or ''}"
        if chunks == "passages":
            out.append((d, d, text))
        else:
            out += [(f"{d}#{i}", d, s) for i, s in enumerate(re.split(r"(?<=[.!?])\s+", text))]
    return out


def build(framework: str, chunks: str):
    """One framework's BM25 index over one chunking; ``top_k -> retriever``."""
    parts = pieces(chunks)
    if framework == "llamaindex":
        from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
        from llama_index.retrievers.bm25 import BM25Retriever

        source = NodeRelationship.SOURCE
        nodes = [TextNode(id_=c, text=t, relationships={source: RelatedNodeInfo(node_id=d)})
                 for c, d, t in parts]  # fmt: skip
        index = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)

        def at(top_k: int):
            r = copy.copy(index)
            r.similarity_top_k = top_k
            return r

        return at
    if framework == "langchain":
        from langchain_core.documents import Document
        from ranklens_langchain import BM25sRetriever

        index = BM25sRetriever.from_documents(
            [Document(page_content=t, id=c, metadata={"doc_id": d}) for c, d, t in parts]
        )
        return lambda top_k: index.model_copy(update={"k": top_k})
    from haystack import Document
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    store.write_documents([Document(id=c, content=t, meta={"source_id": d}) for c, d, t in parts])
    return lambda top_k: InMemoryBM25Retriever(store, top_k=top_k)


LIGHT: dict[str, object] = {}


def light_build(field: str, top_k: int):
    """A bm25s retriever over the abstracts' ``field`` (built once beforehand)."""
    import bm25s

    index, ids = LIGHT[field]

    def bm25(query: str, k: int = 10):
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        idx, sc = index.retrieve(tokens, k=top_k, show_progress=False, n_threads=1)
        return [(ids[i], float(s)) for i, s in zip(idx[0].tolist(), sc[0].tolist())]

    return bm25


LIGHT_GRID = {"field": ["text", "title"], "top_k": [5, 10, 20, 30, 50, 100]}


def prepare_light() -> None:
    import bm25s

    ids = list(DATA["ds"].corpus)
    for field in LIGHT_GRID["field"]:
        texts = [str(DATA["ds"].corpus[d].get(field) or "") for d in ids]
        index = bm25s.BM25()
        index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
                    show_progress=False)  # fmt: skip
        LIGHT[field] = (index, ids)


def light_by_hand(folder: Path) -> ranklens.Report:
    results = {}
    for field in LIGHT_GRID["field"]:
        for top_k in LIGHT_GRID["top_k"]:
            name = f"field={field}, top_k={top_k}"
            results[name] = ranklens.run_retriever(light_build(field, top_k), DATA["ds"], k=10,
                                         concurrency=4, cache=folder / f"{field}-{top_k}.jsonl",
                                         name=name, progress=False)  # fmt: skip
    return ranklens.compare(DATA["ds"], results, METRICS, baseline=next(iter(results)))


def light_sweep(folder: Path):
    return ranklens.sweep(light_build, LIGHT_GRID, DATA["ds"], METRICS, k=10, concurrency=4,
                          cache=folder)  # fmt: skip


def by_hand(folder: Path) -> ranklens.Report:
    """What a user writes without ``sweep``: a loop of builds and runs, then compare."""
    results = {}
    for fw in GRID["framework"]:
        for chunks in GRID["chunks"]:
            at = build(fw, chunks)
            for top_k in GRID["top_k"]:
                name = f"framework={fw}, chunks={chunks}, top_k={top_k}"
                log = folder / f"{fw}-{chunks}-{top_k}.jsonl"
                results[name] = ranklens.run_retriever(at(top_k), DATA["ds"], k=10, key="parent",
                                             concurrency=4, cache=log, name=name,
                                             progress=False)  # fmt: skip
    return ranklens.compare(DATA["ds"], results, METRICS, baseline=next(iter(results)))


def with_sweep(folder: Path):
    return ranklens.sweep(build, GRID, DATA["ds"], METRICS, query_params=["top_k"], k=10,
                          key="parent", concurrency=4, cache=folder)  # fmt: skip


def timed(fn) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.process_time()
        fn(Path(tmp))
        return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scenario", choices=["frameworks", "light"], default="frameworks")
    args = ap.parse_args()
    if SHARED.exists():
        ds = ranklens.read_dataset(SHARED)
        name = "SciFact"
    else:
        from ranklens.app.demo_data import load

        ds, name = load(), "Merrow Isles (SciFact absent)"
    keep = [q for q in ds.queries if q in set(map(str, ds.qrels.query_ids))][: args.queries]
    ds = ranklens.Dataset({q: ds.queries[q] for q in keep}, ds.qrels.subset(keep), ds.corpus,
                          ds.name)  # fmt: skip
    warnings.simplefilter("ignore")
    hand_fn, sweep_fn = (by_hand, with_sweep) if args.scenario == "frameworks" else (
        light_by_hand, light_sweep)  # fmt: skip
    DATA["ds"] = ranklens.Dataset({q: ds.queries[q] for q in keep[:5]}, ds.qrels.subset(keep[:5]),
                                  ds.corpus, ds.name)  # fmt: skip
    if args.scenario == "light":
        prepare_light()
    timed(hand_fn), timed(sweep_fn)  # warm-up on 5 queries: imports, first calls
    DATA["ds"] = ds
    print(f"{name}: {len(ds.queries)} queries, {len(ds.corpus):,} documents, 12 configurations "
          f"({args.scenario})")  # fmt: skip
    hand, swept = [], []
    for i in range(args.repeat):
        hand.append(timed(hand_fn))
        swept.append(timed(sweep_fn))
        print(f"  repetition {i + 1}: by hand {hand[-1]:.2f} s, sweep {swept[-1]:.2f} s",
              flush=True)  # fmt: skip
    h, s = statistics.median(hand), statistics.median(swept)
    print(
        f"by hand : CPU {h:.2f} s (median of {args.repeat}: {', '.join(f'{x:.2f}' for x in hand)})"
    )
    print(
        f"sweep   : CPU {s:.2f} s (median of {args.repeat}: {', '.join(f'{x:.2f}' for x in swept)})"
    )
    print(f"overhead: {100 * (s / h - 1):+.1f}% of the by-hand CPU time (target: under 5%)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
