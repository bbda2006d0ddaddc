"""Where ranklens' time goes, phase by phase, in CPU seconds (``time.process_time``: both
reader threads counted; a fair measure on a machine shared with other work; the cyclic
collector paused as ``judge`` pauses it), on the data
of ``_realistic.py`` (``msmarco/deep``): the best of ``--reps`` repetitions after a
warm-up, each phase timed on its own.

    uv run python benchmarks/profile_phases.py --sizes 10000x100,100000x100

* dicts: ``{q: {doc: grade}}`` and ``{q: {doc: score}}`` to the six means: the join on the
  run's own dicts (``judging.dict_join``: checks, lookups, ranks), the judged arrays
  (``build``), the metrics, the means;
* lists: the same run as ranked lists (read into columns, ``model.mappings``), then the
  columnar join (``judging.join``), build, metrics;
* files (in memory, ``memory=inf``): reading the labels, reading the run, the ranking
  order, the columnar join, build, metrics, means;
* files streamed (``evaluate_file``, the default budget): the plan (labels read), the
  chunks read, each chunk's labels sliced, judged, scored.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _realistic import dicts, paths

METRICS = ["P@10", "recall@100", "recip_rank", "map", "ndcg@10", "ndcg@100"]


def best(phases: list[dict[str, float]]) -> dict[str, float]:
    return {k: min(p[k] for p in phases) for k in phases[0]}


def timed(out: dict[str, float], name: str, fn):
    """``fn()`` timed, with the cyclic collector paused as ``judge`` pauses it."""
    gc.collect()
    gc.disable()
    try:
        t = time.process_time()
        got = fn()
        out[name] = time.process_time() - t
    finally:
        gc.enable()
    return got


def dict_phases(n: int, depth: int) -> dict[str, float]:
    from ranklens.evaluation import Evaluation
    from ranklens.judging import JudgeOptions, build
    from ranklens.judging.dict_join import join_dicts
    from ranklens.metrics import parse_metrics

    qrels, run = dicts(n, depth)
    opts, parsed = JudgeOptions(), parse_metrics(METRICS)
    out: dict[str, float] = {}
    jn = timed(out, "join on the run's dicts", lambda: join_dicts(qrels, run, opts))
    judged = timed(out, "build", lambda: build(jn, opts))
    values = timed(out, "metrics", lambda: {m.name: m.compute(judged) for m in parsed})
    timed(out, "means", lambda: Evaluation(judged, parsed, values))
    return out


def list_phases(n: int, depth: int) -> dict[str, float]:
    import ranklens
    from ranklens.evaluation import Evaluation
    from ranklens.judging import JudgeOptions, build
    from ranklens.judging.join import join_columnar
    from ranklens.metrics import parse_metrics

    qrels, run = dicts(n, depth)
    lists = {q: list(h) for q, h in run.items()}
    opts, parsed = JudgeOptions(), parse_metrics(METRICS)
    out: dict[str, float] = {}
    Q = timed(out, "labels to columns", lambda: ranklens.Qrels.from_dict(qrels))
    R = timed(out, "lists to columns", lambda: ranklens.Run.from_dict(lists))
    jn = timed(out, "columnar join", lambda: join_columnar(Q, R, opts))
    judged = timed(out, "build", lambda: build(jn, opts))
    values = timed(out, "metrics", lambda: {m.name: m.compute(judged) for m in parsed})
    timed(out, "means", lambda: Evaluation(judged, parsed, values))
    return out


def file_phases(n: int, depth: int) -> dict[str, float]:
    import ranklens
    from ranklens.evaluation import Evaluation
    from ranklens.judging import JudgeOptions, build
    from ranklens.judging.join import join_columnar
    from ranklens.metrics import parse_metrics

    qp, rp = paths(n, depth)
    opts, parsed = JudgeOptions(), parse_metrics(METRICS)
    out: dict[str, float] = {}
    Q = timed(out, "read labels", lambda: ranklens.read_qrels(qp))
    R = timed(out, "read run", lambda: ranklens.read_run(rp))
    timed(out, "ranking order", lambda: R.row_order(opts.score_precision, opts.ties))
    jn = timed(out, "columnar join", lambda: join_columnar(Q, R, opts))
    judged = timed(out, "build", lambda: build(jn, opts))
    values = timed(out, "metrics", lambda: {m.name: m.compute(judged) for m in parsed})
    timed(out, "means", lambda: Evaluation(judged, parsed, values))
    return out


def streamed_phases(n: int, depth: int) -> dict[str, float]:
    from ranklens.evaluation import Evaluation, parts, sources
    from ranklens.judging import judge

    qp, rp = paths(n, depth)
    out = dict.fromkeys(("plan (labels read)", "chunks read", "labels sliced", "judged",
                         "metrics"), 0.0)  # fmt: skip
    p = timed(out, "plan (labels read)", lambda: parts.plan(
        str(qp), METRICS, [Path(rp)], 2_000_000_000, None, "10", {}))  # fmt: skip
    it = sources.chunks(Path(rp), "trec", lambda: p.size)
    while True:
        t = time.process_time()
        chunk = next(it, None)
        out["chunks read"] += time.process_time() - t
        if chunk is None:
            break
        t = time.process_time()
        labels = parts._labels_of(p.Q, p.q_str, chunk.run)
        out["labels sliced"] += time.process_time() - t
        t = time.process_time()
        judged = judge(labels, chunk.run, p.chunk_options)
        out["judged"] += time.process_time() - t
        t = time.process_time()
        Evaluation.from_judged(judged, p.metrics)
        out["metrics"] += time.process_time() - t
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000x100,100000x100")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--forms", default="dicts,lists,files,streamed")
    args = ap.parse_args()
    import os

    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; CPU seconds, best "
          f"of {args.reps}")  # fmt: skip
    runs = {"dicts": dict_phases, "lists": list_phases, "files": file_phases,
            "streamed": streamed_phases}  # fmt: skip
    for size in args.sizes.split(","):
        n, depth = (int(x) for x in size.split("x"))
        for form in args.forms.split(","):
            if form == "streamed" and n * depth < 5_000_000:
                continue  # the default budget streams 100k x 100, not 10k x 100
            runs[form](min(n, 1000), depth)  # warm-up
            got = best([runs[form](n, depth) for _ in range(args.reps)])
            total = sum(got.values())
            cells = ", ".join(f"{k} {v:.3f} ({v / total:.0%})" for k, v in got.items())
            print(f"{size} {form}: total {total:.3f} s = {cells}")


if __name__ == "__main__":
    main()
