"""The layout of a sweep folder: the file names of its summary, the ``runs/`` folder of
its run directories and entry files, and the guards that keep a sweep from writing
over anything but a sweep."""
from __future__ import annotations

from pathlib import Path

from ..errors import ArcnbError, OutputExistsError, printable
from ..io import read_json
from ..runs import OutputFolder

__all__ = ["SWEEP_CSV", "SWEEP_JSON", "CATEGORIES_CSV", "CHANGES_CSV", "SOLVED_CSV",
           "SWEEP_NOTEBOOK", "SWEEP_HTML", "RUNS_DIR", "ENTRY_SUFFIX", "ENTRY_KIND",
           "is_sweep_folder", "sweep_folder", "claim_plan"]

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
#: The suffix of a checkpoint's entry file in ``runs/`` (``runs/NAME.sweep.json``).
ENTRY_SUFFIX = ".sweep.json"
#: The ``kind`` of an entry file's JSON object.
ENTRY_KIND = "arcnb-sweep-entry"


def is_sweep_folder(out: Path) -> bool:
    """Whether ``out`` holds a sweep: entry files in ``runs/`` or arcnb's ``sweep.json``
    (a folder that merely has a ``runs/`` sub-folder, as TensorBoard's log folder has,
    is not one)."""
    runs = out / RUNS_DIR
    if runs.is_dir() and not runs.is_symlink() and any(runs.glob(f"*{ENTRY_SUFFIX}")):
        return True
    summary = out / SWEEP_JSON
    if summary.is_file() and not summary.is_symlink():
        try:
            return read_json(summary, what="sweep summary").get("kind") == "arcnb-sweep"
        except (ArcnbError, AttributeError):
            return False
    return False


def sweep_folder(out) -> OutputFolder:
    """``out`` as the sweep's guarded output folder: missing, empty, or a sweep folder
    (:func:`is_sweep_folder`); any other folder is refused, so that a sweep never
    replaces files it did not write (``categories.csv`` among a user's own files)."""
    folder = OutputFolder(out)
    path = folder.path
    folder.folder(RUNS_DIR)  # a link planted as runs/ is refused before anything is written
    if path.is_dir() and any(path.iterdir()) and not is_sweep_folder(path):
        raise OutputExistsError(f"{path} is not empty and holds no sweep of arcnb ({RUNS_DIR}/"
                                f"*{ENTRY_SUFFIX} or {SWEEP_JSON}); choose a new folder for "
                                "the sweep")
    return folder


def claim_plan(folder: OutputFolder, entries: list, *,
               overwrite: bool) -> OutputFolder:
    """The ``runs/`` folder of a sweep of ``entries``. A folder that already holds the
    sweep of other checkpoints (another training run) is refused unless ``overwrite``,
    which removes their entries: one folder never mixes two sweeps."""
    runs = folder.folder(RUNS_DIR)
    if not runs.path.is_dir():
        return runs
    mine = {e.name for e in entries}
    others = sorted(p for p in runs.path.glob(f"*{ENTRY_SUFFIX}")
                    if p.name[:-len(ENTRY_SUFFIX)] not in mine)
    if others and not overwrite:
        raise OutputExistsError(
            f"{folder.path} holds the sweep of other checkpoints ({len(others)} not among "
            f"these, e.g. {printable(others[0].name[:-len(ENTRY_SUFFIX)])}); choose a new "
            "folder for this sweep, or pass --overwrite to replace that one")
    for p in others:
        runs.target(p.name).unlink(missing_ok=True)
    return runs
