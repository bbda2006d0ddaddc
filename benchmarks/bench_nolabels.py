"""Working without labels, timed against its anchors in one run (CPU time, ratios):

* ``ppi``: PPI++ means and intervals of many estimands (runs x metrics x differences) with
  ``ranklens.estimation.ppi`` (one vectorised call) against the authors' ``ppi_py``
  (``ppi_mean_ci``, one call per estimand); the intervals are checked equal (``z``).
* ``runner``: ``ranklens.synthesize`` over a corpus of passages with the offline generator
  against calling the same generator in a plain loop (the runner's overhead per passage:
  threads, the resumable log, provenance, filters).
* ``check``: ``ranklens.check_dataset`` (containment of every query in every passage, one
  sparse product per chunk of queries; near-duplicates) against the same containment
  computed pair by pair in Python on a sample, scaled.

    uv run python benchmarks/bench_nolabels.py [--estimands 1000] [--passages 3000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def cpu(fn, *args, **kwargs):
    t = time.process_time()
    out = fn(*args, **kwargs)
    return time.process_time() - t, out


def bench_ppi(m: int, n: int, big_n: int) -> None:
    import ppi_py

    from ranklens.estimation import ppi

    rng = np.random.default_rng(0)
    y = rng.random((n, m))
    f = np.clip(y + rng.normal(0.05, 0.2, (n, m)), 0, 1)
    fu = rng.random((big_n, m))
    ours_t, ours = cpu(ppi, y, f, fu, None, 0.95, "z")

    def loop():
        return [ppi_py.ppi_mean_ci(y[:, j], f[:, j], fu[:, j], alpha=0.05) for j in range(m)]

    theirs_t, theirs = cpu(loop)
    lo = np.array([np.ravel(t[0])[0] for t in theirs])
    assert np.allclose(lo, ours.lo, atol=1e-10), "PPI++ intervals differ from ppi_py"
    print(
        f"ppi     {m} estimands, n={n}, N={big_n}: ranklens {ours_t * 1000:.1f} ms, "
        f"ppi_py {theirs_t * 1000:.1f} ms ({theirs_t / ours_t:.0f}x); equal to 1e-10"
    )


def corpus_of(passages: int) -> dict[str, dict[str, str]]:
    from ranklens.app.demo_data import load

    base = list(load().corpus.values())
    return {f"d{i}": {"text": f"{base[i % len(base)]['text']} (copy {i})"} for i in range(passages)}


def bench_runner(passages: int) -> None:
    import warnings

    import ranklens
    from ranklens.synthesis import OfflineGenerator

    docs = corpus_of(passages)
    gen = OfflineGenerator()
    plain_t, _ = cpu(lambda: [gen(d["text"]) for d in docs.values()])
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours_t, s = cpu(
            ranklens.synthesize,
            docs,
            gen,
            cache=Path(tmp) / "log.jsonl",
            progress=False,
            near_duplicate=1.01,
        )
        again_t, _ = cpu(
            ranklens.synthesize,
            docs,
            gen,
            cache=Path(tmp) / "log.jsonl",
            progress=False,
            near_duplicate=1.01,
        )
    per = (ours_t - plain_t) / passages * 1000
    print(
        f"runner  {passages} passages: generator alone {plain_t:.2f} s, synthesize "
        f"{ours_t:.2f} s ({per:.2f} ms per passage of overhead, log and filters included); "
        f"resumed from the log {again_t:.2f} s, {s.counts['kept']} kept"
    )


def bench_check(queries: int, passages: int) -> None:
    import ranklens
    from ranklens.synthesis.text import containment_pairs

    docs = corpus_of(passages)
    rng = np.random.default_rng(1)
    ids = list(docs)
    qs = {
        f"q{i}": " ".join(docs[ids[j]]["text"].split()[:12]) + f" {i}?"
        for i, j in enumerate(rng.integers(0, passages, queries))
    }
    labels = {q: {ids[int(rng.integers(0, passages))]: 1} for q in qs}
    ds = ranklens.Dataset(qs, labels, docs, "bench")
    ours_t, check = cpu(ranklens.check_dataset, ds, attach=False)
    sample = list(qs.values())[:20]
    texts = [d["text"] for d in docs.values()]
    brute_t, _ = cpu(lambda: [containment_pairs([q] * len(texts), texts) for q in sample])
    scaled = brute_t / len(sample) * queries
    print(
        f"check   {queries} queries x {passages} passages: check_dataset {ours_t:.2f} s "
        f"(every finding); pairwise containment in Python {scaled:.1f} s (from 20 "
        f"queries, scaled; {scaled / ours_t:.0f}x); findings: "
        f"{', '.join(f.kind for f in check.findings)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--estimands", type=int, default=1000)
    ap.add_argument("--passages", type=int, default=3000)
    ap.add_argument("--queries", type=int, default=2000)
    a = ap.parse_args()
    bench_ppi(a.estimands, 300, 3000)
    bench_runner(a.passages)
    bench_check(a.queries, a.passages)


if __name__ == "__main__":
    main()
