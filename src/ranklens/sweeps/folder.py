"""The sweep folder (``cache=``): one runner log per configuration
(``<name>-<hash of its parameters>.jsonl``, on either backend) and ``sweep.jsonl``, one
line per build and per configuration built (:class:`Folder`); a configuration's log read
back when it answers every query (:func:`finished`), refused when another configuration
wrote it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..capture import Retrieval, config_diff, plain, read_log
from ..errors import InputError
from .grid import Config

EVENTS = "sweep.jsonl"
"""The sweep folder's record of builds and configurations (one JSON object a line)."""


def slug(name: str) -> str:
    """A file-name-safe short form of a configuration's name."""
    out = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    return "-".join(p for p in out.split("-") if p)[:60] or "config"


class Folder:
    """The sweep folder: configurations' logs and the events file (nothing on disk when
    ``path`` is None)."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path).resolve() if path is not None else None  # Ray workers' cwd differs
        self.events: list[dict[str, Any]] = []
        if self.path is not None:
            if self.path.exists() and not self.path.is_dir():
                raise InputError(
                    f"sweep: cache must be a folder (the sweep's logs go in it), got the file "
                    f"{self.path}"
                )
            self.path.mkdir(parents=True, exist_ok=True)

    def load(self) -> None:
        """The events file read (once the folder's lock is held: another process's
        events are then complete)."""
        self.events = []
        events = self.path / EVENTS if self.path is not None else None
        if events is not None and events.exists():
            for line in events.read_text(encoding="utf-8").splitlines():
                try:
                    self.events.append(json.loads(line))
                except json.JSONDecodeError:  # a line torn by a kill: the build is redone
                    continue

    def log_path(self, cfg: Config, ray: bool) -> Path | None:
        if self.path is None:
            return None
        name = f"{slug(cfg.name)}-{cfg.key}"
        return self.path / (name if ray else f"{name}.jsonl")

    def record(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if self.path is not None:
            with open(self.path / EVENTS, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(plain(event), default=str) + "\n")

    def last(self, kind: str, key: str) -> dict[str, Any] | None:
        """The folder's last event of ``kind`` for the configuration or build ``key``."""
        for e in reversed(self.events):
            if e.get("type") == kind and e.get("key") == key:
                found: dict[str, Any] = e
                return found
        return None


def finished(
    path: Path | None,
    ident: Mapping[str, Any],
    settings: Mapping[str, Any],
    queries: Mapping[str, str],
    retry_failed: bool,
) -> tuple[list[Retrieval], dict[str, Any]] | None:
    """The records of a configuration's log when it answers every query (and its header
    names this configuration), else None; a log of another configuration is an error."""
    if path is None or not path.exists():
        return None
    files = sorted(path.glob("shard-*.jsonl")) if path.is_dir() else [path]
    records: dict[str, Retrieval] = {}
    config: dict[str, Any] = {}
    for f in files:
        if f.stat().st_size == 0:
            return None
        header, recs, _, _ = read_log(f)
        config = header.get("config") or {}
        mine = {k: config.get(k) for k in ident}
        if mine != plain(dict(ident)):
            raise InputError(
                f"{f}: this log was written by another sweep configuration; differences: "
                f"{config_diff(mine, plain(dict(ident)))}. Use another cache= folder, or "
                "delete the log to run this configuration afresh"
            )
        for k, v in settings.items():
            if k in config and config.get(k) != v:
                return None  # other run settings: the runner refuses it, naming them
        records.update(recs)
    ordered = []
    for q, text in queries.items():
        rec = records.get(q)
        if rec is None or rec.query != text or (retry_failed and not rec.ok):
            return None
        ordered.append(rec)
    return ordered, config
