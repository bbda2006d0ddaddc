"""Profiles as text: the Markdown reference that ``docs/use-cases.md`` holds (generated
here; a test keeps the page equal to the code) and the plain text ``ranklens profiles``
prints."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

from ..escape import markdown, terminal
from .model import Profile


def _cell(text: str, built_in: bool = True) -> str:
    """A table cell: the built-in profiles' own Markdown kept (their text is the project's),
    any other profile's text escaped (:func:`ranklens.escape.markdown`: a title such as
    ``<img src=x onerror=...>`` shows as text)."""
    if not built_in:
        return markdown(text)
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
        own = p.origin == "built-in"
        targets = ", ".join(f"`{t}`" if own else markdown(t) for t in p.targets) or "–"
        name = f"[`{p.name}`](#{p.name})" if own else markdown(p.name)
        lines.append(f"| {name} | {_cell(p.title, own)} | {targets} |")
    for p in profiles.values():
        own = p.origin == "built-in"
        head = p.name if own else markdown(p.name)
        summary = p.summary if own else markdown(p.summary)
        lines += ["", f"### {head}", "", f"**{_cell(p.title, own)}.** {summary}", ""]
        lines += ["| metric | why | target | source of the target |", "|---|---|---|---|"]
        for m in p.metrics:
            t = p.target(m.metric)
            target = f"{t.op} {t.value:g}" if t else "–"
            source = _cell(t.source, own) if t else "–"
            why = _cell(t.why if t and t.why else m.why, own)
            if t and t.why and m.why and t.why != m.why:
                why = _cell(f"{m.why}; target: {t.why}", own)
            metric = f"`{m.metric}`" if own else markdown(m.metric)
            lines.append(f"| {metric} | {why} | {target} | {source} |")
        if p.typical:
            lines += ["", "Published typical values:", ""]
            lines += ["| metric | value | system | dataset | source |", "|---|---|---|---|---|"]
            for ty in p.typical:
                metric = f"`{ty.metric}`" if own else markdown(ty.metric)
                lines.append(
                    f"| {metric} | {ty.value:.3f} | {_cell(ty.system, own)} | "
                    f"{_cell(ty.dataset, own)} | {_cell(ty.source, own)} |"
                )
        for note in p.notes:
            lines += ["", note if own else markdown(note)]
    return "\n".join(lines) + "\n"


def describe(profile: Profile, width: int = 92) -> str:
    """A profile as plain text: what it is for, its metrics and why, its targets and where
    each number comes from, and the published values it quotes."""

    def wrap(text: str, indent: str = "  ") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ")

    t = terminal  # user text shown as text (ESC sequences and bidi controls as escapes)
    lines = [f"{t(profile.name)}: {t(profile.title)}"]
    lines += wrap(t(profile.summary))
    lines += ["", "  metrics (why):"]
    for m in profile.metrics:
        lines += wrap(f"{m.metric}: {t(m.why)}" if m.why else m.metric, "    ")
    if profile.targets:
        lines += ["", "  targets (source):"]
        for tg in profile.targets:
            lines += wrap(
                f"{tg}: {t(tg.why)} ({t(tg.source)})" if tg.why else f"{tg} ({t(tg.source)})",
                "    ",
            )
    if profile.typical:
        lines += ["", "  published typical values:"]
        for ty in profile.typical:
            lines += wrap(
                f"{ty.metric} {ty.value:.3f}: {t(ty.system)} on {t(ty.dataset)} ({t(ty.source)})",
                "    ",
            )
    for note in profile.notes:
        lines += ["", *wrap(t(note))]
    if profile.origin != "built-in":
        lines += ["", f"  declared in: {t(profile.origin)}"]
    return "\n".join(lines) + "\n"
