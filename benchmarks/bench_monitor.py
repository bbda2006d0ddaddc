"""What a ranklens Monitor adds to each retrieval, in CPU time (one process, ratios).

    uv run python benchmarks/bench_monitor.py

* request path: ``Recorder.record`` of a 10-hit retrieval without a monitor, and with one
  subscribed (its one bounded append), in rounds that alternate, per retrieval;
* off the path: the monitor's thread turning each record into its windows (hits mapped,
  labels looked up, reservoirs, window closes with labelled metrics and drift tests),
  per retrieval, which shares the process' CPU with the app.

CPU time (``time.process_time``) is used so other load on the machine does not count.

    uv run python benchmarks/bench_monitor.py --wall --load 1   # wall time under load

``--wall``: what the app waits, in wall time, per retrieval. An app thread serves
requests one after another: the retriever's work (``--retrieval-us`` of hashing, which
releases the GIL as a C retriever or a vector store's client does) and then
``Recorder.record`` of its 10 hits; three setups take turns in rounds: nothing recorded,
the Recorder alone, the Recorder with a background Monitor (its thread flushing every 0.2 s:
windows of 1000, labels, ndcg@10) sharing the process and the GIL. ``--load N`` starts N
processes that keep a core busy each (the 2-core machine under load). Printed: the mean
wall time per request and what each setup adds to it over nothing recorded (the median
of the rounds), the ``record`` call's own p50/p99, and the records the monitor dropped.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import statistics
import time
from typing import Any

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


def _busy(stop: Any) -> None:
    while not stop.is_set():
        sum(range(100_000))


def wall(load_procs: int, retrieval_us: float, n: int, rounds: int) -> None:
    ds = load()
    docs, qs = list(ds.corpus), list(ds.queries.items())
    rng = np.random.default_rng(0)
    traffic = [(qs[i % len(qs)], hits(rng, docs)) for i in range(n)]
    size = 1 << 16
    t = time.perf_counter()
    for _ in range(200):
        hashlib.sha256(bytes(size)).digest()
    size = max(1024, int(size * retrieval_us / ((time.perf_counter() - t) / 200 * 1e6)))
    buf = bytes(size)

    def serve(setup: str) -> tuple[float, list[float], int]:
        rec = Recorder(spill=False) if setup != "none" else None
        mon = None
        if setup == "monitor":
            mon = Monitor(rec, window=1000, labels=ds, metrics=["ndcg@10"],
                          windowing=Windowing(interval=0.2))  # fmt: skip
        calls = []
        t_all = time.perf_counter()
        for (qid, text), h in traffic:
            hashlib.sha256(buf).digest()  # the retriever's work, the GIL released
            if rec is not None:
                t1 = time.perf_counter()
                rec.record(text, h, query_id=qid, latency_ms=retrieval_us / 1000)
                calls.append(time.perf_counter() - t1)
        per = (time.perf_counter() - t_all) / n * 1e6
        dropped = 0
        if mon is not None:
            dropped = mon.dropped
            mon.close()
        return per, calls, dropped

    stop = mp.Event()
    procs = [mp.Process(target=_busy, args=(stop,), daemon=True) for _ in range(load_procs)]
    for p in procs:
        p.start()
    try:
        serve("monitor")  # warm up (imports, the monitor's first window)
        setups = ("none", "recorder", "monitor")
        per: dict[str, list[float]] = {s: [] for s in setups}
        calls: dict[str, list[float]] = {s: [] for s in setups}
        dropped = 0
        for r in range(rounds):
            for setup in setups if r % 2 else setups[::-1]:
                mean, c, d = serve(setup)
                per[setup].append(mean)
                calls[setup].extend(c)
                dropped += d
    finally:
        stop.set()
        for p in procs:
            p.join()
    base = statistics.median(per["none"])
    print(
        f"wall time per request, {n:,} requests x {rounds} rounds, retriever "
        f"{retrieval_us:.0f} us (GIL released), {load_procs} busy process(es) beside"
    )
    for setup in setups:
        added = statistics.median(a - b for a, b in zip(per[setup], per["none"]))
        line = f"  {setup:<9} {statistics.median(per[setup]):8.1f} us a request"
        if setup != "none":
            q = np.percentile(np.array(calls[setup]) * 1e6, [50, 99])
            line += f", +{added:5.1f} us over none; record() p50 {q[0]:.1f} us, p99 {q[1]:.1f} us"
        print(line)
    print(f"  base {base:.1f} us; records the monitor dropped: {dropped}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wall", action="store_true", help="wall time per request (see above)")
    ap.add_argument("--load", type=int, default=1, help="busy processes beside (--wall)")
    ap.add_argument("--retrieval-us", type=float, default=500.0, help="the retriever's work")
    ap.add_argument("--n", type=int, default=5000, help="requests per round (--wall)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    if args.wall:
        wall(args.load, args.retrieval_us, args.n, args.rounds)
        return
    cpu()


def cpu() -> None:
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
