"""The run directory: the one artefact every part of arcnb passes around.

:func:`arcnb.evaluate.evaluate` and the front door (:func:`arcnb.front.open_run`, ``out=``)
write it;
reports, comparisons and the notebooks open it as a :class:`Run`. This module is the
only one that knows its file names and their schema; everything else asks it.

Files of a run directory
------------------------
``predictions.json``
    ARC Prize submission format: every test input of every task, in order (an
    invalid prediction is ``null``). A predictions file that was scored is copied
    byte for byte.
``results.csv``, ``results.parquet``
    the outputs table of :func:`arcnb.scoring.score` (one row per test output), plus
    any columns the producer adds (evaluate's votes: ``n_views``, ``n_valid_views``,
    ``n_distinct``, ``votes_attempt_K``, ``confidence_attempt_K``).
``tasks.csv``
    the per-task table.
``metrics.json``
    see below. Written last: its presence marks a finished run, which is never
    replaced without ``overwrite=True``.
``submission.json`` (unscored runs only)
    the Kaggle submission of a run on a hidden test set (a dataset without test
    outputs): every task, every test input in order, exactly ``attempt_1`` and
    ``attempt_2``, an invalid or absent attempt written as the filler ``[[0]]``
    (Kaggle rejects ``null``); see :func:`kaggle_submission`.
``journal.jsonl`` (``journal.rank<R>-of-<W>.jsonl`` per rank under torchrun)
    evaluate's resume journal: a header line ``{"kind": "arcnb-evaluate-journal",
    "version": 2, "params": {...}, "params_sha256": ...}``, then one JSON line per
    finished task (``task_id``, ``attempts``, ``votes`` and the same
    ``params_sha256``, which ties it to the header), each flushed and fsynced. While a
    run writes the directory it holds an exclusive lock on it
    (:class:`arcnb.journal.RunLock`).
``probe-<PROBE>.json``, ``probes.csv``, ``proxy.json``, ``proxy.csv`` (probed runs only)
    ``arcnb evaluate --probe`` / ``--proxy`` (:mod:`arcnb.probes`): each probe's
    predictions (``{"probe", "views", "predictions": {view: submission}}``, every
    answer mapped back to the task's own frame), the per-output probe table, the
    held-out demonstration pairs' predictions and the per-task proxy table; their
    numbers are ``metrics.json``'s ``probes``, ``memorisation`` and ``proxy``.
``figures/``, ``report.ipynb``, ``report.html``
    what ``arcnb report`` adds beside the run files: the figures, the executed report
    notebook and its HTML page (``evaluate.ipynb`` / ``evaluate.html`` too when a
    checkpoint was evaluated by the evaluate notebook in its own kernel).

``metrics.json``
----------------
One JSON object (indented, keys sorted, NaN as ``null``: byte-stable for the same
inputs). Top level: the scoring summary of :func:`arcnb.scoring.score`
(``pass@K``, ``pass@K_per_output``, ``pass@K_all_or_nothing``, counts,
``pass@2_ci95``, ``bootstrap``, ``dataset`` = name / version / filter). Under
``provenance``: :func:`run_provenance` (arcnb version, git commit, python, numpy,
torch) plus what the producer adds: for a scored predictions file ``source``,
``predictions``, ``predictions_sha256``, ``dataset``; for an evaluated checkpoint
``checkpoint``, ``checkpoint_file``, ``checkpoint_sha256``, ``dataset``, ``device``,
``parameters`` and ``run`` (facts about one execution: wall time, resumed or not,
tasks from the journal, number of processes; the only part that is not byte-stable
besides ``git_commit``).

A harness run keeps its attempts' metadata in ``predictions.json`` (the
``{"answer": grid, "metadata": {...}}`` form), so re-opening it gives the same cost
and token numbers (``total_cost``, ``cost_per_task``, ... at top level). The
``estimator`` key (``ranked`` or ``unbiased``) says how attempts became pass@K;
re-opening uses the recorded one (``ranked`` when absent).

An *unscored* run (a hidden test set: no truth) has ``"scored": false`` and no score
keys: ``n_tasks``, ``n_outputs``, ``n_outputs_without_truth``, ``n_attempts``,
``n_invalid_attempts``, ``dataset``, ``submission`` (``file``, ``attempts``,
``filler``, ``n_filler_attempts``), ``notes`` and ``provenance``
(:func:`unscored_summary`). Its ``results.csv`` holds the predictions table
(:func:`predictions_table`), not scores. :meth:`Run.open` opens it without scoring.

Reading is lenient about older or hand-made layouts: the summary may sit under
``summary``, the dataset at the top level, the parameters under ``params``, and a
task list under ``task_ids`` / ``tasks`` (see :func:`recorded_dataset`).

Extending the format (one place): a new top-level section goes through
:meth:`Run.from_results` / :func:`metrics_document`; reading it is a property of
:class:`Run`; a provenance field a report should show is one line in
:func:`flat_provenance`; a new file is a constant of ``arcnb/runs/layout.py`` (and in
:data:`RUN_FILES` when it is part of every finished run).

The package is cut by concept: ``layout.py`` (file names, what marks a finished run,
output-path guards, the guarded output folder and the one result-folder writer,
:func:`write_result_folder`: a JSON summary beside its CSV tables; the command line's
paths), ``document.py`` (the metrics document,
the recorded dataset and K, the unscored summary and Kaggle submission, the flat
provenance and the compact line), ``provenance.py`` (what produced a run) and
``run.py`` (:class:`Run`). The journal and the lock live in :mod:`arcnb.journal`,
beside :mod:`arcnb.evaluate`.
"""
from __future__ import annotations

from .document import (REUSED_KEY, TRAINING_OVERLAP_KEY, attempt_ks, compact_line, flat_provenance,
                       is_scored, kaggle_submission, ks_of, metrics_document, predictions_table,
                       read_metrics, record_reuse, record_training_overlap, recorded_dataset,
                       summary_of,
                       unscored_summary)
from .layout import (CANDIDATES, EVALUATE_HTML, EVALUATE_NOTEBOOK, FIGURES, FILLER, HEADLINE_KEYS,
                     JOURNAL, OPTIONAL_RUN_FILES, PROBE_NAMES, PROBE_PREDICTIONS, PROBES_CSV,
                     PROXY_CSV, PROXY_PREDICTIONS,
                     JOURNAL_GLOB, METRICS, PREDICTIONS, REPORT_HTML, REPORT_NOTEBOOK,
                     RESULTS_CSV, RESULTS_PARQUET, RUN_FILES, SUBMISSION, TASKS_CSV,
                     USER_PATHS_ENV, OutputFolder, RunDirError, absolute_path, check_out_path,
                     COPIED_RUN_FILES, copy_run_files,
                     finished_runs, is_finished, is_run_dir, refuse_finished,
                     require_finished, user_paths, SUMMARY_JSON, csv_bytes,
                     write_result_folder)
from .provenance import file_sha256_or_none, predictions_provenance, run_provenance
from .provenance import options_sha256, provenance_block, same_run_problem
from .run import Run, candidates_file, recorded_task_ids, unique_labels, write_run_dir

__all__ = [
    "Run", "RunDirError", "RUN_FILES", "METRICS", "PREDICTIONS", "RESULTS_CSV",
    "RESULTS_PARQUET", "TASKS_CSV", "FIGURES", "REPORT_NOTEBOOK", "REPORT_HTML",
    "EVALUATE_NOTEBOOK", "EVALUATE_HTML", "JOURNAL", "JOURNAL_GLOB", "HEADLINE_KEYS",
    "write_run_dir", "read_metrics", "is_finished", "require_finished", "refuse_finished",
    "copy_run_files", "COPIED_RUN_FILES", "check_out_path", "OutputFolder",
    "metrics_document", "summary_of", "ks_of", "attempt_ks",
    "recorded_dataset", "run_provenance", "file_sha256_or_none", "flat_provenance",
    "compact_line", "USER_PATHS_ENV", "absolute_path", "user_paths",
    "SUBMISSION", "FILLER", "is_scored", "unscored_summary", "kaggle_submission",
    "predictions_table", "predictions_provenance", "CANDIDATES", "record_training_overlap",
    "TRAINING_OVERLAP_KEY", "REUSED_KEY", "record_reuse", "unique_labels", "candidates_file", "OPTIONAL_RUN_FILES",
    "options_sha256", "same_run_problem", "PROBE_PREDICTIONS", "PROBES_CSV", "PROXY_CSV",
    "PROXY_PREDICTIONS", "is_run_dir", "finished_runs", "recorded_task_ids", "provenance_block",
    "write_result_folder", "SUMMARY_JSON", "csv_bytes", "PROBE_NAMES",
]
