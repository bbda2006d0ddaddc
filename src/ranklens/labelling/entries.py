"""The declarations of the labelling functions whose modules hold no table of their own
(:func:`judging_page`, :func:`read_judgments`, :func:`rescore`): the package exports them
checked (``ranklens.judging_page``...), so a bad value is a named error before any work."""

from __future__ import annotations

from ..declared import choice, data, declare, mapping, path, text
from ..metrics.trec_forms import METRICS
from ..profiles.options import items
from .page import judging_page as page_judging_page
from .page import read_judgments as page_read_judgments
from .rescore import rescore as plain_rescore

JUDGING_PAGE = declare("judging_page", {
    "pool": data("a LabelPool, its pairs, or its JSONL file"),
    "path": path(None, "the HTML page to write (None: only returned)", none=True),
    "grades": items((0, 1, 2, 3), (int,), "distinct whole numbers 0-9",
                    "the grades offered (a key each)", also=choice(None, ("binary",)),
                    check=lambda g: len(set(g)) == len(g) and all(0 <= x <= 9 for x in g),
                    rule="distinct, 0-9"),
    "labels": mapping(None, "a word per grade", none=True, empty=True),
    "title": text(None, "the page's title", none=True),
    "source": text("human", "the provenance written in the JSONL export"),
})  # fmt: skip
READ_JUDGMENTS = declare("read_judgments", {
    "path": path(None, "the page's JSONL export, or TREC qrels"),
    "source": text(None, "the provenance of TREC qrels' judgments (default 'human')", none=True),
})  # fmt: skip
RESCORE = declare("rescore", {
    "before": data("the labels before: anything ranklens.compare takes"),
    "after": data("the labels after (merged with the new judgments)"),
    "runs": data("{name: run} or a list of runs"),
    "metrics": METRICS,
})  # fmt: skip

judging_page = JUDGING_PAGE.checks(page_judging_page)
read_judgments = READ_JUDGMENTS.checks(page_read_judgments)
rescore_checked = RESCORE.checks(plain_rescore)
