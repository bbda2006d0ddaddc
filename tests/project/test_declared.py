"""The common test over every public entry point (as scikit-learn's
``check_param_validation`` walks every estimator): each public callable declares its
parameters (:mod:`ranklens.declared`), every declared parameter refuses the values its
declaration excludes (the wrong type, NaN, infinities, out of range, empty, a lone text
where a list is expected) with a :class:`ParameterError` naming the entry point and the
parameter, before any work; a misspelled keyword names the closest; every default meets its
own declaration; and every command-line flag that takes a value is parsed by a declaration,
so a bad value exits 2 with the flag named, never a traceback.

A new public name, parameter or flag that is not declared fails here.
"""

from __future__ import annotations

import argparse
import inspect
import math

import pytest

import ranklens
from ranklens.declared import ParameterError, load_all

RECORDS = {
    # results and records ranklens builds and returns; users read them, never construct
    # them from loose values (their constructors take arrays already checked)
    "Qrels", "Run", "SpanLabels", "Judged", "Evaluation", "Report", "FusionTuning",
    "HoleRange", "LabelPool", "EstimateResult", "RunResult", "Retrieval", "SweepResult",
    "TargetVerdict", "Plan", "Reanchored", "Versions", "Snapshots", "Family", "Param",
    "Metric", "StageEvaluation", "StageLoss",
}  # fmt: skip
NOT_CALLABLE_ENTRIES = {"__version__", "stats"}
"""A version string, and the statistics module (whose functions are internal helpers)."""


def _public():
    out = {}
    for name in ranklens.__all__:
        obj = getattr(ranklens, name)
        if name in NOT_CALLABLE_ENTRIES:
            continue
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            continue
        out[name] = obj
    return out


PUBLIC = _public()
TABLES = load_all()


def _table(obj):
    """The table that checks ``obj``: its own, or the registered one whose target it is."""
    own = getattr(obj, "__declared__", None)
    if own is not None:
        return own
    return next((t for t in TABLES.values() if t.target is obj), None)


def _signature(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    sig = inspect.signature(inspect.unwrap(target))
    return {
        n: p
        for n, p in sig.parameters.items()
        if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


@pytest.mark.parametrize("name", sorted(set(PUBLIC) - RECORDS))
def test_every_public_callable_declares_every_parameter(name):
    obj = PUBLIC[name]
    if not _signature(obj):
        return  # takes nothing
    table = _table(obj)
    assert table is not None, (
        f"ranklens.{name} declares no parameters: give it a table (ranklens.declared.declare) "
        "and decorate it with @TABLE.checks"
    )
    missing = [p for p in _signature(obj) if p not in table.options]
    assert not missing, f"ranklens.{name}: parameters not declared: {missing}"


def test_records_are_not_user_constructed_entry_points():
    """The exemptions stay true: each is a class ranklens returns."""
    for name in RECORDS:
        assert inspect.isclass(PUBLIC[name]), name


def _cases():
    for where, table in sorted(TABLES.items()):
        if table.target is None:
            continue
        for param, option in table.options.items():
            for bad in option.bad_values():
                yield pytest.param(where, param, bad, id=f"{where}-{param}-{bad!r}"[:90])


def _call(table, **given):
    """Call the table's target with ``given`` and a valid sample for every other required
    declared parameter (data: None; validation runs before any work)."""
    target = table.target
    kwargs = {}
    for n, p in _signature(target).items():
        if n in given or p.default is not p.empty:
            continue
        option = table.options.get(n)
        kwargs[n] = None if option is None or option.kind == "data" else option.sample()
    args = []
    sig = _signature(target)
    for n, p in sig.items():  # positional-only parameters cannot be passed by name
        if p.kind is p.POSITIONAL_ONLY:
            args.append(given.pop(n) if n in given else kwargs.pop(n, None))
    return target(*args, **{**kwargs, **given})


@pytest.mark.parametrize("where,param,bad", list(_cases()))
def test_every_declared_parameter_refuses_what_it_excludes(where, param, bad):
    table = TABLES[where]
    with pytest.raises(ParameterError) as raised:
        _call(table, **{param: bad})
    message = str(raised.value)
    assert message.startswith(f"{where}:") and param in message, message


@pytest.mark.parametrize("where", sorted(w for w, t in TABLES.items() if t.target is not None))
def test_a_misspelled_keyword_names_the_closest(where):
    table = TABLES[where]
    sig = _signature(table.target)
    takes_any = any(
        p.kind is p.VAR_KEYWORD
        for p in inspect.signature(
            inspect.unwrap(table.target.__init__ if inspect.isclass(table.target) else table.target)
        ).parameters.values()
    )
    keyword = [n for n, p in sig.items() if p.kind is not p.POSITIONAL_ONLY and len(n) > 3]
    if takes_any or not keyword:
        pytest.skip("takes any keyword (passed on) or has no keyword to misspell")
    wrong = keyword[-1][:-1] + keyword[-1][-1] * 2
    with pytest.raises(ParameterError, match=rf"did you mean '{keyword[-1]}'"):
        _call(table, **{wrong: 1})


@pytest.mark.parametrize("where", sorted(w for w, t in TABLES.items() if t.target is not None))
def test_every_default_meets_its_declaration(where):
    table = TABLES[where]
    for name, p in _signature(table.target).items():
        option = table.options.get(name)
        if option is None or option.kind == "data" or p.default is p.empty:
            continue
        if type(p.default).__name__ == "_HAS_DEFAULT_FACTORY_CLASS":  # a dataclass factory
            continue
        if repr(p.default).startswith("<"):  # a sentinel: "not given" (a deprecated keyword)
            continue
        option.validate(p.default, name, where)  # raises if the default is not allowed


def _parsers():
    from ranklens.app.cli import _build_parser

    root = _build_parser()
    sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    return {name: parser for name, parser in sub.choices.items()}


def _value_flags():
    for command, parser in sorted(_parsers().items()):
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0 or action.choices is not None:
                continue
            if isinstance(action, argparse._HelpAction):
                continue
            yield command, action


def test_every_command_line_flag_with_a_value_is_declared():
    plain = [
        f"ranklens {command} {action.option_strings[-1]} "
        f"(type={getattr(action.type, '__name__', action.type)})"
        for command, action in _value_flags()
        if action.type in (int, float)
    ]
    assert not plain, "flags whose numbers no declaration checks:\n" + "\n".join(plain)


def _flag_cases():
    for command, action in _value_flags():
        option = getattr(action.type, "__declared__", None)
        if option is None:
            continue
        for bad in option.bad_values():
            if isinstance(bad, (list, dict, bool)) or bad is None:
                continue
            text = repr(bad) if isinstance(bad, float) and not math.isfinite(bad) else str(bad)
            try:  # "1" is a number on a command line: only texts the option refuses
                option.parse(text, "x", "probe")
                continue
            except ParameterError:
                pass
            yield pytest.param(command, action.option_strings[-1], text,
                               id=f"{command}-{action.option_strings[-1]}-{text}")  # fmt: skip


@pytest.mark.parametrize("command,flag,text", list(_flag_cases()))
def test_every_declared_flag_refuses_a_bad_value_naming_the_flag(command, flag, text, capsys):
    from ranklens.app.cli import main

    with pytest.raises(SystemExit) as raised:
        main([command, f"{flag}={text}", "--help-never-reached"])
    err = capsys.readouterr().err
    assert raised.value.code == 2
    assert f"argument {flag}" in err or flag in err, err
    assert "Traceback" not in err


def test_the_parameter_reference_is_generated_from_the_declarations():
    from pathlib import Path

    from ranklens.declared import reference

    page = Path(__file__).resolve().parents[2] / "docs" / "parameters.md"
    assert page.read_text(encoding="utf-8") == reference(), (
        "regenerate it: uv run python -m ranklens.declared > docs/parameters.md"
    )
