"""Profiles as text: the Markdown reference that ``docs/use-cases.md`` holds (generated
here; a test keeps the page equal to the code) and the plain text ``ranklens profiles``
prints."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

from .model import Profile


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def profiles_reference(profiles: Mapping[str, Profile] | None = None) -> str:
    """Every profile as Markdown: an overview table, then per profile its metrics with
    why, its targets with their sources, and the published typical values it quotes."""
    from .builtin import BUILTIN

    profiles = profiles or BUILTIN
    lines = [
        "| profile | use case | targets |",
        "|---|---|---|",
    ]
    for p in profiles.values():
        targets = ", ".join(f"`{t}`" for t in p.targets) or "–"
        lines.append(f"| [`{p.name}`](#{p.name}) | {_cell(p.title)} | {targets} |")
    for p in profiles.values():
        lines += ["", f"### {p.name}", "", f"**{_cell(p.title)}.** {p.summary}", ""]
        lines += ["| metric | why | target | source of the target |", "|---|---|---|---|"]
        for m in p.metrics:
            t = p.target(m.metric)
            target = f"{t.op} {t.value:g}" if t else "–"
            source = _cell(t.source) if t else "–"
            why = _cell(t.why if t and t.why else m.why)
            if t and t.why and m.why and t.why != m.why:
                why = _cell(f"{m.why}; target: {t.why}")
            lines.append(f"| `{m.metric}` | {why} | {target} | {source} |")
        if p.typical:
            lines += ["", "Published typical values:", ""]
            lines += ["| metric | value | system | dataset | source |", "|---|---|---|---|---|"]
            for ty in p.typical:
                lines.append(
                    f"| `{ty.metric}` | {ty.value:.3f} | {_cell(ty.system)} | "
                    f"{_cell(ty.dataset)} | {_cell(ty.source)} |"
                )
        for note in p.notes:
            lines += ["", note]
    return "\n".join(lines) + "\n"


def describe(profile: Profile, width: int = 92) -> str:
    """A profile as plain text: what it is for, its metrics and why, its targets and where
    each number comes from, and the published values it quotes."""

    def wrap(text: str, indent: str = "  ") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ")

    lines = [f"{profile.name}: {profile.title}"]
    lines += wrap(profile.summary)
    lines += ["", "  metrics (why):"]
    for m in profile.metrics:
        lines += wrap(f"{m.metric}: {m.why}" if m.why else m.metric, "    ")
    if profile.targets:
        lines += ["", "  targets (source):"]
        for t in profile.targets:
            lines += wrap(f"{t}: {t.why} ({t.source})" if t.why else f"{t} ({t.source})", "    ")
    if profile.typical:
        lines += ["", "  published typical values:"]
        for ty in profile.typical:
            lines += wrap(
                f"{ty.metric} {ty.value:.3f}: {ty.system} on {ty.dataset} ({ty.source})", "    "
            )
    for note in profile.notes:
        lines += ["", *wrap(note)]
    if profile.origin != "built-in":
        lines += ["", f"  declared in: {profile.origin}"]
    return "\n".join(lines) + "\n"
