"""Span labels keep the core's promise (issue 48): bad input ends as a named error or a
counted condition, never a bare traceback or a silent wrong number; grouped spans legal in
characters stay legal in tokens; data frames of ranges are span labels and runs of chunks;
the command line reads a runner's log; quotes are found under Unicode normalisation."""

from __future__ import annotations

import json
import unicodedata

import numpy as np
import pytest

import ranklens
from ranklens import SpanLabels
from ranklens.errors import InputError, RanklensError

TEXT = "The Merrow Isles light was first lit in 1821. Its lamp burns."
assert len(TEXT) == 61
TEXTS = {"d": TEXT, "k": "lighthouse keeper"}


def chunks(*ranges, doc="d"):
    return ranklens.Run.from_chunks(
        {
            "q": [
                {"id": f"c{i}", "doc_id": doc, "start": a, "end": b}
                for i, (a, b) in enumerate(ranges)
            ]
        }
    )


def offsets_of(pattern):
    """A tokenizer of one's own returning (start, end) offsets, as Hugging Face's do."""
    import re

    return lambda text: [m.span() for m in re.finditer(pattern, text)]


# --- 1. touching spans of one group are legal in tokens too ------------------------------------


@pytest.mark.parametrize(
    "tokenizer",
    ["words", "whitespace", str.split, offsets_of(r"\S+")],
    ids=["words", "whitespace", "strings", "offsets"],
)
@pytest.mark.parametrize(
    "group",
    [
        [(0, 5), (5, 10)],  # touching in characters, one token in tokens
        [(0, 3), (6, 10)],  # apart in characters, both inside "lighthouse"
        [(0, 10), (4, 17)],  # overlapping tokens of a legal group after the first token
    ],
    ids=["touching", "one-token", "tokens-overlap"],
)
def test_grouped_spans_legal_in_characters_are_legal_in_tokens(tokenizer, group):
    spans = [{"doc_id": "k", "start": a, "end": b, "group": "g"} for a, b in group]
    if group[1][0] < group[0][1]:  # overlapping characters: not a legal group
        spans[1]["group"] = "h"
    labels = SpanLabels.from_spans({"q": spans}, TEXTS)
    run = chunks((0, 17), doc="k")
    ev = ranklens.evaluate(labels, run, ["evidence_recall", "rr"], tokenizer=tokenizer)
    assert ev["evidence_recall"] == 1.0 and ev["rr"] == 1.0


def test_token_evidence_of_a_group_is_the_union_of_its_tokens():
    labels = SpanLabels.from_spans(
        {"q": [{"doc_id": "k", "start": a, "end": b, "group": 0} for a, b in [(0, 5), (5, 10)]]},
        TEXTS,
    )
    ev = ranklens.evaluate(labels, chunks((0, 17), doc="k"), ["evidence_chars",
                           "evidence_precision"], tokenizer="words")  # fmt: skip
    assert ev["evidence_chars"] == 1 and ev["evidence_precision"] == 0.5  # 1 of 2 tokens


# --- 2. a data frame of ranges is span labels (and a run of chunks) ----------------------------

FRAME_ROWS = {"query_id": ["q", "q"], "doc_id": ["d", "d"], "start": [27, 46], "end": [44, 61]}
FRAMES = ["pandas", "polars", "pyarrow"]


def frame_of(kind, rows):
    lib = pytest.importorskip(kind)
    if kind == "pyarrow":
        return lib.table(rows)
    return lib.DataFrame(rows)


@pytest.mark.parametrize("kind", FRAMES)
@pytest.mark.parametrize("names", [("start", "end"), ("start_index", "end_index")])
def test_a_frame_with_ranges_is_read_as_span_labels(kind, names):
    rows = {"query_id": FRAME_ROWS["query_id"], "doc_id": FRAME_ROWS["doc_id"],
            names[0]: FRAME_ROWS["start"], names[1]: FRAME_ROWS["end"]}  # fmt: skip
    labels = SpanLabels.from_spans({"q": [("d", 27, 44), ("d", 46, 61)]})
    run = chunks((0, 44), (44, 61))
    metrics = ["evidence_recall@1", "evidence_precision@2", "recall@1", "rr"]
    want = ranklens.evaluate(labels, run, metrics)
    got = ranklens.evaluate(frame_of(kind, rows), run, metrics)
    assert got["evidence_recall@1"] == pytest.approx(17 / 32)
    for m in metrics:
        assert got[m] == want[m], m


@pytest.mark.parametrize("kind", FRAMES)
def test_a_frame_of_chunks_is_a_run_of_chunks(kind):
    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]})
    rows = {"query_id": ["q", "q"], "doc_id": ["d", "d"], "start": [44, 0], "end": [61, 44],
            "score": [2.0, 1.0]}  # fmt: skip
    ev = ranklens.evaluate(labels, frame_of(kind, rows), ["rr", "evidence_recall@2"])
    assert ev["rr"] == 0.5 and ev["evidence_recall@2"] == 1.0


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ({"query_id": ["q"], "doc_id": ["d"], "start": [0]}, "a column 'start' without 'end'"),
        ({"query_id": ["q"], "doc_id": ["d"], "start": [0.5], "end": [3]}, "start.* 0.5"),
        ({"query_id": ["q"], "doc_id": ["d"], "start": [5], "end": [3]}, r"\[5, 3\)"),
    ],
)
def test_bad_frames_of_ranges_are_named(rows, match):
    pd = pytest.importorskip("pandas")
    with pytest.raises(InputError, match=match):
        ranklens.evaluate(pd.DataFrame(rows), chunks((0, 5)), ["evidence_recall"])


# --- 3. a chunk past the end of its document --------------------------------------------------


@pytest.mark.parametrize("rng", [(0, 10**6), (50, 62), (61, 70), (100, 120)])
def test_a_chunk_past_the_end_of_its_document_is_named(rng):
    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]}, TEXTS)
    with pytest.raises(InputError) as err:
        ranklens.evaluate(labels, chunks(rng), ["evidence_precision"])
    msg = str(err.value)
    assert "chunk 'c0' of query 'q'" in msg and "document 'd'" in msg and "61 characters" in msg
    assert f"[{rng[0]}, {rng[1]})" in msg


# --- 4. the command line reads the log the runner wrote -----------------------------------------


def test_the_cli_evaluates_span_labels_on_a_runner_log(tmp_path, capsys):
    from ranklens.app.cli import main

    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"_id": "d", "title": "", "text": TEXT}) + "\n"
    )
    line = {"query_id": "q", "query": "when was it lit",
            "evidence": [{"doc_id": "d", "quote": "first lit in 1821"}]}  # fmt: skip
    (tmp_path / "ds.jsonl").write_text(json.dumps(line) + "\n")
    ds = ranklens.read_dataset(tmp_path / "ds.jsonl")

    def retriever(query):
        return [
            {"id": "c1", "parent": "d", "start": 46, "end": 61, "text": TEXT[46:61], "score": 2.0},
            {"id": "c2", "parent": "d", "start": 0, "end": 46, "text": TEXT[:46], "score": 1.0},
        ]

    log = tmp_path / "log.jsonl"
    result = ranklens.run_retriever(retriever, ds, cache=log)
    metrics = ["evidence_recall@1", "evidence_recall@2", "evidence_precision@2", "rr"]
    want = ranklens.evaluate(ds, result, metrics)
    assert want["rr"] == 0.5
    argv = ["evaluate", str(tmp_path / "ds.jsonl"), str(log), "--format", "json"]
    assert main([*argv, *[a for m in metrics for a in ("-m", m)]]) == 0
    got = json.loads(capsys.readouterr().out)
    values = got["aggregate"]
    for m in metrics:
        assert values[m] == pytest.approx(want[m]), m


# --- 5. quotes found under Unicode normalisation, offsets of the original text --------------------


@pytest.mark.parametrize(
    ("doc_form", "quote_form"), [("NFD", "NFC"), ("NFC", "NFD"), ("NFKD", "NFC"), ("NFD", "NFKC")]
)
@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Le café était fermé. La crème brûlée aussi.", "café était fermé"),
        ("Ångström measured it. Then Øre.", "Ångström measured"),
        ("한국어 문서입니다. 다음 문장.", "문서입니다"),
        ("Zoë and Chloë went to Tromsø.", "Chloë went to Tromsø"),
    ],
)
def test_a_quote_is_found_in_another_unicode_form_at_the_texts_own_offsets(
    text, quote, doc_form, quote_form
):
    doc = unicodedata.normalize(doc_form, text)
    q = unicodedata.normalize(quote_form, quote)
    labels = SpanLabels.from_quotes({"q": [("d", q)]}, {"d": doc})
    (span,) = labels.span_records()
    assert unicodedata.normalize("NFKC", span["text"]) == unicodedata.normalize("NFKC", quote)
    assert span["text"] == doc[span["start"] : span["end"]]


def test_a_decomposed_accent_is_never_cut_off():
    doc = unicodedata.normalize("NFD", "un café noir")
    labels = SpanLabels.from_quotes({"q": [("d", "CAFÉ")]}, {"d": doc})  # normalised match
    (span,) = labels.span_records()
    assert span["text"] == doc[3:8] and unicodedata.combining(span["text"][-1])


# --- 6. a quote of an absent document names its query -------------------------------------------


@pytest.mark.parametrize("on_missing", ["error", "skip"])
def test_a_quote_of_an_absent_document_names_its_query(on_missing, recwarn):
    quotes = {"q7": [("nowhere", "first lit")], "q1": [("d", "first lit")]}
    if on_missing == "error":
        with pytest.raises(InputError, match=r"query 'q7'.*document 'nowhere'"):
            SpanLabels.from_quotes(quotes, TEXTS)
        return
    labels = SpanLabels.from_quotes(quotes, TEXTS, on_missing="skip")
    (skipped,) = labels.skipped
    assert "query 'q7'" in skipped["why"] and "'nowhere'" in skipped["why"]
    assert "query 'q7'" in str(recwarn.pop(ranklens.RanklensWarning).message)


# --- 7. no bare traceback: every fault of offsets, texts and tokenizers is named ----------------

BAD_OFFSETS = [float("nan"), float("inf"), 2.5, "3", True, -3, [1], np.float64("nan")]


@pytest.mark.parametrize("bad", BAD_OFFSETS, ids=repr)
@pytest.mark.parametrize("field", ["start", "end"])
def test_a_chunk_offset_that_is_not_a_whole_number_is_named(bad, field):
    chunk = {"id": "c", "doc_id": "d", "start": 0, "end": 5, field: bad}
    with pytest.raises(InputError, match=f"its {field} must be a whole number >= 0"):
        ranklens.Run.from_chunks({"q": [chunk]})


def test_a_chunk_ending_before_it_starts_or_with_a_text_not_a_string_is_named():
    with pytest.raises(InputError, match=r"\[9, 4\) ends before it starts"):
        ranklens.Run.from_chunks({"q": [{"doc_id": "d", "start": 9, "end": 4}]})
    with pytest.raises(InputError, match="its text must be a string or None, got int"):
        ranklens.Run.from_chunks({"q": [{"doc_id": "d", "start": 0, "end": 4, "text": 7}]})


@pytest.mark.parametrize("bad", [*BAD_OFFSETS, None], ids=repr)
@pytest.mark.parametrize("column", ["starts", "ends", "grades"])
def test_span_columns_that_are_not_whole_numbers_are_named(bad, column):
    cols = {"starts": [0, 10], "ends": [5, 20], "grades": [1, 1]}
    cols[column] = [cols[column][0], bad]
    if bad == -3:  # a whole number: a negative grade is a grade, an offset is named below 0
        match = "starts before 0" if column == "starts" else "ends where or before it starts"
    else:
        match = "span 1's .* must be a whole number"
    if column == "grades" and bad == -3:
        return
    with pytest.raises(InputError, match=match):
        SpanLabels.from_columns(["q", "q"], ["d", "d"], **cols)


@pytest.mark.parametrize(
    ("texts", "match"),
    [
        ({"d": None}, "the text of document 'd' must be a string, got NoneType"),
        ({"d": b"bytes"}, "the text of document 'd' must be a string, got bytes"),
        (["d"], "texts must map each document id to its text, got list"),
        ({"d": ""}, "ends past the document's 0 characters"),
    ],
)
def test_bad_texts_are_named(texts, match):
    with pytest.raises(InputError, match=match):
        SpanLabels.from_spans({"q": [("d", 0, 5)]}, texts)


@pytest.mark.parametrize("make", ["from_spans", "from_quotes", "from_records"])
def test_a_string_where_a_collection_is_expected_is_refused_never_iterated(make):
    with pytest.raises(InputError):
        getattr(SpanLabels, make)("q d 0 5", TEXTS)


def _raises(text):
    raise RuntimeError("model not loaded")


BAD_TOKENIZERS = {
    "returns None": (lambda t: None, "returned NoneType on document 'd'"),
    "returns a number": (lambda t: 5, "returned int on document 'd'"),
    "returns a string": (lambda t: t, "returned str on document 'd'"),
    "returns a dict": (lambda t: {"input_ids": [1]}, "returned dict on document 'd'"),
    "returns an encoding": (
        lambda t: {"input_ids": [1], "offset_mapping": [(0, 3)]},
        "return_offsets_mapping=True",
    ),
    "returns None tokens": (lambda t: [None, None], r"returned None as token 0 on document 'd'"),
    "NaN offsets": (lambda t: [(0, float("nan"))], "returned \\(0, nan\\) as token 0"),
    "fractional offsets": (lambda t: [(0, 2.5)], "returned \\(0, 2.5\\) as token 0"),
    "out of order": (lambda t: [(4, 8), (0, 3)], r"token 1 at \(0, 3\) after one at \(4, 8\)"),
    "past the text": (lambda t: [(0, 999)], "outside the text's 61 characters"),
    "negative": (lambda t: [(-2, 3)], "outside the text's 61 characters"),
    "raises": (_raises, "raised RuntimeError on document 'd': model not loaded"),
    "mixed tokens": (lambda t: ["The", 3], "returned 3 among token strings on document 'd'"),
}


@pytest.mark.parametrize("case", list(BAD_TOKENIZERS), ids=str)
def test_a_tokenizers_faults_are_named_with_the_document(case):
    tokenizer, match = BAD_TOKENIZERS[case]
    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]}, TEXTS)
    with pytest.raises(InputError, match=match) as err:
        ranklens.evaluate(labels, chunks((0, 44)), ["evidence_recall"], tokenizer=tokenizer)
    assert type(err.value) is not ValueError and isinstance(err.value, RanklensError)


def test_special_tokens_without_characters_are_left_out():
    # Hugging Face's offset_mapping: (0, 0) for [CLS] and [SEP] around the text's tokens
    def hf(text):
        import re

        return [(0, 0), *[m.span() for m in re.finditer(r"\w+|[^\w\s]", text)], (0, 0)]

    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]}, TEXTS)
    got = ranklens.evaluate(labels, chunks((0, 44)), ["evidence_precision"], tokenizer=hf)
    want = ranklens.evaluate(labels, chunks((0, 44)), ["evidence_precision"], tokenizer="words")
    assert got["evidence_precision"] == want["evidence_precision"]


def test_an_unknown_tokenizer_name_names_the_closest():
    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]}, TEXTS)
    with pytest.raises(InputError, match="did you mean 'words'"):
        ranklens.evaluate(labels, chunks((0, 44)), ["evidence_recall"], tokenizer="wrods")


@pytest.mark.parametrize("bad", ["errror", "skipp", 1, None, ["error"]], ids=repr)
@pytest.mark.parametrize("param", ["on_missing", "ambiguous"])
def test_the_constructors_options_are_declared_and_checked(bad, param):
    with pytest.raises(ranklens.declared.ParameterError, match=f"SpanLabels.from_quotes: {param}"):
        SpanLabels.from_quotes({"q": [("d", "first lit")]}, TEXTS, **{param: bad})


def test_a_quote_in_several_places_can_take_its_first():
    texts = {"d": "a lamp, a lamp, a lamp"}
    with pytest.raises(InputError, match="stands 3 times"):
        SpanLabels.from_quotes({"q": [("d", "a lamp")]}, texts)
    labels = SpanLabels.from_quotes({"q": [("d", "a lamp")]}, texts, ambiguous="first")
    assert [(r["start"], r["end"]) for r in labels.span_records()] == [(0, 6)]


def _tables():
    from ranklens.declared import DECLARED
    from ranklens.judging import reanchor  # noqa: F401 - registers its table

    names = ["SpanLabels.from_records", "SpanLabels.from_spans", "SpanLabels.from_quotes",
             "SpanLabels.from_columns", "reanchor"]  # fmt: skip
    return [(n, o) for n in names for o, opt in DECLARED[n].options.items() if opt.kind != "data"]


@pytest.mark.parametrize(("table", "option"), _tables())
def test_every_declared_option_refuses_its_bad_values(table, option):
    from ranklens.declared import DECLARED, ParameterError
    from ranklens.judging.reanchor import reanchor

    call = {
        "SpanLabels.from_records": lambda **kw: SpanLabels.from_records(
            [{"query_id": "q", "doc_id": "d", "start": 0, "end": 3}], TEXTS, **kw
        ),
        "SpanLabels.from_spans": lambda **kw: SpanLabels.from_spans({"q": [("d", 0, 3)]}, **kw),
        "SpanLabels.from_quotes": lambda **kw: SpanLabels.from_quotes(
            {"q": [("d", "first lit")]}, TEXTS, **kw
        ),
        "SpanLabels.from_columns": lambda **kw: SpanLabels.from_columns(
            ["q"], ["d"], [0], [3], **kw
        ),
        "reanchor": lambda **kw: reanchor(
            SpanLabels.from_spans({"q": [("d", 0, 3)]}, TEXTS), TEXTS, **kw
        ),
    }[table]
    declared = DECLARED[table].options[option]
    call(**{option: declared.default})  # the default satisfies its own declaration
    for bad in declared.bad_values():
        with pytest.raises(ParameterError, match=f"{table}: {option} must be"):
            call(**{option: bad})


@pytest.mark.parametrize("doc", [["d"], {"d": 1}, 2.5, True, b"d"], ids=repr)
def test_a_chunk_document_that_is_not_an_id_is_named_never_its_repr(doc):
    with pytest.raises(InputError, match="its document id must be a string or an integer"):
        ranklens.Run.from_chunks({"q": [{"doc_id": doc, "start": 0, "end": 5}]})


@pytest.mark.parametrize("far", [(0, 10**6), (40, 62)])
def test_a_chunking_past_the_end_of_its_document_is_named(far):
    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]}, TEXTS)
    chunking = {"d": [(0, 40), far]}
    with pytest.raises(InputError, match=r"chunking: chunk \[.*document 'd' ends past .* 61"):
        ranklens.evaluate(labels, chunks((0, 44)), ["precision_omega"], chunking=chunking)


@pytest.mark.parametrize(
    ("evidence", "match"),
    [
        ({"doc_id": "d", "start": 1, "end": 5, "grade": "2"}, "'grade' must be a whole number"),
        ({"doc_id": "d", "start": 1, "end": 5, "grade": 1.5}, "'grade' must be a whole number"),
        ({"doc_id": "d", "start": 1, "end": 5, "group": [1]}, "'group' must be a text or"),
        ({"doc_id": "d", "start": 1.5, "end": 5}, "'start' must be an integer offset"),
        ({"doc_id": "d", "start": 1}, "'end' must be an integer offset, got None"),
    ],
)
def test_span_files_name_the_line_and_query_of_a_fault(tmp_path, evidence, match):
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"_id": "d", "text": TEXT}) + "\n")
    line = {"query_id": "q9", "query": "?", "evidence": [evidence]}
    (tmp_path / "a.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match=r"a.jsonl:1: evidence 0 of query 'q9'.*" + match):
        ranklens.read_dataset(tmp_path / "a.jsonl")


def test_a_quote_of_an_absent_document_in_a_file_names_the_file_and_query(tmp_path):
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"_id": "d", "text": TEXT}) + "\n")
    line = {"query_id": "q9", "query": "?", "evidence": [{"doc_id": "zz", "quote": "first"}]}
    (tmp_path / "a.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match=r"a.jsonl: query 'q9': document 'zz'"):
        ranklens.read_dataset(tmp_path / "a.jsonl")


@pytest.mark.parametrize("chars", ["NaN", "-4", "2.5", '"many"', "true"])
def test_a_runner_log_with_a_bad_recorded_length_names_query_and_hit(tmp_path, chars):
    from ranklens.app.evaluate_cli import runner_log

    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]}, TEXTS)
    ds = ranklens.Dataset({"q": "?"}, labels, {"d": {"text": TEXT}})
    log = tmp_path / "log.jsonl"
    hit = {"id": "c1", "parent": "d", "start": 0, "end": 44, "text": TEXT[:44]}
    ranklens.run_retriever(lambda query: [hit], ds, cache=log)
    lines = log.read_text().splitlines()
    lines[1] = lines[1].replace('"chars": 44', f'"chars": {chars}')
    log.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"hit 0 of query 'q': its recorded length 'chars'"):
        ranklens.evaluate(labels, runner_log(str(log)), ["evidence_recall"])


def test_a_chunk_offset_fault_names_its_query():
    with pytest.raises(InputError, match="chunk 1 of query 'q2'"):
        ranklens.Run.from_chunks(
            {
                "q1": [{"doc_id": "d", "start": 0, "end": 5}],
                "q2": [
                    {"doc_id": "d", "start": 0, "end": 5},
                    {"doc_id": "d", "start": float("nan"), "end": 5},
                ],
            }
        )


def test_evaluate_reads_the_chunks_of_a_runner_log_given_as_a_path(tmp_path):
    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]}, TEXTS)
    ds = ranklens.Dataset({"q": "?"}, labels, {"d": {"text": TEXT}})
    log = tmp_path / "log.jsonl"
    hit = {"id": "c1", "parent": "d", "start": 0, "end": 44, "text": TEXT[:44]}
    ranklens.run_retriever(lambda query: [hit], ds, cache=log)
    assert ranklens.evaluate(labels, str(log), ["evidence_recall"])["evidence_recall"] == 1.0


@pytest.mark.parametrize("bad", [(0, float("nan")), (0, 2.5), "abc", (0, "9")], ids=repr)
def test_a_chunking_that_is_not_whole_ranges_is_named(bad):
    labels = SpanLabels.from_spans({"q": [("d", 27, 44)]}, TEXTS)
    with pytest.raises(InputError, match=r"chunking: .*document 'd'"):
        ranklens.evaluate(labels, chunks((0, 44)), ["precision_omega"], chunking={"d": [bad]})
