"""The run directory: the one artefact every part of arcnb passes around.

:func:`arcnb.evaluate.evaluate` and :func:`arcnb.evaluate.score_to_run_dir` write it;
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
    run writes the directory it holds an exclusive lock on it (:class:`RunLock`).
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
:func:`flat_provenance`; a new file is a constant below (and in :data:`RUN_FILES`
when it is part of every finished run).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from .columns import upgrade_summary
from .errors import ArcnbError, OutputExistsError, ParameterError, RunDirError, RunLockedError
from .grids import MAX_SIZE
from .io import atomic_write_bytes, read_json, to_jsonable

__all__ = [
    "record_training_overlap", "TRAINING_OVERLAP_KEY",
    "Run", "RunDirError", "RUN_FILES", "METRICS", "PREDICTIONS", "RESULTS_CSV",
    "RESULTS_PARQUET", "TASKS_CSV", "FIGURES", "REPORT_NOTEBOOK", "REPORT_HTML",
    "EVALUATE_NOTEBOOK", "EVALUATE_HTML", "JOURNAL", "JOURNAL_GLOB", "HEADLINE_KEYS",
    "write_run_dir", "read_metrics", "is_finished", "require_finished", "refuse_finished",
    "copy_run_files", "check_out_path", "metrics_document", "summary_of", "ks_of", "attempt_ks",
    "recorded_dataset", "run_provenance", "file_sha256_or_none", "flat_provenance",
    "compact_line", "Journal", "journal_name", "journal_paths", "read_journals",
    "params_sha256", "journal_record_problem", "RunLock", "RunLockedError",
    "USER_PATHS_ENV", "absolute_path", "user_paths",
    "SUBMISSION", "FILLER", "is_scored", "unscored_summary", "kaggle_submission",
    "predictions_table",
]

# ====================================================================== the layout
#: The scoring summary plus ``provenance`` (written last: it marks completion).
METRICS = "metrics.json"
#: The predictions, in the ARC Prize submission format.
PREDICTIONS = "predictions.json"
#: The per-output table (scores, or predictions only for an unscored run; plus the
#: votes of ``arcnb evaluate``), as CSV.
RESULTS_CSV = "results.csv"
#: The same table as Parquet (exact strings and types).
RESULTS_PARQUET = "results.parquet"
#: The per-task table.
TASKS_CSV = "tasks.csv"
#: The folder of a report's figures.
FIGURES = "figures"
#: The executed report notebook.
REPORT_NOTEBOOK = "report.ipynb"
#: The report exported as self-contained HTML.
REPORT_HTML = "report.html"
#: The executed evaluate notebook (one per checkpoint of a multi-report).
EVALUATE_NOTEBOOK = "evaluate.ipynb"
#: The evaluate notebook exported as HTML.
EVALUATE_HTML = "evaluate.html"
#: The journal of finished tasks (what ``--resume`` reads).
JOURNAL = "journal.jsonl"
#: The journals of every rank of a ``torchrun`` run.
JOURNAL_GLOB = "journal*.jsonl"
#: An unscored run's Kaggle submission (exactly ``attempt_1`` and ``attempt_2``).
SUBMISSION = "submission.json"
#: What an unscored run's ``submission.json`` holds for an invalid or absent attempt.
FILLER = [[0]]
_JOURNAL_KIND = "arcnb-evaluate-journal"

#: The files of a finished run directory, in the order they are written
#: (metrics.json last: it marks completion).
RUN_FILES = (PREDICTIONS, RESULTS_CSV, RESULTS_PARQUET, TASKS_CSV, METRICS)
#: Every voted candidate of an augmented evaluate run, with its votes (a candidates
#: Parquet file, see :mod:`arcnb.candidates`); optional.
CANDIDATES = "candidates.parquet"
#: The files a run directory must hold to be opened (checked in this order).
_REQUIRED = (METRICS, PREDICTIONS)
#: Summary keys that re-scoring ``predictions.json`` must reproduce exactly.
HEADLINE_KEYS = ("n_tasks", "n_outputs", "pass@1", "pass@2", "pass@2_per_output",
                 "pass@2_all_or_nothing")


def is_finished(run_dir: str | os.PathLike) -> bool:
    """Whether ``run_dir`` holds a finished run (its ``metrics.json``)."""
    return (Path(run_dir) / METRICS).exists()


def require_finished(run_dir: str | os.PathLike) -> Path:
    """``run_dir`` as a Path; :class:`RunDirError` unless it holds a finished run."""
    rd = Path(run_dir)
    if not is_finished(rd):
        raise RunDirError(f"{rd} is not a run directory: {METRICS} is missing")
    return rd


def refuse_finished(out: str | os.PathLike, *, overwrite: bool,
                    resume: bool = False) -> None:
    """:class:`~arcnb.errors.OutputExistsError` when ``out`` already holds run files and
    ``overwrite`` is False. Only ``metrics.json`` marks a finished run; the other run
    files without it are an unfinished run (killed during its final writes, or a full
    disk), which ``resume=True`` lets a resumed evaluate finish."""
    out = Path(out)
    if overwrite:
        return
    if is_finished(out):
        raise OutputExistsError(f"{out} already holds a finished run ({METRICS}); refusing to "
                                "overwrite it (pass --overwrite / overwrite=True)")
    partial = [f for f in RUN_FILES + (SUBMISSION,) if (out / f).exists()]
    if partial and not resume:
        raise OutputExistsError(f"{out} holds files of an unfinished run ({', '.join(partial)}) "
                                f"but no {METRICS}; refusing to overwrite them (pass --resume to "
                                "finish an evaluate run from its journal, or --overwrite)")


def _shipped() -> tuple[Path, ...]:
    """arcnb's own folders, which no output may go into (with or without --overwrite):
    the package itself (its shipped notebooks included) and, in a clone, the top-level
    ``notebooks/`` copy."""
    from .resources import checkout_root, notebooks_dir

    pkg = notebooks_dir().parent.parent
    root = checkout_root()
    folders = [pkg] + ([root / "notebooks"] if root is not None else [])
    return tuple(Path(os.path.realpath(p)) for p in folders)


def check_out_path(out: str | os.PathLike, *, what: str = "--out") -> Path:
    """``out`` as a Path; :class:`~arcnb.errors.ArcnbError` when it, or a folder above
    it, exists and is not a folder (``--out FILE`` or ``--out FILE/sub``), or when it
    lies inside arcnb's shipped ``notebooks/`` folder or the package's own folder."""
    out = Path(out)
    for p in (out, *out.parents):
        if p.exists():
            if not p.is_dir():
                raise ArcnbError(f"{what} {out}: {p} is a file, not a folder" if p != out
                                 else f"{what} {out} exists and is not a folder")
            break
    real = Path(os.path.realpath(out))
    for shipped in _shipped():
        if real == shipped or shipped in real.parents:
            raise ArcnbError(f"{what} {out} is inside arcnb's own {shipped.name}/ folder "
                             f"({shipped}); write outputs elsewhere, never over the shipped "
                             "files")
    return out


def copy_run_files(src: str | os.PathLike, dest: str | os.PathLike, *,
                   overwrite: bool) -> None:
    """Copy the files of run directory ``src`` into ``dest`` (atomically each), leaving
    out hidden files and an earlier report's ``report.*``; folders are not copied.
    An existing file in ``dest`` is only replaced with ``overwrite``."""
    report_prefix = Path(REPORT_NOTEBOOK).stem + "."
    dest = Path(dest)
    for p in sorted(Path(src).iterdir()):
        if not p.is_file() or p.name.startswith(".") or p.name.startswith(report_prefix):
            continue
        target = dest / p.name
        if target.exists() and not overwrite:
            raise OutputExistsError(f"{target} already exists; refusing to overwrite it "
                                    "(pass --overwrite)")
        atomic_write_bytes(target, p.read_bytes(), overwrite=True)


# ========================================================== paths the user typed
#: The environment variable through which the ``arcnb`` command hands the paths of its
#: command line (as typed and as resolved against the caller's working directory) to
#: the runs it makes: in this process, and in the notebook kernels it starts, which
#: inherit the environment but not the working directory.
USER_PATHS_ENV = "ARCNB_USER_PATHS"


def absolute_path(value, *, always: bool = False):
    """``value`` made absolute against the working directory (``~`` expanded, symbolic
    links kept) when it names an existing file or folder, or with ``always`` (an
    output). Names that are not paths (``arc-agi-1:evaluation``, ``copy-input``,
    ``baseline``, ``structural``...) and None come back unchanged."""
    if value is None or not isinstance(value, (str, os.PathLike)) or str(value) == "":
        return value
    text = os.path.expanduser(str(value))
    if always or os.path.exists(text):
        return os.path.abspath(text)
    return value


def user_paths() -> dict | None:
    """The command line's paths (``{"cwd": ..., "--dataset": {"given": ..., "resolved":
    ...}, ...}``) when the run is made by the ``arcnb`` command, else None."""
    raw = os.environ.get(USER_PATHS_ENV)
    if not raw:
        return None
    try:
        paths = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return None
    return paths if isinstance(paths, dict) else None


# ================================================================ metrics.json
def metrics_document(summary: Mapping, provenance: Mapping | None) -> dict:
    """The ``metrics.json`` object: the summary's keys at top level plus
    ``provenance``."""
    metrics = dict(summary)
    metrics["provenance"] = provenance
    return metrics


def summary_of(metrics: Mapping) -> dict:
    """The scoring summary inside a metrics.json (top level, or under ``summary``)."""
    if "summary" in metrics and isinstance(metrics["summary"], Mapping):
        return upgrade_summary(metrics["summary"])
    return upgrade_summary(metrics)


def is_scored(metrics: Mapping) -> bool:
    """False for an unscored run (``"scored": false``: a hidden test set), else True."""
    return summary_of(metrics).get("scored", True) is not False


def kaggle_submission(dataset, predictions, *, attempts: int = 2,
                      filler=None) -> tuple[dict, dict]:
    """The Kaggle submission of ``predictions`` on ``dataset``, and the filler count.

    Every task of ``dataset`` (in its order), every test input in order, exactly
    ``attempt_1 .. attempt_<attempts>`` (2 for Kaggle): attempt j is the j-th
    prediction when it is a valid grid, else ``filler`` (default :data:`FILLER`,
    ``[[0]]``: Kaggle rejects ``null``), also when there are fewer predictions than
    ``attempts``. Predictions beyond ``attempts`` are left out. Returns
    ``(submission, fills)`` with ``fills[(task_id, test_index)]`` the number of filler
    attempts of that test input.
    """
    filler = [list(row) for row in (FILLER if filler is None else filler)]
    sub, fills = {}, {}
    for task in dataset:
        entries = []
        for i in range(len(task.test)):
            atts = list(predictions.get(task.id, i))[:attempts]
            entry, n_fill = {}, 0
            for j in range(attempts):
                g = atts[j] if j < len(atts) else None
                if g is None:
                    entry[f"attempt_{j + 1}"] = [list(row) for row in filler]
                    n_fill += 1
                else:
                    entry[f"attempt_{j + 1}"] = g.tolist()
            fills[(task.id, i)] = n_fill
            entries.append(entry)
        sub[task.id] = entries
    return sub, fills


def predictions_table(dataset, predictions, fills: Mapping | None = None):
    """An unscored run's outputs table: one row per task x test input with
    ``task_id``, ``test_index``, ``n_attempts``, ``n_invalid_attempts``, ``missing``,
    ``n_filler_attempts`` (in ``submission.json``), ``input_shape``, ``pred_shape``
    (attempt 1's, ``"HxW"``; empty when invalid), ``pred_h``, ``pred_w``."""
    import pandas as pd

    from .grids import shape_str

    rows = []
    for task in dataset:
        for i, pair in enumerate(task.test):
            atts = predictions.get(task.id, i)
            a1 = atts[0] if atts else None
            rows.append({"task_id": task.id, "test_index": i, "n_attempts": len(atts),
                         "n_invalid_attempts": sum(g is None for g in atts),
                         "missing": len(atts) == 0,
                         "n_filler_attempts": int((fills or {}).get((task.id, i), 0)),
                         "input_shape": shape_str(pair.input), "pred_shape": shape_str(a1),
                         "pred_h": None if a1 is None else a1.shape[0],
                         "pred_w": None if a1 is None else a1.shape[1]})
    df = pd.DataFrame(rows, columns=["task_id", "test_index", "n_attempts",
                                     "n_invalid_attempts", "missing", "n_filler_attempts",
                                     "input_shape", "pred_shape", "pred_h", "pred_w"])
    for c in ("pred_h", "pred_w"):
        df[c] = df[c].astype("Int64")
    return df


def unscored_summary(dataset, predictions, *, fills: Mapping, attempts: int = 2) -> dict:
    """The summary of an unscored run (``"scored": false``, no score keys); see the
    module docstring. ``fills`` is :func:`kaggle_submission`'s filler count."""
    n_out = dataset.n_outputs
    no_truth = sum(p.output is None for t in dataset for p in t.test)
    per_out = [predictions.get(t.id, i) for t in dataset for i in range(len(t.test))]
    n_fill = int(sum(fills.values()))
    notes = [f"no truth for {no_truth} of the {n_out} test outputs (a hidden test set): the "
             f"predictions are not scored; {SUBMISSION} holds them for Kaggle"]
    if n_fill:
        notes.append(f"{n_fill} attempts of {SUBMISSION} are the filler {FILLER} (an invalid "
                     "or absent prediction: Kaggle rejects null)")
    return {
        "scored": False,
        "n_tasks": len(dataset),
        "n_outputs": n_out,
        "n_outputs_without_truth": int(no_truth),
        "n_attempts": int(sum(len(a) for a in per_out)),
        "n_invalid_attempts": int(sum(g is None for a in per_out for g in a)),
        "n_missing_outputs": int(sum(len(a) == 0 for a in per_out)),
        "dataset": dataset.info,
        "submission": {"file": SUBMISSION, "attempts": int(attempts), "filler": FILLER,
                       "n_filler_attempts": n_fill},
        "notes": notes,
        "warnings": [],
    }


def ks_of(metrics: Mapping) -> tuple[int, ...]:
    """The K of every ``pass@K`` a metrics.json holds (always 1 and 2; K is a plain
    ASCII number >= 1)."""
    return tuple(sorted({1, 2} | _pass_ks(summary_of(metrics))))


def _pass_ks(keys) -> set[int]:
    """The K of the ``pass@K`` keys among ``keys``."""
    return {int(key[5:]) for key in keys
            if isinstance(key, str) and key.startswith("pass@") and "_" not in key
            and key[5:].isascii() and key[5:].isdigit() and int(key[5:]) >= 1}


def attempt_ks(preds) -> tuple[int, ...]:
    """1 .. the largest number of attempts of any output of ``preds`` (at least 1, 2)."""
    most = max((len(a) for outs in preds.attempts.values() for a in outs), default=2)
    return tuple(range(1, max(2, most) + 1))


def recorded_dataset(metrics: Mapping) -> tuple[str | None, object, dict]:
    """(dataset spec, task filter, recorded dataset info) from a metrics.json.

    The dataset is ``dataset.name`` (top level or in the summary), else
    ``parameters.dataset`` / ``params.dataset``. The task filter is a task-id list
    (``task_ids`` or ``tasks`` at the top level, in the summary or in the dataset
    info), else ``parameters.tasks``, else the dataset's ``filter``.
    """
    summ = summary_of(metrics)
    info = metrics.get("dataset") if isinstance(metrics.get("dataset"), dict) else \
        (summ.get("dataset") if isinstance(summ.get("dataset"), dict) else {})
    params = metrics.get("parameters") or metrics.get("params") or {}
    spec = info.get("name") or (params.get("dataset") if isinstance(params, dict) else None)
    tasks = None
    for holder in (metrics, summ, info):
        for key in ("task_ids", "tasks"):
            if isinstance(holder.get(key), list):
                tasks = holder[key]
                break
        if tasks is not None:
            break
    if tasks is None and isinstance(params, dict) and params.get("tasks"):
        tasks = params["tasks"]
    if tasks is None and info.get("filter"):
        tasks = info["filter"]
    return spec, tasks, info


def read_metrics(run_dir: str | os.PathLike) -> dict:
    """A run directory's ``metrics.json`` (a JSON object; :class:`RunDirError` when it
    is missing or is not one)."""
    from .io import JSONInputError, read_json

    path = Path(run_dir) / METRICS
    if not path.is_file():
        raise RunDirError(f"{Path(run_dir)} is not a run directory: {METRICS} is missing")
    try:  # BOM, nesting depth, size and duplicated keys checked as for every input
        metrics = read_json(path, what="run file")
    except JSONInputError as exc:
        raise RunDirError(str(exc)) from None
    if not isinstance(metrics, dict):
        raise RunDirError(f"{path} must hold a JSON object")
    return metrics


# ================================================================== provenance
def _git_commit() -> str | None:
    # only a clone of arcnb has a commit of its own: an installed arcnb inside
    # someone else's repository must not report that repository's commit
    from .resources import checkout_root

    root = checkout_root()
    if root is None:
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and len(commit) == 40 else None


def run_provenance(**extra) -> dict:
    """Base provenance: arcnb version, git commit (or None), python, torch, numpy;
    ``extra`` keys are added (and win)."""
    import numpy as np

    from . import __version__

    prov = {"arcnb_version": __version__, "git_commit": _git_commit(),
            "python": sys.version.split()[0], "numpy": np.__version__}
    try:
        import torch

        prov["torch"] = torch.__version__
    except ImportError:  # pragma: no cover
        prov["torch"] = None
    prov.update(extra)
    return prov


def file_sha256_or_none(path) -> str | None:
    """The SHA-256 of ``path`` when it is a file, else None."""
    if path and Path(path).is_file():
        from .models.loading import file_sha256

        return file_sha256(path)
    return None


def flat_provenance(metrics: Mapping, *, run_dir=None) -> dict:
    """Flat provenance of a run: checkpoint path and SHA-256 (or the predictions file),
    dataset name, version and filter, arcnb version and git commit, parameters."""
    s = summary_of(metrics)
    prov = dict(metrics.get("provenance") or {})
    ds = prov.get("dataset") if isinstance(prov.get("dataset"), Mapping) else \
        (s.get("dataset") or {})
    ck = prov.get("checkpoint")
    if isinstance(ck, Mapping):  # {"path", "sha256"}
        ck_path, ck_sha = ck.get("path"), ck.get("sha256")
    else:
        ck_path, ck_sha = ck, prov.get("checkpoint_sha256")
    pr = prov.get("predictions")
    if isinstance(pr, Mapping):
        pr_path, pr_sha = pr.get("path"), pr.get("sha256")
    else:
        pr_path, pr_sha = pr, prov.get("predictions_sha256")
    run = prov.get("run") if isinstance(prov.get("run"), Mapping) else {}
    flat = {
        "checkpoint": ck_path,
        "checkpoint_sha256": ck_sha,
        "predictions": pr_path,
        "predictions_sha256": pr_sha,
        "dataset": ds.get("name"),
        "dataset_version": ds.get("version"),
        "filter": ds.get("filter"),
        "arcnb_version": prov.get("arcnb_version"),
        "git_commit": prov.get("git_commit"),
        "device": prov.get("device"),
        "wall_time_s": run.get("wall_time_s"),
        "torch": prov.get("torch"),
        "parameters": prov.get("parameters"),
    }
    flat = {k: v for k, v in flat.items()
            if v is not None or k in ("checkpoint_sha256", "filter", "git_commit")}
    if run_dir is not None:
        flat["run_dir"] = str(run_dir)
    return flat


def compact_line(metrics: Mapping, metric: str = "pass@2") -> str:
    """The compact reporting line:
    ``<metric>=<fraction> (<percent>%), estimator=<name>, checkpoint=<sha256>,
    data=<name>@<version>, filter=<filter>, arcnb=<version>+<commit>``.

    ``estimator`` is how attempts became pass@K (``ranked``, the ARC Prize rule, when
    metrics.json records none). A model given by name (no file, e.g. ``copy-input``)
    shows its name instead of a SHA-256. Without a checkpoint (a predictions file or a
    harness run folder was scored), ``checkpoint=none`` and the predictions' SHA-256
    follow as ``predictions=<sha256>``. An unscored run (no truth) shows
    ``<metric>=not scored (no truth)`` and no estimator.
    """
    import math

    s = summary_of(metrics)
    p = flat_provenance(metrics)
    v = s.get(metric)
    if not is_scored(metrics):
        value = "not scored (no truth)"
    elif v is None or (isinstance(v, float) and math.isnan(v)):
        value = "nan (nan%)"
    else:
        value = f"{float(v):.4f} ({100 * float(v):.2f}%)"
    parts = [f"{metric}={value}"]
    if is_scored(metrics):
        parts.append(f"estimator={s.get('estimator') or 'ranked'}")
    parts.append(f"checkpoint={p.get('checkpoint_sha256') or p.get('checkpoint') or 'none'}")
    if not p.get("checkpoint_sha256") and p.get("predictions_sha256"):
        parts.append(f"predictions={p['predictions_sha256']}")
    parts.append(f"data={p.get('dataset')}@{p.get('dataset_version')}")
    parts.append(f"filter={p.get('filter') or 'none'}")
    commit = p.get("git_commit")
    parts.append(f"arcnb={p.get('arcnb_version')}" + (f"+{commit[:12]}" if commit else ""))
    check = metrics.get(TRAINING_OVERLAP_KEY)
    if check:  # the training-data overlap check, when the report made one
        parts.append(f"train_overlap={check.get('outputs_equivalent')}/{check.get('n_outputs')} "
                     "outputs vs " + "+".join(str(t.get("source")) for t in check.get("train", [])))
    return ", ".join(parts)


#: The metrics.json key of the training-data overlap check (``arcnb report --train-data``).
TRAINING_OVERLAP_KEY = "training_overlap"


def record_training_overlap(run_dir: str | os.PathLike, summary: Mapping) -> None:
    """Record a training-data overlap check (:func:`arcnb.overlap.overlap`'s summary:
    sources and counts) in the run's ``metrics.json`` under ``training_overlap``,
    atomically; an earlier check is replaced."""
    path = Path(run_dir) / METRICS
    metrics = read_json(path, what="metrics file")
    metrics[TRAINING_OVERLAP_KEY] = to_jsonable(dict(summary))
    atomic_write_bytes(path, _json_bytes(metrics), overwrite=True)


# ======================================================================= the Run
@dataclass
class Run:
    """A run: its scored ``results`` (:class:`arcnb.scoring.Results`; None for a run
    read with :meth:`read`, without scoring, and for an unscored run), ``metrics`` (its
    ``metrics.json``, or the in-memory summary plus provenance), the run directory
    (None for an in-memory run) and a label. An unscored run (a hidden test set, no
    truth: :attr:`scored` is False) carries its ``dataset`` and ``predictions``
    instead of results.

    Make one with :meth:`open` (a run directory, validated and re-scored),
    :meth:`read` (a run directory's metrics only), :meth:`from_results` (in memory)
    or :meth:`unscored` (predictions without truth); :meth:`write` writes it as a run
    directory.
    """

    results: object
    #: The run's ``metrics.json`` (or the in-memory summary plus ``provenance``).
    metrics: dict
    run_dir: Path | None = None
    label: str = ""
    #: An unscored run's dataset (read without requiring test outputs); else None.
    dataset: object = None
    #: An unscored run's predictions (:class:`arcnb.predictions.Predictions`); else None.
    predictions: object = None

    # ------------------------------------------------------------------ views
    @property
    def summary(self) -> dict:
        """The scoring summary recorded in :attr:`metrics`."""
        return summary_of(self.metrics)

    @property
    def scored(self) -> bool:
        """False for an unscored run (``"scored": false`` in metrics.json: no truth)."""
        return is_scored(self.metrics)

    @property
    def provenance(self) -> dict:
        """The raw ``provenance`` section of :attr:`metrics` (empty when absent)."""
        return dict(self.metrics.get("provenance") or {})

    @property
    def path(self) -> str | None:
        """The run directory as a string (None in memory)."""
        return None if self.run_dir is None else str(self.run_dir)

    @property
    def ks(self) -> tuple[int, ...]:
        """The K of every ``pass@K`` in :attr:`metrics`."""
        return ks_of(self.metrics)

    def file(self, name: str) -> Path:
        """``run_dir / name`` (e.g. ``run.file(METRICS)``); ValueError in memory."""
        if self.run_dir is None:
            raise ParameterError(f"{self.label or 'this run'} is in memory: it has no {name}")
        return Path(self.run_dir) / name

    def flat_provenance(self) -> dict:
        """:func:`flat_provenance` of this run (with its run directory)."""
        return flat_provenance(self.metrics, run_dir=self.run_dir)

    def compact_line(self, metric: str = "pass@2") -> str:
        """:func:`compact_line` of this run."""
        return compact_line(self.metrics, metric)

    def __repr__(self) -> str:
        s = self.summary
        ds = s.get("dataset") or {}
        score = f"pass@2={s.get('pass@2')}" if self.scored else "not scored (no truth)"
        return (f"Run({self.label!r}, dataset={ds.get('name')!r}, tasks={s.get('n_tasks')}, "
                f"outputs={s.get('n_outputs')}, {score})")

    def _repr_html_(self) -> str | None:
        """Jupyter's view: the results' for a scored run; for an unscored one, what it
        holds and that it is not scored."""
        if self.results is not None and hasattr(self.results, "_repr_html_"):
            return self.results._repr_html_()
        if self.scored:
            return None
        from html import escape

        s = self.summary
        sub = s.get("submission") or {}
        return (f"<div><p><b>No truth: predictions only.</b> {escape(str(self.label))} on "
                f"{escape(str((s.get('dataset') or {}).get('name')))}: {s.get('n_tasks')} "
                f"tasks, {s.get('n_outputs')} test outputs, {s.get('n_invalid_attempts')} "
                f"invalid attempts; {escape(str(sub.get('file')))} has "
                f"{sub.get('n_filler_attempts')} filler attempts "
                f"{escape(json.dumps(sub.get('filler')))}.</p></div>")

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_results(cls, results, *, provenance: Mapping | None = None,
                     label: str = "") -> "Run":
        """An in-memory run: ``metrics`` = the results' summary plus ``provenance``."""
        return cls(results, metrics_document(results.summary, provenance), None, label)

    @classmethod
    def unscored(cls, dataset, predictions, *, provenance: Mapping | None = None,
                 label: str = "", attempts: int = 2) -> "Run":
        """An in-memory unscored run: ``predictions`` (a
        :class:`~arcnb.predictions.Predictions`) on ``dataset`` without truth;
        ``metrics`` = :func:`unscored_summary` plus ``provenance``. ``attempts`` is the
        number of attempts per test input of ``submission.json`` (2 for Kaggle)."""
        _, fills = kaggle_submission(dataset, predictions, attempts=attempts)
        summary = unscored_summary(dataset, predictions, fills=fills, attempts=attempts)
        return cls(None, metrics_document(summary, provenance), None, label,
                   dataset=dataset, predictions=predictions)

    @classmethod
    def read(cls, run_dir: str | os.PathLike, *, label: str | None = None) -> "Run":
        """A run directory's ``metrics.json`` only (no scoring: ``results`` is None)."""
        rd = Path(run_dir)
        return cls(None, read_metrics(rd), rd, label or rd.name)

    @classmethod
    def open(cls, run_dir: str | os.PathLike, *, dataset=None, label: str | None = None,
             ks: Sequence[int] | str = (1, 2), n_boot: int = 1000, seed: int = 0,
             cache: dict | None = None) -> "Run":
        """Open a run directory and re-score its ``predictions.json``.

        The dataset is ``dataset`` when given, else the one ``metrics.json`` records
        (:func:`recorded_dataset`). The task set is, in order: a task-id list recorded
        in metrics.json, the recorded task filter file (absolute, or relative to the
        run dir / the working directory), the task ids of ``results.csv`` /
        ``results.parquet`` when the recorded filter cannot be resolved, else the whole
        dataset. Every number ``metrics.json`` records must equal the re-scored one
        (pass@K in every convention for every recorded K, counts, accuracies, costs;
        not only :data:`HEADLINE_KEYS`), and
        the recorded dataset version the current one (unless ``dataset`` is given),
        else :class:`RunDirError`.
        The predictions are scored with the recorded ``estimator`` (``ranked`` when
        none is recorded).

        An unscored run (``"scored": false``) is not scored: its dataset (read without
        requiring test outputs) and predictions are loaded into :attr:`dataset` and
        :attr:`predictions`, and ``results`` stays None.

        ``ks``: the K to score (``"attempts"``: 1 .. the most attempts of any output).
        ``cache`` (a dict) keeps loaded datasets between calls. The label defaults to
        the folder name.
        """
        from .predictions import load_predictions
        from .scoring import ESTIMATORS, score

        rd = Path(run_dir)
        if not rd.is_dir():
            raise RunDirError(f"run directory not found: {rd}")
        for name in _REQUIRED:
            if not (rd / name).is_file():
                raise RunDirError(f"{rd} is not a run directory: {name} is missing")
        metrics = read_metrics(rd)
        if not is_scored(metrics):
            return cls._open_unscored(rd, metrics, dataset=dataset, label=label, cache=cache)
        estimator = summary_of(metrics).get("estimator") or "ranked"
        if estimator not in ESTIMATORS:
            raise RunDirError(f"{rd / METRICS} records an unknown estimator {estimator!r} "
                              f"(expected one of {', '.join(ESTIMATORS)})")
        ds = _recorded_tasks(metrics, rd, dataset, cache)
        preds = load_predictions(str(rd / PREDICTIONS))
        if isinstance(ks, str):
            if ks != "attempts":
                raise ParameterError(f"ks must be a list of K or 'attempts', got {ks!r}")
            ks = attempt_ks(preds)
        # the numbers at the top level and those under "summary" (an older layout), when
        # there is one: a number anywhere in metrics.json must hold
        layers = [metrics] + ([metrics["summary"]] if isinstance(metrics.get("summary"), Mapping)
                              else [])
        # every recorded pass@K is re-scored, with the recorded estimator
        ks = tuple(sorted(set(ks).union(*(_pass_ks(m) for m in layers))))
        res = score(ds, preds, ks=ks, n_boot=n_boot, seed=seed, estimator=estimator)
        for recorded in layers:
            _check_recorded(upgrade_summary(recorded), res.summary, rd)
        _check_version(metrics, ds, rd, dataset)
        return cls(res, metrics, rd, label or rd.name)

    @classmethod
    def _open_unscored(cls, rd: Path, metrics: dict, *, dataset, label, cache) -> "Run":
        from .predictions import load_predictions

        ds = _recorded_tasks(metrics, rd, dataset, cache, require_truth=False)
        preds = load_predictions(str(rd / PREDICTIONS))
        s = summary_of(metrics)
        for key, fresh in (("n_tasks", len(ds)), ("n_outputs", ds.n_outputs)):
            if s.get(key) is not None and s[key] != fresh:
                raise RunDirError(f"{rd}: {METRICS} says {key}={s[key]} but the recorded "
                                  f"dataset now has {fresh}; the run directory is "
                                  "inconsistent")
        _check_version(metrics, ds, rd, dataset)
        return cls(None, metrics, rd, label or rd.name, dataset=ds, predictions=preds)

    # ----------------------------------------------------------------- writing
    def write(self, out: str | os.PathLike, *, overwrite: bool = False,
              extra_columns=None, predictions_text: str | None = None,
              extra_files: Mapping[str, bytes] | None = None) -> "Run":
        """Write this run as the run directory ``out``; returns the Run at ``out``.

        ``extra_columns`` (keyed by ``task_id`` and ``test_index``) are joined onto the
        outputs table. ``predictions_text`` is written verbatim as ``predictions.json``;
        by default the predictions source file is copied byte for byte when there is
        one, else the parsed attempts (with their metadata: cost, tokens) are written in
        submission format. An unscored run also gets
        ``submission.json`` and the predictions table as ``results.csv``. All writes are
        atomic, ``metrics.json`` last; existing run files are only replaced with
        ``overwrite=True`` (checked up front). A write that fails (a full disk) takes
        back the files it created, so no half run directory is left. ``extra_files``
        (``{name: bytes}``, e.g. ``candidates.parquet``) are written before ``metrics.json``.
        """
        res = self.results
        if res is None and self.scored:
            raise ParameterError("a Run read without scoring (Run.read) cannot be written")
        if res is None and (self.dataset is None or self.predictions is None):
            raise ParameterError("an unscored Run needs its dataset and predictions to be "
                                 "written")
        out = Path(out)
        refuse_finished(out, overwrite=overwrite)
        out.mkdir(parents=True, exist_ok=True)
        preds = res.predictions if res is not None else self.predictions
        predictions_bytes = _predictions_bytes(preds, predictions_text)
        names = list(RUN_FILES)
        added: dict = {}
        if res is not None:
            outputs, tasks = res.outputs, res.tasks
        else:
            attempts = int((self.summary.get("submission") or {}).get("attempts") or 2)
            sub, fills = kaggle_submission(self.dataset, preds, attempts=attempts)
            sub_bytes = (json.dumps(sub, separators=(",", ":")) + "\n").encode()
            added[SUBMISSION] = lambda: sub_bytes
            names.insert(names.index(METRICS), SUBMISSION)
            outputs = predictions_table(self.dataset, preds, fills)
            tasks = _unscored_tasks(outputs)
        for name, data in (extra_files or {}).items():
            added[name] = (lambda d=data: d)
            names.insert(names.index(METRICS), name)
        if extra_columns is not None:
            outputs = outputs.merge(extra_columns, on=["task_id", "test_index"], how="left",
                                    validate="one_to_one")
        files = {PREDICTIONS: lambda: predictions_bytes, RESULTS_CSV: lambda: _df_csv(outputs),
                 RESULTS_PARQUET: lambda: _df_parquet(outputs),
                 TASKS_CSV: lambda: _df_csv(tasks),
                 METRICS: lambda: _json_bytes(self.metrics), **added}
        created: list[Path] = []
        try:
            for name in names:  # metrics.json last: it marks a finished run
                target = out / name
                existed = target.exists()
                atomic_write_bytes(target, files[name](), overwrite=overwrite)
                if not existed:
                    created.append(target)
        except BaseException:
            # a full disk, a kill: take back the files this call created, so that no
            # half run is left (an evaluate run keeps its journal and can be resumed)
            for p in created:
                with _suppress_os_error():
                    p.unlink()
            raise
        return Run(res, self.metrics, out, self.label or out.name, dataset=self.dataset,
                   predictions=self.predictions)


def _predictions_bytes(preds, predictions_text: str | None) -> bytes:
    """What a run's ``predictions.json`` holds: ``predictions_text``, else a byte copy
    of the source file, else the attempts (with their metadata) in submission format."""
    from .predictions import to_submission

    if predictions_text is not None:
        return predictions_text.encode("utf-8")
    src = getattr(preds, "source", None)
    if src and Path(src).is_file():
        return Path(src).read_bytes()
    sub = to_submission(preds.attempts, getattr(preds, "metadata", None) or None)
    return (json.dumps(sub, separators=(",", ":")) + "\n").encode()


def _unscored_tasks(outputs):
    """An unscored run's per-task table (sums of the predictions table's counts)."""
    g = outputs.groupby("task_id", sort=True)
    tasks = g[["n_attempts", "n_invalid_attempts", "missing", "n_filler_attempts"]].sum()
    tasks = tasks.rename(columns={"missing": "n_missing_outputs"}).astype("int64")
    tasks.insert(0, "n_outputs", g.size().astype("int64"))
    return tasks.reset_index()


def write_run_dir(results, out, *, provenance: dict, overwrite: bool = False,
                  extra_columns=None, predictions_text: str | None = None,
                  extra_files: Mapping[str, bytes] | None = None) -> Path:
    """Write a run directory from scored :class:`~arcnb.scoring.Results` and its
    provenance (:meth:`Run.write`). Returns the directory."""
    run = Run.from_results(results, provenance=provenance)
    return run.write(out, overwrite=overwrite, extra_columns=extra_columns,
                     predictions_text=predictions_text, extra_files=extra_files).run_dir


def _df_csv(df) -> bytes:
    """A table as CSV for people: user strings that a spreadsheet would run as a formula
    (a leading ``=``, ``+``, ``-``, ``@``, tab or CR) get a leading ``'``
    (:func:`arcnb.io.csv_text`); the exact values stay in Parquet and JSON."""
    from .io import csv_text

    return csv_text(df).encode("utf-8")


def _json_bytes(obj) -> bytes:
    """``obj`` as metrics.json writes it (:func:`arcnb.io.atomic_write_json`)."""
    return (json.dumps(to_jsonable(obj), indent=2, sort_keys=True, allow_nan=False)
            + "\n").encode("utf-8")


def _suppress_os_error():
    import contextlib

    return contextlib.suppress(OSError)


def _df_parquet(df) -> bytes:
    import io

    buf = io.BytesIO()
    df.to_parquet(buf, index=False, engine="pyarrow")
    return buf.getvalue()


# ----------------------------------------------------------- opening, validating
def _recorded_tasks(metrics: dict, rd: Path, dataset, cache: dict | None, *,
                    require_truth: bool = True):
    """The dataset (and task subset) a run was scored on, as its metrics.json records
    it (or on ``dataset`` when given). ``require_truth=False`` for an unscored run."""
    from .data import load_dataset

    spec, tasks, info = recorded_dataset(metrics)
    if dataset is None and not spec:
        raise RunDirError(f"{rd / METRICS} names no dataset (expected dataset.name); pass "
                          "dataset= / --dataset")
    if dataset is None:
        spec = _existing_spec(spec, info)
    use_tasks = _resolve_tasks(tasks, rd)
    if tasks is not None and use_tasks is None:
        use_tasks = _table_task_ids(rd)
        if use_tasks is None:
            raise RunDirError(f"{rd}: the recorded task filter {tasks!r} cannot be found and "
                              f"there is no {RESULTS_CSV} listing the tasks")
    if dataset is None:
        spec = _findable(spec, recorded_dataset(metrics)[2].get("version"))
    key = (str(dataset if dataset is not None else spec), require_truth)
    if cache is not None and key in cache:
        ds = cache[key]
    else:
        ds = load_dataset(dataset if dataset is not None else spec,
                          require_truth=require_truth)
        if cache is not None:
            cache[key] = ds
    if use_tasks is not None:
        ds = ds.select(use_tasks, label=str(tasks) if not isinstance(tasks, list) else None)
    return ds


def _findable(spec: str, version) -> str:
    """A recorded dataset as it can be loaded from here: a folder or file recorded by a
    relative path that does not resolve from the working directory (a notebook kernel
    runs in the run directory) is found through the absolute path in its version
    (``folder:/abs/path``, ``file:/abs/path``)."""
    if Path(str(spec)).exists() or not isinstance(version, str):
        return spec
    kind, _, where = version.partition(":")
    if kind in ("folder", "file") and Path(where).is_absolute() and Path(where).exists():
        return where
    return spec


def _existing_spec(spec: str, info: Mapping) -> str:
    """A recorded dataset path given relative to another working directory: the
    absolute path its version records (``file:<path>`` / ``folder:<path>``) when
    ``spec`` itself is not found."""
    from .data import DATASETS

    version = str(info.get("version") or "")
    if spec in DATASETS or Path(spec).exists():
        return spec
    for prefix in ("file:", "folder:"):
        if version.startswith(prefix) and Path(version[len(prefix):]).exists():
            return version[len(prefix):]
    return spec


def _check_version(metrics: Mapping, ds, rd: Path, dataset) -> None:
    rec_version = recorded_dataset(metrics)[2].get("version")
    if rec_version and dataset is None and rec_version != ds.version:
        raise RunDirError(f"{rd}: {METRICS} records dataset version {rec_version} but "
                          f"{ds.name} is now {ds.version}")


def _resolve_tasks(tasks, run_dir: Path):
    """A task filter as recorded: a list, or a path (absolute, or relative to the run
    dir / the working directory). None when it cannot be resolved."""
    from .data import load_task_ids

    if tasks is None or isinstance(tasks, list):
        return tasks
    for cand in (Path(str(tasks)), run_dir / str(tasks)):
        if cand.is_file():
            return load_task_ids(cand)
    return None


def _table_task_ids(run_dir: Path) -> list[str] | None:
    """The task ids of the run's outputs table (Parquet, which keeps the exact ids, else
    CSV, whose formula-neutralising ``'`` is taken off again), or None."""
    import pandas as pd

    from .io import FORMULA_START

    for name in (RESULTS_PARQUET, RESULTS_CSV):
        p = run_dir / name
        if p.exists():
            try:
                df = pd.read_csv(p, dtype={"task_id": str}) if name == RESULTS_CSV \
                    else pd.read_parquet(p, columns=["task_id"])
            except Exception:  # noqa: BLE001 - an unreadable table is just not used
                continue
            if "task_id" in df.columns:
                ids = df["task_id"].astype(str)
                if name == RESULTS_CSV:
                    ids = ids.map(lambda t: t[1:] if t.startswith("'") and
                                  t[1:].startswith(FORMULA_START) else t)
                return sorted(set(ids))
    return None


#: Summary entries that are not numbers re-scoring must reproduce: free text, the
#: dataset (its version is checked on its own) and the bootstrap settings (the interval
#: is checked when they match).
_NOT_RECHECKED = frozenset({"provenance", "dataset", "notes", "warnings", "bootstrap"})


def _same(a, b) -> bool:
    """Whether a recorded JSON value equals a re-scored one (NaN is stored as null;
    numbers agree to 1e-9)."""
    import math

    if isinstance(b, float) and math.isnan(b):
        return a is None or (isinstance(a, float) and math.isnan(a))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, Mapping):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def _shown(value) -> str:
    text = json.dumps(to_jsonable(value), sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_recorded(recorded: Mapping, fresh: Mapping, where: Path) -> None:
    """Every number ``metrics.json`` records (any key re-scoring also computes: pass@K
    in every convention, counts, cell and shape accuracies, costs, tokens, the
    interval when the bootstrap settings match) must equal the re-scored one."""
    for key in sorted(recorded, key=str):
        if key in _NOT_RECHECKED or key not in fresh:
            continue
        if key.endswith("_ci95") and not _same(recorded.get("bootstrap"),
                                               fresh.get("bootstrap")):
            continue
        a, b = recorded[key], fresh[key]
        if not _same(a, b):
            raise RunDirError(f"{where}: re-scoring {PREDICTIONS} gives {key}={_shown(b)}, but "
                              f"{METRICS} says {_shown(a)}; the run directory is inconsistent")


# ======================================================================= journal
def journal_name(rank: int, world: int) -> str:
    """The journal file of process ``rank`` of ``world``."""
    if world == 1:
        return JOURNAL
    stem, suffix = JOURNAL.split(".", 1)
    return f"{stem}.rank{rank}-of-{world}.{suffix}"


def journal_paths(out: str | os.PathLike) -> list[Path]:
    """Every journal in ``out`` (sorted; empty when ``out`` does not exist)."""
    out = Path(out)
    return sorted(out.glob(JOURNAL_GLOB)) if out.exists() else []


def params_sha256(params: Mapping) -> str:
    """The SHA-256 of a run's parameters as canonical JSON: every journal record carries
    it, tying the record to the header (and the run) it was written for."""
    import hashlib

    text = json.dumps(to_jsonable(params), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _grid_ok(g) -> bool:
    import numpy as np

    if not isinstance(g, list):
        return False
    try:
        a = np.asarray(g)
    except (ValueError, TypeError):  # ragged
        return False
    return (a.ndim == 2 and a.dtype.kind in "iu" and 1 <= a.shape[0] <= MAX_SIZE
            and 1 <= a.shape[1] <= MAX_SIZE and int(a.min()) >= 0 and int(a.max()) <= 9)


def journal_record_problem(rec: Mapping) -> str | None:
    """What is wrong with the shape of an evaluate journal task record (None when it is
    usable): per test input a list of attempts (grids or null) in ``attempts`` and a
    vote summary in ``votes``."""
    atts, votes = rec.get("attempts"), rec.get("votes")
    if not isinstance(atts, list) or not all(isinstance(o, list) for o in atts):
        return "'attempts' is not a list of attempt lists"
    if not all(g is None or _grid_ok(g) for o in atts for g in o):
        return "an attempt is neither null nor a grid of colours 0-9"
    if not isinstance(votes, list) or len(votes) != len(atts):
        return "'votes' is not a list with one entry per test input"
    for v, o in zip(votes, atts):
        if not isinstance(v, dict) or not all(
                isinstance(v.get(k), int) and not isinstance(v.get(k), bool)
                for k in ("n_views", "n_valid_views", "n_distinct")):
            return "a 'votes' entry lacks its counts"
        if not isinstance(v.get("votes"), list) or len(v["votes"]) != len(o) or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in v["votes"]):
            return "a 'votes' entry has no vote count per attempt"
        conf = v.get("confidence")
        if not isinstance(conf, list) or len(conf) != len(o) or not all(
                c is None or (isinstance(c, (int, float)) and not isinstance(c, bool))
                for c in conf):
            return "a 'votes' entry has no confidence per attempt"
    return None


def read_journals(out: str | os.PathLike, params: dict) -> dict[str, dict]:
    """Finished task records (by ``task_id``) from every journal in ``out``.

    A line cut short (by a kill or a full disk) is skipped. Refused with an
    :class:`~arcnb.errors.ArcnbError` naming the file and line, never used: a journal
    whose header names other ``params``; a record whose ``params_sha256`` is not the
    hash of ``params`` (a record from another run); a line that is valid JSON but
    not a header or a task record (an object with a ``task_id`` string; evaluate
    checks the rest with :func:`journal_record_problem`)."""
    want = params_sha256(params)
    done: dict[str, dict] = {}
    for path in journal_paths(out):
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
        for n, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                continue  # a line cut short by a kill
            where = f"{path} line {n}"
            if not isinstance(rec, dict):
                raise ArcnbError(f"{where} is not a journal record (a JSON "
                                 f"{type(rec).__name__}); use --overwrite to start over")
            if rec.get("kind") == _JOURNAL_KIND:
                got = rec.get("params") if isinstance(rec.get("params"), dict) else {}
                if got != params:
                    diff = sorted(str(k) for k in set(params) | set(got)
                                  if params.get(k) != got.get(k))
                    raise ArcnbError(f"{path} was written by a run with different parameters "
                                     f"({', '.join(diff)}); use --overwrite to start over")
                continue
            if rec.get("params_sha256") != want:
                raise ArcnbError(f"{where} is a record of another run (its params_sha256 is not "
                                 "this run's); refusing to mix runs: use --overwrite to "
                                 "start over")
            if not isinstance(rec.get("task_id"), str):
                raise ArcnbError(f"{where} is not a task record (no task_id string); use "
                                 "--overwrite to start over")
            done[rec["task_id"]] = rec
    return done


def _repair_tail(path: Path) -> None:
    """Cut a journal back to its last complete line (a kill can leave half a line)."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)


class Journal:
    """An append-only journal file: a header naming ``params``, then one JSON line per
    :meth:`append` (stamped with ``params_sha256``, the hash of the header's
    parameters), each flushed and fsynced. Opening repairs a cut-off last line."""

    def __init__(self, path: str | os.PathLike, params: dict):
        self.path = Path(path)
        self.params_sha256 = params_sha256(params)
        _repair_tail(self.path)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self.fh = open(self.path, "ab")
        if new:
            self._write({"kind": _JOURNAL_KIND, "version": 2, "params": params,
                         "params_sha256": self.params_sha256})

    def _write(self, obj) -> None:
        self.fh.write(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode() + b"\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def append(self, record: dict) -> None:
        """Append a task record, tied to this journal's parameters."""
        self._write({**record, "params_sha256": self.params_sha256})

    def close(self) -> None:
        """Close the file."""
        self.fh.close()


# ========================================================================== lock
class RunLock:
    """An exclusive, non-blocking ``flock`` on a run directory itself (no lock file is
    left behind), held while a run writes it. The kernel drops it when the process
    ends, however it ends. Where ``fcntl`` is missing (Windows), or the file system has
    no ``flock`` (some network mounts), it does nothing."""

    def __init__(self, run_dir: str | os.PathLike):
        self.run_dir = Path(run_dir)
        self.fd: int | None = None

    def acquire(self) -> "RunLock":
        """Take the lock, or raise :class:`RunLockedError` when another process holds
        it. Returns the lock itself."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return self
        fd = os.open(self.run_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLockedError(f"{self.run_dir} is being written by another arcnb process "
                                 "(an evaluate into the same --out is running); wait for it "
                                 "or choose another --out") from None
        except OSError:  # a file system without flock (some network mounts): no lock
            os.close(fd)
            return self
        self.fd = fd
        return self

    def release(self) -> None:
        """Drop the lock (nothing happens when it is not held)."""
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor drops the lock
            self.fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
