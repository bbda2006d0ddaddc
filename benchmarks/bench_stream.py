"""Out-of-core evaluation (``ranklens.evaluate_file``) of a run file larger than a memory
budget, against the in-memory ``ranklens.evaluate``, in one run.

Writes a TREC run of Q queries x D documents (MS MARCO-shaped numeric ids over the
8.8M-passage space, scores descending, grouped by query as systems write them) and sparse
labels (1-3 relevant per query, two thirds of them retrieved; ``--labels N``: N judged per
query, a third of them retrieved, grades 0-3, as TREC-style deep judgments), then, each in
a fresh process with its peak memory (VmHWM):

* the whole file with ``evaluate_file`` under the budget (default 2 GB);
* a subset of the first ``--subset`` queries both ways, checked equal to the last bit, and
  timed per 10^7 rows;
* ``--formats``: the subset as a Parquet run (query_id, doc_id, score) through
  ``evaluate_file``, checked equal;
* ``--shuffled``: the subset's lines shuffled (queries scattered: partitioned by query
  hash first), checked equal;
* ``--ray``: the subset cut into 8 shard files at query boundaries, scored on a local Ray
  (``backend="ray"``, one task per shard, 2 CPUs) against ``evaluate_file`` in one process
  on the same shards, checked equal.

    uv run python benchmarks/bench_stream.py --queries 1000000 --depth 100   # ~4.6 GB file
    uv run python benchmarks/bench_stream.py --queries 100000 --subset 20000   # quick
    uv run python benchmarks/bench_stream.py --queries 1000000 --labels 30   # deep labels
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

METRICS = ["ndcg@10", "recall@100", "rr", "map", "P@10"]


def write_files(
    folder: Path, n_q: int, depth: int, subset: int, seed: int = 0, labels: int = 0
) -> None:
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, depth + 1)
    tail = np.char.add(np.char.add(" ", ranks.astype(str)), " ")
    with (
        (folder / "run.txt").open("wb") as run,
        (folder / "qrels.txt").open("wb") as qrels,
        (folder / "subset.txt").open("wb") as sub,
    ):
        step = 10_000
        for lo in range(0, n_q, step):
            n = min(step, n_q - lo)
            docs = rng.integers(0, 8_800_000, (n, depth))
            docs.sort(axis=1)  # distinct enough: duplicates are fixed below
            dup = np.zeros_like(docs, dtype=bool)
            dup[:, 1:] = docs[:, 1:] == docs[:, :-1]
            docs[dup] += 8_800_000  # still MS MARCO-shaped, now distinct per query
            rng.permuted(docs, axis=1, out=docs)
            qid = np.char.add("q", np.arange(lo, lo + n).astype(str))
            scores = np.round(100.0 - ranks / 7.0, 4).astype(str)
            lines = np.char.add(
                np.char.add(np.char.add(np.repeat(qid, depth), " Q0 "), docs.ravel().astype(str)),
                np.char.add(np.tile(tail, n), np.char.add(np.tile(scores, n), " bm25\n")),
            )
            blob = "".join(lines.tolist()).encode()
            run.write(blob)
            if lo < subset:
                sub.write(blob)
            if labels:  # deep: `labels` judged per query, a third retrieved, grades 0-3
                other = 9_000_000 + rng.integers(0, 10**7, (n, labels))  # distinct from the run
                other[:, : labels // 3] = docs[:, : labels // 3]
                other.sort(axis=1)
                keep = np.ones_like(other, dtype=bool)
                keep[:, 1:] = other[:, 1:] != other[:, :-1]
                grades = rng.integers(0, 4, (n, labels))
                qs = np.repeat(qid, labels)[keep.ravel()].tolist()
                ds, gs = other[keep].tolist(), grades[keep].tolist()
                qrels.write("".join(f"{q} 0 {d} {g}\n" for q, d, g in zip(qs, ds, gs)).encode())
                continue
            rel = rng.integers(1, 4, n)
            picked = []
            for i in range(n):
                k = int(rel[i])
                found = docs[i, rng.choice(depth, k - k // 3, replace=False)].tolist()
                picked += [(qid[i], d) for d in found] + [
                    (qid[i], 9_000_000 + int(x)) for x in rng.integers(0, 10**6, k // 3)
                ]
            qrels.write("".join(f"{q} 0 {d} 1\n" for q, d in picked).encode())


def measure(code: str, folder: Path, before: str = "") -> tuple[float, int, str]:
    script = textwrap.dedent(f"""
        import json, time, ranklens
        {before}
        qrels, run, sub = {str(folder / "qrels.txt")!r}, {str(folder / "run.txt")!r}, {str(folder / "subset.txt")!r}
        t = time.perf_counter()
        ev = {code}
        t = time.perf_counter() - t
        hwm = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0]
        print(json.dumps([t, int(hwm.split()[1]) * 1024, dict(ev.aggregate), ev.query_ids[:1],
                          [list(map(float, ev.per_query[m][:50])) for m in ev.names]]))
    """)  # noqa: E501
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    import json

    t, peak, *_ = json.loads(out.stdout)
    return t, peak, out.stdout


def shard_files(path: Path, folder: Path, n: int) -> Path:
    """``path``'s lines in ``n`` files, each cut where a query's lines end."""
    folder.mkdir()
    data = path.read_bytes()
    at = 0
    for i in range(n):
        end = len(data) if i == n - 1 else data.find(b"\n", (i + 1) * len(data) // n) + 1
        qid = data[data.rfind(b"\n", 0, end - 1) + 1 :].split(b" ", 1)[0]
        while end < len(data) and data[end:].split(b" ", 1)[0] == qid:  # whole queries
            end = data.find(b"\n", end) + 1
        (folder / f"part-{i:02d}.run").write_bytes(data[at:end])
        at = end
    return folder


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=1_000_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--subset", type=int, default=100_000)
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--dir", help="where the files go (default: a temporary folder)")
    ap.add_argument("--data", help="a folder to write the files to once and read them from")
    ap.add_argument("--formats", action="store_true", help="also the subset as Parquet")
    ap.add_argument("--ray", action="store_true", help="also the subset's shards on Ray")
    ap.add_argument("--shuffled", action="store_true", help="also the subset's lines shuffled")
    ap.add_argument("--skip-whole", action="store_true", help="only the subset")
    ap.add_argument(
        "--labels", type=int, default=0, help="judged per query (default: 1-3 relevant)"
    )
    args = ap.parse_args()
    from ranklens.evaluation.stream import parse_bytes

    budget = parse_bytes(args.memory)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(args.data or tmp)
        t0 = time.perf_counter()
        if not (folder / "run.txt").exists():  # --data: files written by an earlier run
            folder.mkdir(parents=True, exist_ok=True)
            write_files(folder, args.queries, args.depth, args.subset, labels=args.labels)
        size = (folder / "run.txt").stat().st_size
        rows = args.queries * args.depth
        took = time.perf_counter() - t0
        q_size = (folder / "qrels.txt").stat().st_size
        print(f"{args.queries:,} queries x {args.depth} ({rows:,} rows, {size / 1e9:.2f} GB), "
              f"labels {q_size / 1e9:.2f} GB ({args.labels or '1-3'} per query), written in "
              f"{took:.0f} s; budget {budget / 2**30:.2f} GiB")  # fmt: skip
        sub_rows = min(args.subset, args.queries) * args.depth
        t_mem, p_mem, o_mem = measure(
            f"ranklens.evaluate(qrels, sub, {METRICS!r}, memory=float('inf'))", folder
        )
        t_str, p_str, o_str = measure(
            f"ranklens.evaluate_file(qrels, sub, {METRICS!r}, memory={budget})", folder
        )
        import json

        a, b = json.loads(o_mem), json.loads(o_str)
        assert a[2] == b[2] and a[4] == b[4], "the streamed subset differs from evaluate"
        per = 1e7 / sub_rows
        print(f"subset {sub_rows:,} rows: in memory {t_mem:.1f} s ({t_mem * per:.1f} s per 10^7 "
              f"rows), peak {p_mem / 2**20:.0f} MiB; evaluate_file {t_str:.1f} s "
              f"({t_str * per:.1f} s per 10^7 rows), peak {p_str / 2**20:.0f} MiB; equal to the "
              f"last bit; time ratio streamed/in-memory {t_str / t_mem:.2f}")  # fmt: skip

        def streamed(path: Path) -> tuple[float, int]:
            """``evaluate_file`` on another form of the subset, checked equal to it."""
            t, peak, out = measure(
                f"ranklens.evaluate_file(qrels, {str(path)!r}, {METRICS!r}, memory={budget})",
                folder,
            )
            assert json.loads(out)[2] == a[2], f"{path.name} differs from the subset"
            return t, peak

        if args.formats:
            from ranklens.io import read_run, write_run

            write_run(read_run(folder / "subset.txt"), folder / "subset.parquet")
            t_pq, p_pq = streamed(folder / "subset.parquet")
            print(f"subset as Parquet ({(folder / 'subset.parquet').stat().st_size / 1e6:.0f} "
                  f"MB): evaluate_file {t_pq:.1f} s, peak {p_pq / 2**20:.0f} MiB; equal; "
                  f"Parquet/TREC time {t_pq / t_str:.2f}")  # fmt: skip
        if args.shuffled:
            lines = np.array((folder / "subset.txt").read_bytes().splitlines(keepends=True))
            np.random.default_rng(1).shuffle(lines)
            (folder / "shuffled.txt").write_bytes(b"".join(lines.tolist()))
            del lines
            t_sh, p_sh = streamed(folder / "shuffled.txt")
            print(f"subset shuffled: evaluate_file {t_sh:.1f} s, peak {p_sh / 2**20:.0f} MiB; "
                  f"equal; shuffled/grouped time {t_sh / t_str:.2f}")  # fmt: skip
        if args.ray:
            shards = shard_files(folder / "subset.txt", folder / "shards", 8)
            t_one, _ = streamed(shards)
            t_ray, p_ray, o_ray = measure(
                f"ranklens.evaluate_file(qrels, {str(shards)!r}, {METRICS!r}, memory={budget}, "
                "backend='ray')", folder, before="from ranklens.evaluation.on_ray import connect; "
                "ray = connect(None, 2); ray.get(ray.remote(lambda: 0).remote())",
            )  # fmt: skip
            assert json.loads(o_ray)[2] == a[2], "Ray differs"
            print(f"8 shards: one process {t_one:.1f} s; on a local Ray (2 CPUs, started "
                  f"before) {t_ray:.1f} s, driver peak {p_ray / 2**20:.0f} MiB; equal; "
                  f"speed-up {t_one / t_ray:.2f}x")  # fmt: skip
        if args.skip_whole:
            return
        t_all, p_all, o_all = measure(
            f"ranklens.evaluate_file(qrels, run, {METRICS!r}, memory={budget})", folder
        )
        print(f"whole file: evaluate_file {t_all:.1f} s ({t_all * 1e7 / rows:.1f} s per 10^7 "
              f"rows), peak {p_all / 2**20:.0f} MiB (budget {budget / 2**20:.0f} MiB)")  # fmt: skip
        print("means:", json.loads(o_all)[2])


if __name__ == "__main__":
    main()
