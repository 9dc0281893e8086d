"""``arcnb notebooks``: the notebooks arcnb ships copied into a folder."""
from __future__ import annotations

from ..resources import copy_notebooks, notebook_names
from .common import add_option

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb notebooks`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("notebooks", help="copy arcnb's notebooks into a folder of your project",
                       description="Copy the notebooks arcnb ships ("
                                   + ", ".join(notebook_names()) + ") into DEST, to open "
                                   "in JupyterLab or run with papermill (kernel python3). "
                                   "Refuses to replace an existing notebook unless "
                                   "--overwrite is given.")
    p.add_argument("dest", metavar="DEST", help="folder to copy them into (created if missing)")
    add_option(p, "notebooks", "overwrite", help="replace notebooks already in DEST")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb notebooks`` on parsed arguments; returns the exit status."""
    for path in copy_notebooks(args.dest, overwrite=args.overwrite):
        print(f"wrote {path}")
    return 0
