"""arcnb: a Jupyter-first kit for evaluating models on ARC (ARC-AGI-1 and ARC-AGI-2).

Official scoring, correct tensor metrics, grid plots, breakdowns and HTML reports.
"""
from __future__ import annotations

import sys as _sys

from ._version import __version__  # noqa: E402

from .data import DATASETS, Dataset, Task, load_dataset  # noqa: E402
from .errors import ArcnbError  # noqa: E402
from .predictions import Predictions, load_predictions, write_predictions  # noqa: E402
from .scoring import Results, score  # noqa: E402
from .runs import Run  # noqa: E402
from .front import open_run as open  # noqa: E402,A001 - arcnb.open: the front door
from .overlap import overlap  # noqa: E402  (binds arcnb.overlap to the function)
# arcnb.candidates(dataset, predictions): a module you call (arcnb.candidates.candidates)
from . import candidates  # noqa: E402,F401
# arcnb.repeats(sources, dataset=...): a module you call (arcnb.repeats.repeats)
from . import repeats  # noqa: E402,F401

__all__ = [
    "__version__", "DATASETS", "Dataset", "Task", "load_dataset", "ArcnbError",
    "Predictions", "load_predictions", "write_predictions", "Results", "score",
    "Run", "open", "overlap",
]


def _wire_rich_display() -> None:
    """Inside a running IPython (a Jupyter kernel), register the PNG formatters that
    show a Task or a Pair as a picture. They live on the plotting side
    (:func:`arcnb.plot.enable_rich_display`) and import matplotlib only when they first
    draw. Outside IPython nothing is imported (IPython is never imported here)."""
    ipython = _sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    if get_ipython is None or get_ipython() is None:
        return
    from .plot.display import enable_rich_display

    enable_rich_display()


_wire_rich_display()


def __getattr__(name: str):
    # `arcnb.explore` is imported on first use, so `import arcnb` never loads
    # ipywidgets or matplotlib (the browser lives in arcnb.explorer)
    if name == "explore":
        from .explorer import explore

        return explore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"explore"})
