"""``ranklens demo``'s production section: a simulated day of traffic on the demo's
labelled set, replayed through a :class:`~ranklens.Monitor` with a retriever swap at noon
(caught by an alert), and an online comparison of two of the demo's runs by team-draft
interleaving with simulated users (a cascade click model standing in for real clicks)."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np


def simulated_day(dataset: Any, run: dict[str, list[str]], seed: int = 0) -> list[Any]:
    """2,000 retrievals over a day, answered from ``run`` (the baseline's rankings) until
    noon and then by a re-indexed retriever whose chunk ids the labels do not know."""
    from ..capture import Retrieval

    rng = np.random.default_rng(seed)
    ids = [q for q in dataset.queries if q in run]
    day = 1_800_000_000.0 - 8 * 3600  # midnight UTC
    out = []
    for t in np.sort(rng.uniform(day, day + 24 * 3600, 2000)):
        q = ids[int(rng.integers(len(ids)))]
        docs = list(run[q])
        after = t >= day + 12 * 3600
        if after:
            docs = [f"{d}#chunk{int(rng.integers(3))}" for d in docs]
        scores = sorted(rng.normal(9.0 if after else 12.0, 2.0, len(docs)), reverse=True)
        latency = float(rng.gamma(2.0, 4.0))
        out.append(Retrieval(q, dataset.queries[q], docs, scores, latency_ms=latency, started=t))
    return out


def monitor_section(dataset: Any, results: dict[str, Any], baseline: str) -> str:
    """The section's text (see the module docstring)."""
    from ..monitoring import NAVIGATIONAL, Monitor, Windowing, interleave, interleaving_result

    run = results[baseline].run.to_lists()
    monitor = Monitor(window="2h", labels=dataset, metrics=["ndcg@10"],
                      windowing=Windowing(background=False))  # fmt: skip
    monitor.replay(simulated_day(dataset, run))
    alert = monitor.alerts[0] if monitor.alerts else None
    caught = (
        f"the first alert came in the {alert.window.label} window: "
        + "; ".join(d.describe() for d in alert.drifted[:3])
        if alert
        else "no alert (unexpected)"
    )
    false = sum(
        1 for w in monitor.windows if w.alert and w.start < 1_800_000_000.0 - 8 * 3600 + 12 * 3600
    )
    head = (
        f"Production, simulated: a day of {monitor.status()['retrievals']:,} retrievals of "
        f"{baseline} replayed through ranklens.Monitor in 2-hour windows, the first as "
        "baseline; at noon the retriever is swapped for a re-index whose chunk ids the "
        f"labels do not know. {false} false alarms before noon; {caught}."
    )
    other = next((n for n in results if n != baseline), None)
    text = "\n" + "\n".join(textwrap.wrap(head, 92)) + "\n"
    if other is None:
        return text
    runs = {n: results[n].run.to_lists() for n in (baseline, other)}
    labels = dataset.qrels.to_dict()
    inter = interleave(lambda q, query_id: runs[baseline].get(query_id, []),
                       lambda q, query_id: runs[other].get(query_id, []),
                       names=(baseline, other), seed=0)  # fmt: skip
    rng = np.random.default_rng(1)
    ids = list(runs[baseline])
    for _ in range(800):
        q = ids[int(rng.integers(len(ids)))]
        served = inter(dataset.queries[q], query_id=q)
        grades = np.array([[labels.get(q, {}).get(h.id, 0) for h in served]])
        for pos in np.flatnonzero(NAVIGATIONAL.clicks(grades, rng)[0]):
            inter.record_click(served[pos])
    res = interleaving_result(inter)
    head = (
        f"Online A/B by interleaving (ranklens.interleave, team draft): {baseline} against "
        f"{other} on 800 simulated queries, clicks from a cascade click model on the "
        "labels' grades: "
    )
    if not res.with_clicks:  # no preference to show: never a NaN in the text
        verdict = "no simulated user clicked, so no preference can be measured."
    else:
        verdict = (
            f"{res.wins} wins, {res.losses} losses, {res.ties} ties, preference "
            f"{res.preference:+.3f} [{res.ci[0]:+.3f}, {res.ci[1]:+.3f}], p={res.p:.2g}: "
            + (f"{res.winner} preferred." if res.winner else "no significant preference.")
        )
    body = head + verdict + " See docs/monitoring.md."
    return text + "\n" + "\n".join(textwrap.wrap(body, 92)) + "\n"
