"""Bad input to the runner ends as a named error before any query is asked, or as one
query's recorded failure (the run goes on): never a bare traceback, never a silent value."""

from __future__ import annotations

import asyncio
import warnings

import pytest

import ranklens
from ranklens import Hit
from ranklens.declared import ParameterError
from ranklens.errors import InputError

QUERIES = {"q1": "alpha", "q2": "beta"}


def _quiet(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ranklens.run_retriever(lambda q: ["d1", "d2"], QUERIES, progress=False, **kwargs)


@pytest.mark.parametrize(
    "config",
    [
        {"retriever": "bm25-v2", "k": 10},
        {"retriever": "bm25-v2"},
        {"retriever": 3, "key": "x", "fetch_k": [1, 2]},
        {"retriever": {"name": "nested"}},
        {"retriever": None},
    ],
)
def test_a_config_may_name_any_field_even_the_runner_s_own(config, tmp_path):
    res = _quiet(config=config, cache=tmp_path / "log.jsonl")
    assert res.run.to_lists() == {"q1": ["d1", "d2"], "q2": ["d1", "d2"]}
    # the runner's own fields stay its own; the config's facts are all kept (and hashed)
    assert isinstance(res.config["retriever"], dict) and res.config["k"] is None
    reserved = ("retriever", "k", "key", "fetch_k")
    assert res.config["config"] == {f: v for f, v in config.items() if f in reserved}
    assert all(res.config[f] == v for f, v in config.items() if f not in reserved)
    again = _quiet(config=config, cache=tmp_path / "log.jsonl")  # resumes its own log
    assert again.info["resumed"] == 2


def test_a_config_naming_the_retriever_names_the_run(tmp_path):
    assert _quiet(config={"retriever": "bm25-v2", "k": 10}).name == "bm25-v2"
    assert _quiet(config={"retriever": "bm25-v2"}, name="mine").name == "mine"
    # two configurations differing only in the named retriever never share a log
    _quiet(config={"retriever": "a"}, cache=tmp_path / "log.jsonl")
    with pytest.raises(InputError):
        _quiet(config={"retriever": "b"}, cache=tmp_path / "log.jsonl")


BAD_SETTINGS = [
    ("k", 0), ("k", float("nan")), ("k", 2.5), ("k", "10"), ("k", True),
    ("fetch_k", 0), ("fetch_k", float("inf")),
    ("concurrency", 0), ("concurrency", "8"), ("concurrency", float("nan")),
    ("timeout", 0), ("timeout", -1.0), ("timeout", float("nan")), ("timeout", float("inf")),
    ("retries", -1), ("retries", 1.5), ("backoff", -0.1), ("backoff", float("nan")),
    ("retry_on", "TimeoutError"), ("retry_on", ()), ("retry_on", (TimeoutError, 3)),
    ("key", 3), ("key", ""), ("key", "prent"), ("key", ["id"]),
    ("cache", 3), ("cache", ""), ("retry_failed", "no"), ("progress", "yes"),
    ("name", ""), ("name", 3), ("config", "bm25"), ("config", ["a"]), ("backend", "rya"),
]  # fmt: skip


@pytest.mark.parametrize(("param", "value"), BAD_SETTINGS)
def test_a_bad_setting_is_named_before_any_query_is_asked(param, value):
    asked = []

    def retriever(q):
        asked.append(q)
        return ["d1"]

    with pytest.raises(ParameterError, match=rf"^run_retriever: {param} must be"):
        ranklens.run_retriever(retriever, QUERIES, **{param: value})
    with pytest.raises(ParameterError, match=rf"^(arun_retriever|run_retriever): {param} must"):
        if param != "backend":
            asyncio.run(ranklens.arun_retriever(retriever, QUERIES, **{param: value}))
        else:
            raise ParameterError(f"run_retriever: {param} must be")
    assert asked == []


def test_a_misspelled_key_names_the_closest():
    with pytest.raises(ParameterError, match="did you mean 'parent'"):
        ranklens.run_retriever(lambda q: ["d1"], QUERIES, key="prent")


@pytest.mark.parametrize("qid", [None, 1.5, ("a",), ["a"], ""])
def test_a_query_id_that_is_no_id_is_named(qid):
    with pytest.raises(InputError, match="query id"):
        ranklens.run_retriever(lambda q: ["d1"], {qid: "x"} if not isinstance(qid, list)
                               else [(qid, "x")])  # fmt: skip


def _raising_generator(q):
    yield "d1"
    raise RuntimeError("the index went away")


@pytest.mark.parametrize(
    ("retriever", "message"),
    [
        (lambda q: [Hit("d1", "high")], "Hit: score must be a finite number or None"),
        (lambda q: [("d1", "high")], "score 'high' is not a number"),
        (lambda q: [("d1", float("nan"))], "score is NaN"),
        (lambda q: [Hit("d1", float("nan"))], "Hit: score must be a finite number or None"),
        (lambda q: [Hit("d1", 1.0, start=-2)], "Hit: start must be a whole number >= 0"),
        (lambda q: [Hit(["d1"], 1.0)], "Hit: id must be a text or a whole number"),
        (lambda q: [{"id": "d1", "score": [1]}], "is not a number"),
        (lambda q: [(["d1"], 1.0)], "id must be a text or a whole number, got list"),
        (lambda q: [{"id": {"x": 1}}], "id must be a text or a whole number, got dict"),
        (lambda q: [(1.5, 1.0)], "id must be a text or a whole number, got float"),
        (lambda q: None, "returned None"),
        (lambda q: {"d1": 1.0}, "returned dict"),
        (lambda q: "d1", "returned str"),
        (_raising_generator, "the index went away"),
        (lambda q: [object()], "expected a Hit"),
    ],
)
def test_a_bad_answer_is_that_query_s_recorded_failure(retriever, message):
    def answer(q):
        return retriever(q) if q == "alpha" else [Hit("d1", 1.0)]

    with pytest.warns(ranklens.errors.RunFailuresWarning):
        res = ranklens.run_retriever(answer, QUERIES, progress=False, retries=0)
    assert [r.query_id for r in res.failed] == ["q1"]
    assert message in res.failed[0].error["message"]
    assert res.run.to_lists() == {"q2": ["d1"]}  # the run went on


def test_a_numeric_text_score_is_read_as_its_number():
    res = ranklens.run_retriever(
        lambda q: [{"id": "d1", "score": "0.5"}, ("d2", "0.25")], {"q1": "x"}, progress=False
    )
    assert res.records[0].scores == [0.5, 0.25]


@pytest.mark.parametrize(
    ("param", "value"),
    [("key", 3), ("key", "prent"), ("max_records", 0), ("max_records", float("nan")),
     ("max_records", "10"), ("spill", 3), ("spill", ""), ("window", 0), ("window", 2.5),
     ("name", ""), ("name", None), ("metadata", "yes"), ("metadata", 1)],
)  # fmt: skip
def test_a_bad_recorder_setting_is_named(param, value):
    args = {"key": value} if param == "key" else {param: value}
    with pytest.raises(ParameterError, match=rf"^Recorder: {param} must be"):
        ranklens.Recorder(**args)


def test_register_adapter_refuses_what_is_no_plugin():
    from ranklens import AdapterPlugin, register_adapter

    with pytest.raises(ParameterError, match="register_adapter: plugin must be an AdapterPlugin"):
        register_adapter("tinyfw", lambda o: o)
    with pytest.raises(ParameterError, match=r"^AdapterPlugin: wrap must be a callable"):
        AdapterPlugin("tiny", lambda o: False, "wrap")
    with pytest.raises(ParameterError, match=r"^AdapterPlugin: demo must be a callable"):
        AdapterPlugin("tiny", lambda o: False, lambda o: o, demo=3)
    with pytest.raises(ParameterError, match="register_adapter: module must be"):
        register_adapter("", AdapterPlugin("tiny", lambda o: False, lambda o: o))


@pytest.mark.parametrize("value", [None, 3, b"abc"])
def test_text_hash_refuses_what_is_no_text(value):
    with pytest.raises(ParameterError, match="text_hash: text must be a text"):
        ranklens.text_hash(value)


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [({"score": "high"}, "score"), ({"score": float("nan")}, "score"),
     ({"score": float("inf")}, "score"), ({"score": True}, "score"), ({"id": 1.5}, "id"),
     ({"id": ["d"]}, "id"), ({"text": 3}, "text"), ({"parent": {"x": 1}}, "parent"),
     ({"start": -1}, "start"), ({"end": 2.5}, "end"), ({"metadata": "x"}, "metadata")],
)  # fmt: skip
def test_a_hit_checks_its_fields_when_made(kwargs, param):
    with pytest.raises(ParameterError, match=rf"^Hit: {param} must be"):
        Hit(**{"id": "d1", **kwargs})


def test_a_hit_names_a_misspelled_field():
    with pytest.raises(ParameterError, match="did you mean 'parent'"):
        Hit("c1", 1.0, parnet="d1")


def test_a_hit_keeps_its_usual_values():
    h = Hit("c1", 1, "text", None, "d1", 0, 4)
    assert (h.score, h.metadata, h.start, h.end) == (1.0, {}, 0, 4)
    assert Hit(7).id == 7 and Hit("c", -3.5).score == -3.5


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [({"name": ""}, "name"), ({"matches": 3}, "matches"), ({"wrap": None}, "wrap"),
     ({"bm25": "bm25"}, "bm25"), ({"interleave": 1}, "interleave")],
)  # fmt: skip
def test_an_adapter_plugin_checks_its_fields(kwargs, param):
    from ranklens import AdapterPlugin

    args = {"name": "tiny", "matches": lambda o: False, "wrap": lambda o: o, **kwargs}
    with pytest.raises(ParameterError, match=rf"^AdapterPlugin: {param} must be"):
        AdapterPlugin(**args)
