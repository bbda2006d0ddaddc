"""ranklens: exact, fast ranking metrics for retrieval and RAG evaluation.

Default numbers equal trec_eval's; every (qrels, run) pair is judged once into arrays and
each metric is a vectorised function of them.

>>> import ranklens
>>> ranklens.evaluate({"q1": {"d1": 2, "d2": 1}}, {"q1": {"d1": 0.9, "d3": 0.5}},
...                   ["ndcg@10", "mrr"]).aggregate
{'ndcg@10': 0.7601875334318685, 'mrr': 1.0}
"""

from __future__ import annotations

from typing import Any

import numpy  # noqa: F401 - the core's one dependency: imported here, not in the first call

__version__ = "0.1.0"

_LAZY = {
    "evaluate": ("evaluation", "evaluate"),
    "Evaluation": ("evaluation", "Evaluation"),
    "judge": ("judging", "judge"),
    "Judged": ("judging", "Judged"),
    "JudgeOptions": ("judging", "JudgeOptions"),
    "Qrels": ("qrels", "Qrels"),
    "Run": ("runs", "Run"),
    "Metric": ("specs", "Metric"),
    "parse_metric": ("specs", "parse_metric"),
    "parse_metrics": ("specs", "parse_metrics"),
    "read_qrels": ("io.trec", "read_qrels"),
    "read_run": ("io.trec", "read_run"),
    "write_qrels": ("io.trec", "write_qrels"),
    "write_run": ("io.trec", "write_run"),
    "compare": ("compare", "compare"),
    "Report": ("report", "Report"),
    "load_report": ("report", "load_report"),
    "run": ("runner", "run"),
    "arun": ("runner", "arun"),
    "RunResult": ("runner", "RunResult"),
    "RetrieverAdapter": ("runner", "RetrieverAdapter"),
    "Hit": ("hits", "Hit"),
    "Recorder": ("recorder", "Recorder"),
    "Dataset": ("dataset", "Dataset"),
    "read_dataset": ("dataset", "read_dataset"),
    "RanklensError": ("errors", "RanklensError"),
    "InputError": ("errors", "InputError"),
    "MetricNameError": ("errors", "MetricNameError"),
    "DuplicateDocumentError": ("errors", "DuplicateDocumentError"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'ranklens' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"ranklens.{target[0]}"), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
