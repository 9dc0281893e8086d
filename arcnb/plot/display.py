"""Rich display in Jupyter: :class:`GridView`, :class:`PairView` and :class:`TaskView`
(pictures through ``_repr_png_``), :func:`view`, and :func:`enable_rich_display`, which
registers the PNG formatters that show a :class:`~arcnb.data.Task` or
:class:`~arcnb.data.Pair` as a picture (``arcnb/__init__.py`` calls it when ``arcnb`` is
imported inside a running IPython)."""
from __future__ import annotations

import io
import sys

from ..data import Pair, Task
from ..grids import PAD_TOKEN
from .palette import as_grid_array, shape_text
from .panels import grid, pair, task, task_attempts

__all__ = ["GridView", "PairView", "TaskView", "view", "enable_rich_display"]


def _png_bytes(draw, dpi: int = 100) -> bytes:
    """Render with a pyplot-free Figure (no window, no double display) to PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


class GridView:
    """A grid that displays as a picture in Jupyter (``_repr_png_``)."""

    def __init__(self, g, *, values: bool = False, title: str | None = None,
                 pad_token: int | None = PAD_TOKEN):
        self.grid = as_grid_array(g, pad_token=pad_token)
        self.values, self.title, self.pad_token = values, title, pad_token

    def _draw(self, fig):
        h, w = self.grid.shape
        s = 2.4 / max(h, w)
        fig.set_size_inches(max(1.2, w * s + 0.3), max(1.2, h * s + 0.5))
        grid(self.grid, ax=fig.add_subplot(), values=self.values, title=self.title,
             pad_token=self.pad_token)

    def _repr_png_(self) -> bytes:
        return _png_bytes(self._draw)

    def __repr__(self) -> str:
        return f"GridView({shape_text(self.grid)})"


class PairView:
    """Truth | prediction | difference that displays as a picture (``_repr_png_``).
    With ``pred=None`` and a data :class:`~arcnb.data.Pair`, shows input | output."""

    def __init__(self, truth, pred=None, *, values: bool = False):
        if isinstance(truth, Pair):
            self.is_pair, self.a, self.b = True, truth.input, truth.output
        else:
            self.is_pair, self.a, self.b = False, truth, pred
        self.values = values

    def _draw(self, fig):
        if self.is_pair:
            fig.set_size_inches(5.0, 2.6)
            axs = fig.subplots(1, 2)
            grid(self.a, ax=axs[0], values=self.values, title="input")
            if self.b is not None:
                grid(self.b, ax=axs[1], values=self.values, title="output")
            else:
                axs[1].set_axis_off()
        else:
            fig.set_size_inches(7.0, 2.6)
            pair(self.a, self.b, axes=fig.subplots(1, 3), values=self.values)

    def _repr_png_(self) -> bytes:
        return _png_bytes(self._draw)


class TaskView:
    """A task (optionally with predictions) that displays as a picture (``_repr_png_``)."""

    def __init__(self, t, predictions=None, *, values: bool = False, cell: float = 1.15):
        self.task, self.predictions, self.values, self.cell = t, predictions, values, cell

    def _draw(self, fig):
        attempts = task_attempts(self.task, self.predictions)
        ncols = max(2, 2 + max((len(a) for a in attempts), default=0))
        nrows = len(self.task.train) + len(self.task.test)
        fig.set_size_inches(ncols * self.cell, nrows * (self.cell + 0.25))
        task(self.task, self.predictions, values=self.values, fig=fig)

    def _repr_png_(self) -> bytes:
        return _png_bytes(self._draw)

    def __repr__(self) -> str:
        return f"TaskView({self.task.id})"


def view(obj, predictions=None, **kwargs):
    """Wrap a grid, a :class:`~arcnb.data.Pair` or a :class:`~arcnb.data.Task` in a view
    that Jupyter shows as a picture when it is the last expression of a cell."""
    if isinstance(obj, Task):
        return TaskView(obj, predictions, **kwargs)
    if isinstance(obj, Pair):
        return PairView(obj, **kwargs)
    return GridView(obj, **kwargs)


def enable_rich_display(shell=None) -> bool:
    """Register PNG formatters so a :class:`~arcnb.data.Task` or
    :class:`~arcnb.data.Pair` that ends a notebook cell shows as a picture.

    Also makes the figures of :func:`~arcnb.plot.task`, :func:`~arcnb.plot.pair` and
    :func:`~arcnb.plot.gallery` show once (see :mod:`arcnb.plot.figures`).

    Uses the running IPython shell (or ``shell``); returns False when there is none.
    Called automatically when ``arcnb`` is imported inside IPython. The formatters are
    registered by class name (``arcnb.data.Task``, ``arcnb.data.Pair``), so the data
    classes know nothing of plotting, and they import matplotlib only when they first
    draw.
    """
    if shell is None:
        shell = _running_shell()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    png = shell.display_formatter.formatters["image/png"]
    png.for_type_by_name("arcnb.data", "Task", _task_png)
    png.for_type_by_name("arcnb.data", "Pair", _pair_png)
    # the figures of P.task / P.pair / P.gallery show once (arcnb.plot.figures)
    for mime in _DISPLAY_MIMETYPES:
        fmt = shell.display_formatter.formatters.get(mime)
        if fmt is not None:
            fmt.for_type_by_name("arcnb.plot.figures", "ArcnbFigure", _display_once(fmt))
    return True


#: as arcnb.plot.figures.DISPLAY_MIMETYPES (not imported here: it imports matplotlib)
_DISPLAY_MIMETYPES = ("image/png", "image/jpeg", "image/svg+xml", "application/pdf")


def _display_once(formatter):
    """An IPython printer for :class:`arcnb.plot.figures.ArcnbFigure` in ``formatter``
    (one mimetype): render it with the printer plain Figures have there (none: no
    output), then close it in pyplot, so that the end of the cell does not show it a
    second time."""

    def printer(fig):
        from matplotlib.figure import Figure

        try:
            base = formatter.lookup_by_type(Figure)
        except KeyError:
            base = None
        try:
            return None if base is None else base(fig)
        finally:
            import matplotlib.pyplot as plt

            plt.close(fig)

    return printer


def _running_shell():
    """The running IPython shell, or None; never imports IPython."""
    ipython = sys.modules.get("IPython")  # no IPython imported -> no shell running
    get_ipython = getattr(ipython, "get_ipython", None)
    return None if get_ipython is None else get_ipython()


def _task_png(t) -> bytes:
    return TaskView(t)._repr_png_()


def _pair_png(p) -> bytes:
    return PairView(p)._repr_png_()
