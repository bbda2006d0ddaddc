"""``ranklens demo``: the product on a small labelled set the package ships, offline.

BM25 retrievers built in LlamaIndex, LangChain and Haystack, plus a deliberately weaker
configuration (LlamaIndex BM25 over sentence chunks, mapped back to their passages), run
through the runner over the 40 questions of :mod:`ranklens.app.demo_data`. Each framework
package builds its own demo retrievers (its adapter plugin's ``demo``), found through the
``ranklens.adapters`` entry points: the core imports no framework; then a comparison
with significance tests, a self-contained HTML report, and what LlamaIndex's own evaluator
would report for the same run and why it differs.

Without the framework packages (``ranklens[llamaindex]`` and friends), the demo says what
is missing and evaluates two TREC runs it ships instead.
"""

from __future__ import annotations

import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from .demo_freshness import freshness_section
from .demo_nolabels import nolabels_section
from .demo_spans import spans_section
from .demo_stages import stages_section

DEMO_METRICS = ["ndcg@10", "recall@10", "mrr@10", "P@5", "map"]
BASELINE = "llamaindex-bm25"


def demo_paths() -> dict[str, Path]:
    """Paths of the bundled TREC qrels and runs (the fallback demo)."""
    base = Path(str(resources.files("ranklens") / "data"))
    return {
        "qrels": base / "demo_qrels.txt",
        "bm25": base / "demo_run_bm25.txt",
        "bm25-short-chunks": base / "demo_run_bm25-short-chunks.txt",
    }


def build_retrievers(dataset: Any) -> tuple[dict[str, tuple[Any, dict[str, Any]]], list[str]]:
    """``{run name: (retriever, run options)}`` from every installed framework package's
    adapter plugin (:func:`ranklens.capture.plugins`), and the packages missing. The
    baseline run comes first."""
    from ..capture import plugins
    from ..capture.contract import PACKAGE_HINTS

    found: dict[str, tuple[Any, dict[str, Any]]] = {}
    ready: set[str] = set()
    missing: list[str] = []
    for module, plugin in plugins():
        if plugin.demo is None:
            continue
        package = PACKAGE_HINTS.get(module, module)
        try:
            found.update(plugin.demo(dataset))
            ready.add(package)
        except ImportError as exc:  # installed, but a package its demo needs is not
            missing.append(f"{package} (its demo needs {exc.name or exc})")
    for package in ("ranklens-llamaindex", "ranklens-langchain", "ranklens-haystack"):
        if package not in ready and not any(m.startswith(package) for m in missing):
            missing.append(package)
    if BASELINE in found:
        found = {BASELINE: found[BASELINE], **found}
    return found, missing


OUTPUTS = "ranklens-demo"
"""The folder the demo writes its files to (the HTML report, the judging page)."""


def run_demo(
    out: TextIO | None = None,
    html: str | Path | None = None,
    outputs: str | Path = OUTPUTS,
) -> int:
    """Print the demo to ``out`` (default stdout) and write its files (the HTML report,
    at ``html`` if given, and the judging page) to the folder ``outputs``; the exit
    status."""
    import os

    folder = Path(outputs)
    folder.mkdir(parents=True, exist_ok=True)
    html = Path(html) if html is not None else folder / "report.html"

    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    out = out or sys.stdout
    from .demo_data import load

    t0 = time.perf_counter()
    dataset = load()
    n_grouped = sum(1 for g in dataset.qrels.to_groups().values() if len(g) > 1 or len(g[0]) > 1)
    out.write(
        f"ranklens demo: {len(dataset.queries)} questions about the lighthouses of the Merrow "
        f"Isles, {len(dataset.corpus)} passages,\ngraded labels (2 answers, 1 related) and "
        f"{n_grouped} questions with grouped ground truth. Everything runs offline.\n\n"
    )
    retrievers, missing = build_retrievers(dataset)
    if missing:
        out.write("Not installed: " + "; ".join(missing) + ".\n")
    if not retrievers:
        out.write("No framework is installed: evaluating two shipped TREC runs instead.\n\n")
        return _files_demo(out)

    from ..capture import run_retriever
    from ..settings import Calling

    results = {}
    for name, (retriever, kwargs) in retrievers.items():
        res = run_retriever(retriever, dataset, k=10, name=name, calls=Calling(concurrency=4),
                            **kwargs)  # fmt: skip
        info = res.report_info()
        extra = (
            f", {info['duplicates_dropped']} sentence hits folded into their passage"
            if info["duplicates_dropped"]
            else ""
        )
        out.write(
            f"  ran {name:<27} {info['queries']} questions, {info['errors']} errors, "
            f"p50 {info['latency_ms'].get('p50', float('nan')):.2f} ms{extra}\n"
        )
        results[name] = res
    baseline = BASELINE if BASELINE in results else next(iter(results))
    from ..comparison import compare
    from ..settings import Statistics

    report = compare(dataset, results, DEMO_METRICS, baseline=baseline,
                     stats=Statistics(test="randomization"))  # fmt: skip
    out.write("\n")
    out.write(report.to_text(color=out.isatty() if hasattr(out, "isatty") else False))
    report.to_html(html)
    out.write(f"\nHTML report: {html.resolve()}  (the demo writes its files to {folder}/)\n\n")
    out.write(_llamaindex_paragraph(dataset, results.get(BASELINE)))
    out.write(_gate_section(dataset, results, baseline))
    out.write(_targets_section(dataset, results, baseline))
    out.write(_fusion_section(dataset, results, baseline))
    out.write(_sweep_section(dataset, retrievers))
    out.write(stages_section(dataset, retrievers, baseline, folder))
    out.write(_holes_section(dataset, results, folder))
    out.write(spans_section())
    out.write(freshness_section())
    section = nolabels_section(dataset, results, baseline, overlap_judge,
                               retrievers.get(baseline), report, html)  # fmt: skip
    out.write(section)
    out.write(_scale_section(dataset, results[baseline]))
    from .demo_monitor import monitor_section

    out.write(monitor_section(dataset, results, baseline))
    out.write(
        f"\n(took {time.perf_counter() - t0:.1f} s)\n\nNext:\n"
        "  ranklens explain -m ndcg@10      # why conventions disagree, on a tricky case\n"
        "  ranklens profiles                # which metrics fit your use case, what is enough\n"
        "  ranklens evaluate QRELS RUN --profile faq   # targets met, missed or not yet known\n"
        "  ranklens compare QRELS RUN_A RUN_B --html report.html\n"
        "  ranklens gate QRELS RUN --baseline base.json -m ndcg@10 --margin 0.02   # CI\n"
        "  ranklens tune-fusion QRELS RUN_A RUN_B -m ndcg@10 --norm min-max   # hybrid\n"
        "  ranklens sweep CONFIG.toml       # a grid of configurations, chosen honestly\n"
        "  ranklens stages QRELS --stage bm25=A --stage rerank=B   # where evidence is lost\n"
        "  ranklens pool QRELS RUN_A RUN_B --depth 10 -o pool.jsonl   # unjudged, to judge\n"
        "  ranklens synthesize CORPUS -o testset/ && ranklens check testset/   # no labels yet\n"
        "  ranklens estimate DATASET RUN_A RUN_B --judge mod:fn --human human.qrels  # PPI\n"
        "  ranklens evaluate EVIDENCE.jsonl RUN.jsonl -m evidence_recall@5  # span labels\n"
        "  ranklens evaluate QRELS RUN --versions VERSIONS.jsonl -m outdated@1  # freshness\n"
        "  ranklens evaluate QRELS RUN -m all_trec --format trec   # replaces trec_eval\n"
        "  ranklens evaluate QRELS shards/ --memory 2G [--ray]   # runs larger than memory\n"
        "  see docs/monitoring.md: drift alerts, OpenTelemetry, interleaving in production\n"
        "  uv run pytest                    # every check, against trec_eval too\n"
        "  see examples/ for LlamaIndex, LangChain, Haystack and AutoRAG recipes\n"
    )
    return 0


def _llamaindex_paragraph(dataset: Any, result: Any) -> str:
    """What LlamaIndex's RetrieverEvaluator would report for the same run, and why."""
    if result is None:
        return ""
    from ..evaluation import evaluate
    from .explain import explain

    run = result.run
    li = evaluate(dataset.qrels, run, ["hit_rate", "mrr", "ndcg"], convention="llamaindex")
    tr = evaluate(dataset.qrels, run, ["success@10", "mrr@10", "ndcg@10"])
    why = explain("ndcg", dataset.qrels, run, ["trec", "llamaindex"])
    reasons = []
    for row in why.rows[1:]:
        for switch, theirs, alone in row.effects:
            moved = "" if alone is None else f" (alone: {alone:.4f})"
            reasons.append(f"{switch}={theirs}{moved}")
    text = (
        f"What LlamaIndex's own RetrieverEvaluator reports for {result.name}: hit_rate "
        f"{li['hit_rate']:.4f}, mrr {li['mrr']:.4f}, ndcg {li['ndcg']:.4f}, where trec_eval's "
        f"definitions give success@10 {tr['success@10']:.4f}, mrr@10 {tr['mrr@10']:.4f}, "
        f"ndcg@10 {tr['ndcg@10']:.4f}. LlamaIndex sees a flat list of expected ids: no "
        "grades, no groups, no cutoff on the ideal ranking. The switches that move nDCG, "
        "each applied alone to trec's definition: "
        + (", ".join(reasons) or "none on this run")
        + ". Its evaluator also compares node ids: given the sentence chunks' ids instead of "
        "passage ids it would score 0 everywhere (ranklens maps them with key='parent'). "
        "`ranklens explain -m ndcg` shows each switch on a tricky example.\n"
    )
    import textwrap

    return "\n".join(textwrap.wrap(text, 92)) + "\n"


def _gate_section(dataset: Any, results: dict[str, Any], baseline: str) -> str:
    """The CI gate on the demo: would switching from the baseline run to another one pass
    a gate that allows a 0.05 drop? (With 40 questions the honest answer is often: cannot
    tell, and how many questions would.)"""
    import tempfile

    from ..comparison import gate

    others = [name for name in results if name != baseline]
    if not others:
        return ""
    candidate = "llamaindex-bm25-sentences" if "llamaindex-bm25-sentences" in others else others[0]
    metrics = ["ndcg@10", "mrr@10"]
    with tempfile.TemporaryDirectory(prefix="ranklens-demo-") as tmp:
        path = Path(tmp) / "baseline.json"
        gate(dataset, results[baseline], path, metrics, update_baseline=True)
        result = gate(dataset, results[candidate], path, metrics, margin=0.05)
    return (
        f"\nThe CI gate: {candidate} against a baseline saved from {baseline}, allowing a "
        "0.05 drop (ranklens gate / the pytest plugin; see docs/gate.md):\n\n" + result.to_text()
    )


def _targets_section(dataset: Any, results: dict[str, Any], baseline: str) -> str:
    """Is it good enough? The baseline run against the FAQ profile's targets, each judged
    by its one-sided 95% bound: with 40 questions, often not yet known, and how many more
    would tell."""
    import textwrap

    from ..comparison.targets import evaluate

    ev = evaluate(dataset, results[baseline].run, profile="faq")
    head = (
        f"Is it good enough? {baseline} against the FAQ profile's targets "
        "(ranklens.evaluate(..., profile='faq'); docs/use-cases.md), each met only when its "
        "one-sided 95% lower bound clears it:"
    )
    lines = [textwrap.fill(v.line(), 92, initial_indent="  ", subsequent_indent="    ")
             for v in ev.verdicts]  # fmt: skip
    return "\n" + "\n".join(textwrap.wrap(head, 92)) + "\n" + "\n".join(lines) + "\n"


def _fusion_section(dataset: Any, results: dict[str, Any], baseline: str) -> str:
    """Hybrid retrieval offline: the baseline fused with the sentence-level run, weights
    tuned by 5-fold cross-validation (the held-out estimate, not the in-sample best)."""
    from ..fusion import tune_fusion

    other = "llamaindex-bm25-sentences" if "llamaindex-bm25-sentences" in results else None
    if other is None or other == baseline:
        return ""
    pair = {baseline: results[baseline], other: results[other]}
    tuning = tune_fusion(dataset, pair, "wsum", "ndcg@10", norm="min-max", folds=5)
    import textwrap

    head = (
        f"Hybrid, offline: {baseline} + {other} fused by weighted CombSUM (min-max), the "
        "weights tuned by 5-fold cross-validation over the questions (ranklens.tune_fusion; "
        "docs/fusion.md):"
    )
    return "\n" + "\n".join(textwrap.wrap(head, 92)) + "\n\n" + str(tuning) + "\n"


def _sweep_section(dataset: Any, retrievers: dict[str, tuple[Any, dict[str, Any]]]) -> str:
    """The frameworks' passage-level BM25 as one sweep: the choice by cross-validation,
    beside the in-sample best, and the configurations tied with it."""
    import textwrap

    from ..settings import Calling, Statistics
    from ..sweeps import sweep

    plain = [name for name, (_, options) in retrievers.items() if not options]
    if len(plain) < 2:
        return ""

    def build(retriever: str) -> Any:
        return retrievers[retriever][0]

    result = sweep(build, {"retriever": plain}, dataset, ["ndcg@10"],
                   calls=Calling(concurrency=4, progress=False),
                   stats=Statistics(n_resamples=2000))  # fmt: skip
    sel = result.selection["ndcg@10"]
    text = (
        f"One sweep over the frameworks' BM25 (ranklens.sweep; docs/sweeps.md): chosen "
        f"{sel.chosen}, ndcg@10 {sel.cv_estimate:.4f} cross-validated over the "
        f"questions (in-sample {sel.in_sample_best:.4f}); statistically tied with it: "
        f"{len(sel.tied or [])} of {len(plain)}. A grid of chunk sizes, top-k and retrievers "
        "runs the same way, resumable, with latency, build time and a Pareto view."
    )
    return "\n" + "\n".join(textwrap.wrap(text, 92)) + "\n"


def overlap_judge(query: str, passage: str) -> int:
    """The demo's stand-in for an LLM or cross-encoder judge: 2 when the passage holds
    three of the question's content words, 1 for two, else 0."""
    words = {w.strip(".,?!'").lower() for w in query.split() if len(w) > 3}
    found = words & {w.strip(".,?!'").lower() for w in passage.split()}
    return 2 if len(found) >= 3 else 1 if len(found) == 2 else 0


def _holes_section(dataset: Any, results: dict[str, Any], folder: Path) -> str:
    """Judgment holes: the unjudged passages the runs put in their top 10, pooled, graded by
    a stand-in model judge, merged with the labels, and the runs re-scored; the pool is also
    written as a judging page for a person."""
    import textwrap
    import warnings
    from dataclasses import replace

    from ..labelling import LabelPool, PoolPair, agreement, assess, judging_page, pool, rescore
    from ..labelling.judges import CALLS
    from ..model import Qrels
    from ..settings import Statistics

    p = pool(dataset, results, depth=10, strategy="rrf", max_pairs=60)
    # calibrate first: the judge on passages the labels already grade
    labelled = LabelPool([
        PoolPair(q, d, {}, dataset.queries[q], dataset.corpus[d]["text"])
        for q, docs in dataset.qrels.to_dict().items() for d in docs if d in dataset.corpus
    ])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = assess(p, overlap_judge, calls=replace(CALLS, concurrency=4, progress=False))
        quiet = replace(CALLS, progress=False)
        check = agreement(dataset.qrels, assess(labelled, overlap_judge, calls=quiet))
    merged = Qrels.merge(dataset.qrels, model, sources=["labels", model.source])
    change = rescore(dataset, merged, results, ["P@10", "ndcg@10"], stats=Statistics(test="t"))
    page = folder / "judge.html"
    judging_page(p, page, title="ranklens demo: judge the pooled passages")
    head = (
        f"Judgment holes: the runs put {p.info['unjudged_pairs']} unlabelled passages in their "
        f"top 10. The {len(p)} ranked highest by reciprocal rank fusion were pooled "
        f"(ranklens.pool) and graded by a stand-in model judge ({model.summary_line()}; "
        "any (query, passage) -> grade callable, LLMs included: ranklens.assess). Labels "
        "merged with their provenance (Qrels.merge), the runs re-scored (ranklens.rescore). "
        f"Calibrated first on the {check.n} labelled pairs, the stand-in agrees with the "
        f"labels {check.observed:.0%} of the time (Cohen's kappa {check.kappa:.2f}, linear "
        f"{check.weighted_kappa:.2f}; ranklens.agreement): read the re-scoring with that "
        "in mind."
    )
    lines = change.to_text().splitlines()
    shown = "\n".join(lines[:8]) + ("\n  ..." if len(lines) > 8 else "")
    return (
        "\n" + "\n".join(textwrap.wrap(head, 92)) + "\n\n" + shown + "\n"
        f"Judge the pool yourself (keys 0-3, offline): {page.resolve()}\n"
    )


def _scale_section(dataset: Any, result: Any) -> str:
    """Scale, in miniature: the baseline's run written as four Parquet shard files and
    streamed back in chunks within a tiny memory budget, equal to the in-memory numbers."""
    import importlib.util
    import tempfile
    import textwrap

    from ..evaluation import evaluate
    from ..evaluation.stream import evaluate_file
    from ..io import write_run
    from ..model import Run

    run = result.run
    if importlib.util.find_spec("pyarrow") is None:
        return (
            "\nScale, in miniature: skipped here (it writes Parquet shard files, which needs "
            "pyarrow: pip install 'ranklens[fast]'); see docs/scale.md.\n"
        )
    whole = evaluate(dataset, run, ["ndcg@10", "map"])
    by_query = run.to_dict()
    queries = sorted(by_query)
    with tempfile.TemporaryDirectory(prefix="ranklens-demo-shards-") as tmp:
        for i in range(4):  # each query in one shard, as a sharded job writes them
            part = Run.from_dict({q: by_query[q] for q in queries[i::4]})
            write_run(part, Path(tmp) / f"part-{i}.parquet")
        streamed = evaluate_file(dataset, tmp, ["ndcg@10", "map"], memory="64K", progress=False)
    same = streamed.aggregate == whole.aggregate
    head = (
        f"Scale, in miniature: {run.name}'s run written as 4 Parquet shard files and read "
        f"back in {streamed.chunks} chunks within a 64 KB budget (ranklens.evaluate_file): "
        f"ndcg@10 {streamed['ndcg@10']:.4f}, map {streamed['map']:.4f}, "
        f"{'equal to the in-memory evaluation to the last bit' if same else 'DIFFERENT'}. "
        "The same call with backend='ray' scores each shard in a Ray task; a 10^6-query run "
        "(3.4 GB) takes 33 s within 2 GB (docs/scale.md)."
    )
    return "\n" + "\n".join(textwrap.wrap(head, 92)) + "\n"


def _files_demo(out: TextIO) -> int:
    from ..comparison import compare

    paths = demo_paths()
    report = compare(
        paths["qrels"],
        {"bm25": paths["bm25"], "bm25-short-chunks": paths["bm25-short-chunks"]},
        DEMO_METRICS,
        baseline="bm25",
    )
    out.write(report.to_text())
    return 0
