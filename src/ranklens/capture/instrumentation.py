"""The one helper every framework hook returns: :class:`Instrumentation`, the attached
hook(s) of a :class:`~ranklens.Recorder`, removed by :meth:`~Instrumentation.detach` or by
leaving a ``with`` block::

    with ranklens_llamaindex.instrument(Recorder(key="parent")) as rec:
        query_engine.query("...")
    rec.evaluate(dataset, ["ndcg@10"])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .recorder import Recorder


def recorder_or_new(recorder: Recorder | None, **recorder_kwargs: Any) -> Recorder:
    """``recorder`` itself when given (even when it is empty), else a new one."""
    if recorder is not None:
        if recorder_kwargs:
            raise TypeError("pass a Recorder or Recorder keyword arguments, not both")
        return recorder
    return Recorder(**recorder_kwargs)


class Instrumentation:
    """Hooks attached to a framework for ``recorder``: ``detach()`` (idempotent) calls the
    framework package's ``detach`` function once; a context manager yielding the
    recorder."""

    def __init__(self, recorder: Recorder, detach: Callable[[], None], **handles: Any):
        self.recorder = recorder
        self._detach: Callable[[], None] | None = detach
        for name, value in handles.items():  # the framework objects, for inspection
            setattr(self, name, value)

    @property
    def attached(self) -> bool:
        return self._detach is not None

    def detach(self) -> None:
        """Remove the hooks (a second call does nothing)."""
        fn, self._detach = self._detach, None
        if fn is not None:
            fn()

    def __enter__(self) -> Recorder:
        return self.recorder

    def __exit__(self, *exc: Any) -> None:
        self.detach()

    def __repr__(self) -> str:
        state = "attached" if self.attached else "detached"
        return f"Instrumentation({state}, {self.recorder!r})"
