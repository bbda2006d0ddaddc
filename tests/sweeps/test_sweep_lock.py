"""One sweep folder, one process at a time (:mod:`ranklens.sweeps.lock`), with real
processes: a second process stops naming the holder or waits for it and then reads what it
finished (no query asked twice, no record lost); a holder killed with SIGKILL leaves a lock
the next sweep takes over and says so. Every wait is bounded; nothing depends on speed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest
from _sweep_case import as_settings

import ranklens
from ranklens.errors import RanklensWarning
from ranklens.sweeps.lock import LOCK, SweepLocked, holder, locked

BUILD = textwrap.dedent(
    """
    import os, time
    from pathlib import Path
    import ranklens

    DOCS = {f"d{i}": f"word{i} common" for i in range(1, 5)}
    DATASET = ranklens.Dataset({f"q{i}": f"word{i}" for i in range(1, 5)},
                               {f"q{i}": {f"d{i}": 1} for i in range(1, 5)}, name="tiny")

    def build(boost: int):
        def retrieve(query: str):
            with open(os.environ["RL_CALLS"], "a") as fh:
                fh.write(f"{os.getpid()} {boost} {query}\\n")
            Path(os.environ["RL_STARTED"]).touch()
            gate = os.environ["RL_GATE"]
            if gate != "-":
                for _ in range(1200):  # at most 60 s: the test opens the gate
                    if Path(gate).exists():
                        break
                    time.sleep(0.05)
            return [(d, float(query in t)) for d, t in DOCS.items()]
        return retrieve
    """
)
CHILD = textwrap.dedent(
    """
    import sys, warnings
    sys.path.insert(0, sys.argv[2])
    import ranklens
    from lockcase import DATASET, build

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranklens.sweep(build, {"boost": [0, 1]}, DATASET, ["recall@4"], cache=sys.argv[1],
                       concurrency=1, n_resamples=100, progress=False)
    """
)


@pytest.fixture
def case(tmp_path, monkeypatch):
    """The build shared by the child process and this one (one module, so one build
    identity in the logs), its files, and a function starting the child."""
    (tmp_path / "lockcase.py").write_text(BUILD)
    (tmp_path / "child.py").write_text(CHILD)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lockcase", raising=False)
    monkeypatch.setenv("RL_CALLS", str(tmp_path / "calls.txt"))
    monkeypatch.setenv("RL_STARTED", str(tmp_path / "started"))

    def start(gate: Path) -> subprocess.Popen:
        env = {**os.environ, "RL_GATE": str(gate)}
        return subprocess.Popen(
            [sys.executable, str(tmp_path / "child.py"), str(tmp_path / "cache"), str(tmp_path)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    monkeypatch.setenv("RL_GATE", "-")  # this process never waits in a retriever
    import lockcase

    return lockcase, start


def wait_for(path: Path, proc: subprocess.Popen) -> None:
    for _ in range(1200):  # at most 120 s
        if path.exists():
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    pytest.fail(f"{path} never appeared")


def run(lockcase, cache: Path, **kwargs):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "asked for k=", RanklensWarning)
        return ranklens.sweep(
            lockcase.build,
            {"boost": [0, 1]},
            lockcase.DATASET,
            ["recall@4"],
            **as_settings(cache=cache, concurrency=1, n_resamples=100, progress=False, **kwargs),
        )


def test_a_second_process_stops_naming_the_holder_or_waits_and_asks_nothing_again(tmp_path, case):
    lockcase, start = case
    gate = tmp_path / "gate"
    first = start(gate)
    opener = threading.Timer(0.5, gate.touch)
    try:
        wait_for(tmp_path / "started", first)  # the first holds the lock, mid-sweep
        info = holder(tmp_path / "cache" / LOCK)
        assert info is not None and info["pid"] == first.pid
        with pytest.raises(SweepLocked) as exc:
            run(lockcase, tmp_path / "cache")
        assert f"in use by pid {first.pid} on host" in str(exc.value)
        assert "lock_timeout=" in str(exc.value) and "another cache= folder" in str(exc.value)
        opener.start()  # the gate opens while this process waits for the lock
        waited = run(lockcase, tmp_path / "cache", lock_timeout=120)
        _, err = first.communicate(timeout=120)
    finally:
        gate.touch()
        opener.cancel()
        first.kill()
    assert first.returncode == 0, err
    assert [(r["resumed"], r["queries"]) for r in waited.rows] == [(True, 4), (True, 4)]
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert sorted(c.split(" ", 1)[1] for c in calls) == sorted(
        f"{b} word{i}" for b in (0, 1) for i in range(1, 5)
    )  # every query asked once, all by the first process
    assert {c.split()[0] for c in calls} == {str(first.pid)}
    assert (tmp_path / "cache" / LOCK).read_text() == ""  # released: empty


def test_a_killed_holders_lock_is_taken_over_and_said(tmp_path, case):
    lockcase, start = case
    first = start(tmp_path / "never")
    try:
        wait_for(tmp_path / "started", first)
    finally:
        first.kill()
        first.communicate(timeout=60)
    assert holder(tmp_path / "cache" / LOCK)["pid"] == first.pid  # left behind by the kill
    with pytest.warns(RanklensWarning, match=rf"took over the lock left by pid {first.pid} on"):
        res = run(lockcase, tmp_path / "cache")
    assert [r["queries"] for r in res.rows] == [4, 4]
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    mine = [c for c in calls if c.startswith(f"{os.getpid()} ")]
    assert len(mine) == 8  # the killed process finished no query: all asked here, once
    assert (tmp_path / "cache" / LOCK).read_text() == ""


def test_the_lock_excludes_within_one_process_and_waits_a_bounded_time(tmp_path):
    held = pytest.raises(SweepLocked, match=r"in use by pid \d+ on host .*waited 0.2 s")
    with locked(tmp_path), held, locked(tmp_path, timeout=0.2):
        pass
    with locked(tmp_path) as dead:  # released cleanly: nothing to take over
        assert dead is None
    with locked(None) as nothing:
        assert nothing is None
