"""The evaluation floor's declared parameters (:mod:`ranklens.declared`): the tables of
:func:`~ranklens.evaluate`, :func:`~ranklens.evaluate_judgment_groups`,
:func:`~ranklens.evaluate_file` and :func:`~ranklens.write_per_query`, and the one kind of
value the declarations module has no word for: a memory budget, in bytes or as a size
(``"500M"``), or ``float("inf")`` for never streaming (a documented meaning, not a number
that limits anything)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from ..declared import Option, ParameterError, choice, count, data, declare, flag, mapping
from ..declared import path as path_option
from ..errors import InputError
from ..judging.options import JUDGING
from ..metrics.trec_forms import METRICS

MIN_MEMORY = 1000
"""The smallest memory budget, in bytes."""


def parse_bytes(text: str | int | float) -> int:
    """A size such as ``2G``, ``500M``, ``64K`` or ``1e9`` in bytes (powers of 1024)."""
    s = str(text).strip().upper().removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(s[-1:], 1)
    try:
        value = float(s[:-1] if scale > 1 else s) * scale
    except ValueError:
        raise InputError(f"a memory size is a number with K, M or G, got {text!r}") from None
    if not value >= MIN_MEMORY:  # NaN too
        raise InputError(f"memory must be at least {MIN_MEMORY} bytes, got {text!r}")
    if not math.isfinite(value):
        raise InputError(f"memory must be a finite size, got {text!r}")
    return int(value)


@dataclass(frozen=True)
class MemoryOption(Option):
    """A memory budget: a finite number of bytes >= 1000, a size text (``"500M"``), or
    ``float("inf")``: never stream."""

    def _own_words(self) -> str:
        return (
            f"a finite number >= {MIN_MEMORY} (bytes), a size such as '500M' or '2G', "
            "or inf (never stream)"
        )

    def parse(self, raw: str, name: str, where: str) -> Any:
        """A command-line text: a number of bytes, or a size such as ``2G``."""
        try:
            return super().parse(raw, name, where)
        except ParameterError:
            return self.validate(raw.strip(), name, where)

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, str):
            try:
                parse_bytes(value)
            except InputError:
                return False, None
            return True, value
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False, None
        if value == math.inf:
            return True, math.inf
        ok = math.isfinite(value) and float(value) >= MIN_MEMORY
        return ok, value


@dataclass(frozen=True)
class BudgetOption(MemoryOption):
    """A memory budget that is spent (:func:`~ranklens.evaluate_file` always streams): a
    finite number of bytes >= 1000 or a size text; inf is refused."""

    def _own_words(self) -> str:
        return f"a finite number >= {MIN_MEMORY} (bytes) or a size such as '500M' or '2G'"

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, float) and math.isinf(value):
            return False, None
        return super()._accepts(value)


MEMORY = MemoryOption("number", None, "the memory budget of a run file (None: about 2 GB)",
                      none=True)  # fmt: skip
VERSION = choice("10", ("9", "10"), "trec_eval's numbers: 10, or 9 (and pytrec_eval)",
                 also=count(None, None, check=lambda x: x in (9, 10), rule="9 or 10"))  # fmt: skip
QRELS = data("the labels: a Qrels, a path, {query: {doc: grade}}, lists or groups")
RUN = data("the run: a Run, a path, {query: {doc: score}}, pairs or ranked lists")
OPTIONS = data("a JudgeOptions (None: the defaults and the keywords)")
JUDGE_OPTIONS = data("the judging options and convention switches, as keywords")

EVALUATE = declare("evaluate", {
    "qrels": QRELS, "run": RUN, "metrics": METRICS, "options": OPTIONS,
    "trec_eval_version": VERSION, "memory": MEMORY, **JUDGING,
    "judge_options": JUDGE_OPTIONS,
})  # fmt: skip

EVALUATE_JUDGMENT_GROUPS = declare("evaluate_judgment_groups", {
    "groups": data("{group: labels} or a qrels_jg file"), "run": RUN, "metrics": METRICS,
    "options": OPTIONS, "trec_eval_version": VERSION, **JUDGING,
    "judge_options": JUDGE_OPTIONS,
})  # fmt: skip

EVALUATE_FILE = declare("evaluate_file", {
    "qrels": QRELS,
    "run": data("a run file (TREC, .jsonl, .parquet), a folder of them, or a Ray Dataset"),
    "metrics": METRICS,
    "memory": BudgetOption("number", 2_000_000_000, "the memory budget"),
    "options": OPTIONS,
    "tmp_dir": path_option(None, "where an ungrouped file's shards go", none=True),
    "per_query": path_option(None, "also write every query's values here", none=True),
    "progress": flag(None, "a progress bar (None: when stderr is a terminal)", none=True),
    "backend": choice("local", ("local", "ray"), "where the chunks are scored"),
    "ray": mapping(None, "Ray's options: address, num_cpus, cpus_per_task", none=True,
                   empty=True),
    "trec_eval_version": VERSION, **JUDGING, "judge_options": JUDGE_OPTIONS,
})  # fmt: skip

WRITE_PER_QUERY = declare("write_per_query", {
    "ev": data("an Evaluation"),
    "path": path_option(None, "a .parquet, .csv, .tsv or .jsonl file"),
})  # fmt: skip
