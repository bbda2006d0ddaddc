"""Use-case profiles as data: the built-in declarations hold together (every metric parses,
every target lies in its metric's range and names its source or says "rule of thumb",
every published value names its reference), docs/use-cases.md holds the table generated
from them, and user profiles come from Python, a TOML file and pyproject.toml, overriding
any target; bad declarations are errors naming the profile, file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ranklens
from ranklens.app.cli import main
from ranklens.errors import InputError
from ranklens.metrics import parse_metric
from ranklens.profiles import (
    BUILTIN,
    RULE_OF_THUMB,
    Profile,
    Target,
    get_profile,
    load_profiles,
    metric_range,
    profiles_reference,
    unregister_profile,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_built_in_profiles_cover_the_use_cases_and_cite_every_number():
    assert set(BUILTIN) == {"faq", "product-search", "research", "first-stage", "rag-context"}
    for p in BUILTIN.values():
        assert p.title and p.summary and p.targets, p.name
        assert all(m.why for m in p.metrics), p.name
        for t in p.targets:
            lo, hi = metric_range(parse_metric(t.metric))
            assert lo <= t.value <= hi and t.why and t.source
            assert t.rule_of_thumb == (t.source == RULE_OF_THUMB)
        for ty in p.typical:
            assert ty.source and ty.dataset and ty.system and 0 <= ty.value <= 1
    # the lead's published anchors: BEIR BM25 nDCG@10, MS MARCO dev MRR@10 BM25 and SPLADE++
    typical = {
        (t.metric, t.dataset, t.system): t.value for p in BUILTIN.values() for t in p.typical
    }
    assert typical[("ndcg@10", "BEIR TREC-COVID", "BM25")] == 0.656
    assert typical[("mrr@10", "MS MARCO passage dev (6,980 questions)", "BM25")] == 0.184


def test_the_docs_page_holds_the_table_generated_from_the_declarations():
    page = (ROOT / "docs" / "use-cases.md").read_text(encoding="utf-8")
    assert profiles_reference() in page, (
        "regenerate the profiles section: uv run python -m ranklens.app.reference use-cases"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (lambda: {"targets": [Target("ndcg@ten", 0.7)]}, "profile 'bad': target 'ndcg@ten'"),
        (lambda: {"targets": [Target("ndcg@10", 1.5)]}, "outside the metric's range [0, 1]"),
        (lambda: {"targets": [Target("P@5", -0.1)]}, "outside the metric's range"),
        (lambda: {"targets": [Target("num_rel", 3)]}, "aggregated as a sum"),
        (lambda: {"targets": [Target("P@1", 0.5), Target("P_1", 0.6)]}, "two targets for 'P_1'"),
        (lambda: {"targets": [Target("P@1", 0.5, op=">")]}, "Target: op must be one of '>='"),
        (lambda: {"targets": [Target("P@1", float("nan"))]}, "finite number"),
        (lambda: {"targets": [Target("P@1", 0.5, source=" ")]}, "source must be a non-empty"),
        (lambda: {"metrics": ["mrr@10", "MRR@10"]}, "named twice"),
    ],
)
def test_bad_declarations_are_errors_naming_the_profile_and_the_target(kwargs, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        Profile("bad", **kwargs())


def test_targets_are_overridden_in_python_and_kept_otherwise():
    faq = get_profile("faq")
    mine = faq.with_targets({"mrr@10": 0.85, "P@1": None, "unj@10": ("<=", 0.1)})
    assert str(mine.target("mrr@10")) == "mrr@10 >= 0.85"
    assert mine.target("mrr@10").why == faq.target("mrr@10").why
    assert mine.target("mrr@10").source == "set by the user"
    assert mine.target("P@1") is None and mine.target("success@5") == faq.target("success@5")
    assert str(mine.target("unj@10")) == "unj@10 <= 0.1" and "unj@10" in mine.metric_names
    assert Profile.from_dict(json.loads(json.dumps(mine.to_dict()))) == mine
    assert get_profile("faq", {"P@1": 0.8}).target("P@1").value == 0.8


def test_a_registered_python_profile_is_found_by_name():
    bot = Profile("support-bot", "Support bot", "one answer", targets=[Target("P@1", 0.75)])
    ranklens.register_profile(bot)
    try:
        with pytest.raises(InputError, match="registered already"):
            ranklens.register_profile(bot)
        assert get_profile("Support_Bot") is bot and "support-bot" in ranklens.all_profiles()
        ev = ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, profile="support-bot")
        assert [v.metric for v in ev.verdicts] == ["P@1"]
    finally:
        unregister_profile("support-bot")
    with pytest.raises(InputError, match="unknown profile 'support-bot'; known: faq"):
        get_profile("support-bot")


TOML = """
[profiles.support-bot]
extends = "faq"
title = "Support bot"
metrics = ["ndcg@5", { metric = "success@3", why = "the widget shows three" }]
notes = ["our own"]

[profiles.support-bot.targets]
"mrr@10" = 0.85
"P@1" = { at_least = 0.75, why = "the bot answers from its top hit", source = "support SLA" }
"success@5" = false
"unj@10" = { at_most = 0.1, why = "labels cover what we show" }

[profiles.faq.targets]
"mrr@10" = 0.9
"""


def test_a_toml_file_declares_profiles_that_extend_and_override(tmp_path):
    path = tmp_path / "profiles.toml"
    path.write_text(TOML)
    found = load_profiles(path)
    try:
        bot, _ = found
        assert bot.title == "Support bot" and bot.notes[-1] == "our own"
        assert bot.metric_names[:3] == ["mrr@10", "P@1", "success@5"]
        assert {"ndcg@5", "success@3", "unj@10"} <= set(bot.metric_names)
        assert str(bot.target("mrr@10")) == "mrr@10 >= 0.85"
        assert bot.target("mrr@10").source == f"set in {path}"
        assert bot.target("P@1").source == "support SLA" and bot.target("success@5") is None
        assert bot.target("unj@10").op == "<="
        # a table named like a built-in profile overrides its targets and keeps the rest
        assert get_profile("faq").target("mrr@10").value == 0.9
        assert get_profile("faq").target("P@1") == BUILTIN["faq"].target("P@1")
    finally:
        unregister_profile("support-bot")
        unregister_profile("faq")
    assert get_profile("faq") is BUILTIN["faq"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[profiles.x]\ntitel = "typo"\n', r"\[profiles.x\]: unknown key\(s\) titel"),
        ('[profiles.x]\nextends = "nope"\n', "extends 'nope', which is not a known profile"),
        ('[profiles.x.targets]\n"ndcg@10" = 7\n', r"\[profiles.x\]: .*outside the metric's range"),
        ('[profiles.x.targets]\n"nDCG@X" = 0.5\n', r"\[profiles.x\]: .*nDCG@X"),
        ('[profiles.x.targets]\n"P@1" = { least = 0.5 }\n', "unknown field"),
        ('[profiles.x.targets]\n"P@1" = "high"\n', "expected a number"),
        ("[profiles.x\n", "not valid TOML"),
        ("[other]\nx = 1\n", r"no \[profiles.NAME\] table"),
    ],
)
def test_bad_toml_is_an_error_naming_the_file_and_the_table(tmp_path, text, message):
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as err:
        load_profiles(path)
    assert str(path) in str(err.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_profiles(tmp_path / "absent.toml")


def test_pyproject_tool_table_is_read_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\n\n[tool.ranklens.profiles.rag-context]\n'
        'targets = { "recall@5" = 0.9 }\n'
    )
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    rag = get_profile("rag-context")
    assert rag.target("recall@5").value == 0.9 and rag.origin.endswith("pyproject.toml")
    assert rag.target("success@5") == BUILTIN["rag-context"].target("success@5")
    assert main(["profiles"]) == 0
    monkeypatch.chdir(ROOT)
    assert get_profile("rag-context") is BUILTIN["rag-context"]


def test_ranklens_profiles_lists_shows_and_exports(capsys, tmp_path):
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in BUILTIN) and "mrr@10 >= 0.8" in out
    assert main(["profiles", "research"]) == 0
    out = capsys.readouterr().out
    assert "recall@50 >= 0.9" in out and "rule of thumb" in out and "BEIR" in out
    assert main(["profiles", "faq", "--format", "json"]) == 0
    assert Profile.from_dict(json.loads(capsys.readouterr().out)) == BUILTIN["faq"]
    assert main(["profiles", "--format", "markdown"]) == 0
    assert capsys.readouterr().out == profiles_reference()
    path = tmp_path / "p.toml"
    path.write_text(TOML)
    try:
        assert main(["profiles", "--file", str(path)]) == 0
        assert "support-bot" in capsys.readouterr().out
    finally:
        unregister_profile("support-bot")
        unregister_profile("faq")
    assert main(["profiles", "nope"]) == 2
    assert "unknown profile 'nope'" in capsys.readouterr().err


def test_explain_use_case_says_which_metrics_fit_and_works_an_example(capsys):
    for name in BUILTIN:
        assert main(["explain", "--use-case", name]) == 0
        out = capsys.readouterr().out
        assert "Worked example" in out and "metrics (why)" in out
        assert "met" in out or "not yet known" in out
        assert all(t.metric in out for t in BUILTIN[name].targets)
    with pytest.raises(SystemExit):  # neither a metric nor a use case: a usage error
        main(["explain"])
    assert "explain needs --metric METRIC (or --use-case NAME)" in capsys.readouterr().err


def test_every_built_in_family_declares_whether_it_lies_in_0_1():
    """A family outside both sets would get plain t bounds: on 0/1 values (outdated@1,
    current@1) their interval is a point and a verdict 'met' after three queries. Checked
    in a fresh process: tests register toy families of their own."""
    import subprocess
    import sys

    code = (
        "from ranklens.metrics.registry import FAMILIES\n"
        "from ranklens.profiles.model import UNBOUNDED, UNIT_RANGE\n"
        "print(sorted(set(FAMILIES) - UNIT_RANGE - UNBOUNDED), sorted(UNIT_RANGE & UNBOUNDED),"
        " sorted((UNIT_RANGE | UNBOUNDED) - set(FAMILIES)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] [] []"


def test_a_freshness_rate_of_zeros_is_not_met_with_certainty():
    import ranklens

    versions = ranklens.Versions.from_chains({"g": ["old", "new"]})
    qrels = {f"q{i}": {"new": 1} for i in range(3)}
    run = {q: ["new", "x"] for q in qrels}
    ev = ranklens.evaluate(qrels, run, ["outdated@1"], versions=versions,
                           targets={"outdated@1": ("<=", 0.1)})  # fmt: skip
    verdict = ev.verdicts[0]
    assert verdict.status != "met" and verdict.upper > 0.5  # 3 queries: exact bound 0.63


def test_the_profiles_command_shows_a_user_profiles_text_as_text(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(
        '[profiles.x]\ntitle = "\\u001b[2Jgone"\nsummary = "\\u001b]8;;http://x\\u0007"\n'
    )
    try:
        for args in (["profiles", "--file", str(path)], ["profiles", "x", "--file", str(path)]):
            assert main(args) == 0
            out = capsys.readouterr().out
            assert "\x1b" not in out and "\x07" not in out and "\\x1b[2Jgone" in out
    finally:
        unregister_profile("x")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "P@1>=0.9", "--expected", "1", "--confidence", "0.3"],
         "argument --confidence: must be a finite number in (0.5, 1)"),
        (["plan", "P@1>=0.9", "--expected", "nan"], "argument --expected: must be a finite"),
        (["plan", "P@1>=0.9", "--expected", "1", "--power", "1"], "argument --power: must be"),
        (["plan", "P@1>=0.9", "--expected", "1", "--sd", "-1"], "argument --sd: must be"),
        (["evaluate", "q", "r", "--target-confidence", "2"], "argument --target-confidence"),
    ],
)  # fmt: skip
def test_profile_and_plan_flags_are_refused_by_name(capsys, args, message):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
