"""Every report type shows user text as text in every format: run, system, configuration,
metric, query, document and dataset names, query texts, titles and notes that quote them,
each hostile for some format (``<img onerror>``, ``</script>``, ``a|b``, ``*x*``,
``=HYPERLINK(...)``, ``\\textbf{x}``, ``50% & $``, ``[bold red]``, an ESC sequence, a
newline) are placed in every output, and the output checked for live markup:

* HTML: parsed; no element, attribute or script that the same object named harmlessly does
  not have (``</script>`` in a name closes nothing);
* Markdown: no name with a special character raw, no table cell split by a name;
* LaTeX: no name with a special character raw, no column split by a name;
* CSV: no cell a spreadsheet would run as a formula;
* terminal text: no ESC character, no rich markup read (the brackets print), no newline
  inside a name.

The outputs are enumerated: every ``to_markdown``/``to_html``/``to_text``/``to_latex``/
``to_csv``/``_repr_html_`` method of ``src/ranklens`` and every renderer of the
``ranklens.renderers`` entry points must be covered by a case here, so a new one cannot be
missed."""

from __future__ import annotations

import ast
import csv
import functools
import io
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

import ranklens
from ranklens import escape
from ranklens.text import visible

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "ranklens"

HOSTILE = {
    "img": "<img src=x onerror=alert(1)>",
    "script": "</script><script>alert(1)</script>",
    "pipe": "a|b",
    "emphasis": "*x*",
    "formula": '=HYPERLINK("http://x")',
    "latex": "\\textbf{x}",
    "specials": "50% & $",
    "rich": "[bold red]x[/bold red]",
    "ansi": "\x1b[31mred",
    "newline": "two\nlines",
}
NAMES = tuple(HOSTILE.values())
BENIGN = tuple(f"{i}" + re.sub(r"[^ ]", "n", n[1:].replace("\n", " ")) for i, n in enumerate(NAMES))
"""The same objects with harmless names of the same shape (length, spaces: a chart's title
wraps alike): what an output's markup must be."""

MD_SPECIAL = set("|<>*_`[]&$")
TEX_SPECIAL = set("\\&%$#_{}~^<>")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


# --------------------------------------------------------------------------- the objects
def _rank(i: int, q: int, names: tuple[str, ...]) -> dict[str, float]:
    """A ranking that differs by run and query, with a document named by a name."""
    docs = ["d1", "d2", f"doc {names[(i + q) % len(names)]}", "d3", "x1"]
    k = (i * 3 + q) % len(docs)
    docs = docs[k:] + docs[:k]
    return {d: float(len(docs) - j) for j, d in enumerate(docs)}


def _labels(names: tuple[str, ...]) -> tuple[list[str], dict[str, dict[str, int]]]:
    queries = [f"q{i}" for i in range(8)] + list(names)
    return queries, {q: {"d1": 1, "d2": 2, "d3": 1} for q in queries}


@functools.cache
def report(names: tuple[str, ...]) -> ranklens.Report:
    """A comparison of runs named by every name, on queries named by them (ids and texts),
    a dataset and a profile named by all of them, one metric renamed to a name; with the
    drill-down."""
    queries, qrels = _labels(names)
    runs = {n: {q: _rank(i, j, names) for j, q in enumerate(queries)} for i, n in enumerate(names)}
    rep = ranklens.compare(
        qrels, runs, ["ndcg@3", "P@2"], baseline=names[0],
        queries={q: f"text of {names[i % len(names)]}" for i, q in enumerate(queries)},
        dataset=" ".join(names),
        run_info={n: {"latency_ms": {"p50": 1.0, "p95": 2.0}, "concurrency": 1} for n in names},
        profile=ranklens.Profile(
            name=" ".join(names), title=names[1], metrics=["ndcg@3"],
            targets=[ranklens.Target("ndcg@3", 0.5, why=names[2], source=names[3])],
        ),
        stats=ranklens.Statistics(n_resamples=200),
    )  # fmt: skip
    data = json.loads(json.dumps(rep.to_dict()).replace('"P@2"', json.dumps(names[5])))
    return ranklens.Report.from_dict(data)


@functools.cache
def gate(names: tuple[str, ...], tmp: str) -> object:
    queries, qrels = _labels(names)
    good = {q: {"d2": 3.0, "d1": 2.0, "d3": 1.0} for q in queries}
    bad = {q: ({f"doc {q}": 9.0, "x": 8.0, "y": 7.0} if q in names else good[q]) for q in queries}
    texts = {q: f"text of {q}" for q in queries}
    labels = ranklens.Dataset(texts, ranklens.Qrels.from_dict(qrels), name=" ".join(names))
    Path(tmp).mkdir(parents=True, exist_ok=True)
    path = Path(tmp) / "baseline.json"
    ranklens.gate(
        labels,
        good,
        path,
        ["ndcg@3"],
        update_baseline=True,
        stats=ranklens.Statistics(n_resamples=200),
    )
    return ranklens.gate(
        labels, bad, path, ["ndcg@3"], show=len(names), stats=ranklens.Statistics(n_resamples=200)
    )


@functools.cache
def snapshots(names: tuple[str, ...]) -> object:
    queries, qrels = _labels(names)
    snaps = {
        f"snap {n}": {m: {q: _rank(i + s, j, names) for j, q in enumerate(queries)}
                      for i, m in enumerate(names)}
        for s, n in enumerate(names[:2])
    }  # fmt: skip
    corpora = {
        f"snap {names[0]}": {"d1": "old text", "d2": "same", "d3": "gone"},
        f"snap {names[1]}": {"d1": "new text", "d2": "same"},
    }
    return ranklens.compare_snapshots(
        qrels, snaps, ["ndcg@3"], corpora=corpora, stats=ranklens.Statistics(n_resamples=200)
    )


@functools.cache
def sweep(names: tuple[str, ...]) -> object:
    queries, qrels = _labels(names)
    texts = {q: f"query {j}" for j, q in enumerate(queries)}
    dataset = ranklens.Dataset(queries=texts, qrels=ranklens.Qrels.from_dict(qrels), name="set")
    order = {n: i for i, n in enumerate(names)}
    by_text = {t: j for j, t in enumerate(texts.values())}

    def build(setting: str):
        def retrieve(query: str, k: int = 10):
            r = _rank(order[setting], by_text[query], names)
            return sorted(r.items(), key=lambda x: -x[1])[:k]

        return retrieve

    return ranklens.sweep(
        build,
        {"setting": list(names)},
        dataset,
        ["ndcg@3"],
        stats=ranklens.Statistics(n_resamples=200),
        calls=ranklens.Calling(progress=False, concurrency=1),
    )


@functools.cache
def estimate(names: tuple[str, ...]) -> object:
    queries, qrels = _labels(names)
    texts = {q: f"query {j}" for j, q in enumerate(queries)}
    corpus = {d: {"title": "", "text": f"passage {d}"} for d in ("d1", "d2", "d3", "x1")}
    corpus.update({f"doc {n}": {"title": "", "text": f"passage {n}"} for n in names})
    dataset = ranklens.Dataset(queries=texts, qrels=ranklens.Qrels.from_dict(qrels),
                               corpus=corpus, name=" ".join(names))  # fmt: skip
    runs = {n: {q: _rank(i, j, names) for j, q in enumerate(queries)} for i, n in enumerate(names)}

    def judge(query: str, passage: str) -> int:
        return 1 if passage.endswith(("d1", "d2")) else 0

    return ranklens.estimate(
        dataset,
        runs,
        judge=judge,
        human=10,
        metrics=["P@3"],
        calls=ranklens.Calling(progress=False, concurrency=1),
    )


@functools.cache
def tunings(names: tuple[str, ...]) -> tuple[object, ...]:
    """Fusion tunings of three runs each (a heatmap of two weights), every name a run."""
    queries, qrels = _labels(names)
    groups = [names[i : i + 3] for i in range(0, len(names), 3)]
    groups[-1] = (*groups[-1], *names[: 3 - len(groups[-1])])
    out = []
    for g in groups:
        runs = {n: {q: _rank(i + len(out), j, names) for j, q in enumerate(queries)}
                for i, n in enumerate(g)}  # fmt: skip
        out.append(
            ranklens.tune_fusion(
                qrels, runs, "wsum", "ndcg@3", stats=ranklens.Statistics(n_resamples=200)
            )
        )
    return tuple(out)


@functools.cache
def rescoring(names: tuple[str, ...]) -> object:
    from ranklens.labelling import rescore

    queries, qrels = _labels(names)
    after = {q: {**v, f"doc {names[0]}": 2} for q, v in qrels.items()}
    runs = {n: {q: _rank(i, j, names) for j, q in enumerate(queries)} for i, n in enumerate(names)}
    return rescore(qrels, after, runs, ["P@2"], stats=ranklens.Statistics(n_resamples=200))


@functools.cache
def reanchored(names: tuple[str, ...]) -> object:
    old = {f"doc {n}": f"intro {n} the evidence here. tail" for n in names}
    new = {d: "changed " + t.replace("the evidence", "evidence") for d, t in old.items()}
    spans = {f"q {n}": [(f"doc {n}", t.index("the"), t.index(". tail"))]
             for n, t in zip(names, old.values())}  # fmt: skip
    labels = ranklens.SpanLabels.from_spans(spans, old)
    return ranklens.reanchor(labels, new)


@functools.cache
def evaluation(names: tuple[str, ...]) -> object:
    queries, qrels = _labels(names)
    return ranklens.evaluate(qrels, {q: _rank(0, j, names) for j, q in enumerate(queries)},
                             ["P@2"])  # fmt: skip


@functools.cache
def stage_evaluation(names: tuple[str, ...]) -> object:
    """A pipeline of three stages, each named by a name, on queries and documents named by
    them: the first retrieves, the second keeps three, the last keeps one."""
    queries, qrels = _labels(names)
    first = {q: _rank(0, j, names) for j, q in enumerate(queries)}
    staged = {
        f"stage {names[0]}": first,
        f"stage {names[1]}": {q: dict(list(first[q].items())[:3]) for q in queries},
        f"stage {names[2]}": {q: dict(list(first[q].items())[:1]) for q in queries},
    }
    return ranklens.evaluate_stages(qrels, staged, ["recall@5", "P@1"], name=" ".join(names))


def judging_page(names: tuple[str, ...]) -> str:
    from ranklens.labelling import judging_page as page
    from ranklens.labelling.pool import PoolPair

    pairs = [PoolPair(n, f"doc {n}", {n: 1}, query=f"query {n}", text=f"passage {n}")
             for n in names]  # fmt: skip
    return page(pairs, title=" ".join(names), labels={0: names[0], 1: names[1]})


def mlflow_artifacts(names: tuple[str, ...], tmp: str) -> dict[str, str]:
    """The text artifacts :func:`ranklens.render.mlflow.log_mlflow` writes (a gate's),
    captured by a stand-in for mlflow's ``log_artifacts``."""
    from ranklens.render import mlflow as ml

    files: dict[str, str] = {}

    class Stub:
        def log_artifacts(self, folder: str, artifact_path: str | None = None) -> None:
            for p in Path(folder).iterdir():
                files[p.name] = p.read_text(encoding="utf-8")

    result = gate(names, tmp)
    ml._artifacts(Stub(), result.report, result)
    return files


# --------------------------------------------------------------------------- the outputs
@dataclass(frozen=True)
class Output:
    """One output of one object: ``render(names, tmp)`` gives its text; ``fmt`` says how it
    is checked; ``covers``: the methods and renderers it exercises."""

    id: str
    fmt: str
    render: Callable[[tuple[str, ...], str], str]
    covers: tuple[str, ...] = ()
    xfail: str = ""


def _all(parts) -> str:
    return "\n".join(parts)


OUTPUTS = [
    Output("report-text", "terminal", lambda n, t: report(n).to_text(details=True),
           ("comparison.report:Report.to_text", "renderer:text", "renderer:rich")),
    Output("report-text-color", "terminal-color", lambda n, t: report(n).to_text(color=True)),
    Output("report-print", "terminal-color", lambda n, t: _printed(report(n)), ("renderer:print",)),
    Output("report-markdown", "markdown", lambda n, t: report(n).to_markdown(details=True),
           ("comparison.report:Report.to_markdown", "renderer:markdown")),
    Output("report-latex", "latex", lambda n, t: report(n).to_latex(caption=" ".join(n)),
           ("comparison.report:Report.to_latex", "renderer:latex")),
    Output("report-pandas", "data", lambda n, t: json.dumps(list(report(n).to_pandas()["run"])),
           ("renderer:pandas",)),
    Output("report-csv", "csv",
           lambda n, t: _all(report(n).to_csv(kind=k)
                             for k in ("summary", "per_query", "comparisons")),
           ("comparison.report:Report.to_csv", "renderer:csv")),
    Output("report-html", "html", lambda n, t: report(n).to_html(title=" ".join(n)),
           ("comparison.report:Report.to_html", "renderer:html")),
    Output("report-fragment", "html", lambda n, t: report(n)._repr_html_(),
           ("comparison.report:Report._repr_html_", "renderer:html_fragment")),
    Output("gate-text", "terminal", lambda n, t: gate(n, t).to_text(),
           ("comparison.gate:GateResult.to_text", "renderer:gate_text")),
    Output("gate-markdown", "markdown", lambda n, t: gate(n, t).to_markdown(),
           ("comparison.gate:GateResult.to_markdown", "renderer:gate_markdown")),
    Output("mlflow-gate-markdown", "markdown", lambda n, t: mlflow_artifacts(n, t)["gate.md"],
           ("renderer:mlflow",)),
    Output("mlflow-report-html", "html", lambda n, t: mlflow_artifacts(n, t)["report.html"]),
    Output("mlflow-per-query-csv", "csv", lambda n, t: mlflow_artifacts(n, t)["per_query.csv"]),
    Output("snapshots-text", "terminal", lambda n, t: snapshots(n).to_text(),
           ("comparison.snapshots:Snapshots.to_text", "renderer:snapshots_text")),
    Output("snapshots-markdown", "markdown", lambda n, t: snapshots(n).to_markdown(),
           ("comparison.snapshots:Snapshots.to_markdown", "renderer:snapshots_markdown")),
    Output("snapshots-report-html", "html",
           lambda n, t: _all(r.to_html() for r in snapshots(n).reports.values())),
    Output("sweep-text", "terminal", lambda n, t: str(sweep(n)), ("renderer:sweep_text",)),
    Output("sweep-markdown", "markdown", lambda n, t: sweep(n).to_markdown(),
           ("sweeps.result:SweepResult.to_markdown", "renderer:sweep_markdown")),
    Output("sweep-html", "html", lambda n, t: sweep(n)._repr_html_(),
           ("sweeps.result:SweepResult._repr_html_", "renderer:sweep_html")),
    Output("sweep-report-html", "html", lambda n, t: sweep(n).to_html(),
           ("sweeps.result:SweepResult.to_html",)),
    Output("estimate-text", "terminal", lambda n, t: str(estimate(n)), ("renderer:estimate_text",)),
    Output("estimate-html", "html", lambda n, t: estimate(n).to_html(),
           ("estimation.result:EstimateResult.to_html", "renderer:estimate_html")),
    Output("estimate-fragment", "html", lambda n, t: estimate(n)._repr_html_(),
           ("estimation.result:EstimateResult._repr_html_",)),
    Output("estimate-in-report", "html", lambda n, t: _attached(n).to_html()),
    Output("estimate-in-report-text", "terminal", lambda n, t: _attached(n).to_text()),
    Output("fusion-text", "terminal", lambda n, t: _all(str(x) for x in tunings(n)),
           ("renderer:fusion_text",)),
    Output("fusion-html", "html", lambda n, t: _all(x._repr_html_() for x in tunings(n)),
           ("fusion.tuning:FusionTuning._repr_html_", "renderer:fusion_html")),
    Output("fusion-report-html", "html",
           lambda n, t: _all(x.report(_labels(n)[1],
                                      stats=ranklens.Statistics(n_resamples=200)).to_html()
                             for x in tunings(n))),
    Output("rescore-text", "terminal", lambda n, t: rescoring(n).to_text(),
           ("labelling.rescore:Rescoring.to_text",)),
    Output("rescore-html", "html", lambda n, t: rescoring(n)._repr_html_(),
           ("labelling.rescore:Rescoring._repr_html_",)),
    Output("judging-page", "html", lambda n, t: judging_page(n), ("labelling.page:judging_page",)),
    Output("reanchored-text", "terminal", lambda n, t: reanchored(n).to_text(),
           ("judging.reanchored:Reanchored.to_text",)),
    Output("reanchored-markdown", "markdown", lambda n, t: reanchored(n).to_markdown(),
           ("judging.reanchored:Reanchored.to_markdown",)),
    Output("stages-markdown", "markdown", lambda n, t: stage_evaluation(n).to_markdown(),
           ("stages.evaluate:StageEvaluation.to_markdown",)),
    Output("stages-html", "html", lambda n, t: stage_evaluation(n).to_html(title=" ".join(n)),
           ("stages.evaluate:StageEvaluation.to_html",)),
    Output("stages-fragment", "html", lambda n, t: stage_evaluation(n)._repr_html_(),
           ("stages.evaluate:StageEvaluation._repr_html_",)),
    Output("evaluation-html", "html", lambda n, t: evaluation(n)._repr_html_(),
           ("evaluation:Evaluation._repr_html_",)),
    Output("evaluation-table", "terminal", lambda n, t: evaluation(n).to_table(per_query=True)),
]  # fmt: skip


def _printed(rep: ranklens.Report) -> str:
    """What :meth:`Report.print` writes to the terminal."""
    from rich.console import Console

    import ranklens.render.terminal as term

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard", width=200)
    shown = ranklens.comparison.display.display_copy(rep)
    console.print(term.rich_table(shown, 4, True))
    console.print(term.comparisons_table(shown, 4))
    return buf.getvalue()


@functools.cache
def _attached(names: tuple[str, ...]) -> ranklens.Report:
    rep = ranklens.Report.from_dict(report(names).to_dict())
    return estimate(names).attach(rep)


# --------------------------------------------------------------------------- the checks
class _Markup(HTMLParser):
    """Every element and attribute of a page, and the scripts' count."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[tuple[str, str]] = set()
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add((tag, ""))
        self.tags.update((tag, a) for a, _ in attrs)
        self.scripts += tag == "script"


def _markup(page: str) -> _Markup:
    p = _Markup()
    p.feed(page)
    p.close()
    return p


def _unescaped(line: str, ch: str) -> int:
    """Occurrences of ``ch`` in ``line`` not escaped by a backslash."""
    return len(re.findall(r"(?<!\\)(?:\\\\)*" + re.escape(ch), line))


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def check(fmt: str, out: str, benign: str, key: str) -> None:
    """``out`` (with the name ``HOSTILE[key]`` among the user texts) has no live markup;
    ``benign`` is the same output of the same object named harmlessly."""
    name = HOSTILE[key]
    shown = BENIGN[list(HOSTILE).index(key)] in benign  # does this output show the name?
    if fmt == "html":
        ours, theirs = _markup(out), _markup(benign)
        elements = {t for t, _ in theirs.tags}  # a chart's line can come and go with the data
        live = ("src", "href", "style")
        extra = {(t, a) for t, a in ours.tags - theirs.tags
                 if t not in elements or a.startswith("on") or a in live}  # fmt: skip
        assert not extra, f"markup from a name: {extra}"
        assert ours.scripts == theirs.scripts, "a name opened or closed a <script>"
        assert "\x1b" not in out
    elif fmt == "markdown":
        if MD_SPECIAL & set(name):
            assert name not in out
        assert "\x1b" not in out
        lines, plain = out.splitlines(), benign.splitlines()
        assert len(lines) == len(plain), "a name broke a line"
        for a, b in zip(lines, plain):
            assert _unescaped(a, "|") == _unescaped(b, "|"), f"a name split a table row: {a}"
            assert _unescaped(a, "<") == _unescaped(b, "<"), f"HTML from a name: {a}"
    elif fmt == "latex":
        if TEX_SPECIAL & set(name):
            assert name not in out
        assert "\x1b" not in out
        for a, b in zip(out.splitlines(), benign.splitlines(), strict=True):
            assert _unescaped(a, "&") == _unescaped(b, "&"), f"a name split a column: {a}"
    elif fmt == "csv":
        for row in csv.reader(io.StringIO(out)):
            for cell in row:
                if cell.lstrip(" ").startswith(FORMULA):
                    float(cell)  # a number (a negative difference) only
    elif fmt in ("terminal", "terminal-color"):
        text = ANSI.sub("", out) if fmt == "terminal-color" else out
        assert "\x1b" not in text, "an ESC character from a name"
        assert "\n" not in name or name not in text, "a newline inside a name"
        if shown:  # shown as text: rich read no markup, the escapes are there
            assert visible(name)[:6] in text, f"{visible(name)[:6]!r} not shown"
        if fmt == "terminal-color":
            assert "\x1b[31mred" not in out
    elif fmt == "data":  # pandas: the data as it is
        assert name in json.loads(out)
    else:  # pragma: no cover
        raise AssertionError(fmt)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("escaping"))


CASES = [
    pytest.param(o, key, id=f"{o.id}-{key}",
                 marks=[pytest.mark.xfail(strict=True, reason=o.xfail)] if o.xfail else [])
    for o in OUTPUTS
    for key in HOSTILE
]  # fmt: skip


@pytest.mark.parametrize(("output", "key"), CASES)
def test_every_output_shows_names_as_text(output: Output, key: str, tmp: str) -> None:
    out = _rendered(output, NAMES, tmp + "/hostile")
    benign = _rendered(output, BENIGN, tmp + "/benign")
    check(output.fmt, out, benign, key)


@functools.cache
def _rendered(output: Output, names: tuple[str, ...], tmp: str) -> str:
    return output.render(names, tmp)


# --------------------------------------------------------------------------- enumeration
METHODS = {"to_markdown", "to_html", "to_text", "to_latex", "to_csv", "_repr_html_"}


def _methods() -> set[str]:
    """``module:Class.method`` of every rendering method in ``src/ranklens``."""
    found = set()
    for path in SRC.rglob("*.py"):
        if path.parent.name == "render":
            continue  # the renderers: through the entry points
        module = ".".join(path.relative_to(SRC).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name in METHODS:
                        found.add(f"{module}:{node.name}.{item.name}")
    return found


def _renderers() -> set[str]:
    from ranklens.comparison.renderers import ENTRY_POINT_GROUP
    from ranklens.plugins import entry_point_table

    return {f"renderer:{n}" for n in entry_point_table(ENTRY_POINT_GROUP)}


def test_every_output_is_covered():
    covered = {c for o in OUTPUTS for c in o.covers}
    missing = (_methods() | _renderers() | {"labelling.page:judging_page"}) - covered
    assert not missing, f"outputs with no case in {Path(__file__).name}: {sorted(missing)}"


@pytest.mark.parametrize("text", [*NAMES, "plain", "", "\u202egnp.exe", "a\\[b]", "x\\"])
def test_each_escape_keeps_the_text_readable(text: str) -> None:
    """Each function of ranklens.escape shows the text as it was (control characters as
    their codes): Markdown and rich markup read back to it, HTML unescapes to it."""
    import html as std_html

    from rich.markup import render

    shown = visible(text)
    assert std_html.unescape(escape.html(text)) == shown
    assert render(escape.rich_markup(text) + "[bold]!").plain == shown + "!"
    assert escape.terminal(text) == shown
    md = re.sub(r"\\(.)", r"\1", escape.markdown(text))
    assert md == visible(text.replace("\n", " "))
    assert escape.csv_cell(text) in (text, "'" + text)
    assert escape.html(escape.html(text)) != text or not set("&<>\"'") & set(text)


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1+2", "@SUM(A1)", "\tx", "\rx", " =1", "  @x"])
def test_csv_cells_a_spreadsheet_would_run_are_prefixed(cell: str) -> None:
    assert escape.csv_cell(cell) == "'" + cell
    assert escape.csv_cell(math.nan) == "" and escape.csv_cell(-1.5) == -1.5


@pytest.mark.parametrize("title", ["__DATA__", "a __TITLE__ b", "__DATA____TITLE__"])
def test_the_judging_pages_placeholders_are_filled_once(title: str) -> None:
    """A title or a query naming the page's placeholders is shown as text: the JSON data is
    not pasted into the title, nor the title into the data."""
    from ranklens.labelling import judging_page as page
    from ranklens.labelling.pool import PoolPair

    html = page([PoolPair("q", "d", {"r": 1}, query=title, text="t")], title=title)
    head = html[html.index("<title>") + 7 : html.index("</title>")]
    assert head == escape.html(title)
    data = html[html.index('id="pool-data"') :]
    assert json.loads(data[data.index(">") + 1 : data.index("</script>")])["title"] == title
