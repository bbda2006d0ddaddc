"""synthesize, check_dataset, OfflineGenerator and the commands ``ranklens synthesize``,
``ranklens check`` and ``ranklens estimate`` keep the promise: a reader's unlabelled
queries are counted once and never a finding (SciFact as the reader keeps it), a query
without text is a named error, every declared parameter and flag refuses what its
declaration refuses, and the check's exit code says what it found."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import ranklens
from ranklens.app.cli import main
from ranklens.declared import ParameterError
from ranklens.errors import InputError
from ranklens.synthesis import OfflineGenerator, check_dataset, synthesize


def beir(folder: Path, queries: dict, splits: dict, corpus: dict) -> Path:
    """A BEIR folder: every split's queries in one queries.jsonl, one qrels file a split."""
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "queries.jsonl", "w") as fh:
        for q, t in queries.items():
            fh.write(json.dumps({"_id": q, "text": t}) + "\n")
    with open(folder / "corpus.jsonl", "w") as fh:
        for d, t in corpus.items():
            fh.write(json.dumps({"_id": d, "title": "", "text": t}) + "\n")
    for split, labels in splits.items():
        rows = ["query-id\tcorpus-id\tscore"]
        rows += [f"{q}\t{d}\t{g}" for q, docs in labels.items() for d, g in docs.items()]
        (folder / "qrels" / f"{split}.tsv").write_text("\n".join(rows) + "\n")
    return folder


@pytest.fixture()
def splits(tmp_path):
    queries = {
        "t1": "Which lighthouse guards the northern reef?",
        "t2": "When was the harbour wall rebuilt after the storm?",
        "r1": "Who kept the light on Kestrel Point?",
        "r2": "How tall is the tower at Great Merrow?",
        "r3": "What colour is the flash of the eastern buoy?",
    }
    corpus = {
        "d1": "The northern reef is guarded by the Morwen lighthouse, lit each night.",
        "d2": "After the great storm of 1901 the harbour wall was rebuilt in granite.",
        "d3": "Agnes Tolley kept the light on Kestrel Point for forty years.",
        "d4": "The tower at Great Merrow rises thirty metres above the rocks.",
        "d5": "The eastern buoy shows a green flash every five seconds.",
    }
    labels = {
        "test": {"t1": {"d1": 1}, "t2": {"d2": 2}},
        "train": {"r1": {"d3": 1}, "r2": {"d4": 1}, "r3": {"d5": 1}},
    }
    return beir(tmp_path / "set", queries, labels, corpus)


# ------------------------------------------------------------------ 4: unlabelled queries
def test_unlabelled_queries_are_counted_once_and_never_a_finding(splits, capsys):
    test = ranklens.read_dataset(splits, split="test")
    train = ranklens.read_dataset(splits, split="train")
    assert len(test.queries) == 5  # the reader keeps every split's queries
    check = check_dataset(test, against={"train": train}, attach=False)
    assert check.ok, check.lines()  # no contamination with itself, no "no relevant label"
    assert check.checked["unlabelled"] == 3 and check.checked["queries"] == 2
    text = str(check)
    assert text.count("3 queries have no label at all") == 1 and "no findings" in text
    assert main(["check", str(splits), "--against", "train", "--strict"]) == 0
    out = capsys.readouterr().out
    assert out.count("have no label at all") == 1 and "no findings" in out


def test_a_query_labelled_with_nothing_relevant_is_still_a_finding(splits):
    test = ranklens.read_dataset(splits, split="test")
    labels = {**test.qrels.to_dict(), "r1": {"d3": 0}}
    ds = ranklens.Dataset(test.queries, labels, test.corpus, "graded-zero")
    check = check_dataset(ds, attach=False)
    assert check["no_relevant"].queries == ["r1"] and check.checked["unlabelled"] == 2


def test_scifact_as_the_reader_keeps_it(capsys, shared):
    SCIFACT = shared("scifact")  # skips when ../shared/data has no SciFact
    test = ranklens.read_dataset(SCIFACT, split="test")
    train = ranklens.read_dataset(SCIFACT, split="train")
    check = check_dataset(test, against={"train": train}, attach=False)
    assert check.checked["queries"] == 300 and check.checked["unlabelled"] == 809
    assert check["no_relevant"] is None  # every labelled test query has a relevant label
    cross = check["cross_split"]
    assert cross is not None and len(cross.queries) < 50  # near-equal claims, not all 1,109
    assert all(v["split"] == "train" for v in cross.details.values())
    assert all(len(f.queries) < 300 for f in check.findings)
    assert str(check).count("809 queries have no label at all") == 1
    assert main(["check", str(SCIFACT), "--against", "train"]) == 0  # a report
    out = capsys.readouterr().out
    assert out.count("809 queries have no label at all") == 1 and "1109" not in out
    assert main(["check", str(SCIFACT), "--against", "train", "--strict"]) == 1  # for CI


# ------------------------------------------------------------------ 5: query texts
@pytest.mark.parametrize("text", [None, 3, ["a question"], b"bytes"], ids=repr)
def test_a_query_without_text_is_named(text):
    ds = ranklens.Dataset({"q1": "a fine question", "q2": text}, {"q1": {"d": 1}, "q2": {"d": 1}})
    with pytest.raises(InputError, match=r"check_dataset: dataset query 'q2' must have a text"):
        check_dataset(ds, attach=False)
    ok = ranklens.Dataset({"q1": "a fine question"}, {"q1": {"d": 1}})
    with pytest.raises(InputError, match=r"against\['train'\] query 't' must have a text"):
        check_dataset(ok, against={"train": {"t": text}}, attach=False)


@pytest.mark.parametrize("other", [3, ["q"], {"q"}], ids=repr)
def test_an_other_split_of_no_known_form_is_named(other):
    ok = ranklens.Dataset({"q1": "a fine question"}, {"q1": {"d": 1}})
    with pytest.raises((ParameterError, InputError), match="against"):
        check_dataset(ok, against={"train": other}, attach=False)


# ------------------------------------------------------------------ 5: declared
def _probe(where, dummies):
    from ranklens.declared import DECLARED

    table = DECLARED[where]
    target = table.target
    tried = 0
    for name, option in table.options.items():
        for bad in option.bad_values():
            with pytest.raises(ParameterError, match=rf"{where}: {name} must be"):
                target(**{**dummies, name: bad})
            tried += 1
    return tried


def test_every_declared_parameter_refuses_its_bad_values():
    assert _probe("synthesize", {"corpus": None, "generate": OfflineGenerator()}) > 20
    assert _probe("check_dataset", {"dataset": None}) > 10
    assert _probe("OfflineGenerator", {}) > 0


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n": 2.5}, "n"),
        ({"n": math.nan}, "n"),
        ({"n": 0}, "n"),
        ({"max_overlap": 2}, "max_overlap"),
        ({"max_overlap": math.nan}, "max_overlap"),
        ({"near_duplicate": -1}, "near_duplicate"),
        ({"near_duplicate": 0}, "near_duplicate"),
        ({"max_chars": 0}, "max_chars"),
        ({"depth": 1.5}, "depth"),
        ({"timeout": math.inf}, "timeout"),
        ({"generate": "not a function"}, "generate"),
    ],
)
def test_synthesize_refuses_what_it_cannot_do(kwargs, name):
    with pytest.raises(ParameterError, match=rf"synthesize: {name} must be"):
        synthesize(
            {"d": "The tower was lit in 1862."}, **{"generate": OfflineGenerator(), **kwargs}
        )


@pytest.mark.parametrize("spent", [math.nan, math.inf, -1, "3 tokens", None], ids=repr)
def test_a_cost_that_is_not_a_cost_is_named(spent):
    with pytest.raises(ParameterError, match=r"synthesize: cost\(output\) must return a finite"):
        synthesize(
            {"d": "The tower was lit in 1862."},
            OfflineGenerator(),
            cost=lambda output: spent,
            progress=False,
        )


@pytest.mark.parametrize("passage", [None, 3, ["a passage"]], ids=repr)
def test_the_offline_generator_names_a_passage_that_is_not_text(passage):
    with pytest.raises(ParameterError, match="OfflineGenerator: passage must be a text"):
        OfflineGenerator()(passage)
    assert OfflineGenerator(name="mine").name == "mine"


# ------------------------------------------------------------------ 5: the command line
@pytest.mark.parametrize(
    "argv, flag",
    [
        (["synthesize", "{set}", "-o", "{out}", "-n", "2.5"], "-n"),
        (["synthesize", "{set}", "-o", "{out}", "-n", "0"], "-n"),
        (["synthesize", "{set}", "-o", "{out}", "--near", "nan"], "--near"),
        (["synthesize", "{set}", "-o", "{out}", "--max-overlap", "2"], "--max-overlap"),
        (["synthesize", "{set}", "-o", "{out}", "--max-chars", "-5"], "--max-chars"),
        (["synthesize", "{set}", "-o", "{out}", "--timeout", "inf"], "--timeout"),
        (["check", "{set}", "--containment", "1.5"], "--containment"),
        (["check", "{set}", "--near", "0"], "--near"),
        (["check", "{set}", "--near", "nan"], "--near"),
        (["estimate", "{set}", "r.txt", "--judge", "offline", "--human-sample", "-5"],
         "--human-sample"),
        (["estimate", "{set}", "r.txt", "--judge", "offline", "--human-sample", "10",
          "--confidence", "1.5"], "--confidence"),
        (["estimate", "{set}", "r.txt", "--judge", "offline", "--human-sample", "10",
          "--plan", "-1"], "--plan"),
        (["estimate", "{set}", "r.txt", "--judge", "offline", "--human-sample", "10",
          "--concurrency", "0"], "--concurrency"),
        (["estimate", "{set}", "r.txt", "--judge", "offline", "--human-sample", "10",
          "--interval", "zz"], "--interval"),
    ],
    ids=lambda x: " ".join(x[3:]) if isinstance(x, list) else x,
)  # fmt: skip
def test_every_flag_is_checked_by_its_declaration(splits, tmp_path, capsys, argv, flag):
    argv = [a.format(set=splits, out=tmp_path / "out") for a in argv]
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}" in err and "must be" in err
    assert not (tmp_path / "out").exists()


def test_check_exit_code_says_what_was_found(splits, capsys):
    """A report by default (0, findings or not); ``--strict``: 1 when anything is found
    (never for unlabelled queries), 0 when clean; bad input: 2."""
    test = ranklens.read_dataset(splits, split="test")
    dup = splits.parent / "dup"
    queries = {**test.queries, "t3": test.queries["t1"]}
    labels = {**test.qrels.to_dict(), "t3": {"d1": 1}}
    from ranklens.io.beir import write_beir

    write_beir(ranklens.Dataset(queries, labels, test.corpus, "dup"), dup)
    assert main(["check", str(dup)]) == 0
    assert "repeat another exactly" in capsys.readouterr().out
    assert main(["check", str(dup), "--strict"]) == 1
    assert main(["check", str(splits), "--strict"]) == 0
    assert main(["check", str(splits.parent / "nowhere")]) == 2


@pytest.mark.parametrize("corpus", [{}, {"d": ""}, {"d": "   ", "e": "\n"}], ids=repr)
def test_a_corpus_with_no_passage_is_named(corpus):
    with pytest.raises(InputError, match="synthesize: the corpus holds no passage"):
        synthesize(corpus, OfflineGenerator(), progress=False)
