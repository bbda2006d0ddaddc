"""Bad input is loud: every malformed qrels, run or file is an InputError naming the file,
line, query or field, and both TREC parsers (the line parser and pyarrow's) give one
answer for every byte string (hypothesis)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError
from ranklens.io import scan as scan_mod
from ranklens.io.trec import read_trec_qrels, read_trec_run

QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": ["d3"]}


def test_readme_mixed_forms_rank_each_query_by_its_own_form():
    # a scored dict and a ranked list in one run: each query is read in its own form
    qrels = {"q1": {"d1": 2, "d2": 1, "d7": 0}, "q2": ["d3"]}
    run = {"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.4}, "q2": ["d5", "d3"]}
    ev = ranklens.evaluate(qrels, run, ["P@1", "mrr@10"])
    assert ev.query("q1") == {"P@1": 1.0, "mrr@10": 1.0}
    assert ev.query("q2") == {"P@1": 0.0, "mrr@10": 0.5}
    pairs = {"q1": [("d2", 5.0), ("d1", 1.0)], "q2": ["d3"]}
    assert ranklens.evaluate(qrels, pairs, ["P@1"]).query("q1") == {"P@1": 1.0}


@pytest.mark.parametrize(
    ("run", "match"),
    [
        ({"q1": None}, "query 'q1'.*got NoneType"),
        ({"q1": "d1"}, "query 'q1'.*got a string"),
        ({"q1": (d for d in ["d1"])}, "query 'q1'.*generator.*list\\(\\)"),
        ({"q1": 5}, "query 'q1'.*got int"),
        ({"q1": [{"a": 1}]}, "document id.*unhashable.*'q1'|document id.*\\{'a': 1\\}.*'q1'"),
        ({"q1": [["d1"], "d2"]}, "hit 0 of query 'q1'"),
        ({"q1": {"d1": "0.5"}}, "score '0.5' of document 'd1' in query 'q1'"),
        ({"q1": [("d1", "high")]}, "score 'high'"),
    ],
)
def test_bad_runs_are_named(run, match):
    with pytest.raises(InputError, match=match):
        ranklens.evaluate(QRELS, run, ["P@1"])


def test_string_scores_are_refused_from_every_form(tmp_path):
    (tmp_path / "r.json").write_text('{"q1": {"d1": "0.5"}}')
    (tmp_path / "r.jsonl").write_text(
        '{"query_id": "q1", "hits": [{"id": "d1", "score": "0.5"}]}\n'
    )
    for run in (
        {"q1": {"d1": "0.5"}},
        {"q1": [("d1", "0.5")]},
        tmp_path / "r.json",
        tmp_path / "r.jsonl",
    ):
        with pytest.raises(InputError, match=r"'0\.5'|numeric"):
            ranklens.evaluate(QRELS, run, ["P@1"])


@pytest.mark.parametrize(
    ("qrels", "match"),
    [
        ({}, "label no query"),
        ({"q": 1}, "labels of query 'q'"),
        ({"q1": {"d1": 10**30}}, "grade .* of document 'd1' in query 'q1'"),
        ({"q1": {"d1": 1.5}}, "not an integer"),
    ],
)
def test_bad_qrels_are_named(qrels, match):
    with pytest.raises(InputError, match=match):
        ranklens.evaluate(qrels, {"q1": ["d1"]}, ["P@1"])


def test_grades_for_unknown_groups_query_are_an_error():
    with pytest.raises(InputError, match="'qX'"):
        ranklens.Qrels.from_groups({"q1": [["d1"]]}, grades={"q1": [1], "qX": [2]})


def test_nothing_to_evaluate_is_an_error_not_a_zero():
    with pytest.raises(InputError, match="no query to evaluate"):
        ranklens.evaluate(QRELS, {"other": ["d1"]}, ["P@1"], missing="skip")
    ev = ranklens.evaluate(QRELS, {"q1": ["x"]}, ["P@1"])  # every label scored, none matched
    assert "0 of 1 retrieved ids have a label" in ev.to_table() and "key=" in ev.to_table()
    assert ev.counts["hits_labelled"] == 0 and ev.counts["hits_retrieved"] == 1


def test_dataset_accepts_plain_dicts():
    ds = ranklens.Dataset({"q1": "what?", "q2": "why?"}, {"q1": {"d1": 1}, "q2": ["d2"]})
    assert isinstance(ds.qrels, ranklens.Qrels) and len(ds.qrels) == 2


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("empty.qrels", b"", "no qrels lines"),
        ("comments.qrels", b"# header\n\n   \n# more\n", "no qrels lines"),
        ("huge.qrels", b"q1 0 d1 99999999999999999999999\n", ":1: relevance .* out of range"),
        ("underscore.qrels", b"q1 0 d1 1_0\n", ":1: relevance '1_0'"),
        ("arabic.qrels", "q1 0 d1 \u0661\n".encode(), ":1: relevance"),
        ("latin1.qrels", b"q1 0 d\xe9 1\n", ":1: field docno is not UTF-8"),
        ("short.qrels", b"q1 0 d1 1\nq1 0 d2\n", ":2: expected 4 fields"),
        ("bad.gz", b"not gzip at all", "not a valid gzip file"),
        ("twice.qrels", b"q1 0 d1 1\nq1 0 d1 2\n", "lines 1 and 2"),
    ],
)
def test_bad_qrels_files_are_named(tmp_path, name, content, match):
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(InputError, match=match):
        ranklens.read_qrels(p)


def test_truncated_gzip_directory_and_undecodable_json_are_named(tmp_path):
    gz = tmp_path / "t.qrels.gz"
    gz.write_bytes(gzip.compress(b"q1 0 d1 1\n" * 1000)[:-20])
    with pytest.raises(InputError, match=r"t\.qrels\.gz: the compressed file is truncated"):
        ranklens.read_qrels(gz)
    big_dir = tmp_path / "big"
    big_dir.mkdir()
    for i in range(3000):  # a directory whose size passes the fast path's threshold
        (big_dir / f"file-with-a-long-name-{i:05d}").touch()
    with pytest.raises(InputError, match="is a directory"):
        ranklens.read_run(big_dir / ".." / "big")
    (tmp_path / "bad.jsonl").write_bytes(
        b'{"query_id": "q1", "relevant": ["d1"]}\n{"query_id": "q\xff"}\n'
    )
    with pytest.raises(InputError, match=r"bad\.jsonl:2: not UTF-8"):
        ranklens.read_qrels(tmp_path / "bad.jsonl")
    (tmp_path / "bad.json").write_bytes(b'{"q\xff": {"d": 1}}')
    with pytest.raises(InputError, match=r"bad\.json: not UTF-8"):
        ranklens.read_qrels(tmp_path / "bad.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match=r"deep\.json"):
        ranklens.read_qrels(tmp_path / "deep.json")


def test_bom_comments_and_unicode_spaces_read_alike_at_every_size(tmp_path):
    body = "q1 0 d\u00a0x 1\n# a comment\nq1 0 d\u2028y 0\n"
    small = tmp_path / "small.qrels"
    small.write_bytes(b"\xef\xbb\xbf" + body.encode())
    big = tmp_path / "big.qrels"
    filler = "".join(f"q2 0 doc{i} 1\n" for i in range(8000))
    big.write_bytes(b"\xef\xbb\xbf" + (body + filler + "#q3 0 d 1\n").encode())
    gz = tmp_path / "small.qrels.gz"
    gz.write_bytes(gzip.compress(small.read_bytes()))
    for p in (small, gz):
        q = ranklens.read_qrels(p)
        assert list(q.query_ids) == ["q1"] and sorted(q.doc_ids) == ["d\u00a0x", "d\u2028y"]
    q = ranklens.read_qrels(big)
    assert list(q.query_ids) == ["q1", "q2"]  # no phantom query "#q3", no "\ufeffq1"


def test_run_name_is_the_last_lines_run_id_even_when_long(tmp_path):
    p = tmp_path / "r.run"
    lines = "".join(f"q{i} Q0 d{i} 1 {i}.5 tag\n" for i in range(5000))
    p.write_text(lines + "q9999 Q0 " + "x" * 9000 + " 1 1.0 final-run\n# trailing comment\n")
    assert ranklens.read_run(p).name == "final-run"
    assert read_trec_run(p, fast=False).name == "final-run"


# ---------------------------------------------------------------- both parsers, one answer
_TOKENS = st.sampled_from(
    ["q1", "q2", "0", "Q0", "d1", "d2", "d\u00a0", "1", "-1", "+2", "0.5", "1e3", ".5", "nan",
     "inf", "1_0", "\u0661", "#", "#q", "x",
     # numbers the scanner parses itself or hands to Python, at the edges of its fast path
     "5.", "+.5", "-0", "-0.0", "1.5e-3", "1E5", "00012", "0.1234567890123456789",
     "123456789012345", "1234567890123456", "9223372036854775807", "9223372036854775808",
     "-9223372036854775808", "1.2.3", "+-1", "1-", "-", ".", "1e999",
     # ids around the 8-byte words and the fixed-width limit
     "d" * 8, "d" * 9, "x" * 70, "\u00e9t\u00e9", "<dbpedia:A_(b)>"]
)  # fmt: skip
_SEPS = st.sampled_from([" ", "\t", "  ", "\x0b", "\x0c", "\r"])


@st.composite
def _files(draw, n_fields):
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            n = draw(st.sampled_from([n_fields, n_fields, n_fields, n_fields - 1, n_fields + 1]))
            toks = [draw(_TOKENS) for _ in range(n)]
            line = toks[0]
            for t in toks[1:]:
                line += draw(_SEPS) + t
            lines.append(line)
        else:
            lines.append(draw(st.sampled_from(["", "# c", "  ", "\ufeff", "q1 0 d1 1 "])))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return (bom + ending.join(lines) + ending).encode()


def _outcome(reader, path, fast):
    try:
        got = reader(path, fast=fast)
    except InputError as exc:
        return ("error", str(exc))
    if isinstance(got, ranklens.Qrels):
        return ("qrels", got.to_dict())
    return ("run", got.name, got.to_dict())


def _drawn_file(tmp_path_factory, data, monkeypatch, files):
    """``(kind, path, reader, odd)`` for a drawn qrels or run file of ``files``, read in
    blocks of a drawn size (small ones split lines across blocks and hold lines longer than a
    block)."""
    monkeypatch.setattr(scan_mod, "BLOCK", data.draw(st.sampled_from([8, 31, 1 << 22])))
    kind = data.draw(st.sampled_from(["qrels", "run"]))
    drawn = data.draw(files(4 if kind == "qrels" else 6))
    content, odd = drawn if isinstance(drawn, tuple) else (drawn, None)
    p = tmp_path_factory.mktemp("f") / f"x.{kind}"
    p.write_bytes(content)
    return kind, p, read_trec_qrels if kind == "qrels" else read_trec_run, odd


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_line_parser_and_scanner_agree_on_any_bytes(tmp_path_factory, data, monkeypatch):
    _, p, reader, _ = _drawn_file(tmp_path_factory, data, monkeypatch, _files)
    assert _outcome(reader, p, True) == _outcome(reader, p, False)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=300))
def test_random_bytes_give_a_result_or_a_named_error(tmp_path_factory, raw):
    p = tmp_path_factory.mktemp("b") / "x.qrels"
    p.write_bytes(raw)
    outcomes = {_outcome(read_trec_qrels, p, fast)[0] for fast in (True, False)}
    assert len(outcomes) == 1
    assert _outcome(read_trec_qrels, p, True) == _outcome(read_trec_qrels, p, False)


def test_parsers_agree_on_a_large_real_shaped_file(tmp_path):
    rng = np.random.default_rng(0)
    lines = [
        f"{q} Q0 {d} 1 {s:.4f} bm25"
        for q, d, s in zip(
            rng.integers(0, 50, 20000), rng.integers(0, 10**6, 20000), rng.random(20000)
        )
    ]
    p = tmp_path / "r.run"
    p.write_text("\n".join(lines) + "\n")
    assert _outcome(read_trec_run, p, True) == _outcome(read_trec_run, p, False)
    assert not ranklens.read_run(p).docs.interned  # read by the scanner, ids packed


def test_jsonl_grades_without_groups_are_an_error(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"query_id": "q1", "relevant": ["d1", "d2"], "grades": [2, 1]}\n')
    with pytest.raises(InputError, match=r"q\.jsonl:1: field 'grades' goes with 'groups'"):
        ranklens.read_qrels(p)


_IDS = st.sampled_from(
    ["q1", "q22", "7067032", "d" * 8, "d" * 9, "x" * 70, "\u00e9t\u00e9", "<dbpedia:A_(b)>",
     "7067032\x00", "q1\x01"]  # control bytes belong to the id for the line parser
)  # fmt: skip
_NUMBERS = st.sampled_from(
    ["0", "1", "-1", "+2", "00012", "5.", "+.5", "-0", "-0.0", "0.5", "1009.860352",
     "0.123456789012345", "0.1234567890123456", "1.0000000000000002", "3.1415926535897932",
     "123456789012345", "1234567890123456", "1.5e-3", "1E5", "9223372036854775807",
     "9223372036854775808"]
)  # fmt: skip


@st.composite
def _plain_files(draw, n_fields):
    """Files the scanner reads itself (one delimiter, exact fields, plain numbers), now and
    then with one thing it must leave to the line parser (an odd line)."""
    delim = draw(st.sampled_from([" ", "\t"]))
    num_at = n_fields - 1 if n_fields == 4 else 4
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        toks = [draw(_NUMBERS) if i == num_at else draw(_IDS) for i in range(n_fields)]
        if n_fields == 6:
            toks[3] = str(draw(st.integers(1, 1000)))  # the rank, a number as in real runs
        lines.append(delim.join(toks))
    odd = draw(
        st.sampled_from(
            [None] * 6
            + ["#", "blank", "double", "trailing", "few", "lead", "mixed", "crlf", "lone cr"]
        )
    )
    at = draw(st.integers(0, len(lines) - 1))
    if odd == "#":
        lines[at] = "#" + lines[at]
    elif odd == "blank":
        lines.insert(at, "")
    elif odd == "double":  # the right number of delimiters, the docno empty
        toks = lines[at].split(delim)
        lines[at] = delim.join([*toks[:2], "", *toks[3:]])
    elif odd == "trailing":
        lines[at] += delim
    elif odd == "few":  # the right number of delimiters, the last field empty
        lines[at] = lines[at].rsplit(delim, 1)[0] + delim
    elif odd == "lead":  # the right number of delimiters, the first field empty
        lines[at] = delim + lines[at].rsplit(delim, 1)[0]
    elif odd == "mixed":  # fields split by runs of mixed whitespace, padded numbers
        lines[at] = lines[at].replace(delim, " \t\x0b ", 2).replace(delim, "  ")
    elif odd == "crlf":
        lines = [line + "\r" for line in lines]
    elif odd == "lone cr":  # a CR alone ends a line for the line parser
        lines[at] = lines[at].replace(delim, "\r", 1)
    end = draw(st.sampled_from(["\n", ""]))  # with or without a final line feed
    return ("\n".join(lines) + end).encode(), odd


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_scanner_reads_plain_files_exactly_as_the_line_parser(tmp_path_factory, data, monkeypatch):
    kind, p, reader, odd = _drawn_file(tmp_path_factory, data, monkeypatch, _plain_files)
    want = _outcome(reader, p, False)
    assert _outcome(reader, p, None) == want
    content = p.read_bytes()
    plain = b"\x00" not in content and b"\x01" not in content  # control bytes: line parser
    if odd in (None, "blank", "#", "trailing", "mixed", "crlf") and plain and want[0] != "error":
        # the scanner read it itself
        spec = (4, 0, [2], [(3, "int")]) if kind == "qrels" else (6, 0, [2], [(4, "float")])
        assert scan_mod.scan(p, *spec, more_fields=kind == "run") is not None


@settings(max_examples=500, deadline=None)
@given(data=st.data())
def test_the_compiled_split_is_numpys_split_to_the_bit(data):
    """The compiled helpers split a block of plain lines and parse its numbers in one pass
    (``_split_compiled``); whenever they answer, numpy's split (``_split_plain``) answers
    too, with the same fields, and every number is the one ``_parse_numbers`` gives, bit
    for bit (rows C leaves to Python's parser included); a plainly laid out block is always
    answered."""
    from ranklens.model import native
    from ranklens.model.idbytes import PAD

    if native.NATIVE is None:
        pytest.skip("the compiled helpers are not built here")
    kind = data.draw(st.sampled_from(["qrels", "run"]))
    n_fields = 4 if kind == "qrels" else 6
    plain = _plain_files(n_fields).map(  # ids without control bytes: mostly C's to read
        lambda f: (f[0].replace(b"\x00", b"").replace(b"\x01", b""), f[1])
    )
    drawn = data.draw(st.one_of(plain, plain, plain, _files(n_fields)))
    content, odd = drawn if isinstance(drawn, tuple) else (drawn, "any")
    if not content.endswith(b"\n"):
        content += b"\n"  # a block is whole lines
    nums = [(3, "int")] if kind == "qrels" else [(3, "int"), (4, "float")]
    a = np.zeros(len(content) + PAD, dtype=np.uint8)
    a[: len(content)] = np.frombuffer(content, dtype=np.uint8)
    body = a[: len(content)]
    got = scan_mod._split_compiled(body, n_fields, 0, [2], nums)
    if odd is None and b"\x00" not in content and b"\x01" not in content:
        assert got is not None  # plain lines: read in C
    if got is None:
        return
    field, numbers, last = got
    plain = scan_mod._split_plain(body, n_fields)
    assert plain is not None
    for j in {0, 2}:
        assert np.array_equal(field(j)[0], plain(j)[0]) and np.array_equal(field(j)[1], plain(j)[1])
    if not len(plain(0)[0]):
        return
    assert last == (plain(n_fields - 1)[0][-1], plain(n_fields - 1)[1][-1])
    for (j, kind_), (values, slow) in zip(nums, numbers):
        want = scan_mod._parse_numbers(a, *plain(j), kind_)
        mine = scan_mod._parse_slowly(a, *plain(j), kind_, slow, values) if len(slow) else values
        if want is None:
            assert mine is None
        else:
            assert mine is not None and np.array_equal(mine.view(np.int64), want.view(np.int64))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_the_scanner_reads_as_the_line_parser_without_the_compiled_helpers(
    tmp_path_factory, data, monkeypatch
):
    """The scanner's numpy split and parse, which read every block when the compiled
    helpers are not built (and any block they step aside from), against the line parser."""
    from ranklens.model import native

    monkeypatch.setattr(native, "NATIVE", None)
    _, p, reader, _ = _drawn_file(tmp_path_factory, data, monkeypatch, _plain_files)
    assert _outcome(reader, p, None) == _outcome(reader, p, False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=30), st.binary(max_size=20))
def test_ids_packed_and_hashed_in_c_are_numpys_bytes_and_hashes(ids, gap):
    """The scanner's ids packed and hashed in one pass in C (``_packed_ids``), and any ids
    hashed in C (``hash_slices``), are the bytes ``gather_packed`` packs and the hashes
    numpy computes, for ids of any length (empty, around the 8-byte words, longer than the
    fixed-width limit) and any bytes."""
    from ranklens.model import native
    from ranklens.model.idbytes import PAD, _hash_part, gather_packed, hash_slices

    if native.NATIVE is None:
        pytest.skip("the compiled helpers are not built here")
    joined = gap.join(ids)
    a = np.zeros(len(joined) + PAD, dtype=np.uint8)
    a[: len(joined)] = np.frombuffer(joined, dtype=np.uint8)
    length = np.array([len(x) for x in ids], dtype=np.int64)
    lo = np.zeros(len(ids), dtype=np.int64)
    if len(ids) > 1:
        lo[1:] = np.cumsum(length[:-1] + len(gap))
    packed, hashes = scan_mod._packed_ids(a, lo, length)
    assert packed.tobytes() == gather_packed(a, lo, length)[1].tobytes()
    numpy_hashes = _hash_part(a, lo, length)  # numpy's, whatever the helpers
    assert np.array_equal(hashes, numpy_hashes)
    assert np.array_equal(hash_slices(a, lo, length), numpy_hashes)


def test_scores_the_compiled_split_leaves_to_python_are_read_alike(tmp_path, monkeypatch):
    """Exponents, long mantissas and odd scores in a plainly laid out run: C splits the
    block and leaves those rows to Python's parser; the run equals the line parser's and
    the numpy scanner's, and a score that is not a number is still named by its line."""
    from ranklens.model import native

    p = tmp_path / "r.run"
    scores = ["1.5e-3", "0.12345678901234567", "-2E5", "7", "3.25", "1e-300", "+.5"]
    p.write_text("".join(f"q{i % 3} Q0 d{i} {i + 1} {s} sys\n" for i, s in enumerate(scores)))
    want = _outcome(read_trec_run, p, False)
    assert want[0] == "run" and _outcome(read_trec_run, p, None) == want
    if native.NATIVE is not None:
        monkeypatch.setattr(native, "NATIVE", None)
        assert _outcome(read_trec_run, p, None) == want
        monkeypatch.undo()
    p.write_text(p.read_text().replace("3.25", "3,25"))
    with pytest.raises(InputError, match=r"r\.run:5:"):
        read_trec_run(p)
