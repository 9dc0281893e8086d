"""The front door: the one way anything a user gives becomes a :class:`~arcnb.runs.Run`.

A *source* is a small typed value with a default ``label`` and its own ``open(...)``
(the ``Source`` protocol), which makes the run:

* :class:`PredictionsSource`: a submission file (JSON or JSON Lines) or a
  benchmarking-harness run folder, scored on a dataset;
* :class:`RunDirSource`: a run directory, re-opened and re-scored (:meth:`arcnb.runs.Run.open`);
* :class:`CheckpointSource`: a checkpoint (or a model name such as ``copy-input``)
  evaluated on a dataset into a run directory (:func:`arcnb.evaluate.evaluate`);
* :class:`BaselineSource`: a reference baseline scored on a dataset in memory
  (``copy-input``, ``program-search``: its bundled predictions);
* :class:`DatasetSource`: a dataset without predictions (an unscored run with tasks
  only: what the browser shows for a dataset).

:func:`~arcnb.front.parse_source` is the one place a path or a name becomes one of them;
:func:`open_run` (``arcnb.open``) is ``parse_source(source).open(...)``. The explorer,
compare, the report (its references and its cost section included) and the notebooks
all come through here.

>>> import arcnb
>>> run = arcnb.open("submission.json", dataset="arc-agi-1:evaluation")  # doctest: +SKIP
>>> run = arcnb.open("runs/baseline")                                      # doctest: +SKIP
>>> run = arcnb.open(CheckpointSource("model.pt", {"arch": "mymodels:build"}),
...                  dataset="arc-agi-1:evaluation", out="runs/model")     # doctest: +SKIP
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Protocol, Sequence, runtime_checkable

from .baselines import copy_input_submission
from .data import DATASETS, Dataset, load_dataset
from .errors import ArcnbError
from .evaluate import checkpoint_kwargs, evaluate
from .predictions import load_predictions
from .resources import examples_dir
from .io import read_json
from .models.loading import CHECKPOINT_SUFFIXES
from .runs import (Run, attempt_ks, file_sha256_or_none, is_run_dir, predictions_provenance,
                   read_metrics, recorded_dataset, recorded_task_ids, refuse_finished,
                   run_provenance)
from .scoring import Results, score

__all__ = ["PredictionsSource", "RunDirSource", "CheckpointSource", "BaselineSource",
           "DatasetSource", "Source", "SOURCE_KINDS", "BASELINES", "parse_source",
           "open_run", "score_to_run_dir", "is_task_file", "task_set", "recorded_tasks"]

#: The reference baselines :class:`BaselineSource` names.
BASELINES = ("copy-input", "program-search")


@dataclass(frozen=True)
class PredictionsSource:
    """A submission file or a benchmarking-harness run folder (or a submission
    object in memory: ``{task_id: [{"attempt_1": grid, ...}, ...]}``), scored on a
    dataset. With ``only_dataset_tasks`` a submission file is cut to the dataset's
    tasks first (a reference scored on a slice of the dataset it was made for)."""

    path: object
    only_dataset_tasks: bool = False

    @property
    def label(self) -> str:
        """The run's default label: the file's or folder's name without suffix."""
        if isinstance(self.path, Mapping):
            return "predictions"
        return Path(self.path).stem or Path(self.path).name

    def open(self, *, dataset=None, tasks=None, label: str | None = None,
             ks: Sequence[int] | str | None = None, n_boot: int = 1000, seed: int = 0,
             estimator: str = "ranked", out: str | os.PathLike | None = None,
             overwrite: bool = False, cache: dict | None = None) -> Run:
        """Scored on ``dataset`` (``tasks`` filters it) with ``estimator``, for ``ks``
        (default: 1 .. the most attempts of any output), in memory, or written as the
        run directory ``out``."""
        return _scored_run(self, _dataset(dataset, tasks, cache), label, ks=ks, n_boot=n_boot,
                           seed=seed, estimator=estimator, out=out, overwrite=overwrite)

    def predictions(self, ds: Dataset):
        """The predictions, loaded (cut to ``ds``'s tasks with ``only_dataset_tasks``),
        and their provenance."""
        if self.only_dataset_tasks and isinstance(self.path, (str, os.PathLike)) and \
                Path(self.path).is_file():
            return _cut_predictions(Path(self.path), ds)
        preds = load_predictions(self.path)
        return preds, predictions_provenance(self.path, preds, ds)


@dataclass(frozen=True)
class RunDirSource:
    """A run directory (``metrics.json`` + ``predictions.json``), re-opened."""

    path: str

    @property
    def label(self) -> str:
        """The run's default label: the folder's name."""
        return Path(self.path).name

    def open(self, *, dataset=None, tasks=None, label: str | None = None,
             ks: Sequence[int] | str | None = None, n_boot: int = 1000, seed: int = 0,
             estimator: str = "ranked", out: str | os.PathLike | None = None,
             overwrite: bool = False, cache: dict | None = None) -> Run:
        """Re-opened and re-scored with its recorded estimator on its recorded dataset (or
        ``dataset``); every recorded number must hold (:meth:`arcnb.runs.Run.open`).
        ``ks`` defaults to ``"attempts"``; the estimator is the recorded one (the
        argument is ignored); the tasks are the recorded ones unless ``tasks`` is given:
        the run is then scored on those tasks of the dataset, a task it has no
        predictions for counted wrong (:meth:`arcnb.runs.Run.on_tasks`; the rule of
        :func:`task_set`). ``out`` is refused (it is already a run directory)."""
        if out is not None:
            raise ArcnbError(f"{self.path} is already a run directory (out= is for sources "
                             "that are scored or evaluated)")
        run = Run.open(self.path, dataset=dataset, label=label,
                       ks="attempts" if ks is None else ks, n_boot=n_boot, seed=seed,
                       cache=cache)
        if tasks is None or run.results is None:
            return run
        if not isinstance(tasks, Dataset):
            full = dataset if dataset is not None else run.results.summary["dataset"]["name"]
            tasks = _dataset(full, tasks, cache)
        return run.on_tasks(tasks, n_boot=n_boot, seed=seed)


@dataclass(frozen=True)
class CheckpointSource:
    """A checkpoint file, ``"baseline"`` or a registered model name, evaluated with
    ``options`` (:func:`arcnb.evaluate.evaluate`'s keyword arguments: device,
    batch_size, attempts, augment, seed, arch, config, replace_config,
    trust_checkpoint, ...; see :func:`arcnb.evaluate.checkpoint_kwargs`)."""

    checkpoint: str
    options: Mapping = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The run's default label: the checkpoint file's name without suffix."""
        return Path(str(self.checkpoint)).stem or str(self.checkpoint)

    def open(self, *, dataset=None, tasks=None, label: str | None = None,
             ks: Sequence[int] | str | None = None, n_boot: int = 1000, seed: int = 0,
             estimator: str = "ranked", out: str | os.PathLike | None = None,
             overwrite: bool = False, cache: dict | None = None) -> Run:
        """Evaluated on ``dataset`` (``tasks`` filters it) into the run directory ``out``
        (required) with ``options`` (:func:`arcnb.evaluate.evaluate`; ``estimator``
        unless the options name one); ``ks``, ``n_boot``, ``seed`` and ``cache`` are
        not used. Returns the Run it wrote (unscored on a dataset without truth)."""
        if out is None:
            raise ArcnbError(f"evaluating {self.checkpoint} writes a run directory: pass out=")
        opts = checkpoint_kwargs(self.options)
        opts.setdefault("estimator", estimator)
        with warnings.catch_warnings():
            # tqdm.auto in a kernel without ipywidgets warns even for a disabled bar
            warnings.filterwarnings("ignore", message=".*IProgress not found.*")
            run = evaluate(self.checkpoint, _dataset_spec(dataset), out, tasks=tasks or None,
                           overwrite=overwrite, **opts)
        if run is not None and label:
            run.label = label
        return run


@dataclass(frozen=True)
class BaselineSource:
    """A reference baseline of :data:`BASELINES`, scored in memory on a dataset."""

    name: str

    def __post_init__(self):
        if self.name not in BASELINES:
            raise ArcnbError(f"unknown baseline {self.name!r}: expected one of "
                             f"{', '.join(BASELINES)}")

    @property
    def label(self) -> str:
        """The run's default label: ``copy the input``, ``program search``."""
        return {"copy-input": "copy the input"}.get(self.name, self.name.replace("-", " "))

    def open(self, *, dataset=None, tasks=None, label: str | None = None,
             ks: Sequence[int] | str | None = None, n_boot: int = 1000, seed: int = 0,
             estimator: str = "ranked", out: str | os.PathLike | None = None,
             overwrite: bool = False, cache: dict | None = None) -> Run:
        """Scored on ``dataset`` (``tasks`` filters it) like predictions (see
        :meth:`predictions`), in memory, or written as the run directory ``out``."""
        return _scored_run(self, _dataset(dataset, tasks, cache), label, ks=ks, n_boot=n_boot,
                           seed=seed, estimator=estimator, out=out, overwrite=overwrite)

    def predictions(self, ds: Dataset):
        """The baseline's predictions on ``ds`` and their provenance: copy-the-input's
        attempts made from the dataset, the program search's bundled predictions cut
        to the dataset's tasks."""
        if self.name == "copy-input":
            preds = load_predictions(copy_input_submission(ds))
            return preds, run_provenance(source="reference", reference=self.name,
                                         dataset=ds.info, predictions_sha256=None)
        preds, prov = _cut_predictions(_bundled_program_search(ds), ds)
        prov["reference"] = self.name
        return preds, prov


@dataclass(frozen=True)
class DatasetSource:
    """A dataset without predictions (its tasks only; an unscored run)."""

    dataset: object

    @property
    def label(self) -> str:
        """The run's default label: the dataset's name."""
        return getattr(self.dataset, "name", None) or str(self.dataset)

    def open(self, *, dataset=None, tasks=None, label: str | None = None,
             ks: Sequence[int] | str | None = None, n_boot: int = 1000, seed: int = 0,
             estimator: str = "ranked", out: str | os.PathLike | None = None,
             overwrite: bool = False, cache: dict | None = None) -> Run:
        """An unscored run with the dataset's tasks (``tasks`` filters a dataset named by
        text) and no predictions; the scoring arguments and ``out`` are not used."""
        ds = (self.dataset if isinstance(self.dataset, Dataset)
              else _dataset(self.dataset, tasks, cache, require_truth=False))
        return Run(None, {"scored": False, "n_tasks": len(ds), "n_outputs": ds.n_outputs,
                          "dataset": ds.info, "provenance": None}, None,
                   label or ds.name, dataset=ds)


@runtime_checkable
class Source(Protocol):
    """What every source is: a default ``label`` for its run, and ``open(...)``, which
    makes the run (the keywords of :func:`open_run`). The sources of this module
    (:data:`SOURCE_KINDS`) are the ones :func:`parse_source` gives and
    :func:`open_run` opens."""

    @property
    def label(self) -> str:
        """The run's default label (a file's or a folder's name, a baseline's words)."""
        ...

    def open(self, *, dataset=None, tasks=None, label: str | None = None,
             ks: Sequence[int] | str | None = None, n_boot: int = 1000, seed: int = 0,
             estimator: str = "ranked", out: str | os.PathLike | None = None,
             overwrite: bool = False, cache: dict | None = None) -> Run:
        """The run this source makes (see :func:`open_run` for the keywords)."""
        ...

#: The source kinds :func:`~arcnb.front.parse_source` takes as ``kind=``.
SOURCE_KINDS = {"predictions": PredictionsSource, "run": RunDirSource,
                "checkpoint": CheckpointSource, "baseline": BaselineSource,
                "dataset": DatasetSource}


def is_task_file(path: Path) -> bool:
    """A single ARC task file (``{"train": ..., "test": ...}``) or a challenges file."""
    if path.name.endswith("_challenges.json"):
        return True
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip()
    return head.startswith(b'{"train"') or head.startswith(b'{"test"')


def parse_source(value, *, kind: str | None = None) -> Source:
    """What ``value`` names, as a ``Source``.

    A source is returned as is; a :class:`~arcnb.data.Dataset` is a
    :class:`DatasetSource`. With ``kind`` (a key of :data:`SOURCE_KINDS`) the text is
    that kind. Else: ``copy-input`` / ``program-search`` are baselines; a dataset name
    (``arc-agi-1:evaluation``) is a dataset; a folder with ``metrics.json`` or
    ``predictions.json`` (:func:`arcnb.runs.is_run_dir`) is a run directory, another
    folder a harness run folder (predictions); a file with a checkpoint suffix
    (:data:`~arcnb.models.CHECKPOINT_SUFFIXES`: ``.pt``, ``.ckpt``, ``.safetensors``
    ...) is a checkpoint, a ``.json`` task or challenges file a dataset, any other file
    (a submission, JSON Lines) predictions; ``baseline`` (the bundled checkpoint) is a
    checkpoint. Anything else is an
    :class:`~arcnb.errors.ArcnbError`.
    """
    if isinstance(value, tuple(SOURCE_KINDS.values())):
        return value
    if isinstance(value, Dataset):
        return DatasetSource(value)
    if kind is not None:
        if kind not in SOURCE_KINDS:
            raise ArcnbError(f"unknown source kind {kind!r}: expected one of "
                             f"{', '.join(SOURCE_KINDS)}")
        return SOURCE_KINDS[kind](str(value) if isinstance(value, os.PathLike) else value)
    if not isinstance(value, (str, os.PathLike)):
        raise ArcnbError(f"cannot open {type(value).__name__} as a run: expected a path, a "
                         "name or a source")
    text = str(value)
    if text in BASELINES:
        return BaselineSource(text)
    if text in DATASETS:
        return DatasetSource(text)
    path = Path(text)
    if is_run_dir(path):
        return RunDirSource(text)
    if path.is_dir():
        return PredictionsSource(text)
    if path.is_file():
        if path.suffix.lower() in CHECKPOINT_SUFFIXES:
            return CheckpointSource(text)
        if path.suffix.lower() == ".json" and is_task_file(path):
            return DatasetSource(text)
        return PredictionsSource(text)
    if text == "baseline":
        return CheckpointSource(text)
    raise ArcnbError(f"cannot open {text!r}: not a run directory, a predictions file or "
                     "folder, a checkpoint, a dataset or a baseline "
                     f"({', '.join(BASELINES)})")


def _dataset(dataset, tasks, cache: dict | None, *, require_truth: bool = True) -> Dataset:
    if dataset is None:
        raise ArcnbError("a dataset is needed to score predictions (dataset= / --dataset, "
                         "e.g. 'arc-agi-1:evaluation')")
    if isinstance(tasks, Dataset):  # a task set already made (task_set)
        return tasks
    if isinstance(dataset, Dataset):
        return dataset if tasks is None else load_dataset(dataset, tasks=tasks)
    key = (str(dataset), str(tasks), require_truth)
    if cache is not None and key in cache:
        return cache[key]
    ds = load_dataset(dataset, tasks=tasks, require_truth=require_truth)
    if cache is not None:
        cache[key] = ds
    return ds


def recorded_tasks(source) -> tuple[str, ...] | None:
    """The task ids ``source`` records having been made on, sorted: a run directory's
    recorded filter (:func:`arcnb.runs.recorded_task_ids`), or ``("*",)`` for a run
    directory made on its whole dataset; None for a source that records nothing (a
    predictions file or folder, a baseline, a checkpoint)."""
    path = _run_dir_of(source)
    if path is None:
        return None
    ids = recorded_task_ids(path)
    return ("*",) if ids is None else tuple(ids)


def task_set(sources, dataset, tasks=None, *, cache: dict | None = None) -> Dataset:
    """The tasks every command scores its sources on (the denominator), by one rule:

    1. ``tasks`` (a task-id file or list) when given: those tasks of ``dataset``;
    2. else the tasks the sources record (run directories made with ``--tasks``): all
       must record the same set, else :class:`~arcnb.errors.ArcnbError` asking for
       ``--tasks`` (a run made on the whole dataset records all of its tasks);
    3. else every task of ``dataset``.

    A source without predictions for some of these tasks is scored with them counted
    wrong (the dataset is the denominator); the scoring summary's first warning says
    how many and how to restrict (:func:`arcnb.scoring.score`). ``score``,
    ``candidates``, ``repeats``, ``compare`` and ``report`` all ask here.
    """
    sources = [sources] if isinstance(sources, (str, os.PathLike, Run)) else list(sources)
    _same_dataset(sources, dataset)
    if tasks is not None:
        return _dataset(dataset, tasks, cache)
    recorded = {}
    for s in sources:
        ids = recorded_tasks(s)
        if ids is not None:
            recorded.setdefault(ids, []).append(s.label if isinstance(s, Run) else
                                                Path(str(getattr(s, "path", s))).name)
    ds = _dataset(dataset, None, cache)
    if len(recorded) > 1:
        sizes = "; ".join(f"{', '.join(names[:3])}{' ...' if len(names) > 3 else ''}: "
                          + (f"all {len(ds)} tasks" if ids == ("*",) else f"{len(ids)} tasks")
                          for ids, names in recorded.items())
        raise ArcnbError(f"the runs were made on different tasks ({sizes}): pass --tasks FILE "
                         "(task ids, one a line) to score them all on the same tasks")
    if not recorded or next(iter(recorded)) == ("*",):
        return ds
    ids = next(iter(recorded))
    return ds.select(ids, label=f"the {len(ids)} tasks {next(iter(recorded.values()))[0]} "
                                "records")


def _run_dir_of(source):
    """The run directory ``source`` names (a path that is one, a :class:`RunDirSource`,
    a Run read from one), else None: nothing else is opened here (a FIFO or a missing
    file is left to the reader that says so in its own words)."""
    if isinstance(source, Run):
        return source.run_dir
    if isinstance(source, RunDirSource):
        return source.path
    if isinstance(source, (str, os.PathLike)) and is_run_dir(Path(source)):
        return source
    return None


def _same_dataset(sources, dataset) -> None:
    """A run directory made on another bundled dataset than ``dataset`` is refused,
    naming both (not blamed for its tasks)."""
    name = dataset.name if isinstance(dataset, Dataset) else str(dataset)
    if name not in DATASETS:
        return
    for s in sources:
        path = _run_dir_of(s)
        if path is None:
            continue
        made_on = recorded_dataset(read_metrics(path))[0]
        if made_on in DATASETS and made_on != name:
            raise ArcnbError(f"run {Path(str(path)).name} was made on {made_on}, not {name}: "
                             f"give runs of one dataset (or --dataset {made_on})")


def _bundled_program_search(ds: Dataset) -> Path:
    path = examples_dir() / f"{str(ds.name).replace(':', '-')}_program_search.json"
    if not path.is_file():
        raise ArcnbError(f"no bundled program-search predictions for {ds.name}; evaluate the "
                         "program-search model instead (CheckpointSource('program-search'))")
    return path


def open_run(source, *, dataset=None, tasks=None, label: str | None = None,
             ks: Sequence[int] | str | None = None, n_boot: int = 1000, seed: int = 0,
             estimator: str = "ranked", out: str | os.PathLike | None = None,
             overwrite: bool = False, cache: dict | None = None) -> Run:
    """``source`` (a ``Source``, or anything :func:`~arcnb.front.parse_source` takes) as a
    :class:`~arcnb.runs.Run`: ``parse_source(source).open(...)`` (a Run is returned as
    is, a :class:`~arcnb.scoring.Results` wrapped in one). Published as ``arcnb.open``.
    What each kind does is its ``open``:

    * a run directory is re-opened and re-scored with its recorded estimator on its
      recorded dataset (or ``dataset``); every recorded number must hold
      (:meth:`arcnb.runs.Run.open`); ``ks`` defaults to ``"attempts"``;
    * predictions and a baseline are scored on ``dataset`` (``tasks`` filters it) with
      ``estimator``, for ``ks`` (default: 1 .. the most attempts of any output), in
      memory, or written as the run directory ``out``;
    * a checkpoint is evaluated into ``out`` (required) with its options;
    * a dataset gives an unscored run with its tasks and no predictions.

    ``label`` defaults to the source's name; ``cache`` (a dict) keeps loaded datasets
    between calls; ``overwrite`` lets ``out`` replace a finished run.
    """
    if isinstance(source, Results):
        return Run.from_results(source, label=label or "run")
    if isinstance(source, Run):
        return source
    return parse_source(source).open(dataset=dataset, tasks=tasks, label=label, ks=ks,
                                     n_boot=n_boot, seed=seed, estimator=estimator, out=out,
                                     overwrite=overwrite, cache=cache)


def _scored_run(source, ds: Dataset, label: str | None, *, ks, n_boot: int, seed: int,
                estimator: str, out, overwrite: bool) -> Run:
    """What the sources of predictions share (:class:`PredictionsSource`,
    :class:`BaselineSource`): their ``predictions(ds)`` scored on ``ds`` as a Run
    labelled ``label`` (default: the source's own), written to ``out`` when given
    (refused before anything is read when ``out`` holds a finished run and not
    ``overwrite``)."""
    if out is not None:
        refuse_finished(out, overwrite=overwrite)
    preds, prov = source.predictions(ds)
    res = score(ds, preds, ks=attempt_ks(preds) if ks is None else ks, n_boot=n_boot,
                seed=seed, estimator=estimator)
    run = Run.from_results(res, provenance=prov, label=label or source.label)
    if out is not None:
        run = run.write(out, overwrite=overwrite)
        run.label = label or run.label
    return run


def _dataset_spec(dataset):
    if dataset is None:
        raise ArcnbError("a dataset is needed to evaluate a checkpoint (dataset= / --dataset)")
    return dataset


def _cut_predictions(path: Path, ds: Dataset):
    """A submission file cut to ``ds``'s tasks (a slice of the dataset is not mistaken
    for predictions made for another one), and its provenance (the file's path and
    SHA-256)."""
    raw = read_json(path, what="predictions file")
    if isinstance(raw, dict):
        ids = set(ds.task_ids)
        preds = load_predictions({k: v for k, v in raw.items() if k in ids})
    else:
        preds = load_predictions(str(path))  # the loader says what is wrong with it
    prov = predictions_provenance(path, preds, ds)
    prov.update(predictions=str(path), predictions_sha256=file_sha256_or_none(path))
    return preds, prov


def score_to_run_dir(predictions, dataset, out, *, tasks=None, overwrite: bool = False,
                     ks: Sequence[int] | None = None, estimator: str = "ranked") -> Run:
    """Score predictions (a submission file or a benchmarking-harness run folder) and
    write the run directory ``out``: ``open_run(PredictionsSource(predictions),
    dataset=..., out=...)``. The run's predictions file is a byte copy of a submission
    file; a harness folder is written as one submission file whose attempts keep their
    metadata (cost, tokens), so re-opening the run gives the same numbers. ``ks``
    defaults to 1 .. the most attempts of any output (the K the report re-opens it
    with). Returns the Run."""
    if isinstance(predictions, os.PathLike):
        predictions = str(predictions)
    return open_run(PredictionsSource(predictions), dataset=dataset, tasks=tasks,
                    ks=ks, estimator=estimator, out=out, overwrite=overwrite)
