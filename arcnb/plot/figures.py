"""Figures that a notebook shows once.

With the inline backend, a pyplot figure is shown when the cell ends, and a figure
that is also the cell's value (``P.task(t)`` as the last line) is shown a second time
as that value. The figures of :func:`~arcnb.plot.task`, :func:`~arcnb.plot.pair` and
:func:`~arcnb.plot.gallery` are :class:`ArcnbFigure`: when IPython renders one (as the
cell's value, or through ``display(fig)``), it is rendered as any figure is and then
closed in pyplot, so the end of the cell does not show it again. Hence exactly one
picture for ``P.task(t)``, ``fig = P.task(t)``, ``P.task(t);`` and ``display(fig)``.
Outside IPython an ArcnbFigure is an ordinary pyplot figure.
"""
from __future__ import annotations

from matplotlib.figure import Figure

__all__ = ["ArcnbFigure", "new_figure", "new_subplots", "DISPLAY_MIMETYPES"]

#: The image formats IPython may render a figure in (the inline backend's
#: ``figure_formats``); an ArcnbFigure is closed after any of them.
DISPLAY_MIMETYPES = ("image/png", "image/jpeg", "image/svg+xml", "application/pdf")


class ArcnbFigure(Figure):
    """A pyplot figure that a notebook shows once (see the module docstring)."""


def new_figure(**kwargs) -> ArcnbFigure:
    """``plt.figure(**kwargs)`` as an :class:`ArcnbFigure`."""
    import matplotlib.pyplot as plt

    return plt.figure(FigureClass=ArcnbFigure, **kwargs)


def new_subplots(*args, **kwargs):
    """``plt.subplots(*args, **kwargs)`` with an :class:`ArcnbFigure`."""
    import matplotlib.pyplot as plt

    return plt.subplots(*args, FigureClass=ArcnbFigure, **kwargs)
