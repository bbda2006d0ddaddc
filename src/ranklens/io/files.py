"""Opening input files with errors that name them.

Every reader goes through these helpers, so a missing file, a directory, a corrupt or
truncated ``.gz`` and bytes that are not UTF-8 are each an
:class:`~ranklens.errors.InputError` naming the file (and, for text, the line) rather than
a traceback from ``gzip``, ``zlib`` or the codec.
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

from ..errors import InputError

BOM = codecs.BOM_UTF8
"""The UTF-8 byte order mark, skipped at the start of every text file."""

_READ_ERRORS = (OSError, EOFError, zlib.error)


def _check_file(p: Path) -> None:
    if p.is_dir():
        raise InputError(f"{p}: is a directory, not a file")


@contextlib.contextmanager
def read_errors(p: Path) -> Iterator[None]:
    """Turn what can go wrong while reading ``p`` into an InputError naming it."""
    try:
        yield
    except InputError:
        raise
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except gzip.BadGzipFile as exc:
        raise InputError(f"{p}: not a valid gzip file ({exc})") from None
    except EOFError:
        raise InputError(f"{p}: the compressed file is truncated") from None
    except zlib.error as exc:
        raise InputError(f"{p}: corrupt compressed data ({exc})") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read the file ({exc.strerror or exc})") from None


def _open(p: Path, mode: str, **text: Any) -> IO[Any]:
    """``p`` opened in ``mode`` (``"rb"`` or ``"rt"``), decompressed when it ends in
    ``.gz``; a missing file or a directory is an InputError naming it."""
    _check_file(p)
    with read_errors(p):
        if p.name.endswith(".gz"):
            # gzip.open gives a GzipFile ("rb") or a TextIOWrapper ("rt"): an IO either way
            return cast("IO[Any]", gzip.open(p, mode, **text))
        return open(p, mode, **text)


def open_binary(path: str | Path) -> IO[bytes]:
    """``path`` opened for reading bytes (``.gz`` decompressed as read); a missing file or
    a directory is an InputError naming it."""
    return _open(Path(path), "rb")


def read_bytes(path: str | Path) -> bytes:
    """The whole content of a file, decompressed when it ends in ``.gz``."""
    p = Path(path)
    with _open(p, "rb") as fh, read_errors(p):
        data: bytes = fh.read()
        return data


def open_text(path: str | Path, newline: str | None = None) -> IO[str]:
    """Open a UTF-8 text file (``.gz`` transparently; a leading BOM is skipped); a missing or
    unreadable file is an InputError naming it. Iterate it inside :func:`read_errors` so
    that undecodable bytes and a corrupt ``.gz`` are named too (as :func:`text_lines`
    does)."""
    return _open(Path(path), "rt", encoding="utf-8-sig", newline=newline)


def text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each line of a text file (``.gz`` transparently, a BOM
    skipped); a line that is not UTF-8 is an InputError naming the file and line."""
    p = Path(path)
    with _open(p, "rb") as fh, read_errors(p):
        for lineno, raw in enumerate(fh, 1):
            if lineno == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{p}:{lineno}: not UTF-8 text ({exc.reason})") from None
            yield lineno, line


def read_text(path: str | Path) -> str:
    """The whole text of a file (see :func:`open_text`)."""
    p = Path(path)
    with open_text(p) as fh, read_errors(p):
        return fh.read()
