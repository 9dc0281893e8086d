"""Paper figures: the packaged style (:func:`paper_style`, :data:`STYLE`), column
widths and :func:`figsize`, and the deterministic, atomic :func:`save`."""
from __future__ import annotations

import io
import os
from contextlib import contextmanager
from pathlib import Path

from ..errors import ParameterError, refuse_overwrite
from ..io import atomic_write_bytes
from ..resources import paper_style_path

__all__ = ["SINGLE_COLUMN", "DOUBLE_COLUMN", "WIDTHS", "STYLE", "paper_style", "figsize",
           "paper_width", "save", "figure_bytes"]

#: Column width in inches of a single-column paper figure.
SINGLE_COLUMN = 3.5
#: Column width in inches of a double-column (full-width) paper figure.
DOUBLE_COLUMN = 7.2

#: The two paper widths by name: ``"column"`` (one column of a two-column paper,
#: 3.5 in) and ``"page"`` (the full text width, 7.2 in).
WIDTHS = {"column": SINGLE_COLUMN, "page": DOUBLE_COLUMN}

#: Name of the packaged style: ``plt.style.context(arcnb.plot.STYLE)``.
STYLE = "arcnb.paper"
# the style file stays at the package top level: matplotlib resolves the dotted name
# "arcnb.paper" to the file paper.mplstyle inside the package arcnb
_STYLE_PATH = paper_style_path()


def paper_width(width: str | float | int = "column") -> float:
    """A paper width in inches: ``"column"`` (3.5 in), ``"page"`` (7.2 in), or the
    number of columns (1 or 2), or a width in inches given as a float."""
    if isinstance(width, str):
        if width not in WIDTHS:
            raise ParameterError(f"width must be 'column' or 'page', got {width!r}")
        return WIDTHS[width]
    if isinstance(width, int) and not isinstance(width, bool):
        if width not in (1, 2):
            raise ParameterError(f"columns must be 1 or 2, got {width!r}")
        return SINGLE_COLUMN if width == 1 else DOUBLE_COLUMN
    if isinstance(width, float) and width > 0:
        return width
    raise ParameterError(f"width must be 'column', 'page', 1, 2 or inches, got {width!r}")


@contextmanager
def paper_style(width: str | int | None = None, aspect: float = 0.62):
    """Context manager applying the packaged paper style (same as
    ``plt.style.context("arcnb.paper")``); with ``width`` (``"column"`` or ``"page"``)
    new figures default to that width and ``aspect`` x width high."""
    import matplotlib
    import matplotlib.pyplot as plt

    with plt.style.context(str(_STYLE_PATH)):
        if width is None:
            yield
        else:
            with matplotlib.rc_context({"figure.figsize": figsize(width, aspect)}):
                yield


def figsize(columns: int | str = 1, aspect: float = 0.62) -> tuple[float, float]:
    """Figure size in inches for a single (``1`` or ``"column"``, 3.5 in) or double
    (``2`` or ``"page"``, 7.2 in) column figure; height = width x ``aspect``."""
    w = paper_width(columns)
    return (w, round(w * aspect, 3))


_FORMATS = {"pdf", "svg", "png"}


def save(fig, path: str | os.PathLike, *, format: str | None = None, dpi: float | str | None = None,
         overwrite: bool = False, compress_level: int | None = None, **kwargs) -> Path:
    """Write ``fig`` to ``path`` as PDF, SVG or PNG, deterministically and atomically.

    Same figure, same bytes: PDF without creation date, fonts embedded as TrueType
    (``pdf.fonttype`` 42); SVG without date, with a fixed ``svg.hashsalt`` (stable ids)
    and text kept as text (``svg.fonttype`` ``none``); PNG without software stamp
    beyond matplotlib's. The file is written via a temporary file and rename; an
    existing file is only replaced with ``overwrite=True``. ``dpi`` defaults to
    ``savefig.dpi`` (a gallery figure defaults to its own dpi, so its PNG keeps the
    image pixel for pixel). ``compress_level`` is the PNG zlib level (0-9; default 6,
    or the figure's ``arcnb_png_compress_level``: galleries use 3, which writes large
    images much faster for ~15% more bytes). A ``fig`` that is an Axes is resolved to
    its figure.
    """
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in _FORMATS:
        raise ParameterError(f"save() writes pdf, svg or png; got {fmt or 'no extension'!r} for {path}")
    if path.exists() and not overwrite:
        raise refuse_overwrite(path, "pass overwrite=True")
    data = figure_bytes(fig, fmt, dpi=dpi, compress_level=compress_level, **kwargs)
    return atomic_write_bytes(path, data, overwrite=overwrite)


def figure_bytes(fig, format: str = "png", *, dpi: float | str | None = None,
                 compress_level: int | None = None, **kwargs) -> bytes:
    """The bytes :func:`save` writes for ``fig`` in ``format`` (pdf, svg or png),
    deterministic in the same way; for a figure that is both shown and saved (a report
    section embeds the PNG it writes), drawn once."""
    import matplotlib

    if hasattr(fig, "get_figure") and not hasattr(fig, "savefig"):
        fig = fig.get_figure()
    fmt = str(format).lower()
    if fmt not in _FORMATS:
        raise ParameterError(f"figures are written as pdf, svg or png, not {fmt!r}")
    meta = {"pdf": {"CreationDate": None, "ModDate": None},
            "svg": {"Date": None},
            "png": {}}[fmt]
    meta.update(kwargs.pop("metadata", {}) or {})
    rc = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none",
          "svg.hashsalt": matplotlib.rcParams.get("svg.hashsalt") or "arcnb"}
    if fmt == "png":
        level = compress_level if compress_level is not None else \
            getattr(fig, "arcnb_png_compress_level", 6)
        pil = dict(kwargs.pop("pil_kwargs", None) or {})
        pil.setdefault("compress_level", int(level))
        kwargs["pil_kwargs"] = pil
    if dpi is None:
        dpi = "figure" if hasattr(fig, "arcnb_image") else matplotlib.rcParams["savefig.dpi"]
    buf = io.BytesIO()
    with matplotlib.rc_context(rc):
        if fmt == "png" and kwargs.get("bbox_inches") == "tight":
            kwargs["bbox_inches"] = _tight_box(fig, dpi, kwargs.get("pad_inches"))
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=meta, **kwargs)
    return buf.getvalue()


def _tight_box(fig, dpi, pad_inches):
    """The box ``bbox_inches="tight"`` trims to, measured without drawing the figure
    (matplotlib draws it once more just to measure, nearly doubling the time of a
    report's figure); ``"tight"`` itself where a drawing is needed to know (a layout
    engine that moves the axes at draw time, a canvas without a renderer, another dpi).
    For PNG only: the box is measured with the raster renderer's text sizes."""
    import matplotlib

    save_dpi = fig.dpi if dpi == "figure" else dpi
    get_renderer = getattr(fig.canvas, "get_renderer", None)
    if (fig.get_layout_engine() is not None or get_renderer is None
            or not isinstance(save_dpi, (int, float)) or float(save_dpi) != float(fig.dpi)):
        return "tight"
    pad = matplotlib.rcParams["savefig.pad_inches"] if pad_inches is None else pad_inches
    if not isinstance(pad, (int, float)):
        return "tight"
    return fig.get_tightbbox(get_renderer()).padded(pad)
