"""End-to-end speed of ranklens against pytrec_eval-terrier and ranx, in one run.

    uv run python benchmarks/bench_end_to_end.py            # headline scenario, all sizes
    uv run python benchmarks/bench_end_to_end.py --quick    # 1k x 100 and 10k x 100 only
    uv run python benchmarks/bench_end_to_end.py --scenarios beir/sparse,small/deep \
        --sizes 10000x100,100000x100 --phases files,dicts

Data: ``_realistic.py`` (the headline scenario is ``msmarco/deep``: MS MARCO-like numeric ids
from an 8.8M space, TREC-style deep judgments; see that module for the others).

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
from _realistic import SCENARIOS, dicts, paths

RANKLENS = ["P@10", "recall@100", "recip_rank", "map", "ndcg@10", "ndcg@100"]
PYTREC = ["P_10", "recall_100", "recip_rank", "map", "ndcg_cut_10", "ndcg_cut_100"]
RANX = ["precision@10", "recall@100", "mrr", "map", "ndcg@10", "ndcg@100"]
SIZES = [(1_000, 100), (10_000, 100), (100_000, 100), (7_000, 1_000)]
HEADLINE = "msmarco/deep"


# ----------------------------------------------------------------------------- workers
def _pytrec_means(per_query: dict) -> dict:
    import numpy as np

    return {m: float(np.mean([v[m] for v in per_query.values()])) for m in PYTREC}


def work(tool: str, phase: str, n: int, depth: int, reps: int, scenario: str) -> dict:
    """Time one tool in one phase (runs inside a fresh worker process)."""
    qp, rp = paths(n, depth, scenario)
    times: list[float] = []
    means: dict = {}
    if phase == "dicts":
        qrels, run = dicts(n, depth, scenario)
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
                means = ev.evaluate(RANKLENS).aggregate
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
                    # plain dicts must share their query ids (make_comparable needs ranx's
                    # objects): the run's unlabelled queries are left out, inside the timing
                    same = run if run.keys() == qrels.keys() else {q: run.get(q, {}) for q in qrels}
                    means = evaluate(qrels, same, RANX)
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
    "ranklens CLI": None,  # the command line: ranklens evaluate QRELS RUN -m ...
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


def fresh_process(tool: str, n: int, depth: int, reps: int, scenario: str) -> dict:
    """A whole process (start, import, read files, evaluate, exit), ``reps`` times; peak
    memory too."""
    qp, rp = paths(n, depth, scenario)
    if tool == "ranklens CLI":
        exe = Path(sys.executable).with_name("ranklens")
        cmd = [str(exe), "evaluate", str(qp), str(rp)]
        for m in RANKLENS:
            cmd += ["-m", m]
    else:
        metrics = {"ranklens": RANKLENS, "pytrec_eval": PYTREC, "ranx": RANX}[tool]
        code = FRESH[tool].format(q=str(qp), r=str(rp), m=metrics)
        cmd = [sys.executable, "-c", code]
    subprocess.run(cmd, check=True, env=_env(), capture_output=True)  # prime caches
    times, peak = [], 0.0
    for _ in range(reps):
        t = time.perf_counter()
        proc = subprocess.run(cmd, check=True, env=_env(), capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        # peak memory: GNU time's %M, measured from a small parent (a child forked from this
        # large process would report this process's size)
        timed = subprocess.run(
            ["/usr/bin/time", "-f", "%M", *cmd], env=_env(), capture_output=True, text=True
        )
        if timed.returncode == 0:
            peak = max(peak, int(timed.stderr.strip().splitlines()[-1]) / 1024)
        del proc
    return {"times": times, "peak_mb": peak}


def first_call_ratio(n: int, depth: int, scenario: str) -> dict:
    """ranklens' first evaluate() in a fresh process against its later calls, and import
    time."""
    qp, rp = paths(n, depth, scenario)
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
def check_agreement(scenario: str, n: int = 2_000, depth: int = 100) -> None:
    """Per-query values of the three tools must agree (1e-9; ranx fed trec-ordered ties),
    ranklens both from dicts and from files (the path each phase times)."""
    import numpy as np
    import pytrec_eval
    from ranx import Qrels, Run, evaluate

    import ranklens

    qrels, run = dicts(n, depth, scenario)
    qp, rp = paths(n, depth, scenario)
    ours = ranklens.evaluate(qrels, run, RANKLENS)
    from_files = ranklens.evaluate(
        ranklens.io.trec.read_trec_qrels(qp, fast=True),
        ranklens.io.trec.read_trec_run(rp, fast=True),
        RANKLENS,
    )
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    for mine, other in zip(RANKLENS, PYTREC):
        b = np.array([theirs[q][other] for q in ours.query_ids])
        for got in (ours, from_files):
            a = got.per_query[mine]
            assert np.max(np.abs(a - b)) < 1e-9, (scenario, mine, float(np.max(np.abs(a - b))))
    # ranx: break ties as trec_eval does by giving each document its trec rank as score
    ranked = ranklens.Run.from_dict(run).to_lists()
    untied = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}
    rx = evaluate(Qrels(qrels), Run(untied), RANX, return_mean=False, make_comparable=True)
    for mine, other in zip(RANKLENS, RANX):
        a = ours.per_query[mine]
        b = np.asarray(rx[other])
        # ranx returns values in its own query order: the sorted labelled query ids (with
        # make_comparable, run queries without labels are dropped, as sparse labels have)
        b_by_q = dict(zip(sorted(qrels), b))
        b = np.array([b_by_q[q] for q in ours.query_ids])
        assert np.max(np.abs(a - b)) < 1e-9, (scenario, mine, float(np.max(np.abs(a - b))))
    print(
        f"agreement ({scenario}): ranklens (dicts and files) = pytrec_eval = ranx per query "
        f"on {n} x {depth} (max |diff| < 1e-9)"
    )


def warm_memory(gb: float = 6.0) -> None:
    """Touch memory once in a throwaway process: on a VM the first touch of never-used
    guest memory is several times slower than later ones, and would fall on whichever tool
    ran first."""
    code = f"import numpy as np; a = np.ones({int(gb * (1 << 30) / 8)}); a += 1"
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------- main
def _row(label: str, phases: list[str], row: dict) -> None:
    print(f"\n== {label} ==")
    print(
        f"{'phase':8} {'ranklens':>10} {'pytrec_eval':>12} {'ranx':>10} {'ranx(dict)':>11}"
        f" {'vs pytrec':>10} {'vs ranx':>8} {'vs ranx(dict)':>13}   peak MB (rl/pt/rx)"
    )
    for phase in phases:
        if f"{phase}/ranklens" not in row:
            continue
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


def _distinct(n: int, depth: int, scenario: str) -> int:
    import ranklens

    return len(ranklens.read_run(str(paths(n, depth, scenario)[1])).doc_ids)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", nargs=6, metavar=("TOOL", "PHASE", "N", "DEPTH", "REPS", "SCEN"))
    ap.add_argument("--json", help="write all measurements to this file")
    ap.add_argument("--sizes", help="only these sizes, e.g. 100000x100,7000x1000")
    ap.add_argument("--phases", help="only these phases, e.g. files,dicts,reeval,fresh")
    ap.add_argument(
        "--scenarios", default=HEADLINE, help=f"comma-separated, of {', '.join(SCENARIOS)}"
    )
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    if args.worker:
        tool, phase, n, depth, reps, scenario = args.worker
        # untimed warm-up on the small size: imports, caches and numba's compiled code are
        # loaded before timing (phase "fresh" measures a cold process)
        work(tool, phase, 1_000, 100, 1, scenario)
        print(json.dumps(work(tool, phase, int(n), int(depth), int(reps), scenario)))
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
    scenarios = args.scenarios.split(",")
    sizes = SIZES[:2] if args.quick else SIZES
    if args.sizes:
        sizes = [tuple(int(x) for x in sz.split("x")) for sz in args.sizes.split(",")]
    phases = args.phases.split(",") if args.phases else ["files", "dicts", "reeval", "fresh"]
    results: dict = {"versions": versions, "scenarios": {}}
    warm_memory()
    for scenario in scenarios:
        check_agreement(scenario)
        res = results["scenarios"][scenario] = {}
        for n, depth in sizes:
            paths(n, depth, scenario)
            label = f"{scenario}, {n // 1000}k x {depth}"
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
                for _ in range(args.reps):
                    for tool in tools:
                        got = run_worker([tool, phase, str(n), str(depth), "1", scenario])
                        acc[tool]["times"] += got["times"]
                        acc[tool]["peak_mb"] = max(acc[tool]["peak_mb"], got["peak_mb"])
                for tool in tools:
                    row[f"{phase}/{tool}"] = {
                        "median": statistics.median(acc[tool]["times"]),
                        "peak_mb": acc[tool]["peak_mb"],
                        "times": acc[tool]["times"],
                    }
            distinct = _distinct(n, depth, scenario)
            res[f"{n}x{depth}"] = {"rows": row, "distinct_doc_ids": distinct}
            _row(f"{label} ({n * depth:,} run rows, {distinct:,} distinct doc ids)", phases, row)
        if "fresh" in phases:
            n, depth = 10_000, 100
            tools = ["ranklens", "ranklens CLI", "pytrec_eval", "ranx"]
            acc = {t: {"times": [], "peak_mb": 0.0} for t in tools}
            for _ in range(args.reps):
                for tool in tools:
                    got = fresh_process(tool, n, depth, 1, scenario)
                    acc[tool]["times"] += got["times"]
                    acc[tool]["peak_mb"] = max(acc[tool]["peak_mb"], got["peak_mb"])
            fresh = {t: statistics.median(acc[t]["times"]) for t in tools}
            res["fresh_10k"] = acc
            pt, rx = fresh["pytrec_eval"], fresh["ranx"]
            print(f"\n== {scenario}, fresh process, 10k x 100 (start, import, read, evaluate) ==")
            for t in tools:
                print(
                    f"{t:13} {fresh[t]:6.2f} s  peak {acc[t]['peak_mb']:5.0f} MB"
                    + (f"  ({pt / fresh[t]:.1f}x pytrec_eval, {rx / fresh[t]:.1f}x ranx)"
                       if t.startswith("ranklens") else "")
                )  # fmt: skip
            fc = first_call_ratio(n, depth, scenario)
            later = statistics.median(fc["calls"][1:])
            res["first_call"] = fc
            print(
                f"import ranklens {fc['import']:.3f} s; first call {fc['calls'][0]:.3f} s vs "
                f"later calls {later:.3f} s (ratio {fc['calls'][0] / later:.2f})"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
