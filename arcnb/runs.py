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
``journal.jsonl`` (``journal.rank<R>-of-<W>.jsonl`` per rank under torchrun)
    evaluate's resume journal: a header line ``{"kind": "arcnb-evaluate-journal",
    "version": 1, "params": {...}}``, then one JSON line per finished task (with at
    least ``task_id``), each flushed and fsynced.
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

from .errors import ArcnbError, OutputExistsError
from .io import atomic_write_bytes, atomic_write_json

__all__ = [
    "Run", "RunDirError", "RUN_FILES", "METRICS", "PREDICTIONS", "RESULTS_CSV",
    "RESULTS_PARQUET", "TASKS_CSV", "FIGURES", "REPORT_NOTEBOOK", "REPORT_HTML",
    "EVALUATE_NOTEBOOK", "EVALUATE_HTML", "JOURNAL", "JOURNAL_GLOB", "HEADLINE_KEYS",
    "write_run_dir", "read_metrics", "is_finished", "require_finished", "refuse_finished",
    "copy_run_files", "metrics_document", "summary_of", "ks_of", "attempt_ks",
    "recorded_dataset", "run_provenance", "file_sha256_or_none", "flat_provenance",
    "compact_line", "Journal", "journal_name", "journal_paths", "read_journals",
]

# ====================================================================== the layout
#: The scoring summary plus ``provenance`` (written last: it marks completion).
METRICS = "metrics.json"
#: The predictions, in the ARC Prize submission format.
PREDICTIONS = "predictions.json"
#: The per-output scoring table (plus the votes of ``arcnb evaluate``), as CSV.
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
_JOURNAL_KIND = "arcnb-evaluate-journal"

#: The files of a finished run directory, in the order they are written
#: (metrics.json last: it marks completion).
RUN_FILES = (PREDICTIONS, RESULTS_CSV, RESULTS_PARQUET, TASKS_CSV, METRICS)
#: The files a run directory must hold to be opened (checked in this order).
_REQUIRED = (METRICS, PREDICTIONS)
#: Summary keys that re-scoring ``predictions.json`` must reproduce exactly.
HEADLINE_KEYS = ("n_tasks", "n_outputs", "pass@1", "pass@2", "pass@2_per_output",
                 "pass@2_all_or_nothing")


class RunDirError(ArcnbError, ValueError):
    """A folder is not a usable run directory: missing or invalid files, or numbers
    that re-scoring its predictions does not reproduce."""


def is_finished(run_dir: str | os.PathLike) -> bool:
    """Whether ``run_dir`` holds a finished run (its ``metrics.json``)."""
    return (Path(run_dir) / METRICS).exists()


def require_finished(run_dir: str | os.PathLike) -> Path:
    """``run_dir`` as a Path; :class:`RunDirError` unless it holds a finished run."""
    rd = Path(run_dir)
    if not is_finished(rd):
        raise RunDirError(f"{rd} is not a run directory: {METRICS} is missing")
    return rd


def refuse_finished(out: str | os.PathLike, *, overwrite: bool) -> None:
    """:class:`~arcnb.errors.OutputExistsError` when ``out`` already holds run files and
    ``overwrite`` is False."""
    out = Path(out)
    existing = [f for f in RUN_FILES if (out / f).exists()]
    if existing and not overwrite:
        raise OutputExistsError(f"{out} already holds a finished run ({', '.join(existing)}); "
                                "refusing to overwrite it (pass --overwrite / overwrite=True)")


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
        return dict(metrics["summary"])
    return dict(metrics)


def ks_of(metrics: Mapping) -> tuple[int, ...]:
    """The K of every ``pass@K`` a metrics.json holds (always 1 and 2)."""
    ks = {1, 2}
    for key in summary_of(metrics):
        if key.startswith("pass@") and "_" not in key and key[5:].isdigit():
            ks.add(int(key[5:]))
    return tuple(sorted(ks))


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
    path = Path(run_dir) / METRICS
    if not path.is_file():
        raise RunDirError(f"{Path(run_dir)} is not a run directory: {METRICS} is missing")
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(metrics, dict):
        raise RunDirError(f"{path} must hold a JSON object")
    return metrics


# ================================================================== provenance
def _git_commit() -> str | None:
    root = Path(__file__).resolve().parents[1]
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
    ``<metric>=<fraction> (<percent>%), checkpoint=<sha256>, data=<name>@<version>,
    filter=<filter>, arcnb=<version>+<commit>``.

    A model given by name (no file, e.g. ``copy-input``) shows its name instead of a
    SHA-256. Without a checkpoint (a predictions file was scored), ``checkpoint=none``
    and the predictions file's SHA-256 follow as ``predictions=<sha256>``.
    """
    import math

    s = summary_of(metrics)
    p = flat_provenance(metrics)
    v = s.get(metric)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        value = "nan (nan%)"
    else:
        value = f"{float(v):.4f} ({100 * float(v):.2f}%)"
    parts = [f"{metric}={value}",
             f"checkpoint={p.get('checkpoint_sha256') or p.get('checkpoint') or 'none'}"]
    if not p.get("checkpoint_sha256") and p.get("predictions_sha256"):
        parts.append(f"predictions={p['predictions_sha256']}")
    parts.append(f"data={p['dataset']}@{p['dataset_version']}")
    parts.append(f"filter={p['filter'] or 'none'}")
    commit = p.get("git_commit")
    parts.append(f"arcnb={p['arcnb_version']}" + (f"+{commit[:12]}" if commit else ""))
    return ", ".join(parts)


# ======================================================================= the Run
@dataclass
class Run:
    """A run: its scored ``results`` (:class:`arcnb.scoring.Results`; None for a run
    read with :meth:`read`, without scoring), ``metrics`` (its ``metrics.json``, or
    the in-memory summary plus provenance), the run directory (None for an
    in-memory run) and a label.

    Make one with :meth:`open` (a run directory, validated and re-scored),
    :meth:`read` (a run directory's metrics only) or :meth:`from_results` (in
    memory); :meth:`write` writes it as a run directory.
    """

    results: object
    #: The run's ``metrics.json`` (or the in-memory summary plus ``provenance``).
    metrics: dict
    run_dir: Path | None = None
    label: str = ""

    # ------------------------------------------------------------------ views
    @property
    def summary(self) -> dict:
        """The scoring summary recorded in :attr:`metrics`."""
        return summary_of(self.metrics)

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
            raise ValueError(f"{self.label or 'this run'} is in memory: it has no {name}")
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
        return (f"Run({self.label!r}, dataset={ds.get('name')!r}, tasks={s.get('n_tasks')}, "
                f"outputs={s.get('n_outputs')}, pass@2={s.get('pass@2')})")

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_results(cls, results, *, provenance: Mapping | None = None,
                     label: str = "") -> "Run":
        """An in-memory run: ``metrics`` = the results' summary plus ``provenance``."""
        return cls(results, metrics_document(results.summary, provenance), None, label)

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
        dataset. The re-scored :data:`HEADLINE_KEYS` must equal the recorded ones, and
        the recorded dataset version the current one (unless ``dataset`` is given),
        else :class:`RunDirError`.

        ``ks``: the K to score (``"attempts"``: 1 .. the most attempts of any output).
        ``cache`` (a dict) keeps loaded datasets between calls. The label defaults to
        the folder name.
        """
        from .predictions import load_predictions
        from .scoring import score

        rd = Path(run_dir)
        if not rd.is_dir():
            raise RunDirError(f"run directory not found: {rd}")
        for name in _REQUIRED:
            if not (rd / name).is_file():
                raise RunDirError(f"{rd} is not a run directory: {name} is missing")
        metrics = read_metrics(rd)
        ds = _recorded_tasks(metrics, rd, dataset, cache)
        preds = load_predictions(str(rd / PREDICTIONS))
        if isinstance(ks, str):
            if ks != "attempts":
                raise ValueError(f"ks must be a list of K or 'attempts', got {ks!r}")
            ks = attempt_ks(preds)
        res = score(ds, preds, ks=ks, n_boot=n_boot, seed=seed)
        _check_recorded(summary_of(metrics), res.summary, rd)
        rec_version = recorded_dataset(metrics)[2].get("version")
        if rec_version and dataset is None and rec_version != ds.version:
            raise RunDirError(f"{rd}: {METRICS} records dataset version {rec_version} but "
                              f"{ds.name} is now {ds.version}")
        return cls(res, metrics, rd, label or rd.name)

    # ----------------------------------------------------------------- writing
    def write(self, out: str | os.PathLike, *, overwrite: bool = False,
              extra_columns=None, predictions_text: str | None = None) -> "Run":
        """Write this run as the run directory ``out``; returns the Run at ``out``.

        ``extra_columns`` (keyed by ``task_id`` and ``test_index``) are joined onto the
        outputs table. ``predictions_text`` is written verbatim as ``predictions.json``;
        by default the predictions source file is copied byte for byte when there is
        one, else the parsed attempts are written in submission format. All writes are
        atomic, ``metrics.json`` last; existing run files are only replaced with
        ``overwrite=True`` (checked up front).
        """
        from .predictions import to_submission

        res = self.results
        if res is None:
            raise ValueError("a Run read without scoring (Run.read) cannot be written")
        out = Path(out)
        refuse_finished(out, overwrite=overwrite)
        out.mkdir(parents=True, exist_ok=True)
        if predictions_text is None:
            src = getattr(res.predictions, "source", None)
            if src and Path(src).is_file():
                predictions_bytes = Path(src).read_bytes()
            else:
                predictions_bytes = (json.dumps(to_submission(res.predictions.attempts),
                                                separators=(",", ":")) + "\n").encode()
        else:
            predictions_bytes = predictions_text.encode("utf-8")
        outputs = res.outputs
        if extra_columns is not None:
            outputs = outputs.merge(extra_columns, on=["task_id", "test_index"], how="left",
                                    validate="one_to_one")
        atomic_write_bytes(out / PREDICTIONS, predictions_bytes, overwrite=overwrite)
        atomic_write_bytes(out / RESULTS_CSV, _df_csv(outputs), overwrite=overwrite)
        atomic_write_bytes(out / RESULTS_PARQUET, _df_parquet(outputs), overwrite=overwrite)
        atomic_write_bytes(out / TASKS_CSV, _df_csv(res.tasks), overwrite=overwrite)
        atomic_write_json(out / METRICS, self.metrics, overwrite=overwrite)
        return Run(res, self.metrics, out, self.label or out.name)


def write_run_dir(results, out, *, provenance: dict, overwrite: bool = False,
                  extra_columns=None, predictions_text: str | None = None) -> Path:
    """Write a run directory from scored :class:`~arcnb.scoring.Results` and its
    provenance (:meth:`Run.write`). Returns the directory."""
    run = Run.from_results(results, provenance=provenance)
    return run.write(out, overwrite=overwrite, extra_columns=extra_columns,
                     predictions_text=predictions_text).run_dir


def _df_csv(df) -> bytes:
    return df.to_csv(index=False, lineterminator="\n").encode("utf-8")


def _df_parquet(df) -> bytes:
    import io

    buf = io.BytesIO()
    df.to_parquet(buf, index=False, engine="pyarrow")
    return buf.getvalue()


# ----------------------------------------------------------- opening, validating
def _recorded_tasks(metrics: dict, rd: Path, dataset, cache: dict | None):
    """The dataset (and task subset) a run was scored on, as its metrics.json records
    it (or on ``dataset`` when given)."""
    from .data import load_dataset

    spec, tasks, _ = recorded_dataset(metrics)
    if dataset is None and not spec:
        raise RunDirError(f"{rd / METRICS} names no dataset (expected dataset.name); pass "
                          "dataset= / --dataset")
    use_tasks = _resolve_tasks(tasks, rd)
    if tasks is not None and use_tasks is None:
        use_tasks = _table_task_ids(rd)
        if use_tasks is None:
            raise RunDirError(f"{rd}: the recorded task filter {tasks!r} cannot be found and "
                              f"there is no {RESULTS_CSV} listing the tasks")
    key = str(dataset if dataset is not None else spec)
    if cache is not None and key in cache:
        ds = cache[key]
    else:
        ds = load_dataset(dataset if dataset is not None else spec)
        if cache is not None:
            cache[key] = ds
    if use_tasks is not None:
        ds = ds.select(use_tasks, label=str(tasks) if not isinstance(tasks, list) else None)
    return ds


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
    """The task ids of the run's outputs table (CSV, else parquet), or None."""
    import pandas as pd

    for name in (RESULTS_CSV, RESULTS_PARQUET):
        p = run_dir / name
        if p.exists():
            try:
                df = pd.read_csv(p, dtype={"task_id": str}) if name == RESULTS_CSV \
                    else pd.read_parquet(p, columns=["task_id"])
            except Exception:  # noqa: BLE001 - an unreadable table is just not used
                continue
            if "task_id" in df.columns:
                return sorted(set(df["task_id"].astype(str)))
    return None


def _check_recorded(recorded: dict, fresh: dict, where: Path) -> None:
    import numpy as np

    for key in HEADLINE_KEYS:
        a = recorded.get(key)
        if a is None:
            continue
        b = fresh[key]
        if isinstance(b, float) and np.isnan(b):
            raise RunDirError(f"{where}: re-scoring gives {key}=nan but {METRICS} says {a}")
        if abs(float(a) - float(b)) > 1e-9:
            raise RunDirError(f"{where}: re-scoring {PREDICTIONS} gives {key}={b}, but "
                              f"{METRICS} says {a}; the run directory is inconsistent")


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


def read_journals(out: str | os.PathLike, params: dict) -> dict[str, dict]:
    """Finished task records (by ``task_id``) from every journal in ``out``; bad or
    truncated lines are skipped. A journal written with other ``params`` is refused."""
    done: dict[str, dict] = {}
    for path in journal_paths(out):
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
        for raw in lines:
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue  # a line cut short by a kill
            if rec.get("kind") == _JOURNAL_KIND:
                if rec.get("params") != params:
                    diff = sorted(k for k in set(params) | set(rec.get("params") or {})
                                  if params.get(k) != (rec.get("params") or {}).get(k))
                    raise ArcnbError(f"{path} was written by a run with different parameters "
                                     f"({', '.join(diff)}); use --overwrite to start over")
                continue
            if "task_id" in rec:
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
    :meth:`append`, each flushed and fsynced. Opening repairs a cut-off last line."""

    def __init__(self, path: str | os.PathLike, params: dict):
        self.path = Path(path)
        _repair_tail(self.path)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self.fh = open(self.path, "ab")
        if new:
            self._write({"kind": _JOURNAL_KIND, "version": 1, "params": params})

    def _write(self, obj) -> None:
        self.fh.write(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode() + b"\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def append(self, record: dict) -> None:
        """Write ``record`` as one JSON line, flushed and fsynced."""
        self._write(record)

    def close(self) -> None:
        """Close the file."""
        self.fh.close()
