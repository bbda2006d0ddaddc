"""The gate this project runs in CI: the FAQ retriever may not get worse than the
baseline in tests/baselines/ (rewrite it with `pytest --ranklens-update-baselines`)."""

from retriever import DATASET, search


def test_faq_retrieval_did_not_regress(ranklens_gate):
    ranklens_gate(
        DATASET,
        search,
        "baselines/faq.json",
        ["mrr@10", "recall@3"],
        margin=0.05,  # the drop we accept, decided by a one-sided paired test
        floors={"mrr@10": 0.7},  # and a plain target for the bot
    )
