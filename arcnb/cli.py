"""The ``arcnb`` command: it only assembles. Each subcommand is a module of
:mod:`arcnb.commands` with two functions, ``add(subparsers)`` (builds its parser and
sets ``func`` to its ``run``) and ``run(args) -> int``; what they share (the option
registry, the one-line failure, the escaped stdout, the paths) is
:mod:`arcnb.commands.common`.

Every subcommand answers bad input with one line on stderr and exit status 2, never a
traceback.
"""
from __future__ import annotations

import argparse
import atexit
import os
import sys

from ._version import __version__
from .commands import (arc3, candidates, compare, evaluate, notebooks, overlap, repeats,
                       report, score, sweep)
from .commands.common import Parser, escaped_stdout, fail, resolve_paths, user_paths_env
from .errors import ArcnbError

__all__ = ["main"]

#: The subcommands, in the order ``arcnb --help`` lists them: one module each.
COMMANDS = (
    score,
    compare,
    evaluate,
    report,
    notebooks,
    sweep,
    overlap,
    candidates,
    repeats,
    arc3,
)


def build_parser() -> argparse.ArgumentParser:
    """The ``arcnb`` parser: each module of :data:`COMMANDS` adds its subcommand."""
    parser = Parser(prog="arcnb", description="Evaluate models on ARC: scoring, metrics, "
                                              "plots, breakdowns and reports.")
    parser.add_argument("--version", action="version", version=f"arcnb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add(sub)
    return parser


def main(argv=None) -> int:
    """Run ``arcnb ARGV`` (default: the process's arguments) and return its exit status:
    bad input is one line on stderr and status 2, a bug keeps its traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with user_paths_env(resolve_paths(args)), escaped_stdout():
            return int(args.func(args) or 0)
    except ArcnbError as exc:
        return fail(str(exc))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        return fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
    # any other exception (a plain ValueError, TypeError, ...) is a bug in arcnb, not bad
    # input: it surfaces with its traceback and exit status 1
    except KeyboardInterrupt:
        print("arcnb: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`arcnb score ... | head`): no traceback, and none at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # disk full (ENOSPC), read-only file system, I/O errors
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        return fail(f"{exc.strerror or exc}{where}")
    except MemoryError:
        return fail("out of memory (is an input file far larger than ARC data can be?)")
    except RecursionError:
        return fail("an input is nested too deeply")


def run() -> None:
    """The ``arcnb`` command (and ``python -m arcnb``): :func:`main`, then exit with its
    status without the interpreter's teardown. Once the command is done and its output
    flushed, the exit handlers run as usual (temporary files, kernels), but the
    collection of every module's objects (torch, matplotlib, pandas) is skipped: every
    file arcnb writes is closed (and renamed into place) before ``main`` returns, so the
    teardown changes nothing on disk, and it took most of a second of each command."""
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # the reader went away, or a stream is closed
        pass
    atexit._run_exitfuncs()
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
