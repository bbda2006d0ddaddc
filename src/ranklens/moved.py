"""Import paths of ranklens 0.1 that moved when the code was laid out in floors: each old
module path still imports, as a module whose names come from the new home(s), with a
``DeprecationWarning`` naming them. (``ranklens.compare`` is not among them: that name is
the function; ``ranklens.comparison.compare`` is the module.)"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

from .errors import RENAMED, renamed

MOVED: dict[str, tuple[str, ...]] = {
    "ranklens.specs": ("ranklens.metrics", "ranklens.app.reference"),
    "ranklens.conventions": ("ranklens.judging.conventions",),
    "ranklens.qrels": ("ranklens.model.qrels",),
    "ranklens.runs": ("ranklens.model.runs",),
    "ranklens.dataset": ("ranklens.model.dataset", "ranklens.io"),
    "ranklens.hits": ("ranklens.capture.hits",),
    "ranklens.runner": (
        "ranklens.capture.runner",
        "ranklens.capture.contract",
        "ranklens.capture.result",
        "ranklens.capture.log",
    ),
    "ranklens.recorder": ("ranklens.capture.recorder", "ranklens.capture.records"),
    "ranklens.report": ("ranklens.comparison.report",),
    "ranklens.stats": ("ranklens.comparison.stats",),
    "ranklens.explain": ("ranklens.app.explain",),
    "ranklens.demo": ("ranklens.app.demo",),
    "ranklens.demo_data": ("ranklens.app.demo_data",),
    "ranklens.cli": ("ranklens.app.cli",),
    "ranklens.io.tables": ("ranklens.io.datasets", "ranklens.io.topics"),
    # 0.2: rooms renamed so that their names say their job
    "ranklens.judgments": ("ranklens.labelling",),
    **{f"ranklens.judgments.{m}": (f"ranklens.labelling.{m}",)
       for m in ("agreement", "judges", "page", "pool", "rescore")},
    "ranklens.app.judgments_cli": ("ranklens.app.labelling_cli",),
    "ranklens.comparison.floors": ("ranklens.comparison.gate_floors",),
    "ranklens.evaluation.chunks": ("ranklens.evaluation.run_files",),
    "ranklens.evaluation.parts": ("ranklens.evaluation.stream_plan",),
    "ranklens.render.cells": ("ranklens.render.table_cells",),
    "ranklens.capture.slots": ("ranklens.capture.record_tuple",),
    "ranklens.judging.dicts": ("ranklens.judging.dict_join",),
}  # fmt: skip
"""Old module path → the modules its names now live in (searched in order)."""


class _MovedModule(ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # never the new home's __path__: submodules come from MOVED
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        for target in MOVED[self.__name__]:
            module = importlib.import_module(target)
            if hasattr(module, name):
                return getattr(module, name)
        for target in MOVED[self.__name__]:  # a name renamed with its room (errors.RENAMED)
            new = RENAMED.get(target, {}).get(name)
            if new is not None:
                return renamed(target, name, vars(importlib.import_module(target)))
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        names = set()
        for target in MOVED[self.__name__]:
            names.update(dir(importlib.import_module(target)))
        return sorted(names)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=self.is_package(fullname))

    def create_module(self, spec: Any) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved: import from {' or '.join(MOVED[spec.name])} "
            "(see docs/architecture.md)",
            DeprecationWarning,
            stacklevel=3,
        )
        module = _MovedModule(spec.name)
        if self.is_package(spec.name):  # its old submodules are found here, nowhere else
            module.__path__ = []
        return module

    def exec_module(self, module: ModuleType) -> None:
        return None

    def get_code(self, fullname: str) -> Any:
        """What ``python -m <old path>`` runs: the command, for the old CLI module
        (``python -m ranklens.cli``), with a note of how to run it now; for any other moved
        module, a message saying where it went."""
        homes = " or ".join(MOVED[fullname])
        if fullname == "ranklens.cli":
            source = (
                "import sys\n"
                "print('ranklens.cli moved: run `ranklens ...` or `python -m ranklens ...`', "
                "file=sys.stderr)\n"
                "from ranklens.app.cli import main\n"
                "raise SystemExit(main())\n"
            )
        else:
            source = (
                f"raise SystemExit({fullname!r} + ' moved to {homes} and is not a command: "
                "run `ranklens --help` (or `python -m ranklens --help`)')\n"
            )
        return compile(source, f"<moved {fullname}>", "exec")

    def is_package(self, fullname: str) -> bool:
        return any(old.startswith(fullname + ".") for old in MOVED)


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
