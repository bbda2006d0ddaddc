"""The house keeps its shape: floors import only downward, no import cycles (lazy imports
inside functions count), long modules named (a guideline, not a rule: split along a real
seam, never to meet a count), no ``_private`` name imported from another
module, the core imports no framework or integration; and the recipes of
docs/architecture.md run as written."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

from ranklens.errors import MetricNameError

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "src" / "ranklens"
SOURCES = sorted(CORE.rglob("*.py")) + sorted(ROOT.glob("integrations/*/src/*/*.py"))

FLOORS = {
    "errors": 0,
    "declared": 0,
    "escape": 0,
    "settings": 0,
    "records": 0,
    "version": 0,
    "plugins": 0,
    "text": 0,
    "model": 1,
    "io": 2,
    "judging": 3,
    "metrics": 4,
    "evaluation": 5,
    "profiles": 5,
    "comparison": 6,
    "capture": 6,
    "render": 7,
    "fusion": 7,
    "labelling": 7,
    "sweeps": 8,
    "synthesis": 8,
    "estimation": 8,
    "stages": 8,
    "monitoring": 9,
    "app": 10,
    "__init__": 11,
    "__main__": 11,
}
FRAMEWORKS = ("llama_index", "langchain", "langchain_core", "haystack", "ranklens_")


def module_name(path: Path) -> str:
    if path.is_relative_to(CORE):
        parts = ("ranklens", *path.relative_to(CORE).with_suffix("").parts)
    else:
        parts = path.relative_to(path.parents[1]).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path) -> list[tuple[str, list[str], int]]:
    """``(absolute module, names, line)`` of every import in the file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = module_name(path)
    if path.name != "__init__.py":
        pkg = pkg.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = pkg.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            out.append((base, [a.name for a in node.names], node.lineno))
    return out


def _is_module(name: str) -> bool:
    """Whether ``name`` is a module or package of the core (``ranklens.declared``)."""
    parts = name.split(".")
    if parts[0] != "ranklens":
        return False
    base = CORE.joinpath(*parts[1:])
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def floor(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "ranklens":
        return None
    return FLOORS["__init__"] if len(parts) == 1 else FLOORS[parts[1]]


def test_every_core_module_has_a_floor():
    for path in CORE.rglob("*.py"):
        assert floor(module_name(path)) is not None, path


def test_floors_import_only_downward():
    bad = []
    for path in CORE.rglob("*.py"):
        mod = module_name(path)
        own = floor(mod)
        for target, names, line in imports(path):
            if target.startswith("ranklens.") or target == "ranklens":
                # "from . import stats" names a submodule: judge the deepest module named
                deepest = [f"{target}.{n}" for n in names if _is_module(f"{target}.{n}")]
                candidates = deepest or [target]
                theirs = max(floor(c) for c in candidates if floor(c) is not None)
                same_room = target.split(".")[:2] == mod.split(".")[:2]
                sideways = theirs == own and not same_room and own not in (0, FLOORS["__init__"])
                if theirs > own or sideways:
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, "imports that reach up or sideways:\n" + "\n".join(bad)


def test_the_core_imports_no_framework_and_no_integration():
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path in CORE.rglob("*.py")
        for target, _, line in imports(path)
        if target.startswith(FRAMEWORKS)
    ]
    assert not bad, "\n".join(bad)


def test_no_import_cycles():
    graph: dict[str, set[str]] = {}
    known = {module_name(p) for p in SOURCES}
    for path in SOURCES:
        deps = set()
        for target, names, _ in imports(path):
            for cand in [f"{target}.{n}" for n in names] + [target]:
                if cand in known:
                    deps.add(cand)
                    break
        graph[module_name(path)] = deps - {module_name(path)}
    # a package's __init__ re-exports its modules: an edge from a module to its own
    # package's __init__ is the import of a sibling, not a cycle
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for dep in graph.get(node, ()):
            if node.startswith(dep + "."):
                continue
            if state.get(dep) == 1:
                cycles.append(" -> ".join([*stack[stack.index(dep) :], dep]))
            elif dep not in state:
                visit(dep, [*stack, dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


LONG, TOO_LONG = 600, 1000
"""Past LONG lines a module is named in the test's output: look for a real seam (a module
squeezed under a number is worse than an honest long one). Past TOO_LONG it fails: no room
of this house has a job that large."""


def test_long_modules_are_named_not_failed(record_property):
    long = {
        str(p.relative_to(ROOT)): n
        for p in SOURCES
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LONG
    }
    for name, n in sorted(long.items()):
        warnings.warn(f"{name}: {n} lines; is there a seam to split along?", stacklevel=1)
    record_property("long_modules", long)
    assert not {k: n for k, n in long.items() if n > TOO_LONG}, "split along a real seam"


def test_no_private_name_is_imported_from_another_module():
    bad = []
    for path in SOURCES:
        for target, names, line in imports(path):
            private_module = any(
                part.startswith("_") and part not in ("__future__", "__init__", "__main__")
                for part in target.split(".")
            )
            private_names = [n for n in names if n.startswith("_") and n != "__version__"]
            if (private_module and target.split(".")[0] in ("ranklens",)) or (
                private_names and target.split(".")[0].startswith("ranklens")
            ):
                bad.append(f"{path.relative_to(ROOT)}:{line} from {target} import {names}")
    assert not bad, "\n".join(bad)


RECIPES = re.findall(
    r"```python\n(.*?)```", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"), re.S
)


def test_architecture_page_has_the_four_recipes():
    assert len(RECIPES) == 4


@pytest.mark.parametrize("code", RECIPES, ids=["metric", "file-format", "adapter", "renderer"])
def test_recipe_runs_as_written(code):
    from ranklens.metrics import FAMILIES, parse_metric, unregister_metric

    before = set(FAMILIES)
    try:
        exec(compile(code, "docs/architecture.md", "exec"), {"__name__": "architecture_recipe"})
    finally:  # a toy metric must not reach the generated reference page of later tests
        for name in set(FAMILIES) - before:
            unregister_metric(name)
    with pytest.raises(MetricNameError):
        parse_metric("hits@2")


def test_no_public_names_differ_only_by_case():
    import ranklens

    seen: dict[str, str] = {}
    for name in ranklens.__all__:
        assert name.lower() not in seen, (name, seen.get(name.lower()))
        seen[name.lower()] = name


def test_the_facade_exports_objects_not_modules():
    import inspect

    import ranklens

    modules = [n for n in ranklens.__all__ if inspect.ismodule(getattr(ranklens, n))]
    assert not modules, f"modules in ranklens.__all__ (import them from their floor): {modules}"


def test_no_compatibility_layer_for_names_never_published():
    """0.1 was never published: its module paths and names are not served."""
    import importlib

    import ranklens

    for old in ("ranklens.specs", "ranklens.hits", "ranklens.runner", "ranklens.judgments"):
        with pytest.raises(ImportError):
            importlib.import_module(old)
    for name in ("run", "Pool", "Estimate"):
        assert not hasattr(ranklens, name)


def test_the_tests_mirror_the_floors():
    """A room's tests are found from its path: ``tests/<room>/test_*.py`` for every room of
    ``src/ranklens`` (``tests/project/`` for the whole house: docs, packaging, types); the
    cases several rooms share stay beside them in ``tests/``."""
    tests = ROOT / "tests"
    rooms = {p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    for path in tests.rglob("test_*.py"):
        folder = path.relative_to(tests).parts[0]
        assert folder in rooms | {"project"}, f"{path.relative_to(ROOT)}: not in a room's folder"
        assert len(path.relative_to(tests).parts) == 2, path
    assert not list(tests.glob("test_*.py")), "tests/test_*.py: put each in its room's folder"
