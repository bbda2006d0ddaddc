"""What a declared parameter may hold: the kinds (:data:`KINDS`), number ranges
(:class:`Range`), one :class:`Option` per parameter with its check, its words and the values
it must refuse, and the error a refused value raises (:class:`ParameterError`)."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError, closest

_CLOSED = ("both", "left", "right", "neither")


class ParameterError(InputError, TypeError):
    """A parameter given a value its declaration does not allow: names the entry point, the
    parameter, what it takes and what it got (a ``ValueError`` and a ``TypeError``)."""


class UnknownParameterError(ParameterError):
    """A keyword that the entry point does not take; the message names the closest."""


@dataclass(frozen=True)
class Range:
    """The values a number may take: ``low`` to ``high`` (``None``: unbounded), each end
    included as ``closed`` says (``"both"``, ``"left"``, ``"right"`` or ``"neither"``), as
    scikit-learn's ``Interval``.

    >>> str(Range(0, 1, "neither")), str(Range(0, None)), 0.5 in Range(0, 1)
    ('(0, 1)', '>= 0', True)
    """

    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def __post_init__(self) -> None:
        if self.closed not in _CLOSED:
            raise ValueError(f"closed must be one of {', '.join(_CLOSED)}, got {self.closed!r}")

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and not (value >= self.low if left else value > self.low):
            return False
        return self.high is None or (value <= self.high if right else value < self.high)

    def __str__(self) -> str:
        lo, hi = (f"{x:g}" if x is not None else None for x in (self.low, self.high))
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if lo is not None and hi is not None:
            return f"{'[' if left else '('}{lo}, {hi}{']' if right else ')'}"
        if lo is not None:
            return f"{'>=' if left else '>'} {lo}"
        if hi is not None:
            return f"{'<=' if right else '<'} {hi}"
        return "any"

    def outside(self) -> list[float]:
        """Finite values just outside the range (for tests that walk every declaration)."""
        out: list[float] = []
        if self.low is not None:
            out.append(self.low - 1 if self.closed in ("both", "left") else self.low)
        if self.high is not None:
            out.append(self.high + 1 if self.closed in ("both", "right") else self.high)
        return out

    def sample(self, fraction: float) -> float:
        """A value inside the range at ``fraction`` (0 to 1) of the way from its low end
        (a bounded stand-in on an unbounded side); for tests that walk every range."""
        lo = self.low if self.low is not None else (self.high or 0) - 10.0
        hi = self.high if self.high is not None else lo + 10.0
        inner = min(max(fraction, 1e-3), 1 - 1e-3)
        return lo + (hi - lo) * inner


KINDS = ("number", "count", "flag", "choice", "text", "names", "mapping", "callable", "path",
         "data")  # fmt: skip
"""What a declared parameter holds: a real number, a whole number, a boolean, one of named
choices, a text, a list of texts (metric names, parameter names), a mapping, a callable, a
file or folder, or data (labels, runs, datasets: checked by the readers, declared here for
the documentation only)."""


@dataclass(frozen=True)
class Option:
    """One declared parameter. ``kind``: one of :data:`KINDS`; ``default``: its default (for
    the documentation; the function's own default is what runs); ``range``: a number's
    :class:`Range`; ``choices``: the words a ``choice`` takes; ``none``: ``None`` is allowed
    (meaning what ``description`` says); ``single``: a ``names`` option also takes one text
    as a list of one (never iterated by character); ``empty``: an empty text or list is
    allowed; ``also``: another declaration a value may satisfy instead (a number or a
    mapping of metric to number, say); ``check``/``rule``: a last predicate and its words
    (``rule`` is said in the message, ``"at most high"``); ``flag``: the command line's
    spelling when it is not ``--name-with-dashes``."""

    kind: str
    default: Any = None
    description: str = ""
    range: Range | None = None
    choices: tuple[str, ...] = ()
    none: bool = False
    single: bool = False
    empty: bool = False
    also: Option | None = None
    check: Callable[[Any], bool] | None = None
    rule: str = ""
    flag: str | None = None
    values: Option | None = None
    example: Any = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    # -- words -------------------------------------------------------------------------
    def allowed(self) -> str:
        """What the parameter takes, in words: ``"a whole number >= 2"``."""
        words = self._own_words()
        if self.also is not None:
            words += " or " + self.also.allowed()
        if self.none:
            words += " or None"
        return words

    def _own_words(self) -> str:
        k = self.kind
        if k in ("number", "count"):
            kind = "a whole number" if k == "count" else "a finite number"
            if self.range is not None and str(self.range) != "any":
                shown = str(self.range)
                kind = f"{kind} {'in ' if shown[0] in '[(' else ''}{shown}"
            return kind + (f", {self.rule}" if self.rule else "")
        if k == "flag":
            return "True or False"
        if k == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if k == "text":
            return "a text" if self.empty else "a non-empty text"
        if k == "names":
            what = "a list of texts" if self.empty else "a non-empty list of texts"
            return what + (" (or one text)" if self.single else "")
        if k == "mapping":
            inner = f" of {self.values._own_words()}" if self.values is not None else ""
            return ("a mapping" if self.empty else "a non-empty mapping") + inner
        if k == "callable":
            return "a callable"
        if k == "path":
            return "a path (str or os.PathLike)"
        return "data (see the description)"

    def summary(self, name: str) -> str:
        """One line for docstrings, ``--help`` and the reference."""
        text = f"{name}: {self.allowed()}"
        if self.default is not None and self.kind != "data":
            text += f", default {shown(self.default)}"
        return text + (f": {self.description}" if self.description else "")

    # -- checking ----------------------------------------------------------------------
    def validate(self, value: Any, name: str, where: str) -> Any:
        """``value`` (normalised: a number as float/int, a lone text as a list of one where
        ``single``) if the declaration allows it, else a :class:`ParameterError`."""
        if value is None and self.none:
            return None
        ok, out = self._accepts(value)
        if not ok and self.also is not None:
            ok, out = self.also._accepts(value)
        if not ok:
            raise self.refuse(name, value, where)
        return out

    def refuse(self, name: str, got: Any, where: str, hint: str = "") -> ParameterError:
        about = f" ({self.description})" if self.description else ""
        if not hint and self.kind == "choice" and isinstance(got, str):
            near = closest(got, self.choices)
            hint = f"; did you mean {near!r}?" if near else ""
        return ParameterError(
            f"{where}: {name} must be {self.allowed()}{about}, got {shown(got)}{hint}"
        )

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        k = self.kind
        if k in ("number", "count"):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                return False, None
            x = float(value)
            if not math.isfinite(x):
                return False, None
            if k == "count":
                if not x.is_integer():
                    return False, None
                return (
                    (self.range is None or x in self.range)
                    and (self.check is None or bool(self.check(x))),
                    int(x),
                )
            if self.range is not None and x not in self.range:
                return False, None
            if self.check is not None and not self.check(x):
                return False, None
            return True, x
        if k == "flag":
            if isinstance(value, bool) or type(value).__name__ == "bool_":
                return True, bool(value)
            return False, None
        if k == "choice":
            if isinstance(value, str) and value in self.choices:
                return True, value
            return False, None
        if k == "text":
            if isinstance(value, str) and (self.empty or value.strip()):
                return True, value
            return False, None
        if k == "names":
            if isinstance(value, str):
                if self.single and value.strip():
                    return True, [value]
                return False, None
            if not isinstance(value, Iterable) or isinstance(value, (bytes, Mapping)):
                return False, None
            items = list(value)
            if not items and not self.empty:
                return False, None
            if not all(isinstance(i, str) and i.strip() for i in items):
                return False, None
            return (self.check is None or self.check(items)), items
        if k == "mapping":
            if not isinstance(value, Mapping) or (not value and not self.empty):
                return False, None
            if self.values is not None:
                out = {}
                for key, v in value.items():
                    ok, out[key] = self.values._accepts(v)
                    if not ok:
                        return False, None
                return True, out
            return True, value
        if k == "callable":
            return callable(value), value
        if k == "path":
            if isinstance(value, (str, os.PathLike)) and str(os.fspath(value)).strip():
                return True, value
            return False, None
        return True, value  # data: the readers check it

    def parse(self, raw: str, name: str, where: str) -> Any:
        """The value of a command-line or environment text ``raw``, checked."""
        k = self.kind
        if self.none and raw.strip().lower() == "none":
            return None
        if k in ("number", "count"):
            try:
                value: Any = float(raw)
            except ValueError:
                if self.also is not None:
                    return self.validate(raw, name, where)
                raise self.refuse(name, raw, where) from None
            if k == "count" and value.is_integer():
                value = int(value)
            return self.validate(value, name, where)
        if k == "flag":
            low = raw.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise self.refuse(name, raw, where)
        if k == "names":
            return self.validate([p for p in raw.split(",")], name, where)
        return self.validate(raw, name, where)

    # -- for tests that walk every declaration ----------------------------------------
    def sample(self) -> Any:
        """A value the declaration allows (``example`` when given): what a test passes for
        this parameter while it probes another."""
        if self.example is not None:
            return self.example
        k = self.kind
        if k in ("number", "count"):
            x = (self.range or Range()).sample(0.5)
            if self.range is not None and self.range.low is not None and self.range.high is None:
                x = self.range.low + 1
            return round(x) if k == "count" else x
        return {
            "flag": False,
            "choice": self.choices[0] if self.choices else None,
            "text": "x",
            "names": ["x"],
            "mapping": {"x": 1},
            "callable": lambda *a, **k: None,
            "path": "x",
        }.get(k)

    def bad_values(self) -> list[Any]:
        """Values the declaration must refuse: the wrong type, NaN, infinities, outside the
        range, empty, a lone text where a list is expected."""
        k = self.kind
        out: list[Any] = []
        if k in ("number", "count"):
            out = ["1", float("nan"), float("inf"), float("-inf"), True, [1]]
            if k == "count":
                out.append(2.5)
            if self.range is not None:
                out += self.range.outside()
        elif k == "flag":
            out = ["yes", 2, None]
        elif k == "choice":
            out = ["no-such-choice", 1, [self.choices[0]] if self.choices else []]
        elif k == "text":
            out = [1, ["a"]] + ([] if self.empty else ["", "   "])
        elif k == "names":
            out = [1, [1]] + ([] if self.single else ["abc"]) + ([] if self.empty else [[]])
        elif k == "mapping":
            out = [1, "a", ["a"]] + ([] if self.empty else [{}])
        elif k == "callable":
            out = [1, "f"]
        elif k == "path":
            out = [1, ""]
        if self.none:
            out = [v for v in out if v is not None]
        refused = []
        for v in out:
            try:
                self.validate(v, "x", "probe")
            except ParameterError:
                refused.append(v)
        return refused


def shown(value: Any) -> str:
    """A value as a message shows it: ``'abc'``, ``1``, ``nan``, ``True``."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        exact = math.isfinite(value) and float(f"{value:g}") == value
        return f"{value:g}" if exact else repr(value)
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- constructors, one per kind ---------------------------------------------------------
def number(default: float | None, range: Range | None = None, description: str = "",
           **more: Any) -> Option:  # fmt: skip
    """A finite real number (NaN and infinities refused), within ``range`` if given."""
    return Option("number", default, description, range=range, **more)


def count(default: int | None, range: Range | None = None, description: str = "",
          **more: Any) -> Option:  # fmt: skip
    """A whole number (``2.5`` and ``True`` refused), within ``range`` if given."""
    return Option("count", default, description, range=range, **more)


def flag(default: bool | None, description: str = "", **more: Any) -> Option:
    """True or False (``"yes"``, ``1`` refused: a misspelled switch is never read as false)."""
    return Option("flag", default, description, **more)


def choice(default: str | None, choices: Sequence[str], description: str = "",
           **more: Any) -> Option:  # fmt: skip
    """One of ``choices`` (a misspelling names the closest)."""
    return Option("choice", default, description, choices=tuple(choices), **more)


def text(default: str | None, description: str = "", **more: Any) -> Option:
    """A text (non-empty unless ``empty=True``)."""
    return Option("text", default, description, **more)


def names(default: Any, description: str = "", **more: Any) -> Option:
    """A list of texts; a lone text is refused unless ``single=True`` (then a list of one)."""
    return Option("names", default, description, **more)


def mapping(default: Any, description: str = "", **more: Any) -> Option:
    """A mapping (non-empty unless ``empty=True``); ``values=``: the declaration of its values."""
    return Option("mapping", default, description, **more)


def function(description: str = "", **more: Any) -> Option:
    """A callable."""
    return Option("callable", None, description, **more)


def path(default: Any = None, description: str = "", **more: Any) -> Option:
    """A file or folder: a non-empty str or ``os.PathLike``."""
    return Option("path", default, description, **more)


def data(description: str = "", **more: Any) -> Option:
    """Data checked by the readers (labels, runs, a dataset): declared for the docs only."""
    return Option("data", None, description, **more)


PROBABILITY = Range(0, 1)
LEVEL = Range(0, 1, "neither")
POSITIVE = Range(0, None, "neither")
NONNEGATIVE = Range(0, None)
AT_LEAST_ONE = Range(1, None)


@dataclass(frozen=True)
class ItemsOption(Option):
    """A list whose every item is one of ``types`` (a text non-empty, ``True`` not a number)
    and, with ``item``, passes it (``item(x) -> (ok, normalised)``: whole-number grades,
    callables); ``words``: the items, for the message. A lone text is refused, never
    iterated, unless ``single`` (then a list of one); a mapping is refused."""

    types: tuple[type, ...] = (object,)
    item: Callable[[Any], tuple[bool, Any]] | None = None
    words: str = "items"

    def _own_words(self) -> str:
        what = "a list" if self.empty else "a non-empty list"
        return f"{what} of {self.words}" + (" (or one name)" if self.single else "")

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, str):
            if not (self.single and str in self.types and value.strip()):
                return False, None
            value = [value]
        if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
            return False, None
        out = []
        for x in value:
            if not isinstance(x, self.types) or (isinstance(x, str) and not x.strip()):
                return False, None
            if isinstance(x, bool) and bool not in self.types:
                return False, None
            if self.item is not None:
                ok, x = self.item(x)
                if not ok:
                    return False, None
            out.append(x)
        if not out and not self.empty:
            return False, None
        return (self.check is None or bool(self.check(out))), out


def items(default: Any, of: tuple[type, ...] = (object,), words: str = "items",
          description: str = "", **more: Any) -> ItemsOption:  # fmt: skip
    """A list of items of the types ``of`` (each passing ``item=`` when given)."""
    return ItemsOption("names", default, description, types=of, words=words, **more)


def renamed_option(option: Option, **changes: Any) -> Option:
    """``option`` with some fields changed (a different default, say)."""
    return replace(option, **changes)
