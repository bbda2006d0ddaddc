"""``ranklens explain --use-case NAME``: which metrics fit a use case and why, its targets
and where each number comes from, and a small worked example: a labelled set shaped like
the use case (made here, deterministic), a retriever's values on it, the verdicts against
the targets, and the queries that would settle each one."""

from __future__ import annotations

import textwrap

import numpy as np

from ..comparison.planner import plan_queries
from ..comparison.targets import evaluate
from ..profiles import Profile, describe, get_profile

RELEVANT = {"faq": 1, "product-search": 4, "research": 8, "first-stage": 3, "rag-context": 2}
"""Relevant documents per query in each built-in profile's worked example."""


def example_set(
    profile: Profile, queries: int = 30, seed: int = 7
) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """``(qrels, run)``: ``queries`` queries with the profile's typical number of relevant
    documents (graded 2 for the first, 1 for the rest), and a run of 100 documents that
    ranks them near the top more often than not and misses some."""
    rng = np.random.default_rng(seed)
    relevant = RELEVANT.get(profile.name, 2)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[str]] = {}
    for i in range(queries):
        q = f"q{i + 1:02d}"
        docs = [f"{q}-rel{j}" for j in range(relevant)]
        qrels[q] = {d: 2 if j == 0 else 1 for j, d in enumerate(docs)}
        ranking = [f"{q}-other{j}" for j in range(100)]
        for d in docs:
            if rng.random() < 0.93:  # found, most often at the top
                ranking.insert(min(int(rng.geometric(0.8)) - 1, 99), d)
        run[q] = ranking[:100]
    return qrels, run


def explain_use_case(name: str) -> str:
    """The text ``ranklens explain --use-case NAME`` prints."""
    profile = get_profile(name)
    qrels, run = example_set(profile)
    ev = evaluate(qrels, run, profile=profile)
    relevant = RELEVANT.get(profile.name, 2)
    lines = [describe(profile).rstrip(), "", "Worked example"]
    lines.append(
        f"  {len(qrels)} queries, {relevant} relevant document{'s' if relevant > 1 else ''} "
        "each (a labelled set shaped like this use case, made up here), and a retriever "
        "that finds most of them, most at the top:"
    )
    lines.append("    " + "   ".join(f"{m} {v:.4f}" for m, v in ev.aggregate.items()))
    lines.append(f"  Verdicts ({ev.verdicts[0].summary(ev.verdicts)}):" if ev.verdicts else "")
    lines += [f"    {v.line()}" for v in ev.verdicts]
    plans = plan_queries(profile, pilot=ev) if profile.targets else []
    if plans:
        lines += ["  Taking these values as the truth, the queries to label (ranklens plan):"]
        lines += [f"    {p}" for p in plans]
    lines += [
        "",
        f"On your data: ranklens evaluate QRELS RUN --profile {profile.name}; before labelling: "
        f"ranklens plan --profile {profile.name} --margin 0.05.",
    ]
    wrapped = lines[:1]  # the description is wrapped already
    for line in lines[1:]:
        indent = " " * (len(line) - len(line.lstrip()))
        wrapped += textwrap.wrap(line, 92, subsequent_indent=indent + "  ") or [""]
    return "\n".join(wrapped) + "\n"
