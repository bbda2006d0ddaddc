"""Label repair (ranklens.reanchor, ranklens check-labels): real SciFact evidence spans
relocated in a corpus edited the ways re-ingestion edits it (paragraphs inserted, whitespace
changed inside evidence, a typo fixed, a passage repeated, a passage deleted, a document
removed); every status, its quality, the new labels, and that nothing changes silently.
Offsets after pure insertions and unchanged documents are checked as properties
(hypothesis), the fuzzy step against brute-force edit distance."""

from __future__ import annotations

import ast
import csv
import functools
import io
import itertools
import json
import re
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import InputError, SpanLabels, reanchor
from ranklens.model.anchors import locate_fuzzy, normalised

INTRO = "Editor's note: this abstract was revised in 2024.\n\n"
EXTRA = "\n\nA new paragraph, added when the record was re-ingested, says nothing of the claim. "


@pytest.fixture
def scifact(shared):
    """SciFact claims with their rationale sentences as evidence spans: ``(spans, texts)``,
    each span ``(query, doc, start, end)`` in BEIR's text (the abstract's sentences joined
    by spaces), 40 claims."""
    return _scifact_spans(shared("scifact"))


@functools.cache
def _scifact_spans(root):
    claims = [json.loads(line) for line in (root / "queries.jsonl").open()]
    claims = [c for c in claims if c["metadata"]][:40]
    need = {d for c in claims for d in c["metadata"]}
    lit = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
    with zipfile.ZipFile(root / "raw" / "scifact.zip") as z:
        rows = csv.DictReader(io.StringIO(z.read("corpus_train.csv").decode()))
        sentences = {
            r["doc_id"]: [ast.literal_eval(m) for m in lit.findall(r["abstract"])]
            for r in rows
            if r["doc_id"] in need
        }
    texts = {d: " ".join(s) for d, s in sentences.items()}
    spans = []
    for c in claims:
        for doc, sets in c["metadata"].items():
            bounds = _sentence_bounds(sentences[doc])
            for i in sorted({i for s in sets for i in s["sentences"]}):
                spans.append((c["_id"], doc, *bounds[i]))
    return spans, texts


def _sentence_bounds(sents: list[str]) -> list[tuple[int, int]]:
    out, at = [], 0
    for s in sents:
        out.append((at, at + len(s)))
        at += len(s) + 1
    return out


def _labels(spans, texts) -> SpanLabels:
    by_q: dict = {}
    for q, d, s, e in spans:
        by_q.setdefault(q, []).append((d, s, e))
    return SpanLabels.from_spans(by_q, texts)


def _edit(spans, texts):
    """The edited corpus and, per span, the status and new range expected."""
    docs = sorted({d for _, d, s, _ in spans}, key=lambda d: (-sum(x[1] == d for x in spans), d))
    by_doc: dict = {}
    for _q, d, s, e in spans:
        by_doc.setdefault(d, []).append((s, e))
    # the edits, each on a document of its own, on spans far enough from the text's ends
    inner = [d for d in docs if any(s >= 80 and len(texts[d]) - e >= 80 for s, e in by_doc[d])]
    plan = dict(zip(("intro", "middle", "spaces", "typo", "repeat", "delete", "remove"), inner))
    new = dict(texts)
    expect: dict = {}

    def target(d):
        return next((s, e) for s, e in sorted(by_doc[d]) if s >= 80 and len(texts[d]) - e >= 80)

    d = plan["intro"]
    new[d] = INTRO + texts[d]
    for s, e in by_doc[d]:
        expect[d, s] = ("moved", s + len(INTRO), e + len(INTRO))
    d = plan["middle"]
    cut = target(d)[0] - 1  # the space before the target sentence
    new[d] = texts[d][:cut] + EXTRA + texts[d][cut:]
    for s, e in by_doc[d]:
        shift = len(EXTRA) if s > cut else 0
        expect[d, s] = ("moved" if shift else "unchanged", s + shift, e + shift)
    d = plan["spaces"]
    s0, e0 = target(d)
    spaced = re.sub(" ", "  ", texts[d][s0:e0], count=3).replace(" ", "\n", 1)
    new[d] = texts[d][:s0] + spaced + texts[d][e0:]
    delta = len(spaced) - (e0 - s0)
    for s, e in by_doc[d]:
        shift = delta if s > s0 else 0
        status = "normalised" if s == s0 else ("moved" if shift else "unchanged")
        expect[d, s] = (status, s, e + delta) if s == s0 else (status, s + shift, e + shift)
    d = plan["typo"]
    s0, e0 = target(d)
    k = s0 + (e0 - s0) // 2
    while not texts[d][k].islower():
        k += 1
    swapped = "q" if texts[d][k].lower() != "q" else "z"
    new[d] = texts[d][:k] + swapped + texts[d][k + 1 :]
    for s, e in by_doc[d]:
        expect[d, s] = ("fuzzy" if s == s0 else "unchanged", s, e)
    d = plan["repeat"]  # the abstract ingested twice under a new heading: each sentence twice
    new[d] = INTRO + texts[d] + "\n\n" + texts[d]
    for s, _e in by_doc[d]:
        expect[d, s] = ("ambiguous", None, None)
    d = plan["delete"]
    s0, e0 = target(d)
    new[d] = texts[d][:s0] + texts[d][e0 + 1 :]
    for s, e in by_doc[d]:
        shift = -(e0 + 1 - s0) if s > s0 else 0
        expect[d, s] = ("lost", None, None) if s == s0 else (
            "moved" if shift else "unchanged", s + shift, e + shift)  # fmt: skip
    del new[plan["remove"]]
    for s, _e in by_doc[plan["remove"]]:
        expect[plan["remove"], s] = ("lost", None, None)
    for d in docs:
        for s, e in by_doc[d]:
            expect.setdefault((d, s), ("unchanged", s, e))
    return new, expect, plan


def test_realistic_edits_every_status(scifact):
    spans, texts = scifact
    labels = _labels(spans, texts)
    new, expect, plan = _edit(spans, texts)
    result = reanchor(labels, new)
    assert len(result.rows) == labels.n_spans
    assert {(r["doc_id"], r["old_start"]) for r in result.rows} == set(expect)
    for r in result.rows:
        status, s, e = expect[r["doc_id"], r["old_start"]]
        assert (r["status"], r["new_start"], r["new_end"]) == (status, s, e), r
    counts = result.counts
    assert all(counts[s] for s in ("unchanged", "moved", "normalised", "fuzzy", "ambiguous"))
    assert counts["lost"] >= 2 and sum(counts.values()) == len(result.rows)
    # the text at each new range is the old text: exactly, normalised, or with the fix
    for r in result.rows:
        if r["new_start"] is None:
            continue
        now = new[r["doc_id"]][r["new_start"] : r["new_end"]]
        if r["status"] in ("unchanged", "moved"):
            assert now == r["text"] and r["quality"] == 1.0
        elif r["status"] == "normalised":
            assert now != r["text"] and normalised(now)[0] == normalised(r["text"])[0]
            assert r["quality"] == 1.0
        else:  # one letter changed: Levenshtein 1 over the sentence's length
            assert r["status"] == "fuzzy" and len(now) == len(r["text"])
            assert sum(a != b for a, b in zip(now, r["text"])) == 1
            assert r["quality"] == pytest.approx(1 - 1 / len(normalised(r["text"])[0].strip()))
    deleted = next(r for r in result.by_status("lost") if r["doc_id"] == plan["delete"])
    assert deleted["quality"] is None and "edits or more (quality < 0.9)" in deleted["note"]
    assert result.removed_documents == [plan["remove"]]
    repeated = [r for r in result.rows if r["doc_id"] == plan["repeat"]]
    assert all(r["candidates"] == 2 and not r["kept"] for r in repeated)


def test_nothing_changes_silently(scifact):
    spans, texts = scifact
    labels = _labels(spans, texts)
    new, _, plan = _edit(spans, texts)
    result = reanchor(labels, new)
    kept = [r for r in result.rows if r["kept"]]
    left = [r for r in result.rows if not r["kept"]]
    assert {r["status"] for r in left} == {"ambiguous", "lost"}
    assert result.kept == len(kept) == result.labels.n_spans and result.left_out == len(left)
    assert not result.ok
    # the new labels hold exactly the kept spans at their new ranges, with the new texts
    assert sorted((r["query_id"], r["doc_id"], r["start"], r["end"])
                  for r in result.labels.span_records()) == sorted(
        (r["query_id"], r["doc_id"], r["new_start"], r["new_end"]) for r in kept)  # fmt: skip
    assert result.labels.texts is not None and plan["remove"] not in result.labels.texts
    # every query stays, those without evidence left counted
    assert set(map(str, result.labels.query_ids)) == set(map(str, labels.query_ids))
    emptied = {r["query_id"] for r in left} - {r["query_id"] for r in kept}
    assert result.emptied_queries == sorted(emptied)
    # every changed span is in every rendering, every non-zero status in the summary
    text, md = result.to_text(limit=None), result.to_markdown()
    data = json.loads(result.to_json())
    assert len(result.changed) == sum(r["status"] != "unchanged" for r in result.rows)
    for r in result.changed:
        row = f"[{r['old_start']}, {r['old_end']})"
        assert row in text and row in md
    for status, n in result.counts.items():
        assert (f"{n} {status}" in result.summary()) == bool(n)
    assert data["counts"] == result.counts and len(data["spans"]) == len(result.rows)
    frame = result.to_pandas()
    assert len(frame) == len(result.rows) and frame["kept"].sum() == result.kept
    assert "(+" in result.to_text(limit=2)
    # an unchanged corpus changes nothing
    same = reanchor(labels, texts)
    assert same.ok and not same.changed and same.labels == labels


def test_policies(scifact):
    spans, texts = scifact
    labels = _labels(spans, texts)
    new, expect, plan = _edit(spans, texts)
    exact = reanchor(labels, new, keep="exact")
    fz = exact.by_status("fuzzy")
    assert fz and not any(r["kept"] for r in fz) and "keep='exact'" in fz[0]["note"]
    assert exact.left_out == reanchor(labels, new).left_out + len(fz)
    first = reanchor(labels, new, ambiguous="first")
    for r in first.by_status("ambiguous"):
        assert r["kept"] and r["new_start"] == r["old_start"] + len(INTRO)
        assert "the first taken" in r["note"]
    nearest = reanchor(labels, new, ambiguous="nearest")
    assert all(r["kept"] for r in nearest.by_status("ambiguous"))
    strict_msg = r"strict.*could not be kept.*ambiguous.*lost"
    with pytest.raises(InputError, match=strict_msg):
        reanchor(labels, new, strict=True)
    lenient = reanchor(labels, new, min_quality=0.2)  # a low bar finds the deleted sentence
    deleted = next(r for r in lenient.rows if r["doc_id"] == plan["delete"]
                   and expect[r["doc_id"], r["old_start"]][0] == "lost")  # fmt: skip
    assert deleted["status"] == "fuzzy" and deleted["quality"] < 0.9


def test_repaired_labels_score_as_before(scifact):
    """Sentence chunks of each version, every chunk of a query's documents retrieved: the
    repaired labels on the edited corpus give the old labels' evidence recall on the old
    one for every query whose spans were all kept."""
    spans, texts = scifact
    labels = _labels(spans, texts)
    new, _, _ = _edit(spans, texts)
    result = reanchor(labels, new)

    def chunks(text):  # sentences: cut after a full stop and whitespace before a capital
        cuts = [0, *(m.end() for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z0-9])", text)), len(text)]
        return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]

    def run(corpus):
        docs = {q: sorted({d for qq, d, *_ in spans if qq == q}) for q, *_ in spans}
        return ranklens.Run.from_chunks({q: [
            {"doc_id": d, "start": a, "end": b} for d in ds if d in corpus
            for a, b in chunks(corpus[d])
        ] for q, ds in docs.items()})  # fmt: skip

    metric = "evidence_recall@1000"
    before = ranklens.evaluate(labels, run(texts), [metric]).to_dict()["per_query"]
    after = ranklens.evaluate(result.labels, run(new), [metric]).to_dict()["per_query"]
    whole = {r["query_id"] for r in result.rows} - {r["query_id"] for r in result.rows
                                                    if not r["kept"]}  # fmt: skip
    assert len(whole) > 20
    for q in whole:
        assert after[q][metric] == pytest.approx(before[q][metric]), q


# ---------------------------------------------------------------- properties
WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "the", "of", "cell", "ratio"])


@st.composite
def documents_with_spans(draw, unique: bool):
    words = draw(st.lists(WORDS, min_size=6, max_size=60))
    text = " ".join(words) + "."
    n = draw(st.integers(1, 4))
    spans = []
    for _ in range(n):
        s = draw(st.integers(0, len(text) - 2))
        e = draw(st.integers(s + 1, min(len(text), s + 40)))
        spans.append((s, e))
    spans = sorted(set(spans))
    if unique:
        spans = [(s, e) for s, e in spans if text.count(text[s:e]) == 1]
    return text, spans


def _one_doc_labels(text, spans):
    return SpanLabels.from_spans({f"q{i}": [("d", s, e)] for i, (s, e) in enumerate(spans)},
                                 {"d": text})  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(documents_with_spans(unique=False))
def test_unchanged_documents_keep_every_span(case):
    text, spans = case
    labels = _one_doc_labels(text, spans)
    other = {"d": text, "x": "an edited neighbour"}
    result = reanchor(labels, other, old_corpus={"d": text, "x": "a neighbour"})
    assert result.counts["unchanged"] == len(spans) and result.labels == labels


@settings(max_examples=80, deadline=None)
@given(documents_with_spans(unique=True), st.data())
def test_pure_insertions_move_spans_by_their_length(case, data):
    text, spans = case
    if not spans:
        return
    inside = {i for s, e in spans for i in range(s + 1, e)}
    at = data.draw(st.integers(0, len(text)).filter(lambda p: p not in inside))
    piece = data.draw(st.text("XYZ0123 \n", min_size=1, max_size=30))
    new = text[:at] + piece + text[at:]
    result = reanchor(_one_doc_labels(text, spans), {"d": new})
    for r in result.rows:
        shift = len(piece) if r["old_start"] >= at else 0
        assert (r["new_start"], r["new_end"]) == (r["old_start"] + shift, r["old_end"] + shift)
        assert r["status"] == ("moved" if shift else "unchanged")


@settings(max_examples=60, deadline=None)
@given(documents_with_spans(unique=False), st.data())
def test_insertions_away_from_spans_never_mislead(case, data):
    """Repeated text anywhere: a span lands where it went, or is reported ambiguous."""
    text, spans = case
    near = {i for s, e in spans for i in range(s - 64, e + 65)}
    free = [p for p in range(len(text) + 1) if p not in near]
    if not free:
        return
    at = data.draw(st.sampled_from(free))
    piece = data.draw(st.text("XYZ ", min_size=1, max_size=30))
    result = reanchor(_one_doc_labels(text, spans), {"d": text[:at] + piece + text[at:]})
    for r in result.rows:
        shift = len(piece) if r["old_start"] >= at else 0
        if r["status"] != "ambiguous":
            assert r["new_start"] == r["old_start"] + shift, r


@settings(max_examples=80, deadline=None)
@given(st.lists(WORDS, min_size=3, max_size=40), st.data())
def test_whitespace_edits_never_lose_or_mislead(words, data):
    """Every whitespace run re-spaced (lines re-wrapped, double spaces): each span of whole
    words is found, at its true place or reported ambiguous, its text equal once normalised."""
    gaps = st.sampled_from([" ", "  ", "\n", " \n  ", "\t", "\n\n"])
    old_gaps = data.draw(st.lists(gaps, min_size=len(words) - 1, max_size=len(words) - 1))
    new_gaps = data.draw(st.lists(gaps, min_size=len(words) - 1, max_size=len(words) - 1))

    def joined(seps):
        text, at = "", []
        for w, sep in zip(words, [*seps, ""]):
            at.append((len(text), len(text) + len(w)))
            text += w + sep
        return text, at

    old, old_at = joined(old_gaps)
    new, new_at = joined(new_gaps)
    i = data.draw(st.integers(0, len(words) - 1))
    j = data.draw(st.integers(i, min(len(words) - 1, i + 4)))
    labels = _one_doc_labels(old, [(old_at[i][0], old_at[j][1])])
    r = reanchor(labels, {"d": new}).rows[0]
    assert r["status"] in ("unchanged", "moved", "normalised", "ambiguous"), r
    if r["status"] != "ambiguous":
        assert (r["new_start"], r["new_end"]) == (new_at[i][0], new_at[j][1]), r
        now = new[r["new_start"] : r["new_end"]]
        assert normalised(now)[0] == normalised(r["text"])[0]


def _normalised_by_character(text: str):
    """The normalisation as first written, one character at a time: the oracle."""
    import unicodedata

    out, starts, ends, space = [], [], [], False
    for i, ch in enumerate(text):
        if ch.isspace():
            if space:
                ends[-1] = i + 1
                continue
            out.append(" ")
            starts.append(i)
            ends.append(i + 1)
            space = True
            continue
        space = False
        folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())
        for c in folded:
            out.append(c)
            starts.append(i)
            ends.append(i + 1)
    return "".join(out), starts, ends


@settings(max_examples=150, deadline=None)
@given(st.text(st.sampled_from(list("aZ .,\t\n\r\x1c\x85\xa0\u2003\u3000ßﬁÅ\u00a8\u0130\u0301½Ⅻ")),
               min_size=190, max_size=400))  # fmt: skip
def test_normalising_long_texts_equals_the_character_loop(text):
    got, starts, ends = normalised(text)
    want, w_starts, w_ends = _normalised_by_character(text)
    assert got == want and starts.tolist() == w_starts and ends.tolist() == w_ends


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


@settings(max_examples=150, deadline=None)
@given(st.text("abc", min_size=1, max_size=7), st.text("abc", min_size=0, max_size=14))
def test_fuzzy_distance_is_the_least_over_every_substring(needle, hay):
    near = locate_fuzzy(needle, hay)
    if not hay:
        assert not near.starts
        return
    subs = {hay[i:j] for i in range(len(hay) + 1) for j in range(i, len(hay) + 1)}
    best = min(_levenshtein(needle, s) for s in subs)
    assert near.distance == best and near.starts
    for s, e, q in zip(near.starts, near.ends, near.quality):
        assert _levenshtein(needle, hay[s:e]) == best
        assert q == pytest.approx(1 - best / max(len(needle), e - s))
    # stopping early once quality 0.6 is out of reach changes nothing else
    cut = locate_fuzzy(needle, hay, min_quality=0.6)
    if best <= int(0.4 * len(needle) / 0.6 + 1e-9):
        assert cut == near
    else:
        assert not cut.starts and best >= cut.distance > int(0.4 * len(needle) / 0.6 + 1e-9)


# ---------------------------------------------------------------- inputs and the CLI
def test_bad_input_is_named():
    texts = {"d": "one two three four"}
    labels = SpanLabels.from_spans({"q": [("d", 4, 7)]}, texts)
    with pytest.raises(InputError, match="keep must be"):
        reanchor(labels, texts, keep="all")
    with pytest.raises(InputError, match="min_quality"):
        reanchor(labels, texts, min_quality=0)
    with pytest.raises(InputError, match="ends past the 3 characters of document 'd'"):
        reanchor(labels, texts, old_corpus={"d": "one"})
    rec = {"query_id": "q", "doc_id": "d", "start": 4, "end": 7, "text": "TWO"}
    with pytest.raises(InputError, match="is not what the old corpus holds"):
        reanchor([rec], texts, old_corpus=texts)
    with pytest.raises(InputError, match="'text' must be the 3 characters"):
        reanchor([{**rec, "text": "tw"}], texts)
    with pytest.raises(InputError, match="'grade' must be an integer"):
        reanchor([{**rec, "grade": "high"}], texts)
    with pytest.raises(InputError, match="new corpus must be"):
        reanchor(labels, ["one"])
    # records with their quoted text and no corpus of old: relocated without context
    moved = reanchor([{**rec, "text": "two"}], {"d": "zero one two three"})
    assert moved.rows[0]["status"] == "moved" and moved.rows[0]["new_start"] == 9
    # neither text nor old corpus: offsets checked, counted as unverified
    bare = reanchor([{k: v for k, v in rec.items() if k != "text"}], {"d": "short"})
    assert bare.rows[0]["status"] == "lost" and "ends past" in bare.rows[0]["note"]


def test_check_labels_cli(tmp_path, capsys):
    from ranklens.app.cli import main

    old = {"d1": "Intro. The evidence sentence. Outro.", "d2": "Alpha. Beta gamma. Delta."}
    new = {"d1": "New lead.\n\nIntro. The  evidence sentence. Outro.", "d2": "Alpha. Delta."}
    labels = tmp_path / "labels.jsonl"
    rows = [{"query_id": "q1", "doc_id": "d1", "start": 7, "end": 29},
            {"query_id": "q2", "doc_id": "d2", "start": 7, "end": 18, "grade": 2}]  # fmt: skip
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for name, corpus in (("old", old), ("new", new)):
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in corpus.items())
        )
    argv = ["check-labels", str(labels), str(tmp_path / "new.jsonl")]
    assert main(argv) == 1  # no text, no old corpus: offsets only; d2 is now too short
    out = capsys.readouterr()
    assert "1 lost, 1 unverified" in out.out and "ends past its 13 characters" in out.out
    assert "only their offsets" in out.err
    status = main([*argv, "--old-corpus", str(tmp_path / "old.jsonl"), "--format", "json",
                   "--write", str(tmp_path / "fixed.jsonl")])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert status == 1 and data["counts"]["normalised"] == 1 and data["counts"]["lost"] == 1
    fixed = [json.loads(x) for x in (tmp_path / "fixed.jsonl").read_text().splitlines()]
    assert [(r["start"], r["end"], r["text"]) for r in fixed] == [
        (18, 41, "The  evidence sentence.")
    ]
    # the written labels carry their text: checked again, they hold, unless --strict sees
    # a corpus that moved under them
    assert main(["check-labels", str(tmp_path / "fixed.jsonl"), str(tmp_path / "new.jsonl")]) == 0
    assert "1 unchanged" in capsys.readouterr().out
    assert main([*argv, "--old-corpus", str(tmp_path / "old.jsonl"), "--min-quality", "0.1",
                 "--format", "markdown"]) == 0  # fmt: skip
    assert "| fuzzy |" in capsys.readouterr().out
    assert main([*argv, "--old-corpus", str(tmp_path / "old.jsonl"), "--min-quality", "0.1",
                 "--strict"]) == 1  # fmt: skip
    capsys.readouterr()
    labels.write_text('{"query_id": "q1", "start": 1, "end": 2}\n')
    assert main(argv) == 2
    assert "labels.jsonl:1: a span needs 'doc_id'" in capsys.readouterr().err


def test_every_corpus_form_reads_the_same_texts(tmp_path):
    from ranklens.app.demo_data import load
    from ranklens.io.beir import write_beir
    from ranklens.judging.reanchor import corpus_texts

    demo = load()
    plain = ranklens.Dataset(demo.queries, demo.qrels.to_dict(), demo.corpus, "demo")
    write_beir(plain, tmp_path / "beir")
    (tmp_path / "docs.jsonl").write_text(
        "".join(json.dumps({"doc_id": d, "text": v["text"]}) + "\n" for d, v in demo.corpus.items())
    )
    texts = {d: v["text"] for d, v in demo.corpus.items()}
    for corpus in (demo, tmp_path / "beir", tmp_path / "beir" / "corpus.jsonl",
                   str(tmp_path / "docs.jsonl"), demo.corpus, texts):  # fmt: skip
        assert corpus_texts(corpus) == texts
    (tmp_path / "bad.jsonl").write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:2: document 'a' appears twice"):
        corpus_texts(tmp_path / "bad.jsonl")
    with pytest.raises(InputError, match="does not exist"):
        corpus_texts(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("param", "bad"),
    [
        ("min_quality", float("nan")),
        ("min_quality", 0),
        ("min_quality", 1.5),
        ("context", float("nan")),
        ("context", -1),
        ("context", 2.5),
        ("window", 0),
        ("window", float("inf")),
        ("keep", "fuzz"),
        ("ambiguous", "firts"),
        ("strict", "yes"),
    ],
)
def test_reanchor_parameters_are_declared_and_named(param, bad):
    from ranklens.declared import ParameterError

    labels = SpanLabels.from_spans({"q": [("d", 0, 5)]}, {"d": "hello world"})
    with pytest.raises(ParameterError, match=f"reanchor: {param} must be .* got"):
        reanchor(labels, {"d": "hello world"}, **{param: bad})
