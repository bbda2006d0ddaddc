"""Does a recency component help? Each framework's against the same retriever without it,
on a corpus with planted outdated versions, with paired significance tests.

The corpus is the demo's 150 passages about the Merrow Isles lighthouses, each dated, with
75 older versions planted beside them: the same page as it stood years before, with other
opening months, prices, light ranges, dates and rescues (``ranklens/data/demo/
versions.jsonl``; each record's metadata has ``valid_from`` and its version ``group``). The
36 questions are labelled with the current passages; the labels carry to every version, and
an outdated version is judged grade 0 (the ``zero`` freshness rule), so nDCG and MRR count
only current evidence, while ``outdated@k`` and ``current_first@k`` measure freshness
itself; "ndcg@10 (keep)" is what relevance labels alone see.

    uv run python examples/recency.py

Components (all offline; no embedding model is downloaded), each fed the top 10:

* LangChain: ``TimeWeightedVectorStoreRetriever`` (langchain-classic) over an
  ``InMemoryVectorStore`` with a hashed bag-of-words embedding, each document's
  ``last_accessed_at`` set to its date (decay 5e-5 per hour: a half-life of 1.6 years),
  against the vector store's own retriever;
* LlamaIndex: BM25 followed by ``TimeWeightedPostprocessor`` (the date as
  ``__last_accessed__``, the same decay) and, separately, by
  ``FixedRecencyPostprocessor`` (newest first);
* Haystack: ``InMemoryBM25Retriever`` followed by ``MetaFieldRanker`` on the date
  (``meta_value_type="date"``, reciprocal rank fusion at weight 0.5).

The time-weighted components rewrite each returned document's last-accessed time to "now"
on every retrieval, so their results depend on the wall clock and on the order of the
queries. Both are frozen here: the clock reads 2026-01-01T00:00Z
(``langchain_core.utils.mock_now``; the postprocessor's ``now=``), the queries run one at a
time in the labelled set's order, and every component is built afresh for each run. A line
under each table shows what reversing the order changes.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import os
import re
import zlib

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
logging.getLogger("haystack").setLevel(logging.ERROR)

import ranklens  # noqa: E402
from ranklens.app.demo_versions import load_versions  # noqa: E402
from ranklens.model.times import show_time  # noqa: E402

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
K = 10
DECAY = 5e-5  # per hour, for both time-weighted components
DIM = 1024  # the hashed embedding's width
METRICS = ["ndcg@10", "mrr@10", "outdated@1", "outdated@5", "current_first@10"]
FROZEN = (
    f"the clock frozen at {NOW:%Y-%m-%dT%H:%MZ}, the queries run one at a time in the "
    "labelled set's order, every component built afresh for each run"
)

dataset, versions = load_versions()
corpus = dataset.corpus
ORDER: dict[str, tuple[str, ranklens.RunResult, ranklens.RunResult]] = {}
"""Per framework: a time-weighted component, its run in order and in reverse order."""


def text(v: dict) -> str:
    return f"{v['title']}. {v['text']}"


def day(v: dict) -> dt.datetime:
    return dt.datetime.fromisoformat(v["metadata"]["valid_from"]).replace(tzinfo=dt.timezone.utc)


def run(retriever, name: str, reverse: bool = False) -> ranklens.RunResult:
    """One run with the query order frozen: one query at a time, in the labelled set's
    order (or its reverse)."""
    queries = dict(reversed(dataset.queries.items())) if reverse else dataset.queries
    return ranklens.run_retriever(retriever, queries, k=K, name=name, concurrency=1, progress=False)


# ------------------------------------------------------------------ LangChain
def langchain_runs() -> dict[str, ranklens.RunResult]:
    from langchain_classic.retrievers import TimeWeightedVectorStoreRetriever
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.utils import mock_now
    from langchain_core.vectorstores import InMemoryVectorStore

    class WordHashEmbeddings(Embeddings):
        """Hashed bag of words, L2-normalised: a lexical retriever in a vector store."""

        def _embed(self, t: str) -> list[float]:
            counts: dict[int, float] = {}
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                i = zlib.crc32(w.encode()) % DIM
                counts[i] = counts.get(i, 0.0) + 1.0
            n = math.sqrt(sum(x * x for x in counts.values())) or 1.0
            v = [0.0] * DIM
            for i, x in counts.items():
                v[i] = x / n
            return v

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [self._embed(t) for t in texts]

        def embed_query(self, t: str) -> list[float]:
            return self._embed(t)

    class Store(InMemoryVectorStore):
        """The in-memory store, its cosine similarity (here in [0, 1]) the relevance score
        the time-weighted retriever adds its recency to."""

        def _select_relevance_score_fn(self):
            return lambda similarity: similarity

    def docs() -> list[Document]:  # naive UTC: the retriever subtracts them from now()
        when = {d: day(v).replace(tzinfo=None) for d, v in corpus.items()}
        return [
            Document(id=d, page_content=text(v), metadata={"last_accessed_at": when[d]})
            for d, v in corpus.items()
        ]

    def time_weighted() -> TimeWeightedVectorStoreRetriever:
        retriever = TimeWeightedVectorStoreRetriever(
            vectorstore=Store(WordHashEmbeddings()), k=K, decay_rate=DECAY,
            search_kwargs={"k": 2 * K},
        )  # fmt: skip
        retriever.add_documents(docs())
        return retriever

    plain = Store(WordHashEmbeddings())
    plain.add_documents(docs())
    name = "+ TimeWeightedVectorStoreRetriever"
    out = {"vector store": run(plain.as_retriever(search_kwargs={"k": K}), "vector store")}
    with mock_now(NOW.replace(tzinfo=None)):
        out[name] = run(time_weighted(), "time-weighted")
        ORDER["LangChain"] = (name[2:], out[name], run(time_weighted(), "reversed", True))
    return out


# ------------------------------------------------------------------ LlamaIndex
def llamaindex_runs() -> dict[str, ranklens.RunResult]:
    from llama_index.core.postprocessor import FixedRecencyPostprocessor, TimeWeightedPostprocessor
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever
    from ranklens_llamaindex import to_hit

    hidden = ["date", "__last_accessed__"]  # not part of the text BM25 reads

    def bm25():
        nodes = [
            TextNode(
                id_=d,
                text=text(v),
                metadata={
                    "date": v["metadata"]["valid_from"],
                    "__last_accessed__": day(v).timestamp(),
                },
                excluded_embed_metadata_keys=hidden,
                excluded_llm_metadata_keys=hidden,
            )
            for d, v in corpus.items()
        ]
        return BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=K)

    def then(post):
        """BM25, then a postprocessor: a function returning ranklens hits."""
        retriever = bm25()

        def retrieve(query: str):
            nodes = post.postprocess_nodes(retriever.retrieve(query), query_str=query)
            return [to_hit(n) for n in nodes]

        return retrieve

    def weighted():
        return TimeWeightedPostprocessor(time_decay=DECAY, now=NOW.timestamp(), top_k=K)

    name = "+ TimeWeightedPostprocessor"
    out = {
        "BM25": run(bm25(), "bm25"),
        name: run(then(weighted()), "time-weighted"),
        "+ FixedRecencyPostprocessor": run(
            then(FixedRecencyPostprocessor(date_key="date", top_k=K)), "fixed-recency"
        ),
    }
    ORDER["LlamaIndex"] = (name[2:], out[name], run(then(weighted()), "reversed", True))
    return out


# ------------------------------------------------------------------ Haystack
def haystack_runs() -> dict[str, ranklens.RunResult]:
    from haystack import Document, Pipeline
    from haystack.components.rankers import MetaFieldRanker
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from ranklens_haystack import run as run_pipeline

    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(id=d, content=text(v), meta={"date": v["metadata"]["valid_from"]})
            for d, v in corpus.items()
        ]
    )
    ranker = MetaFieldRanker(
        meta_field="date", weight=0.5, meta_value_type="date",
        ranking_mode="reciprocal_rank_fusion",
    )  # fmt: skip
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=K))
    pipe.add_component("ranker", ranker)
    pipe.connect("retriever.documents", "ranker.documents")
    ranked = run_pipeline(pipe, dataset, component="ranker", k=K, name="meta-field-ranker",
                          concurrency=1, progress=False)  # fmt: skip
    base = run(InMemoryBM25Retriever(store, top_k=K), "bm25")
    return {"BM25": base, "+ MetaFieldRanker (date)": ranked}


def show(framework: str, runs: dict[str, ranklens.RunResult]) -> None:
    """The runs side by side (a star: differs from the first, paired randomization test,
    Holm-corrected), nDCG@10 by relevance alone, and what reversing the queries changes."""
    base = next(iter(runs))
    report = ranklens.compare(dataset, runs, METRICS, baseline=base, versions=versions,
                              drilldown=None, test="randomization")  # fmt: skip
    keep = {
        n: ranklens.evaluate(dataset, r.run, ["ndcg@10"], versions=versions, freshness="keep")
        for n, r in runs.items()
    }
    print(f"== {framework}")
    print(f"  {'':<36}" + "".join(f"{m:>18}" for m in [*METRICS, "ndcg@10 (keep)"]))
    for name in runs:
        cells = []
        for m in METRICS:
            c = next((c for c in report.comparisons if c.metric == m and name == c.run), None)
            mark = "*" if c is not None and c.significant else " "
            cells.append(f"{report.value(name, m):>17.3f}{mark}")
        print(f"  {name:<36}" + "".join(cells) + f"{keep[name]['ndcg@10']:>17.3f}")
    if framework in ORDER:
        component, first, second = ORDER[framework]
        a, b = first.run.to_lists(), second.run.to_lists()
        moved = sum(a[q] != b.get(q) for q in a)
        given, back = (
            ranklens.evaluate(dataset, r.run, METRICS, versions=versions) for r in (first, second)
        )
        why = (
            "it rewrote last-accessed times as it went"
            if moved
            else "its rewrites did not last: the BM25 retriever builds new nodes for every query"
        )
        print(
            f"  {component}, queries in reverse order: {moved} of {len(a)} rankings differ; "
            f"ndcg@10 {given['ndcg@10']:.3f} -> {back['ndcg@10']:.3f}, outdated@1 "
            f"{given['outdated@1']:.3f} -> {back['outdated@1']:.3f} ({why})"
        )
    print()


if __name__ == "__main__":
    planted = len(corpus) - len(versions.group_ids)
    print(
        f"{len(dataset.queries)} questions, {len(corpus)} documents ({planted} outdated versions "
        f"planted), judged as of the newest version ({show_time(versions.latest)}); outdated "
        f"versions judged grade 0.\nReproducible: {FROZEN}.\n* = differs from the first run "
        "(paired randomization test, Holm, alpha 0.05).\n"
    )
    show("LangChain", langchain_runs())
    show("LlamaIndex", llamaindex_runs())
    show("Haystack", haystack_runs())
