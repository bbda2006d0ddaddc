"""End-to-end speed of ranklens against pytrec_eval-terrier and ranx, in one run.

    uv run python benchmarks/bench_end_to_end.py            # headline scenario, all sizes
    uv run python benchmarks/bench_end_to_end.py --quick    # 1k x 100 and 10k x 100 only
    uv run python benchmarks/bench_end_to_end.py --issue    # the rows of issue 38
    uv run python benchmarks/bench_end_to_end.py --scenarios beir/sparse,small/deep \
        --sizes 10000x100,100000x100 --phases files,dicts,forms
    uv run python benchmarks/bench_end_to_end.py --cold --no-pretouch \
        --scenarios msmarco/deep,uniform/deep,uniform/flat,digits/flat,long/flat \
        --sizes 10000x100,100000x100 --phases files,dicts,npdicts,forms \
        --without ranx,ranx_plain   # issue 49's rows

Data: ``_realistic.py`` (the headline scenario is ``msmarco/deep``: MS MARCO-like numeric ids
from an 8.8M space, TREC-style deep judgments; see that module for the others). Each size's
line says how many distinct document ids the run holds and how deep the labels are.

Metric set: P@10, recall@100, reciprocal rank, MAP, nDCG@10, nDCG@100 (each tool's own
spelling). Phases, each timed in a worker process of its own (which also gives peak
memory: the worker's resident size at its highest once the inputs are loaded), wall time
and CPU time (``time.process_time``: both threads when ranklens reads
on two; a fair measure on a machine shared with other work):

  (a) files   from TREC files to means
  (b) dicts   from Python dicts to means (ranx twice: through Qrels/Run objects, and its
              fastest path, evaluate() on plain dicts); ``npdicts``: the same with each
              score a numpy.float64 scalar, as ``dict(zip(ids, scores_row))`` gives
              (ranklens and pytrec_eval; ranx is left out)
  (c) forms   ranklens from the other in-memory forms of the same run, labels as dicts:
              ranked lists ``{q: [doc, ...]}``, ``{q: [(doc, score), ...]}``, a runner's
              ``RunResult`` and a pandas DataFrame (query_id, doc_id, score); each against
              pytrec_eval from dicts and ranklens from files
  (d) reeval  re-evaluating ready objects (ranklens: judged arrays; pytrec_eval: its
              evaluator's evaluate(); ranx: evaluate on built Qrels/Run)
  (e) fresh   a whole fresh process at 10k x 100: import, load files, evaluate, exit

``--cold`` times each worker's first call (imports and first-use costs in it) instead of a
call after a warm-up; ``--no-pretouch`` leaves the machine's memory untouched before the
run (on a freshly started VM, the first touch of guest memory is slow). The run says which
it did, and ends with every row against pytrec_eval, worst first.

Before timing, the three tools' per-query values are compared (ranx gets the run with ties
already broken the trec_eval way, as ranx's own tie order is arbitrary), and every form's
means must equal the dicts' means: a disagreement stops the benchmark. The run ends with
the issue's table: each row's ratios by wall and by CPU time, side by side.
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
from _realistic import SCENARIOS, dicts, ensure_dicts, paths

RANKLENS = ["P@10", "recall@100", "recip_rank", "map", "ndcg@10", "ndcg@100"]
PYTREC = ["P_10", "recall_100", "recip_rank", "map", "ndcg_cut_10", "ndcg_cut_100"]
RANX = ["precision@10", "recall@100", "mrr", "map", "ndcg@10", "ndcg@100"]
SIZES = [(1_000, 100), (10_000, 100), (100_000, 100), (7_000, 1_000)]
ISSUE_SIZES = [(10_000, 100), (100_000, 100), (7_000, 1_000)]
HEADLINE = "msmarco/deep"
FORMS = ("lists", "pairs", "runresult", "frame")


# ----------------------------------------------------------------------------- workers
def _pytrec_means(per_query: dict) -> dict:
    import numpy as np

    return {m: float(np.mean([v[m] for v in per_query.values()])) for m in PYTREC}


def form_of(run: dict, form: str):
    """The run in another in-memory form, ranked as the dicts rank it (ties by id, as
    trec_eval breaks them), so that every form gives the dicts' numbers."""
    import ranklens

    ranked = ranklens.Run.from_dict(run).to_lists()
    if form == "lists":
        return ranked
    if form == "pairs":
        return {q: [(d, run[q][d]) for d in docs] for q, docs in ranked.items()}
    if form == "runresult":
        from ranklens.capture import RunResult
        from ranklens.capture.records import Retrieval

        records = [Retrieval(q, "", doc_ids=docs, scores=[run[q][d] for d in docs])
                   for q, docs in ranked.items()]  # fmt: skip
        return RunResult(records, "bm25", {})
    if form == "frame":
        import numpy as np
        import pandas as pd

        lens = [len(h) for h in run.values()]
        return pd.DataFrame({
            "query_id": np.repeat(np.array(list(run), dtype=object), lens),
            "doc_id": [d for h in run.values() for d in h],
            "score": [s for h in run.values() for s in h.values()],
        })  # fmt: skip
    raise ValueError(form)


def work(tool: str, phase: str, n: int, depth: int, reps: int, scenario: str) -> dict:
    """Time one tool in one phase (runs inside a fresh worker process): wall and CPU."""
    qp, rp = paths(n, depth, scenario)
    times: list[float] = []
    cpu: list[float] = []
    means: dict = {}
    if phase in ("dicts", "npdicts", "forms"):
        qrels, run = dicts(n, depth, scenario)
    if phase == "npdicts":  # scores as numpy.float64 scalars, as dict(zip(ids, row)) gives
        import numpy as np

        run = {q: dict(zip(h, np.fromiter(h.values(), np.float64, len(h)))) for q, h in run.items()}
    if phase == "forms" and ":" in tool:  # pytrec_eval's row of this phase is from dicts
        other = form_of(run, tool.split(":")[1])
        del run

    # peak memory from here on (the inputs loaded, the form made): VmHWM reset to now
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")

    def timed(fn):  # one repetition: wall and CPU time
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        return out

    if tool.startswith("ranklens"):
        import ranklens

        if phase == "files":
            for _ in range(reps):
                means = timed(lambda: ranklens.evaluate(str(qp), str(rp), RANKLENS).aggregate)
        elif phase in ("dicts", "npdicts"):
            for _ in range(reps):
                means = timed(lambda: ranklens.evaluate(qrels, run, RANKLENS).aggregate)
        elif phase == "forms":
            for _ in range(reps):
                if tool.endswith("runresult"):  # the runner's result evaluates itself
                    means = timed(lambda: other.evaluate(qrels, RANKLENS).aggregate)
                else:
                    means = timed(lambda: ranklens.evaluate(qrels, other, RANKLENS).aggregate)
        elif phase == "reeval":
            ev = ranklens.evaluate(str(qp), str(rp), RANKLENS)
            for _ in range(reps):
                means = timed(lambda: ev.evaluate(RANKLENS).aggregate)
    elif tool == "pytrec_eval":
        import pytrec_eval

        def from_files():
            with open(qp) as fq, open(rp) as fr:
                q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
            return _pytrec_means(pytrec_eval.RelevanceEvaluator(q, set(PYTREC)).evaluate(r))

        if phase == "files":
            for _ in range(reps):
                means = timed(from_files)
        elif phase in ("dicts", "npdicts", "forms"):
            for _ in range(reps):
                means = timed(lambda: _pytrec_means(
                    pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)))  # fmt: skip
        elif phase == "reeval":
            with open(qp) as fq, open(rp) as fr:
                q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
            ev = pytrec_eval.RelevanceEvaluator(q, set(PYTREC))
            for _ in range(reps):
                means = timed(lambda: _pytrec_means(ev.evaluate(r)))
    elif tool in ("ranx", "ranx_plain"):
        from ranx import Qrels, Run, evaluate

        if phase == "files":
            for _ in range(reps):
                means = timed(lambda: evaluate(
                    Qrels.from_file(str(qp), kind="trec"), Run.from_file(str(rp), kind="trec"),
                    RANX, make_comparable=True))  # fmt: skip
        elif phase == "dicts":
            # plain dicts must share their query ids (make_comparable needs ranx's objects):
            # the run's unlabelled queries are left out, inside the timing
            def plain():
                same = run if run.keys() == qrels.keys() else {q: run.get(q, {}) for q in qrels}
                return evaluate(qrels, same, RANX)

            for _ in range(reps):
                if tool == "ranx":
                    means = timed(lambda: evaluate(Qrels(qrels), Run(run), RANX,
                                                   make_comparable=True))  # fmt: skip
                else:
                    means = timed(plain)
        elif phase == "reeval":
            q = Qrels.from_file(str(qp), kind="trec")
            r = Run.from_file(str(rp), kind="trec")
            evaluate(q, r, RANX, make_comparable=True)
            for _ in range(reps):
                means = timed(lambda: evaluate(q, r, RANX, make_comparable=True))
        means = {k: float(v) for k, v in means.items()}
    return {"times": times, "cpu": cpu, "means": means, "peak_mb": peak_rss_mb()}


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
TOOLS = {
    "files": ["ranklens", "pytrec_eval", "ranx"],
    "dicts": ["ranklens", "pytrec_eval", "ranx", "ranx_plain"],
    "npdicts": ["ranklens", "pytrec_eval"],
    "forms": ["pytrec_eval", *(f"ranklens:{f}" for f in FORMS)],
    "reeval": ["ranklens", "pytrec_eval", "ranx"],
}


def _ratio(a: float | None, b: float | None) -> str:
    return f"{b / a:.2f}x" if a and b else "-"


def _row(label: str, phases: list[str], row: dict) -> None:
    """One size's table: median wall and CPU seconds per tool, ranklens' ratios by wall
    (and by CPU), peak memory."""
    print(f"\n== {label} ==")
    print(f"{'phase':8} {'tool':18} {'wall s':>8} {'cpu s':>8} {'vs pytrec wall (cpu)':>21} "
          f"{'vs ranx':>8} {'vs ranx(dict)':>13} {'peak MB':>8}")  # fmt: skip
    for phase in phases:
        ref = "dicts" if phase == "forms" else phase
        pt = row.get(f"{phase}/pytrec_eval") or row.get(f"{ref}/pytrec_eval")
        rx, rxp = row.get(f"{ref}/ranx"), row.get(f"{ref}/ranx_plain")
        for tool in TOOLS[phase]:
            got = row.get(f"{phase}/{tool}")
            if got is None:
                continue
            ours = tool.startswith("ranklens")
            cells = ["", "", ""]
            if ours and pt:
                cells[0] = (f"{_ratio(got['median'], pt['median'])} "
                            f"({_ratio(got['cpu'], pt['cpu'])})")  # fmt: skip
            if ours and rx:
                cells[1] = _ratio(got["median"], rx["median"])
            if ours and rxp:
                cells[2] = _ratio(got["median"], rxp["median"])
            print(f"{phase:8} {tool:18} {got['median']:8.3f} {got['cpu']:8.3f} {cells[0]:>21} "
                  f"{cells[1]:>8} {cells[2]:>13} {got['peak_mb']:8.0f}")  # fmt: skip


def describe_data(n: int, depth: int, scenario: str) -> dict:
    """What the data holds: distinct document ids of the run (by their 64-bit hashes),
    labelled queries, judged and relevant documents per labelled query."""
    import numpy as np

    import ranklens

    qp, rp = paths(n, depth, scenario)
    run = ranklens.read_run(str(rp))
    qrels = ranklens.read_qrels(str(qp))
    per_q = np.bincount(qrels.q, minlength=len(qrels.query_ids))
    rel = np.bincount(qrels.q[qrels.grade > 0], minlength=len(qrels.query_ids))
    return {
        "run_rows": len(run.q),
        "distinct_doc_ids": len(np.unique(run.docs.hashes())),
        "labelled_queries": len(qrels.query_ids),
        "labels_per_query": float(per_q.mean()),
        "max_labels": int(per_q.max()),
        "relevant_per_query": float(rel.mean()),
    }


def _describe(d: dict) -> str:
    return (
        f"{d['run_rows']:,} run rows, {d['distinct_doc_ids']:,} distinct doc ids; "
        f"{d['labelled_queries']:,} labelled queries, {d['labels_per_query']:.1f} judged "
        f"(max {d['max_labels']}) and {d['relevant_per_query']:.1f} relevant per query"
    )


def check_forms(row: dict, phases: list[str]) -> None:
    """Every form's means equal the dicts' means (ranklens), or pytrec_eval's within 1e-9;
    the numpy-scalar dicts' too, for both tools (no ratio is reported over outputs that
    differ)."""
    ref = row.get("dicts/ranklens", {}).get("means")
    pt_np = row.get("npdicts/pytrec_eval", {}).get("means")
    np_ours = row.get("npdicts/ranklens", {}).get("means")
    if np_ours is not None and ref is not None:
        assert np_ours == ref, ("npdicts", np_ours, ref)
    if np_ours is not None and pt_np is not None:
        for mine, other in zip(RANKLENS, PYTREC):
            assert abs(np_ours[mine] - pt_np[other]) < 1e-9, ("npdicts", mine)
    pt = row.get("forms/pytrec_eval", {}).get("means") or row.get("dicts/pytrec_eval", {}).get(
        "means"
    )
    for form in FORMS:
        got = row.get(f"forms/ranklens:{form}", {}).get("means")
        if got is None:
            continue
        if ref is not None:
            assert got == ref, (form, got, ref)
        if pt is not None:
            for mine, other in zip(RANKLENS, PYTREC):
                assert abs(got[mine] - pt[other]) < 1e-9, (form, mine, got[mine], pt[other])


def issue_table(scenario: str, res: dict) -> None:
    """The rows of issue 38, each size's data described beside them."""
    print(f"\n== issue 38 rows, {scenario}: ranklens against pytrec_eval and ranx, median "
          "wall s (ratio by wall; by CPU) ==")  # fmt: skip
    for size, got in res.items():
        if not isinstance(got, dict) or "rows" not in got:
            continue
        row = got["rows"]
        print(f"-- {size.replace('x', ' x ')}: {_describe(got['data'])}")
        pt_d = row.get("dicts/pytrec_eval") or row.get("forms/pytrec_eval")
        files = row.get("files/ranklens")
        lines = [("TREC files -> six means", "files/ranklens", "files/pytrec_eval", "files/ranx"),
                 ("Python dicts -> six means", "dicts/ranklens", "dicts/pytrec_eval",
                  "dicts/ranx")]  # fmt: skip
        lines.append(("dicts, numpy.float64 scores", "npdicts/ranklens", "npdicts/pytrec_eval",
                      ""))  # fmt: skip
        for title, ours, pt, rx in lines:
            o, p, r = row.get(ours), row.get(pt), row.get(rx)
            if o is None or p is None:
                continue
            vs_ranx = f"  ranx {r['median']:7.3f} ({_ratio(o['median'], r['median'])})" if r else ""
            print(f"   {title:34} {o['median']:7.3f}  pytrec_eval {p['median']:7.3f} "
                  f"({_ratio(o['median'], p['median'])}; {_ratio(o['cpu'], p['cpu'])})"
                  f"{vs_ranx}")  # fmt: skip
        if "dicts/ranklens" in row:
            mem = "/".join(f"{row[f'dicts/{t}']['peak_mb']:.0f}" if f"dicts/{t}" in row else "-"
                           for t in ("ranklens", "pytrec_eval", "ranx"))  # fmt: skip
            print(f"   {'peak memory, dicts (MB, rl/pt/rx)':34} {mem}")
        for form in FORMS:
            o = row.get(f"forms/ranklens:{form}")
            if o is None or pt_d is None:
                continue
            vs_files = f"; {_ratio(o['median'], files['median'])} files" if files else ""
            print(
                f"   {form + ' -> six means':34} {o['median']:7.3f}  pytrec_eval (dicts) "
                f"{pt_d['median']:7.3f} ({_ratio(o['median'], pt_d['median'])}; "
                f"{_ratio(o['cpu'], pt_d['cpu'])}){vs_files}; peak {o['peak_mb']:.0f} MB"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--issue", action="store_true",
                    help="issue 38's rows: files, dicts and forms at 10k x 100, 100k x 100, "
                    "7k x 1000")  # fmt: skip
    ap.add_argument("--worker", nargs=6, metavar=("TOOL", "PHASE", "N", "DEPTH", "REPS", "SCEN"))
    ap.add_argument("--json", help="write all measurements to this file")
    ap.add_argument("--sizes", help="only these sizes, e.g. 100000x100,7000x1000")
    ap.add_argument("--phases", help="only these phases, e.g. files,dicts,forms,reeval,fresh")
    ap.add_argument(
        "--scenarios", default=HEADLINE, help=f"comma-separated, of {', '.join(SCENARIOS)}"
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--without", default="", help="leave these tools out, e.g. ranx,ranx_plain")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="time each worker process's first call (no warm-up call before it)",
    )
    ap.add_argument("--no-pretouch", action="store_true",
                    help="leave the machine's memory as it is (no throwaway process touching "
                    "6 GB first): on a freshly started VM, first touches of guest memory are "
                    "slow and fall on whichever tool allocates them")  # fmt: skip
    args = ap.parse_args()
    if args.cold:
        os.environ["BENCH_COLD"] = "1"  # the workers inherit it
    if args.worker:
        tool, phase, n, depth, reps, scenario = args.worker
        # untimed warm-up on the small size: imports, caches and numba's compiled code are
        # loaded before timing (phase "fresh" measures a cold process); --cold times the
        # process's first call instead (lazy imports and first-use costs included)
        if not os.environ.get("BENCH_COLD"):
            work(tool, phase, 1_000, 100, 1, scenario)
        print(json.dumps(work(tool, phase, int(n), int(depth), int(reps), scenario)))
        return
    import platform

    import numpy as np

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    versions = {}
    for mod in ("ranklens", "pytrec_eval", "ranx", "numba", "pyarrow", "pandas"):
        try:
            from importlib.metadata import version

            versions[mod] = version({"pytrec_eval": "pytrec_eval-terrier"}.get(mod, mod))
        except Exception:
            versions[mod] = "?"
    print("versions:", ", ".join(f"{k} {v}" for k, v in versions.items()))
    scenarios = args.scenarios.split(",")
    sizes = SIZES[:2] if args.quick else ISSUE_SIZES if args.issue else SIZES
    if args.sizes:
        sizes = [tuple(int(x) for x in sz.split("x")) for sz in args.sizes.split(",")]
    default = ["files", "dicts", "forms"] if args.issue else ["files", "dicts", "reeval", "fresh"]
    phases = args.phases.split(",") if args.phases else default
    results: dict = {"versions": versions, "scenarios": {}, "cold": args.cold,
                     "pretouched": not args.no_pretouch}  # fmt: skip
    if not args.no_pretouch:
        warm_memory()
    workers = "cold (the first call timed)" if args.cold else "warm (one call on 1k x 100 first)"
    touched = "no" if args.no_pretouch else "yes (6 GB, once)"
    print(f"memory pre-touched: {touched}; workers: {workers}")
    for scenario in scenarios:
        check_agreement(scenario)
        res = results["scenarios"][scenario] = {}
        for n, depth in sizes:
            paths(n, depth, scenario)
            if {"dicts", "npdicts", "forms"} & set(phases):
                ensure_dicts(n, depth, scenario)  # written once, before any timing
            data = describe_data(n, depth, scenario)
            row: dict = {}
            for phase in ("files", "dicts", "npdicts", "forms", "reeval"):
                if phase not in phases:
                    continue
                tools = [t for t in TOOLS[phase] if t not in args.without.split(",")]
                if phase == "forms" and "dicts" in phases:
                    tools = tools[1:]  # pytrec_eval from dicts was timed just before
                # one repetition per worker, the tools taking turns, so that the machine's
                # drift over minutes falls on every tool alike
                acc: dict = {t: {"times": [], "cpu": [], "peak_mb": 0.0} for t in tools}
                for _ in range(args.reps):
                    for tool in tools:
                        got = run_worker([tool, phase, str(n), str(depth), "1", scenario])
                        acc[tool]["times"] += got["times"]
                        acc[tool]["cpu"] += got["cpu"]
                        acc[tool]["peak_mb"] = max(acc[tool]["peak_mb"], got["peak_mb"])
                        acc[tool]["means"] = got["means"]
                for tool in tools:
                    row[f"{phase}/{tool}"] = {
                        "median": statistics.median(acc[tool]["times"]),
                        "cpu": statistics.median(acc[tool]["cpu"]),
                        "peak_mb": acc[tool]["peak_mb"],
                        "times": acc[tool]["times"],
                        "cpus": acc[tool]["cpu"],
                        "means": acc[tool]["means"],
                    }
            check_forms(row, phases)
            res[f"{n}x{depth}"] = {"rows": row, "data": data}
            _row(f"{scenario}, {n // 1000}k x {depth}: {_describe(data)}", phases, row)
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
        issue_table(scenario, res)
    worst_rows(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


def worst_rows(results: dict) -> None:
    """Every (scenario, size, path) by its ratio to pytrec_eval (wall), the worst first: the
    headline's row beside the worst, so that no shape of data hides behind another."""
    rows = []
    for scenario, res in results["scenarios"].items():
        for size, got in res.items():
            if not isinstance(got, dict) or "rows" not in got:
                continue
            row = got["rows"]
            for key, o in row.items():
                phase, tool = key.split("/", 1)
                if not tool.startswith("ranklens"):
                    continue
                ref = "dicts" if phase == "forms" else phase
                p = row.get(f"{ref}/pytrec_eval") or row.get(f"{phase}/pytrec_eval")
                if p is None:
                    continue
                path = tool.split(":")[1] if ":" in tool else phase
                rows.append((p["median"] / o["median"], scenario, size, path, o["peak_mb"],
                             p["peak_mb"]))  # fmt: skip
    if not rows:
        return
    rows.sort()
    print(f"\n== every row against pytrec_eval, worst first (cold: {results['cold']}, memory "
          f"pre-touched: {results['pretouched']}) ==")  # fmt: skip
    print(f"{'ratio':>6}  {'scenario':16} {'size':>10}  {'path':10} {'peak MB rl / pt':>16}")
    for ratio, scenario, size, path, mo, mp in rows:
        print(f"{ratio:5.2f}x  {scenario:16} {size:>10}  {path:10} {mo:7.0f} / {mp:<7.0f}")


if __name__ == "__main__":
    main()
