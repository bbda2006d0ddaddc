"""The kinds of parameter the monitoring room takes that :mod:`ranklens.declared` has no
kind for, each an :class:`~ranklens.declared.Option` (so validation, its message, the
docstrings and the reference derive from the declaration as everywhere): a duration
(``"30s"``, a ``timedelta``), a window (a duration or a count of retrievals), document
ids, callables, exporters, records, a list of bounded numbers, a choice with aliases and
a hit key. Each refuses a text where a list is expected, NaN and infinities, and says
what it takes.
"""

from __future__ import annotations

import itertools
import math
import numbers
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..capture import Retrieval, key_function
from ..declared import Option, ParameterError, Range, shown
from ..errors import InputError, closest

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)\s*$")
KEYS = ("id", "parent", "text", "text_hash", "meta.<field>", "metadata.<field>")


def _listlike(value: Any) -> bool:
    """An iterable that is a list of things: not a text, bytes or a mapping."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class _Probed(Option):
    """An option whose :meth:`bad_values` are its own candidates, kept where refused."""

    def candidates(self) -> list[Any]:
        return []

    def bad_values(self) -> list[Any]:
        out = []
        for v in self.candidates():
            if v is None and self.none:
                continue
            try:
                self.validate(v, "x", "probe")
            except ParameterError:
                out.append(v)
        return out


@dataclass(frozen=True)
class Duration(_Probed):
    """A span of time: ``"30s"``, ``"15m"``, ``"1h"``, ``"1d"``, ``"250ms"``, a
    ``timedelta`` or (``seconds=True``) a number of seconds; normalised to float seconds.
    ``retrievals=True``: a whole number (``int``) is instead a count of retrievals (kept as
    an int). ``positive``: more than 0 (else 0 allowed)."""

    kind: str = "text"
    seconds: bool = True
    retrievals: bool = False
    positive: bool = True

    def _own_words(self) -> str:
        forms = "'30s', '15m', '1h', '1d', '250ms'"
        forms += ", a timedelta or a number of seconds" if self.seconds else " or a timedelta"
        words = f"a duration ({forms}) {'> 0' if self.positive else '>= 0'}"
        if self.retrievals:
            words += ", or a whole number >= 1 (retrievals per window)"
        return words

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, bool):
            return False, None
        if self.retrievals and isinstance(value, numbers.Integral):
            return (int(value) >= 1), int(value)
        if isinstance(value, timedelta):
            secs = value.total_seconds()
        elif isinstance(value, str) and (m := _DURATION.match(value)):
            secs = float(m.group(1)) * _UNITS[m.group(2)]
        elif self.seconds and _real(value):
            secs = float(value)
        else:
            return False, None
        ok = math.isfinite(secs) and (secs > 0 if self.positive else secs >= 0)
        return ok, secs

    def candidates(self) -> list[Any]:
        return ["fortnight", "", "-5s", "0s", "1e9", float("nan"), float("inf"), -1.0, True,
                [1], 2.5, 0, timedelta(0), timedelta(seconds=-1), None]  # fmt: skip


@dataclass(frozen=True)
class Ids(_Probed):
    """Document ids: a list (any iterable but a text) of texts or whole numbers, or a
    mapping (its keys); normalised to a list of texts. ``positions``: ids or 0-based
    positions (whole numbers kept as ints)."""

    kind: str = "names"
    positions: bool = False

    def _own_words(self) -> str:
        what = "ids or 0-based positions" if self.positions else "document ids"
        words = f"{'a' if self.empty else 'a non-empty'} list of {what} (texts"
        return words + (
            " or whole numbers)" if self.positions else " or whole numbers) or a mapping"
        )

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, Mapping) and not self.positions:
            value = list(value)
        if not _listlike(value):
            return False, None
        items = list(value)
        if not items and not self.empty:
            return False, None
        out: list[Any] = []
        for item in items:
            if isinstance(item, str) and item.strip():
                out.append(item)
            elif isinstance(item, numbers.Integral) and not isinstance(item, bool):
                out.append(int(item) if self.positions else str(int(item)))
            else:
                return False, None
        return True, out

    def candidates(self) -> list[Any]:
        return [1, "abc", [], [None], [1.5], [""], [True], None]


@dataclass(frozen=True)
class Callables(_Probed):
    """One callable or a list (not a text) of callables; normalised to a list."""

    kind: str = "callable"

    def _own_words(self) -> str:
        return "a callable or a list of callables"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if callable(value):
            return True, [value]
        if not _listlike(value):
            return False, None
        items = list(value)
        return all(callable(f) for f in items), items

    def candidates(self) -> list[Any]:
        return [1, "f", [1], ["f"], {"f": print}, None]


@dataclass(frozen=True)
class Exporters(_Probed):
    """An exporter (an object with ``export(window, monitor)``, or a callable
    ``f(window)``) or a list (not a text) of them; normalised to a list."""

    kind: str = "callable"

    def _own_words(self) -> str:
        return (
            "an exporter (an object with export(window, monitor), or f(window)) or a list of them"
        )

    @staticmethod
    def _one(x: Any) -> bool:
        return callable(getattr(x, "export", None)) or callable(x)

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if self._one(value) and not isinstance(value, type):
            return True, [value]
        if not _listlike(value):
            return False, None
        items = list(value)
        return all(self._one(x) and not isinstance(x, type) for x in items), items

    def candidates(self) -> list[Any]:
        return [1, "x", [1], ["x"], {"a": 1}, [object()], None]


@dataclass(frozen=True)
class Records(_Probed):
    """Retrievals (:class:`~ranklens.Retrieval`): a list or any iterable of them (not a
    text, a mapping or one Retrieval alone). A list is checked whole; a lazy iterable as it
    is read (:func:`each_record`)."""

    kind: str = "names"

    def _own_words(self) -> str:
        return "an iterable of ranklens Retrieval records"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, Retrieval) or not _listlike(value):
            return False, None
        if isinstance(value, Sequence) and not all(isinstance(r, Retrieval) for r in value):
            return False, None
        return True, value

    def candidates(self) -> list[Any]:
        return ["abc", {"query": "q"}, 1.5, [1], [{"query": "q"}], ["abc"], None]


@dataclass(frozen=True)
class Group(_Probed):
    """A settings object: an instance of one of ``types`` (``spelled``: how a message says
    it, ``"a ranklens.Statistics"``), or also a callable when ``callables`` (a model judge
    given as its function)."""

    kind: str = "mapping"
    types: tuple[type, ...] = ()
    spelled: str = ""
    callables: bool = False

    def _own_words(self) -> str:
        return self.spelled + (" or a callable" if self.callables else "")

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, self.types):
            return True, value
        if self.callables and callable(value) and not isinstance(value, type):
            return True, value
        return False, None

    def candidates(self) -> list[Any]:
        return [1, "x", {"alpha": 0.1}, [1], None]


def each_record(records: Iterable[Any], where: str, name: str) -> Iterator[Retrieval]:
    """The records of ``records`` one by one; a :class:`ParameterError` naming the
    position at the first one that is not a :class:`~ranklens.Retrieval` (those before it
    were taken)."""
    if isinstance(records, Retrieval) or not _listlike(records):
        raise ParameterError(
            f"{where}: {name} must be an iterable of ranklens Retrieval records, got "
            f"{shown(records)}"
        )
    for i, rec in enumerate(records):
        if not isinstance(rec, Retrieval):
            raise ParameterError(
                f"{where}: {name}[{i}] must be a ranklens Retrieval (Retrieval.from_dict reads "
                f"a log line), got {type(rec).__name__} {shown(rec)}; the {i} before it were taken"
            )
        yield rec


@dataclass(frozen=True)
class Numbers(_Probed):
    """A non-empty list of finite numbers, each in ``each`` (a :class:`Range`), strictly
    increasing when ``increasing``; normalised to a tuple of floats."""

    kind: str = "number"
    each: Range | None = None
    increasing: bool = False

    def _own_words(self) -> str:
        shown_range = str(self.each) if self.each is not None else ""
        inside = (
            f" each {'in ' if shown_range[:1] in '[(' else ''}{shown_range}" if shown_range else ""
        )
        order = ", strictly increasing" if self.increasing else ""
        return f"a non-empty list of finite numbers{inside}{order}"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if not _listlike(value):
            return False, None
        items = list(value)
        if not items or not all(_real(x) and math.isfinite(float(x)) for x in items):
            return False, None
        out = tuple(float(x) for x in items)
        if self.each is not None and not all(x in self.each for x in out):
            return False, None
        if self.increasing and any(b <= a for a, b in itertools.pairwise(out)):
            return False, None
        return True, out

    def candidates(self) -> list[Any]:
        out: list[Any] = [1, "0.5", [], ["0.5"], [math.nan], [math.inf], [True], None]
        if self.each is not None:
            out += [[x] for x in self.each.outside()]
        if self.increasing:
            out.append([2.0, 1.0])
        return out


@dataclass(frozen=True)
class Aliased(_Probed):
    """One of ``choices`` (case and ``_``/``-`` ignored), or an alias of one."""

    kind: str = "choice"
    aliases: Mapping[str, str] = field(default_factory=dict)

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if not isinstance(value, str):
            return False, None
        low = value.strip().lower().replace("_", "-")
        found = low if low in self.choices else self.aliases.get(low)
        return found is not None, found

    def candidates(self) -> list[Any]:
        return ["no-such-choice", "", 1, [self.choices[0]], None]


@dataclass(frozen=True)
class Key(_Probed):
    """Which hit field identifies a document: ``"id"``, ``"parent"``, ``"meta.<field>"``,
    ``"text"``, ``"text_hash"`` or a function ``Hit -> id``."""

    kind: str = "text"

    def _own_words(self) -> str:
        return "one of " + ", ".join(repr(k) for k in KEYS) + " or a function Hit -> id"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if not (callable(value) or isinstance(value, str)):
            return False, None
        try:
            key_function(value)
        except InputError:
            return False, None
        return True, value

    def refuse(self, name: str, got: Any, where: str, hint: str = "") -> ParameterError:
        if not hint and isinstance(got, str):
            near = closest(got, ("id", "parent", "text", "text_hash", "meta.", "metadata."))
            hint = f"; did you mean {near!r}?" if near else ""
        return super().refuse(name, got, where, hint)

    def candidates(self) -> list[Any]:
        return ["idd", "", "meta.", 1, ["id"]]


def rule(where: str, name: str, allowed: str, got: Any) -> ParameterError:
    """A cross-parameter rule's refusal, in the declared message's shape."""
    return ParameterError(f"{where}: {name} must be {allowed}, got {shown(got)}")


# -- constructors, one per kind (as ranklens.declared's) ---------------------------------
def duration(default: Any, description: str = "", **more: Any) -> Duration:
    """A :class:`Duration`."""
    return Duration(default=default, description=description, **more)


def ids(default: Any, description: str = "", **more: Any) -> Ids:
    """An :class:`Ids`."""
    return Ids(default=default, description=description, **more)


def callables(default: Any, description: str = "", **more: Any) -> Callables:
    """A :class:`Callables`."""
    return Callables(default=default, description=description, **more)


def exporters(default: Any, description: str = "", **more: Any) -> Exporters:
    """An :class:`Exporters`."""
    return Exporters(default=default, description=description, **more)


def group(default: Any, types: tuple[type, ...], spelled: str, description: str = "",
          **more: Any) -> Group:  # fmt: skip
    """A :class:`Group`."""
    return Group(default=default, description=description, types=types, spelled=spelled,
                 **more)  # fmt: skip


def records(description: str = "", **more: Any) -> Records:
    """A :class:`Records`."""
    return Records(description=description, **more)


def numbers_list(default: Any, each: Range | None, description: str = "",
                 **more: Any) -> Numbers:  # fmt: skip
    """A :class:`Numbers`."""
    return Numbers(default=default, description=description, each=each, **more)


def aliased(default: str, choices: Sequence[str], aliases: Mapping[str, str],
            description: str = "", **more: Any) -> Aliased:  # fmt: skip
    """An :class:`Aliased` choice."""
    return Aliased(default=default, description=description, choices=tuple(choices),
                   aliases=dict(aliases), **more)  # fmt: skip


def key(default: Any, description: str = "", **more: Any) -> Key:
    """A :class:`Key`."""
    return Key(default=default, description=description, **more)
