"""Evaluate an AutoRAG project's retrieval results: grouped ground truth, AutoRAG's own
numbers reproduced, and trec_eval's definitions beside them.

    uv run python examples/autorag_grouped.py [AUTORAG_TEST_RESOURCES]

By default it reads ../shared/data/autorag_test_resources (AutoRAG's own test project).
AutoRAG's retrieval_gt is a list of groups: a query is answered when one document of each
group is found. AutoRAG scores precision over the retrieved list with repeats counted;
ranklens' autorag convention reproduces that, and the trec convention gives trec_eval's
numbers on the same run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ranklens
from ranklens.io.autorag import read_autorag, read_autorag_run

root = (
    Path(sys.argv[1])
    if len(sys.argv) > 1
    else (Path(__file__).resolve().parents[2] / "shared" / "data" / "autorag_test_resources")
)
if not root.exists():
    sys.exit(f"no AutoRAG data at {root}: pass the folder holding sample_project/")
qa = root / "sample_project" / "qa.parquet"
dataset = read_autorag(qa)
groups = dataset.qrels.to_groups()
multi = sum(1 for g in groups.values() if len(g) > 1)
print(f"{len(dataset.queries)} questions, {multi} of them with more than one group")

for module in ("lexical_retrieval", "semantic_retrieval", "hybrid_retrieval"):
    run = read_autorag_run(root / "result_project_0_retrieval" / f"{module}.0.parquet", qa)
    autorag = ranklens.evaluate(
        dataset.qrels, run, ["P", "recall", "f1", "mrr"], convention="autorag"
    )
    trec = ranklens.evaluate(
        dataset.qrels, run, ["P@10", "recall@10", "mrr@10"], duplicates="first"
    )
    print(
        f"{module:<20} AutoRAG: precision {autorag['P']:.4f} recall {autorag['recall']:.4f} "
        f"f1 {autorag['f1']:.4f} mrr {autorag['mrr']:.4f} | trec: P@10 {trec['P@10']:.4f} "
        f"recall@10 {trec['recall@10']:.4f} mrr@10 {trec['mrr@10']:.4f} "
        f"({autorag.counts['duplicates_kept']} repeated ids kept by AutoRAG, "
        f"{trec.counts['duplicates_dropped']} dropped by trec)"
    )

# A dataset where questions have several groups: AutoRAG's MS MARCO sample, retrieved here
# with BM25 (bm25s) over its 2,117 passages.
sample = root.parent / "autorag_msmarco_sample"
if sample.exists():
    import bm25s

    ds = read_autorag(sample)
    ids = list(ds.corpus)
    index = bm25s.BM25()
    index.index(
        bm25s.tokenize([ds.corpus[d]["text"] for d in ids], show_progress=False),
        show_progress=False,
    )

    def bm25(query: str) -> list[tuple[str, float]]:
        found, scores = index.retrieve(
            bm25s.tokenize([query], show_progress=False), k=10, show_progress=False
        )
        return [(ids[i], float(s)) for i, s in zip(found[0].tolist(), scores[0].tolist())]

    result = ranklens.run_retriever(bm25, ds, k=10, calls=ranklens.Calling(progress=False))
    several = [q for q, g in ds.qrels.to_groups().items() if len(g) > 1]
    print(f"\nAutoRAG MS MARCO sample: {len(ds.queries)} questions, {len(several)} with groups > 1")
    for convention in ("trec", "autorag"):
        ev = result.evaluate(ds, ["recall@10", "mrr@10", "ndcg@10"], convention=convention)
        sub = ev.evaluate(["recall@10"])
        part = sum(sub.query(q)["recall@10"] for q in several) / len(several)
        print(
            f"  {convention:<8} recall@10 {ev['recall@10']:.4f} (questions with several groups: "
            f"{part:.4f})  mrr@10 {ev['mrr@10']:.4f}  ndcg@10 {ev['ndcg@10']:.4f}"
        )
    print("  recall counts groups found: a question with two groups and one found scores 0.5.")
