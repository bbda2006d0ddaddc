"""Judging with document versions against plain judging, on the same labels and run.

A corpus of D documents in version groups of one to three versions (dated; a third of the
groups ordered by ``supersedes`` links instead of times), Q queries with five labelled
documents each, and a run of 100 documents per query drawn from the corpus. The same
evaluation is timed two ways, from objects built beforehand:

* **plain**: ``ranklens.evaluate(qrels, run, RANKING)``;
* **versions**: the same with ``versions=`` (labels carried to versions, the ``zero`` rule,
  each retrieved document's status), plus ``outdated@10``, ``current@10`` and
  ``current_first@10``.

No other library judges versions, so the anchor is ranklens' own plain judging: the ratio
is what freshness costs. Times are CPU seconds (``time.process_time``), the best of three,
each the first evaluation of objects made beforehand (untimed); building the table from D
records is timed on its own.

    uv run python benchmarks/bench_freshness.py --queries 10000 --docs 100000
"""

from __future__ import annotations

import argparse
import datetime as dt
import time

import numpy as np

import ranklens

RANKING = ["ndcg@10", "P@10", "recall@100", "mrr@10", "map"]
FRESH = ["outdated@10", "current@10", "current_first@10"]


def build(n_queries: int, n_docs: int, depth: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(n_docs)]
    records, i, g = [], 0, 0
    epoch = dt.date(2020, 1, 1)
    while i < n_docs:
        size = int(rng.integers(1, 4))
        members = docs[i : i + size]
        chained = g % 3 == 0
        days = np.sort(rng.choice(2000, len(members), replace=False))
        for j, d in enumerate(members):
            rec = {"doc_id": d, "group": f"g{g}"}
            if chained and j:
                rec["supersedes"] = members[j - 1]
            if not chained:
                rec["valid_from"] = (epoch + dt.timedelta(days=int(days[j]))).isoformat()
            records.append(rec)
        i += size
        g += 1
    qrels, run = {}, {}
    for q in range(n_queries):
        labelled = rng.choice(n_docs, 5, replace=False)
        qrels[f"q{q}"] = {docs[d]: int(rng.integers(0, 3)) for d in labelled}
        hits = np.concatenate((labelled, rng.choice(n_docs, depth - 5, replace=False)))
        hits = np.unique(hits)[:depth]
        rng.shuffle(hits)
        run[f"q{q}"] = {docs[d]: float(s) for d, s in zip(hits, rng.random(len(hits)))}

    def make():
        """Fresh objects: a run keeps its ranking order and id hashes once computed, so a
        second evaluation of the same objects would time less than a user's first."""
        return ranklens.Qrels.from_dict(qrels), ranklens.Run.from_dict(run)

    return records, make


def best_of(fn, repeat: int = 3, make=tuple) -> tuple[float, object]:
    """The best of ``repeat`` calls of ``fn(*make())``, ``make()`` untimed before each."""
    times, out = [], None
    for _ in range(repeat):
        objects = make()
        t = time.process_time()
        out = fn(*objects)
        times.append(time.process_time() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    records, make = build(args.queries, args.docs, args.depth)
    t_table, versions = best_of(lambda: ranklens.Versions.from_records(records), 1)
    t_plain, plain = best_of(lambda q, r: ranklens.evaluate(q, r, RANKING), make=make)
    t_fresh, fresh = best_of(
        lambda q, r: ranklens.evaluate(q, r, RANKING, versions=versions), make=make
    )
    t_all, _ = best_of(
        lambda q, r: ranklens.evaluate(q, r, RANKING + FRESH, versions=versions), make=make
    )
    keep = ranklens.evaluate(*make(), RANKING, versions=versions, freshness="keep")
    print(f"{args.queries:,} queries x {args.depth} hits, {args.docs:,} documents ({versions})")
    print(f"  versions table from {len(records):,} records: {t_table:.2f} s CPU")
    print(f"  plain judging + {len(RANKING)} metrics:            {t_plain:.2f} s CPU")
    print(f"  with versions (rule zero) + the same metrics: {t_fresh:.2f} s CPU "
          f"({t_fresh / t_plain:.1f}x)")  # fmt: skip
    print(f"  ... and {', '.join(FRESH)}: {t_all:.2f} s CPU")
    print(
        f"  {fresh.counts['labels_carried']:,} labels carried, "
        f"{fresh.counts['outdated_retrieved']:,} outdated retrieved; under 'keep' recall@100 "
        f"{keep['recall@100']:.4f} (plain {plain['recall@100']:.4f}: carried labels count)"
    )


if __name__ == "__main__":
    main()
