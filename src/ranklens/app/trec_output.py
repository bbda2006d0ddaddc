"""trec_eval's output, line for line: measures in trec_eval's own order (whatever the order
of ``-m``), per-query blocks (``-q``) before the summary (``-n`` drops it), ``runid`` and
``relstring``, and z-scores against a per-query mean and deviation file (``-Z``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ..evaluation import Evaluation, aggregate, trec_line
from ..judging import Judged
from ..metrics import TREC_ORDER, Metric
from ..text import visible

SUMMARY_ONLY = ("num_q", "gm_ap", "gm_bpref")
"""Families trec_eval prints in the summary only."""

ZScores = dict[tuple[str, str], tuple[float, float]]
"""A ``-Z`` file: ``(query, measure) -> (mean, stddev)``."""
MISSING_ZSCORE = -1000000.0
"""trec_eval's value for a query or measure the z-score file lacks."""


def trec_order(mt: Metric) -> tuple[int, float]:
    """Where trec_eval prints ``mt``: its measure's place in trec_eval's table, then its
    cutoff or parameter (``P_3`` before ``P_5``); measures trec_eval lacks come last."""
    fam = mt.spec
    suffixed = mt.k is not None or (fam.value_param is not None and fam.trec_name)
    name = fam.trec_name if suffixed else fam.trec_plain
    at = TREC_ORDER.index(name) if name in TREC_ORDER else len(TREC_ORDER)
    if mt.k is not None:
        return at, float(mt.k)
    return at, float(dict(mt.params).get(fam.value_param) or 0.0) if fam.value_param else 0.0


def relevance_strings(judged: Judged, n: int) -> list[str]:
    """trec_eval's ``relstring``: per query, one character per document of the top n —
    its grade (0-9, ``>`` above 9), ``-`` when the qrels do not list it, ``.`` for a
    negative label (pooled, unjudged)."""
    j = judged
    depth = np.minimum(j.lens, max(n, 0))
    chars = np.full((j.n_queries, max(n, 1)), ord("-"), dtype=np.uint8)
    top = j.e_rank <= n
    lab = j.e_label[top]
    code = np.where(lab > 9, ord(">"), np.where(lab < 0, ord("."), ord("0") + np.clip(lab, 0, 9)))
    chars[j.e_q[top], j.e_rank[top] - 1] = code
    return [bytes(chars[i, : depth[i]]).decode() for i in range(j.n_queries)]


def read_zscores(path: str | Path) -> ZScores:
    """A trec_eval ``-Z`` file: lines ``qid measure mean stddev``; a malformed line is an
    error naming the file and line."""
    table: ZScores = {}
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                if len(parts) != 4:
                    raise ValueError
                table[(parts[0], parts[1])] = (float(parts[2]), float(parts[3]))
            except ValueError:
                raise InputError(
                    f"{path}:{lineno}: a z-score line is 'qid measure mean stddev', got "
                    f"{visible(line.strip())!r}"
                ) from None
    return table


def zscore(value: float, qid: str, name: str, table: ZScores) -> float:
    """trec_eval's conversion: ``(value − mean) / stddev``; with stddev 0, 0 when the value
    is the mean; the missing-value marker when the file lacks the pair (or stddev is 0 and
    the value differs)."""
    entry = table.get((qid, name))
    if entry is None:
        return MISSING_ZSCORE
    mean, sd = entry
    if sd:
        return (value - mean) / sd
    return 0.0 if value == mean else MISSING_ZSCORE


def _query_line(mt: Metric, qid: str, value: float, zscores: ZScores | None, prefix: str) -> str:
    count = mt.aggregate == "sum" and zscores is None
    return trec_line(mt.name, visible(qid), float(value), count, prefix)


def trec_eval_text(
    ev: Evaluation,
    *,
    per_query: bool = False,
    summary: bool = True,
    runid: bool = False,
    relstring: int | None = None,
    relstring_label: str = "relstring",
    zscores: ZScores | None = None,
) -> str:
    """``ev`` as trec_eval prints it (see the module docstring)."""
    metrics = sorted(ev.metrics, key=trec_order)
    qids = ev.query_ids
    values = {mt.name: ev.per_query[mt.name] for mt in metrics}
    prefix = "Z" if zscores is not None else ""
    if zscores is not None:
        values = {
            name: np.array([zscore(float(v), q, name, zscores) for q, v in zip(qids, col)])
            for name, col in values.items()
        }
    lines: list[str] = []
    if per_query:
        rel_at = TREC_ORDER.index("relstring")  # relstring prints in its place in the table
        shown = [mt for mt in metrics if mt.family not in SUMMARY_ONLY]
        before = [mt for mt in shown if trec_order(mt)[0] < rel_at]
        after = [mt for mt in shown if trec_order(mt)[0] > rel_at]
        strings = relevance_strings(ev.judged, relstring) if relstring is not None else None
        for i, q in enumerate(qids):
            lines += [_query_line(mt, q, values[mt.name][i], zscores, prefix) for mt in before]
            if strings is not None:
                lines.append(f"{relstring_label:<22}\t{visible(q)}\t'{strings[i]}'")
            lines += [_query_line(mt, q, values[mt.name][i], zscores, prefix) for mt in after]
    if summary:
        if runid:
            lines.append(f"{'runid':<22}\tall\t{visible(ev.judged.run_name)}")
        for mt in metrics:
            if mt.family == "num_q":
                total = float(len(qids))
            else:
                total = aggregate(values[mt.name], mt.aggregate)
            count = mt.aggregate == "sum" and zscores is None
            lines.append(trec_line(mt.name, "all", total, count, prefix))
    return "\n".join(lines) + ("\n" if lines else "")
