"""Chunk sizes compared at an equal number of chunks and at an equal context budget: BM25
over 200-, 400- and 800-character chunkings of SciFact, judged by one set of span labels.

    uv run python examples/chunking_budget.py [--claims N] [--documents N] [--budget TOKENS]

At equal k (``evidence_recall@10``) larger chunks read more text, so they hold more of the
evidence almost by construction; at an equal budget (``evidence_recall@1024tok``) every
chunking reads the same number of tokens, the question a reader with a fixed context
window asks. Each pair of chunkings is compared with a paired test over the claims
(``ranklens.compare``: Fisher's randomization test, 10,000 sign flips, Holm's correction
per metric).

The labels are SciFact's rationale sentences as evidence spans (``scifact_spans.py``),
read from ../shared/data/scifact; without that folder the script says so and stops.
The chunker is LangChain's ``RecursiveCharacterTextSplitter`` (no overlap, so the chunks
of one document never repeat a character), the retriever BM25 (``bm25s``) over its chunks.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import chunking_comparison
from chunking_comparison import langchain_bm25, run_all
from scifact_spans import read_scifact_spans, sample

import ranklens

HERE = Path(__file__).resolve().parent
SCIFACT = HERE.parents[1] / "shared" / "data" / "scifact"
SIZES = (200, 400, 800)
RETRIEVED = 60  # chunks per claim: more than any budget below holds of the smallest chunks


def metrics(budget: int) -> list[str]:
    """Evidence recall and precision at 10 chunks and at ``budget`` tokens."""
    return [
        "evidence_recall@10",
        f"evidence_recall@{budget}tok",
        "evidence_precision@10",
        f"evidence_precision@{budget}tok",
    ]


def chunkings(texts: dict[str, str]) -> dict[str, Any]:
    """``{"200 chars": {"retriever": ...}, ...}``: BM25 over each chunking of the abstracts,
    each returning :data:`RETRIEVED` chunks."""
    chunking_comparison.TOP_K = RETRIEVED
    return {f"{size} chars": {"retriever": langchain_bm25(texts, size, 0)[0]} for size in SIZES}


def chunks_read(results: dict[str, Any], dataset: Any, budget: int) -> dict[str, float]:
    """Per chunking, the chunks its budget holds on average over the claims."""
    from ranklens.judging.budget import Budget

    out = {}
    for name, result in results.items():
        judged = ranklens.judge(dataset.qrels, result)
        out[name] = float(judged.budget_cutoffs(Budget(budget, "tok")).mean())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--documents", type=int, default=1500)
    parser.add_argument("--budget", type=int, default=1024, help="the context, in tokens")
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="the SciFact folder")
    args = parser.parse_args(argv)
    if not (args.scifact / "raw" / "scifact.zip").exists():
        print(f"no SciFact data at {args.scifact} (raw/scifact.zip): nothing to compare")
        return 0

    dataset = sample(read_scifact_spans(args.scifact, split="dev"), args.claims, args.documents)
    texts = {d: v["text"] for d, v in dataset.corpus.items()}
    print(
        f"SciFact dev: {len(dataset.queries)} claims, {dataset.qrels.n_spans} rationale "
        f"sentences as evidence spans, in {len(texts)} abstracts"
    )
    results = run_all(dataset, chunkings(texts))
    names = metrics(args.budget)
    report = ranklens.compare(dataset, results, names)
    held = chunks_read(results, dataset, args.budget)

    print(
        f"\n{'chunking':<10} " + " ".join(f"{n:>28}" for n in names) + f" {'chunks in budget':>17}"
    )
    for run in report.runs:
        cells = " ".join(f"{report.value(run, n):>28.3f}" for n in names)
        print(f"{run:<10} {cells} {held[run]:>17.1f}")

    print("\nPaired tests (difference of the means, Holm-adjusted p):")
    for n in names:
        for i, a in enumerate(report.runs):
            for b in report.runs[i + 1 :]:
                c = report.comparison(a, b, n)
                assert c is not None
                mark = "significant" if c.significant else "not significant"
                print(
                    f"  {n:<28} {a} - {b}: {c.diff:+.3f} (p = {c.pvalue_adjusted:.3g}, "
                    f"{c.wins} wins, {c.losses} losses; {mark})"
                )

    at_k, at_budget = names[0], names[1]
    best_k, best_b = report.best(at_k), report.best(at_budget)
    print("\nWhat it says:")
    print(f"- at 10 chunks, {best_k} holds the most evidence ({report.value(best_k, at_k):.3f})")
    print(
        f"- at {args.budget} tokens, {best_b} holds the most evidence "
        f"({report.value(best_b, at_budget):.3f})"
    )
    small, large = report.runs[0], report.runs[-1]
    d_k = report.comparison(large, small, at_k)
    d_b = report.comparison(large, small, at_budget)
    assert d_k is not None and d_b is not None
    print(
        f"- {large} minus {small}: {d_k.diff:+.3f} at 10 chunks, {d_b.diff:+.3f} at "
        f"{args.budget} tokens"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
