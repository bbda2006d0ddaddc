"""The tables: one :class:`Declared` per entry point (a function, a class, a command or a
file format), registered in :data:`DECLARED`. A table checks a call's values before any
work (:meth:`Declared.checks`), builds a command-line flag from a declaration
(:meth:`Declared.add_argument`), checks a settings file's values as written
(:meth:`Declared.check`) and writes its part of ``docs/parameters.md``
(:func:`reference`)."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import closest
from .kinds import Option, ParameterError, UnknownParameterError, shown

F = TypeVar("F", bound=Callable[..., Any])

DECLARED: dict[str, Declared] = {}
"""Every declared entry point by name: what the common test, the docs' parameter reference
and ``ranklens explain`` walk."""


@dataclass
class Declared:
    """The declared parameters of one entry point (a function, a class, a command or a
    file format). ``check(values)`` validates a dict of values; ``checks`` decorates a
    function so that every call is validated before any work; ``add_argument`` builds a
    command-line flag from a declaration; ``reference()`` is its part of the docs."""

    where: str
    options: dict[str, Option]
    doc: str = ""
    target: Any = field(default=None, repr=False)
    register: bool = field(default=True, repr=False)

    def __post_init__(self) -> None:
        if self.register:
            DECLARED[self.where] = self

    def __getitem__(self, name: str) -> Option:
        return self.options[name]

    def __contains__(self, name: object) -> bool:
        return name in self.options

    def check(self, values: Mapping[str, Any], where: str | None = None,
              unknown: str = "refuse") -> dict[str, Any]:  # fmt: skip
        """``values`` checked and normalised; a name not declared is refused with the
        closest (``unknown="refuse"``) or passed through (``"keep"``)."""
        at = where or self.where
        out: dict[str, Any] = {}
        for name, value in values.items():
            option = self.options.get(name)
            if option is None:
                if unknown == "keep":
                    out[name] = value
                    continue
                near = closest(name, self.options)
                hint = f"; did you mean {near!r}?" if near else ""
                raise ParameterError(
                    f"{at}: no parameter {name!r}{hint} (it takes: {', '.join(self.options)})"
                )
            out[name] = option.validate(value, name, at)
        return out

    def value(self, name: str, value: Any, where: str | None = None) -> Any:
        """One value checked: ``SWEEP.value("folds", folds)``."""
        return self.options[name].validate(value, name, where or self.where)

    def checks(self, fn: F) -> F:
        """Decorate a function, or a class (its ``__init__``; above ``@dataclass`` too):
        each call's declared arguments are checked before it runs (the normalised values
        are passed on); a keyword it does not take is refused naming the closest; its
        docstring gains the declared parameter lines."""
        if inspect.isclass(fn):
            setattr(fn, "__init__", self._wrap(fn.__init__))  # noqa: B010 - a class's own
            setattr(fn, "__declared__", self)  # noqa: B010
            fn.__doc__ = (fn.__doc__ or "") + self.doc_lines()
            self.target = fn
            return fn
        wrapper = self._wrap(fn)
        wrapper.__doc__ = (fn.__doc__ or "") + self.doc_lines()
        self.target = wrapper
        return wrapper  # type: ignore[return-value]

    def _wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)
        params = sig.parameters
        declared = [n for n in params if n in self.options and self.options[n].kind != "data"]
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        var_keyword = next((n for n, p in params.items() if p.kind is p.VAR_KEYWORD), None)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not takes_any:
                for key in kwargs:
                    if key not in params:
                        raise self._unknown(key, [n for n in params if n != "self"])
            try:
                bound = sig.bind_partial(*args, **kwargs)
            except TypeError:
                return fn(*args, **kwargs)  # Python's own message for a wrong call
            arguments = bound.arguments
            for name in declared:
                if name in arguments:
                    arguments[name] = self.options[name].validate(arguments[name], name, self.where)
            if takes_any:  # declared names that arrive through **kwargs are checked too
                extra = bound.kwargs if var_keyword is None else arguments.get(var_keyword, {})
                for name, value in list(extra.items()):
                    option = self.options.get(name)
                    if option is not None and option.kind != "data" and name not in params:
                        extra[name] = option.validate(value, name, self.where)
            return fn(*bound.args, **bound.kwargs)

        wrapper.__declared__ = self  # type: ignore[attr-defined]
        return wrapper

    def _unknown(self, key: str, known: Sequence[str]) -> ParameterError:
        near = closest(key, known)
        hint = f"; did you mean {near!r}?" if near else ""
        return UnknownParameterError(
            f"{self.where}: no parameter {key!r}{hint} (it takes: {', '.join(known)})"
        )

    def doc_lines(self) -> str:
        """The declared parameters as docstring lines."""
        lines = [f"    {o.summary(n)}" for n, o in self.options.items() if o.kind != "data"]
        return "\n\n    Declared parameters (checked on every call):\n\n" + "\n".join(lines) + "\n"

    def add_argument(self, parser: Any, name: str, *flags: str, **kwargs: Any) -> Any:
        """A command-line flag for ``name``: its value parsed and checked by the
        declaration (argparse says ``argument --folds: ...`` and exits 2), its help the
        description unless ``help=`` is given."""
        import argparse

        option = self.options[name]
        spelled = flags or (option.flag or "--" + name.replace("_", "-"),)
        where = f"{self.where} {spelled[0]}" if spelled[0].startswith("-") else self.where

        def parse(raw: str) -> Any:
            try:
                return option.parse(raw, spelled[0], where)
            except ParameterError as e:  # argparse says "argument --flag: " before it
                said = _after_colon(str(e), f"{where}: {spelled[0]} ")
                raise argparse.ArgumentTypeError(said.replace(" or None", " or 'none'")) from None

        parse.__name__ = option.kind
        parse.__declared__ = option  # type: ignore[attr-defined]
        kwargs.setdefault("help", _help(option))
        if option.kind == "flag" and "action" in kwargs:
            return parser.add_argument(*spelled, **kwargs)
        return parser.add_argument(*spelled, type=parse, **kwargs)

    def reference(self) -> str:
        """This entry point's part of ``docs/parameters.md``."""
        rows = ["| parameter | takes | default | meaning |", "| --- | --- | --- | --- |"]
        for n, o in self.options.items():
            if o.kind == "data":
                continue
            default = "" if o.default is None else shown(o.default)
            rows.append(f"| `{n}` | {o.allowed()} | {default} | {o.description} |")
        head = f"### `{self.where}`\n\n" + (self.doc + "\n\n" if self.doc else "")
        return head + "\n".join(rows) + "\n"


def _after_colon(message: str, prefix: str) -> str:
    return message[len(prefix) :] if message.startswith(prefix) else message


def _help(option: Option) -> str:
    text = option.description or ""
    extra = option.allowed()
    default = "" if option.default is None else f"; default {shown(option.default)}"
    return f"{text} ({extra}{default})".strip().replace("%", "%%")


def declare(
    where: str, options: Mapping[str, Option], doc: str = "", register: bool = True
) -> Declared:
    """The table of ``where``'s parameters (registered in :data:`DECLARED` unless
    ``register=False``: an example, a test's own table)."""
    return Declared(where, dict(options), doc, register=register)


def extend(base: Declared, where: str, **more: Option) -> Declared:
    """A table that shares ``base``'s declarations and adds (or replaces) some."""
    return Declared(where, {**base.options, **more}, base.doc)


def reference() -> str:
    """``docs/parameters.md`` as generated from every table (the docs test compares)."""
    head = (
        "# Parameters\n\n"
        "Every public parameter of ranklens, declared once in the code "
        "(`ranklens.declared`): this page, the checks on every call, the command line's "
        "`--help` and the TOML keys are generated from the same declarations. A value "
        "outside what a parameter takes is a `ParameterError` naming the entry point, "
        "the parameter, what it takes and what it got.\n\n"
        "<!-- generated by: python -m ranklens.declared > docs/parameters.md -->\n\n"
    )
    return head + "\n".join(DECLARED[w].reference() for w in sorted(DECLARED))


def load_all() -> dict[str, Declared]:
    """Every table: each module of ranklens imported (tables register as their module
    imports; optional extras stay lazy)."""
    import importlib
    import pkgutil

    here = os.path.dirname(os.path.dirname(__file__))  # the ranklens package
    for info in pkgutil.walk_packages([here], "ranklens."):
        if info.name.rpartition(".")[2] != "__main__":
            importlib.import_module(info.name)
    return DECLARED
