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
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .breakdown import breakdown, overall
from .columns import NEAR_MISS, is_near_miss
from .data import load_dataset
from .errors import ArcnbError, OutputExistsError, printable
from .evaluate import (_dist_setup, _resolve_device, check_run_parameters, evaluate,
                       run_options)
from .io import csv_text, file_sha256, read_json, to_jsonable
from .journal import journal_paths
from .models.loading import CHECKPOINT_SUFFIXES, checkpoint_path, recorded_step
from .models.registry import builder_names
from .report.notebooks import run_notebook
from .runs import (CANDIDATES, METRICS, RUN_FILES, OutputFolder, Run, is_finished, read_metrics,
                   same_run_problem)
from .stats import bootstrap_ci, check_n_boot, check_seed, ratio_bootstrap_ci
from .taxonomy import UNCATEGORIZED, structural_taxonomy

__all__ = ["sweep", "collect", "open_sweep", "Sweep", "SweepEntry", "checkpoint_step",
           "expand_checkpoints", "plan", "parse_shard", "honest_selection", "selection_split",
           "example_sweep", "sweep_or_example", "from_run_dirs",
           "SWEEP_CSV", "SWEEP_JSON", "CATEGORIES_CSV", "CHANGES_CSV", "SOLVED_CSV",
           "SWEEP_NOTEBOOK", "SWEEP_HTML", "RUNS_DIR",
           "CHECKPOINT_SUFFIXES", "STEP_SOURCES", "METRIC_COLUMNS"]

#: One row per checkpoint, ordered by step.
SWEEP_CSV = "sweep.csv"
#: The sweep's summary (dataset, checkpoints, step source, honest selection).
SWEEP_JSON = "sweep.json"
#: Per checkpoint and structural category.
CATEGORIES_CSV = "categories.csv"
#: Outputs gained and lost between consecutive checkpoints.
CHANGES_CSV = "changes.csv"
#: Task x step matrix of each task's pass@2.
SOLVED_CSV = "solved.csv"
#: The executed sweep notebook.
SWEEP_NOTEBOOK = "sweep.ipynb"
#: The sweep page (the executed notebook exported as self-contained HTML).
SWEEP_HTML = "sweep.html"
#: The folder of the run directories (one per checkpoint) and their entry files.
RUNS_DIR = "runs"
_ENTRY_SUFFIX = ".sweep.json"
_ENTRY_KIND = "arcnb-sweep-entry"

#: Where a step comes from, best first.
STEP_SOURCES = ("checkpoint", "file name", "order given")
#: The metrics of a sweep row that carry a 95 % interval.
METRIC_COLUMNS = ("pass@2", "shape_accuracy", "cell_accuracy", "partial_credit",
                  "near_miss_rate")


# ====================================================================== inputs
def expand_checkpoints(specs: Sequence[str | os.PathLike]) -> list[str]:
    """The checkpoints named by ``specs``: files, folders (their files ending in
    :data:`CHECKPOINT_SUFFIXES`, sorted), glob patterns (sorted matches), or model names
    such as ``baseline`` / ``copy-input``. Duplicates are dropped (first kept).
    :class:`~arcnb.errors.ArcnbError` when a folder or a pattern matches nothing or a
    path does not exist."""
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    out: list[str] = []
    for spec in specs:
        text = str(spec)
        path = Path(text)
        if path.is_dir():
            found = sorted(str(p) for p in path.iterdir()
                           if p.is_file() and p.suffix.lower() in CHECKPOINT_SUFFIXES)
            if not found:
                raise ArcnbError(f"folder {text} holds no checkpoint (files ending in "
                                 f"{', '.join(CHECKPOINT_SUFFIXES)})")
            out += found
        elif path.is_file() or text == "baseline" or text in builder_names():
            out.append(text)
        elif glob.has_magic(text):
            found = sorted(p for p in glob.glob(text) if Path(p).is_file())
            if not found:
                raise ArcnbError(f"no checkpoint matches {text!r}")
            out += found
        else:
            raise ArcnbError(f"checkpoint not found: {text} (give files, a folder, a glob "
                             "pattern in quotes, 'baseline' or a model name)")
    seen: set[str] = set()
    unique = []
    for c in out:
        key = os.path.realpath(c) if Path(c).is_file() else c
        if key not in seen:
            seen.add(key)
            unique.append(c)
    if not unique:
        raise ArcnbError("no checkpoint given")
    return unique


def checkpoint_step(path: str | os.PathLike) -> tuple[int | None, int | None]:
    """``(step, epoch)`` recorded in a checkpoint file: Lightning's ``global_step`` and
    ``epoch``, arcnb's ``step`` / ``epoch`` (:func:`arcnb.models.save_checkpoint`
    with ``step=``) or a safetensors file's ``"step"`` / ``"epoch"`` metadata
    (:func:`arcnb.models.recorded_step`: the checks ``arcnb evaluate`` makes
    first, the weights not loaded, no code run); ``(None, None)`` for anything else (a
    program archive, a model name, a file that needs pickled code)."""
    return recorded_step(path)


_STEP_IN_NAME = re.compile(r"(?:^|[^a-z])step[=_-]?(\d+)", re.I)
_NUMBER = re.compile(r"\d+")


def _step_from_name(name: str) -> int | None:
    stem = Path(name).name
    for suffix in CHECKPOINT_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    m = _STEP_IN_NAME.search(stem)
    if m:
        return int(m.group(1))
    nums = _NUMBER.findall(stem)
    return int(nums[-1]) if nums else None


@dataclass
class SweepEntry:
    """One checkpoint of a sweep: where it is, its step (and epoch), where the step
    came from, its position in step order and its run directory's name."""

    checkpoint: str
    step: int
    step_source: str
    position: int
    name: str
    epoch: int | None = None
    checkpoint_sha256: str | None = None
    #: Other files given for the sweep that hold the same bytes (Lightning's
    #: ``last.pt`` beside the step it copies): evaluated once, as this checkpoint.
    same_bytes: tuple = ()

    def to_json(self) -> dict:
        """The entry as the JSON object of its entry file (``runs/NAME.sweep.json``)."""
        return {"kind": _ENTRY_KIND, "checkpoint": self.checkpoint, "step": self.step,
                "epoch": self.epoch, "step_source": self.step_source,
                "position": self.position, "name": self.name,
                "checkpoint_sha256": self.checkpoint_sha256,
                "same_bytes": list(self.same_bytes)}

    @classmethod
    def from_json(cls, obj: dict, where) -> "SweepEntry":
        """The entry of an entry file's JSON object (``where`` names the file in errors).
        Every field is checked as written: ``name`` one plain folder name (never a path
        out of ``runs/``), ``step``, ``position`` and ``epoch`` whole numbers from 0 to
        2^63 - 1, the texts strings."""
        if not isinstance(obj, dict) or obj.get("kind") != _ENTRY_KIND:
            raise ArcnbError(f"{where} is not a sweep entry file")

        def whole(key, optional=False):
            v = obj.get(key)
            if v is None and optional:
                return None
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _MAX_STEP:
                raise ArcnbError(f"{where}: {key} is not a whole number from 0 to "
                                 f"{_MAX_STEP} ({printable(repr(v))[:40]})")
            return v

        def text(key, optional=False):
            v = obj.get(key)
            if v is None and optional:
                return None
            if not isinstance(v, str):
                raise ArcnbError(f"{where}: {key} is not a string")
            return v

        name = text("name")
        if not _RUN_NAME.fullmatch(name) or name in (".", ".."):
            raise ArcnbError(f"{where}: name {printable(repr(name))[:80]} is not the name of a "
                             f"run folder inside {RUNS_DIR}/")
        same = obj.get("same_bytes") or []
        if not isinstance(same, list) or not all(isinstance(x, str) for x in same):
            raise ArcnbError(f"{where}: same_bytes is not a list of file names")
        return cls(text("checkpoint"), whole("step"), text("step_source"), whole("position"),
                   name, whole("epoch", optional=True),
                   text("checkpoint_sha256", optional=True), tuple(same))


#: The largest step, epoch or position an entry file may hold.
_MAX_STEP = 2 ** 63 - 1
#: What a run folder's name is made of (see :func:`_run_name`).
_RUN_NAME = re.compile(r"[A-Za-z0-9._-]{1,80}")


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")
    return s[:60] or "checkpoint"


def _run_name(checkpoint: str) -> str:
    """A run directory name that stays the same for the same checkpoint file in every
    call (and every shard): the file's stem and a digest of its absolute path."""
    p = Path(checkpoint)
    key = os.path.realpath(checkpoint) if p.is_file() else checkpoint
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    stem = p.stem if p.is_file() else checkpoint
    return f"{_slug(stem)}-{digest}"


def plan(checkpoints: Sequence[str | os.PathLike]) -> list[SweepEntry]:
    """The sweep's checkpoints (:func:`expand_checkpoints`) with their steps, ordered by
    step. Files with the same bytes are one checkpoint (kept under the name that gives a
    step, the others listed in its ``same_bytes``): Lightning's ``last.pt`` beside the
    step it copies no longer makes two checkpoints of one step. The step source is the
    first of :data:`STEP_SOURCES` that gives every checkpoint a distinct step."""
    given = expand_checkpoints(checkpoints)
    shas = [_sha256_or_none(checkpoint_path(c)) for c in given]
    # byte-identical files are one checkpoint (Lightning's save_last=True leaves last.pt,
    # a copy of the latest step): a copy whose name gives no step of its own (or the
    # same step) is folded into the file whose name gives one
    groups: dict = {}
    for i, sha in enumerate(shas):
        groups.setdefault(sha if sha is not None else ("name", i), []).append(i)
    keep = []
    for members in groups.values():
        name_step = {i: _step_from_name(given[i]) for i in members}
        kept: dict = {}  # name step (or None) -> the member kept for it
        for i in sorted(members, key=lambda i: (name_step[i] is None, i)):
            key = name_step[i]
            if key is None and kept:
                key = next(iter(kept))  # a copy without a step of its own
            kept.setdefault(key, []).append(i)
        for group in kept.values():
            keep.append((group[0], tuple(Path(given[i]).name for i in group[1:])))
    keep.sort()
    ckpts = [given[i] for i, _ in keep]
    same = [dup for _, dup in keep]
    sha_of = [shas[i] for i, _ in keep]
    recorded = [checkpoint_step(c) for c in ckpts]
    from_name = [_step_from_name(c) if Path(c).is_file() else None for c in ckpts]

    def distinct(steps):
        return all(s is not None for s in steps) and len(set(steps)) == len(steps)

    if distinct([s for s, _ in recorded]):
        steps, source = [s for s, _ in recorded], STEP_SOURCES[0]
    elif distinct(from_name):
        steps, source = from_name, STEP_SOURCES[1]
    else:
        steps, source = list(range(len(ckpts))), STEP_SOURCES[2]
    order = sorted(range(len(ckpts)), key=lambda i: (steps[i], i))
    return [SweepEntry(ckpts[i], int(steps[i]), source, pos, _run_name(ckpts[i]),
                       recorded[i][1], sha_of[i], same[i])
            for pos, i in enumerate(order)]


def _sha256_or_none(path: Path) -> str | None:
    """What a run records as ``checkpoint_sha256``: the file's, or None for a model name
    (``copy-input``) that reads no file."""
    return file_sha256(path) if path.is_file() else None


def parse_shard(text) -> tuple[int, int] | None:
    """``"I/N"`` -> ``(I, N)`` with ``0 <= I < N``; None for None / empty."""
    if text is None or text == "":
        return None
    if isinstance(text, tuple):
        i, n = text
    else:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
        if not m:
            raise ArcnbError(f"--shard {text!r}: expected I/N, e.g. 0/4 (I from 0 to N-1)")
        i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 0 <= i < n:
        raise ArcnbError(f"--shard {i}/{n}: I must be between 0 and N-1 (N >= 1)")
    return int(i), int(n)


# ====================================================================== running
def sweep(checkpoints, dataset, out, *, arch=None, config: dict | None = None,
          trust_checkpoint: bool = False, augment: str = "none", color_perms: int = 1,
          attempts: int = 2, tasks=None, device: str = "auto", batch_size: int = 64,
          jobs: int = 1, shard=None, seed: int = 0, n_boot: int = 1000,
          overwrite: bool = False, report: bool = True, progress: bool | None = None,
          estimator: str = "ranked") -> "Sweep | None":
    """Evaluate every checkpoint into ``out/runs/`` and write the sweep's files.

    ``checkpoints``: files, folders, glob patterns or model names
    (:func:`expand_checkpoints`). ``dataset`` is loaded once (``tasks`` filters it).
    ``arch``, ``config``, ``trust_checkpoint``, ``augment``, ``color_perms``,
    ``attempts``, ``device``, ``batch_size``, ``seed`` and ``estimator`` go to every
    :func:`arcnb.evaluate.evaluate`. ``jobs`` checkpoints are evaluated at once
    (threads; CPU work shares the cores). ``shard=(i, n)`` or ``"i/n"`` evaluates only
    the checkpoints at positions ``i, i + n, ...`` and writes no summary files (run
    :func:`collect` when every shard is done); returns None then. Under ``torchrun``
    each checkpoint's evaluation is spread over the processes, as
    :func:`arcnb.evaluate.evaluate` does, and only rank 0 writes the summary (the other
    ranks return None). ``seed`` also seeds
    the bootstrap intervals and the selection split. ``overwrite`` redoes finished
    runs. ``report`` also writes ``sweep.html``. Returns the :class:`Sweep`.
    """
    shard = parse_shard(shard)
    if isinstance(jobs, bool) or int(jobs) < 1:
        raise ArcnbError(f"--jobs must be >= 1, got {jobs}")
    # every number checked before a checkpoint is read or a folder written
    checked = check_run_parameters(batch_size=batch_size, attempts=attempts, augment=augment,
                                   color_perms=color_perms, seed=seed, n_boot=n_boot,
                                   estimator=estimator)
    seed, n_boot = checked["seed"], checked["n_boot"]
    folder = _sweep_folder(out)
    entries = plan(checkpoints)
    ds = load_dataset(dataset, tasks=tasks, require_truth=False)
    if not all(t.has_truth for t in ds):
        raise ArcnbError(f"{ds.name} has test inputs without their outputs (a hidden test "
                         "set): a sweep scores every checkpoint, so it needs the outputs")
    runs = _claim_plan(folder, entries, overwrite=overwrite)
    mine = [e for e in entries if shard is None or e.position % shard[1] == shard[0]]
    dev = _resolve_device(device)
    opts = dict(device=device, batch_size=batch_size, attempts=attempts, augment=augment,
                color_perms=color_perms, trust_checkpoint=trust_checkpoint, arch=arch,
                config=config, seed=seed, n_boot=n_boot, estimator=estimator,
                progress=progress)

    def wanted(e: SweepEntry) -> dict:
        return run_options(e.checkpoint, ds, dev.type, batch_size=batch_size,
                           attempts=attempts, augment=augment, color_perms=color_perms,
                           arch=arch, config=config, seed=seed, estimator=estimator,
                           n_boot=n_boot, checkpoint_sha256=e.checkpoint_sha256)

    # every shard records the whole plan (the same bytes), so that --collect knows
    # which checkpoints are still missing
    runs.write({f"{e.name}{_ENTRY_SUFFIX}": _json_bytes(e.to_json()) for e in entries},
               overwrite=True)

    def one(e: SweepEntry):
        rd = runs.folder(e.name).path  # never a link out of the sweep folder
        if is_finished(rd) and not overwrite:
            _check_same_run(rd, e, wanted(e))
            return None
        resume = bool(journal_paths(rd)) and not overwrite
        return evaluate(e.checkpoint, ds, rd, resume=resume, overwrite=overwrite, **opts)

    results: dict[str, object] = {}
    # under torchrun: one process group for every evaluation (evaluate joins it), as a
    # group cannot be made again once destroyed
    rank, world, created = _dist_setup(dev)
    try:
        if int(jobs) == 1 or len(mine) <= 1 or world > 1:
            for e in mine:
                results[e.name] = one(e)
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=int(jobs)) as pool:
                for e, res in zip(mine, pool.map(one, mine)):
                    results[e.name] = res
    finally:
        if created:
            import torch.distributed as dist

            dist.destroy_process_group()
    if shard is not None or rank != 0:
        # a shard leaves the summary to --collect; under torchrun rank 0 writes it
        return None
    sw = Sweep.from_runs(out, entries, ds, results=results, seed=seed, n_boot=n_boot)
    sw.write(report=report)
    return sw


def _json_bytes(obj) -> bytes:
    return (json.dumps(to_jsonable(obj), indent=2, sort_keys=True, allow_nan=False)
            + "\n").encode("utf-8")


def _is_sweep_folder(out: Path) -> bool:
    """Whether ``out`` holds a sweep: entry files in ``runs/`` or arcnb's ``sweep.json``
    (a folder that merely has a ``runs/`` sub-folder, as TensorBoard's log folder has,
    is not one)."""
    runs = out / RUNS_DIR
    if runs.is_dir() and not runs.is_symlink() and any(runs.glob(f"*{_ENTRY_SUFFIX}")):
        return True
    summary = out / SWEEP_JSON
    if summary.is_file() and not summary.is_symlink():
        try:
            return read_json(summary, what="sweep summary").get("kind") == "arcnb-sweep"
        except (ArcnbError, AttributeError):
            return False
    return False


def _sweep_folder(out) -> OutputFolder:
    """``out`` as the sweep's guarded output folder: missing, empty, or a sweep folder
    (:func:`_is_sweep_folder`); any other folder is refused, so that a sweep never
    replaces files it did not write (``categories.csv`` among a user's own files)."""
    folder = OutputFolder(out)
    path = folder.path
    folder.folder(RUNS_DIR)  # a link planted as runs/ is refused before anything is written
    if path.is_dir() and any(path.iterdir()) and not _is_sweep_folder(path):
        raise OutputExistsError(f"{path} is not empty and holds no sweep of arcnb ({RUNS_DIR}/"
                                f"*{_ENTRY_SUFFIX} or {SWEEP_JSON}); choose a new folder for "
                                "the sweep")
    return folder


def _claim_plan(folder: OutputFolder, entries: list[SweepEntry], *,
                overwrite: bool) -> OutputFolder:
    """The ``runs/`` folder of a sweep of ``entries``. A folder that already holds the
    sweep of other checkpoints (another training run) is refused unless ``overwrite``,
    which removes their entries: one folder never mixes two sweeps."""
    runs = folder.folder(RUNS_DIR)
    if not runs.path.is_dir():
        return runs
    mine = {e.name for e in entries}
    others = sorted(p for p in runs.path.glob(f"*{_ENTRY_SUFFIX}")
                    if p.name[:-len(_ENTRY_SUFFIX)] not in mine)
    if others and not overwrite:
        raise OutputExistsError(
            f"{folder.path} holds the sweep of other checkpoints ({len(others)} not among "
            f"these, e.g. {printable(others[0].name[:-len(_ENTRY_SUFFIX)])}); choose a new "
            "folder for this sweep, or pass --overwrite to replace that one")
    for p in others:
        runs.target(p.name).unlink(missing_ok=True)
    return runs


def _check_same_run(rd: Path, e: SweepEntry, wanted: dict) -> None:
    """A finished run is reused only when it is the run asked for: the hash of every
    option that changes a result (:func:`arcnb.evaluate.run_options`) must match."""
    problem = same_run_problem(read_metrics(rd), wanted)
    if problem:
        raise OutputExistsError(f"{rd} holds a finished run of {printable(e.checkpoint)} that is "
                                f"not the one asked for: {problem}; pass --overwrite to redo "
                                "it, or sweep into a new folder")


def example_sweep(out, dataset="arc-agi-1:evaluation", *, seed: int = 0,
                  n_boot: int = 1000) -> "Sweep":
    """A two-checkpoint sweep to try the sweep page on without a training run: copying
    the input (a model that learned nothing) then the bundled baseline, in that order
    (their steps are 0 and 1: the order given). Finished runs in ``out`` are reused."""
    return sweep(["copy-input", "baseline"], dataset, out, seed=seed, n_boot=n_boot,
                 report=False, progress=False)


def sweep_or_example(sweep_dir, example_dir: str = "sweep-example",
                     dataset: str = "arc-agi-1:evaluation", *, seed: int = 0,
                     n_boot: int = 1000) -> "Sweep":
    """The sweep page's sweep: the sweep folder ``sweep_dir`` (:func:`open_sweep`) or,
    when it is empty, the :func:`example_sweep` written to ``example_dir``."""
    if sweep_dir:
        return open_sweep(sweep_dir, seed=seed, n_boot=n_boot)
    return example_sweep(example_dir, dataset, seed=seed, n_boot=n_boot)


def from_run_dirs(checkpoints, run_dirs, out, *, seed: int = 0, n_boot: int = 1000,
                  report: bool = True, overwrite: bool = False) -> "Sweep":
    """A sweep folder ``out`` from checkpoints already evaluated elsewhere (e.g. the
    run directories of ``arcnb report --checkpoint a b c``): each run directory's files
    are copied into ``out/runs/`` (``metrics.json`` last), matched to its checkpoint by
    the checkpoint's SHA-256 recorded in the run, then the sweep's files are written."""
    folder = _sweep_folder(out)
    out = folder.path
    entries = plan(checkpoints)
    runs = _claim_plan(folder, entries, overwrite=overwrite)
    by_sha = {}
    for rd in run_dirs:
        prov = read_metrics(rd).get("provenance") or {}
        by_sha[prov.get("checkpoint_sha256")] = Path(rd)
    missing = [e.checkpoint for e in entries if e.checkpoint_sha256 not in by_sha]
    if missing:
        raise ArcnbError(f"no run directory of checkpoint {missing[0]}")
    for e in entries:
        dest = runs.folder(e.name)
        if is_finished(dest.path) and not overwrite:
            raise OutputExistsError(f"{dest.path} already holds a finished run; refusing to "
                                    "overwrite it (pass --overwrite)")
        src = by_sha[e.checkpoint_sha256]
        names = [n for n in RUN_FILES if n != METRICS] + [CANDIDATES, METRICS]
        files = {name: (src / name).read_bytes for name in names
                 if (src / name).is_file()}  # metrics.json last: it marks a finished run
        dest.write(files, overwrite=True, remove=(METRICS, CANDIDATES))
        runs.write({f"{e.name}{_ENTRY_SUFFIX}": _json_bytes(e.to_json())}, overwrite=True)
    sw = Sweep.from_runs(out, entries, None, results={}, seed=seed, n_boot=n_boot)
    sw.write(report=report)
    return sw


def collect(out, *, dataset=None, seed: int = 0, n_boot: int = 1000,
            report: bool = True) -> "Sweep":
    """Build the sweep's files in ``out`` from its finished run directories (after the
    shards of a job array). ``dataset`` overrides the one the runs record."""
    sw = open_sweep(out, dataset=dataset, seed=seed, n_boot=n_boot)
    sw.write(report=report)
    return sw


def _entries(out: Path) -> list[SweepEntry]:
    runs_dir = out / RUNS_DIR
    if not runs_dir.is_dir():
        raise ArcnbError(f"{out} is not a sweep folder: {RUNS_DIR}/ is missing")
    OutputFolder(out).folder(RUNS_DIR)  # never read through a link either
    entries = [SweepEntry.from_json(read_json(p, what="sweep entry"), p)
               for p in sorted(runs_dir.glob(f"*{_ENTRY_SUFFIX}"))]
    if not entries:
        raise ArcnbError(f"{runs_dir} holds no checkpoint of a sweep")
    entries = sorted(entries, key=lambda e: (e.position, e.name))
    _check_plan(out, entries)
    return entries


def _check_plan(out: Path, entries: list[SweepEntry]) -> None:
    """The entries of one sweep: distinct steps and positions 0, 1, 2, ... (the entries
    of two training runs in one folder are refused, never merged)."""
    steps: dict[int, SweepEntry] = {}
    for e in entries:
        if e.step in steps:
            raise ArcnbError(f"{out} holds two checkpoints at step {e.step} "
                             f"({printable(steps[e.step].checkpoint)} and "
                             f"{printable(e.checkpoint)}): the sweeps of two training runs? "
                             "Sweep each into its own folder")
        steps[e.step] = e
    if [e.position for e in entries] != list(range(len(entries))):
        raise ArcnbError(f"{out}: the entries of {RUNS_DIR}/ are not one sweep's plan "
                         "(positions missing or repeated); sweep into a new folder")


def _check_runs(out: Path, entries: list[SweepEntry]) -> None:
    """Every finished run of a sweep is the run of its entry: evaluated from the bytes
    of the checkpoint the plan records (a checkpoint rewritten by training between two
    shards is refused, never reported under its new step), and all with the same
    options (:func:`arcnb.evaluate.run_options`, the checkpoint aside)."""
    ref = None
    for e in entries:
        rd = out / RUNS_DIR / e.name
        metrics = read_metrics(rd)
        prov = metrics.get("provenance") if isinstance(metrics.get("provenance"), dict) else {}
        if e.checkpoint_sha256 is not None and prov.get("checkpoint_sha256") != \
                e.checkpoint_sha256:
            raise ArcnbError(f"{rd} was evaluated from other bytes of "
                             f"{printable(e.checkpoint)} than the sweep's plan records (the "
                             "file changed between shards?); evaluate it again with "
                             "arcnb sweep ... --overwrite")
        if ref is None:
            ref = (rd, metrics)
            continue
        has = isinstance(prov.get("options"), dict)
        had = isinstance((ref[1].get("provenance") or {}).get("options"), dict)
        if not has and not had:
            continue  # runs of an older arcnb: nothing recorded to compare
        options = (ref[1].get("provenance") or {}).get("options") or {}
        problem = same_run_problem(metrics, options, ignore=("checkpoint",))
        if problem:
            raise ArcnbError(f"the runs of {out} were not evaluated alike: {rd} differs from "
                             f"{ref[0]}: {problem}")


def open_sweep(out, *, dataset=None, seed: int = 0, n_boot: int = 1000) -> "Sweep":
    """The :class:`Sweep` of a sweep folder, from its finished run directories
    (re-scored by :meth:`arcnb.runs.Run.open`). Checkpoints without a finished run (a
    shard still running) are named in one error."""
    out = Path(out)
    entries = _entries(out)
    missing = [printable(e.checkpoint) for e in entries
               if not is_finished(out / RUNS_DIR / e.name)]
    if missing:
        raise ArcnbError(f"{len(missing)} of {len(entries)} checkpoints have no finished run "
                         f"yet (e.g. {missing[0]}); finish every shard first")
    ds = None if dataset is None else load_dataset(dataset, require_truth=False)
    return Sweep.from_runs(out, entries, ds, results={}, seed=seed, n_boot=n_boot)


# ====================================================================== the sweep
@dataclass
class Sweep:
    """The checkpoints of a sweep (:class:`SweepEntry`, step order) and their scored
    :class:`~arcnb.scoring.Results`, with the tables of the sweep page."""

    out: Path
    entries: list[SweepEntry]
    results: list
    seed: int = 0
    n_boot: int = 1000
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_runs(cls, out, entries, dataset, *, results: dict, seed: int = 0,
                  n_boot: int = 1000) -> "Sweep":
        """The sweep of ``entries`` in the folder ``out``: each checkpoint's results from
        ``results`` (``{run name: Results}``, fresh from evaluate) or else from its run
        directory (:meth:`arcnb.runs.Run.open`, scored on ``dataset`` when given)."""
        out = Path(out)
        seed, n_boot = check_seed(seed), check_n_boot(n_boot)
        cache: dict = {}
        scored = []
        for e in entries:
            res = results.get(e.name)
            if isinstance(res, Run):  # evaluate's Run: its scored results (None: no truth)
                res = res.results if res.scored else False
            if res is False:
                raise ArcnbError(f"{out / RUNS_DIR / e.name} is not scored (no truth): a "
                                 "sweep needs a dataset with test outputs")
            if res is None:
                res = Run.open(out / RUNS_DIR / e.name, dataset=dataset, cache=cache).results
            if res is None:
                raise ArcnbError(f"{out / RUNS_DIR / e.name} is not scored (no truth): a sweep "
                                 "needs a dataset with test outputs")
            scored.append(res)
        ids = [list(r.tasks["task_id"]) for r in scored]
        if any(i != ids[0] for i in ids):
            raise ArcnbError(f"the runs of {out} are not on the same tasks")
        _check_plan(out, list(entries))
        _check_runs(out, list(entries))
        return cls(out, list(entries), scored, seed, n_boot)

    # ------------------------------------------------------------ tables
    @property
    def steps(self) -> list[int]:
        """The checkpoints' steps, in order."""
        return [e.step for e in self.entries]

    @property
    def dataset(self):
        """The dataset the checkpoints were evaluated on (the tasks of the sweep)."""
        return self.results[0].dataset

    @property
    def step_source(self) -> str:
        """Where the steps came from: one of :data:`STEP_SOURCES`."""
        return self.entries[0].step_source if self.entries else STEP_SOURCES[2]

    def results_at(self, step: int):
        """The scored results of the checkpoint at ``step``."""
        for e, r in zip(self.entries, self.results):
            if e.step == int(step):
                return r
        raise ArcnbError(f"no checkpoint at step {step} (steps: {self.steps})")

    def changed_outputs(self, step: int, change: str):
        """The rows of the results at ``step`` that were ``"gained"`` or ``"lost"``
        coming from the previous checkpoint (for :func:`arcnb.plot.gallery` ``rows=``)."""
        ch = self.changes()
        part = ch[(ch["to_step"] == int(step)) & (ch["change"] == change)]
        out = self.results_at(step).outputs
        return out.merge(part[["task_id", "test_index"]], on=["task_id", "test_index"])

    def taxonomy(self):
        """The automatic structural taxonomy of the sweep's tasks (computed once)."""
        if "taxonomy" not in self._cache:
            self._cache["taxonomy"] = structural_taxonomy(self.dataset)
        return self._cache["taxonomy"]

    def table(self) -> pd.DataFrame:
        """The rows of ``sweep.csv`` (see the module docstring)."""
        if "table" in self._cache:
            return self._cache["table"]
        rows = []
        for e, res in zip(self.entries, self.results):
            o = overall(res, ks=(1, 2), n_boot=self.n_boot, seed=self.seed,
                        near_miss=NEAR_MISS).iloc[0]
            row = {"step": e.step, "epoch": e.epoch, "step_source": e.step_source,
                   # shown, never raw: a newline or a non-UTF-8 byte in a file name is
                   # escaped (\n, \xff), so it can neither forge a row nor fail a write
                   "checkpoint": printable(e.checkpoint), "run_dir": f"{RUNS_DIR}/{e.name}",
                   "n_tasks": int(o["n_tasks"]), "n_outputs": int(o["n_outputs"]),
                   "pass@1": o["pass@1"], "pass@2_per_output": o["pass@2_per_output"]}
            for m in METRIC_COLUMNS[:-1]:
                row[m] = o[m]
                row[f"{m}_ci_low"] = o[f"{m}_ci_low"]
                row[f"{m}_ci_high"] = o[f"{m}_ci_high"]
            near, n_out = _near_miss_per_task(res)
            row["near_miss_rate"] = near.sum() / n_out.sum() if n_out.sum() else float("nan")
            lo, hi = ratio_bootstrap_ci(near, n_out, n_boot=self.n_boot, seed=self.seed, level=0.95)
            row["near_miss_rate_ci_low"], row["near_miss_rate_ci_high"] = lo, hi
            row["n_near_miss"] = int(o["n_near_miss"])
            row["n_right_shape"] = int(o["n_right_shape"])
            rows.append(row)
        df = pd.DataFrame(rows)
        self._cache["table"] = df
        return df

    def task_matrix(self, metric: str = "pass@2") -> pd.DataFrame:
        """Tasks x steps: each task's ``metric`` (a column of the tasks table) at each
        checkpoint, tasks in dataset order."""
        cols = {e.step: r.tasks.set_index("task_id")[metric] for e, r in
                zip(self.entries, self.results)}
        m = pd.DataFrame(cols)
        m.columns.name = "step"
        return m

    def solved_matrix(self) -> pd.DataFrame:
        """The tasks solved at some checkpoint x steps, each cell the task's pass@2,
        ordered by the first step the task had a solved output (then task id)."""
        m = self.task_matrix("pass@2").fillna(0.0)
        hit = m.to_numpy() > 0
        keep = hit.any(axis=1)
        first = np.where(keep, hit.argmax(axis=1), len(self.entries))
        order = np.lexsort((m.index.to_numpy(), first))
        order = [i for i in order if keep[i]]
        out = m.iloc[order]
        out.index.name = "task_id"
        return out

    def changes(self) -> pd.DataFrame:
        """Outputs gained and lost between consecutive checkpoints: ``from_step``,
        ``to_step``, ``task_id``, ``test_index``, ``change`` (``gained``/``lost``)."""
        cols = ["from_step", "to_step", "task_id", "test_index", "change"]
        rows = []
        keys = ["task_id", "test_index"]
        prev = None
        for e, res in zip(self.entries, self.results):
            cur = res.outputs[keys + ["solved@2"]].set_index(keys)["solved@2"].astype(bool)
            if prev is not None:
                a, b = prev[1].align(cur, fill_value=False)
                for change, mask in (("gained", ~a & b), ("lost", a & ~b)):
                    for tid, i in mask[mask].index:
                        rows.append((prev[0], e.step, tid, int(i), change))
            prev = (e.step, cur)
        return pd.DataFrame(rows, columns=cols)

    def categories(self) -> pd.DataFrame:
        """Per checkpoint and structural category: ``step``, ``group``, ``n_tasks``,
        ``pass@2``, ``partial_credit`` and their intervals."""
        if "categories" in self._cache:
            return self._cache["categories"]
        tax = self.taxonomy()
        keep = ["group", "n_tasks", "pass@2", "pass@2_ci_low", "pass@2_ci_high",
                "partial_credit", "partial_credit_ci_low", "partial_credit_ci_high"]
        parts = []
        for e, res in zip(self.entries, self.results):
            b = breakdown(res, tax, n_boot=self.n_boot, seed=self.seed)[keep]
            parts.append(b.assign(step=e.step)[["step"] + keep])
        df = pd.concat(parts, ignore_index=True)
        self._cache["categories"] = df
        return df

    def selection(self, metric: str = "pass@2") -> dict:
        """:func:`honest_selection` on this sweep (the sweep's seed)."""
        return honest_selection(self.task_matrix(metric), self._strata(), seed=self.seed,
                                n_boot=self.n_boot, metric=metric)

    def _strata(self) -> dict[str, tuple]:
        tax = self.taxonomy()
        ids = list(self.results[0].tasks["task_id"])
        return {t: tax.categories_of(t) for t in ids}  # every category, not the first

    def notes(self) -> list[str]:
        """What to know about the checkpoints: files with the same bytes, evaluated once."""
        return [f"{', '.join(printable(n) for n in e.same_bytes)} "
                f"{'holds' if len(e.same_bytes) == 1 else 'hold'} the same bytes as "
                f"{printable(Path(e.checkpoint).name)}: evaluated once, as step {e.step}"
                for e in self.entries if e.same_bytes]

    def summary(self) -> dict:
        """What ``sweep.json`` holds."""
        solved = self.solved_matrix()
        return {
            "kind": "arcnb-sweep",
            "dataset": dict(self.dataset.info),
            "n_tasks": int(len(self.results[0].tasks)),
            "n_outputs": int(len(self.results[0].outputs)),
            "n_checkpoints": len(self.entries),
            "step_source": self.step_source,
            "checkpoints": [{"step": e.step, "epoch": e.epoch,
                             "checkpoint": printable(e.checkpoint),
                             "run_dir": f"{RUNS_DIR}/{e.name}",
                             "same_bytes": [printable(n) for n in e.same_bytes]}
                            for e in self.entries],
            "notes": self.notes(),
            "n_tasks_ever_solved": int(len(solved)),
            "selection": self.selection(),
            "bootstrap": {"n_boot": self.n_boot, "seed": self.seed, "level": 0.95,
                          "unit": "task"},
        }

    # ------------------------------------------------------------ writing
    def write(self, *, report: bool = True) -> Path:
        """Write the sweep's files into its folder (they are rebuilt from the run
        directories, so rewriting them loses nothing); with ``report`` also run the
        sweep notebook into ``sweep.ipynb`` / ``sweep.html``. Returns ``sweep.csv``."""
        out = self.out
        folder = _sweep_folder(out)  # a sweep folder only: never a user's own files
        folder.write({CATEGORIES_CSV: csv_text(self.categories()).encode("utf-8"),
                      CHANGES_CSV: csv_text(self.changes()).encode("utf-8"),
                      SOLVED_CSV: csv_text(self.solved_matrix(), index=True).encode("utf-8"),
                      SWEEP_JSON: _json_bytes(self.summary()),
                      SWEEP_CSV: csv_text(self.table()).encode("utf-8")}, overwrite=True)
        path = folder.target(SWEEP_CSV)
        if report:
            folder.claim([SWEEP_NOTEBOOK, SWEEP_HTML], overwrite=True)  # links refused
            run_notebook("sweep", out / SWEEP_NOTEBOOK,
                         {"sweep_dir": str(Path(out).resolve()), "seed": int(self.seed),
                          "n_boot": int(self.n_boot)},
                         cwd=out, progress=False, html=out / SWEEP_HTML, overwrite=True,
                         title="Checkpoint sweep")
        return path


def _near_miss_per_task(res) -> tuple[np.ndarray, np.ndarray]:
    """Per task (dataset order): near misses (:func:`arcnb.columns.is_near_miss`) and
    test outputs."""
    out = res.outputs
    near = is_near_miss(out["solved@2"], out["cell_accuracy"])
    g = pd.DataFrame({"task_id": out["task_id"], "near": near.astype(float)}) \
        .groupby("task_id", sort=False)
    return g["near"].sum().to_numpy(float), g.size().to_numpy(float)


# ====================================================================== selection
def selection_split(task_ids: Sequence[str], strata: dict, *,
                    seed: int = 0) -> tuple[list[str], list[str]]:
    """Split tasks into a selection half and a report half so that every category is
    divided evenly between them. ``strata`` maps a task to its category, or to all its
    categories (a tuple: the structural taxonomy gives a task several).

    First the deal: within each task's first category (in sorted order) the tasks are
    shuffled (``numpy.random.default_rng(seed)``) and dealt alternately to the two
    halves, the deal continuing across categories, so the halves differ in size by at
    most one. Then, while swapping a task of one half with a task of the other lowers
    the sum over categories of the squared difference between the halves' counts, the
    best such swap is made (sizes unchanged). A task of several categories thus counts
    in each of them: on the structural taxonomy of ARC-AGI-1's evaluation tasks every
    category ends within one task of even. Returns both halves, sorted."""
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    ids = sorted(task_ids)
    cats = []
    for t in ids:
        c = strata.get(t, UNCATEGORIZED)
        c = (str(c),) if isinstance(c, str) or not isinstance(c, (tuple, list)) else \
            tuple(dict.fromkeys(str(x) for x in c)) or (UNCATEGORIZED,)
        cats.append(c)
    names = sorted({c for cs in cats for c in cs})
    col = {c: j for j, c in enumerate(names)}
    member = np.zeros((len(ids), len(names)), np.int64)
    for i, cs in enumerate(cats):
        member[i, [col[c] for c in cs]] = 1
    by: dict[str, list[int]] = {}
    for i, cs in enumerate(cats):
        by.setdefault(cs[0], []).append(i)
    in_sel = np.zeros(len(ids), bool)
    turn = 0
    for stratum in sorted(by):
        members = by[stratum]
        for j in rng.permutation(len(members)):
            in_sel[members[int(j)]] = turn % 2 == 0
            turn += 1
    # swaps: moving t (selection) and u (report) changes the imbalances d by
    # 2 (m_u - m_t), so sum d^2 changes by 4 (d.m_u - d.m_t + |m_u - m_t|^2)
    norms = member.sum(axis=1)
    for _ in range(len(ids)):
        d = member[in_sel].sum(axis=0) - member[~in_sel].sum(axis=0)
        s_idx, r_idx = np.flatnonzero(in_sel), np.flatnonzero(~in_sel)
        if not s_idx.size or not r_idx.size:
            break
        gain = (member[r_idx] @ d)[None, :] - (member[s_idx] @ d)[:, None] \
            + norms[s_idx][:, None] + norms[r_idx][None, :] \
            - 2 * (member[s_idx] @ member[r_idx].T)
        k = int(np.argmin(gain))
        if gain.flat[k] >= 0:
            break
        a, b = divmod(k, r_idx.size)
        in_sel[s_idx[a]], in_sel[r_idx[b]] = False, True
    sel = [ids[i] for i in np.flatnonzero(in_sel)]
    rep = [ids[i] for i in np.flatnonzero(~in_sel)]
    return sorted(sel), sorted(rep)


def honest_selection(matrix: pd.DataFrame, strata: dict, *, seed: int = 0,
                     n_boot: int = 1000, metric: str = "pass@2") -> dict:
    """Choose the best checkpoint on one half of the tasks and report it on the other.

    ``matrix``: tasks x steps of a per-task score (:meth:`Sweep.task_matrix`).
    The tasks are split by :func:`selection_split`; the checkpoint with the highest mean
    on the selection half is chosen (the earliest on ties) and its mean on the report
    half is the honest score (with a bootstrap interval over the report half's tasks).
    Choosing on the report half itself would have given the highest mean there: the
    difference is the ``inflation`` (>= 0). ``full_set_best`` is what choosing and
    reporting on every task gives, for reference. Every score is a fraction in [0, 1].
    """
    m = matrix.astype(float)
    steps = [int(s) for s in m.columns]
    sel, rep = selection_split(list(m.index), strata, seed=seed)
    mean_sel = m.loc[sel].mean(axis=0).to_numpy() if sel else np.full(len(steps), np.nan)
    mean_rep = m.loc[rep].mean(axis=0).to_numpy() if rep else np.full(len(steps), np.nan)
    mean_all = m.mean(axis=0).to_numpy()

    def best(v):
        return int(np.nanargmax(v)) if np.isfinite(v).any() else 0

    i_sel, i_rep, i_all = best(mean_sel), best(mean_rep), best(mean_all)
    honest = float(mean_rep[i_sel])
    lo, hi = bootstrap_ci(m.loc[rep].iloc[:, i_sel].to_numpy(), n_boot=n_boot, seed=seed) \
        if rep else (float("nan"), float("nan"))
    return {
        "metric": metric,
        "seed": int(seed),
        "n_selection_tasks": len(sel),
        "n_report_tasks": len(rep),
        "selection_tasks": sel,
        "report_tasks": rep,
        "chosen_step": steps[i_sel],
        "selection_score": float(mean_sel[i_sel]),
        "report_score": honest,
        "report_score_ci95": [lo, hi],
        "best_step_on_report_half": steps[i_rep],
        "best_score_on_report_half": float(mean_rep[i_rep]),
        "inflation": float(mean_rep[i_rep] - honest),
        "full_set_best_step": steps[i_all],
        "full_set_best_score": float(mean_all[i_all]),
    }

