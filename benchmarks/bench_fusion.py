"""Speed of ``ranklens.fuse`` against ``ranx.fuse`` on the same three runs, in one run.

Three runs of Q queries x 100 documents, drawn from per-query pools of 200 candidates so
that runs overlap as real hybrid runs do (about half of two runs' documents shared), with
MS MARCO-shaped ids over the 8.8M-passage corpus (a 10k-query run holds ~0.9M distinct
ids) or BEIR's id shapes (``--ids beir``), 5% tied scores and each run on its own scale.
Two input forms: runs built from dicts (``ranklens.Run.from_dict`` / ``ranx.Run``) and
runs read from TREC files (``ranklens.read_run`` / ``ranx.Run.from_file``). Times:

* warm: the best of three fusions of the same run objects (ranx's numba code compiled
  beforehand; ranklens' id hashes computed on the first call are kept, as ranx keeps its
  typed dicts);
* cold: a fresh process's view, building the run objects from the dicts and fusing once,
  the objects built anew for each method (ranx's numba compile excluded, as it is cached
  on disk after the first use).

The fused scores are checked equal (1e-9) before timing.

    uv run python benchmarks/bench_fusion.py --queries 10000
    uv run python benchmarks/bench_fusion.py --queries 100000   # the issue's size
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _realistic import fusion_arrays

METHODS = (("rrf", None), ("sum", "min-max"), ("wsum", "zmuv"))


def to_dicts(data: dict) -> list[dict]:
    qid = data["qid"].tolist()
    return [
        {q: dict(zip(d, s)) for q, d, s in zip(qid, docs.tolist(), sc.tolist())}
        for docs, sc in zip(data["docs"], data["scores"])
    ]


def _head(data: dict, n: int) -> dict:
    return {"qid": data["qid"][:n], "docs": [d[:n] for d in data["docs"]],
            "scores": [s[:n] for s in data["scores"]]}  # fmt: skip


def write_trec(data: dict, folder: Path) -> list[Path]:
    paths = []
    for i, (docs, sc) in enumerate(zip(data["docs"], data["scores"])):
        p = folder / f"r{i}.run"
        with p.open("w") as f:
            for q, ds, ss in zip(data["qid"].tolist(), docs.tolist(), sc.tolist()):
                f.writelines(
                    f"{q} Q0 {d} {k} {s!r} r{i}\n" for k, (d, s) in enumerate(zip(ds, ss), 1)
                )
        paths.append(p)
    return paths


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def check(ours, theirs) -> None:
    a, b = ours.to_dict(), theirs.to_dict()
    assert a.keys() == b.keys()
    for q in list(b)[:300]:
        assert a[q].keys() == b[q].keys(), q
        assert all(abs(a[q][d] - v) < 1e-9 for d, v in b[q].items()), q


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--ids", choices=("msmarco", "beir"), default="msmarco")
    ap.add_argument("--forms", default="dict,trec", help="input forms to time (dict, trec)")
    args = ap.parse_args()
    import ranx

    import ranklens

    data = fusion_arrays(args.queries, args.depth, args.ids)
    wanted = args.forms.split(",")
    dicts = to_dicts(data) if "dict" in wanted else to_dicts(_head(data, 300))
    rows = 3 * args.queries * args.depth
    # rank-based methods are checked on the first 300 queries with their ties broken by
    # rank (ranx orders tied scores its own way, ranklens in trec order)
    untied = [
        {
            q: {doc: s - k * 1e-7 for k, (doc, s) in enumerate(hits.items())}
            for q, hits in list(d.items())[:300]
        }
        for d in dicts
    ]
    distinct = len({d for docs in data["docs"] for d in docs.ravel().tolist()})
    print(f"3 runs x {args.queries:,} queries x {args.depth} ({rows:,} rows, {distinct:,} "
          f"distinct {args.ids} ids)")  # fmt: skip
    small = [ranx.Run(dict(list(d.items())[:50]), name=f"r{i}") for i, d in enumerate(dicts)]
    import gc

    gc.collect()
    for method, norm in METHODS:  # compile every numba function used below
        params = {"weights": [0.5, 0.3, 0.2]} if method == "wsum" else {}
        ranx.fuse(small, method=method, norm=norm, params=params)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_trec(data, Path(tmp))
        forms = {
            "dict": (
                lambda: {f"r{i}": ranklens.Run.from_dict(d) for i, d in enumerate(dicts)},
                lambda: [ranx.Run(d, name=f"r{i}") for i, d in enumerate(dicts)],
            ),
            "trec": (
                lambda: {p.stem: ranklens.read_run(p) for p in paths},
                lambda: [ranx.Run.from_file(str(p), kind="trec") for p in paths],
            ),
        }
        for form, (make_ours, make_theirs) in forms.items():
            if form not in wanted:
                continue
            for method, norm in METHODS:
                w = {"weights": [0.5, 0.3, 0.2]} if method == "wsum" else {}
                # cold: objects built anew for each method (a run keeps the id hashes its
                # first fusion computes, so reusing them would time a warm fusion as cold)
                gc.collect()
                t0 = time.perf_counter()
                ours = make_ours()
                build_ours = time.perf_counter() - t0
                t0 = time.perf_counter()
                theirs = make_theirs()
                build_theirs = time.perf_counter() - t0
                t0 = time.perf_counter()
                fused = ranklens.fuse(ours, method, norm=norm, **w)
                cold_ours = build_ours + time.perf_counter() - t0
                t0 = time.perf_counter()
                ref = ranx.fuse(theirs, method=method, norm=norm, params=w)
                cold_theirs = build_theirs + time.perf_counter() - t0
                if method == "rrf":
                    fused = ranklens.fuse({f"r{i}": d for i, d in enumerate(untied)}, method)
                    ref = ranx.fuse([ranx.Run(d) for d in untied], method=method)
                check(fused, ref)
                warm_ours = best_of(
                    lambda o=ours, m=method, n=norm, w=w: ranklens.fuse(o, m, norm=n, **w)
                )
                warm_theirs = best_of(
                    lambda t=theirs, m=method, n=norm, w=w: ranx.fuse(t, method=m, norm=n, params=w)
                )
                print(
                    f"{form:>4} {method:>4} norm={norm!s:<8} warm: ranklens {warm_ours:6.2f} s, "
                    f"ranx {warm_theirs:6.2f} s, ratio {warm_theirs / warm_ours:5.2f}x | "
                    f"cold (build + fuse): ranklens {cold_ours:6.2f} s, ranx {cold_theirs:6.2f} s,"
                    f" ratio {cold_theirs / cold_ours:5.2f}x"
                )


if __name__ == "__main__":
    main()
