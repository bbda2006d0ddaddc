"""The command line's freshness options, shared by ``evaluate``, ``compare`` and ``gate``:
``--versions FILE`` (a JSONL or CSV table of document versions, or a corpus whose
documents' metadata carry the times), ``--time-field``/``--group-field`` (the names the
file uses), ``--as-of TIME`` (one time for every query; default: the newest version) and
``--freshness RULE`` (how an outdated version is judged: zero, keep, demote, half,
demote=2, factor=0.3, half_life=90d)."""

from __future__ import annotations

import argparse
from typing import Any

from ..declared import declare, path, text
from ..errors import InputError

FRESHNESS_OPTIONS = declare("ranklens freshness options", {
    "versions": path(None, "document versions: JSONL or CSV with doc_id, valid_from, group, "
                     "supersedes, superseded_at (a corpus.jsonl whose metadata carry them will "
                     "do); outdated versions are then judged by --freshness, and outdated@k, "
                     "current@k, current_first@k apply", none=True),
    "time_field": text("valid_from", "the field holding each document's valid-from time"),
    "group_field": text("group", "the field naming each document's version group"),
    "as_of": text(None, "judge every query as of this time (ISO 8601; default: the newest "
                  "version in the file)", none=True),
    "freshness": text(None, "how an outdated version is judged: zero (default), keep, demote, "
                      "half, demote=N, factor=F, half_life=90d", none=True),
})  # fmt: skip
"""The freshness flags of ``evaluate``, ``compare`` and ``gate``: an empty value is
refused by name (``--as-of ''`` was read as no time at all: the newest version)."""


def add_freshness_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("freshness (docs/freshness.md)")
    FRESHNESS_OPTIONS.add_argument(g, "versions", metavar="FILE")
    FRESHNESS_OPTIONS.add_argument(g, "time_field", default="valid_from", metavar="NAME")
    FRESHNESS_OPTIONS.add_argument(g, "group_field", default="group", metavar="NAME")
    FRESHNESS_OPTIONS.add_argument(g, "as_of", metavar="TIME")
    FRESHNESS_OPTIONS.add_argument(g, "freshness", metavar="RULE")


def freshness_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The judging keywords of the freshness options (none without ``--versions``)."""
    versions = getattr(args, "versions", None)
    if versions is None:
        if getattr(args, "as_of", None) is not None or getattr(args, "freshness", None) is not None:
            raise InputError("--as-of and --freshness judge document versions: add --versions FILE")
        return {}
    from ..io.versions import read_versions

    table = read_versions(versions, time=args.time_field, group=args.group_field)
    out: dict[str, Any] = {"versions": table}
    if args.as_of is not None:
        out["as_of"] = args.as_of
    if args.freshness is not None:
        out["freshness"] = args.freshness
    return out
