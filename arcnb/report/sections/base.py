"""What every report section is: :class:`Section` (a display object in the spirit of
scikit-learn's Displays: ``from_run`` computes, the constructor only stores, it holds
its tables (numbers) and numbers, draws its main figure with ``plot(ax=None)`` and
renders itself to HTML, formatting its numbers then) and
:class:`Options` (the report-wide settings every section reads).
"""
from __future__ import annotations

import base64
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, ClassVar, Sequence

import numpy as np

from ... import front
from ...columns import NEAR_MISS
from ...errors import ParameterError, printable, refuse_overwrite
from ...html import escape, heading, insert_contents, note, page
from ...io import atomic_write_bytes
from ...plot import paper_style
from ...plot.paper import figure_bytes

__all__ = ["Options", "Section", "Figure", "NO_TRUTH", "section_names", "page_of"]

#: What a section that needs the truth says on an unscored run.
NO_TRUTH = ("This run has no truth (a hidden test set): this section needs the test "
            "outputs and is left out.")


@dataclass(frozen=True)
class Options:
    """The report-wide settings (the report notebook's parameters of the same names).

    ``figures_dir``: when set, every section writes its figures there (``formats``,
    PNG by default) and its lists beside the run; empty: nothing is written.
    """

    n_boot: int = 1000
    seed: int = 0
    near_miss: float = NEAR_MISS
    gallery_size: int = 24
    taxonomy: str = ""
    references: Sequence[str] = ()
    train_data: Sequence[str] = ()
    figures_dir: str | os.PathLike | None = None
    formats: Sequence[str] = ("png",)
    width: str | None = None  # "column" or "page": paper-width figures (the figures page)
    overwrite: bool = True  # replace a section's files already in figures_dir

    def __post_init__(self):
        if int(self.n_boot) < 1:
            raise ParameterError(f"n_boot must be at least 1, not {self.n_boot!r}")
        if int(self.gallery_size) < 0:
            raise ParameterError(f"gallery_size must be at least 0, not {self.gallery_size!r}")
        if not 0.0 <= float(self.near_miss) <= 1.0:
            raise ParameterError(f"near_miss must be in [0, 1], not {self.near_miss!r}")
        bad = [f for f in self.formats if f not in ("png", "pdf", "svg")]
        if bad:
            raise ParameterError(f"figure formats are png, pdf and svg, not {bad[0]!r}")


@dataclass
class Figure:
    """One figure of a section: its file name (without suffix) and how to draw it.
    ``draw(ax)`` draws on ``ax`` (or, for a figure-level view, ignores it and returns
    a whole Figure); ``tight``: trim the white margin when saving."""

    name: str
    draw: Callable
    tight: bool = True
    figsize: tuple | None = None
    axes_level: bool = True


class Section:
    """A view of a run for JupyterLab, the HTML report and a paper: a display object in
    the spirit of scikit-learn's Displays (``ConfusionMatrixDisplay.from_estimator``).

    - ``Section.from_run(data, options=None, **changes)`` computes: it fills ``tables``
      (DataFrames of numbers), ``numbers`` (a dict) and ``empty`` (None, or the words
      saying why there is nothing to show: an unscored run, no cost data, ...), then,
      when ``options.figures_dir`` names a folder, writes the section's files there by
      calling ``write`` (``written`` lists them), as scikit-learn's ``from_estimator``
      computes and plots. One rule for every section: ``from_run`` takes the data the
      section shows, named by ``built_from`` (a run, or a path :func:`arcnb.open` opens;
      a comparison, a sweep, many runs or ARC-AGI-3 scored runs for the other pages).
    - ``Section(data, options, *, tables=None, numbers=None, empty=None)`` only stores
      what it is given: it computes nothing and writes nothing. A section that was never
      computed refuses to show itself (``to_html``, ``plot``) and says to use ``from_run``.
    - ``plot(ax=None)`` draws the main figure on ``ax`` (created when None), returns the
      Axes and keeps it as ``ax_`` and its Figure as ``figure_``; ``figures()`` lists every
      figure; ``to_html()`` (and so the display in JupyterLab) renders the heading, the
      words, the tables (their numbers formatted then, through :mod:`arcnb.text` and
      :func:`arcnb.html.table`) and the figures; ``write(folder)`` writes the files
      ``files()`` names.

    A subclass sets ``title``, ``anchor`` and ``intro``, and implements ``compute()``
    (fill ``tables`` and ``numbers``, or set ``empty``), ``body()`` (the HTML between the
    words and the end) and, when it draws, ``figures()``.
    """

    title: ClassVar[str] = ""
    anchor: ClassVar[str] = ""
    intro: ClassVar[str] = ""
    needs_truth: ClassVar[bool] = True
    #: an optional section (shown only when asked for or when the run has its data)
    #: renders nothing when it is empty, rather than a sentence
    optional: ClassVar[bool] = False

    #: What ``from_run`` is built from: ``"run"`` (the default: a run, or a path opened
    #: through :func:`arcnb.open`, any source it takes), or the words of what to pass
    #: instead (a comparison, a sweep, many runs: data made by its own call).
    built_from: ClassVar[str] = "run"

    def __init__(self, run, options: Options | None = None, *, tables: dict | None = None,
                 numbers: dict | None = None, empty: str | None = None):
        self.run = run
        self.options = options if options is not None else Options()
        self.tables: dict = dict(tables) if tables is not None else {}
        self.numbers: dict = dict(numbers) if numbers is not None else {}
        self.empty: str | None = empty
        self.written: list[Path] = []
        self.ax_ = None
        self.figure_ = None
        self._png: dict | None = None
        self._computed = tables is not None or numbers is not None or empty is not None

    @classmethod
    def from_run(cls, run, options: Options | None = None, **changes):
        """Compute the section of ``run`` (the data the section shows: see
        ``built_from``; a path is opened through :func:`arcnb.open`) with ``options``
        (``changes``: options set for this section alone) and return it; when the
        options name a ``figures_dir``, its files are then written there."""
        opts = options if options is not None else Options()
        opts = replace(opts, **changes) if changes else opts
        section = cls(cls._data(run), opts)
        if section.needs_truth and not getattr(section.run, "scored", True):
            section.empty = NO_TRUTH
        else:
            section.compute()
        section._computed = True
        if opts.figures_dir and section.empty is None:
            section.written = section.write(opts.figures_dir, overwrite=opts.overwrite)
        return section

    @classmethod
    def _data(cls, data):
        """What ``from_run`` is given, as the section's data: a path opened by the one
        opener of its kind."""
        if not isinstance(data, (str, os.PathLike)):
            return data
        if cls.built_from == "run":
            return front.open_run(data)
        raise ParameterError(f"the {cls.__name__} section is built from {cls.built_from}, "
                             f"not a path ({printable(str(data))})")

    def _require(self) -> None:
        """Refuse to show a section that holds nothing computed."""
        if not self._computed:
            name = type(self).__name__
            raise ParameterError(f"this {name} section was never computed: build it with "
                                 f"{name}.from_run(run, options)")

    # ------------------------------------------------------------ for subclasses
    def compute(self) -> None:
        """Fill ``tables``, ``numbers`` (or ``empty``)."""

    def body(self) -> list[str]:
        """The HTML fragments of the section (figures through ``image()``)."""
        return []

    def figures(self) -> list[Figure]:
        """The section's figures, the main one first."""
        return []

    # ------------------------------------------------------------------ the views
    def plot(self, ax=None):
        """Draw the section's main figure on ``ax`` (a new figure when None) and return
        its Axes (a figure-level view returns its Figure); ``ax_`` and ``figure_`` keep
        the Axes and the Figure drawn."""
        self._require()
        figs = self.figures() if self.empty is None else []
        if not figs:
            raise ParameterError(f"the {self.title or type(self).__name__} section has no "
                                 "figure" + (f" ({self.empty})" if self.empty else ""))
        out = self._draw(figs[0], ax)
        self.figure_ = _as_figure(out)
        if hasattr(out, "savefig"):  # a figure-level view
            self.ax_ = self.figure_.axes[0] if self.figure_.axes else None
        else:
            self.ax_ = out if hasattr(out, "get_figure") else np.ravel(out)[0]
        return out

    def figure(self, name: str | None = None):
        """The figure named ``name`` (default: the main one) as a matplotlib Figure."""
        self._require()
        figs = {f.name: f for f in (self.figures() if self.empty is None else [])}
        if not figs:
            raise ParameterError(f"the {self.title or type(self).__name__} section has no "
                                 "figure" + (f" ({self.empty})" if self.empty else ""))
        if name is not None and name not in figs:
            raise ParameterError(f"the {self.title or type(self).__name__} section has no "
                                 f"figure {name!r}: it has {', '.join(figs)}")
        spec = figs[name] if name else next(iter(figs.values()))
        return _as_figure(self._draw(spec, None))

    def files(self) -> list[str]:
        """The names of the files the section writes (figures in every format)."""
        self._require()
        if self.empty is not None:
            return []
        return [f"{f.name}.{fmt}" for f in self.figures() for fmt in self.options.formats]

    def write(self, folder: str | os.PathLike, *, overwrite: bool = True) -> list[Path]:
        """Write the section's figures into ``folder`` (every format of
        ``options.formats``); returns the paths."""
        import matplotlib.pyplot as plt

        self._require()
        folder = Path(folder)
        if not overwrite:
            for name in self.files():
                if os.path.lexists(folder / name):
                    raise refuse_overwrite(folder / name, "set overwrite = True")
        paths: list[Path] = []
        png: dict = {}
        for spec in self.figures():
            fig = self.figure_of(spec)
            folder.mkdir(parents=True, exist_ok=True)
            kw = {"bbox_inches": "tight"} if spec.tight else {}
            png[spec.name] = figure_bytes(fig, "png", **kw)  # drawn once: embedded and saved
            for fmt in self.options.formats:
                data = png[spec.name] if fmt == "png" else figure_bytes(fig, fmt, **kw)
                paths.append(atomic_write_bytes(folder / f"{spec.name}.{fmt}", data,
                                                overwrite=True))
            plt.close(fig)
        self._png = png
        return paths

    def to_html(self) -> str:
        """The section as HTML: its heading (with the id the contents list links to),
        its words, then its tables and figures, or what it lacks."""
        self._require()
        if self.optional and self.empty is not None:
            return ""
        parts = [f"<section class='arcnb-section' data-section='{escape(type(self).__name__)}'>"]
        if self.title:
            parts.append(heading(self.title, self.anchor or _slug(self.title)))
        if self.intro:
            parts.append(f"<p>{escape(self.intro)}</p>")
        if self.empty is not None:
            parts.append(note(self.empty, note_id=f"{self.anchor or 'arcnb-section'}-empty"))
        else:
            parts.extend(self.body())
        parts.append("</section>")
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        state = (f"empty: {self.empty}" if self.empty else f"tables: {', '.join(self.tables)}"
                 if self._computed else "not computed (use from_run)")
        return f"<{type(self).__name__} of {getattr(self.run, 'label', self.run)!r}; {state}>"

    # ------------------------------------------------------------------ helpers
    def image(self, name: str, alt: str = "") -> str:
        """The figure ``name`` as an embedded PNG (``data:`` URI)."""
        if self._png is None or name not in self._png:
            self._render_pngs()
        data = self._png.get(name)
        if data is None:
            return ""
        return (f"<img class='arcnb-figure' data-figure='{escape(name)}' alt='{escape(alt or name)}' "
                f"src='data:image/png;base64,{base64.b64encode(data).decode('ascii')}'>")

    def images(self) -> list[str]:
        """Every figure of the section (``figures()``), in order, as embedded PNGs."""
        return [self.image(f.name) for f in self.figures()]

    def figure_of(self, spec: Figure):
        """Draw ``spec`` on a new figure and return the Figure."""
        return _as_figure(self._draw(spec, None))

    def _draw(self, spec: Figure, ax):
        import matplotlib.pyplot as plt

        if self.options.width:
            with paper_style(self.options.width):
                if ax is None and spec.axes_level:
                    _, ax = plt.subplots(figsize=spec.figsize) if spec.figsize else plt.subplots()
                return spec.draw(ax)
        if ax is None and spec.axes_level and spec.figsize:
            _, ax = plt.subplots(figsize=spec.figsize)
        return spec.draw(ax)

    def _render_pngs(self) -> None:
        import matplotlib.pyplot as plt

        png = dict(self._png or {})
        for spec in self.figures():
            if spec.name in png:
                continue
            fig = self.figure_of(spec)
            png[spec.name] = figure_bytes(fig, "png",
                                          **({"bbox_inches": "tight"} if spec.tight else {}))
            plt.close(fig)
        self._png = png


class FilesSection(Section):
    """A section that writes its page's own files (tables, pages: not figures) into
    ``figures_dir`` and lists them (``tables["files"]``, filled by ``write``); without a
    folder it is empty, ``nothing`` saying so. A subclass implements ``write`` (and
    ``body``): compare's files, the ARC-AGI-3 report's tables and replays."""

    nothing: ClassVar[str] = "Nothing written (no folder given)."

    def compute(self):
        if not self.options.figures_dir:
            self.empty = self.nothing

    def files(self):
        return []


def section_names(namespace: dict) -> list[str]:
    """The sections a module defines, in order (its public :class:`Section` subclasses):
    the ``__all__`` of a module of sections, so that a new class needs no list of its own."""
    return [n for n, v in namespace.items() if isinstance(v, type) and issubclass(v, Section)
            and v.__module__ == namespace["__name__"] and not n.startswith("_")]


def _as_figure(out):
    """The Figure of what a plot function returned (a Figure, an Axes, an array of Axes)."""
    if hasattr(out, "savefig"):
        return out
    if hasattr(out, "get_figure"):
        return out.get_figure()
    return np.ravel(out)[0].get_figure()


def _slug(text: str) -> str:
    return "arcnb-" + "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")


def page_of(sections: Sequence[type], data, options: Options | None = None, *,
            title: str) -> str:
    """``sections`` of ``data`` (a run, several runs, a sweep: what the sections take)
    as one self-contained HTML page, in this process: no kernel, no notebook. The
    title, a contents list, then each section as it displays itself (figures embedded;
    with ``options.figures_dir`` they are also written there). The shipped notebooks
    show the same sections, one cell each."""
    body = "\n".join(s.from_run(data, options).to_html() for s in sections)
    return page(title, insert_contents(f"<main><h1>{escape(title)}</h1>{body}</main>"))
