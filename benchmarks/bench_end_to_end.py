"""End-to-end speed of ranklens against pytrec_eval-terrier and ranx, in one run.

    uv run python benchmarks/bench_end_to_end.py            # all sizes (several minutes)
    uv run python benchmarks/bench_end_to_end.py --quick    # 1k x 100 and 10k x 100 only

Metric set: P@10, recall@100, reciprocal rank, MAP, nDCG@10, nDCG@100 (each tool's own
spelling). Phases, each timed as the median of several repetitions in a worker process of
its own (which also gives peak memory):

  (a) files   from TREC files to means
  (b) dicts   from Python dicts to means (ranx twice: through Qrels/Run objects, and its
              fastest path, evaluate() on plain dicts)
  (c) reeval  re-evaluating ready objects (ranklens: judged arrays; pytrec_eval: its
              evaluator's evaluate(); ranx: evaluate on built Qrels/Run)
  (d) fresh   a whole fresh process at 10k x 100: import, load files, evaluate, exit

Before timing, the three tools' per-query values are compared (ranx gets the run with ties
already broken the trec_eval way, as ranx's own tie order is arbitrary): a disagreement
stops the benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _synthetic import generate, paths

RANKLENS = ["P@10", "recall@100", "recip_rank", "map", "ndcg@10", "ndcg@100"]
PYTREC = ["P_10", "recall_100", "recip_rank", "map", "ndcg_cut_10", "ndcg_cut_100"]
RANX = ["precision@10", "recall@100", "mrr", "map", "ndcg@10", "ndcg@100"]
SIZES = [(1_000, 100), (10_000, 100), (100_000, 100), (1_000, 1_000)]


# ----------------------------------------------------------------------------- workers
def _pytrec_means(per_query: dict) -> dict:
    import numpy as np

    return {m: float(np.mean([v[m] for v in per_query.values()])) for m in PYTREC}


def work(tool: str, phase: str, n: int, depth: int, reps: int) -> dict:
    """Time one tool in one phase (runs inside a fresh worker process)."""
    qp, rp = paths(n, depth)
    times: list[float] = []
    means: dict = {}
    if phase == "dicts":
        qrels, run = generate(n, depth)
    if tool == "ranklens":
        import ranklens

        if phase == "files":
            for _ in range(reps):
                t = time.perf_counter()
                means = ranklens.evaluate(str(qp), str(rp), RANKLENS).aggregate
                times.append(time.perf_counter() - t)
        elif phase == "dicts":
            for _ in range(reps):
                t = time.perf_counter()
                means = ranklens.evaluate(qrels, run, RANKLENS).aggregate
                times.append(time.perf_counter() - t)
        elif phase == "reeval":
            ev = ranklens.evaluate(str(qp), str(rp), RANKLENS)
            for _ in range(reps):
                t = time.perf_counter()
                means = ev.judged.evaluate(RANKLENS).aggregate
                times.append(time.perf_counter() - t)
    elif tool == "pytrec_eval":
        import pytrec_eval

        if phase == "files":
            for _ in range(reps):
                t = time.perf_counter()
                with open(qp) as fq, open(rp) as fr:
                    q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
                ev = pytrec_eval.RelevanceEvaluator(q, set(PYTREC))
                means = _pytrec_means(ev.evaluate(r))
                times.append(time.perf_counter() - t)
        elif phase == "dicts":
            for _ in range(reps):
                t = time.perf_counter()
                ev = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC))
                means = _pytrec_means(ev.evaluate(run))
                times.append(time.perf_counter() - t)
        elif phase == "reeval":
            with open(qp) as fq, open(rp) as fr:
                q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
            ev = pytrec_eval.RelevanceEvaluator(q, set(PYTREC))
            for _ in range(reps):
                t = time.perf_counter()
                means = _pytrec_means(ev.evaluate(r))
                times.append(time.perf_counter() - t)
    elif tool in ("ranx", "ranx_plain"):
        from ranx import Qrels, Run, evaluate

        if phase == "files":
            for _ in range(reps):
                t = time.perf_counter()
                q = Qrels.from_file(str(qp), kind="trec")
                r = Run.from_file(str(rp), kind="trec")
                means = evaluate(q, r, RANX, make_comparable=True)
                times.append(time.perf_counter() - t)
        elif phase == "dicts":
            for _ in range(reps):
                t = time.perf_counter()
                if tool == "ranx":
                    means = evaluate(Qrels(qrels), Run(run), RANX, make_comparable=True)
                else:
                    means = evaluate(qrels, run, RANX)
                times.append(time.perf_counter() - t)
        elif phase == "reeval":
            q = Qrels.from_file(str(qp), kind="trec")
            r = Run.from_file(str(rp), kind="trec")
            evaluate(q, r, RANX, make_comparable=True)
            for _ in range(reps):
                t = time.perf_counter()
                means = evaluate(q, r, RANX, make_comparable=True)
                times.append(time.perf_counter() - t)
        means = {k: float(v) for k, v in means.items()}
    return {"times": times, "means": means, "peak_mb": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, reset by exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


FRESH = {
    "ranklens": "import ranklens; ranklens.evaluate({q!r}, {r!r}, {m!r}).aggregate",
    "pytrec_eval": (
        "import pytrec_eval, numpy as np\n"
        "q = pytrec_eval.parse_qrel(open({q!r})); r = pytrec_eval.parse_run(open({r!r}))\n"
        "res = pytrec_eval.RelevanceEvaluator(q, set({m!r})).evaluate(r)\n"
        "{{k: np.mean([v[k] for v in res.values()]) for k in {m!r}}}"
    ),
    "ranx": (
        "from ranx import Qrels, Run, evaluate\n"
        "evaluate(Qrels.from_file({q!r}, kind='trec'), Run.from_file({r!r}, kind='trec'), "
        "{m!r}, make_comparable=True)"
    ),
}


def _env() -> dict:
    """The environment of a normal installation: bytecode caching on (some machines set
    PYTHONDONTWRITEBYTECODE, which makes every fresh process recompile every module)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def fresh_process(tool: str, n: int, depth: int, reps: int) -> dict:
    qp, rp = paths(n, depth)
    metrics = {"ranklens": RANKLENS, "pytrec_eval": PYTREC, "ranx": RANX}[tool]
    code = FRESH[tool].format(q=str(qp), r=str(rp), m=metrics)
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())  # prime caches
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=_env())
        times.append(time.perf_counter() - t)
    return {"times": times}


def first_call_ratio(n: int, depth: int) -> dict:
    """ranklens' first evaluate() in a fresh process against its later calls, and import
    time."""
    qp, rp = paths(n, depth)
    code = (
        "import time; t=time.perf_counter(); import ranklens; imp=time.perf_counter()-t\n"
        "ts=[]\n"
        f"for _ in range(5):\n"
        f"    t=time.perf_counter(); ranklens.evaluate({str(qp)!r}, {str(rp)!r}, {RANKLENS!r})\n"
        "    ts.append(time.perf_counter()-t)\n"
        "import json; print(json.dumps({'import': imp, 'calls': ts}))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=_env())
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=_env()
    ).stdout
    return json.loads(out)


def run_worker(args: list[str]) -> dict:
    cmd = [sys.executable, __file__, "--worker", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"worker {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- agreement
def check_agreement(n: int = 2_000, depth: int = 100) -> None:
    """Per-query values of the three tools must agree (1e-9; ranx fed trec-ordered ties)."""
    import numpy as np
    import pytrec_eval
    from ranx import Qrels, Run, evaluate

    import ranklens

    qrels, run = generate(n, depth, seed=1)
    ours = ranklens.evaluate(qrels, run, RANKLENS)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    for mine, other in zip(RANKLENS, PYTREC):
        a = ours.per_query[mine]
        b = np.array([theirs[q][other] for q in ours.query_ids])
        assert np.max(np.abs(a - b)) < 1e-9, (mine, float(np.max(np.abs(a - b))))
    # ranx: break ties as trec_eval does by giving each document its trec rank as score
    ranked = ranklens.Run.from_dict(run).to_lists()
    untied = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}
    rx = evaluate(Qrels(qrels), Run(untied), RANX, return_mean=False, make_comparable=True)
    for mine, other in zip(RANKLENS, RANX):
        a = ours.per_query[mine]
        b = np.asarray(rx[other])
        # ranx returns values in its own query order: the sorted query ids
        b_by_q = dict(zip(sorted(untied), b))
        b = np.array([b_by_q[q] for q in ours.query_ids])
        assert np.max(np.abs(a - b)) < 1e-9, (mine, float(np.max(np.abs(a - b))))
    print(
        f"agreement: ranklens = pytrec_eval = ranx per query on {n} x {depth} (max |diff| < 1e-9)"
    )


# ----------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", nargs=5, metavar=("TOOL", "PHASE", "N", "DEPTH", "REPS"))
    ap.add_argument("--json", help="write all measurements to this file")
    ap.add_argument("--sizes", help="only these sizes, e.g. 100000x100,1000x1000")
    ap.add_argument("--phases", help="only these phases, e.g. files,dicts,fresh")
    args = ap.parse_args()
    if args.worker:
        tool, phase, n, depth, reps = args.worker
        # untimed warm-up on the small size: imports, caches and numba's compiled code are
        # loaded before timing (phase (d) measures a cold process)
        work(tool, phase, 1_000, 100, 1)
        print(json.dumps(work(tool, phase, int(n), int(depth), int(reps))))
        return
    import platform

    import numpy as np

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}"
    )
    versions = {}
    for mod in ("ranklens", "pytrec_eval", "ranx", "numba", "pyarrow"):
        try:
            from importlib.metadata import version

            versions[mod] = version({"pytrec_eval": "pytrec_eval-terrier"}.get(mod, mod))
        except Exception:
            versions[mod] = "?"
    print("versions:", ", ".join(f"{k} {v}" for k, v in versions.items()))
    check_agreement()
    sizes = SIZES[:2] if args.quick else SIZES
    if args.sizes:
        sizes = [tuple(int(x) for x in sz.split("x")) for sz in args.sizes.split(",")]
    phases = args.phases.split(",") if args.phases else ["files", "dicts", "reeval"]
    results: dict = {"versions": versions, "sizes": {}}
    for n, depth in sizes:
        paths(n, depth)
        label = f"{n // 1000}k x {depth}"
        reps = 3
        row: dict = {}
        for phase, tools in (
            ("files", ["ranklens", "pytrec_eval", "ranx"]),
            ("dicts", ["ranklens", "pytrec_eval", "ranx", "ranx_plain"]),
            ("reeval", ["ranklens", "pytrec_eval", "ranx"]),
        ):
            if phase not in phases:
                continue
            # one repetition per worker, the tools taking turns, so that the machine's
            # drift over minutes falls on every tool alike
            acc: dict = {t: {"times": [], "peak_mb": 0.0} for t in tools}
            for _ in range(reps):
                for tool in tools:
                    res = run_worker([tool, phase, str(n), str(depth), "1"])
                    acc[tool]["times"] += res["times"]
                    acc[tool]["peak_mb"] = max(acc[tool]["peak_mb"], res["peak_mb"])
            for tool in tools:
                row[f"{phase}/{tool}"] = {
                    "median": statistics.median(acc[tool]["times"]),
                    "peak_mb": acc[tool]["peak_mb"],
                    "times": acc[tool]["times"],
                }
        results["sizes"][label] = row
        print(f"\n== {label} ({n * depth:,} run rows) ==")
        print(
            f"{'phase':8} {'ranklens':>10} {'pytrec_eval':>12} {'ranx':>10} {'ranx(dict)':>11}"
            f" {'vs pytrec':>10} {'vs ranx':>8} {'vs ranx(dict)':>13}   peak MB (rl/pt/rx)"
        )
        for phase in phases:
            ours = row[f"{phase}/ranklens"]["median"]
            pt = row[f"{phase}/pytrec_eval"]["median"]
            rx = row[f"{phase}/ranx"]["median"]
            rxp = row.get(f"{phase}/ranx_plain", {}).get("median")
            mem = "/".join(
                f"{row[f'{phase}/{t}']['peak_mb']:.0f}" for t in ("ranklens", "pytrec_eval", "ranx")
            )
            print(
                f"{phase:8} {ours:10.3f} {pt:12.3f} {rx:10.3f} "
                f"{(f'{rxp:11.3f}' if rxp else ' ' * 11)} {pt / ours:9.1f}x {rx / ours:7.1f}x "
                f"{(f'{rxp / ours:12.1f}x' if rxp else ' ' * 13)}   {mem}"
            )
    if args.phases and "fresh" not in phases:
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
        return
    n, depth = 10_000, 100
    fresh = {
        t: statistics.median(fresh_process(t, n, depth, 3)["times"])
        for t in ("ranklens", "pytrec_eval", "ranx")
    }
    results["fresh_10k"] = fresh
    print(
        f"\n== fresh process, 10k x 100 (import + load files + evaluate) ==\n"
        f"ranklens {fresh['ranklens']:.2f} s, pytrec_eval {fresh['pytrec_eval']:.2f} s "
        f"({fresh['pytrec_eval'] / fresh['ranklens']:.1f}x), ranx {fresh['ranx']:.2f} s "
        f"({fresh['ranx'] / fresh['ranklens']:.1f}x)"
    )
    results["first_call"] = {}
    for fn, fd in ((10_000, 100), (100_000, 100)) if not args.quick else ((10_000, 100),):
        fc = first_call_ratio(fn, fd)
        later = statistics.median(fc["calls"][1:])
        results["first_call"][f"{fn // 1000}k x {fd}"] = fc
        print(
            f"{fn // 1000}k x {fd}: import ranklens {fc['import']:.3f} s; first call "
            f"{fc['calls'][0]:.3f} s vs later calls {later:.3f} s "
            f"(ratio {fc['calls'][0] / later:.2f})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
