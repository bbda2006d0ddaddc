"""The ranklens pytest plugin (entry point ``pytest11``; ``-p no:ranklens`` turns it off):
gate a retriever on a labelled set inside a test suite.

::

    def test_retrieval_did_not_regress(ranklens_gate):
        ranklens_gate(dataset, my_retriever, "baselines/faq.json",
                      ["ndcg@10", "mrr@10"], margin=0.02, floors={"mrr@10": 0.8})

``ranklens_gate(labels, run_or_retriever, baseline, metrics, **options)`` runs the retriever
(any callable or framework retriever :func:`ranklens.run_retriever` takes) over the labelled set, or
takes a ready run, gates it with :func:`ranklens.gate` (options as there; ``run_options``
go to :func:`ranklens.run_retriever`) and fails the test with the verdict table and the regressed
queries. Metrics better lower gate as the gate gates them (``["outdated@10"]`` with
``versions=``: the margin is the rise allowed, ``ceilings={"outdated@10": 0.1}``). A
relative baseline path is read next to the test file. ``pytest
--ranklens-update-baselines`` rewrites the baselines instead (floors and ceilings still
gate). Under GitHub Actions each gate appends its Markdown summary to
``$GITHUB_STEP_SUMMARY``. Works with pytest-xdist: each test writes only its own baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

UPDATE = "--ranklens-update-baselines"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ranklens", "retrieval quality gate")
    group.addoption(UPDATE, action="store_true", help="rewrite the ranklens gate baselines")


def _is_ready_run(obj: Any) -> bool:
    from ..model import Run

    return isinstance(obj, (Run, Mapping, str, Path)) or hasattr(obj, "report_info")


@pytest.fixture
def ranklens_gate(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """A callable that gates a run or retriever against a baseline and fails the test when
    the gate fails (see the module docstring); it returns the gate's result."""
    update = bool(request.config.getoption(UPDATE))
    here = Path(str(request.path)).parent

    def check(
        labels: Any,
        run_or_retriever: Any,
        baseline: str | Path,
        metrics: str | list[str],
        *,
        run_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Any:
        from dataclasses import replace

        from ..capture import run_retriever
        from ..comparison import gate
        from ..declared import CALLING
        from ..settings import Calling
        from .gate_cli import write_summaries

        path = Path(baseline)
        if not path.is_absolute():
            path = here / path
        run = run_or_retriever
        if not _is_ready_run(run):
            given = dict(run_options or {})
            if set(given) & set(CALLING):  # the flat spelling (deprecated): kept as given
                given.setdefault("progress", False)
            else:
                given["calls"] = replace(given.get("calls") or Calling(), progress=False)
            run = run_retriever(run, labels, **given)
        result = gate(labels, run, path, metrics, update_baseline=update, **options)
        write_summaries(result, None)
        if not result.passed:
            pytest.fail(result.to_text(), pytrace=False)
        return result

    return check
