"""Checkpoint sweeps: many checkpoints of one training run, evaluated on one dataset.

:func:`sweep` evaluates every checkpoint (files, a glob or a folder) with
:func:`arcnb.evaluate.evaluate` into its own run directory under ``out/runs/`` (the
dataset is loaded once; a checkpoint whose run is finished is not redone, an
interrupted one resumes from its journal) and writes, from the finished runs:

``sweep.csv``
    one row per checkpoint, ordered by step: ``step``, ``epoch``, ``step_source``,
    ``checkpoint``, ``run_dir``, ``n_tasks``, ``n_outputs``, ``pass@1``, ``pass@2``,
    ``pass@2_per_output``, the graded metrics ``shape_accuracy`` (per task the fraction
    of its outputs whose attempt 1 has the truth's shape, then the mean over tasks),
    ``cell_accuracy`` (the fraction of right cells, over the outputs with a right-shaped
    attempt), ``partial_credit`` and ``near_miss_rate`` (the fraction of outputs not
    solved within 2 attempts whose cell accuracy reaches
    :data:`arcnb.columns.NEAR_MISS`, 0.9; ``n_near_miss`` counts them), each with
    ``_ci_low`` / ``_ci_high``: a 95 % percentile bootstrap interval resampling tasks
    (:mod:`arcnb.stats`, the formulas of :mod:`arcnb.breakdown`);
``categories.csv``
    per checkpoint and structural category (:mod:`arcnb.taxonomy`): ``pass@2`` and
    ``partial_credit`` with their intervals;
``changes.csv``
    the test outputs gained (solved within 2 attempts now, not at the previous
    checkpoint) and lost between consecutive checkpoints;
``solved.csv``
    the task x step matrix of each task's pass@2 (the fraction of its test outputs
    solved), tasks ordered by the step they were first solved (tasks never solved are
    left out and counted in ``sweep.json``);
``sweep.json``
    the sweep's summary: dataset, checkpoints, where the steps came from, and the
    honest choice of the best checkpoint (:func:`honest_selection`);
``sweep.ipynb``, ``sweep.html``
    the sweep page (arcnb's ``sweep`` notebook run through papermill), unless
    ``report=False``.

The step of a checkpoint comes from the checkpoint itself (Lightning's ``global_step``
and ``epoch``, the ``step`` an arcnb checkpoint records when saved with one, or a
safetensors file's ``"step"`` metadata; read by
:func:`arcnb.models.recorded_step`, after the checks ``arcnb evaluate`` makes and
without loading the weights), else from a number in its file name
(``step=N`` first), else from the order the checkpoints were given in; one source for
the whole sweep (the first that gives every checkpoint a distinct step), recorded in
``step_source``.

Across machines: ``shard=(i, n)`` evaluates only the checkpoints at positions
``i, i + n, i + 2n, ...`` of the step order (``--shard I/N`` with ``I`` from 0, e.g.
a Slurm job array's task id); :func:`collect` then builds the files above from the
finished run directories of every shard.

Choosing the best checkpoint on the tasks it is reported on flatters it.
:func:`honest_selection` splits the tasks into a selection half and a report half
(every structural category divided evenly between them, a task of several categories
counted in each),
chooses on the selection half, reports on the other, and measures the inflation that
choosing on the report half itself would have added.

The package is cut by job: ``steps.py`` plans (checkpoints -> steps, shards, the plan
a folder records), ``run.py`` runs (one evaluate run per step, shards, ``collect``,
``open_sweep``), ``tables.py`` holds :class:`Sweep` and its tables, ``select.py`` the
honest selection statistics, ``layout.py`` the folder's file names and guards; every
public name is this package's.
"""
from __future__ import annotations

from ..models.loading import CHECKPOINT_SUFFIXES
from .layout import (CATEGORIES_CSV, CHANGES_CSV, RUNS_DIR, SOLVED_CSV, SWEEP_CSV, SWEEP_HTML,
                     SWEEP_JSON, SWEEP_NOTEBOOK)
from .run import collect, example_sweep, from_run_dirs, open_sweep, sweep, sweep_or_example
from .select import honest_selection, selection_split
from .steps import (STEP_SOURCES, SweepEntry, checkpoint_step, expand_checkpoints, parse_shard,
                    plan)
from .tables import METRIC_COLUMNS, Sweep

__all__ = ["sweep", "collect", "open_sweep", "Sweep", "SweepEntry", "checkpoint_step",
           "expand_checkpoints", "plan", "parse_shard", "honest_selection", "selection_split",
           "example_sweep", "sweep_or_example", "from_run_dirs",
           "SWEEP_CSV", "SWEEP_JSON", "CATEGORIES_CSV", "CHANGES_CSV", "SOLVED_CSV",
           "SWEEP_NOTEBOOK", "SWEEP_HTML", "RUNS_DIR",
           "CHECKPOINT_SUFFIXES", "STEP_SOURCES", "METRIC_COLUMNS"]
