"""The gate's rules as a table: every combination of margins, floors and ceilings (point and
confident) runs through :func:`ranklens.gate` and through ``ranklens gate`` on the command
line, and both must give the same verdict per metric (status, which rule decided, the
rule shown) and the same exit. Known truths hold on top: a total regression fails every
gate that measures the metric that regressed; a run equal to its baseline passes every
gate whose limits its values meet; a refused setting is refused by both.

The command line once passed a total regression as soon as any floor or ceiling was given
(the metrics without a limit got no rule and read "above the floor"): the scenario
``floor-on-one`` is that case.
"""

from __future__ import annotations

import re

import pytest

import ranklens
from ranklens.app.cli import main

N = 40
METRICS = ["ndcg@10", "mrr@10", "unj@10"]


def _labels() -> dict[str, dict[str, int]]:
    return {f"q{i}": {f"r{i}a": 1, f"r{i}b": 1, f"n{i}": 0} for i in range(N)}


def _run(kind: str) -> dict[str, dict[str, float]]:
    """``base``: the relevant documents at ranks 1-2 (even queries) or 3-4 (odd), a judged
    non-relevant one between; ``same``: equal to it; ``total``: only unjudged documents;
    ``better``: every query's relevant ones first; ``mixed``: a third of the queries lose
    one relevant document to an unjudged one."""
    out = {}
    for i in range(N):
        rel = [f"r{i}a", f"r{i}b"]
        if kind == "total":
            docs = [f"u{i}-{j}" for j in range(5)]
        elif kind == "better":
            docs = [*rel, f"n{i}"]
        elif kind == "mixed" and i % 3 == 0:
            docs = [f"n{i}", f"u{i}", rel[0]]
        else:
            docs = [*rel, f"n{i}"] if i % 2 == 0 else [f"n{i}", f"u{i}", *rel]
        out[f"q{i}"] = {d: float(len(docs) - j) for j, d in enumerate(docs)}
    return out


# (name, command-line flags, the same settings in Python)
SCENARIOS = [
    ("defaults", [], {}),
    ("margin-all", ["--margin", "0.05"], {"margin": 0.05}),
    ("margin-rest", ["--margin", "0.02", "--margin", "ndcg@10=0.1"],
     {"margin": {"*": 0.02, "ndcg@10": 0.1}}),
    ("floor-on-one", ["--floor", "mrr@10=0.0"], {"floors": {"mrr@10": 0.0}}),
    ("ceiling-on-one", ["--ceiling", "unj@10=0.9"], {"ceilings": {"unj@10": 0.9}}),
    ("limits-only", ["--margin", "none", "--floor", "ndcg@10=0.3", "--floor", "mrr@10=0.3",
                     "--ceiling", "unj@10=0.5"],
     {"margin": None, "floors": {"ndcg@10": 0.3, "mrr@10": 0.3}, "ceilings": {"unj@10": 0.5}}),
    ("margin-and-limits", ["--margin", "0.01", "--floor", "ndcg@10=0.3",
                           "--ceiling", "unj@10=0.5"],
     {"margin": 0.01, "floors": {"ndcg@10": 0.3}, "ceilings": {"unj@10": 0.5}}),
    ("confident", ["--floor", "ndcg@10=0.3", "--ceiling", "unj@10=0.5",
                   "--floor-confidence", "0.95"],
     {"floors": {"ndcg@10": 0.3}, "ceilings": {"unj@10": 0.5}, "floor_confidence": 0.95}),
    ("confident-limits-only", ["--margin", "none", "--floor", "ndcg@10=0.3",
                               "--floor", "mrr@10=0.3", "--ceiling", "unj@10=0.5",
                               "--floor-confidence", "0.9", "--floor-method", "t"],
     {"margin": None, "floors": {"ndcg@10": 0.3, "mrr@10": 0.3}, "ceilings": {"unj@10": 0.5},
      "floor_confidence": 0.9, "floor_method": "t"}),
    ("inconclusive-passes", ["--margin", "0.01", "--inconclusive", "pass"],
     {"margin": 0.01, "inconclusive": "pass"}),
    ("t-test", ["--test", "t", "--alpha", "0.1"], {"test": "t", "alpha": 0.1}),
]  # fmt: skip
REFUSED = [
    ("named-margin-leaves-others-bare", ["--margin", "ndcg@10=0.1"], {"margin": {"ndcg@10": 0.1}}),
    ("margin-nan", ["--margin", "nan"], {"margin": float("nan")}),
    ("margin-inf", ["--margin", "inf"], {"margin": float("inf")}),
    ("ceiling-nan", ["--ceiling", "unj@10=nan"], {"ceilings": {"unj@10": float("nan")}}),
    ("ceiling-negative", ["--ceiling", "unj@10=-1"], {"ceilings": {"unj@10": -1.0}}),
    ("floor-above-one", ["--floor", "ndcg@10=1.5"], {"floors": {"ndcg@10": 1.5}}),
    ("floor-on-lower-metric", ["--floor", "unj@10=0.5"], {"floors": {"unj@10": 0.5}}),
    ("ceiling-on-higher-metric", ["--ceiling", "ndcg@10=0.5"], {"ceilings": {"ndcg@10": 0.5}}),
    ("floor-unmeasured", ["--floor", "P@5=0.5"], {"floors": {"P@5": 0.5}}),
    ("limits-only-bare", ["--margin", "none", "--floor", "ndcg@10=0.3"],
     {"margin": None, "floors": {"ndcg@10": 0.3}}),
    ("confidence-above-one", ["--floor", "ndcg@10=0.3", "--floor-confidence", "1.5"],
     {"floors": {"ndcg@10": 0.3}, "floor_confidence": 1.5}),
    ("alpha-zero", ["--alpha", "0"], {"alpha": 0.0}),
    ("resamples-zero", ["--resamples", "0"], {"n_resamples": 0}),
    ("test-misspelled", ["--test", "bootstrapp"], {"test": "bootstrapp"}),
    ("inconclusive-misspelled", ["--inconclusive", "ok"], {"inconclusive": "ok"}),
]  # fmt: skip
RUNS = ["same", "total", "better", "mixed"]
STATISTICS = ("test", "correction", "alpha", "n_resamples", "ci", "confidence", "seed")
ROW = re.compile(r"^(\S+)\s+(PASS|FAIL|INCONCLUSIVE)\s")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("gate_table")
    labels = _labels()
    (d / "qrels").write_text(
        "".join(f"{q} 0 {doc} {g}\n" for q, docs in labels.items() for doc, g in docs.items())
    )
    for kind in ["base", *RUNS]:
        run = _run(kind)
        (d / f"{kind}.run").write_text(
            "".join(
                f"{q} Q0 {doc} {j + 1} {s} {kind}\n"
                for q, docs in run.items()
                for j, (doc, s) in enumerate(docs.items())
            )
        )
    ranklens.gate(str(d / "qrels"), str(d / "base.run"), d / "base.json", METRICS,
                  update_baseline=True)  # fmt: skip
    return d


def _python(files, kind, kwargs):
    given = {"n_resamples": 2000, **kwargs}
    stats = ranklens.Statistics(**{k: given.pop(k) for k in STATISTICS if k in given})
    result = ranklens.gate(
        str(files / "qrels"), str(files / f"{kind}.run"), files / "base.json", METRICS,
        stats=stats, **given,
    )  # fmt: skip
    return result


def _cli(files, kind, flags, capsys):
    try:
        code = main(["gate", str(files / "qrels"), str(files / f"{kind}.run"), "--baseline",
                     str(files / "base.json"), *[w for m in METRICS for w in ("-m", m)],
                     "--resamples", "2000", *flags])  # fmt: skip
    except SystemExit as e:  # argparse refused a flag's value
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _rows(text: str) -> dict[str, tuple[str, str, str]]:
    """``{metric: (verdict, rule, decided by)}`` from the text table."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("metric"))
    starts = [m.start() for m in re.finditer(r"\S+(?: by)?", lines[head])]
    names = lines[head].split()
    rule_at, decided_at = starts[names.index("rule")], starts[-1]
    out = {}
    for line in lines[head + 2 :]:
        if not line.strip():
            break
        m = ROW.match(line)
        assert m, line
        out[m.group(1)] = (m.group(2), line[rule_at:decided_at].strip(), line[decided_at:].strip())
    return out


@pytest.mark.parametrize("kind", RUNS)
@pytest.mark.parametrize("name,flags,kwargs", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_python_and_the_command_line_give_the_same_verdicts(files, capsys, name, flags, kwargs,
                                                            kind):  # fmt: skip
    result = _python(files, kind, kwargs)
    code, out, err = _cli(files, kind, flags, capsys)
    assert err == "" and code == result.exit_code, (code, err)
    from ranklens.render.gate import _rule

    python_rows = {v.metric: (v.status.upper(), _rule(v), v.decided_by) for v in result.verdicts}
    assert _rows(out) == python_rows
    # every metric has a rule, and the rule that decided is one of those it has
    for v in result.verdicts:
        assert v.rules and v.decided_by
        assert set(v.decided_by.split(" and ")) <= set(v.rules)
        worst = next(s for s in ("fail", "inconclusive", "pass") if s in v.rules.values())
        assert v.status == worst
    # known truths
    if kind == "total":
        assert not result.passed
        assert {v.metric: v.status for v in result.verdicts}["ndcg@10"] == "fail"
    if kind == "same":
        assert result.passed, result.to_text()


@pytest.mark.parametrize("name,flags,kwargs", REFUSED, ids=[s[0] for s in REFUSED])
def test_a_refused_setting_is_refused_by_both_and_named(files, capsys, name, flags, kwargs):
    with pytest.raises(ranklens.InputError) as raised:
        _python(files, "same", kwargs)
    code, out, err = _cli(files, "same", flags, capsys)
    assert code == 2 and "gate passed" not in out and "gate FAILED" not in out
    assert "Traceback" not in err and err.strip(), err
    # both name what is at fault: the flag or parameter, or the metric
    said = str(raised.value)
    for text in (said, err):
        assert re.search(r"margin|floor|ceiling|alpha|resamples|confidence|test|inconclusive|"
                         r"rule", text), text  # fmt: skip
