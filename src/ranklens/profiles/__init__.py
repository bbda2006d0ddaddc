"""Use-case profiles: which metrics fit a use case, what value is good enough, and where
each number comes from. Declarations only (data, like judging's conventions): the verdicts
against a profile's targets, with confidence bounds, are computed on the comparison floor
(:mod:`ranklens.comparison.targets`). Built-in profiles: ``faq``, ``product-search``,
``research``, ``first-stage``, ``rag-context``; users declare their own in Python
(:class:`Profile`, :func:`register_profile`), in a TOML file (:func:`load_profiles`) or in
``pyproject.toml``'s ``[tool.ranklens.profiles]``, overriding any target.
"""

from __future__ import annotations

from .builtin import BUILTIN
from .model import (
    RULE_OF_THUMB,
    MetricUse,
    Profile,
    Target,
    Typical,
    is_binary,
    metric_range,
)
from .registry import (
    all_profiles,
    get_profile,
    load_profiles,
    project_profiles,
    register_profile,
    unregister_profile,
)
from .table import describe, profiles_reference

__all__ = [
    "BUILTIN",
    "RULE_OF_THUMB",
    "MetricUse",
    "Profile",
    "Target",
    "Typical",
    "all_profiles",
    "describe",
    "get_profile",
    "is_binary",
    "load_profiles",
    "metric_range",
    "profiles_reference",
    "project_profiles",
    "register_profile",
    "unregister_profile",
]
