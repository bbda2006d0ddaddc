"""Exceptions raised by ranklens.

Every error that comes from bad input names what is at fault: the query, the document,
the file and line, or the field.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class RanklensError(ValueError):
    """Base class of every error ranklens raises on bad input."""


class InputError(RanklensError):
    """Malformed qrels, run or dataset input (names the file/line, query, document or field)."""


class NoSharedQueryError(InputError):
    """Nothing to evaluate: the run answers no labelled query (or, under a convention that
    leaves out queries without a relevant document, no such query is left);
    ``no_relevant_ids``: the queries left out for having no relevant document."""

    no_relevant_ids: list[str]


class DuplicateDocumentError(InputError):
    """A document appears twice in one query of a run or of the qrels."""


class MetricNameError(RanklensError, KeyError):
    """A metric name that ranklens cannot parse; the message lists the closest valid names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownOptionError(InputError, TypeError):
    """A keyword option that the function does not take (a ``TypeError``, as Python's own);
    the message names the closest valid option."""


def suggest(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'relevance_level'?"`` when a choice is close to ``word`` (a
    misspelling), else ``""``.

    >>> suggest("relevance_levle", ["relevance_level", "ties"])
    "; did you mean 'relevance_level'?"
    """
    near = closest(word, choices)
    return f"; did you mean {near!r}?" if near else ""


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word`` when one is close (difflib's ratio >= 0.6, ignoring
    case), else None."""
    pool = {str(c).lower(): str(c) for c in choices}
    close = difflib.get_close_matches(str(word).lower(), list(pool), n=1, cutoff=0.6)
    return pool[close[0]] if close else None


class RanklensWarning(UserWarning):
    """Something ranklens did or saw that may change what a number means (shown once)."""


class UnseenStagesWarning(RanklensWarning):
    """Part of a pipeline's stages is out of its framework hook's sight (a step that emits
    no span or callback, a component running a pipeline of its own); the message names the
    step and what to pass instead. Shown once per hook and step."""


class RunFailuresWarning(RanklensWarning):
    """Some queries of a run failed; their records say why (``RunResult.failed``)."""


class RunInterrupted(KeyboardInterrupt):
    """``ranklens.run_retriever`` was interrupted (Ctrl-C); the message says how many queries were
    saved and how to resume."""


class MissingDependencyError(ImportError):
    """An optional package is needed; the message names the extra that installs it."""


def require(module: str, extra: str, purpose: str) -> object:
    """Import ``module`` or raise :class:`MissingDependencyError` saying which extra
    installs it (``pip install 'ranklens[pandas]'``)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(
            f"{purpose} needs the optional package {module.split('.')[0]!r}: "
            f"pip install 'ranklens[{extra}]' (or uv add 'ranklens[{extra}]')"
        ) from None
