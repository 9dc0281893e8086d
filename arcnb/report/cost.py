"""The cost of a run, for the report's "Cost and efficiency" section.

A run scored from a benchmarking-harness folder carries cost, tokens and time per
attempt (``Results.has_cost``). :func:`cost_results` gives the report the run's
results with those numbers, or None when the run has none. For a run directory whose
re-scored predictions no longer hold the attempts' metadata, the usage columns are
taken back from the run's own per-task table (``tasks.csv``) and the cost keys from
its ``metrics.json``, so the section never silently drops a recorded cost.
"""
from __future__ import annotations

import dataclasses
import math

from ..scoring import COST_SUMMARY_KEYS, USAGE_COLUMNS

__all__ = ["cost_results"]


def _known(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def cost_results(run):
    """``run.results`` when it has cost; else, for a run directory whose
    ``metrics.json`` records a ``total_cost``, a copy of the results with the usage
    columns of its recorded per-task table (:attr:`arcnb.runs.Run.recorded_tasks`,
    matched by task id) and the recorded cost keys of
    the summary; else None (no cost anywhere)."""
    res = run.results
    if res is None:
        return None
    if res.has_cost:
        return res
    recorded = run.summary
    if not _known(recorded.get("total_cost")):
        return None
    table = run.recorded_tasks
    if table is None:
        return None
    cols = [c for c in USAGE_COLUMNS if c in table.columns]
    if "cost" not in cols:
        return None
    tasks = res.tasks.drop(columns=[c for c in cols if c in res.tasks.columns])
    tasks = tasks.merge(table[["task_id"] + cols], on="task_id", how="left")
    summary = dict(res.summary)
    summary.update({k: recorded[k] for k in COST_SUMMARY_KEYS if k in recorded})
    return dataclasses.replace(res, tasks=tasks, summary=summary)
