"""The commands for working without labels, registered together: ``synthesize``,
``check`` and ``estimate`` (each in a module of its own)."""

from __future__ import annotations

from typing import Any

from .check_cli import add_check_command, cmd_check
from .estimate_cli import add_estimate_command, cmd_estimate
from .synthesize_cli import add_synthesize_command, cmd_synthesize

NOLABELS_COMMANDS = {"synthesize": cmd_synthesize, "check": cmd_check, "estimate": cmd_estimate}


def add_nolabels_commands(sub: Any) -> None:
    """The ``synthesize``, ``check`` and ``estimate`` subcommands."""
    add_synthesize_command(sub)
    add_check_command(sub)
    add_estimate_command(sub)
