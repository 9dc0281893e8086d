"""Reference points for a report: simple baselines scored on the same tasks as the
model, so a reader sees where the model stands.

A reference is named by a string: ``"copy-input"`` (every attempt is the test input
unchanged, the copy-the-input baseline) or a predictions file (a submission JSON or
a benchmarking-harness run folder, such as the bundled program-search predictions).
Each is scored in memory on the report run's dataset and task set
(:func:`reference_runs`); :func:`reference_table` puts the headline numbers side by
side with their intervals and :func:`reference_categories` lists the categories where
a reference solves tasks that the model does not.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..baselines import copy_input_submission
from ..columns import NEAR_MISS, interval_columns
from ..data import DATASETS
from ..errors import ArcnbError, ParameterError
from ..front import BaselineSource, PredictionsSource, open_run
from ..resources import examples_dir
from ..runs import Run
from ..breakdown import group_membership, overall

__all__ = ["COPY_INPUT", "reference_label", "copy_input_predictions", "reference_source",
           "reference_runs", "reference_run", "bundled_reference",
           "reference_table", "reference_long", "reference_categories",
           "REFERENCE_METRICS"]

#: The name of the copy-the-input reference.
COPY_INPUT = "copy-input"

#: The metrics of the reference-points table and chart (each with its interval but
#: the near-miss count).
REFERENCE_METRICS = interval_columns(2)


def reference_label(spec: str | os.PathLike) -> str:
    """A reader's name for a reference: ``copy the input``, ``program search`` (a
    file whose name says ``program_search``), ``whole-grid heuristic`` (a file whose
    name says ``heuristic``), else the file's name without its extension."""
    s = str(spec)
    if s == COPY_INPUT:
        return "copy the input"
    stem = Path(s).stem.lower().replace("-", "_")
    if "program_search" in stem:
        return "program search"
    if "heuristic" in stem:
        return "whole-grid heuristic"
    return Path(s).stem or s


def copy_input_predictions(dataset, *, attempts: int = 2) -> dict:
    """The copy-the-input baseline as an ARC Prize submission dict: every attempt of
    every test input is the input itself (:func:`arcnb.baselines.copy_input_submission`)."""
    return copy_input_submission(dataset, attempts=attempts)


def reference_source(spec: str | os.PathLike):
    """The front door's source of reference ``spec``: :data:`COPY_INPUT` is the
    copy-the-input baseline; an existing submission file is cut to the report's tasks
    (so a slice of the dataset is not mistaken for predictions made for another one); a
    harness run folder is taken as is."""
    spec = str(spec)
    if spec == COPY_INPUT:
        return BaselineSource(COPY_INPUT)
    if not Path(spec).exists():
        raise ArcnbError(f"reference {spec!r} is neither {COPY_INPUT!r} nor an existing "
                         "predictions file")
    return PredictionsSource(spec, only_dataset_tasks=True)


def reference_runs(specs: Sequence[str], like: Run, *, n_boot: int = 1000,
                   seed: int = 0) -> list[Run]:
    """Score every reference of ``specs`` on ``like``'s dataset and tasks, in memory,
    through the front door (:func:`arcnb.front.open_run`).

    Returns one :class:`arcnb.runs.Run` per reference, labelled with
    :func:`reference_label`; pass@K is scored for the same K as ``like``.
    """
    return [reference_run(spec, like.results.dataset, ks=like.results.ks, n_boot=n_boot,
                          seed=seed) for spec in specs or ()]


#: Reference runs of bundled files (or copy-input) on a bundled dataset, kept once
#: scored: package data that cannot change under a running process. A report's kernel
#: scores the embedded default's references while the model's run is being made.
_BUNDLED_RUNS: dict = {}
_KEPT = 16


def reference_run(spec: str | os.PathLike, dataset, *, ks=(1, 2), n_boot: int = 1000,
                  seed: int = 0) -> Run:
    """Reference ``spec`` scored in memory on ``dataset`` (a :class:`arcnb.data.Dataset`:
    its tasks), for ``ks``, labelled with :func:`reference_label`. A bundled reference
    on a bundled dataset is scored once per process and kept."""
    key = _bundled_key(spec, dataset, ks, n_boot, seed)
    if key is not None and key in _BUNDLED_RUNS:
        return _BUNDLED_RUNS[key]
    run = open_run(reference_source(spec), dataset=dataset, ks=ks, n_boot=n_boot, seed=seed,
                   label=reference_label(spec))
    if key is not None:
        if len(_BUNDLED_RUNS) >= _KEPT:  # a long session over many task sets: oldest out
            _BUNDLED_RUNS.pop(next(iter(_BUNDLED_RUNS)))
        _BUNDLED_RUNS[key] = run
    return run


def bundled_reference(spec: str | os.PathLike) -> bool:
    """Whether reference ``spec`` is package data: ``copy-input`` or a file of the
    bundled examples (:func:`arcnb.resources.examples_dir`)."""
    s = str(spec)
    return s == COPY_INPUT or Path(s).resolve().parent == examples_dir().resolve()


def _bundled_key(spec, dataset, ks, n_boot, seed):
    """The cache key of a reference that is package data on a dataset that is package
    data, else None (a user's file or folder is scored anew every time)."""
    s = str(spec)
    if not bundled_reference(s):
        return None
    name = getattr(dataset, "name", None)
    if name not in DATASETS:
        return None
    return (s, name, tuple(t.id for t in dataset), tuple(ks or ()), int(n_boot), int(seed))


def reference_table(runs: Sequence[Run], *, labels: Sequence[str] | None = None,
                    n_boot: int = 1000, seed: int = 0, near_miss: float = NEAR_MISS) -> pd.DataFrame:
    """The headline numbers of ``runs`` side by side, one row per run (``run``: its
    label, or ``labels``): ``n_tasks``, ``n_outputs``, pass@2 in the three
    conventions, the graded columns of :func:`arcnb.breakdown.overall` and their
    intervals, so every number is computed the same way for the model and its
    references."""
    labels = list(labels) if labels is not None else [r.label for r in runs]
    if len(labels) != len(runs):
        raise ParameterError(f"{len(labels)} labels for {len(runs)} runs")
    rows = []
    for r, label in zip(runs, labels):
        row = overall(r.results, ks=r.results.ks, n_boot=n_boot, seed=seed,
                      near_miss=near_miss)
        rows.append(row.drop(columns=["group"]).assign(run=str(label)))
    df = pd.concat(rows, ignore_index=True)
    return df[["run"] + [c for c in df.columns if c != "run"]]


def reference_long(table: pd.DataFrame,
                   metrics: Sequence[str] = REFERENCE_METRICS) -> pd.DataFrame:
    """:func:`reference_table` in long form for a grouped bar chart: one row per run
    and metric with ``metric``, ``run``, ``value``, ``value_ci_low``,
    ``value_ci_high``."""
    rows = []
    for _, r in table.iterrows():
        for m in metrics:
            rows.append({"metric": m, "run": r["run"], "value": r[m],
                         "value_ci_low": r.get(f"{m}_ci_low", float("nan")),
                         "value_ci_high": r.get(f"{m}_ci_high", float("nan"))})
    return pd.DataFrame(rows)


def reference_categories(model: Run, refs: Sequence[Run], by="structural", *,
                         max_ids: int = 6) -> pd.DataFrame:
    """The categories (of grouping ``by``, default the automatic structural taxonomy)
    where a reference solves tasks that the model does not. A task is solved when all
    its test outputs are right within 2 attempts.

    One row per reference and category with at least one such task: ``reference``,
    ``group``, ``n_tasks`` (the category's tasks), ``model_solved``,
    ``reference_solved``, ``reference_only`` (solved by the reference, not by the
    model), ``model_only`` and ``task_ids`` (the first ``max_ids`` reference-only
    tasks). Sorted by reference, then ``reference_only`` (most first)."""
    mem, _ = group_membership(model.results, by)
    task_groups = mem[["task_id", "group"]].drop_duplicates()
    solved_m = model.results.tasks.set_index("task_id")["all_solved@2"].astype(bool)
    rows = []
    for ref in refs:
        solved_r = ref.results.tasks.set_index("task_id")["all_solved@2"].astype(bool)
        solved_r = solved_r.reindex(solved_m.index, fill_value=False)
        for g, sub in task_groups.groupby("group", sort=False):
            ids = list(sub["task_id"])
            m, r = solved_m.reindex(ids).fillna(False), solved_r.reindex(ids).fillna(False)
            only = [t for t in ids if r[t] and not m[t]]
            if not only:
                continue
            rows.append({"reference": ref.label, "group": str(g), "n_tasks": len(ids),
                         "model_solved": int(m.sum()), "reference_solved": int(r.sum()),
                         "reference_only": len(only),
                         "model_only": int(sum(1 for t in ids if m[t] and not r[t])),
                         "task_ids": ", ".join(sorted(only)[:max_ids])
                         + (", ..." if len(only) > max_ids else "")})
    cols = ["reference", "group", "n_tasks", "model_solved", "reference_solved",
            "reference_only", "model_only", "task_ids"]
    df = pd.DataFrame(rows, columns=cols)
    if len(df):
        order = {r.label: i for i, r in enumerate(refs)}
        df = df.assign(_r=df["reference"].map(order)).sort_values(
            ["_r", "reference_only", "group"], ascending=[True, False, True],
            kind="mergesort").drop(columns="_r").reset_index(drop=True)
    return df
