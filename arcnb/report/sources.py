"""What a report is built from: the embedded default, the ``checkpoint`` /
``predictions`` / ``run_dir`` parameters of the notebooks as typed sources of
:mod:`arcnb.front` (:func:`resolve_source`), and writing a run directory from one
(:func:`make_run`). Runs are opened by the front door, ``arcnb.open``."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Mapping

from ..errors import ArcnbError
from ..models import BUNDLED_CHECKPOINT
from ..front import CheckpointSource, PredictionsSource, RunDirSource, Source
from ..resources import example, examples_dir, reports_root
from ..runs import FIGURES, Run, is_finished
from .references import COPY_INPUT

__all__ = ["DEFAULT_DATASET", "default_source", "resolve_source", "source_dataset",
           "make_run", "default_out", "figures_dir", "default_compare_runs",
           "default_references", "program_search_predictions", "resolve_references",
           "require_scored"]

#: The dataset of the embedded default report and of a notebook's predictions.
DEFAULT_DATASET = "arc-agi-1:evaluation"
_EXAMPLES = examples_dir()  # the bundled example predictions' folder (arcnb.resources)
_EXAMPLE_PREDICTIONS = example()  # the whole-grid heuristic's predictions


def program_search_predictions(dataset: str = DEFAULT_DATASET) -> Path | None:
    """The bundled program-search predictions for ``dataset`` (a bundled dataset name
    such as ``arc-agi-1:evaluation``), the bundled example file
    ``<name>_program_search.json`` (:mod:`arcnb.resources`), or None when there is none."""
    name = str(dataset).replace(":", "-")
    path = _EXAMPLES / f"{name}_program_search.json"
    return path if path.is_file() else None


def default_references(dataset: str = DEFAULT_DATASET, *, exclude=None) -> list[str]:
    """The reference runs of the embedded default report on ``dataset``: the bundled
    program-search predictions (else, on ARC-AGI-1 evaluation, the bundled whole-grid
    heuristic predictions, unless they are the report's own source ``exclude``: a typed
    source or a path), then copy-the-input."""
    exclude = _source_path(exclude) if exclude is not None else None
    refs = []
    ps = program_search_predictions(dataset)
    if ps is not None:
        refs.append(str(ps))
    elif (str(dataset) == DEFAULT_DATASET and _EXAMPLE_PREDICTIONS.is_file()
          and (exclude is None or Path(str(exclude)).resolve() != _EXAMPLE_PREDICTIONS.resolve())):
        refs.append(str(_EXAMPLE_PREDICTIONS))
    return refs + [COPY_INPUT]


def resolve_references(references, dataset: str, *, exclude=None) -> list[str]:
    """A report's ``references`` parameter with ``"default"`` replaced by
    ``default_references`` for ``dataset`` (duplicates dropped, order kept)."""
    out: list[str] = []
    for r in references or ():
        for x in (default_references(dataset, exclude=exclude) if r == "default" else [str(r)]):
            if x not in out:
                out.append(x)
    return out


def _bundled_checkpoint() -> Path | None:
    return BUNDLED_CHECKPOINT if BUNDLED_CHECKPOINT.is_file() else None


def _source_path(source) -> str:
    """The path (or name) a typed source was given by; text as is."""
    if isinstance(source, CheckpointSource):
        return str(source.checkpoint)
    return str(getattr(source, "path", source))


def default_source(evaluate_options: Mapping | None = None) -> Source:
    """The embedded default: the bundled baseline checkpoint when the package ships one
    (:func:`arcnb.resources.checkpoint`; a :class:`~arcnb.front.CheckpointSource` with
    ``evaluate_options``), else the bundled example predictions (a
    :class:`~arcnb.front.PredictionsSource`). Its report is on ``arc-agi-1:evaluation``,
    with the reference runs ``default_references(exclude=source)``."""
    ckpt = _bundled_checkpoint()
    if ckpt is not None:
        return CheckpointSource(str(ckpt), dict(evaluate_options or {}))
    if not _EXAMPLE_PREDICTIONS.exists():
        raise ArcnbError(f"the bundled example predictions {_EXAMPLE_PREDICTIONS} are "
                         "missing and no bundled checkpoint was found (reinstall arcnb)")
    return PredictionsSource(str(_EXAMPLE_PREDICTIONS))


def resolve_source(checkpoint: str = "", predictions: str = "", *, run_dir: str = "",
                   evaluate_options: Mapping | None = None) -> Source:
    """What a notebook's ``run_dir`` / ``predictions`` / ``checkpoint`` parameters name,
    as a typed source of :mod:`arcnb.front`.

    ``run_dir`` wins when set (a :class:`~arcnb.front.RunDirSource`); then
    ``predictions`` (a file or a benchmarking-harness run folder, or ``"default"`` for
    the bundled example predictions: a :class:`~arcnb.front.PredictionsSource`); else
    ``checkpoint`` (a file, ``"baseline"``, a registered model name such as
    ``"copy-input"``: a :class:`~arcnb.front.CheckpointSource` with
    ``evaluate_options``; empty or ``"default"``: :func:`default_source`).
    """
    if run_dir:
        return RunDirSource(str(run_dir))
    if predictions:
        return PredictionsSource(str(_EXAMPLE_PREDICTIONS) if predictions == "default"
                                 else str(predictions))
    if not checkpoint or checkpoint == "default":
        return default_source(evaluate_options)
    return CheckpointSource(str(checkpoint), dict(evaluate_options or {}))


def source_dataset(source, dataset: str | None = None):
    """The dataset a notebook opens ``source`` on: None for a run directory (it is
    re-opened on the dataset it records, whatever the notebook's ``dataset``), else
    ``dataset`` (default ``arc-agi-1:evaluation``)."""
    if isinstance(source, RunDirSource):
        return None
    return dataset or DEFAULT_DATASET


def make_run(source: Source, dataset: str, out: str | os.PathLike, *, tasks=None,
             overwrite: bool = False, estimator: str = "ranked") -> Run:
    """Write a run directory ``out`` from ``source`` (a typed source; see
    ``resolve_source``) with its ``open`` (the front door): a checkpoint is evaluated
    with its ``options``, a predictions
    file or a benchmarking-harness run folder is scored. ``estimator`` (``"ranked"`` or
    ``"unbiased"``) is how attempts become pass@K. Returns the Run (unscored for a
    checkpoint on a dataset without truth)."""
    return source.open(dataset=dataset, tasks=tasks or None, out=out, overwrite=overwrite,
                       estimator=estimator)


def default_out(out: str, source: Source, dataset: str, *, kind: str = "runs") -> Path:
    """``out`` when given, else ``reports/<kind>/<source label>-<dataset>-<UTC time>``
    (a fresh folder, so a notebook run never replaces an earlier one) under
    :func:`arcnb.resources.reports_root` (the clone's ``reports/``, or ``reports/`` in
    the current directory for an installed arcnb). ``source`` is a typed source (its
    ``label``: a file's name without suffix, a folder's name)."""
    if out:
        return Path(out)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    name = f"{source.label}-{str(dataset).replace(':', '-')}-{stamp}"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    return reports_root() / kind / safe


def require_scored(run: Run, what: str = "this notebook", *, hint: str = "",
                   error: type[ArcnbError] = ArcnbError) -> Run:
    """``run`` when it is scored; an unscored run (a hidden test set, no truth) raises
    ``error`` (an :class:`~arcnb.errors.ArcnbError`) in one line saying that ``what``
    needs the truth, then ``hint`` (default: the report shows the predictions)."""
    if not run.scored:
        raise error(f"run {run.label!r} is not scored (its dataset has no test outputs): "
                    f"{what} needs the truth. "
                    + (hint or "Its report shows the predictions (arcnb report --run DIR)"))
    return run


def figures_dir(figures_dir: str | os.PathLike | None, run: Run | None = None) -> Path | None:
    """Where a report saves its figures: ``figures_dir`` when given, else
    ``<run_dir>/figures`` for a run directory, else None (nothing saved)."""
    if figures_dir:
        return Path(figures_dir)
    if run is not None and run.run_dir is not None:
        return run.file(FIGURES)
    return None


def default_compare_runs(folder: str | os.PathLike | None = None, *,
                         dataset: str = DEFAULT_DATASET, tasks=None) -> list[Path]:
    """Two run directories to compare by default: the bundled example predictions and
    the copy-the-input baseline (:func:`arcnb.evaluate.evaluate` with ``"copy-input"``)
    on ``dataset``. They are written under ``folder`` (default
    ``reports/compare-default/``) once and reused when already finished."""
    root = Path(folder) if folder else reports_root() / "compare-default"
    runs = [(root / "example-predictions", PredictionsSource(str(_EXAMPLE_PREDICTIONS))),
            (root / "copy-input", CheckpointSource("copy-input", {"progress": False}))]
    for rd, src in runs:
        if not is_finished(rd):
            make_run(src, dataset, rd, tasks=tasks)
    return [rd for rd, _ in runs]
