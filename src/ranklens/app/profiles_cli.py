"""``ranklens profiles`` (the use-case profiles: metrics, targets, sources), ``ranklens
plan`` (queries to label before a target can be claimed), and the ``--profile`` /
``--target`` options of ``ranklens evaluate`` and ``ranklens compare``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import InputError
from ..escape import terminal

BOUND_METHODS = ("auto", "exact", "wilson", "t+", "t", "bootstrap")
"""The bound methods (``ranklens.comparison.bounds.METHODS``, named here so that parsing
arguments imports no numerics)."""


def add_target_args(p: argparse.ArgumentParser) -> None:
    """``--profile``, ``--target``, ``--profiles-file``, ``--target-confidence`` and
    ``--target-method``."""
    p.add_argument(
        "--profile",
        metavar="NAME",
        help="a use-case profile (faq, product-search, research, first-stage, rag-context, "
        "or your own): its metrics are added and each target gets a verdict: met, missed or "
        "not yet known (ranklens profiles lists them)",
    )
    p.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="METRIC>=VALUE",
        help="a target to check (repeatable), alone or overriding the profile's",
    )
    p.add_argument(
        "--profiles-file",
        metavar="FILE",
        help="a TOML file of [profiles.NAME] tables (pyproject.toml's [tool.ranklens.profiles] "
        "is read by itself)",
    )
    from ..comparison.compare import COMPARE

    COMPARE.add_argument(
        p,
        "target_confidence",
        default=0.95,
        metavar="LEVEL",
        help="one-sided level of each bound (default 0.95)",
    )
    p.add_argument(
        "--target-method",
        default="auto",
        choices=BOUND_METHODS,
        help="the bound: auto (exact for 0/1 values, t+ otherwise; default), exact, wilson, "
        "t+, t, bootstrap",
    )


def target_request(args: argparse.Namespace) -> tuple[Any, dict[str, Any]] | None:
    """``(profile, options)`` for the verdicts asked on the command line, or None."""
    if getattr(args, "profiles_file", None):
        from ..profiles import load_profiles

        load_profiles(args.profiles_file)
    if not args.profile and not args.target:
        return None
    from ..comparison.targets import resolve_profile
    from ..profiles.model import parse_target

    targets = {}
    for text in args.target:
        t = parse_target(text)
        targets[t.metric] = (t.op, t.value)
    profile = resolve_profile(args.profile, targets or None)
    return profile, {"confidence": args.target_confidence, "method": args.target_method}


def add_profile_commands(sub: Any) -> None:
    """The ``profiles`` and ``plan`` subcommands."""
    pr = sub.add_parser(
        "profiles",
        help="use-case profiles: which metrics fit, what value is good enough, and why",
        description="List the use-case profiles (built-in, pyproject.toml's "
        "[tool.ranklens.profiles], --file), or show one: its metrics and why, its targets "
        "and their sources, the published typical values it quotes.",
    )
    pr.add_argument("name", nargs="?", help="a profile to show in full")
    pr.add_argument("--file", metavar="FILE", help="also load the profiles of this TOML file")
    pr.add_argument("--format", choices=["text", "markdown", "json"], default="text")

    pl = sub.add_parser(
        "plan",
        help="how many queries to label before a target can be claimed",
        description="The labelled queries a target needs for its verdict to come out met "
        "(exact binomial for 0/1 metrics; the t bound for graded ones, at the spread of a "
        "pilot report, --sd, or the widest a mean allows). E.g. ranklens plan 'P@1>=0.9' "
        "--expected 1 says 29.",
    )
    pl.add_argument("targets", nargs="*", metavar="METRIC>=VALUE", help="targets to plan for")
    pl.add_argument("--profile", metavar="NAME", help="plan for every target of a profile")
    from ..comparison.planner import PLAN_QUERIES

    PLAN_QUERIES.add_argument(pl, "expected")
    PLAN_QUERIES.add_argument(pl, "margin")
    PLAN_QUERIES.add_argument(pl, "sd")
    pl.add_argument(
        "--pilot", metavar="REPORT.json", help="a saved report of one run on a few queries"
    )
    PLAN_QUERIES.add_argument(pl, "confidence", default=0.95, help="one-sided level (0.95)")
    PLAN_QUERIES.add_argument(pl, "power", default=0.8, help="chance to come out met (0.8)")
    pl.add_argument("--method", choices=BOUND_METHODS, default="auto")
    pl.add_argument("--profiles-file", metavar="FILE", help="a TOML file of profiles")


def cmd_profiles(args: argparse.Namespace) -> int:
    from ..profiles import all_profiles, describe, get_profile, load_profiles, profiles_reference

    if args.file:
        load_profiles(args.file)
    known = all_profiles()
    shown = {args.name: get_profile(args.name)} if args.name else known
    if args.format == "json":
        data = [p.to_dict() for p in shown.values()]
        sys.stdout.write(json.dumps(data if not args.name else data[0], indent=1) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(profiles_reference({p.name: p for p in shown.values()}))
    elif args.name:
        sys.stdout.write(describe(shown[args.name]))
    else:
        width = max(len(n) for n in known)
        for p in known.values():
            targets = ", ".join(str(t) for t in p.targets) or "no targets"
            origin = "" if p.origin == "built-in" else f"  [{p.origin}]"
            name, title = terminal(p.name), terminal(p.title)
            sys.stdout.write(f"  {name.ljust(width)}  {title}: {targets}{terminal(origin)}\n")
        sys.stdout.write(
            "\nranklens profiles NAME shows one (metrics and why, targets and their sources, "
            "published values);\nranklens explain --use-case NAME works an example; "
            "ranklens evaluate QRELS RUN --profile NAME checks yours.\n"
        )
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from ..comparison import load_report
    from ..comparison.planner import plan_queries
    from ..settings import Statistics

    if args.profiles_file:
        from ..profiles import load_profiles

        load_profiles(args.profiles_file)
    wanted: list[Any] = list(args.targets)
    if args.profile:
        wanted.append(args.profile)
    if not wanted:
        raise InputError("plan needs targets (plan 'P@1>=0.9') or --profile NAME")
    plans = plan_queries(
        wanted,
        expected=args.expected,
        margin=args.margin,
        sd=args.sd,
        pilot=load_report(args.pilot) if args.pilot else None,
        stats=Statistics(confidence=args.confidence),
        power=args.power,
        method=args.method,
    )
    for plan in plans:
        sys.stdout.write(f"{plan}\n")
    return 0
