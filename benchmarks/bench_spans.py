"""Overlap judging and the evidence metrics against id judging, on the same chunks.

A corpus of D documents of 1,000-3,000 characters cut into chunks of 200 characters; Q
queries, each with 1-3 evidence chunks in each of 1-2 documents and a run of 100 chunks
(the evidence documents' chunks and distractors in a random order, scores rounded to two
decimals so that ties occur). The same retrieval is evaluated two ways, each from objects
built beforehand (fresh for every repetition: a run keeps what it computed once):

* **ids**: labels on chunk ids (each evidence chunk grade 1, the other chunks of the
  evidence documents grade 0), a run of chunk ids: ``ranklens.evaluate`` with the ranking
  metrics;
* **spans**: ``SpanLabels`` and a run of chunks with positions: the same ranking metrics,
  and the same plus ``evidence_recall@10``/``evidence_precision@10``/``evidence_iou@10``.

Both give the same ranking-metric values (checked). Times are CPU seconds
(``time.process_time``) of judging and the metrics, the best of three; the ratio is what
span judging costs over id judging (the target: within 2x).

    uv run python benchmarks/bench_spans.py --queries 10000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ranklens

RANKING = ["ndcg@10", "P@10", "recall@100", "mrr@10", "map"]
EVIDENCE = ["evidence_recall@10", "evidence_precision@10", "evidence_iou@10"]


def build(n_queries: int, n_docs: int, depth: int, seed: int = 0):
    """Labels and runs both ways; the evidence spans are whole chunks, so that id labels on
    those chunks are the same ground truth (and every ranking metric must agree)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1000, 3001, n_docs)
    size = 200
    doc_chunks = [[(s, min(s + size, n)) for s in range(0, n, size)] for n in lengths]
    span_rows, id_labels, chunk_rows, id_run = [], {}, {}, {}
    for qi in range(n_queries):
        q = f"q{qi}"
        ev_docs = rng.choice(n_docs, rng.integers(1, 3), replace=False)
        labels = {}
        for d in ev_docs:
            cs = doc_chunks[d]
            for i in rng.choice(len(cs), min(len(cs), int(rng.integers(1, 4))), replace=False):
                s, e = cs[i]
                span_rows.append((q, f"doc{d}", s, e))
            for s, _ in cs:  # the document's other chunks: read, not evidence
                labels.setdefault(f"doc{d}@{s}", 0)
            for qq, dd, s, _ in span_rows:
                if qq == q and dd == f"doc{d}":
                    labels[f"doc{d}@{s}"] = 1
        id_labels[q] = labels
        pool = [(d, s, e) for d in ev_docs for s, e in doc_chunks[d]]
        seen = set(pool)
        while len(pool) < depth:
            d = int(rng.integers(0, n_docs))
            s, e = doc_chunks[d][int(rng.integers(0, len(doc_chunks[d])))]
            if (d, s, e) not in seen:
                seen.add((d, s, e))
                pool.append((d, s, e))
        order = rng.permutation(len(pool))[:depth]
        scores = np.round(np.sort(rng.random(depth))[::-1], 2)  # ties, as real scores have
        chunks = [pool[i] for i in order]
        chunk_rows[q] = [
            {"id": f"doc{d}@{s}", "doc_id": f"doc{d}", "start": s, "end": e, "score": float(sc)}
            for (d, s, e), sc in zip(chunks, scores)
        ]
        id_run[q] = {f"doc{d}@{s}": float(sc) for (d, s, e), sc in zip(chunks, scores)}

    def make():
        """Fresh objects: a run keeps its ranking order and id hashes once computed, so a
        second evaluation of the same objects would time less than a user's first."""
        return (
            ranklens.SpanLabels.from_columns(*zip(*span_rows)),
            ranklens.Run.from_chunks(chunk_rows),
            ranklens.Qrels.from_dict(id_labels),
            ranklens.Run.from_dict(id_run),
        )

    return make


def best(fn, make, repeat: int = 3) -> float:
    """The best of ``repeat`` first evaluations, each on objects made beforehand (untimed)."""
    out = []
    for _ in range(repeat):
        objects = make()
        t = time.process_time()
        fn(*objects)
        out.append(time.process_time() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=50_000)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    make = build(args.queries, args.docs, args.depth)
    spans, chunk_run, id_qrels, id_run = make()
    by_ids = ranklens.evaluate(id_qrels, id_run, RANKING)
    by_spans = ranklens.evaluate(spans, chunk_run, RANKING)
    for m in RANKING:
        assert np.allclose(by_ids.per_query[m], by_spans.per_query[m], atol=1e-12), m
    t_ids = best(lambda s, c, q, r: ranklens.evaluate(q, r, RANKING), make)
    t_spans = best(lambda s, c, q, r: ranklens.evaluate(s, c, RANKING), make)
    t_all = best(lambda s, c, q, r: ranklens.evaluate(s, c, RANKING + EVIDENCE), make)
    rows = len(chunk_run.q)
    print(
        f"{args.queries} queries x {args.depth} chunks ({rows:,} rows), "
        f"{spans.n_spans:,} spans, {len(id_qrels.q):,} chunk labels; CPU seconds, best of 3"
    )
    print(f"  id judging + {len(RANKING)} ranking metrics:            {t_ids:.2f} s")
    print(
        f"  span judging + the same metrics:                {t_spans:.2f} s "
        f"({t_spans / t_ids:.2f}x ids)"
    )
    print(
        f"  span judging + those and 3 evidence metrics:    {t_all:.2f} s "
        f"({t_all / t_ids:.2f}x ids)"
    )
    print("  the ranking metrics are equal on both sides (checked)")


if __name__ == "__main__":
    main()
