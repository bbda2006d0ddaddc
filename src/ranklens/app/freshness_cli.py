"""The command line's freshness options, shared by ``evaluate``, ``compare`` and ``gate``:
``--versions FILE`` (a JSONL or CSV table of document versions, or a corpus whose
documents' metadata carry the times), ``--time-field``/``--group-field`` (the names the
file uses), ``--as-of TIME`` (one time for every query; default: the newest version) and
``--freshness RULE`` (how an outdated version is judged: zero, keep, demote, half,
demote=2, factor=0.3, half_life=90d)."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError


def add_freshness_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("freshness (docs/freshness.md)")
    g.add_argument(
        "--versions",
        metavar="FILE",
        help="document versions: JSONL or CSV with doc_id, valid_from, group, supersedes, "
        "superseded_at (a corpus.jsonl whose metadata carry them will do); outdated versions "
        "are then judged by --freshness, and outdated@k, current@k, current_first@k apply",
    )
    g.add_argument(
        "--time-field",
        default="valid_from",
        metavar="NAME",
        help="the field holding each document's valid-from time (default valid_from)",
    )
    g.add_argument(
        "--group-field",
        default="group",
        metavar="NAME",
        help="the field naming each document's version group (default group)",
    )
    g.add_argument(
        "--as-of",
        metavar="TIME",
        help="judge every query as of this time (ISO 8601; default: the newest "
        "version in the file)",
    )
    g.add_argument(
        "--freshness",
        metavar="RULE",
        help="how an outdated version is judged: zero (default), keep, demote, "
        "half, demote=N, factor=F, half_life=90d",
    )


def freshness_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The judging keywords of the freshness options (none without ``--versions``)."""
    versions = getattr(args, "versions", None)
    if versions is None:
        if getattr(args, "as_of", None) or getattr(args, "freshness", None):
            raise InputError("--as-of and --freshness judge document versions: add --versions FILE")
        return {}
    from ..io.versions import read_versions

    table = read_versions(versions, time=args.time_field, group=args.group_field)
    out: dict[str, Any] = {"versions": table}
    if args.as_of:
        out["as_of"] = args.as_of
    if args.freshness:
        out["freshness"] = args.freshness
    return out
