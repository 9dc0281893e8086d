"""The files arcnb ships inside the package, found with :mod:`importlib.resources`.

Everything the commands need is package data, so they work from any directory after a
plain ``pip install``:

- ``arcnb/resources/notebooks/*.ipynb``: the notebooks (:func:`notebook`,
  :func:`copy_notebooks`, the ``arcnb notebooks DEST`` command);
- ``arcnb/resources/checkpoints/``: the bundled baseline checkpoint ``baseline.pt`` and
  its card ``README.md`` (:func:`checkpoint`);
- ``arcnb/resources/examples/*.json``: example prediction files, every ``.json`` file at
  the top of the folder (:func:`example_files`, :func:`example`);
- ``arcnb/resources/examples/arc3/``: the ARC-AGI-3 example, two agents' recordings of a
  small synthetic game and its human baselines (:func:`arc3_example`; written by
  ``scripts/make_arc3_example.py``);
- ``arcnb/templates/``: the nbconvert template of the HTML reports (:func:`templates_dir`);
- ``arcnb/paper.mplstyle``: the paper figure style (:func:`paper_style_path`; it stays at
  the package top level so that matplotlib finds it as ``"arcnb.paper"``).

This module is the one way arcnb's code finds these files. A clone of the repository
also has ``notebooks/`` (a link to the shipped notebooks) and ``data/`` (byte-identical
copies of the checkpoints and examples, sub-folders included, written by
``scripts/sync_data.py``) at its top level.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources as _resources
from pathlib import Path

from ..errors import ArcnbError, OutputExistsError
from ..io import atomic_write_bytes

__all__ = ["DEFAULT_EXAMPLE", "notebooks_dir", "notebook_names", "notebook", "copy_notebooks",
           "checkpoints_dir", "checkpoint", "examples_dir", "example_files", "example",
           "ARC3_EXAMPLE", "Arc3Example", "arc3_example", "templates_dir", "paper_style_path",
           "checkout_root", "reports_root"]

#: The example predictions the embedded default scores when no checkpoint is bundled.
DEFAULT_EXAMPLE = "arc-agi-1-evaluation_heuristic.json"


def _path(traversable, what: str) -> Path:
    # a wheel installs as plain files, so importlib.resources hands back real paths
    # (papermill, nbconvert and torch.load need one); a zipped install would not
    if not isinstance(traversable, Path):
        raise ArcnbError(f"arcnb's {what} are not plain files ({traversable}): install "
                         "arcnb with pip (a wheel), not as a zip archive")
    return traversable


def _dir(*parts: str) -> Path:
    t = _resources.files(__name__)
    for part in parts:
        t = t / part
    return _path(t, "/".join(parts))


def _missing(path: Path, what: str) -> ArcnbError:
    return ArcnbError(f"{what} {path} is missing from the arcnb installation "
                      "(reinstall arcnb)")


# ----------------------------------------------------------------- notebooks
def notebooks_dir() -> Path:
    """The folder of the shipped notebooks."""
    return _dir("notebooks")


def notebook_names() -> list[str]:
    """The shipped notebooks' names (``"report"``, ...), sorted."""
    return sorted(p.stem for p in notebooks_dir().glob("*.ipynb"))


def notebook(name: str) -> Path:
    """The shipped notebook ``name`` (``"report"`` or ``"report.ipynb"``)."""
    stem = name[:-len(".ipynb")] if name.endswith(".ipynb") else name
    path = notebooks_dir() / f"{stem}.ipynb"
    if not path.is_file():
        if stem not in notebook_names():
            raise ArcnbError(f"unknown notebook {name!r}: arcnb ships "
                             f"{', '.join(notebook_names()) or 'none'}")
        raise _missing(path, "notebook")
    return path


def copy_notebooks(dest: str | os.PathLike, *, overwrite: bool = False,
                   names=None) -> list[Path]:
    """Copy the shipped notebooks (or only ``names``) into the folder ``dest`` (created
    when missing) and return the paths written. Refuses, before writing anything, when
    one of them already exists and ``overwrite`` is false."""
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise ArcnbError(f"{dest} exists and is not a folder")
    sources = [notebook(n) for n in (names or notebook_names())]
    targets = [dest / src.name for src in sources]
    if not overwrite:
        existing = [t.name for t in targets if t.exists()]
        if existing:
            raise OutputExistsError(f"{dest} already holds {', '.join(existing)}; refusing "
                                    "to overwrite (pass --overwrite)")
    for src, target in zip(sources, targets):
        atomic_write_bytes(target, src.read_bytes(), overwrite=True)
    return targets


# ----------------------------------------------------------------- checkpoints
def checkpoints_dir() -> Path:
    """The folder of the bundled checkpoints and their cards (``README.md``)."""
    return _dir("checkpoints")


def checkpoint(name: str = "baseline") -> Path:
    """The bundled checkpoint ``name`` (``"baseline"`` -> ``baseline.pt``). The path is
    returned whether or not the file exists: check ``.is_file()``."""
    return checkpoints_dir() / (name if name.endswith(".pt") else f"{name}.pt")


# ----------------------------------------------------------------- examples
def examples_dir() -> Path:
    """The folder of the bundled example predictions."""
    return _dir("examples")


def example_files() -> dict[str, Path]:
    """Every bundled example predictions file (the ``.json`` files at the top of
    :func:`examples_dir`; its sub-folders hold other examples, such as
    :func:`arc3_example`): ``{file stem: path}``, sorted by name.

    (Not named ``examples``: ``import arcnb.resources.examples`` names the data folder.)"""
    return {p.stem: p for p in sorted(examples_dir().glob("*.json")) if p.is_file()}


def example(name: str = DEFAULT_EXAMPLE) -> Path:
    """A bundled example predictions file, by file name or stem (default: the
    heuristic program-synthesis submission on ARC-AGI-1 evaluation). The path is
    returned whether or not the file exists: check ``.is_file()``."""
    stem = name[:-len(".json")] if name.endswith(".json") else name
    return examples_dir() / f"{stem}.json"


#: The ARC-AGI-3 example's folder, under :func:`examples_dir`.
ARC3_EXAMPLE = "arc3"


@dataclass(frozen=True)
class Arc3Example:
    """The bundled ARC-AGI-3 example (:func:`arc3_example`): ``runs``, one folder of
    recordings per agent (``agent-a``, ``agent-b``), sorted by name, and ``baselines``,
    the games' human baselines (a CSV ``game_id,level,baseline_actions``)."""

    runs: list[Path]
    baselines: Path


def arc3_example() -> Arc3Example:
    """The bundled ARC-AGI-3 example: two agents' recordings of a small synthetic game
    (agent A: four games, several plays, level resets, a GAME_OVER, a game without
    baselines; agent B: two and three times the human baseline on two games), only the
    first recording keeping frames, at its key steps; and the games' human baselines.
    What the ``arc3`` notebook and ``arcnb arc3 report`` show when given no run."""
    folder = examples_dir() / ARC3_EXAMPLE
    baselines = folder / "baselines.csv"
    runs = sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    if not runs or not baselines.is_file():
        raise _missing(folder, "the ARC-AGI-3 example")
    return Arc3Example(runs, baselines)


# ----------------------------------------------------------------- templates, style
def templates_dir() -> Path:
    """The folder of arcnb's nbconvert templates (``arcnb_report``)."""
    return _path(_resources.files("arcnb") / "templates", "templates")


def paper_style_path() -> Path:
    """The paper figure style file (``plt.style.use("arcnb.paper")`` finds it too)."""
    return _path(_resources.files("arcnb") / "paper.mplstyle", "paper style")


# ----------------------------------------------------------------- where arcnb runs from
def checkout_root() -> Path | None:
    """The repository clone arcnb is imported from (the folder holding arcnb's
    ``pyproject.toml`` beside the package), or None for an installed package."""
    pkg = _path(_resources.files("arcnb"), "package")
    root = pkg.resolve().parent
    pyproject = root / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return root if 'name = "arcnb"' in text else None


def reports_root() -> Path:
    """Where outputs go when the user names no folder: the clone's ``reports/`` when arcnb
    runs from a clone, else ``reports/`` under the current directory."""
    root = checkout_root()
    return (root if root is not None else Path.cwd()) / "reports"
