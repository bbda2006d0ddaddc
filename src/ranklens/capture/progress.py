"""The runner's progress bar: throughput, errors, elapsed time and ETA (rich), silent off a
terminal."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from ..escape import rich_markup

if TYPE_CHECKING:
    import rich.progress


class Progress:
    """A rich progress bar with throughput, ETA and the error count; silent when not a
    terminal (or on request)."""

    def __init__(self, total: int, completed: int, name: str, enabled: bool | None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.errors = 0
        self.total, self.completed, self.name = total, completed, name
        self._bar: rich.progress.Progress | None = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            bar = self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TextColumn("[red]{task.fields[errors]} errors"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            bar.__enter__()
            self._task = bar.add_task(
                rich_markup(self.name), total=self.total, completed=self.completed, errors=0,
                rate="",
            )  # fmt: skip
            self._t0 = time.perf_counter()
            self._n = 0
        return self

    def advance(self, ok: bool) -> None:
        if not ok:
            self.errors += 1
        if self._bar is not None:
            self._n += 1
            rate = self._n / max(time.perf_counter() - self._t0, 1e-9)
            self._bar.update(self._task, advance=1, errors=self.errors, rate=f"{rate:,.1f} q/s")

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
