"""ranklens: exact, fast ranking metrics for retrieval and RAG evaluation.

Default numbers equal trec_eval's; every (qrels, run) pair is judged once into arrays and
each metric is a vectorised function of them. This module is the facade: every public name
below, imported lazily (``import ranklens`` stays fast) from the floor that owns it
(see ``docs/architecture.md``).

>>> import ranklens
>>> ranklens.evaluate({"q1": {"d1": 2, "d2": 1}}, {"q1": {"d1": 0.9, "d3": 0.5}},
...                   ["ndcg@10", "mrr"]).aggregate
{'ndcg@10': 0.7601875334, 'mrr': 1.0}
"""

from __future__ import annotations

import logging
from typing import Any

from .version import __version__

# Library code logs to the "ranklens" logger and prints nothing; only the CLI prints.
logging.getLogger("ranklens").addHandler(logging.NullHandler())


_LAZY = {
    # model
    "Qrels": "model",
    "Run": "model",
    "Dataset": "model",
    "SpanLabels": "model.spans",
    # io
    "read_qrels": "io",
    "read_run": "io",
    "read_dataset": "io",
    "read_judgment_groups": "io",
    "write_qrels": "io",
    "write_run": "io",
    "register_format": "io",
    # judging
    "judge": "judging",
    "Judged": "judging",
    "JudgeOptions": "judging",
    "Convention": "judging",
    "get_convention": "judging",
    # metrics
    "Metric": "metrics",
    "Family": "metrics",
    "Param": "metrics",
    "parse_metric": "metrics",
    "parse_metrics": "metrics",
    "register_metric": "metrics",
    # evaluation (ranklens.evaluate: see "use-case profiles" below)
    "evaluate_judgment_groups": "evaluation.groups",
    "evaluate_file": "evaluation.stream",
    "write_per_query": "evaluation.per_query",
    "Evaluation": "evaluation",
    # comparison
    "compare": "comparison",
    "Report": "comparison",
    "ReportContents": "comparison",
    "load_report": "comparison",
    "register_renderer": "comparison",
    "gate": "comparison",
    "power": "comparison",
    # fusion
    "fuse": "fusion",
    "tune_fusion": "fusion",
    "FusionTuning": "fusion",
    "weight_grid": "fusion",
    # unjudged documents (holes) and filling them
    "holes": "comparison",
    "HoleRange": "comparison",
    "pool": "labelling",
    "LabelPool": "labelling",
    "assess": "labelling",
    "judging_page": "labelling",
    "read_judgments": "labelling",
    "agreement": "labelling",
    "rescore": "labelling",
    # no labels yet: synthetic test sets, leakage checks, model-judged estimates (PPI)
    "synthesize": "synthesis",
    "check_dataset": "synthesis",
    "OfflineGenerator": "synthesis",
    "estimate": "estimation",
    "plan_labels": "estimation",
    "judge_bias": "estimation",
    "EstimateResult": "estimation",
    # capture
    "run_retriever": "capture",
    "arun_retriever": "capture",
    "RunResult": "capture",
    "RetrieverAdapter": "capture",
    "AdapterPlugin": "capture",
    "register_adapter": "capture",
    "Hit": "capture",
    "text_hash": "capture",
    "Recorder": "capture",
    "Retrieval": "capture",
    # monitoring in production: live windows, drift alerts, exports, interleaving
    "Monitor": "monitoring",
    "DriftTests": "monitoring",
    "ModelJudge": "monitoring",
    "Windowing": "monitoring",
    "interleave": "monitoring",
    "interleaving_result": "monitoring",
    # sweeps: retriever configurations compared in one call, chosen honestly
    "sweep": "sweeps",
    "SweepResult": "sweeps",
    "Selection": "sweeps",
    "Costs": "sweeps",
    "Execution": "sweeps",
    "Retrieving": "sweeps",
    "Naming": "sweeps",
    # pipeline stages: every stage measured, where the evidence was lost, context budgets
    "evaluate_stages": "stages",
    "StageEvaluation": "stages",
    "StageLoss": "stages",
    "StagedRun": "model.stages",
    "Budget": "judging",
    "Pipeline": "capture",
    "Stage": "capture",
    # use-case profiles: declarations (profiles), verdicts against targets and the planner
    # (comparison); ranklens.evaluate is the evaluation floor's one evaluate, which finds the
    # profile=/targets= verdicts by name (entry point group ranklens.hooks) when asked
    "evaluate": "evaluation",
    "Profile": "profiles",
    "Target": "profiles",
    "Typical": "profiles",
    "MetricUse": "profiles",
    "get_profile": "profiles",
    "all_profiles": "profiles",
    "register_profile": "profiles",
    "load_profiles": "profiles",
    "TargetVerdict": "comparison.verdict",
    "plan_queries": "comparison.planner",
    "Plan": "comparison.planner",
    # label repair: span labels relocated in a new version of their documents
    "reanchor": "judging.reanchor",
    "Reanchored": "judging.reanchored",
    # freshness: document versions judged as of each query's time, corpus snapshots
    "Versions": "model.versions",
    "FreshnessRule": "judging",
    "read_versions": "io",
    "compare_snapshots": "comparison",
    "Snapshots": "comparison",
    # settings objects shared by many entry points (statistics; how callables are called)
    "Statistics": "settings",
    "Calling": "settings",
    # errors
    "RanklensError": "errors",
    "InputError": "errors",
    "RanklensWarning": "errors",
    "RunFailuresWarning": "errors",
    "UnseenStagesWarning": "errors",
    "MetricNameError": "errors",
    "DuplicateDocumentError": "errors",
    # a misspelled keyword option: a named error (a TypeError too) with the closest valid one
    "UnknownOptionError": "errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ranklens' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"ranklens.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
