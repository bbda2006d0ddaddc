"""Every code block of README.md and docs/*.md is executed, so that none can go stale.

Python blocks of one page run in order in one namespace, in a temporary directory holding
the files and objects they name (``qrels.txt``, ``bm25.run``, ``data/scifact``, a
``bm25_retriever``, a LlamaIndex ``query_engine``, a LangChain ``chain``, a Haystack
``pipeline``: real ones, offline). Shell blocks run each ``ranklens`` command through the
CLI. Blocks that are not code (output shown on the page, a tree, a TOML snippet) are
listed below by their first line; any other block fails this test until it is run here.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

NOT_CODE = (
    " app/",  # architecture.md: the floors drawn as text
    "[project.entry-points",  # architecture.md: a TOML snippet
    "retrieval_gt = ",  # grouped.md: the AutoRAG shapes, illustrative
    "trec {",  # grouped.md: printed output (checked by test_docs.py)
    "redundant {",
    "mrr@10 under each convention",  # conventions.md: generated explain output (test_conventions)
    "map under each convention",
    "ndcg@5 under each convention",
    "P@5 under each convention",
    "- llamaindex: evidence precision@5",  # chunking.md: the example's output (test_examples)
)
EXECUTED_ELSEWHERE = {
    "architecture.md": "tests/project/test_architecture.py",
    "grouped.md": "tests/project/test_docs.py",
}
# the suite itself; the demo (run by tests/app/test_cli.py and in CI's last step)
SKIPPED_COMMANDS = ("uv run pytest", "uv run ranklens demo", "ranklens demo")
INSTALL_COMMANDS = ("python3 -m pip install uv", "python3 -m venv", "pip install ")
"""The README's first-contact lines, run for real in a fresh environment without uv by
tests/project/test_first_contact.py."""


def blocks(page: Path) -> list[tuple[str, str]]:
    text = page.read_text(encoding="utf-8")
    return [
        (m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
    ]


def _commands(code: str) -> list[list[str]]:
    joined = re.sub(r"\\\n\s*", " ", code)
    out = []
    for line in joined.splitlines():
        line = line.split("  #")[0].strip()
        if not line or line.startswith("#") or line.startswith(SKIPPED_COMMANDS + INSTALL_COMMANDS):
            continue
        words = shlex.split(line)
        if words[:2] == ["uv", "run"]:
            words = words[2:]
        assert words[0] == "ranklens", f"shell block runs something else: {line}"
        out.append(words[1:])
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The files the pages name, made from the demo's labelled set."""
    import ranklens
    from ranklens.app.demo import demo_paths
    from ranklens.app.demo_data import load
    from ranklens.io.beir import write_beir

    d = tmp_path_factory.mktemp("readme")
    paths = demo_paths()
    shutil.copy(paths["qrels"], d / "qrels.txt")
    rows = [line.split() for line in (d / "qrels.txt").read_text().splitlines() if line.strip()]
    (d / "qrels_jg.txt").write_text(  # two assessors: all labels, and half of them binarised
        "".join(f"{q} a {doc} {g}\n" for q, _, doc, g in rows)
        + "".join(f"{q} b {doc} {min(int(g), 1)}\n" for q, _, doc, g in rows[::2])
    )
    for name, src in (
        ("run.txt", "bm25"),
        ("bm25.run", "bm25"),
        ("dense.run", "bm25-short-chunks"),
    ):
        shutil.copy(paths[src], d / name)
    hybrid = ranklens.read_run(paths["bm25"]).to_dict()
    ranklens.io.write_run(
        ranklens.Run.from_dict({q: dict(list(h.items())[::-1]) for q, h in hybrid.items()}),
        d / "hybrid.run",
    )
    demo = load()  # grouped truth; BEIR holds plain labels: each document its highest grade
    plain = ranklens.Dataset(demo.queries, demo.qrels.to_dict(), demo.corpus, "scifact")
    write_beir(plain, d / "data" / "scifact")
    return d


_BUILT: dict[Path, dict] = {}


def shared_namespace(workdir: Path) -> dict:
    """:func:`_namespace`, built once for every page (each page gets a copy of the dict:
    the retrievers and apps are shared, as a reader's session shares them)."""
    if workdir not in _BUILT:
        _BUILT[workdir] = _namespace(workdir)
    return _BUILT[workdir]


def _namespace(workdir: Path) -> dict:
    """What the README's blocks name but do not build: real, offline retrievers and apps."""
    import ranklens
    from ranklens.app.demo_data import load

    dataset = load()
    texts = {d: f"{v['title']}. {v['text']}" for d, v in dataset.corpus.items()}

    def bm25_retriever(query: str, k: int = 10):  # chunk hits that name their document
        words = set(query.lower().split())
        scored = sorted(
            ((len(words & set(t.lower().split())), d) for d, t in texts.items()), reverse=True
        )
        return [{"id": f"{d}#0", "parent": d, "score": float(s)} for s, d in scored[:k]]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense_result = ranklens.run_retriever(
            lambda q: [h["parent"] for h in bm25_retriever(q)][::-1], dataset
        )
    ns = {"bm25_retriever": bm25_retriever, "dense_result": dense_result}

    from llama_index.core import Settings
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.response_synthesizers import get_response_synthesizer
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    source = NodeRelationship.SOURCE  # chunks of documents: key="parent" finds the document
    nodes = [
        TextNode(id_=f"{d}#0", text=t, relationships={source: RelatedNodeInfo(node_id=d)})
        for d, t in texts.items()
    ]
    Settings.llm = MockLLM()
    ns["query_engine"] = RetrieverQueryEngine(
        retriever=BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5),
        response_synthesizer=get_response_synthesizer(response_mode="no_text"),
    )

    from langchain_core.documents import Document
    from langchain_core.runnables import RunnableLambda
    from ranklens_langchain import BM25sRetriever

    docs = [Document(page_content=t, id=d, metadata={"doc_id": d}) for d, t in texts.items()]
    ns["chain"] = BM25sRetriever.from_documents(docs, k=5) | RunnableLambda(
        lambda found: len(found)
    )
    ns["questions"] = list(dataset.queries.values())[:5]

    from haystack import Document as HDocument
    from haystack import Pipeline
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    store.write_documents([HDocument(id=d, content=t) for d, t in texts.items()])
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store, top_k=5))
    ns["pipeline"] = pipeline
    ns["dataset"] = dataset
    return ns


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_code_block_runs(page, workdir, monkeypatch, capsys):
    from ranklens.app.cli import main

    monkeypatch.chdir(workdir)
    ns: dict | None = None
    ran = 0
    for lang, code in blocks(page):
        first = code.splitlines()[0] if code.strip() else ""
        if lang in ("", "text", "toml") and first.startswith(NOT_CODE):
            continue
        if lang == "python" and page.name in EXECUTED_ELSEWHERE:
            ran += 1
            continue
        if lang == "python":
            if ns is None:
                pytest.importorskip("ranklens_llamaindex")
                pytest.importorskip("ranklens_langchain")
                pytest.importorskip("ranklens_haystack")
                ns = {"__name__": f"readme_{page.stem}", **shared_namespace(workdir)}
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                exec(compile(code, str(page), "exec"), ns)
            ran += 1
        elif lang in ("bash", "sh", "") and first.lstrip().startswith(
            ("ranklens", "uv run", *INSTALL_COMMANDS)
        ):
            for argv in _commands(code):
                status = main(argv)
                out = capsys.readouterr()
                assert status == 0, (argv, out.err)
            ran += 1
        else:
            pytest.fail(
                f"{page.name}: a ```{lang} block starting {first!r} is neither run nor listed"
            )
    if page.name == "README.md":
        assert ran >= 10
    for leftover in ("report.html", "report.json", "traffic.jsonl"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(workdir / leftover)
