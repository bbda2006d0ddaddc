"""Bad input to compare, reports, targets, profiles, snapshots and versions ends as a named
error (the entry point, the parameter, what it takes, what it got), never as a bare
traceback or a silent default: every declared parameter of these tables is walked with the
values its declaration must refuse, through the public callable."""

from __future__ import annotations

import json
import math
import re

import pytest

import ranklens
from ranklens.app.cli import main
from ranklens.declared import DECLARED, ParameterError
from ranklens.errors import InputError

QRELS = {"q1": ["a"], "q2": ["b"], "q3": ["c"]}
RUN_A = {"q1": ["a"], "q2": ["x"], "q3": ["c"]}
RUN_B = {"q1": ["a"], "q2": ["b"], "q3": ["y"]}
RUNS = {"a": RUN_A, "b": RUN_B}
SNAPS = {"s1": RUNS, "s2": {"a": RUN_B, "b": RUN_A}}
CHAIN = [
    {"doc_id": "a", "group": "g", "valid_from": "2024-01-01"},
    {"doc_id": "b", "group": "g", "valid_from": "2025-01-01", "supersedes": "a"},
]


def _report():
    return ranklens.compare(
        QRELS,
        RUNS,
        ["P@1"],
        stats=ranklens.Statistics(n_resamples=50),
        contents=ranklens.ReportContents(curves=False),
    )


def _snapshots():
    return ranklens.compare_snapshots(
        QRELS, SNAPS, ["P@1"], stats=ranklens.Statistics(n_resamples=50)
    )


def _profile(**kw):
    return ranklens.Profile("p", **kw)


CALLS = {
    "compare": lambda **kw: ranklens.compare(QRELS, RUNS, **{"metrics": ["P@1"], **kw}),
    "evaluate": lambda **kw: ranklens.evaluate(
        QRELS, RUN_A, **{"metrics": ["P@1"], "targets": {"P@1": 0.5}, **kw}
    ),
    "compare_snapshots": lambda **kw: ranklens.compare_snapshots(
        QRELS, kw.pop("snapshots", SNAPS), **{"metrics": ["P@1"], **kw}
    ),
    "Snapshots.tau": lambda **kw: _snapshots().tau(**{"a": "s1", "b": "s2", "metric": "P@1", **kw}),
    "Snapshots.save": lambda **kw: _snapshots().save(**kw),
    "Report.to_text": lambda **kw: _report().to_text(**kw),
    "Report.print": lambda **kw: _report().print(**kw),
    "Report.to_markdown": lambda **kw: _report().to_markdown(**kw),
    "Report.to_latex": lambda **kw: _report().to_latex(**kw),
    "Report.to_csv": lambda **kw: _report().to_csv(**kw),
    "Report.to_pandas": lambda **kw: _report().to_pandas(**kw),
    "Report.to_html": lambda **kw: _report().to_html(**kw),
    "Report.to_json": lambda **kw: _report().to_json(**kw),
    "Report.render": lambda **kw: _report().render(**kw),
    "load_report": lambda **kw: ranklens.load_report(**kw),
    "plan_queries": lambda **kw: ranklens.plan_queries(**{"targets": "P@1 >= 0.5", **kw}),
    "Profile": lambda **kw: ranklens.Profile(**{"name": "p", **kw}),
    "Target": lambda **kw: ranklens.Target(**{"metric": "P@1", "value": 0.5, **kw}),
    "Typical": lambda **kw: ranklens.Typical(
        **{"metric": "P@1", "value": 0.5, "system": "s", "dataset": "d", "source": "r", **kw}
    ),
    "MetricUse": lambda **kw: ranklens.MetricUse(**{"metric": "P@1", **kw}),
    "get_profile": lambda **kw: ranklens.get_profile(**{"value": "faq", **kw}),
    "register_profile": lambda **kw: ranklens.register_profile(_profile(), **kw),
    "unregister_profile": lambda **kw: ranklens.profiles.unregister_profile(**kw),
    "load_profiles": lambda **kw: ranklens.load_profiles(**kw),
    "Versions.from_records": lambda **kw: ranklens.Versions.from_records(CHAIN, **kw),
    "Versions.from_chains": lambda **kw: ranklens.Versions.from_chains(
        **{"chains": {"g": ["a", "b"]}, **kw}
    ),
    "read_versions": lambda **kw: ranklens.read_versions(**{"path": "absent.jsonl", **kw}),
    "FreshnessRule": lambda **kw: ranklens.judging.freshness_rules.FreshnessRule(**kw),
    "holes": lambda **kw: ranklens.holes(QRELS, RUN_A, **{"metrics": ["P@1"], **kw}),
    "HoleRange.worst_queries": lambda **kw: ranklens.holes(QRELS, RUN_A, ["P@1"]).worst_queries(
        **kw
    ),
    "power": lambda **kw: ranklens.power(_report(), **kw),
    "pool": lambda **kw: ranklens.pool(QRELS, RUNS, **kw),
    "LabelPool.from_jsonl": lambda **kw: ranklens.LabelPool.from_jsonl(**kw),
    "LabelPool.to_jsonl": lambda **kw: ranklens.pool(QRELS, RUNS).to_jsonl(**kw),
    "agreement": lambda **kw: ranklens.agreement(QRELS, QRELS, **kw),
    "judging_page": lambda **kw: ranklens.judging_page(ranklens.pool(QRELS, RUNS), **kw),
    "read_judgments": lambda **kw: ranklens.read_judgments(**{"path": "absent.jsonl", **kw}),
    "rescore": lambda **kw: ranklens.rescore(QRELS, QRELS, RUNS, **kw),
    "register_renderer": lambda **kw: ranklens.register_renderer(
        **{"name": "x", "fn": print, **kw}
    ),
    "ReportContents": lambda **kw: ranklens.comparison.ReportContents(**kw),
    "Snapshots": None,  # data only
    "all_profiles": None,  # no parameter
    "ranklens check-labels": None,
    "ranklens snapshots": None,
    "ranklens freshness options": None,
}
"""Each table here and the public callable its parameters reach (None: a command line's
flags, walked by the command-line tests)."""


def _cases():
    import ranklens.app.check_labels_cli
    import ranklens.app.freshness_cli
    import ranklens.app.snapshots_cli
    import ranklens.comparison
    import ranklens.comparison.planner
    import ranklens.io.versions
    import ranklens.judging.freshness_rules
    import ranklens.profiles  # noqa: F401

    for where, call in CALLS.items():
        if call is None:
            continue
        table = DECLARED[where]
        for name, option in table.options.items():
            for bad in option.bad_values():
                yield pytest.param(call, where, name, bad, id=f"{where}-{name}-{bad!r}")


@pytest.mark.parametrize(("call", "where", "name", "bad"), list(_cases()))
def test_every_declared_parameter_refuses_what_its_declaration_refuses(call, where, name, bad):
    with pytest.raises(ParameterError, match=rf"{where.split('.')[-1]}\b.*\b{name}\b") as err:
        call(**{name: bad})
    assert "got" in str(err.value)


def test_every_table_here_is_walked():
    """Every table declared in the modules of this part of ranklens has a call here."""
    import inspect

    here = ("ranklens.comparison", "ranklens.profiles", "ranklens.labelling",
            "ranklens.model.versions", "ranklens.io.versions", "ranklens.judging.freshness_rules",
            "ranklens.app.snapshots_cli", "ranklens.app.profiles_cli", "ranklens.app.freshness_cli",
            "ranklens.app.labelling_cli", "ranklens.app.check_labels_cli")  # fmt: skip
    mine = set()
    for where, table in DECLARED.items():
        target = table.target
        module = inspect.getmodule(target) if target is not None else None
        if module is not None and module.__name__.startswith(here):
            mine.add(where)
    assert set(CALLS) <= set(DECLARED)
    # the gate's tables are the gate's (tests/comparison/test_gate*.py)
    theirs = ("gate", "GateRule", "assess")  # the gate's and the model judges' own tests
    assert {w for w in mine if not w.startswith(theirs)} <= set(CALLS)


# -- targets: a list of texts is read, never a bare traceback ----------------------------
def test_targets_as_texts_are_read_in_evaluate_and_compare():
    ev = ranklens.evaluate(QRELS, RUN_A, targets=["P@1 >= 0.5"])
    assert [str(v.metric) for v in ev.verdicts] == ["P@1"]
    one = ranklens.evaluate(QRELS, RUN_A, targets="mrr@10>=0.5")
    assert one.verdicts[0].metric == "mrr@10" and one.verdicts[0].target == 0.5
    rep = ranklens.compare(
        QRELS, RUNS, ["P@1"], targets=["P@1 <= 0.9"], stats=ranklens.Statistics(n_resamples=50)
    )
    assert rep.metadata["targets"]["profile"]["targets"][0]["op"] == "<="


@pytest.mark.parametrize(
    "targets",
    [["mrr=>0.5"], ["P@1 >= 1e"], ["P@1 >= nan"], ["nope@10 >= 0.5"], [5], ["P@1>=0.5", "P_1>=.6"],
     5, 0.5, {"P@1": float("nan")}, {"P@1": "high"}, {"P@1": (">", 0.5)}],
)  # fmt: skip
def test_bad_targets_are_named_errors(targets):
    for call in (
        lambda: ranklens.evaluate(QRELS, RUN_A, targets=targets),
        lambda: ranklens.compare(
            QRELS, RUNS, ["P@1"], targets=targets, stats=ranklens.Statistics(n_resamples=50)
        ),
        lambda: ranklens.get_profile("faq", targets),
        lambda: ranklens.plan_queries(targets, expected=0.9),
    )[
        : 3 if isinstance(targets, list) and len(targets) == 2 else 4
    ]:  # (two plans for one metric are two questions)
        with pytest.raises(InputError, match="target"):
            call()


# -- profiles: a lone name is a list of one; wrong types in files are named --------------
def test_a_profiles_metrics_given_as_one_name_are_that_name(tmp_path):
    assert ranklens.Profile("x", metrics="ndcg@10").metric_names == ["ndcg@10"]
    assert ranklens.Profile("x", notes="one note").notes == ("one note",)
    path = tmp_path / "p.toml"
    path.write_text('[profiles.one]\nmetrics = "ndcg@10"\nnotes = "a note"\n')
    (found,) = ranklens.load_profiles(path)
    try:
        assert found.metric_names == ["ndcg@10"] and found.notes == ("a note",)
    finally:
        ranklens.profiles.unregister_profile("one")
    back = ranklens.Profile.from_dict({"name": "y", "metrics": ["P@1"]})
    assert back.metric_names == ["P@1"]


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("title = 1", "title"),
        ("summary = [1]", "summary"),
        ("metrics = 5", "metrics"),
        ("metrics = [5]", "metrics"),
        ('metrics = [""]', "metrics"),
        ("notes = 3", "notes"),
        ("notes = [1]", "notes"),
        ("targets = 5", "targets"),
        ("typical = [1]", "typical"),
        ("typical = 1", "typical"),
        ("extends = 1", "extends"),
        ('typical = [{ metric = "P@1", value = nan, system = "s", dataset = "d", source = "r" }]',
         "value"),
        ('typical = [{ metric = "P@1", value = "0.5", system = "s", dataset = "d", source = "r" }]',
         "value"),
        ('typical = [{ metric = "P@1", value = 0.5, system = "s", dataset = "d", sauce = "r" }]',
         "sauce"),
        ('targets = { "P@1" = nan }', "finite number"),
        ('targets = { "P@1" = inf }', "finite number"),
        ('targets = { "P@1" = { at_least = "0.5" } }', "finite number"),
        ('targets = { "P@1" = { at_least = 0.5, op = ">" } }', "op"),
        ('titel = "x"', "did you mean 'title'"),
    ],
)  # fmt: skip
def test_wrong_types_in_a_profiles_file_are_named(tmp_path, body, key):
    path = tmp_path / "p.toml"
    path.write_text(f"[profiles.x]\n{body}\n")
    with pytest.raises(InputError, match=key) as err:
        ranklens.load_profiles(path)
    assert str(path) in str(err.value) and "[profiles.x]" in str(err.value)


@pytest.mark.parametrize(
    "data",
    [{}, {"title": "no name"}, {"name": "x", "metrics": "P@1x"}, {"name": "x", "metrics": [1]},
     {"name": "x", "targets": [{"metric": "P@1", "valu": 0.5}]}, {"name": "x", "colour": 1}, 5],
)  # fmt: skip
def test_a_bad_profile_mapping_is_named(data):
    with pytest.raises(InputError):
        ranklens.get_profile(data)


def test_a_misspelled_profile_names_the_closest():
    with pytest.raises(ParameterError, match="unknown profile 'fqa'; did you mean 'faq'"):
        ranklens.get_profile("fqa")


# -- compare, reports, snapshots ---------------------------------------------------------
@pytest.mark.parametrize("runs", ["abc", b"abc", 5, RUN_A["q1"][0], None])
def test_runs_that_are_not_a_mapping_or_a_list_are_refused_never_iterated(runs):
    with pytest.raises(ParameterError, match="compare: runs must be"):
        ranklens.compare(QRELS, runs, ["P@1"])


def test_a_misspelled_baseline_names_the_closest():
    with pytest.raises(ParameterError, match=r"baseline must be one of .*got 'aa'"):
        ranklens.compare(QRELS, {"aa1": RUN_A, "b": RUN_B}, ["P@1"], baseline="aa")


def test_writing_into_a_missing_folder_is_named(tmp_path):
    rep = _report()
    target = tmp_path / "absent" / "r.json"
    for call in (rep.save, rep.to_json, rep.to_csv, rep.to_html, _snapshots().save):
        with pytest.raises(InputError, match="folder does not exist"):
            call(target)


def test_snapshots_need_two_systems_and_name_an_unknown_pair():
    one = {"a": RUN_A}
    with pytest.raises(ParameterError, match="two or more systems"):
        ranklens.compare_snapshots(QRELS, {"s1": one, "s2": one}, ["P@1"])
    snaps = _snapshots()
    with pytest.raises(ParameterError, match=r"a must be one of 's1', 's2', got 's3'"):
        snaps.tau("s3", "s2", "P@1")
    with pytest.raises(ParameterError, match=r"metric must be one of 'P@1', got 'P@2'"):
        snaps.tau("s1", "s2", "P@2")
    with pytest.raises(ParameterError, match="a must be a snapshot before b"):
        snaps.tau("s2", "s1", "P@1")


@pytest.fixture
def snapshot_argv(tmp_path):
    qrels = tmp_path / "qrels.txt"
    ranklens.io.write_qrels(ranklens.Qrels.from_dict(QRELS), qrels)
    argv = ["snapshots", str(qrels)]
    for snap, runs in SNAPS.items():
        argv += ["--snapshot", snap]
        for system, run in runs.items():
            path = tmp_path / f"{snap}-{system}.txt"
            ranklens.io.write_run(ranklens.Run.from_dict(run), path)
            argv.append(f"{system}={path}")
    return [*argv, "-m", "P@1"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--resamples", "0"], "argument --resamples: must be a whole number >= 1"),
        (["--resamples", "2.5"], "argument --resamples: must be a whole number"),
        (["--resamples", "many"], "argument --resamples: must be a whole number"),
        (["--confidence", "2"], "argument --confidence: must be a finite number in (0, 1)"),
        (["--confidence", "nan"], "argument --confidence: must be a finite number in (0, 1)"),
        (["--confidence", "inf"], "argument --confidence: must be a finite number in (0, 1)"),
        (["--seed", "-1"], "argument --seed: must be a whole number >= 0"),
    ],
)
def test_snapshots_command_refuses_bad_flags_by_name(snapshot_argv, capsys, flags, message):
    with pytest.raises(SystemExit) as exit_:
        main([*snapshot_argv, *flags])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_snapshots_command_names_a_json_file_in_a_missing_folder(snapshot_argv, capsys, tmp_path):
    target = tmp_path / "absent" / "s.json"
    assert main([*snapshot_argv, "--resamples", "50", "--json", str(target)]) == 2
    assert "the folder of" in capsys.readouterr().err and not target.exists()
    ok = tmp_path / "s.json"
    assert main([*snapshot_argv, "--resamples", "50", "--json", str(ok), "--format", "none"]) == 0
    assert json.loads(ok.read_text())["settings"]["n_resamples"] == 50


# -- versions and as-of times ------------------------------------------------------------
@pytest.mark.parametrize(
    "as_of",
    [math.nan, None, "", "  ", float("inf"), {"q1": math.nan}, {"q1": None}, {"q1": ""}],
)
def test_an_as_of_time_that_is_missing_or_not_finite_is_named(as_of):
    versions = ranklens.Versions.from_records(CHAIN)
    kwargs = {"as_of": as_of}
    if as_of is None:  # as_of=None is "not given"; a None inside the mapping is refused
        kwargs = {"as_of": {"q1": None}}
    with pytest.raises(InputError, match=r"as_of"):
        ranklens.evaluate({"q1": {"b": 1}}, {"q1": ["a", "b"]}, ["P@1"], versions=versions,
                          **kwargs)  # fmt: skip


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ranklens.Versions.from_records("abc"), "records must be a list of mappings"),
        (lambda: ranklens.Versions.from_records({"a": {}}), "records must be a list of mappings"),
        (lambda: ranklens.Versions.from_records(CHAIN, tim="x"), "did you mean 'time'"),
        (lambda: ranklens.Versions.from_chains({"g": "ab"}), "chain 'g' must list"),
        (lambda: ranklens.Versions.from_chains(["a", "b"]), "chains must be a"),
        (lambda: ranklens.Versions.from_metadata({"a": {"t": 1}}, tme="t"), "did you mean"),
        (lambda: ranklens.Versions.from_records(CHAIN, unlisted="curent"),
         "did you mean 'current'"),
    ],
)  # fmt: skip
def test_bad_versions_arguments_are_named(call, message):
    with pytest.raises(InputError, match=message):
        call()


# -- user text in every output here is shown as text ---------------------------------------
HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "a|b",
    "*x* _y_ [l](http://x)",
    "\x1b[31mred",
    "line\nbreak",
]


def _live_markdown(text: str) -> list[str]:
    """Markup a Markdown renderer would act on: an unescaped ``<``, or a table row whose
    unescaped ``|`` split it into another number of cells than its table's header."""
    live = re.findall(r"(?<!\\)<", text)
    tables: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("|"):
            if not tables or not tables[-1]:
                tables.append([])
            tables[-1].append(line)
        elif tables and tables[-1]:
            tables.append([])
    for rows in (t for t in tables if t):
        width = len(re.split(r"(?<!\\)\|", rows[0]))
        live += [r for r in rows if len(re.split(r"(?<!\\)\|", r)) != width]
    return live


@pytest.mark.parametrize("name", HOSTILE)
def test_snapshots_show_hostile_system_names_as_text(name):
    runs = {name: RUN_A, "b": RUN_B}
    snaps = ranklens.compare_snapshots(
        QRELS,
        {"s1": runs, "s2": {name: RUN_B, "b": RUN_A}},
        ["P@1"],
        stats=ranklens.Statistics(n_resamples=20),
    )
    md = snaps.to_markdown()
    assert not _live_markdown(md), md
    assert "\x1b" not in snaps.to_text()


@pytest.mark.parametrize("text", HOSTILE)
def test_a_user_profiles_text_is_escaped_in_markdown_and_shown_as_text(text):
    from ranklens.profiles import describe, profiles_reference

    p = ranklens.Profile(
        text.replace("\n", " "), text, text,
        metrics=[ranklens.MetricUse("P@1", text)],
        targets=[ranklens.Target("mrr@10", 0.5, text, text)],
        typical=[ranklens.Typical("P@1", 0.5, text, text, text)],
        notes=[text],
    )  # fmt: skip
    md = profiles_reference({"x": p})
    assert not _live_markdown(md), md
    assert "\x1b" not in md and "\x1b" not in describe(p)
    ev = ranklens.evaluate(QRELS, RUN_A, profile=p)
    assert all("\x1b" not in v.line() for v in ev.verdicts)
    report = ranklens.compare(
        QRELS,
        {text: RUN_A, "b": RUN_B},
        ["P@1"],
        profile=p,
        stats=ranklens.Statistics(n_resamples=20),
    )
    lines = [v.line() for vs in ranklens.comparison.verdict.report_verdicts(report).values()
             for v in vs]  # fmt: skip
    assert lines and all("\x1b" not in line for line in lines)


def test_the_agreement_table_shows_file_names_as_text():
    text = str(ranklens.agreement({"q": {"a": 1}}, {"q": {"a": 0}}, names=("\x1b[2Ja", "b")))
    assert "\x1b" not in text and "\\x1b" in text


def test_a_negative_margin_plans_for_a_metric_that_falls_short_never_its_mirror():
    for target in ("P@1 >= 0.9", "ndcg@10 >= 0.5"):
        (plan,) = ranklens.plan_queries(target, margin=-0.1)
        assert plan.expected == pytest.approx(plan.target - 0.1) and plan.queries is None
        assert "does not reach it" in str(plan)
    (above,) = ranklens.plan_queries("ndcg@10 >= 0.5", margin=0.1)
    assert above.expected == pytest.approx(0.6) and above.queries is not None


@pytest.mark.parametrize("doc_id", [["a"], {"a": 1}, 1.5, True])
def test_a_versions_record_whose_id_is_not_a_text_is_named(tmp_path, doc_id):
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps({"doc_id": doc_id, "valid_from": "2024-01-01"}) + "\n")
    with pytest.raises(InputError, match="a document id is a text"):
        ranklens.read_versions(path)


def test_a_profiles_folder_is_named_not_a_traceback(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        ranklens.load_profiles(tmp_path)


@pytest.mark.parametrize(
    ("where", "call", "near"),
    [
        ("compare", lambda: ranklens.compare(QRELS, RUNS, ["P@1"], n_resample=5), "n_resamples"),
        ("compare", lambda: ranklens.compare(QRELS, RUNS, ["P@1"], baselin="a"), "baseline"),
        ("evaluate", lambda: ranklens.evaluate(QRELS, RUN_A, targets={"P@1": 0.5},
                                                        confidance=0.9), "confidence"),
        ("compare_snapshots", lambda: ranklens.compare_snapshots(QRELS, SNAPS, ["P@1"],
                                                                 n_resample=5), "n_resamples"),
    ],
)  # fmt: skip
def test_a_misspelled_keyword_passed_on_to_judging_names_the_closest_parameter(where, call, near):
    with pytest.raises(ParameterError, match=rf"^{where}: no parameter .*did you mean '{near}'"):
        call()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.value("c", "P@1"), r"Report.value: run must be one of .*got 'c'"),
        (lambda r: r.value("a", "P@2"), r"Report.value: metric .*got 'P@2'; did you mean 'P@1'"),
        (lambda r: r.letter("aa"), r"Report.letter: run .*got 'aa'; did you mean 'a'"),
        (lambda r: r.comparison("a", "x", "P@1"), r"Report.comparison: run .*got 'x'"),
        (lambda r: r.beats("a", "map"), r"Report.beats: metric .*got 'map'"),
        (lambda r: r.best("ndcg"), r"Report.best: metric .*got 'ndcg'"),
    ],
)
def test_a_run_or_metric_the_report_does_not_hold_is_named(call, message):
    with pytest.raises(ParameterError, match=message):
        call(_report())


def test_a_hole_range_names_an_unknown_metric_and_a_negative_count():
    hr = ranklens.holes({"q": ["a"]}, {"q": ["x", "a"]}, ["P@2"])
    assert hr.range("P@2") == (0.5, 1.0)
    with pytest.raises(ParameterError, match=r"HoleRange.range: metric .*got 'P@3'"):
        hr.range("P@3")
    for n in (-1, 2.5, "3"):
        with pytest.raises(ParameterError, match=r"HoleRange\.worst_queries: n must be"):
            hr.worst_queries(n)
