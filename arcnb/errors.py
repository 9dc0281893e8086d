"""Exceptions with structured fields (which file, which task, which cell).

Every error arcnb raises on bad user input derives from :class:`ArcnbError`; the CLI
turns these into one line on stderr and exit status 2.
"""
from __future__ import annotations

from .text import printable  # noqa: F401 - the one escaper, re-exported for one_line's users


def one_line(text, limit: int | None = None, *, first_line: bool = False) -> str:
    """The one way arcnb makes a message one line: ``text`` (any object; an exception
    gives its message) with control and bidirectional characters escaped
    (:func:`arcnb.text.printable`, the one escaper), surrounding
    blanks stripped, cut to ``limit`` characters with ``...``. ``first_line`` keeps only
    the first non-blank line (a traceback or a multi-line message from a library)."""
    text = str(text).strip()
    if first_line:
        text = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    text = printable(text)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
    return text


class ArcnbError(Exception):
    """Base class for errors caused by user input (files, names, parameters).

    Its message is always one line: characters such as a newline inside a task id or
    a file name are shown escaped."""

    def __str__(self) -> str:
        return printable(super().__str__())


class GridError(ArcnbError, ValueError):
    """A grid is malformed. ``file``, ``task`` and ``where`` locate it."""

    def __init__(self, problem: str, *, file: str | None = None, task: str | None = None,
                 where: str = ""):
        self.problem = problem
        self.file = file
        self.task = task
        self.where = where
        parts = []
        if file:
            parts.append(str(file))
        if task:
            parts.append(f"task {task}")
        if where:
            parts.append(where)
        prefix = ", ".join(parts)
        super().__init__(f"{prefix}: {problem}" if prefix else problem)


class DatasetError(ArcnbError, ValueError):
    """A dataset name, file or task list cannot be used."""

    def __init__(self, message: str, *, file: str | None = None, task: str | None = None):
        self.file = file
        self.task = task
        super().__init__(message)


class PredictionsError(ArcnbError, ValueError):
    """A predictions file cannot be read at all (not JSON, not a dict of tasks)."""

    def __init__(self, message: str, *, file: str | None = None):
        self.file = file
        super().__init__(message)


class OutputExistsError(ArcnbError, FileExistsError):
    """Refusing to overwrite existing results without an explicit flag."""


class ParameterError(ArcnbError, ValueError):
    """An argument given to an arcnb function or command is not usable: out of range, an
    unknown choice, a column or task id that is not there, options that contradict."""


class TensorError(ArcnbError, ValueError):
    """Arrays or tensors given to a metric, a kernel or a plot do not have the expected
    shape, dtype, device or values (e.g. a colour outside 0-9 that is not the pad)."""


class InputFileError(ArcnbError, ValueError):
    """An input file that can't be used: unreadable, not a regular file, invalid, or
    beyond one of the bounds of arcnb's readers (size, rows, columns, decoded bytes,
    numbers). The message is one line naming the file."""


class JSONInputError(InputFileError):
    """An input JSON file that can't be used: unreadable, invalid, too deep, or with a
    key given twice. The message is one line naming the file."""


class DuplicateKeyError(JSONInputError):
    """A key appears twice in one JSON object (``key``); :func:`arcnb.io.read_json`
    turns it into a :class:`JSONInputError` naming the file."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


class HugeNumberError(JSONInputError):
    """A JSON number beyond a float's range (``text``, e.g. ``1e400``);
    :func:`arcnb.io.read_json` turns it into a :class:`JSONInputError` naming the file."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text


class RunDirError(ArcnbError, ValueError):
    """A folder is not a usable run directory: missing or invalid files, or numbers
    that re-scoring its predictions does not reproduce."""


class RepeatsError(ArcnbError, ValueError):
    """Many runs cannot be analysed together: no run found, runs scored on other tasks,
    a grouping that leaves a run out, a malformed groups CSV."""


class RunLockedError(ArcnbError):
    """Another arcnb process is writing the same run directory."""


class CompareError(RunDirError):
    """Runs cannot be compared (different task sets, different truths, bad run dir).

    A subclass of :class:`RunDirError` (itself an ArcnbError and a ValueError) because
    :func:`arcnb.compare.load_run` raises it for a bad run directory."""


class ExploreError(ArcnbError, ValueError):
    """The explorer cannot open a source or do what was asked."""


class TaxonomyError(ArcnbError, ValueError):
    """A taxonomy file or mapping cannot be used. ``file`` and ``line`` locate it."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None):
        self.file = file
        self.line = line
        super().__init__(message)


class UnsafeCheckpointError(ArcnbError):
    """The checkpoint could run code while loading and trust was not given."""

    def __init__(self, message: str, *, file: str | None = None):
        self.file = file
        super().__init__(message)


class NotebookError(ArcnbError):
    """A notebook cell raised. ``cell_index`` (0-based position in the executed
    notebook), ``exec_count``, ``ename`` and ``evalue`` locate it; ``notebook`` and
    ``html`` are the partial notebook and the error page written for it."""

    def __init__(self, message: str, *, notebook: str | None = None, html: str | None = None,
                 cell_index: int | None = None, exec_count: int | None = None,
                 ename: str | None = None, evalue: str | None = None, source: str = ""):
        self.notebook = notebook
        self.html = html
        self.cell_index = cell_index
        self.exec_count = exec_count
        self.ename = ename
        self.evalue = evalue
        self.source = source
        super().__init__(message)


def refuse_overwrite(path, hint: str = "pass overwrite=True / --overwrite", *,
                     holds: str | None = None) -> OutputExistsError:
    """The one "refusing to overwrite" error: ``path`` exists and the caller did not say
    it may be replaced. ``hint`` names the flag that allows it; ``holds`` says what a
    folder ``path`` already holds (``"a finished run (metrics.json)"``) when that tells
    the user more than "exists". Raise what it returns."""
    there = f"already holds {holds}" if holds else "already exists"
    return OutputExistsError(f"{path} {there}; refusing to overwrite it ({hint})")


class RecordingError(ArcnbError, ValueError):
    """An ARC-AGI-3 game recording, a folder of them or a harness run folder can't be
    read: not JSON Lines, not UTF-8, a line or a file past its bound, a frame that is not
    a stack of 2-D layers of colours 0-15. ``file`` and ``line`` locate it."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None):
        self.file = file
        self.line = line
        super().__init__(message)


class BaselinesError(ArcnbError, ValueError):
    """Human baselines of ARC-AGI-3 games can't be read: a ``metadata.json`` folder or a
    ``game_id,level,baseline_actions`` CSV that is missing, malformed or contradicts
    itself."""
