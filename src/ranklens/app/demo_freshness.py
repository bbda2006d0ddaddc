"""The demo's freshness section: the corpus with planted outdated versions
(:mod:`.demo_versions`), one BM25 retriever over it (the LlamaIndex plugin's, as the span
section uses), judged as of the newest version: how often an outdated page comes first, and
what relevance alone does not see."""

from __future__ import annotations

import textwrap


def freshness_section() -> str:
    """The section's text (empty when no framework package offers a BM25 retriever)."""
    from ..capture import plugins, run_retriever
    from ..evaluation import evaluate
    from ..settings import Calling
    from .demo_versions import load_versions

    bm25 = next((p.bm25 for _, p in plugins() if p.bm25 is not None), None)
    if bm25 is None:
        return ""
    ds, versions = load_versions()
    docs = [(d, 0, len(v["text"]), v["text"]) for d, v in ds.corpus.items()]
    result = run_retriever(bm25(docs, 10), ds, key="parent", name="bm25",
                           calls=Calling(progress=False))  # fmt: skip
    metrics = ["ndcg@10", "outdated@1", "current_first@10"]
    fresh = evaluate(ds.qrels, result.run, metrics, versions=versions)
    keep = evaluate(ds.qrels, result.run, ["ndcg@10"], versions=versions, freshness="keep")
    n = len(ds.queries)
    first = round(fresh["outdated@1"] * n)
    planted = len(ds.corpus) - len(versions.group_ids)
    text = (
        f"Freshness: the corpus again with {planted} planted outdated versions (older seasons, "
        f"prices, lights and dates; ranklens.Versions, docs/freshness.md), {n} questions "
        f"judged as of the newest version. BM25 (LlamaIndex) puts an outdated page first for "
        f"{first} of {n} (outdated@1 {fresh['outdated@1']:.3f}) and the current page above "
        f"every outdated one for {fresh['current_first@10']:.0%} of the evidence; nDCG@10 is "
        f"{keep['ndcg@10']:.3f} by relevance alone and {fresh['ndcg@10']:.3f} with outdated "
        "versions judged 0. examples/recency.py measures each framework's recency component "
        "against it (LangChain's time-weighted retriever, LlamaIndex's recency "
        "postprocessors, Haystack's MetaFieldRanker on dates), with the clock and the query "
        "order frozen."
    )
    return "\n" + "\n".join(textwrap.wrap(text, 92)) + "\n"
