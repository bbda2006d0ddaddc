"""What ``ranklens`` without arguments prints: where to start, instead of a usage error."""

from __future__ import annotations


def next_steps() -> str:
    """What ``ranklens`` without arguments prints: where to start."""
    from ..version import __version__

    return (
        f"ranklens {__version__}: exact, fast ranking metrics for retrieval and RAG.\n\n"
        "Where to start:\n"
        "  ranklens demo                          a minute, offline: BM25 in three frameworks "
        "compared,\n"
        "                                         significance tests, an HTML report\n"
        "  ranklens profiles                      which metrics fit your use case (FAQ bot, "
        "product\n"
        "                                         search, RAG...) and what value is good "
        "enough\n"
        "  ranklens evaluate QRELS RUN --profile faq    your numbers, with verdicts against "
        "the targets\n"
        "  ranklens compare QRELS RUN_A RUN_B --html report.html\n"
        "  ranklens plan 'P@1>=0.9' --expected 1  how many queries to label first\n"
        "  ranklens COMMAND --help                every option; ranklens --help lists the "
        "commands\n"
    )
