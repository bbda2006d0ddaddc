"""The groups of parameters many entry points share, declared here once and spread into
their tables (the settings objects of :mod:`ranklens.settings` are made of them)."""

from __future__ import annotations

from .kinds import (
    AT_LEAST_ONE,
    LEVEL,
    NONNEGATIVE,
    POSITIVE,
    Option,
    choice,
    count,
    data,
    flag,
    number,
    path,
)

STATISTICS: dict[str, Option] = {
    "test": choice(
        "randomization",
        ("t", "randomization", "bootstrap", "wilcoxon"),
        "paired test: Student's t, Fisher's randomization, paired bootstrap or Wilcoxon",
    ),
    "correction": choice(
        "holm",
        ("holm", "bonferroni", "bh", "none"),
        "multiple-comparison correction (Holm, Bonferroni, Benjamini-Hochberg, none)",
        none=True,
    ),
    "alpha": number(0.05, LEVEL, "significance level"),
    "n_resamples": count(10_000, AT_LEAST_ONE, "resamples of the bootstrap/randomization"),
    "ci": choice("bootstrap", ("bootstrap", "t"), "interval method", none=True),
    "confidence": number(0.95, LEVEL, "confidence level of the intervals"),
    "seed": count(0, NONNEGATIVE, "random seed (None: fresh entropy)", none=True),
}
"""The statistics settings (compare, gate, snapshots, sweeps, tune_fusion, estimate)."""

CALLING: dict[str, Option] = {
    "concurrency": count(8, AT_LEAST_ONE, "calls in flight"),
    "timeout": number(None, POSITIVE, "seconds per attempt (None: no limit)", none=True),
    "retries": count(2, NONNEGATIVE, "retries of a transient error"),
    "retry_on": data("the exception types retried"),
    "backoff": number(0.2, NONNEGATIVE, "seconds before the first retry, doubled each time"),
    "cache": path(None, "the JSONL log to write and resume from", none=True),
    "progress": flag(None, "a progress bar (None: when stderr is a terminal)", none=True),
}
"""How retrievers, generators and judges are called (runner, sweeps, judges, synthesis)."""
