"""evaluate's resume journal and the lock on a run directory being written (beside
:mod:`arcnb.evaluate`, their one user). The journal files are named by
:mod:`arcnb.runs`."""
from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path
from typing import Mapping

import numpy as np

from .errors import ArcnbError, RunLockedError
from .grids import MAX_SIZE
from .io import JSONInputError, parse_json_line, to_jsonable
from .runs.layout import JOURNAL, JOURNAL_GLOB

__all__ = ["Journal", "journal_name", "journal_paths", "read_journals", "params_sha256",
           "journal_record_problem", "RunLock", "RunLockedError"]

_JOURNAL_KIND = "arcnb-evaluate-journal"


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
    text = json.dumps(to_jsonable(params), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _grid_ok(g) -> bool:
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

    Each line is parsed by :func:`arcnb.io.parse_json_line` (the rules of every JSON
    input). A line cut short (by a kill or a full disk) is skipped, and so is one those
    rules refuse (too deep, a key given twice: no line arcnb writes): its task is
    evaluated again. Refused with an
    :class:`~arcnb.errors.ArcnbError` naming the file and line, never used: a journal
    whose header names other ``params``; a record whose ``params_sha256`` is not the
    hash of ``params`` (a record from another run); a line that is valid JSON but
    not a header or a task record (an object with a ``task_id`` string; evaluate
    checks the rest with :func:`journal_record_problem`)."""
    want = params_sha256(params)
    done: dict[str, dict] = {}
    for path in journal_paths(out):
        with _open_own(path, os.O_RDONLY, "rb") as fh:
            lines = fh.read().split(b"\n")
        for n, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:  # io's parse of a JSON line: bounded, no key twice
                rec = parse_json_line(raw, what="journal", path=path, line=n,
                                      unicode_only=False)
            except JSONInputError:
                continue  # a line cut short by a kill (or not a record arcnb wrote)
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


def _open_own(path: Path, flags: int, mode: str):
    """Open a file arcnb writes in a run directory, never through a symbolic link
    (``O_NOFOLLOW``): a link planted in ``--out`` can't send a write elsewhere."""
    if path.is_symlink():
        raise ArcnbError(f"{path} is a symbolic link; arcnb never writes through a link "
                         "in a run directory (remove it, or use --overwrite to start over)")
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ArcnbError(f"{path} is a symbolic link; arcnb never writes through a "
                             "link in a run directory") from exc
        raise
    return os.fdopen(fd, mode)


def _repair_tail(path: Path) -> None:
    """Cut a journal back to its last complete line (a kill can leave half a line)."""
    if not path.exists() and not path.is_symlink():
        return
    with _open_own(path, os.O_RDWR, "r+b") as fh:
        data = fh.read()
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)


class Journal:
    """An append-only journal file: a header naming ``params``, then one JSON line per
    :meth:`append` (stamped with ``params_sha256``, the hash of the header's
    parameters), flushed and fsynced at each :meth:`append`. Opening repairs a cut-off
    last line."""

    def __init__(self, path: str | os.PathLike, params: dict):
        self.path = Path(path)
        self.params_sha256 = params_sha256(params)
        _repair_tail(self.path)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self.fh = _open_own(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, "ab")
        if new:
            self._write({"kind": _JOURNAL_KIND, "version": 2, "params": params,
                         "params_sha256": self.params_sha256})

    def _write(self, *objs) -> None:
        self.fh.write(b"".join(json.dumps(o, sort_keys=True, separators=(",", ":")).encode()
                               + b"\n" for o in objs))
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def append(self, *records: dict) -> None:
        """Append task records, tied to this journal's parameters, with one flush and
        fsync (evaluate appends a batch's tasks together: a kill loses at most the batch
        being written, which a resume redoes)."""
        if records:
            self._write(*({**r, "params_sha256": self.params_sha256} for r in records))

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
