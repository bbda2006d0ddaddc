"""The synthesize and judge loops resume after the process is killed (SIGKILL) without
asking the generator or the judge again for anything the log holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _nolabels_case import Recording, word_overlap

import ranklens
from ranklens.app.demo_data import load

HERE = Path(__file__).resolve().parents[1]  # the shared cases

SYNTH = """
import sys; sys.path.insert(0, {here!r})
from _nolabels_case import Recording
import ranklens
from ranklens.app.demo_data import load
ranklens.synthesize(load(), Recording({calls!r}, 0.03, "generator"), cache={log!r},
                    concurrency=2, config={{"generator": "offline, recorded"}}, progress=False)
"""

ESTIMATE = """
import sys, json; sys.path.insert(0, {here!r})
from _nolabels_case import Recording
import ranklens
from ranklens.app.demo_data import load
runs = json.load(open({runs!r}))
ranklens.estimate(load(), runs, judge=Recording({calls!r}, 0.01, "judge"), human=30,
                  cache={log!r}, concurrency=2, config={{"judge": "recorded"}}, progress=False)
"""


def kill_when(script: str, log: Path, records: int) -> None:
    """Run ``script`` in a new Python and SIGKILL it once ``log`` holds ``records`` lines
    after its header."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if log.exists() and log.read_text().count("\n") >= records + 1:
                break
            if proc.poll() is not None:
                pytest.fail(f"finished before the kill: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.01)
        else:
            pytest.fail("the log never grew")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def logged(log: Path) -> set[str]:
    out = set()
    for line in log.read_text().splitlines()[1:]:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:  # a line torn by the kill
            continue
        if rec.get("error") is None:
            out.add(rec["query_id"])
    return out


def asked(calls: Path) -> list[list[str]]:
    return [json.loads(x) for x in calls.read_text().splitlines()] if calls.exists() else []


def test_synthesize_resumes_after_a_kill(tmp_path):
    log, first, second = tmp_path / "gen.jsonl", tmp_path / "calls1", tmp_path / "calls2"
    kill_when(SYNTH.format(here=str(HERE), calls=str(first), log=str(log)), log, 12)
    done = logged(log)
    assert 12 <= len(done) < 150
    demo = load()
    s = ranklens.synthesize(
        demo,
        Recording(str(second), 0.0, "generator"),
        cache=log,
        config={"generator": "offline, recorded"},
        progress=False,
    )
    texts_done = {demo.corpus[json.loads(k)[0]]["text"] for k in done}
    again = [c[0] for c in asked(second)]
    assert not set(again) & texts_done  # nothing the log holds is asked twice
    assert len(again) == len(set(again)) == 150 - len(done)
    assert s.info["resumed"] == len(done) and s.info["calls"] == len(again)
    whole = ranklens.synthesize(demo, ranklens.OfflineGenerator(), progress=False)
    assert s.dataset.queries == whole.dataset.queries  # the same set as an unbroken run


def test_judging_resumes_after_a_kill(tmp_path):
    demo = load()
    retrieve = word_overlap(demo.corpus)
    runs = {"overlap": {q: dict(retrieve(t)) for q, t in demo.queries.items()}}
    (tmp_path / "runs.json").write_text(json.dumps(runs))
    log, first, second = tmp_path / "judge.jsonl", tmp_path / "calls1", tmp_path / "calls2"
    script = ESTIMATE.format(
        here=str(HERE), runs=str(tmp_path / "runs.json"), calls=str(first), log=str(log)
    )
    kill_when(script, log, 40)
    done = logged(log)
    e = ranklens.estimate(
        demo,
        runs,
        judge=Recording(str(second), 0.0, "judge"),
        human=30,
        cache=log,
        config={"judge": "recorded"},
        progress=False,
    )
    pairs_done = {tuple(json.loads(k)) for k in done}
    by_text = {(demo.queries[q], demo.corpus[d]["text"]): (q, d) for q, d in pairs_done}
    again = [tuple(c) for c in asked(second)]
    assert not [c for c in again if c in by_text]
    total = e.info["judge_calls_resumed"] + len(again)
    assert e.info["judge_calls_resumed"] == len(done) and len(set(again)) == len(again)
    assert total == sum(len(v) for v in runs["overlap"].values() if v)
    assert "read from the log" in " ".join(e.notes())
