"""Every cross-reference resolves, with no compatibility layer: each Sphinx role in a
docstring of the core (``:func:`~.stats.paired_test```, ``:class:`ranklens.Report```, ...)
and each dotted ``ranklens.`` path written as code in README.md and docs/*.md names an object
that exists where it says, imported without a ``DeprecationWarning``. A rename that leaves a
stale reference behind fails here, whichever module or page it hides in."""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "src" / "ranklens"
ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):`~?([^`<>]+?)`")
DOC_PATH = re.compile(r"`(ranklens(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?`")
EXTERNAL = ("numpy", "np.", "scipy", "pandas", "pd.", "rich", "pyarrow", "ray", "mlflow",
            "opentelemetry", "concurrent", "asyncio", "json", "re.", "typing", "collections",
            "dataclasses", "pathlib", "datetime", "warnings", "logging", "sklearn", "ranx",
            "ir_measures", "pytrec_eval", "hashlib", "os.", "sys.", "math.", "functools",
            "itertools", "difflib", "statistics", "unicodedata", "random", "time.", "io.",
            "csv", "argparse", "importlib", "inspect", "threading", "queue", "enum",
            "llama_index", "langchain", "haystack", "bm25s", "tiktoken", "transformers",
            "pytest", "sentence_transformers", "polars", "ppi_py")  # fmt: skip


def _module_name(path: Path) -> str:
    parts = ("ranklens", *path.relative_to(CORE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import(name: str) -> object | None:
    """``name`` imported (a module, or an attribute chain of one), or None."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        except DeprecationWarning:
            return None  # served by a compatibility layer: stale
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _resolve(target: str, module: str, namespace: dict[str, object]) -> bool:
    target = target.strip().rstrip("()")
    if target.startswith(EXTERNAL) or target.split(".")[0] in dir(builtins):
        return True
    if target.startswith("."):  # relative to the module's package
        dots = len(target) - len(target.lstrip("."))
        base = module.split(".")
        is_pkg = (CORE / Path(*base[1:]) / "__init__.py").exists() if len(base) > 1 else True
        anchor = base if is_pkg else base[:-1]
        anchor = anchor[: len(anchor) - dots + 1] if dots > 1 else anchor
        return _import(".".join([*anchor, target.lstrip(".")])) is not None
    first = target.split(".")[0]
    if first in namespace:  # a name the module defines or imports
        obj = namespace[first]
        try:
            for attr in target.split(".")[1:]:
                obj = getattr(obj, attr)
            return True
        except AttributeError:
            return False
    if target.startswith("ranklens"):
        return _import(target) is not None
    return _import(f"ranklens.{target}") is not None or _import(f"{module}.{target}") is not None


def _docstring_references():
    for path in sorted(CORE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        texts = [ast.get_docstring(tree) or ""]
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                texts.append(ast.get_docstring(node) or "")
            elif (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):  # attribute docstrings
                texts.append(node.value.value)
        for target in sorted({t for text in texts for t in ROLE.findall(text)}):
            yield pytest.param(module, target, id=f"{module}:{target}")


@pytest.mark.parametrize("module,target", list(_docstring_references()))
def test_every_docstring_reference_resolves(module, target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = importlib.import_module(module)
    namespace = dict(vars(mod))
    # names of classes and functions of the module (a method's role names its class's members)
    for obj in list(namespace.values()):
        if isinstance(obj, type) and obj.__module__ == module:
            namespace.update({k: v for k, v in vars(obj).items() if not k.startswith("__")})
    assert _resolve(target, module, namespace), f"{module}: :role:`{target}` names nothing"


NOT_PYTHON = ("ranklens.adapters", "ranklens.renderers", "ranklens.hooks")
"""Names written like paths that are not Python objects: entry-point groups."""
METRIC_NAMES = ("ranklens.monitor.", "ranklens.window.", "ranklens.retrieval.", "ranklens.metric",
                "ranklens.signal")  # fmt: skip
"""Prefixes of the metric names the exporters write (docs/monitoring.md)."""


def _doc_paths():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        found = sorted(set(DOC_PATH.findall(page.read_text(encoding="utf-8"))))
        for target in found:
            if target in NOT_PYTHON or target.startswith(METRIC_NAMES):
                continue
            yield pytest.param(page.name, target, id=f"{page.name}:{target}")


@pytest.mark.parametrize("page,target", list(_doc_paths()))
def test_every_dotted_path_in_the_docs_resolves(page, target):
    assert _import(target) is not None, f"{page}: `{target}` names nothing (stale, or moved)"
