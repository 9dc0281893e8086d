"""The layout of a run directory: its file names, what marks a finished run, the
guards on output paths, the one result-folder writer (:func:`write_result_folder`: a
JSON summary beside CSV tables, what compare, candidates, repeats, overlap, a sweep and
an ARC-AGI-3 scorecard write), and the paths of the command line handed to the runs it
makes (see :mod:`arcnb.runs` for the files). The only module that spells the
run-directory file names."""
from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Callable, Iterable, Mapping

import pandas as pd

from ..errors import ArcnbError, RunDirError, refuse_overwrite
from ..io import JSONInputError, atomic_write_bytes, csv_text, json_bytes, parse_json, take_back_on_failure
from ..resources import checkout_root, notebooks_dir
from ..text import printable

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

#: The files of a finished run directory, in the order they are written
#: (metrics.json last: it marks completion).
RUN_FILES = (PREDICTIONS, RESULTS_CSV, RESULTS_PARQUET, TASKS_CSV, METRICS)
#: Every voted candidate of an augmented evaluate run, with its votes (a candidates
#: Parquet file, see :mod:`arcnb.candidates`); optional.
CANDIDATES = "candidates.parquet"
#: The probes' names (``arcnb evaluate --probe``, :mod:`arcnb.probes`), as ``metrics.json``,
#: ``Run.probes`` and their files name them: the one list (:data:`arcnb.probes.PROBE_NAMES`
#: is this tuple; a run directory names its probe files by it, so it is kept here).
PROBE_NAMES = ("dihedral", "colors", "dihedral+colors", "task-id-blank", "task-id-random")
#: Each probe's predictions (``arcnb evaluate --probe``, :mod:`arcnb.probes`), by probe
#: name: ``{"probe", "views", "predictions": {view: submission}}``; optional.
PROBE_PREDICTIONS = {p: f"probe-{p}.json" for p in PROBE_NAMES}
#: The probes' per-output table (probe x view x test output); optional.
PROBES_CSV = "probes.csv"
#: The proxy's predictions (``--proxy``: each held-out demonstration pair, by task); optional.
PROXY_PREDICTIONS = "proxy.json"
#: The proxy's per-task table; optional.
PROXY_CSV = "proxy.csv"
#: Files a run directory holds only for some runs: an earlier run's are removed when a
#: run that does not write them replaces it.
OPTIONAL_RUN_FILES = (SUBMISSION, CANDIDATES, PROBES_CSV, *PROBE_PREDICTIONS.values(),
                      PROXY_PREDICTIONS, PROXY_CSV)
#: The files a run directory must hold to be opened (checked in this order).
REQUIRED_RUN_FILES = (METRICS, PREDICTIONS)
#: Summary keys that re-scoring ``predictions.json`` must reproduce exactly.
HEADLINE_KEYS = ("n_tasks", "n_outputs", "pass@1", "pass@2", "pass@2_per_output",
                 "pass@2_all_or_nothing")


def is_run_dir(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a run directory, finished or not: a folder holding
    ``metrics.json`` (written last: a finished run) or ``predictions.json`` (a run whose
    final writes did not all happen; opening it says what is missing). The one rule
    of "is this a run directory?": ``arcnb.open`` / ``parse_source``, compare, the
    explorer and the command line all ask it. Any other folder (a harness run's folder
    of per-task files, a folder of submissions, a dataset), a file or a missing path is
    not one; :func:`is_finished` says whether a run directory is finished."""
    p = Path(path)
    return p.is_dir() and any((p / name).is_file() for name in REQUIRED_RUN_FILES)


def finished_runs(folder: str | os.PathLike) -> list[Path]:
    """The finished run directories directly inside ``folder`` (its sub-folders holding
    ``metrics.json``; a symbolic link to a folder is left out: never read through a
    link), in the order the folder lists them."""
    return [p.parent for p in Path(folder).glob(f"*/{METRICS}")
            if not p.parent.is_symlink()]


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
        raise refuse_overwrite(out, "pass --overwrite / overwrite=True",
                               holds=f"a finished run ({METRICS})")
    partial = [f for f in RUN_FILES + (SUBMISSION,) if (out / f).exists()]
    if partial and not resume:
        raise refuse_overwrite(out, "pass --resume to finish an evaluate run from its "
                               "journal, or --overwrite",
                               holds=f"files of an unfinished run ({', '.join(partial)}) but "
                               f"no {METRICS}")


def _shipped() -> tuple[Path, ...]:
    """arcnb's own folders, which no output may go into (with or without --overwrite):
    the package itself (its shipped notebooks included) and, in a clone, the top-level
    ``notebooks/`` copy."""
    pkg = notebooks_dir().parent.parent
    root = checkout_root()
    # the notebooks first: the clone's notebooks/ links to the shipped ones, and a
    # refusal names the folder the user sees
    folders = [notebooks_dir(), pkg] + ([root / "notebooks"] if root is not None else [])
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


class OutputFolder:
    """The one guarded output folder every command writes through (``--out``).

    ``OutputFolder(out)`` checks the folder itself (:func:`check_out_path`: not a file,
    not inside arcnb's own folders). Inside it, every file and sub-folder arcnb writes
    is named relative to it and:

    * is never reached through a symbolic link: a link at the name or at any folder
      between ``out`` and it (a planted ``runs -> ../elsewhere``) is refused in one
      line, with or without ``overwrite``;
    * is claimed before anything is written (:meth:`claim`): an existing file (or a
      non-empty sub-folder) is refused unless ``overwrite``, naming the first one;
    * is written with the others as one (:meth:`write`): each file atomically, and a
      failure (a full disk, a kill) takes back the files the call created, naming the
      file that failed; ``remove`` first deletes the files of an earlier result that
      this one does not write (so no other run's file is left beside the new ones);
    * leaves no temporary file of an earlier, killed write (:meth:`clean_temporary`).
    """

    def __init__(self, out: str | os.PathLike, *, what: str = "--out"):
        self.path = check_out_path(out, what=what)
        self.what = what

    def __repr__(self) -> str:
        return f"OutputFolder({str(self.path)!r})"

    def target(self, name: str | os.PathLike) -> Path:
        """``out/name``, refused when ``name`` leaves the folder (absolute, ``..``) or
        when it, or a folder between ``out`` and it, is a symbolic link."""
        rel = Path(name)
        if rel.is_absolute() or any(part in ("", ".", "..") for part in rel.parts) \
                or not rel.parts:
            raise ArcnbError(f"{printable(str(name))} is not a name inside {self.what} "
                             f"{self.path}")
        at = self.path
        for part in rel.parts:
            at = at / part
            if at.is_symlink():
                raise ArcnbError(f"{at} is a symbolic link; arcnb never writes through a "
                                 f"link inside {self.what} (remove it)")
        return at

    def folder(self, name: str | os.PathLike) -> "OutputFolder":
        """The sub-folder ``out/name`` as an output folder of its own (not created yet);
        refused like :meth:`target`, and when it exists as a file."""
        at = self.target(name)
        sub = OutputFolder.__new__(OutputFolder)
        sub.path, sub.what = check_out_path(at, what=self.what), self.what
        return sub

    def claim(self, names: Iterable[str], *, overwrite: bool, folders: Iterable[str] = (),
              hint: str = "pass --overwrite / overwrite=True") -> list[Path]:
        """The targets of ``names``, once none is a link nor a folder (a file is written
        there: a folder at ``OUT/report.html`` is refused, with or without
        ``overwrite``) and, without ``overwrite``, none exists (nor is any of ``folders``
        a non-empty folder)."""
        targets = [self.target(n) for n in names]
        subs = [self.target(f) for f in folders]
        folder = next((p for p in targets if p.is_dir()), None)
        if folder is not None:
            raise ArcnbError(f"{folder} is a folder where arcnb writes a file; remove it or "
                             f"choose another {self.what}")
        if not overwrite:
            taken = [p for p in targets if p.exists()]
            taken += [f for f in subs if f.is_dir() and any(f.iterdir())]
            if taken:
                raise refuse_overwrite(taken[0], hint)
        return targets

    def clean_temporary(self, names: Iterable[str]) -> list[Path]:
        """Remove what a killed atomic write of one of ``names`` left (``.NAME.*.tmp``
        beside it). Returns the files removed."""
        removed = []
        for name in names:
            target = self.target(name)
            if not target.parent.is_dir():
                continue
            for tmp in target.parent.glob(f".{target.name}.*.tmp"):
                if tmp.is_file() and not tmp.is_symlink():
                    tmp.unlink(missing_ok=True)
                    removed.append(tmp)
        return removed

    def write(self, files: Mapping[str, "bytes | Callable[[], bytes]"], *, overwrite: bool,
              remove: Iterable[str] = (), hint: str = "pass --overwrite / overwrite=True"
              ) -> list[Path]:
        """Write ``files`` (``{name: bytes or a function giving them}``, in order) as one
        result: claimed first (:meth:`claim`), then ``remove`` (files of an earlier result
        that this one replaces or leaves out) deleted, then each file written atomically.
        A failure takes back the files this call created and names the file that failed.
        Returns the paths written."""
        targets = self.claim(files, overwrite=overwrite, hint=hint)
        self.clean_temporary(files)
        for name in remove:
            self.target(name).unlink(missing_ok=True)
        self.path.mkdir(parents=True, exist_ok=True)
        written = []
        with take_back_on_failure() as track:
            for (name, data), target in zip(files.items(), targets):
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    atomic_write_bytes(track(target), data() if callable(data) else data,
                                       overwrite=True)
                except OSError as exc:  # name the file the user asked for, not a temporary one
                    raise OSError(exc.errno or errno.EIO, exc.strerror or str(exc),
                                  str(target)) from exc
                written.append(target)
        return written


# ====================================================================== result folders
#: The summary of a result folder (:func:`write_result_folder`): compare's, a candidate
#: pool's, many runs' and an ARC-AGI-3 scorecard's.
SUMMARY_JSON = "summary.json"


def csv_bytes(table: pd.DataFrame, *, index: bool = False) -> bytes:
    """``table`` as a result folder's CSV file: :func:`arcnb.io.csv_text` (cells a
    spreadsheet would run as a formula get a leading ``'``), UTF-8."""
    return csv_text(table, index=index).encode("utf-8")


def write_result_folder(out: "str | os.PathLike | OutputFolder",
                        summary: "Mapping | Callable[[], Mapping]",
                        tables: "Mapping[str, pd.DataFrame | Callable[[], pd.DataFrame] | None]",
                        *, summary_name: str = SUMMARY_JSON, indexed: Iterable[str] = (),
                        extra_files: "Mapping[str, bytes | Callable[[], bytes]] | None" = None,
                        overwrite: bool = False,
                        hint: str = "pass --overwrite / overwrite=True") -> list[Path]:
    """Write a result folder: the CSV ``tables`` (``{file name: DataFrame}``, in order;
    a table that is None is left out; the names of ``indexed`` keep their index), then
    ``extra_files`` (``{file name: bytes}``: a page, LaTeX tables, pictures, Parquet),
    then the summary as ``summary_name`` (:func:`arcnb.io.json_bytes`), last: it marks a
    finished result. The one writer of "a summary beside its tables": every table
    through :func:`arcnb.runs.csv_bytes` (formula neutralisation), the summary through
    :func:`arcnb.io.json_bytes`, all through the guarded output folder ``out``
    (:class:`OutputFolder`, or a path made one): nothing through a link, every target
    claimed before anything is computed or written (an existing file is refused
    unless ``overwrite``, ``hint`` naming how to allow it), each file atomically, and a
    failure takes back the files this call created. ``summary`` and the tables may be
    functions that give them, called once the targets are claimed. Returns the paths
    written, in that order."""
    folder = out if isinstance(out, OutputFolder) else OutputFolder(out)
    indexed = set(indexed)
    files: dict = {}
    for name, table in tables.items():
        if table is not None:
            files[name] = (lambda t=table, i=name in indexed:
                           csv_bytes(t() if callable(t) else t, index=i))
    files.update(extra_files or {})
    files[summary_name] = lambda: json_bytes(summary() if callable(summary) else summary)
    return folder.write(files, overwrite=overwrite, hint=hint)


#: The files of a run directory that :func:`copy_run_files` copies (when present): the
#: run files, the optional ones and the evaluate notebook and its page. Nothing else
#: is ever copied: a folder of runs may be shared, and a file left there (a
#: ``pandas.py``, a ``matplotlibrc``) has no business in another folder.
COPIED_RUN_FILES = (*RUN_FILES, *OPTIONAL_RUN_FILES, EVALUATE_NOTEBOOK, EVALUATE_HTML)


def copy_run_files(src: str | os.PathLike, dest: str | os.PathLike, *,
                   overwrite: bool) -> list[Path]:
    """Copy the files of run directory ``src`` named by :data:`COPIED_RUN_FILES` into
    the output folder ``dest`` (through :class:`OutputFolder`: never through a link,
    each file atomically, ``metrics.json`` last); any other file, a hidden file, a
    folder and an earlier report are left out. An existing file in ``dest`` is only
    replaced with ``overwrite`` (all are checked before the first is written); then
    the run files of an earlier run that ``src`` lacks are removed from ``dest``.
    Returns the paths written."""
    src = Path(src)
    names = [n for n in COPIED_RUN_FILES if n != METRICS and (src / n).is_file()]
    names.append(METRICS)
    stale = [METRICS] + [n for n in COPIED_RUN_FILES if n not in names]
    return OutputFolder(dest).write({n: (lambda p=src / n: p.read_bytes()) for n in names},
                                    overwrite=overwrite, remove=stale if overwrite else (),
                                    hint="pass --overwrite")


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
        paths = parse_json(raw, what=USER_PATHS_ENV)
    except JSONInputError:
        return None
    return paths if isinstance(paths, dict) else None
