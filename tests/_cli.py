"""The command line as the tests run it, and the one check of how it refuses bad input.

``cli(...)`` runs ``arcnb ARGS`` inside the test's own process (``arcnb.cli.main`` with
stdout and stderr captured, the working directory and environment set for the call and
restored after): a command that starts no kernel takes milliseconds instead of the
second or two a fresh interpreter needs to import arcnb, so these tests stay in the fast
tier. ``run_arcnb(...)`` is the real subprocess, kept for what only a process shows
(the ``python -m arcnb`` entry point, signals, a traceback at exit, exit codes of a
crashed interpreter).
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
from subprocess import CompletedProcess
import sys
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_arcnb(*args, cwd=ROOT, timeout=600, env: dict | None = None
              ) -> subprocess.CompletedProcess:
    """``python -m arcnb ARGS`` in a real subprocess (``env`` is added to this
    process's environment)."""
    return subprocess.run([sys.executable, "-m", "arcnb", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})


class _Capture(io.StringIO):
    """A captured stream that, like a pipe, is no terminal."""

    def isatty(self) -> bool:
        return False


def cli(*args, cwd=ROOT, env: dict | None = None, stdin: str | None = None
        ) -> CompletedProcess:
    """``arcnb ARGS`` in this process: the same ``CompletedProcess`` (``returncode``,
    ``stdout``, ``stderr``) a process gives. An exception that escapes ``main`` is
    printed as Python prints it and gives exit status 1, as in a real process; an
    ``argparse`` error gives its exit status (2)."""
    from arcnb.cli import main

    argv = [str(a) for a in args]
    out, err = _Capture(), _Capture()
    old_cwd, old_env = os.getcwd(), dict(os.environ)
    old_stdin = sys.stdin
    try:
        os.chdir(cwd)
        os.environ.update({k: str(v) for k, v in (env or {}).items()})
        if stdin is not None:
            sys.stdin = io.StringIO(stdin)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings():
            warnings.simplefilter("default")  # each call shows its warnings, as a process
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception:  # noqa: BLE001 - what an uncaught exception does to a process
                traceback.print_exc(file=err)
                code = 1
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
        sys.stdin = old_stdin
    return CompletedProcess(["arcnb", *argv], code, out.getvalue(), err.getvalue())


def one_line_refusal(code, err: str, *needles) -> str:
    """Bad input was answered as arcnb promises: exit status 2 and one line on stderr,
    no traceback, holding every one of ``needles``. Returns that line."""
    assert code == 2, (code, err[-3000:])
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-3000:]
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]
