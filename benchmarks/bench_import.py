"""How long ``import ranklens`` takes, in fresh processes, and what it pulls in.

    uv run python benchmarks/bench_import.py            # 21 processes per row
    uv run python benchmarks/bench_import.py --n 5      # a quick check

Each row is a statement run in a fresh ``python -X importtime`` process, N times (after one
warm-up run that writes the bytecode caches, as an installed package has them):

* ``import ranklens``: the facade alone (every public name is imported lazily);
* ``ranklens.evaluate``: the facade and the floors one evaluation needs;
* ``ranklens.Monitor``, ``ranklens.compare``: a heavier room each;
* ``import ranklens.app.pytest_plugin``: what every pytest session of a user who installed
  ranklens loads (the plugin is a ``pytest11`` entry point).

each twice: with the optional extras importable (pyarrow, pandas, mlflow, ray,
opentelemetry: as installed here), and with them hidden by a meta-path blocker in the child
process (an install without the extras). The time of the statement is read in the child
(``perf_counter`` around it), so interpreter start-up is not in it; the whole process's
wall time is shown beside it. The median and the 10th-90th percentile range of the N runs
are printed, then, for ``import ranklens``, the modules it loads grouped by top-level
package with their cumulative import time (``-X importtime``'s, median over the runs).

Wall time on a shared machine varies with load: compare rows of one run, and take the
headline on a quiet machine.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict

EXTRAS = ("pyarrow", "pandas", "mlflow", "ray", "opentelemetry")

BLOCKER = """
import importlib.abc, sys
class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {extras!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden)", name=name)
        return None
sys.meta_path.insert(0, _Hide())
"""

CHILD = """
{blocker}
import sys, time
t0 = time.perf_counter()
{statement}
t1 = time.perf_counter()
print("ELAPSED", t1 - t0)
print("LOADED", len(sys.modules))
print("EXTRAS", ",".join(sorted(m for m in {extras!r} if m in sys.modules)))
"""

STATEMENTS = {
    "import ranklens": "import ranklens",
    "ranklens.evaluate": "import ranklens; ranklens.evaluate",
    "ranklens.compare": "import ranklens; ranklens.compare",
    "ranklens.Monitor": "import ranklens; ranklens.Monitor",
    "import ranklens.app.pytest_plugin": "import ranklens.app.pytest_plugin",
}

LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def run_once(statement: str, hide: bool) -> dict[str, object]:
    """One fresh process: the statement's time, the process's wall time, what it loaded and
    ``-X importtime``'s cumulative microseconds per top-level import."""
    blocker = BLOCKER.format(extras=EXTRAS) if hide else ""
    code = CHILD.format(blocker=blocker, statement=statement, extras=EXTRAS)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                          capture_output=True, text=True, check=True)  # fmt: skip
    wall = time.perf_counter() - start
    out = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    top: dict[str, int] = defaultdict(int)
    for m in LINE.finditer(done.stderr):
        cumulative, indent, name = int(m.group(2)), len(m.group(3)), m.group(4)
        if indent == 1:  # imported by the statement itself, not by another module
            top[name.split(".")[0]] += cumulative
    return {
        "elapsed": float(out["ELAPSED"]),
        "wall": wall,
        "loaded": int(out["LOADED"]),
        "extras": out.get("EXTRAS", "").strip(),
        "top": dict(top),
        "importtime": done.stderr,
    }


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def pulled_in(runs: list[dict[str, object]]) -> list[tuple[str, float, int]]:
    """Per top-level package, the median of its modules' summed self time (ms) and how
    many of its modules ``import ranklens`` loads."""
    self_us: dict[str, list[int]] = defaultdict(list)
    counts: dict[str, int] = {}
    for r in runs:
        per: dict[str, int] = defaultdict(int)
        n: dict[str, int] = defaultdict(int)
        for m in LINE.finditer(str(r["importtime"])):
            package = m.group(4).split(".")[0]
            per[package] += int(m.group(1))
            n[package] += 1
        for package, us in per.items():
            self_us[package].append(us)
        counts = dict(n)
    rows = [(p, statistics.median(v) / 1000, counts.get(p, 0)) for p, v in self_us.items()]
    return sorted(rows, key=lambda row: -row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=21, help="fresh processes per row")
    parser.add_argument("--only", choices=list(STATEMENTS), action="append",
                        help="rows to run (default: all)")  # fmt: skip
    args = parser.parse_args()
    if args.n < 1:
        parser.error("--n must be at least 1")
    rows = args.only or list(STATEMENTS)
    print(f"python {sys.version.split()[0]}, {args.n} fresh processes per row "
          "(median, 10th-90th percentile)\n")  # fmt: skip
    head = (f"{'statement':<36} {'extras':<8} {'statement ms':>13} {'p10-p90':>15} "
            f"{'process ms':>11} {'modules':>8}  extras loaded")  # fmt: skip
    print(head)
    print("-" * len(head))
    plain: list[dict[str, object]] = []
    for name in rows:
        for hide in (False, True):
            run_once(STATEMENTS[name], hide)  # warm-up: bytecode caches written
            runs = [run_once(STATEMENTS[name], hide) for _ in range(args.n)]
            if name == "import ranklens" and not hide:
                plain = runs
            ms = [float(str(r["elapsed"])) * 1000 for r in runs]
            wall = [float(str(r["wall"])) * 1000 for r in runs]
            spread = f"{percentile(ms, 0.1):.0f}-{percentile(ms, 0.9):.0f}"
            extras = str(runs[-1]["extras"]) or "none"
            print(f"{name:<36} {'hidden' if hide else 'present':<8} "
                  f"{statistics.median(ms):>13.1f} {spread:>15} {statistics.median(wall):>11.0f} "
                  f"{runs[-1]['loaded']:>8}  {extras}")  # fmt: skip
    if plain:
        print("\nwhat `import ranklens` loads, by top-level package (self time, median ms):")
        print(f"{'package':<24} {'ms':>8} {'modules':>8}")
        for package, ms_, n in pulled_in(plain)[:15]:
            print(f"{package:<24} {ms_:>8.1f} {n:>8}")


if __name__ == "__main__":
    main()
