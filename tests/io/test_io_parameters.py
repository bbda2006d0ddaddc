"""The readers' and writers' parameters are declared: a bad value is a ParameterError naming
the function and the parameter before any file is touched; a registered reader that
returns the wrong thing is named with its format."""

from __future__ import annotations

import pytest

import ranklens
from ranklens.declared import ParameterError
from ranklens.errors import InputError
from ranklens.io import formats as registered
from ranklens.io.formats import find_format


@pytest.mark.parametrize(
    ("call", "param"),
    [
        (lambda: ranklens.read_qrels(3), "path"),
        (lambda: ranklens.read_qrels(""), "path"),
        (lambda: ranklens.read_qrels(None), "path"),
        (lambda: ranklens.read_qrels("q.txt", subtopics="yes"), "subtopics"),
        (lambda: ranklens.read_run(["a.run"]), "path"),
        (lambda: ranklens.read_run("a.run", name=3), "name"),
        (lambda: ranklens.read_run("a.run", name=""), "name"),
        (lambda: ranklens.read_dataset(1.5), "path"),
        (lambda: ranklens.read_dataset("d", split=3), "split"),
        (lambda: ranklens.read_dataset("d", corpus=3), "corpus"),
        (lambda: ranklens.read_judgment_groups(None), "path"),
        (lambda: ranklens.write_qrels(ranklens.Qrels.from_dict({"q": {"d": 1}}), 3), "path"),
        (lambda: ranklens.write_run(ranklens.Run.from_dict({"q": ["d"]}), ""), "path"),
        (lambda: ranklens.write_run(ranklens.Run.from_dict({"q": ["d"]}), "r", name=3), "name"),
    ],
)
def test_a_bad_path_or_option_is_named(call, param):
    with pytest.raises(ParameterError, match=rf"^\w+: {param} must be"):
        call()


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"kind": "runs", "reader": print, "suffixes": (".x",)}, "kind"),
        ({"kind": 1, "reader": print, "suffixes": (".x",)}, "kind"),
        ({"kind": "run", "reader": "print", "suffixes": (".x",)}, "reader"),
        ({"kind": "run", "reader": None, "suffixes": (".x",)}, "reader"),
        ({"kind": "run", "reader": print, "suffixes": [1]}, "suffixes"),
        ({"kind": "run", "reader": print, "suffixes": 3}, "suffixes"),
        ({"kind": "run", "reader": print, "suffixes": ()}, "suffixes"),
        ({"kind": "run", "reader": print, "detect": "yes"}, "detect"),
        ({"kind": "run", "reader": print, "suffixes": (".x",), "name": 3}, "name"),
    ],
)
def test_register_format_refuses_what_is_no_format(kwargs, param):
    before = registered()
    with pytest.raises(ParameterError, match=rf"^register_format: {param} must be"):
        ranklens.register_format(**kwargs)
    assert registered() == before


def test_a_lone_suffix_is_one_suffix_never_its_characters(tmp_path):
    def reader(path, name=None):
        return ranklens.Run.from_dict({"q": ["d"]}, name=name or "r")

    fmt = ranklens.register_format("run", reader, suffixes=".onesuffix")
    try:
        assert fmt.suffixes == (".onesuffix",)
        assert find_format("run", tmp_path / "a.x") is not fmt  # not ".", "o", ...
    finally:
        _forget(fmt)


@pytest.mark.parametrize("made", [None, {"q": ["d"]}, "run", 3])
def test_a_reader_returning_no_run_is_named(made, tmp_path):
    fmt = ranklens.register_format("run", lambda path, name=None: made, suffixes=(".badrun",))
    try:
        (tmp_path / "a.badrun").write_text("x")
        with pytest.raises(InputError, match=r"a.badrun: the <lambda> reader .* not a Run"):
            ranklens.read_run(tmp_path / "a.badrun")
    finally:
        _forget(fmt)


def _forget(fmt):
    """Unregister ``fmt`` (a test's own format)."""
    import sys

    sys.modules["ranklens.io.formats"].__dict__["_FORMATS"].remove(fmt)
