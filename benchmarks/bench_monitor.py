"""What a ranklens Monitor adds to each retrieval, in CPU time (one process, ratios).

    uv run python benchmarks/bench_monitor.py

* request path: ``Recorder.record`` of a 10-hit retrieval without a monitor, and with one
  subscribed (its one bounded append), in rounds that alternate, per retrieval;
* off the path: the monitor's thread turning each record into its windows (hits mapped,
  labels looked up, reservoirs, window closes with labelled metrics and drift tests),
  per retrieval, which shares the process' CPU with the app.

CPU time (``time.process_time``) is used so other load on the machine does not count;
the lead retakes wall-clock numbers on a quiet machine.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from ranklens import Recorder
from ranklens.app.demo_data import load
from ranklens.monitoring import Monitor, Windowing

N, ROUNDS = 20_000, 7


def hits(rng, docs):
    return [
        (d, float(s))
        for d, s in zip(rng.choice(docs, 10, replace=False), np.sort(rng.random(10))[::-1])
    ]


def main() -> None:
    ds = load()
    docs, qs = list(ds.corpus), list(ds.queries.items())
    rng = np.random.default_rng(0)
    traffic = [(qs[i % len(qs)], hits(rng, docs)) for i in range(N)]

    def one_round(monitor: bool) -> tuple[float, float]:
        rec = Recorder(spill=False, max_records=N + 1)
        m = Monitor(rec, window=1000, labels=ds, metrics=["ndcg@10"],
                    windowing=Windowing(background=False, queue_size=N + 1)
                    ) if monitor else None  # fmt: skip
        t = time.process_time()
        for (qid, text), h in traffic:
            rec.record(text, h, query_id=qid, latency_ms=3.0)
        path = (time.process_time() - t) / N * 1e6
        work = 0.0
        if m is not None:
            t = time.process_time()
            m.flush(close=True)
            work = (time.process_time() - t) / N * 1e6
            assert m.status()["retrievals"] == N
        return path, work

    plain, with_m, worker = [], [], []
    one_round(False), one_round(True)  # warm up
    for r in range(ROUNDS):
        for monitored in (False, True) if r % 2 else (True, False):
            path, work = one_round(monitored)
            (with_m if monitored else plain).append(path)
            if monitored:
                worker.append(work)
    p, w, k = (statistics.median(x) for x in (plain, with_m, worker))
    print(f"Recorder.record, 10 hits:          {p:7.2f} us CPU per retrieval")
    print(f"  with a Monitor subscribed:       {w:7.2f} us (+{w - p:.2f} us, {w / p:.2f}x)")
    print(f"Monitor's thread, per retrieval:   {k:7.2f} us CPU (windows of 1000, labels, ndcg@10)")


if __name__ == "__main__":
    main()
