"""What a report is built from: the embedded default, the ``checkpoint`` /
``predictions`` parameters of the notebooks, writing a run directory from them, and
opening a run for the report's cells (:func:`open_run`)."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Mapping

from ..errors import ArcnbError
from ..models import BUNDLED_BASELINE
from ..front import CheckpointSource, PredictionsSource, RunDirSource, parse_source
from ..front import open_run as open_source
from ..resources import example, examples_dir, reports_root
from ..runs import FIGURES, Run, is_finished
from .references import COPY_INPUT

__all__ = ["DEFAULT_DATASET", "default_source", "resolve_source", "make_run", "as_source",
           "default_out",
           "open_run", "figures_dir", "default_compare_runs", "default_references",
           "program_search_predictions", "resolve_references", "require_scored"]

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
    heuristic predictions, unless they are the report's own source ``exclude``), then
    copy-the-input."""
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
    return BUNDLED_BASELINE if BUNDLED_BASELINE.is_file() else None


def default_source() -> dict:
    """The embedded default: the bundled baseline checkpoint on ARC-AGI-1 evaluation when
    the package ships one (:func:`arcnb.resources.checkpoint`), else the bundled example
    predictions, with the reference runs its report shows beside it
    (``default_references``).

    Returns ``{"kind": "checkpoint" | "predictions", "path": str, "dataset": str,
    "references": [str, ...]}``.
    """
    ckpt = _bundled_checkpoint()
    if ckpt is not None:
        return {"kind": "checkpoint", "path": str(ckpt), "dataset": DEFAULT_DATASET,
                "references": default_references(DEFAULT_DATASET)}
    if not _EXAMPLE_PREDICTIONS.exists():
        raise ArcnbError(f"the bundled example predictions {_EXAMPLE_PREDICTIONS} are "
                         "missing and no bundled checkpoint was found (reinstall arcnb)")
    return {"kind": "predictions", "path": str(_EXAMPLE_PREDICTIONS),
            "dataset": DEFAULT_DATASET,
            "references": default_references(DEFAULT_DATASET, exclude=_EXAMPLE_PREDICTIONS)}


def _resolve_default(value: str, *, kind: str) -> str:
    """``"default"`` -> the bundled example predictions (``kind="predictions"``)."""
    if value != "default":
        return value
    if kind == "predictions":
        return str(_EXAMPLE_PREDICTIONS)
    raise ArcnbError(f"no default for {kind}")


def resolve_source(checkpoint: str = "", predictions: str = "") -> dict:
    """What a notebook's ``checkpoint`` / ``predictions`` parameters name.

    ``predictions`` (a file, or ``"default"`` for the bundled example predictions) wins
    when set; else ``checkpoint`` (a file, ``"baseline"``, a registered model name such
    as ``"copy-input"``, or ``"default"`` = :func:`default_source`). Returns
    ``{"kind": "checkpoint" | "predictions", "path": str}``.
    """
    if predictions:
        return {"kind": "predictions", "path": _resolve_default(predictions, kind="predictions")}
    if not checkpoint or checkpoint == "default":
        src = default_source()
        return {"kind": src["kind"], "path": src["path"]}
    return {"kind": "checkpoint", "path": str(checkpoint)}


def make_run(source: Mapping, dataset: str, out: str | os.PathLike, *, tasks=None,
             overwrite: bool = False, evaluate_options: Mapping | None = None,
             estimator: str = "ranked") -> Run:
    """Write a run directory ``out`` from ``source`` (see ``resolve_source``)
    through the front door (:func:`arcnb.front.open_run`): a checkpoint is evaluated
    (``evaluate_options`` are :func:`arcnb.evaluate.evaluate`'s keyword arguments:
    device, batch_size, attempts, augment, seed, arch, config, replace_config,
    trust_checkpoint, ...), a predictions file or a benchmarking-harness run folder is
    scored. ``estimator`` (``"ranked"`` or ``"unbiased"``) is how attempts become pass@K.
    Returns the Run (unscored for a checkpoint on a dataset without truth)."""
    return open_source(as_source(source, evaluate_options), dataset=dataset,
                       tasks=tasks or None, out=out, overwrite=overwrite, estimator=estimator)


def as_source(source, evaluate_options: Mapping | None = None):
    """A report's ``{"kind": ..., "path": ...}`` (or a typed source) as a typed source
    of :mod:`arcnb.front`; a checkpoint gets ``evaluate_options``."""
    if not isinstance(source, Mapping):
        return parse_source(source)
    kind, path = source["kind"], source["path"]
    if kind == "checkpoint":
        return CheckpointSource(str(path), dict(evaluate_options or {}))
    if kind in ("predictions", "run"):
        return parse_source(str(path), kind=kind)
    raise ArcnbError(f"unknown source kind {kind!r}")


def default_out(out: str, source: Mapping, dataset: str, *, kind: str = "runs") -> Path:
    """``out`` when given, else ``reports/<kind>/<source name>-<dataset>-<UTC time>``
    (a fresh folder, so a notebook run never replaces an earlier one) under
    :func:`arcnb.resources.reports_root` (the clone's ``reports/``, or ``reports/`` in
    the current directory for an installed arcnb)."""
    if out:
        return Path(out)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    name = f"{Path(str(source['path'])).stem}-{str(dataset).replace(':', '-')}-{stamp}"
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


def open_run(run_dir: str | os.PathLike | None = None, *, predictions: str | None = None,
             dataset: str | None = None, tasks=None, label: str | None = None,
             n_boot: int = 1000, seed: int = 0, estimator: str = "ranked") -> Run:
    """Open a run for a report.

    With ``run_dir``: :meth:`arcnb.runs.Run.open` re-scores its predictions on the
    dataset and task filter its metrics record, with its recorded estimator (the
    re-scored headline numbers must equal the recorded ones; ``predictions``,
    ``dataset``, ``tasks`` and ``estimator`` are then ignored). An unscored run (no
    truth: ``run.scored`` is False) is opened without scoring: ``run.results`` is None,
    ``run.dataset`` and ``run.predictions`` hold what it has. Without ``run_dir``: score
    ``predictions`` (a submission file or a benchmarking-harness run folder;
    ``"default"`` = the bundled example predictions) on ``dataset`` (default ARC-AGI-1
    evaluation) in memory with ``estimator``. Both go through the front door
    (:func:`arcnb.front.open_run`). Either way pass@K is scored for every K up to the
    largest number of attempts in the predictions.
    """
    if run_dir:
        # the run records its dataset and task filter; `dataset`/`tasks` are ignored
        return open_source(RunDirSource(str(run_dir)), label=label, ks="attempts",
                           n_boot=n_boot, seed=seed)
    path = _resolve_default(predictions or "default", kind="predictions")
    return open_source(PredictionsSource(str(path)), dataset=dataset or DEFAULT_DATASET,
                       tasks=tasks or None, label=label, n_boot=n_boot, seed=seed,
                       estimator=estimator)


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
    runs = [(root / "example-predictions", {"kind": "predictions",
                                            "path": str(_EXAMPLE_PREDICTIONS)}),
            (root / "copy-input", {"kind": "checkpoint", "path": "copy-input"})]
    for rd, src in runs:
        if not is_finished(rd):
            make_run(src, dataset, rd, tasks=tasks,
                     evaluate_options={"progress": False} if src["kind"] == "checkpoint"
                     else None)
    return [rd for rd, _ in runs]
