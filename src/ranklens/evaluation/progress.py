"""A progress bar over the bytes of run files read (rich, on standard error), silent off a
terminal or on request."""

from __future__ import annotations

import sys
from typing import Any

from ..escape import rich_markup


class ByteProgress:
    """``with ByteProgress(total, name, enabled) as bar: bar.advance(n)``; ``enabled=None``
    shows it when standard error is a terminal."""

    def __init__(self, total: int, name: str, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else bool(enabled)
        self.total, self.name = max(int(total), 1), name
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> ByteProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(),
                TransferSpeedColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                console=Console(stderr=True), transient=False,
            )  # fmt: skip
            self._bar.start()
            self._task = self._bar.add_task(
                f"evaluating {rich_markup(self.name)}", total=self.total
            )
        return self

    def advance(self, nbytes: int) -> None:
        """``nbytes`` more of the files read and scored."""
        if self._bar is not None:
            self._bar.advance(self._task, nbytes)

    def restart(self, description: str) -> None:
        """Start again from zero under a new description (a second pass over the files)."""
        if self._bar is not None:
            self._bar.reset(
                self._task, description=f"{rich_markup(description)}: {rich_markup(self.name)}"
            )

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()
