"""The Recorder's spill file (:class:`SpillFile`): where records beyond its memory bound go.

* A ``spill=`` path is claimed by one live recorder of the process (a second one is
  refused) and rewritten from its start: records of an earlier recorder there are never
  read back as this one's. Without a path, a unique temporary file is made on the first
  spill and deleted by :meth:`SpillFile.close`, when the recorder is garbage-collected and
  at interpreter exit.
* Writing never raises into the app: when the file cannot be written (disk full, a removed
  directory) the records are dropped and counted (``dropped``), one warning is logged, and
  memory stays bounded.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from .records import Retrieval

_IN_USE: set[str] = set()
"""Spill paths claimed by live recorders of this process."""

log = logging.getLogger("ranklens")


def _release(info: dict[str, Any]) -> None:
    path = info.get("path")
    if path is None:
        return
    _IN_USE.discard(str(Path(path).resolve()))
    if info.get("owns"):
        with contextlib.suppress(OSError):
            Path(path).unlink()


class SpillFile:
    """Append-only storage of JSON records for one owner (see the module docstring)."""

    def __init__(self, owner: object, path: str | Path | None):
        self.path = None if path is None else Path(path)
        if self.path is not None:
            key = str(self.path.resolve())
            if key in _IN_USE:
                raise InputError(
                    f"spill file {self.path} is in use by another Recorder; give each its own"
                )
            _IN_USE.add(key)
        self.lines = 0  # records written and readable
        self.dropped = 0  # records lost to write errors
        self._bytes = 0
        self._warned = False
        self._info: dict[str, Any] = {"path": self.path, "owns": False}
        self._finalizer = weakref.finalize(owner, _release, self._info)

    def write(self, lines: list[str]) -> bool:
        """Append JSON lines; False (and counted as dropped) when they cannot be written."""
        try:
            if self.path is None:
                fd, name = tempfile.mkstemp(prefix="ranklens-recorder-", suffix=".jsonl")
                os.close(fd)
                self.path = Path(name)
                self._info.update(path=self.path, owns=True)
            data = "".join(line + "\n" for line in lines).encode("utf-8")
            with open(self.path, "r+b" if self._bytes else "wb") as fh:
                fh.seek(self._bytes)
                fh.write(data)
                fh.truncate()
            self._bytes += len(data)
            self.lines += len(lines)
            return True
        except Exception as exc:  # disk full, a removed directory...
            self.dropped += len(lines)
            if not self._warned:
                self._warned = True
                log.warning(
                    "ranklens Recorder: cannot write the spill file %s (%s); older records "
                    "are dropped and counted instead", self.path, exc,
                )  # fmt: skip
            return False

    def read(self, n: int) -> Iterator[Retrieval]:
        """The first ``n`` records written."""
        if n == 0 or self.path is None:
            return
        with open(self.path, encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if i >= n:
                    break
                yield Retrieval.from_dict(json.loads(line))

    def reset(self) -> None:
        """Forget what was written (the next write starts the file again)."""
        self.lines = self.dropped = self._bytes = 0

    def close(self) -> None:
        """Release the path; delete it when it is a temporary file."""
        self._finalizer()
