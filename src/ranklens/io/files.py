"""Opening input files with errors that name them."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO

from ..errors import InputError


def open_text(path: str | Path, newline: str | None = None) -> IO[str]:
    """Open a UTF-8 text file (``.gz`` transparently); a missing or unreadable file is an
    :class:`~ranklens.errors.InputError` naming it."""
    p = Path(path)
    try:
        if p.name.endswith(".gz"):
            return gzip.open(p, "rt", encoding="utf-8", newline=newline)
        return open(p, encoding="utf-8", newline=newline)
    except OSError as exc:
        raise InputError(f"{p}: cannot read the file ({exc.strerror or exc})") from None


def read_text(path: str | Path) -> str:
    """The whole text of a file (see :func:`open_text`)."""
    with open_text(path) as fh:
        return fh.read()
