"""A report's sections shared between its kernel and a helper process.

While papermill executes the report notebook, the kernel computes the sections one
cell at a time on one core, and the ``arcnb report`` process that started it mostly
waits. :func:`arcnb.report.build_report` therefore starts a helper process (at the
lowest priority) that computes the report's sections from the last one backwards on
the other core and hands each over through a private folder, named to the kernel in
its environment (:data:`ENV`); the kernel takes a section the helper has claimed
instead of computing it. The helper opens the run with the kernel's own arguments,
uses the kernel's options and draws with the kernel's matplotlib settings: a section
handed over is the section the kernel would have computed, with the same tables,
numbers, figures and files. Only a section built from the run and options of the
notebook's setup cell is handed over; any other (``S.Colours(run, options,
n_boot=10)``, another run) is computed where it is asked for. A notebook run in
Jupyter has no such folder: its kernel computes every section.

The folder (private, temporary): ``setup.pickle`` (the run's arguments, the options
and the matplotlib settings, written by the kernel's setup cell), ``helper.pid``, and
per section ``<name>.claim`` (created once, by whichever of the two starts the section
first), ``<name>.pickle`` (the section's state) or ``<name>.failed``; ``stop`` tells
the helper the notebook is done.
"""
from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import Sequence

from ...io import atomic_write_bytes, atomic_write_text

__all__ = ["ENV", "attach", "adopt", "share", "stop"]

#: The environment variable naming the hand-over folder in a report's kernel.
ENV = "ARCNB_SECTIONS_HANDOVER"

_SETUP, _PID, _STOP = "setup.pickle", "helper.pid", "stop"
#: the kernel waits for a section the helper claimed at most this many times as long as
#: its own longest section took, and at least :data:`MIN_WAIT_S`; then it computes the
#: section itself and the helper starts no other (a helper starved of the cores by
#: other work never holds the report up for long)
WAIT_FACTOR, MIN_WAIT_S = 3.0, 2.0
_POLL_S = 0.005
#: when the kernel started computing its last section, and its longest so far (s)
_KERNEL = {"started": None, "longest": 0.0}
#: the kernel's setup cell's run and options (both None: nothing is handed over)
_ATTACHED: list = []
_NOT_SHARED = {"backend", "backend_fallback", "interactive", "toolbar"}


def _write(path: Path, obj) -> None:
    """``obj`` pickled into ``path``, whole or not at all (the other process polls it)."""
    atomic_write_bytes(path, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL),
                       overwrite=True)


def _claim(folder: Path, name: str) -> bool:
    """Claim section ``name``: True for the first to ask, kernel or helper."""
    try:
        os.close(os.open(folder / f"{name}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return True
    except FileExistsError:
        return False


def _folder() -> Path | None:
    value = os.environ.get(ENV)
    return Path(value) if value and os.name != "nt" and Path(value).is_dir() else None


# ------------------------------------------------------------------- the kernel's side
def attach(run, options, arguments: dict) -> None:
    """In a report's kernel (:data:`ENV` set): record the setup cell's ``run`` and
    ``options`` and hand the helper what it needs to open the same run
    (``arguments``: :func:`arcnb.report.sections.open_report`'s), the options and this
    kernel's matplotlib settings. Does nothing elsewhere."""
    folder = _folder()
    if folder is None:
        return
    if (folder / _SETUP).exists():
        # a second run opened in the same kernel: the helper's sections are the first
        # one's, so none is handed over from now on
        _ATTACHED[:] = [None, None]
        return
    import matplotlib

    # the figures' settings; not the kernel's display (its backend, interactive mode)
    rc = {k: v for k, v in matplotlib.rcParams.items() if k not in _NOT_SHARED}
    try:
        _write(folder / _SETUP, {"arguments": dict(arguments), "options": options, "rc": rc})
    except Exception:  # noqa: BLE001 - nothing the helper can use: the kernel does it all
        _ATTACHED[:] = [None, None]
        return
    _ATTACHED[:] = [run, options]


def adopt(section) -> bool:
    """Fill ``section`` (a Section being built) with the state the helper computed for
    it, when the helper claimed it; False when the kernel is to compute it (no helper,
    another run or options than the setup cell's, or the kernel claimed it first)."""
    folder = _folder()
    if folder is None or not _ATTACHED or _ATTACHED[0] is None \
            or section.run is not _ATTACHED[0] or section.options != _ATTACHED[1]:
        return False
    now = time.monotonic()
    if _KERNEL["started"] is not None:  # the kernel's previous section has been computed
        _KERNEL["longest"] = max(_KERNEL["longest"], now - _KERNEL["started"])
        _KERNEL["started"] = None
    name = type(section).__name__
    if _claim(folder, name):
        _KERNEL["started"] = now
        return False
    try:
        state = _wait(folder, name, max(MIN_WAIT_S, WAIT_FACTOR * _KERNEL["longest"]))
    except Exception:  # noqa: BLE001 - a state that cannot be read: computed here
        state = None
    if state is None:
        _KERNEL["started"] = time.monotonic()
        return False
    section.__dict__.update(state)
    return True


def _wait(folder: Path, name: str, patience: float):
    """The state of section ``name`` once the helper has written it; None when it
    failed there, the helper is gone, or after ``patience`` seconds (then the helper is
    told to start no other section)."""
    done, failed = folder / f"{name}.pickle", folder / f"{name}.failed"
    deadline = time.monotonic() + patience
    pid = None
    while time.monotonic() < deadline:
        if done.exists():
            with open(done, "rb") as fh:
                return pickle.load(fh)
        if failed.exists():
            return None
        if pid is None:
            try:
                pid = int((folder / _PID).read_text())
            except (OSError, ValueError):
                return None
        try:
            os.kill(pid, 0)  # is the helper still there?
        except OSError:
            if not done.exists():
                return None
            continue
        time.sleep(_POLL_S)
    stop(folder)
    return None


# ------------------------------------------------------------------- the helper's side
def share(folder: str | os.PathLike, sections: Sequence[type], open_report) -> list[str]:
    """In the helper: wait for the kernel's setup cell, open the same run with
    ``open_report`` (:func:`arcnb.report.sections.open_report`) and the kernel's
    arguments, then compute ``sections`` from the last one backwards, each claimed first,
    until one is the kernel's or :func:`stop` is called; returns the names of the
    sections handed over."""
    import matplotlib

    folder = Path(folder)
    os.environ.pop(ENV, None)  # this process hands over; it takes nothing itself
    atomic_write_text(folder / _PID, str(os.getpid()), overwrite=True)
    setup = None
    while setup is None:
        if (folder / _STOP).exists():
            return []
        if (folder / _SETUP).exists():
            with open(folder / _SETUP, "rb") as fh:
                setup = pickle.load(fh)
        else:
            time.sleep(_POLL_S)
    run, _ = open_report(**setup["arguments"])
    options = setup["options"]
    if not getattr(run, "scored", True):
        return []
    shared = []
    with matplotlib.rc_context(setup["rc"]):
        for cls in reversed(list(sections)):
            name = cls.__name__
            if (folder / _STOP).exists() or not _claim(folder, name):
                break
            try:
                section = cls(run, options)
                _write(folder / f"{name}.pickle",
                       {k: v for k, v in vars(section).items() if k not in ("run", "options")})
                shared.append(name)
            except BaseException:  # noqa: BLE001 - the kernel computes it and reports it
                (folder / f"{name}.failed").touch()
    return shared


def stop(folder: str | os.PathLike) -> None:
    """Tell the helper the notebook is done: it starts no other section."""
    try:
        (Path(folder) / _STOP).touch()
    except OSError:
        pass
