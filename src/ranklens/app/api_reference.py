"""The API reference of the docs site, generated from the facade's public names (every name in
``ranklens.__all__``, grouped by the job it does) into ``docs/api/*.md`` pages that
mkdocstrings renders from the docstrings. A test keeps the pages equal to this generator, so
a new public name cannot be left out of the reference.

``uv run python -m ranklens.app.api_reference docs/api`` rewrites the pages.
"""

from __future__ import annotations

import sys
from pathlib import Path

GROUPS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "evaluate": (
        "Evaluate",
        "One run against its labels: per-query values and means; files larger than memory.",
        ("evaluate", "Evaluation", "evaluate_file", "evaluate_judgment_groups",
         "write_per_query"),
    ),
    "compare": (
        "Compare and gate",
        "Several runs with paired tests, the report, the CI gate, power and corpus snapshots.",
        ("compare", "ReportContents", "Report", "load_report", "register_renderer", "gate", "power",
         "compare_snapshots", "Snapshots"),
    ),
    "read": (
        "Read and write",
        "Files in and out: qrels, runs, datasets, judgment groups, versions tables.",
        ("read_qrels", "read_run", "read_dataset", "read_judgment_groups", "write_qrels",
         "write_run", "register_format", "read_versions"),
    ),
    "model": (
        "Labels, runs and datasets",
        "What ranklens holds in memory.",
        ("Qrels", "Run", "Dataset", "SpanLabels", "Versions"),
    ),
    "judging": (
        "Judging",
        "Labels matched with a run once, under a convention: the judged arrays every metric "
        "reads; freshness rules; span labels relocated.",
        ("judge", "Judged", "JudgeOptions", "Convention", "get_convention", "FreshnessRule",
         "reanchor", "Reanchored"),
    ),
    "metrics": (
        "Metrics",
        "Metric names parsed into objects, the registry and its declared parameters.",
        ("Metric", "Family", "Param", "parse_metric", "parse_metrics", "register_metric"),
    ),
    "capture": (
        "Run retrievers and record apps",
        "Retrievers of any framework called with concurrency, retries and a resumable log; "
        "a live app's retrievals recorded.",
        ("run_retriever", "arun_retriever", "RunResult", "RetrieverAdapter", "AdapterPlugin",
         "register_adapter", "Hit", "text_hash", "Recorder", "Retrieval"),
    ),
    "fusion": (
        "Fusion",
        "Runs fused, and fusion weights tuned by cross-validation.",
        ("fuse", "tune_fusion", "FusionTuning", "weight_grid"),
    ),
    "labelling": (
        "Labelling and holes",
        "Unjudged documents, pools to label, model and human judges, agreement.",
        ("holes", "HoleRange", "pool", "LabelPool", "assess", "judging_page", "read_judgments",
         "agreement", "rescore"),
    ),
    "nolabels": (
        "Without labels",
        "Synthetic test sets, dataset checks, model-judged estimates (PPI).",
        ("synthesize", "check_dataset", "OfflineGenerator", "estimate", "plan_labels",
         "judge_bias", "EstimateResult"),
    ),
    "stages": (
        "Pipeline stages",
        "Every stage of a RAG pipeline measured, where each relevant unit was lost, and the "
        "recall each stage loses.",
        ("evaluate_stages", "StageEvaluation", "StageLoss", "StagedRun", "Pipeline", "Stage",
         "Budget"),
    ),
    "sweeps": ("Sweeps", "Retriever configurations compared and chosen honestly.",
               ("sweep", "SweepResult", "Selection", "Costs", "Execution", "Retrieving",
                "Naming")),
    "monitoring": ("Monitoring", "Production windows, drift, alerts, interleaving.",
                   ("Monitor", "DriftTests", "ModelJudge", "Windowing", "interleave",
                    "interleaving_result")),
    "profiles": (
        "Use-case profiles",
        "Targets as data, verdicts against them, and the queries a verdict needs.",
        ("Profile", "Target", "Typical", "MetricUse", "get_profile", "all_profiles",
         "register_profile", "load_profiles", "TargetVerdict", "plan_queries", "Plan"),
    ),
    "settings": (
        "Settings and errors",
        "The shared settings objects, the declared-parameter layer and the exceptions.",
        ("Statistics", "Calling", "RanklensError", "InputError", "RanklensWarning",
         "RunFailuresWarning", "UnseenStagesWarning", "MetricNameError", "DuplicateDocumentError",
         "UnknownOptionError"),
    ),
}  # fmt: skip
"""Page name -> (title, one line, the public names on it, in reading order)."""

EXTRA: dict[str, str] = {}
"""Public objects documented beside the facade's names: their module under ranklens."""


def home(name: str) -> str:
    """The module that defines ``ranklens.<name>``."""
    import importlib

    # the facade sits above app: this generator reads it as the docs' reader sees it
    facade = importlib.import_module("ranklens")
    obj = (
        getattr(importlib.import_module(f"ranklens.{EXTRA[name]}"), name)
        if name in EXTRA
        else getattr(facade, name)
    )
    return str(obj.__module__)


def pages() -> dict[str, str]:
    """``{file name: Markdown}`` of every API page, and ``index.md``."""
    out: dict[str, str] = {}
    index = [
        "# API reference",
        "",
        "Every public name of `ranklens`, by the job it does, rendered from its docstring "
        "(what it computes, the formula and its reference). Each is imported as "
        "`ranklens.NAME`. Parameters are declared once: [the parameter reference]"
        "(../parameters.md) lists what each takes.",
        "",
    ]
    for page, (title, line, names) in GROUPS.items():
        body = [f"# {title}", "", line, ""]
        for name in names:
            body += [f"## `ranklens.{name}`", "", f"::: {home(name)}.{name}", "    options:",
                     "      show_root_heading: false", ""]  # fmt: skip
        out[f"{page}.md"] = "\n".join(body)
        index.append(f"- [{title}]({page}.md): {line}")
    out["index.md"] = "\n".join(index) + "\n"
    return out


def documented() -> set[str]:
    """The public names the pages document."""
    return {n for _, _, names in GROUPS.values() for n in names}


if __name__ == "__main__":  # pragma: no cover - rewrites the pages
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/api")
    folder.mkdir(parents=True, exist_ok=True)
    for file, text in pages().items():
        (folder / file).write_text(text, encoding="utf-8")
