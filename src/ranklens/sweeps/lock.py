"""One process at a time in a sweep folder: ``sweep.lock``, held with an advisory lock of the
operating system (``flock`` on POSIX, ``msvcrt.locking`` on Windows) for as long as the
sweep runs, and holding the holder's pid, host and start time as one JSON line.

Two processes running one sweep in one ``cache=`` folder would each ask every query (the
logs they both append to would lose records); the second instead waits up to
``lock_timeout`` seconds for the first to finish (then reads what it finished from its logs)
or stops with a :class:`SweepLocked` error naming the holder. The operating system releases
the lock when its holder dies, however it dies (``kill -9`` included): the next sweep takes
it over and says whose it was (a :class:`~ranklens.errors.RanklensWarning`). The file is
never deleted (deleting a locked file lets two processes lock two files of one name); a
clean release empties it, so a non-empty file found unlocked is a holder that died."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import InputError, RanklensWarning

LOCK = "sweep.lock"
"""The lock file's name in a sweep folder."""

POLL = 0.05
"""Seconds between two attempts while waiting for another process's lock."""


class SweepLocked(InputError):
    """Another process is running a sweep in this folder (named in the message)."""


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    return True


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


def holder(path: Path) -> dict[str, Any] | None:
    """What the lock file says of its holder (None when empty or unreadable)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text:
        return None
    try:
        info = json.loads(text.splitlines()[0])
    except (json.JSONDecodeError, IndexError):
        return None
    return info if isinstance(info, dict) else None


def describe(info: dict[str, Any] | None) -> str:
    """``"pid 123 on host h (started 2026-01-01T10:00:00Z)"``, or what is known."""
    if not info:
        return "another process (its details are not written yet)"
    return (
        f"pid {info.get('pid', '?')} on host {info.get('host', '?')} "
        f"(started {info.get('started', '?')})"
    )


@contextlib.contextmanager
def locked(
    folder: Path | None,
    timeout: float = 0.0,
    say: Callable[[str], None] | None = None,
) -> Iterator[dict[str, Any] | None]:
    """Hold ``folder``'s sweep lock while the block runs (nothing when ``folder`` is
    None): wait up to ``timeout`` seconds for another holder, then stop with
    :class:`SweepLocked` naming it; a lock left by a holder that died is taken over and
    said. Yields what the previous, dead holder had written (or None)."""
    if folder is None:
        yield None
        return
    path = Path(folder) / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        waited = False
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                info = holder(path)
                raise SweepLocked(
                    f"sweep folder {folder} is in use by {describe(info)}"
                    + (f"; waited {timeout:g} s (lock_timeout=)" if timeout else "")
                    + ": a second sweep there would ask every query again and both would "
                    "write the same logs. Wait for it to finish "
                    "(execution=Execution(lock_timeout=SECONDS) waits; finished "
                    "configurations are then read from their logs), or use another "
                    "cache= folder (calls=ranklens.Calling(cache=...))"
                )
            if not waited and say is not None:
                say(f"waiting for {describe(holder(path))}, which holds {path}")
            waited = True
            time.sleep(POLL)
        dead = holder(path)
        if dead is not None:
            message = (
                f"{path}: took over the lock left by {describe(dead)}, which stopped without "
                "releasing it (killed?); its finished queries are in the logs and are not "
                "asked again"
            )
            warnings.warn(message, RanklensWarning, stacklevel=4)
            if say is not None:
                say(message)
        mine = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(mine) + "\n").encode("utf-8"))
        os.fsync(fd)
        try:
            yield dead
        finally:
            os.ftruncate(fd, 0)  # released cleanly: an empty file
            _unlock(fd)
    finally:
        os.close(fd)
