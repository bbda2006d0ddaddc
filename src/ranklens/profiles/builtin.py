"""The built-in use-case profiles, as data. Each target without a publication behind it is
a rule of thumb and says so; each published typical value names its paper (or the
reproduction that gives the number) and what it measured. ``docs/use-cases.md`` is
generated from these declarations (``python -m ranklens.app.reference use-cases``)."""

from __future__ import annotations

from .model import RULE_OF_THUMB, MetricUse, Profile, Target, Typical

BEIR = (
    "Thakur et al., BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of "
    "Information Retrieval Models, NeurIPS 2021 Datasets and Benchmarks, Table 2"
)
ANSERINI_BM25 = (
    "Anserini regression msmarco-v1-passage, BM25 k1=0.9 b=0.4 (Yang, Fang & Lin, "
    "Anserini, SIGIR 2017; docs/regressions/regressions-msmarco-v1-passage.md)"
)
SPLADE_PP = (
    "Formal et al., From Distillation to Hard Negative Sampling: Making Sparse Neural IR "
    "Models More Effective, SIGIR 2022 (SPLADE++ CoCondenser-EnsembleDistil), as reproduced "
    "by Anserini's regression msmarco-v1-passage.splade-pp-ed"
)
DPR = (
    "Karpukhin et al., Dense Passage Retrieval for Open-Domain Question Answering, "
    "EMNLP 2020, Table 2 (top-k retrieval accuracy: an answer-bearing passage in the top k)"
)
MSMARCO_DEV = "MS MARCO passage dev (6,980 questions)"
NQ_TEST = "Natural Questions test (open-domain, Wikipedia passages)"

FAQ = Profile(
    "faq",
    "FAQ / answer bot",
    "One right answer, read or shown first: a support bot answering from an FAQ or a "
    "help centre.",
    metrics=(
        MetricUse("mrr@10", "how high the right answer ranks: 1 when first, 1/2 when second"),
        MetricUse("P@1", "the bot answers from its top hit: right or wrong, per question"),
        MetricUse("success@5", "the right answer among the five suggestions a widget shows"),
    ),
    targets=(
        Target("mrr@10", 0.8, "the answer first for most questions, second at worst for the "
               "rest", RULE_OF_THUMB),
        Target("P@1", 0.7, "seven answers in ten right before any fallback", RULE_OF_THUMB),
        Target("success@5", 0.95, "tutorials write it as P@5 > 0.95: the answer among the "
               "five shown (P@5 itself cannot pass 0.2 with one answer per question)",
               RULE_OF_THUMB),
    ),
    typical=(
        Typical("mrr@10", 0.184, "BM25", MSMARCO_DEV, ANSERINI_BM25),
        Typical("mrr@10", 0.383, "SPLADE++ (learned sparse)", MSMARCO_DEV, SPLADE_PP),
        Typical("ndcg@10", 0.789, "BM25", "BEIR Quora (duplicate questions)", BEIR),
        Typical("ndcg@10", 0.299, "BM25", "BEIR CQADupStack (duplicate questions)", BEIR),
    ),
    origin="built-in",
    notes=(
        "MS MARCO judges about one passage per question, so its MRR understates every system "
        "against an FAQ with complete labels: a published value places a kind of retriever; "
        "the target says what the bot needs.",
    ),
)  # fmt: skip

PRODUCT = Profile(
    "product-search",
    "Product search",
    "Several good results, well ordered: shoppers scan a grid of products and compare.",
    metrics=(
        MetricUse("ndcg@10", "graded: exact matches above substitutes above accessories, "
                  "discounted by position"),
        MetricUse("P@5", "what a wrong product in the first row costs: shoppers tolerate "
                  "some"),
        MetricUse("recall@10", "the good products the first page shows at all"),
    ),
    targets=(
        Target("ndcg@10", 0.7, "most queries with their best products on top", RULE_OF_THUMB),
        Target("P@5", 0.7, "a wrong hit costs a glance, not a wrong answer", RULE_OF_THUMB),
    ),
    origin="built-in",
    notes=(
        "No product-search number is quoted: we found no public set whose published baseline "
        "we could check; BEIR's values (the research profile) are for text retrieval.",
    ),
)  # fmt: skip

RESEARCH = Profile(
    "research",
    "Research, legal and medical search",
    "Miss nothing: a reviewer reads a long list, and a missed study, precedent or "
    "contraindication is the costly error.",
    metrics=(
        MetricUse("recall@50", "coverage of the list a reviewer reads"),
        MetricUse("P@10", "the reviewer's time on the first page"),
        MetricUse("P@5", "medical and legal search: a wrong document among the first five "
                  "can be acted on"),
        MetricUse("ndcg@10", "the strongest evidence first; BEIR's measure"),
    ),
    targets=(
        Target("recall@50", 0.9, "nine relevant documents in ten within what is read",
               RULE_OF_THUMB),
        Target("P@10", 0.6, "most of the first page worth reading", RULE_OF_THUMB),
        Target("P@5", 0.98, "tutorials quote P@5 > 0.98 for medical and legal search, where a "
               "wrong hit costs a wrong decision (FAQ 0.95, shop 0.7)", RULE_OF_THUMB),
    ),
    typical=(
        Typical("ndcg@10", 0.656, "BM25", "BEIR TREC-COVID", BEIR),
        Typical("ndcg@10", 0.325, "BM25", "BEIR NFCorpus (nutrition, medical)", BEIR),
        Typical("ndcg@10", 0.465, "BM25", "BEIR BioASQ (biomedical)", BEIR),
        Typical("ndcg@10", 0.665, "BM25", "BEIR SciFact (scientific claims)", BEIR),
        Typical("ndcg@10", 0.158, "BM25", "BEIR SCIDOCS (citations)", BEIR),
    ),
    origin="built-in",
    notes=(
        "recall@50 >= 0.9 needs queries with at most about 50 relevant documents: TREC-COVID's "
        "topics have hundreds each, and there even an ideal ranking's recall@50 is far below "
        "0.9 (a verdict says when a target is above what the labels allow).",
        "P@5 >= 0.98 asks for five relevant documents in the first five for nearly every "
        "query: a query with fewer than five cannot reach it (a verdict says when the labels "
        "do not allow it); for general research search, drop the target or set your own.",
    ),
)  # fmt: skip

FIRST_STAGE = Profile(
    "first-stage",
    "First-stage retrieval for a reranker",
    "Candidates for a cross-encoder or LLM reranker: the relevant documents must be within "
    "the depth the reranker reads; their order is the reranker's job.",
    metrics=(
        MetricUse("recall@100", "a reranker reading 100 candidates never sees what lies "
                  "below (set the cutoff to your reranker's depth)"),
        MetricUse("recall@1000", "the pool a cheap reranker can afford"),
    ),
    targets=(
        Target("recall@100", 0.9, "what the reranker cannot see it cannot fix",
               RULE_OF_THUMB),
    ),
    typical=(
        Typical("recall@100", 0.658, "BM25", MSMARCO_DEV, ANSERINI_BM25),
        Typical("recall@100", 0.910, "SPLADE++ (learned sparse)", MSMARCO_DEV, SPLADE_PP),
        Typical("recall@1000", 0.853, "BM25", MSMARCO_DEV, ANSERINI_BM25),
        Typical("recall@1000", 0.983, "SPLADE++ (learned sparse)", MSMARCO_DEV, SPLADE_PP),
    ),
    origin="built-in",
)  # fmt: skip

RAG = Profile(
    "rag-context",
    "RAG context retrieval",
    "The passages a generator reads: the evidence must be in the k passages put into the "
    "prompt (set k to yours); what ranks below k does not exist for the answer.",
    metrics=(
        MetricUse("recall@5", "all the evidence the answer needs, within the passages the "
                  "generator reads"),
        MetricUse("success@5", "at least one evidence passage in the context: enough for a "
                  "single-hop question"),
        MetricUse("P@5", "distractors: irrelevant passages take room in the prompt and can "
                  "mislead the generator"),
    ),
    targets=(
        Target("recall@5", 0.8, "most of the evidence in context", RULE_OF_THUMB),
        Target("success@5", 0.9, "nine questions in ten answerable from the context",
               RULE_OF_THUMB),
    ),
    typical=(
        Typical("success@20", 0.591, "BM25", NQ_TEST, DPR),
        Typical("success@20", 0.794, "DPR (dense, trained on several QA sets)", NQ_TEST, DPR),
        Typical("success@100", 0.737, "BM25", NQ_TEST, DPR),
        Typical("success@100", 0.860, "DPR (dense, trained on several QA sets)", NQ_TEST, DPR),
    ),
    origin="built-in",
)  # fmt: skip

BUILTIN: dict[str, Profile] = {p.name: p for p in (FAQ, PRODUCT, RESEARCH, FIRST_STAGE, RAG)}
"""The built-in profiles by name."""
