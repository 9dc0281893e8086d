"""An interactive task and failure browser for JupyterLab: ``arcnb.explore(...)``.

``explore(source)`` opens a run directory, a :class:`~arcnb.scoring.Results`, a
predictions file (with ``dataset=``) or a bare :class:`~arcnb.data.Dataset` (tasks
only) and returns an :class:`Explorer`. In a notebook it displays as an ipywidgets
browser (previous / next, an index slider, a task-id search box, selection and
category filters, an attempt switcher and a show-values toggle); from a script or a
test it is driven through the same object (:attr:`Explorer.items`,
:attr:`Explorer.current`, :meth:`Explorer.go`).

Drawing
    Each view is ONE RGB image composed with numpy from :func:`arcnb.plot.grid_image`
    tiles (no matplotlib Axes per grid), titled with PIL and shown as a PNG in an
    ``ipywidgets.Image``: every demonstration pair (input over output), then the test
    input over the truth, then each run's attempt over its difference panel. All
    grids of a view share one cell size so they compare at a glance. The numbers
    shown (solved@K, cell accuracy, partial credit, shapes, votes, confidences,
    costs) are read from the Results table and the run's files, never recomputed.

Selections
    See :data:`SELECTIONS`; each is a boolean test on columns of ``Results.outputs``.
"""
from __future__ import annotations

from .state import SELECTIONS
from .view import Explorer, ExploreError, explore

__all__ = ["explore", "Explorer", "ExploreError", "SELECTIONS"]
