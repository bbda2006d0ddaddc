"""The one promise every evaluation path keeps (API, CLI, compare, gate, streaming, Ray):
ranklens never returns a mean over nothing. A run that answers no labelled query, and a
set left empty by a convention that drops queries without a relevant document, are errors
(:class:`~ranklens.errors.NoSharedQueryError`) that say which it is, show ids of both
sides and name the likely fix."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import NoSharedQueryError

EXAMPLES = 3
"""How many ids of each side an error shows."""


def no_shared_query(
    run_name: str,
    run_ids: Sequence[str],
    label_ids: Sequence[str],
    failed: int = 0,
) -> NoSharedQueryError:
    """The error for a run that shares no query id with its labels (``run_ids``: the
    run's queries; ``label_ids``: the labelled ones; ``failed``: labelled queries whose
    retrieval failed, which would have made the run count)."""
    run_ids = [str(q) for q in run_ids]
    label_ids = [str(q) for q in label_ids]
    if not run_ids:
        head = f"run {run_name!r} is empty: it answers none of the {len(label_ids)} labelled "
        head += f"queries ({_examples(label_ids)})"
        return NoSharedQueryError(
            f"no query to evaluate: {head}; a mean over no answered query would be a "
            "meaningless 0. Was the run produced for these labels?"
        )
    hint = id_form_hint(run_ids, label_ids)
    return NoSharedQueryError(
        f"no query to evaluate: run {run_name!r} shares no query id with the labels: "
        f"{_none_of(len(run_ids))} ({_examples(run_ids)}) {_is(len(run_ids))} among the "
        f"{len(label_ids)} labelled ones ({_examples(label_ids)}); a mean over no answered "
        "query would be a meaningless 0. "
        + (hint or "Are these the labels of this run (two datasets mixed up, or the labels "
           "and the run given the other way round)?")
    )  # fmt: skip


def no_relevant_query(
    run_name: str, skipped: Sequence[str], level: int, convention: str
) -> NoSharedQueryError:
    """The error when every query the run answers has no relevant document at ``level``
    and the convention leaves such queries out."""
    err = NoSharedQueryError(
        f"no query to evaluate: {_none_of(len(skipped), 'labelled')} that run "
        f"{run_name!r} answers {'has a' if len(skipped) > 1 else 'has no'} relevant "
        f"document (grade >= {level}; e.g. "
        f"{_examples(skipped)}), and the {convention} convention leaves such queries out. "
        "Check the grades (relevance_level=, or labels read from the wrong column), or "
        "evaluate with no_relevant='zero' to score them 0"
    )
    # the queries left out, read back by the streamed path (not declared on the class)
    err.no_relevant_ids = [str(q) for q in skipped]
    return err


def _none_of(n: int, kind: str = "") -> str:
    """``"none of its 3 queries"``, ``"its one query"``."""
    kind = f"{kind} " if kind else ""
    return f"the one {kind}query" if n == 1 else f"none of the {n} {kind}queries"


def _is(n: int) -> str:
    return "is not" if n == 1 else "is"


def _examples(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(q) for q in list(ids)[:EXAMPLES])
    more = len(ids) - EXAMPLES
    return f"e.g. {shown}, ..." if more > 0 else shown


_PREFIX = re.compile(r"^[^0-9]*0*")


def _core(qid: str) -> str:
    """An id without case, surrounding space, a leading non-digit prefix or leading zeros
    (``"Q-007"`` -> ``"7"``): to spot ids that name the same queries in another form."""
    s = qid.strip().lower()
    core = _PREFIX.sub("", s)
    return core or s


def id_form_hint(run_ids: Sequence[str], label_ids: Sequence[str]) -> str:
    """A sentence when the two sides' ids match once case, spaces, a prefix or leading
    zeros are ignored (``"q1"`` against ``"1"``), else ``""``."""
    labels = {_core(q): q for q in label_ids}
    pairs = [(q, labels[_core(q)]) for q in run_ids if _core(q) in labels]
    if not pairs:
        return ""
    r, lab = pairs[0]
    return (
        f"{len(pairs)} of the run's ids match a label's id once case, spaces, a prefix and "
        f"leading zeros are ignored (run {r!r}, labels {lab!r}): write the run with the "
        "labels' query ids"
    )
