"""Replace trec_eval: evaluate TREC qrels and run files with trec_eval's measure names.

    uv run python examples/replace_trec_eval.py [QRELS RUN]

Without arguments it evaluates the small run shipped with ranklens. The same from the shell:

    uv run ranklens evaluate QRELS RUN -m map -m P.5,10 -m ndcg_cut.10 --format trec
"""

from __future__ import annotations

import sys

import ranklens
from ranklens.app.demo import demo_paths


def main(argv: list[str]) -> int:
    if len(argv) == 2:
        qrels, run = argv
    else:
        paths = demo_paths()
        qrels, run = paths["qrels"], paths["bm25"]
    ev = ranklens.evaluate(qrels, run, ["map", "P.5,10", "ndcg_cut.10", "recip_rank", "bpref"])
    sys.stdout.write(ev.to_trec())  # trec_eval's three-column layout
    # the judged arrays are kept: more measures cost no second pass over the files
    more = ev.evaluate(["recall_100", "success_10"])
    sys.stdout.write(more.to_trec())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
