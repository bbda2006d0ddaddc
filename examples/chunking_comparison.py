"""Compare chunkings with span labels: one labelled set, three frameworks' own splitters at
three chunk sizes each, BM25 over the chunks, paired significance tests.

    uv run python examples/chunking_comparison.py [--claims N] [--documents N] [--html PATH]

The labels are SciFact's rationale sentences as evidence spans (``scifact_spans.py``; read
from ../shared/data/scifact when it is there), so the same labels judge every chunking: a
chunk is relevant when it overlaps evidence, and the evidence metrics count how much of the
evidence the top 5 chunks hold (recall), how much of what they hold is evidence
(precision) and both at once (IoU). Without the SciFact data it runs on the demo's shipped
lighthouse passages, five to a lighthouse as one guide document each, the passages that
answer each question as evidence.

Each framework splits with its own splitter, which records where each chunk starts in its
document (LlamaIndex ``SentenceSplitter``: ``start_char_idx``; LangChain
``RecursiveCharacterTextSplitter(add_start_index=True)``: ``metadata["start_index"]``;
Haystack ``DocumentSplitter``: ``meta["split_idx_start"]``); ranklens reads the offsets,
checks them against the chunk's text and finds by its text a chunk that has none.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
from pathlib import Path
from typing import Any

from scifact_spans import read_scifact_spans, sample, to_document_labels

import ranklens

HERE = Path(__file__).resolve().parent
SCIFACT = HERE.parents[1] / "shared" / "data" / "scifact"
TOP_K = 20  # chunks each retriever returns; the metrics read the top 5 or 10 of them

SIZES = {  # framework -> (label, chunk size, overlap): small (~250 characters), medium, whole
    "llamaindex": [("small", 64, 16), ("medium", 192, 32), ("whole", 4096, 0)],  # tokens
    "langchain": [("small", 250, 50), ("medium", 800, 100), ("whole", 12000, 0)],  # chars
    "haystack": [("small", 40, 8), ("medium", 120, 20), ("whole", 3000, 0)],  # words
}
METRICS = [
    "P@5",
    "recall@5",
    "ndcg@10",
    "evidence_recall@5",
    "evidence_precision@5",
    "evidence_iou@5",
]


def sentences(text: str) -> list[str]:
    """A sentence split that keeps every character (each sentence with the whitespace after
    it), for LlamaIndex's ``SentenceSplitter``: its default needs NLTK data, and a split
    that drops the whitespace glues sentences into chunks that are not in the document."""
    return [s for s in re.split(r"(?<=[.!?]\s)", text) if s]


def llamaindex_bm25(texts: dict[str, str], size: int, overlap: int) -> tuple[Any, list[str]]:
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.retrievers.bm25 import BM25Retriever

    splitter = SentenceSplitter(
        chunk_size=size, chunk_overlap=overlap, chunking_tokenizer_fn=sentences
    )
    nodes = splitter.get_nodes_from_documents([Document(id_=d, text=t) for d, t in texts.items()])
    with contextlib.redirect_stdout(io.StringIO()):  # bm25s prints its progress
        retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=TOP_K)
    return retriever, [n.text for n in nodes]


def langchain_bm25(texts: dict[str, str], size: int, overlap: int) -> tuple[Any, list[str]]:
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from ranklens_langchain import BM25sRetriever

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=overlap, add_start_index=True
    )
    chunks = splitter.split_documents(
        [Document(page_content=t, metadata={"doc_id": d}) for d, t in texts.items()]
    )
    return BM25sRetriever.from_documents(chunks, k=TOP_K), [c.page_content for c in chunks]


def haystack_bm25(texts: dict[str, str], size: int, overlap: int) -> tuple[Any, list[str]]:
    from haystack import Document
    from haystack.components.preprocessors import DocumentSplitter
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    splitter = DocumentSplitter(split_by="word", split_length=size, split_overlap=overlap)
    chunks = splitter.run([Document(id=d, content=t) for d, t in texts.items()])["documents"]
    store = InMemoryDocumentStore()
    store.write_documents(chunks)
    return InMemoryBM25Retriever(store, top_k=TOP_K), [c.content for c in chunks]


BUILDERS = {"llamaindex": llamaindex_bm25, "langchain": langchain_bm25, "haystack": haystack_bm25}
CALLS = {
    "llamaindex": "SentenceSplitter(chunk_size={size}, chunk_overlap={overlap})",
    "langchain": "RecursiveCharacterTextSplitter(chunk_size={size}, chunk_overlap={overlap})",
    "haystack": 'DocumentSplitter("word", split_length={size}, split_overlap={overlap})',
}


def chunkings(texts: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The nine chunkings: ``{name: {"retriever", "framework", "label", "call", "chunks",
    "mean_chars"}}``, each a BM25 retriever over one framework splitter's chunks."""
    out = {}
    for fw, sizes in SIZES.items():
        for label, size, overlap in sizes:
            retriever, chunk_texts = BUILDERS[fw](texts, size, overlap)
            out[f"{fw} {label}"] = {
                "retriever": retriever,
                "framework": fw,
                "label": label,
                "call": CALLS[fw].format(size=size, overlap=overlap),
                "chunks": len(chunk_texts),
                "mean_chars": sum(map(len, chunk_texts)) / max(len(chunk_texts), 1),
            }
    return out


def run_all(dataset: ranklens.Dataset, setups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each retriever over the dataset's queries (``key="parent"``: every chunk is kept with
    its document and range for the span labels, and its document ranks for id labels)."""
    return {
        name: ranklens.run_retriever(
            s["retriever"],
            dataset,
            key="parent",
            name=name,
            calls=ranklens.Calling(progress=False),
        )
        for name, s in setups.items()
    }


def load(
    claims: int, documents: int, seed: int = 0, root: Path = SCIFACT
) -> tuple[ranklens.Dataset, str]:
    """SciFact dev (``claims`` claims with evidence, their abstracts and distractors up to
    ``documents``) from ``root``, or the demo's guides when the SciFact data is absent."""
    if (Path(root) / "raw" / "scifact.zip").exists():
        full = read_scifact_spans(root, split="dev")
        data = sample(full, claims, documents, seed=seed)
        return data, (
            f"SciFact dev: {len(data.queries)} claims, {data.qrels.n_spans} rationale "
            f"sentences as evidence spans, in {len(data.corpus)} abstracts "
            f"({len(set(data.qrels.doc_ids))} hold evidence)"
        )
    data = demo_guides()
    return data, (
        f"the demo's lighthouses (no SciFact data at {root}): {len(data.queries)} "
        f"questions, {data.qrels.n_spans} answering passages as evidence spans, in "
        f"{len(data.corpus)} guide documents"
    )


def demo_guides() -> ranklens.Dataset:
    """The demo's 150 passages as 30 guide documents (a lighthouse's five passages), and
    as evidence of each question the passages that answer it, in their groups."""
    from ranklens.app.demo_data import guides

    documents, questions, evidence = guides()
    labels = ranklens.SpanLabels.from_spans(evidence, documents)
    corpus = {g: {"title": "", "text": t} for g, t in documents.items()}
    return ranklens.Dataset(questions, labels, corpus, name="merrow-guides")


def chars_read(result: Any, k: int) -> float:
    """The characters a reader of the top ``k`` chunks reads, on average over queries."""
    totals = [sum(h.get("chars", 0) for h in (r.hits or [])[:k]) for r in result.records]
    return sum(totals) / max(len(totals), 1)


def budget(
    dataset: ranklens.Dataset, results: dict[str, Any], ks: tuple[int, ...] = (5, 10, 20)
) -> dict[str, dict[int, tuple[float, float]]]:
    """Per run and depth k: evidence recall@k and the characters the top k chunks hold
    (small chunks need a larger k for the same evidence, and still read fewer characters)."""
    out: dict[str, dict[int, tuple[float, float]]] = {}
    for name, result in results.items():
        ev = ranklens.evaluate(dataset.qrels, result, [f"evidence_recall@{k}" for k in ks])
        out[name] = {k: (ev[f"evidence_recall@{k}"], chars_read(result, k)) for k in ks}
    return out


def conclusions(
    spans: Any,
    docs: Any,
    setups: dict[str, dict[str, Any]],
    read: dict[str, dict[int, tuple[float, float]]],
) -> list[str]:
    """What the reports say, in sentences (every number taken from them)."""
    out = []
    for fw in SIZES:
        small, medium, whole = (f"{fw} {label}" for label, _, _ in SIZES[fw])
        p = spans.comparison(small, whole, "evidence_precision@5")
        r = spans.comparison(small, whole, "evidence_recall@5")
        out.append(
            f"{fw}: evidence precision@5 {spans.value(whole, 'evidence_precision@5'):.3f} "
            f"(whole) -> {spans.value(medium, 'evidence_precision@5'):.3f} (medium) -> "
            f"{spans.value(small, 'evidence_precision@5'):.3f} (small, "
            f"{setups[small]['mean_chars']:.0f} characters a chunk), small vs whole "
            f"{p.diff:+.3f} (p adj. {p.pvalue_adjusted:.4f}); evidence recall@5 "
            f"{spans.value(whole, 'evidence_recall@5'):.3f} -> "
            f"{spans.value(small, 'evidence_recall@5'):.3f} ({r.diff:+.3f}, p adj. "
            f"{r.pvalue_adjusted:.4f}); medium chunks at k=10 hold {read[medium][10][0]:.3f} "
            f"of the evidence in {read[medium][10][1]:,.0f} characters, whole documents at "
            f"k=5 {read[whole][5][0]:.3f} in {read[whole][5][1]:,.0f}"
        )
    label = {r: setups[r]["label"] for r in spans.runs}
    sig = [c for c in spans.comparisons if c.metric == "evidence_precision@5" and c.significant]
    sizes = sum(label[c.run] != label[c.other] for c in sig)
    n_sizes = sum(label[a] != label[b] for i, a in enumerate(spans.runs) for b in spans.runs[i:])
    n_same = len(spans.runs) * (len(spans.runs) - 1) // 2 - n_sizes
    out.append(
        f"Chunk size decides, the framework hardly: evidence precision@5 tells apart "
        f"{sizes} of the {n_sizes} pairs of chunkings of different sizes, and "
        f"{len(sig) - sizes} of the {n_same} pairs of one size in two frameworks."
    )
    same = [c for c in docs.comparisons if c.metric == "recall@5" and c.significant]
    lo, hi = (
        min(docs.value(r, "recall@5") for r in docs.runs),
        max(docs.value(r, "recall@5") for r in docs.runs),
    )
    out.append(
        f"Document labels (any chunk of the right document counts) tell {len(same)} pairs "
        f"apart: recall@5 {lo:.3f} to {hi:.3f} for all nine; they cannot see a chunk "
        "that is the evidence beside one that buries it."
    )
    best = spans.best("evidence_iou@5")
    out.append(
        f"Best evidence IoU@5: {best} ({spans.value(best, 'evidence_iou@5'):.3f}). Small "
        "chunks give the reader several times more evidence per character; at k=5 they "
        "miss some that larger chunks carry, so pick the chunk size with the reader's k."
    )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=60)
    parser.add_argument("--documents", type=int, default=280)
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="the SciFact folder")
    parser.add_argument("--html", help="write the span-label report as HTML here")
    args = parser.parse_args(argv)

    dataset, described = load(args.claims, args.documents, root=args.scifact)
    texts = {d: v["text"] for d, v in dataset.corpus.items()}
    print(described)
    setups = chunkings(texts)
    print(f"\n{'chunking':<18} {'splitter':<66} {'chunks':>6} {'chars':>6}")
    for name, s in setups.items():
        print(f"{name:<18} {s['call']:<66} {s['chunks']:>6} {s['mean_chars']:>6.0f}")
    results = run_all(dataset, setups)

    spans = ranklens.compare(dataset, results, METRICS)  # every pair, Holm per metric
    docs = ranklens.compare(to_document_labels(dataset.qrels), results, ["recall@5"])
    placed = {
        n: (spans.counts[n].get("chunks_relocated", 0), spans.counts[n].get("chunks_unlocated", 0))
        for n in results
    }
    retrieved = sum(spans.counts[n].get("hits_retrieved", 0) for n in results)
    print(
        f"\nOffsets: {retrieved} retrieved chunks, each range checked against its text: "
        f"{sum(a for a, _ in placed.values())} disagreed (found again by the text), "
        f"{sum(b for _, b in placed.values())} not found"
    )
    print("\nSpan labels (a chunk is relevant when it overlaps evidence):")
    print(spans.render("text", comparisons=False))
    read = budget(dataset, results)
    print("Evidence recall@k, and the characters the top k chunks hold:")
    print(f"{'chunking':<18} " + " ".join(f"{'k=' + str(k):>19}" for k in (5, 10, 20)))
    for name, row in read.items():
        cells = (f"{v:.3f} ({c:>6,.0f} ch)" for v, c in row.values())
        print(f"{name:<18} " + " ".join(f"{c:>19}" for c in cells))
    print("\nDocument labels (any chunk of an evidence document is relevant), recall@5:")
    print("  " + ", ".join(f"{r} {docs.value(r, 'recall@5'):.3f}" for r in docs.runs))
    print("\nWhat it says:")
    for line in conclusions(spans, docs, setups, read):
        print(f"- {line}")
    if args.html:
        spans.to_html(args.html, title="Chunkings compared with span labels")
        print(f"\nwrote {args.html}")


if __name__ == "__main__":
    main()
