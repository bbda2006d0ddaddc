"""What the runner says once a run ends (:func:`warn_at_end`), each a warning with the
numbers and the fix: queries that failed; a ``key=`` that named no hit; chunks merged into
fewer than ``k`` documents; a retriever that never returned ``k`` hits. Each goes to the
``ranklens`` logger too."""

from __future__ import annotations

import logging
import statistics
import warnings
from collections import Counter
from typing import Any

from ..errors import RanklensWarning, RunFailuresWarning
from ..judging.options import failure_note, failure_summary
from .hits import key_name

log = logging.getLogger("ranklens")


def _say(message: str, category: type[Warning] = RanklensWarning, depth: int = 5) -> None:
    """Log and warn ``message``, the warning shown at the runner's caller ``depth`` frames
    up (``_say``, ``warn_at_end``, the runner, its declaration's check, the caller; 4 for
    the coroutine, which its caller awaits)."""
    log.warning(message)
    warnings.warn(message, category, stacklevel=depth)


def warn_at_end(
    result: Any,
    k: int | None,
    key: Any,
    fetch_k: int | None = None,
    takes_k: bool | None = None,
    depth: int = 5,
) -> None:
    """The end-of-run warnings of ``result`` (a :class:`~ranklens.RunResult`) for a run
    asked for ``k`` documents per query with ``key`` (``takes_k``: whether the retriever
    is asked for a number of hits, so ``fetch_k`` can raise it)."""
    failed = {r.query_id: r.error for r in result.records if not r.ok}
    if failed:
        msg = f"run {result.name!r}: " + failure_note(failure_summary(failed), "no hits")
        _say(msg, RunFailuresWarning, depth)
    ok = [r for r in result.records if r.ok]
    if not ok:
        return
    raw = [len(r.hits) for r in ok]
    mapped = [len(r.doc_ids) for r in ok]
    unmapped = sum(r.unmapped for r in ok)
    if unmapped and unmapped >= sum(raw) / 2:
        _say(unmapped_message(result.name, key, ok, unmapped, sum(raw)), depth=depth)
        return
    if k is None:
        return
    short = [n for n, r in zip(mapped, ok) if n < k and r.duplicates]
    if short:
        top_k = _top_k_setting(result.config.get("retriever") or {})
        _say(
            merged_message(result.name, key, k, len(ok), short, fetch_k, takes_k, top_k),
            depth=depth,
        )
    elif max(raw) < k:
        _say(
            f"run {result.name!r}: asked for k={k} but the retriever returned at most "
            f"{max(raw)} hits per query; is it configured with a smaller top-k? (metrics "
            f"at cutoffs above {max(raw)} see only what it returned)",
            depth=depth,
        )


def unmapped_message(name: str, key: Any, records: list[Any], unmapped: int, total: int) -> str:
    """``key=`` gave no id for most hits: how many, and the fields the hits do carry."""
    fields: Counter[str] = Counter()
    for r in records:
        for h in r.hits:
            if h.get("id") is not None:
                fields["'id'"] += 1
            if h.get("parent") is not None:
                fields["'parent'"] += 1
            for f in h.get("metadata") or {}:
                fields[f"'meta.{f}'"] += 1
    have = ", ".join(f for f, _ in fields.most_common(8)) or "none (no id, parent or metadata)"
    spans = (
        " Span labels are not affected: they judge every chunk by its source document and "
        "place (result.chunk_run())."
        if fields["'parent'"]
        else ""
    )
    return (
        f"run {name!r}: key={key_name(key)!r} gave no document id for {unmapped:,} of "
        f"{total:,} hits, so they were dropped and the queries are scored on what is left "
        f"(the retriever did return them). The hits carry: {have}; pass one of those as "
        f"key= (see docs/hit-identity.md).{spans}"
    )


def merged_message(
    name: str,
    key: Any,
    k: int,
    n_queries: int,
    short: list[int],
    fetch_k: int | None,
    takes_k: bool | None = None,
    top_k: tuple[str, Any] | None = None,
) -> str:
    """Chunks of one document merged by ``key=``: queries left with fewer than ``k``
    documents, and how to ask the retriever for more chunks (``top_k``: the retriever's
    own setting, as its configuration names it)."""
    more = max(2 * int(fetch_k or (top_k[1] if top_k and top_k[1] else k)), k + 10)
    if takes_k is False:
        setting = top_k[0] if top_k else "top-k"
        fix = (
            f"raise the retriever's own {setting} (e.g. {setting}={more}; ranklens keeps the "
            f"first {k} documents)"
        )
    else:
        fix = (
            f"ranklens.run_retriever(..., k={k}, fetch_k={more}) (the first {k} documents are kept)"
        )
    return (
        f"run {name!r}: key={key_name(key)!r} merged chunks of one document, so "
        f"{len(short):,} of {n_queries:,} queries have fewer than k={k} documents (as few as "
        f"{min(short)}; median {statistics.median(short):g}): metrics at cutoff {k} score "
        f"fewer documents than asked for. Ask the retriever for more chunks than documents: "
        f"{fix}"
    )


def _top_k_setting(config: dict[str, Any]) -> tuple[str, Any] | None:
    """The retriever's own top-k setting and value, as its configuration names it."""
    for field in ("similarity_top_k", "top_k", "k"):
        if field in config:
            return field, config[field]
    return None
