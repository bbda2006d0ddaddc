"""The run log: an append-only JSONL file, a header line with the configuration and its
hash, then one line per finished query (the last line for a query wins). A log written by
another configuration is refused, naming the fields that differ; a torn last line (a kill
mid-write) is dropped and counted."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .records import Retrieval

LOG_FORMAT = 1


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of the configuration, JSON with sorted keys."""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class RunLog:
    """The append-only JSONL log: a header line with the configuration and its hash, then
    one line per finished query (the last line for a query wins)."""

    def __init__(self, path: str | Path, config: dict[str, Any]):
        self.path = Path(path)
        self.config = config
        self.hash = config_hash(config)
        self.records: dict[str, Retrieval] = {}
        self.torn_lines = 0
        if self.path.exists() and self.path.stat().st_size > 0:
            self._read()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {"type": "header", "format": LOG_FORMAT, "hash": self.hash, "config": config}
            self.path.write_text(json.dumps(header, default=str) + "\n", encoding="utf-8")
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def _read(self) -> None:
        header, records, good, torn = read_log(self.path)
        if header.get("hash") != self.hash:
            raise InputError(
                f"{self.path}: this log was written by another configuration "
                f"(hash {header.get('hash')}, now {self.hash}); differences: "
                f"{config_diff(header.get('config') or {}, self.config)}. Use another cache "
                "path or delete the log; if only the retriever's mutable state changed (a "
                "counter, a cache), pass config={...} naming its configuration to both runs."
            )
        self.records, self.torn_lines = records, torn
        if self.torn_lines:
            # Rewrite without the torn line (atomically), so the next line and the next
            # resume start clean.
            tmp = self.path.with_name(self.path.name + ".repair")
            tmp.write_text("\n".join(good) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)

    def append(self, record: Retrieval) -> None:
        self._fh.write(record.to_json() + "\n")
        self._fh.flush()
        self.records[record.query_id or ""] = record

    def close(self) -> None:
        self._fh.close()


def read_log(path: str | Path) -> tuple[dict[str, Any], dict[str, Retrieval], list[str], int]:
    """A run log as it is on disk, without writing to it: its header, each query's last
    record, the readable lines (header first) and the number of torn last lines (0 or 1:
    a kill mid-write). A missing header or an unreadable line before the last is an
    error naming the file and line."""
    path = Path(path)
    lines = path.read_bytes().decode("utf-8", "replace").split("\n")
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError:
        raise InputError(f"{path}:1: not a ranklens run log (no header line)") from None
    if not isinstance(header, dict) or header.get("type") != "header":
        raise InputError(f"{path}:1: not a ranklens run log (no header line)")
    records: dict[str, Retrieval] = {}
    good, torn = [lines[0]], 0
    content = [i for i, x in enumerate(lines) if i > 0 and x.strip()]
    last = content[-1] if content else 0
    for i in content:
        line = lines[i]
        try:
            rec = Retrieval.from_dict(json.loads(line))
        except (json.JSONDecodeError, TypeError, AttributeError, KeyError, ValueError):
            if i == last:  # the last line, cut by a kill mid-write
                torn += 1
                continue
            raise InputError(f"{path}:{i + 1}: unreadable log line") from None
        records[rec.query_id or ""] = rec
        good.append(line)
    return header, records, good, torn


def config_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The top-level fields of two configurations that differ, as ``field: old -> new``."""
    keys = sorted(set(old) | set(new))
    diffs = [
        f"{k}: {_short(old.get(k))} -> {_short(new.get(k))}"
        for k in keys
        if old.get(k) != new.get(k)
    ]
    return "; ".join(diffs) or "(none visible)"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:297] + "..."
