"""Exceptions with structured fields (which file, which task, which cell).

Every error arcnb raises on bad user input derives from :class:`ArcnbError`; the CLI
turns these into one line on stderr and exit status 2.
"""
from __future__ import annotations


def printable(text) -> str:
    """``text`` with control and other unprintable characters escaped (a newline shows
    as ``\\n``), so that a task id or a file name taken from the user can't break a
    one-line message or a label."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


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
