"""The ``arcnb`` command.

Every subcommand answers bad input with one line on stderr and exit status 2, never a
traceback. Each subcommand is a pair of functions: ``_add_<name>(subparsers)`` builds
its parser and sets ``func`` to ``_run_<name>(args) -> int``.
"""
from __future__ import annotations

import argparse
import json
import sys

from .errors import ArcnbError

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit status 2)."""

    def error(self, message):  # noqa: D401
        self.exit(2, f"{self.prog}: error: {message}\n")


def _fail(message: str) -> int:
    first = str(message).strip().splitlines()[0] if str(message).strip() else "error"
    print(f"arcnb: error: {first}", file=sys.stderr)
    return 2


def _fmt(v) -> str:
    if isinstance(v, float):
        return "nan" if v != v else f"{v:.4f}"
    return str(v)


# ---------------------------------------------------------------- score
def _add_score(sub) -> None:
    p = sub.add_parser("score", help="score an ARC Prize submission file on a dataset",
                       description="Score predictions (ARC Prize submission format) with the "
                                   "official rule, in three conventions.")
    p.add_argument("--dataset", required=True,
                   help="dataset name (e.g. arc-agi-1:evaluation), task folder, task file or "
                        "*_challenges.json")
    p.add_argument("--predictions", required=True, help="submission JSON file")
    p.add_argument("--tasks", help="file of task ids to keep (JSON list or one per line)")
    p.add_argument("--k", type=int, action="append", default=[], metavar="K",
                   help="also report pass@K for this K (repeatable; 1 and 2 always)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(func=_run_score)


def _run_score(args) -> int:
    from .io import to_jsonable
    from .scoring import score

    res = score(args.dataset, args.predictions, tasks=args.tasks, ks=[1, 2, *args.k])
    if args.json:
        print(json.dumps(to_jsonable(res.summary), sort_keys=True))
        return 0
    print(format_summary(res.summary, res.ks))
    return 0


def format_summary(summary: dict, ks=(1, 2)) -> str:
    """A readable table of a scoring summary (used by the CLI and reports)."""
    ds = summary.get("dataset", {})
    lines = [f"dataset: {ds.get('name')} ({ds.get('version')})"
             + (f", filter: {ds['filter']}" if ds.get("filter") else "")]
    lines.append(f"{'K':>3}  {'pass@K':>8}  {'pass@K_per_output':>17}  "
                 f"{'pass@K_all_or_nothing':>21}")
    for k in ks:
        lines.append(f"{k:>3}  {_fmt(summary[f'pass@{k}']):>8}  "
                     f"{_fmt(summary[f'pass@{k}_per_output']):>17}  "
                     f"{_fmt(summary[f'pass@{k}_all_or_nothing']):>21}")
    lo, hi = summary.get("pass@2_ci95", [float("nan")] * 2)
    lines.append(f"pass@2 95% bootstrap interval over tasks: [{_fmt(lo)}, {_fmt(hi)}]")
    lines.append("tasks: {n_tasks}  outputs: {n_outputs}  missing outputs: {n_missing_outputs}  "
                 "invalid attempts: {n_invalid_attempts}  extra tasks: {n_extra_tasks}"
                 .format(**summary))
    return "\n".join(lines)


# ---------------------------------------------------------------- main
_COMMANDS = [_add_score]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arcnb", description="Evaluate models on ARC: scoring, metrics, "
                                               "plots, breakdowns and reports.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"arcnb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in _COMMANDS:
        add(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ArcnbError as exc:
        return _fail(str(exc))
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        return _fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
    except json.JSONDecodeError as exc:
        return _fail(f"invalid JSON: {exc}")
    except ValueError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        print("arcnb: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
