"""The scripts in examples/ run and print what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_replace_trec_eval_example():
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "replace_trec_eval.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names == [
        "map",
        "P_5",
        "P_10",
        "ndcg_cut_10",
        "recip_rank",
        "bpref",
        "recall_100",
        "success_10",
    ]
    assert all(line.split("\t")[1] == "all" for line in out.splitlines())
