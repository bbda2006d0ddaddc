"""``ranklens demo``: an offline tour on a small labelled set shipped with the package.

Two runs of the same queries (a BM25 configuration and a weaker one) are evaluated with
trec_eval's definitions, side by side, with the judging counts.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

DEMO_METRICS = ["ndcg@10", "map", "mrr@10", "P@5", "recall@10", "success@5", "bpref"]


def demo_paths() -> dict[str, Path]:
    """Paths of the bundled demo qrels and runs."""
    base = Path(str(resources.files("ranklens") / "data"))
    return {
        "qrels": base / "demo_qrels.txt",
        "bm25": base / "demo_run_bm25.txt",
        "bm25-short-chunks": base / "demo_run_bm25-short-chunks.txt",
    }


def run_demo(out=None) -> int:
    """Print the demo to ``out`` (default stdout); returns the exit status."""
    from .evaluation import evaluate

    out = out or sys.stdout
    paths = demo_paths()
    out.write("ranklens demo: two retriever configurations on a small graded test set\n\n")
    rows = []
    for name in ("bm25", "bm25-short-chunks"):
        ev = evaluate(paths["qrels"], paths[name], DEMO_METRICS)
        rows.append((name, ev))
    width = max(len(n) for n, _ in rows)
    header = "run".ljust(width) + "  " + "  ".join(m.rjust(9) for m in DEMO_METRICS)
    out.write(header + "\n" + "-" * len(header) + "\n")
    for name, ev in rows:
        out.write(
            name.ljust(width) + "  " + "  ".join(f"{ev[m]:9.4f}" for m in DEMO_METRICS) + "\n"
        )
    counts = rows[0][1].counts
    out.write(
        f"\n{counts['queries_evaluated']} queries; values are trec_eval's (ties broken by "
        "document id, P@k divided by k, AP divided by all relevant documents).\n"
    )
    out.write(
        "\nNext:\n"
        f"  ranklens evaluate {paths['qrels']} {paths['bm25']} -m ndcg_cut.10 -m map -q\n"
        "  ranklens evaluate QRELS RUN -m all_trec --format trec   # replaces trec_eval\n"
    )
    return 0
