"""Finding a profile by name: those registered from Python or loaded from a TOML file, then
those of the nearest ``pyproject.toml`` (``[tool.ranklens.profiles]``, read again when the
file changes), then the built-in ones. A user profile named like a built-in one replaces it
for every lookup."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..declared import ParameterError, data, declare, flag, mapping, names, path, text
from ..errors import InputError, closest
from .builtin import BUILTIN
from .files import parse_profiles, profile_tables, read_toml
from .model import Profile

REGISTER_PROFILE = declare("register_profile", {
    "profile": data("a ranklens.Profile"),
    "replace": flag(False, "redefine a name registered before"),
})  # fmt: skip
UNREGISTER_PROFILE = declare("unregister_profile", {
    "name": text(None, "the registered profile's name"),
})  # fmt: skip
LOAD_PROFILES = declare("load_profiles", {
    "path": path(None, "a TOML file of [profiles.NAME] tables, or a pyproject.toml"),
})  # fmt: skip
ALL_PROFILES = declare("all_profiles", {})
GET_PROFILE = declare("get_profile", {
    "value": data("a profile's name (``faq``), a ranklens.Profile or its to_dict() mapping"),
    "targets": mapping(None, "targets overriding or adding to the profile's: {metric: value} "
                       "or 'METRIC >= VALUE' texts", none=True, also=names(None, single=True)),
})  # fmt: skip

_REGISTERED: dict[str, Profile] = {}
_PROJECT: dict[Path, tuple[float, dict[str, Profile]]] = {}


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-")


@REGISTER_PROFILE.checks
def register_profile(profile: Profile, *, replace: bool = False) -> Profile:
    """Make ``profile`` known by its name (``replace=True`` to redefine a name registered
    before; a built-in name is always replaced, which is how a target is overridden)."""
    if not isinstance(profile, Profile):
        raise ParameterError(
            f"register_profile: profile must be a ranklens.Profile, got {type(profile).__name__}"
        )
    key = _key(profile.name)
    if key in _REGISTERED and not replace:
        raise InputError(
            f"a profile named {profile.name!r} is registered already; pass replace=True"
        )
    _REGISTERED[key] = profile
    return profile


@UNREGISTER_PROFILE.checks
def unregister_profile(name: str) -> Profile:
    """Forget a registered profile (a built-in one of that name is found again)."""
    try:
        return _REGISTERED.pop(_key(name))
    except KeyError:
        raise InputError(f"no registered profile named {name!r}") from None


def _builtin_or_registered(name: str) -> Profile | None:
    return _REGISTERED.get(_key(name)) or BUILTIN.get(_key(name))


@LOAD_PROFILES.checks
def load_profiles(path: str | Path) -> list[Profile]:
    """Read and register the profiles of a TOML file (``[profiles.NAME]`` tables, or a
    ``pyproject.toml``'s ``[tool.ranklens.profiles.NAME]``); returns them."""
    found = parse_profiles(path, _builtin_or_registered)
    for profile in found:
        register_profile(profile, replace=True)
    return found


def project_file(start: str | Path | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` from ``start`` (default: the working directory) up."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def project_profiles(start: str | Path | None = None) -> dict[str, Profile]:
    """The profiles of the nearest ``pyproject.toml``'s ``[tool.ranklens.profiles]``
    (none when it has no such table)."""
    path = project_file(start)
    if path is None:
        return {}
    stamp = path.stat().st_mtime
    cached = _PROJECT.get(path)
    if cached is None or cached[0] != stamp:
        _, tables = profile_tables(read_toml(path), path)
        found = parse_profiles(path, _builtin_or_registered) if tables else []
        cached = (stamp, {_key(p.name): p for p in found})
        _PROJECT[path] = cached
    return dict(cached[1])


@ALL_PROFILES.checks
def all_profiles() -> dict[str, Profile]:
    """Every profile known here by name: built-in, the project's, registered (the later
    replaces the earlier of the same name)."""
    found = {**BUILTIN, **project_profiles(), **_REGISTERED}
    return {p.name: p for p in found.values()}


@GET_PROFILE.checks
def get_profile(
    value: str | Profile | Mapping[str, Any], targets: Mapping[str, Any] | None = None
) -> Profile:
    """A :class:`Profile` from a name, itself, or a mapping of :meth:`Profile.to_dict`
    fields; ``targets`` override or add targets (``{"mrr@10": 0.85}``)."""
    if isinstance(value, Profile):
        profile = value
    elif isinstance(value, Mapping):
        profile = Profile.from_dict(value)
    elif isinstance(value, str):
        key = _key(value)
        found = _REGISTERED.get(key) or project_profiles().get(key) or BUILTIN.get(key)
        if found is None:
            known = all_profiles()
            near = closest(value, known)
            hint = f"did you mean {near!r}? " if near else ""
            raise ParameterError(
                f"unknown profile {value!r}; {hint}known: {', '.join(known)} (declare your "
                "own with ranklens.Profile, a TOML file or [tool.ranklens.profiles] in "
                "pyproject.toml)"
            )
        profile = found
    else:
        raise ParameterError(
            f"get_profile: a profile is a name, a ranklens.Profile or its to_dict() mapping, "
            f"got {value!r}"
        )
    return profile.with_targets(targets) if targets else profile
