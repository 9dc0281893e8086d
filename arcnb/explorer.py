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

import html
import io
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .columns import NEAR_MISS, is_near_miss
from .errors import ArcnbError, ExploreError, printable
from .front import PredictionsSource, RunDirSource, is_task_file, open_run
from .grids import best_attempt
from .report.sources import DEFAULT_DATASET, require_scored
from .resources import example
from .runs import PREDICTIONS, Run, unique_labels
from .scoring import Results
from .data import Dataset, load_dataset, normalize_task_id
from .plot import DIFF_OK_COLOR, DIFF_WRONG_COLOR, LINE_COLOR, diff_mask, gallery, grid_image
from .breakdown import group_membership
from .io import atomic_write_text

__all__ = ["explore", "Explorer", "ExploreError", "SELECTIONS"]

#: The selection filter: name -> definition (K is ``k=``, default 2).
SELECTIONS = {
    "all": "every test output",
    "solved": "solved@K: one of the first K attempts equals the truth",
    "failed": "not solved@K",
    "near_miss": "not solved@K, and cell_accuracy (best fraction of right cells among the "
                 "attempts with the truth's shape) is at least the near-miss threshold",
    "wrong_shape": "at least one attempt is a valid grid, but no scored attempt has the "
                   "truth's shape (shape_correct is False)",
    "invalid_or_missing": "the output is missing from the predictions, or one of its "
                          "attempts is not a valid grid",
    "disagree": "the runs (this one and the compared ones) do not all agree on solved@K",
}
_SELECTION_LABELS = {"all": "all", "solved": "solved", "failed": "failed",
                     "near_miss": "near misses", "wrong_shape": "wrong shape",
                     "invalid_or_missing": "invalid or missing", "disagree": "runs disagree"}
_ANY = "(any category)"


# ====================================================================== sources
@dataclass
class _RunView:
    """One scored run as the explorer sees it: its label, its Results and its table
    (``Results.outputs`` plus columns read from the run's files, aligned row by row
    with the explored run's outputs)."""

    label: str
    results: Any
    table: pd.DataFrame
    files: dict = field(default_factory=dict)


class _TasksOnly:
    """The few attributes :func:`arcnb.breakdown.group_membership` reads, for a dataset
    browsed without predictions."""

    def __init__(self, dataset, outputs: pd.DataFrame):
        self.dataset = dataset
        self.outputs = outputs
        self.tasks = pd.DataFrame({"task_id": dataset.task_ids})

    def truth(self, task_id: str, test_index: int):
        return self.dataset[task_id].test[test_index].output

    def test_input(self, task_id: str, test_index: int):
        return self.dataset[task_id].test[test_index].input


def _open_run(source, *, dataset=None, label: str | None = None, base=None):
    """``source`` -> ``(scored Run, label or None)`` through the front door
    (:func:`arcnb.front.open_run`); None when it is not a scored source (a dataset, or
    a name that is not a file). A compared predictions file is scored on the explored
    run's dataset (``base``, a Results) for its K."""
    if isinstance(source, Results):
        return open_run(source, label=label or "run"), label
    if isinstance(source, Run):
        return _scored(source), label or source.label
    if isinstance(source, str) and source == "default":
        run = open_run(PredictionsSource(str(example())), dataset=DEFAULT_DATASET)
        return run, label or run.label
    if not isinstance(source, (str, os.PathLike)):
        return None
    path = Path(source)
    if path.is_dir() and (path / PREDICTIONS).is_file():
        run = _scored(open_run(RunDirSource(str(path)), label=label))
        return run, run.label
    if path.is_file() and path.suffix.lower() == ".json" and not is_task_file(path):
        if base is not None:  # a compared predictions file is scored on the explored dataset
            return open_run(PredictionsSource(str(path)), dataset=base.dataset,
                            ks=base.ks), label or path.stem
        if dataset is None:
            raise ExploreError(f"{path} is a predictions file: pass dataset= (e.g. "
                               "'arc-agi-1:evaluation') to score it on")
        return open_run(PredictionsSource(str(path)), dataset=dataset), label or path.stem
    return None


def _scored(run):
    """``run`` when it has scores; an unscored run (a hidden test set) is refused in one
    line that says what can be browsed instead."""
    return require_scored(run, "the browser", error=ExploreError,
                          hint="Browse its tasks with explore(<dataset>), its predictions in "
                               "the report's gallery (arcnb report)")


def _open_dataset(source, dataset):
    if isinstance(source, Dataset):
        return source
    spec = dataset if source is None else source
    if spec is None:
        raise ExploreError("explore() needs a source: a run directory, a Results, a "
                           "predictions file with dataset=, or a dataset")
    try:
        return load_dataset(spec)
    except ArcnbError as exc:
        raise ExploreError(f"cannot explore {str(spec)!r}: it is not a run directory (no "
                           f"{PREDICTIONS}), a predictions file or a dataset ({exc})") from None


def _tasks_table(ds) -> pd.DataFrame:
    rows = []
    for t in ds:
        for i, p in enumerate(t.test):
            rows.append({"task_id": t.id, "test_index": i, "n_demonstrations": len(t.train),
                         "input_shape": f"{p.input.shape[0]}x{p.input.shape[1]}",
                         "truth_shape": None if p.output is None
                         else f"{p.output.shape[0]}x{p.output.shape[1]}",
                         "truth_h": 0 if p.output is None else p.output.shape[0],
                         "truth_w": 0 if p.output is None else p.output.shape[1]})
    return pd.DataFrame(rows, columns=["task_id", "test_index", "n_demonstrations",
                                       "input_shape", "truth_shape", "truth_h", "truth_w"])


def _align(main: _RunView, other: _RunView) -> _RunView:
    """Reorder ``other``'s table to the explored run's outputs; refuse other tasks or
    other truths."""
    keys = ["task_id", "test_index"]
    a = main.table[keys]
    b = other.table.set_index(keys)
    n_a, n_b = len(a), len(b)
    missing = pd.MultiIndex.from_frame(a).difference(b.index)
    if len(missing) or n_a != n_b:
        raise ExploreError(
            f"run {other.label!r} has {n_b} outputs over {other.results.tasks.shape[0]} tasks, "
            f"run {main.label!r} {n_a} over {main.results.tasks.shape[0]}"
            + (f" ({len(missing)} outputs of {main.label!r} are not in it, e.g. "
               f"{missing[0][0]} test {missing[0][1]})" if len(missing) else "")
            + ": compared runs must cover the same tasks")
    if other.results.dataset is not main.results.dataset:
        for tid, i in zip(a["task_id"], a["test_index"]):
            ta, tb = main.results.truth(tid, int(i)), other.results.truth(tid, int(i))
            if ta.shape != tb.shape or not np.array_equal(ta, tb):
                raise ExploreError(f"runs {main.label!r} and {other.label!r} disagree on the "
                                   f"truth of task {tid} test {i}: not the same dataset")
    other.table = b.loc[pd.MultiIndex.from_frame(a)].reset_index()
    return other


def _open_all(source, *, dataset, compare, labels):
    """-> (dataset, [run views] (empty for tasks only))."""
    opened = _open_run(source, dataset=dataset)
    if opened is None:
        return _open_dataset(source, dataset), []
    run, label = opened
    results = run.results
    default = "run" if label is None else str(label)
    if compare is None:
        compare = []
    elif isinstance(compare, (str, os.PathLike, Run, Results)):
        compare = [compare]
    views = [_RunView(default, results, run.table, {"run_dir": run.run_dir})]
    for c in compare:
        got = _open_run(c, base=results)
        if got is None:
            raise ExploreError(f"cannot compare with {c!r}: not a run directory, a Results "
                               "or a predictions file")
        other, lab = got
        views.append(_RunView(str(lab or f"run {len(views) + 1}"), other.results, other.table,
                              {"run_dir": other.run_dir}))
    names = list(labels) if labels is not None else [v.label for v in views]
    if len(names) != len(views):
        raise ExploreError(f"labels= has {len(names)} names for {len(views)} runs")
    for v, name in zip(views, unique_labels([str(n) for n in names])):
        v.label = name
    for v in views[1:]:
        _align(views[0], v)
    return results.dataset, views


# ====================================================================== drawing
_GAP = 14           # pixels between columns (and below a column)
_MARGIN = 10
_TITLE_PX = 12      # title font size in pixels
_HEADER_PX = 14
_COLUMN_TEXT_PX = 320  # a column's text is cut at this width or its grid's, the wider
_WHITE = (255, 255, 255)
_RIGHT = (26, 152, 80)
_WRONG = (214, 39, 40)
_TEXT = (34, 34, 34)
_MUTED = (110, 110, 110)


def _rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))


_FONTS: dict = {}


def _font(px: int, bold: bool = False):
    """DejaVu Sans (shipped with matplotlib; nothing is fetched) at ``px`` pixels."""
    key = (px, bold)
    if key not in _FONTS:
        import matplotlib
        from PIL import ImageFont

        name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
        path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name
        _FONTS[key] = ImageFont.truetype(str(path), px)
    return _FONTS[key]


_CELLS: dict = {}


def _value_cells(c: int) -> np.ndarray:
    """``[10, c, c, 3]`` uint8: the cell of each value 0-9 in its ARC colour (from
    :func:`arcnb.plot.grid_image`) with the digit written on it, black or white for
    contrast. Built once per cell size, so writing the values is a gather."""
    if c not in _CELLS:
        from PIL import Image, ImageDraw

        colors = grid_image(np.arange(10)[None, :])[0].astype(np.float32)  # [10, 3]
        lum = colors @ np.array([0.2126, 0.7152, 0.0722], np.float32)
        ink = np.where((lum < 128)[:, None], 255.0, 0.0)
        font = _font(max(6, int(c * 0.72)), bold=True)
        cells = np.empty((10, c, c, 3), np.uint8)
        for d in range(10):
            im = Image.new("L", (c, c), 0)
            ImageDraw.Draw(im).text((c / 2, c / 2 + 0.5), str(d), fill=255, font=font, anchor="mm")
            a = np.asarray(im, np.float32)[..., None] / 255.0
            cells[d] = (colors[d] * (1 - a) + ink[d] * a + 0.5).astype(np.uint8)
        _CELLS[c] = cells
    return _CELLS[c]


def _upsample(img: np.ndarray, c: int) -> np.ndarray:
    """``h x w x 3`` -> ``(h*c+1) x (w*c+1) x 3``, each cell a c x c block."""
    h, w = img.shape[:2]
    yy = np.minimum(np.arange(h * c + 1) // c, h - 1)
    xx = np.minimum(np.arange(w * c + 1) // c, w - 1)
    return img[yy[:, None], xx[None, :]]


def _lines(tile: np.ndarray, c: int, color) -> np.ndarray:
    if c >= 4:
        tile[::c, :] = color
        tile[:, ::c] = color
    else:  # too small for cell lines: only the border
        tile[[0, -1], :] = color
        tile[:, [0, -1]] = color
    return tile


def _grid_tile(g: np.ndarray, c: int, values: bool) -> np.ndarray:
    """A grid as pixels: :func:`arcnb.plot.grid_image` colours, c x c per cell, 1-px cell
    lines, and the cell values written in when ``values`` (and cells are >= 8 px)."""
    if values and c >= 8:
        h, w = g.shape
        tile = np.empty((h * c + 1, w * c + 1, 3), np.uint8)
        tile[:-1, :-1] = _value_cells(c)[g].transpose(0, 2, 1, 3, 4).reshape(h * c, w * c, 3)
        tile[-1, :] = tile[:, -1] = 0
    else:
        tile = _upsample(grid_image(g), c)
    return _lines(tile, c, _rgb(LINE_COLOR))


def _hatch_tile(shape, c: int, color) -> np.ndarray:
    """A placeholder of ``shape`` cells: white with diagonal stripes of ``color``."""
    h, w = shape
    tile = np.full((h * c + 1, w * c + 1, 3), 255, np.uint8)
    yy, xx = np.ogrid[: tile.shape[0], : tile.shape[1]]
    tile[((yy + xx) % 8) < 2] = color
    tile[[0, -1], :] = color
    tile[:, [0, -1]] = color
    return tile


def _diff_tile(mask: np.ndarray, c: int) -> np.ndarray:
    img = np.empty(mask.shape + (3,), np.uint8)
    img[...] = _rgb(DIFF_OK_COLOR)
    img[mask] = _rgb(DIFF_WRONG_COLOR)
    return _lines(_upsample(img, c), c, (200, 200, 200))


@dataclass
class _Panel:
    """One picture of the view: title lines ``(text, rgb)``, its pixels, and what it
    shows (``kind``, ``run``, the grid drawn) for scripts and tests."""

    lines: list
    image: np.ndarray
    kind: str
    grid: np.ndarray | None = None
    run: str | None = None


def _fit(text, font, max_px: int) -> str:
    """``text`` as one drawable line at most ``max_px`` wide: control characters shown
    escaped (:func:`arcnb.errors.printable`), cut with an ellipsis where too long."""
    text = printable(text)
    max_px = max(int(max_px), 20)
    if len(text) > max_px:              # no glyph is narrower than one pixel
        text = text[:max_px]
    if font.getlength(text) <= max_px:
        return text
    lo, hi = 0, len(text)               # longest prefix that fits with its ellipsis
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if font.getlength(text[:mid] + "…") <= max_px:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "…"


def _compose(sections, *, max_width: int, header: str):
    """Lay out ``sections`` (``(title, columns)``; a column is a list of panels, drawn
    top to bottom) left to right, wrapping at ``max_width``; returns the RGB array and
    the placements (one dict per panel: kind, run, x, y, w, h of its image, grid)."""
    from PIL import Image, ImageDraw

    font, bold = _font(_TITLE_PX), _font(_HEADER_PX, bold=True)
    lh, hh = _TITLE_PX + 4, _HEADER_PX + 6
    # the frame is sized by the grids; text (task ids, labels, categories) is cut to fit
    line_px = max(int(max_width) - 2 * _MARGIN, 200)
    header = _fit(header, bold, line_px)
    texts, tiles, places = [(_MARGIN, _MARGIN, header, _TEXT, bold)], [], []
    y = _MARGIN + hh + 4
    width = _MARGIN * 2 + int(bold.getlength(header))
    for title, columns in sections:
        title = _fit(title, bold, line_px)
        texts.append((_MARGIN, y, title, _MUTED, bold))
        width = max(width, _MARGIN * 2 + int(bold.getlength(title)))
        y += hh
        x, row_h = _MARGIN, 0
        for col in columns:
            img_w = max(p.image.shape[1] for p in col)
            text_px = max(img_w, min(_COLUMN_TEXT_PX, line_px))
            for p in col:
                p.lines = [(_fit(t, font, text_px), c) for t, c in p.lines]
            cw = max(img_w, max(int(font.getlength(t)) + 2 for p in col for t, _ in p.lines))
            if x > _MARGIN and x + cw > max_width - _MARGIN:
                x, y, row_h = _MARGIN, y + row_h + _GAP, 0
            cy = y
            for p in col:
                for t, color in p.lines:
                    texts.append((x, cy, t, color, font))
                    cy += lh
                tiles.append((x, cy + 2, p.image))
                places.append({"kind": p.kind, "run": p.run, "title": " ".join(t for t, _ in p.lines),
                               "x": x, "y": cy + 2, "h": p.image.shape[0], "w": p.image.shape[1],
                               "grid": p.grid})
                cy += p.image.shape[0] + 2 + _GAP // 2
            row_h = max(row_h, cy - y)
            x += cw + _GAP
            width = max(width, x - _GAP + _MARGIN)
        y += row_h + _GAP
    canvas = np.full((y + _MARGIN - _GAP, max(width, 200), 3), 255, np.uint8)
    for x, ty, img in tiles:
        canvas[ty: ty + img.shape[0], x: x + img.shape[1]] = img
    im = Image.fromarray(canvas)
    draw = ImageDraw.Draw(im)
    for x, ty, t, color, f in texts:
        draw.text((x, ty), t, fill=color, font=f)
    return im, places


# ====================================================================== helpers
def _shape(g) -> str:
    return "none" if g is None else f"{g.shape[0]}x{g.shape[1]}"


def _fmt(v, digits: int = 3) -> str:
    if v is None or v is pd.NA:
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        return "–" if not np.isfinite(v) else f"{v:.{digits}f}"
    return str(v)


def _choose(attempts: list, truth, row, attempt, max_k: int):
    """``(0-based index or None, grid or None)`` of the attempt to draw.

    ``"best"``: the table's ``best_attempt`` (:func:`arcnb.grids.best_attempt`, the one
    rule: the first right attempt among the first ``max_k``, else the right-shaped one
    with the most right cells, else the first valid one). An integer picks that attempt
    (1-based)."""
    if attempt != "best":
        j = int(attempt) - 1
        return (j, attempts[j]) if j < len(attempts) else (j, None)
    ba = row.get("best_attempt") if row is not None else None
    if ba is not None and not pd.isna(ba):  # the table's column: nothing recomputed
        return int(ba) - 1, attempts[int(ba) - 1]
    if truth is not None:
        j, _ = best_attempt(truth, attempts, max_k)
        if j is not None:
            return j, attempts[j]
    return (0, None) if attempts[:max_k] else (None, None)


def _attempt_words(label: str, j, g, truth, n_attempts: int) -> tuple[str, str | None]:
    """Title of an attempt panel and, when something is off, a sentence saying what."""
    who = f"{label}: " if label else ""
    if j is None or (g is None and j >= n_attempts):
        if n_attempts == 0:
            return f"{who}no attempt", (f"{who}no attempt: this output is missing from the "
                                        "predictions")
        return f"{who}no attempt {j + 1}", f"{who}there is no attempt {j + 1} (only {n_attempts})"
    if g is None:
        return (f"{who}attempt {j + 1}: invalid",
                f"{who}attempt {j + 1} is not a valid grid (malformed in the predictions)")
    if truth is not None and g.shape != truth.shape:
        return (f"{who}attempt {j + 1}: {_shape(g)}",
                f"{who}shape mismatch: truth {_shape(truth)}, attempt {j + 1} {_shape(g)}")
    return f"{who}attempt {j + 1}: {_shape(g)}", None


# ====================================================================== explorer
class Explorer:
    """A browser over the test outputs of a run (or the tasks of a dataset).

    Build it with :func:`explore`. State: the selection (:attr:`select`,
    :attr:`category`, :attr:`near_miss`), the attempt shown (:attr:`attempt`) and
    :attr:`values`; :attr:`items` is the selected rows in order and :attr:`current`
    the output shown. Every change redraws the widget when one is displayed.
    """

    def __init__(self, dataset, runs: Sequence[_RunView], *, select="all", category=None,
                 taxonomy=None, near_miss: float = NEAR_MISS, k: int = 2, attempt="best",
                 values: bool = False, show_all: bool = False, cell: int | None = None,
                 max_width: int = 1200):
        self.dataset = dataset
        self.runs = list(runs)
        self.k = int(k)
        self.taxonomy = "structural" if taxonomy is None else taxonomy
        self.show_all = bool(show_all)
        self.cell, self.max_width = cell, int(max_width)
        #: The last note to the user (e.g. a search that widened the selection).
        self.message = ""
        self._widget = None
        self._w: dict = {}
        self._syncing = False
        #: Every output: the Results table, plus the compared runs' ``solved@K (label)``
        #: and ``solved_by`` columns.
        self.table = self._build_table()
        self._max_attempts = max([1] + [int(r.table["n_attempts"].max()) for r in self.runs
                                        if len(r.table)])
        self._categories, self._order = self._build_categories()
        self._select, self._category, self._near_miss = "all", None, float(near_miss)
        self._attempt, self._values = "best", bool(values)
        self._pos = 0
        self._sel = np.arange(len(self.table))
        self.configure(select=select, category=category, near_miss=near_miss, attempt=attempt)

    # ------------------------------------------------------------ construction
    @property
    def results(self):
        """The explored run's Results (None when browsing a dataset alone)."""
        return self.runs[0].results if self.runs else None

    @property
    def labels(self) -> list[str]:
        """The runs' labels (this one first, then the compared ones)."""
        return [r.label for r in self.runs]

    def _solved_col(self, table: pd.DataFrame) -> np.ndarray:
        col = f"solved@{self.k}"
        if col in table.columns:
            return table[col].to_numpy(bool)
        first = table["first_correct"].astype("Float64").fillna(np.inf).to_numpy(float)
        return first <= self.k

    def _build_table(self) -> pd.DataFrame:
        if not self.runs:
            return _tasks_table(self.dataset)
        table = self.runs[0].table.copy()
        if len(self.runs) > 1:
            for r in self.runs:
                table[f"solved@{self.k} ({r.label})"] = self._solved_col(r.table)
            solved = np.column_stack([self._solved_col(r.table) for r in self.runs])
            table["solved_by"] = [", ".join(np.asarray(self.labels)[s]) for s in solved]
        return table

    def _build_categories(self):
        """``{category: sorted row positions}`` from :func:`arcnb.breakdown.group_membership`
        on the explored run (or the dataset), and the categories' order."""
        if self.taxonomy is False:
            return {}, []
        src = self.results if self.runs else _TasksOnly(self.dataset, self.table)
        mem, info = group_membership(src, self.taxonomy)
        keys = self.table[["task_id", "test_index"]].assign(_pos=np.arange(len(self.table)))
        mem = mem.merge(keys, on=["task_id", "test_index"], how="inner")
        groups = {str(g): np.unique(d["_pos"].to_numpy()) for g, d in mem.groupby("group")}
        order = [str(g) for g in info.get("order", []) if str(g) in groups]
        order += sorted(g for g in groups if g not in order)
        self.taxonomy_name = info.get("grouping", str(self.taxonomy))
        return groups, order

    # ------------------------------------------------------------ selection
    @property
    def categories(self) -> list[str]:
        """The categories of the taxonomy that hold at least one output, in order."""
        return list(self._order)

    def selection_mask(self, select: str | None = None, *, near_miss: float | None = None
                       ) -> np.ndarray:
        """Boolean mask over :attr:`table` for a selection (see :data:`SELECTIONS`),
        before the category filter."""
        select = self._select if select is None else select
        thr = self._near_miss if near_miss is None else float(near_miss)
        t = self.table
        if select not in SELECTIONS:
            raise ExploreError(f"unknown selection {select!r}: use one of {', '.join(SELECTIONS)}")
        if select == "all":
            return np.ones(len(t), bool)
        if not self.runs:
            raise ExploreError(f"selection {select!r} needs predictions; a dataset alone "
                               "browses its tasks (select='all')")
        solved = self._solved_col(t)
        if select == "solved":
            return solved
        if select == "failed":
            return ~solved
        if select == "near_miss":
            return is_near_miss(solved, t["cell_accuracy"], thr)
        if select == "wrong_shape":
            valid = t["n_attempts"].to_numpy() > t["n_invalid_attempts"].to_numpy()
            return valid & ~t["shape_correct"].to_numpy(bool)
        if select == "invalid_or_missing":
            return t["missing"].to_numpy(bool) | (t["n_invalid_attempts"].to_numpy() > 0)
        if len(self.runs) < 2:
            raise ExploreError("selection 'disagree' needs compare= (a second run)")
        s = np.column_stack([self._solved_col(r.table) for r in self.runs])
        return s.any(axis=1) & ~s.all(axis=1)

    def category_mask(self, category=None) -> np.ndarray:
        """Boolean mask over :attr:`table`: outputs of tasks in ``category`` (or any of
        several); all True for None."""
        mask = np.zeros(len(self.table), bool)
        if category is None:
            mask[:] = True
            return mask
        wanted = [category] if isinstance(category, str) else list(category)
        for c in wanted:
            if c not in self._categories:
                shown = ", ".join(self._order[:12]) + (" ..." if len(self._order) > 12 else "")
                raise ExploreError(f"no output is in category {c!r} of taxonomy "
                                   f"{getattr(self, 'taxonomy_name', self.taxonomy)!r}; "
                                   f"categories: {shown or 'none'}")
            mask[self._categories[c]] = True
        return mask

    def configure(self, *, select=None, category=..., near_miss=None, attempt=None,
                  values=None) -> "Explorer":
        """Change the selection, category (None: any), near-miss threshold, attempt shown
        (``"best"`` or 1-based) or the show-values toggle; the current output is kept
        when it stays in the selection, else the first selected output is shown."""
        cur = self.current
        if attempt is not None:
            if attempt != "best" and not (isinstance(attempt, (int, np.integer)) and attempt >= 1):
                raise ExploreError(f"attempt must be 'best' or a number from 1, got {attempt!r}")
            self._attempt = attempt if attempt == "best" else int(attempt)
        if values is not None:
            self._values = bool(values)
        new_sel = self._select if select is None else select
        new_cat = self._category if category is ... else category
        new_thr = self._near_miss if near_miss is None else float(near_miss)
        if not 0.0 <= new_thr <= 1.0:
            raise ExploreError(f"near_miss must be in [0, 1], got {new_thr}")
        mask = self.selection_mask(new_sel, near_miss=new_thr) & self.category_mask(new_cat)
        self._select, self._category, self._near_miss = new_sel, new_cat, new_thr
        self._sel = np.flatnonzero(mask)
        self._pos = 0
        if cur is not None:
            at = self._position_of(cur)
            if at is not None:
                self._pos = at
        self._refresh(filters=True)
        return self

    select = property(lambda self: self._select,
                      lambda self, v: self.configure(select=v), doc="the selection filter")
    category = property(lambda self: self._category,
                        lambda self, v: self.configure(category=v), doc="the category filter")
    near_miss = property(lambda self: self._near_miss,
                         lambda self, v: self.configure(near_miss=v),
                         doc="the near-miss threshold on cell_accuracy")
    attempt = property(lambda self: self._attempt,
                       lambda self, v: self.configure(attempt=v), doc="'best' or 1-based")
    values = property(lambda self: self._values,
                      lambda self, v: self.configure(values=v), doc="write the cell values")

    @property
    def items(self) -> pd.DataFrame:
        """The current selection: rows of :attr:`table` (the Results table, plus the
        compared runs' ``solved@K (label)`` and ``solved_by``) in browsing order."""
        return self.table.iloc[self._sel].reset_index(drop=True)

    def __len__(self) -> int:
        return len(self._sel)

    @property
    def position(self) -> int | None:
        """0-based position of the current output in :attr:`items` (None when empty)."""
        return self._pos if len(self._sel) else None

    @property
    def current(self) -> tuple[str, int] | None:
        """``(task_id, test_index)`` of the output shown; None for an empty selection."""
        if not len(self._sel):
            return None
        row = self.table.iloc[self._sel[self._pos]]
        return str(row["task_id"]), int(row["test_index"])

    def _position_of(self, key: tuple[str, int]) -> int | None:
        t = self.table
        hit = np.flatnonzero((t["task_id"].to_numpy()[self._sel] == key[0])
                             & (t["test_index"].to_numpy()[self._sel] == key[1]))
        return int(hit[0]) if len(hit) else None

    # ------------------------------------------------------------ navigation
    def go(self, where) -> "Explorer":
        """Show an output: an index into :attr:`items` (negative counts from the end), a
        task id (its first test output; a unique prefix is enough; ``.json`` and
        ``_vN`` suffixes are ignored) or ``(task_id, test_index)``. A task outside the
        current selection widens it to ``all`` (any category) and says so in
        :attr:`message`."""
        self.message = ""
        if isinstance(where, (int, np.integer)) and not isinstance(where, bool):
            n = len(self._sel)
            i = int(where) + (n if where < 0 else 0)
            if not 0 <= i < n:
                raise ExploreError(f"index {where} is outside the selection of {n} outputs")
            self._pos = i
            self._refresh()
            return self
        key = self._resolve(where)
        at = self._position_of(key)
        if at is None:
            self.configure(select="all", category=None)
            at = self._position_of(key)
            self.message = (f"task {key[0]} is not in the selection; showing all outputs")
        self._pos = at
        self._refresh()
        return self

    def _resolve(self, where) -> tuple[str, int]:
        if isinstance(where, tuple) and len(where) == 2:
            tid, ti = str(where[0]).strip(), int(where[1])
        elif isinstance(where, str):
            tid, ti = where.strip(), None
        else:
            raise ExploreError(f"go() takes an index, a task id or (task_id, test_index), "
                               f"got {where!r}")
        ids = self.table["task_id"].to_numpy()
        if tid not in set(ids):
            norm = normalize_task_id(tid) if tid else tid
            starts = sorted({t for t in ids if t.startswith(norm)}) if norm else []
            if norm in set(ids):
                tid = norm
            elif len(starts) == 1:
                tid = starts[0]
            elif len(starts) > 1:
                raise ExploreError(f"{len(starts)} task ids start with {tid!r}: "
                                   f"{', '.join(starts[:6])}{' ...' if len(starts) > 6 else ''}")
            else:
                raise ExploreError(f"no task {tid!r} here")
        rows = self.table[self.table["task_id"].to_numpy() == tid]
        if ti is None:
            in_sel = [int(i) for i in rows["test_index"]
                      if self._position_of((tid, int(i))) is not None]
            ti = in_sel[0] if in_sel else int(rows["test_index"].iloc[0])
        elif ti not in set(rows["test_index"].astype(int)):
            raise ExploreError(f"task {tid} has no test output {ti} "
                               f"(it has {len(rows)})")
        return tid, ti

    def next(self) -> "Explorer":
        """The next output of the selection (wraps around)."""
        if len(self._sel):
            self._pos = (self._pos + 1) % len(self._sel)
        self.message = ""
        self._refresh()
        return self

    def prev(self) -> "Explorer":
        """The previous output of the selection (wraps around)."""
        if len(self._sel):
            self._pos = (self._pos - 1) % len(self._sel)
        self.message = ""
        self._refresh()
        return self

    # ------------------------------------------------------------ the view
    def _row(self, run: _RunView | None = None):
        if not len(self._sel):
            return None
        t = self.table if run is None else run.table
        return t.iloc[self._sel[self._pos]]

    def _cell_size(self, grids: Iterable[np.ndarray]) -> int:
        if self.cell:
            return int(self.cell)
        biggest = max(max(g.shape) for g in grids if g is not None)
        c = max(2, min(24, 150 // biggest))
        return max(c, 13) if self._values else c

    def panels(self) -> tuple[str, list]:
        """The current view as ``(header, sections)``; a section is ``(title, columns)``
        and a column a list of ``_Panel`` (drawn top to bottom)."""
        key = self.current
        if key is None:
            return "no output in this selection", []
        tid, ti = key
        task = self.dataset[tid]
        test = task.test[ti]
        truth = test.output
        chosen = []
        for r in self.runs:
            attempts = list(r.results.attempts(tid, ti))
            j, g = _choose(attempts, truth, self._row(r), self._attempt, max(r.results.ks))
            chosen.append((r, attempts, j, g))
        grids = [p.input for p in task.train] + [p.output for p in task.train]
        grids += [test.input, truth] + [g for *_, g in chosen]
        c = self._cell_size(grids)
        v = self._values
        demos = [[_Panel([(f"demo {n + 1} input {_shape(p.input)}", _TEXT)],
                         _grid_tile(p.input, c, v), "demo_input", p.input),
                  _Panel([(f"demo {n + 1} output {_shape(p.output)}", _TEXT)],
                         _grid_tile(p.output, c, v) if p.output is not None
                         else _hatch_tile(p.input.shape, c, (170, 170, 170)),
                         "demo_output", p.output)] for n, p in enumerate(task.train)]
        test_col = [_Panel([(f"test input {_shape(test.input)}", _TEXT)],
                           _grid_tile(test.input, c, v), "test_input", test.input)]
        if truth is not None:
            test_col.append(_Panel([(f"truth {_shape(truth)}", _TEXT)], _grid_tile(truth, c, v),
                                   "truth", truth))
        cols = [test_col] + [self._run_column(r, attempts, j, g, truth, c)
                             for r, attempts, j, g in chosen]
        n_test = len(task.test)
        sections = [(f"demonstrations ({len(task.train)} pairs)", demos),
                    (f"test {ti + 1} of {n_test}", cols)]
        where = f"{self._pos + 1} of {len(self._sel)} ({self._selection_text()})"
        return f"task {tid}  ·  test {ti + 1} of {n_test}  ·  {where}", sections

    def _run_column(self, r: _RunView, attempts, j, g, truth, c) -> list:
        label = r.label if len(self.runs) > 1 else ""
        title, _ = _attempt_words(label, j, g, truth, len(attempts))
        solved = bool(self._solved_col(r.table)[self._sel[self._pos]])
        right = g is not None and truth is not None and g.shape == truth.shape \
            and bool(np.array_equal(g, truth))
        status = ("✓ right" if right else "✗ wrong") + (f"  (solved@{self.k})" if solved else
                                                        f"  (not solved@{self.k})")
        color = _RIGHT if right else _WRONG
        shape = truth.shape if truth is not None else (g.shape if g is not None else (3, 3))
        img = _grid_tile(g, c, self._values) if g is not None else _hatch_tile(shape, c, _WRONG)
        col = [_Panel([(title, _TEXT), (status, color)], img, "attempt", g, r.label)]
        if truth is None:
            return col
        mask = diff_mask(truth, g)
        if mask is None:
            words = "no attempt" if g is None else f"shape mismatch: {_shape(truth)} vs {_shape(g)}"
            col.append(_Panel([("difference", _TEXT), (words, _WRONG)],
                              _hatch_tile(truth.shape, c, _WRONG), "difference", None, r.label))
        else:
            n = int(mask.sum())
            words = "all cells right" if n == 0 else f"{n} of {mask.size} cells wrong"
            col.append(_Panel([("difference", _TEXT), (words, _RIGHT if n == 0 else _WRONG)],
                              _diff_tile(mask, c), "difference", mask, r.label))
        return col

    def _selection_text(self) -> str:
        s = _SELECTION_LABELS[self._select]
        if self._select == "near_miss":
            s += f" ≥ {self._near_miss:.2f}"
        if self._category is not None:
            cats = [self._category] if isinstance(self._category, str) else self._category
            s += f", category {' or '.join(cats)}"
        return s

    def render(self) -> np.ndarray:
        """The current view as an ``H x W x 3`` uint8 array (what the widget shows)."""
        return np.asarray(self._render()[0])

    def layout(self) -> list[dict]:
        """Where each panel of the current view sits in :meth:`render`'s image: dicts
        with ``kind`` (demo_input, demo_output, test_input, truth, attempt,
        difference), ``run``, ``title``, ``x``, ``y``, ``w``, ``h`` and ``grid``."""
        return self._render()[1]

    def _render(self):
        header, sections = self.panels()
        return _compose(sections, max_width=self.max_width, header=header)

    def png(self) -> bytes:
        """The current view as PNG bytes."""
        im, _ = self._render()
        buf = io.BytesIO()
        im.save(buf, format="PNG", compress_level=1)
        return buf.getvalue()

    # ------------------------------------------------------------ numbers in words
    def info_html(self) -> str:
        """The current output's numbers as HTML (every user string escaped): solved@K,
        first right attempt, cell accuracy, partial credit, shapes, votes, confidences
        and costs when the run has them, one row per run, and what is off in words."""
        key = self.current
        if key is None:
            return (f"<div class='arcnb-explore-info'><b>no output</b> in the selection "
                    f"({html.escape(self._selection_text())})</div>")
        tid, ti = key
        head = (f"<b class='arcnb-explore-task'>{html.escape(tid)}</b> "
                f"<span class='arcnb-explore-test'>test {ti + 1} of "
                f"{len(self.dataset[tid].test)}</span> · output {self._pos + 1} of "
                f"{len(self._sel)} in <i>{html.escape(self._selection_text())}</i>")
        if not self.runs:
            return f"<div class='arcnb-explore-info'>{head}</div>"
        rows, notes = self._info_rows(tid, ti)
        cols = list(rows[0])
        table = ("<table class='arcnb-explore-numbers'><tr>"
                 + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"
                 + "".join("<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in cols)
                           + "</tr>" for r in rows) + "</table>")
        body = "".join(f"<div class='arcnb-explore-note'>{html.escape(n)}</div>" for n in notes)
        if len(self.runs) > 1:
            who = self.table.iloc[self._sel[self._pos]]["solved_by"]
            body = (f"<div class='arcnb-explore-solved-by'>solved@{self.k} by: "
                    f"{html.escape(who or 'no run')}</div>") + body
        return f"<div class='arcnb-explore-info'>{head}{table}{body}</div>"

    def _info_rows(self, tid: str, ti: int):
        truth = self.dataset[tid].test[ti].output
        rows, notes = [], []
        extra_cols = sorted({c for r in self.runs for c in r.table.columns
                             if c.startswith(("votes_", "confidence_", "cost", "n_views",
                                              "n_valid_views", "n_distinct"))})
        for r in self.runs:
            row = self._row(r)
            attempts = list(r.results.attempts(tid, ti))
            j, g = _choose(attempts, truth, row, self._attempt, max(r.results.ks))
            d = {"run": r.label}
            for k in r.results.ks:
                d[f"solved@{k}"] = _fmt(bool(row[f"solved@{k}"]))
            d["first right attempt"] = _fmt(row["first_correct"])
            d["cell accuracy"] = _fmt(row["cell_accuracy"])
            d["partial credit"] = _fmt(row["partial_credit"])
            d["truth"] = _shape(truth)
            d["attempts"] = " / ".join(_shape(a) if a is not None else "invalid"
                                       for a in attempts) or "missing"
            d["shown"] = "–" if j is None else f"attempt {j + 1}"
            for c in extra_cols:
                d[c] = _fmt(row[c]) if c in row.index and not pd.isna(row[c]) else "–"
            rows.append(d)
            _, words = _attempt_words(r.label if len(self.runs) > 1 else "", j, g, truth,
                                      len(attempts))
            if words:
                notes.append(words)
        keys = list(dict.fromkeys(k for d in rows for k in d))
        return [{k: d.get(k, "–") for k in keys} for d in rows], notes

    # ------------------------------------------------------------ static gallery
    def gallery(self, **kwargs):
        """The current selection as a static :func:`arcnb.plot.gallery` figure (truth |
        prediction | difference per output, in browsing order), for saving with
        :func:`arcnb.plot.save`. Keyword arguments go to ``gallery`` (``max_items``,
        ``ncols``, ``attempt``, ``title``, ...)."""
        if not self.runs:
            raise ExploreError("a gallery needs predictions; this explorer browses a dataset")
        kwargs.setdefault("title", f"{self.runs[0].label}: {self._selection_text()}")
        kwargs.setdefault("k", self.k)
        items = self.items
        cols = [c for c in self.results.outputs.columns if c in items.columns]
        return gallery(self.results, "all", rows=items[cols], **kwargs)

    def save_selection(self, path, *, overwrite: bool = False) -> Path:
        """Write the selected task ids (one per line, browsing order, no repeats) to
        ``path``: a task filter that ``--tasks`` / ``tasks=`` read back."""
        ids = list(dict.fromkeys(self.items["task_id"]))
        head = f"# {len(ids)} tasks: {self._selection_text()}\n"
        return atomic_write_text(Path(path), head + "".join(f"{t}\n" for t in ids),
                                 overwrite=overwrite)

    # ------------------------------------------------------------ widget
    @property
    def widget(self):
        """The ipywidgets browser (built on first use)."""
        if self._widget is None:
            self._widget = _build_widget(self)
            self._refresh(filters=True)
        return self._widget

    def _refresh(self, filters: bool = False) -> None:
        if self._widget is None:
            return
        _sync_widget(self, self._w, filters=filters)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if self.show_all:
            import matplotlib.pyplot as plt

            fig = self.gallery()
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=fig.dpi)
            plt.close(fig)
            return {"image/png": buf.getvalue(), "text/plain": repr(self)}
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, dict):  # a frontend without widgets shows this text instead
            bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        what = ", ".join(self.labels) if self.runs else f"dataset {self.dataset.name}"
        cur = self.current
        at = "empty" if cur is None else f"at {cur[0]} test {cur[1]}"
        return (f"Explorer({what}: {len(self._sel)} of {len(self.table)} outputs in "
                f"{self._selection_text()}, {at})")


# ====================================================================== widget
def _option_labels(ex: Explorer) -> list:
    cat = ex.category_mask(ex.category)
    opts = []
    for key, lab in _SELECTION_LABELS.items():
        try:
            n = int((ex.selection_mask(key) & cat).sum())
        except ExploreError:
            continue
        opts.append((f"{lab} ({n})", key))
    return opts


def _category_options(ex: Explorer) -> list:
    sel = ex.selection_mask()
    opts = [(f"{_ANY} ({int(sel.sum())})", _ANY)]
    for c in ex.categories:
        opts.append((f"{c} ({int(sel[ex._categories[c]].sum())})", c))
    return opts


def _build_widget(ex: Explorer):
    import ipywidgets as W

    auto = W.Layout(width="auto")
    w = {
        "prev": W.Button(description="◀ previous", layout=auto, tooltip="previous output"),
        "next": W.Button(description="next ▶", layout=auto, tooltip="next output"),
        "index": W.IntSlider(description="output", min=1, max=max(1, len(ex)), value=1,
                             continuous_update=False, layout=W.Layout(width="340px")),
        "search": W.Text(placeholder="task id, then Enter", description="go to",
                         continuous_update=False, layout=W.Layout(width="260px")),
        "select": W.Dropdown(description="show", options=[("all", "all")], value="all",
                             layout=W.Layout(width="260px")),
        "near": W.FloatSlider(description="near miss ≥", min=0.0, max=1.0, step=0.01,
                              value=ex.near_miss, continuous_update=False,
                              readout_format=".2f", layout=W.Layout(width="300px"),
                              style={"description_width": "initial"}),
        "category": W.Dropdown(description="category", options=[(_ANY, _ANY)], value=_ANY,
                               layout=W.Layout(width="320px")),
        "attempt": W.Dropdown(description="attempt",
                              options=[("best", "best")] + [(f"attempt {j}", j) for j in
                                                            range(1, ex._max_attempts + 1)],
                              value="best", layout=W.Layout(width="200px")),
        "values": W.Checkbox(description="show values", value=ex.values, indent=False,
                             layout=auto),
        "info": W.HTML(),
        "image": W.Image(format="png", layout=W.Layout(max_width="100%", height="auto",
                                                         align_self="flex-start")),
        "status": W.HTML(),
    }
    if not ex.runs:
        for name in ("select", "near", "attempt"):
            w[name].disabled = True
    if not ex._order:
        w["category"].disabled = True
    ex._w = w

    def guarded(fn):
        def handler(change):
            if ex._syncing:
                return
            try:
                fn(change)
            except ExploreError as exc:
                ex.message = str(exc)
                ex._refresh()
        return handler

    w["prev"].on_click(lambda _b: guarded(lambda c: ex.prev())(None))
    w["next"].on_click(lambda _b: guarded(lambda c: ex.next())(None))
    w["index"].observe(guarded(lambda c: ex.go(int(c["new"]) - 1)), names="value")
    w["search"].observe(guarded(lambda c: ex.go(c["new"]) if c["new"].strip() else None),
                        names="value")
    w["select"].observe(guarded(lambda c: ex.configure(select=c["new"])), names="value")
    w["near"].observe(guarded(lambda c: ex.configure(near_miss=c["new"])), names="value")
    w["category"].observe(guarded(lambda c: ex.configure(
        category=None if c["new"] == _ANY else c["new"])), names="value")
    w["attempt"].observe(guarded(lambda c: ex.configure(attempt=c["new"])), names="value")
    w["values"].observe(guarded(lambda c: ex.configure(values=c["new"])), names="value")
    rows = [W.HBox([w["prev"], w["next"], w["index"], w["search"]]),
            W.HBox([w["select"], w["near"], w["category"]]),
            W.HBox([w["attempt"], w["values"]]), w["info"], w["status"], w["image"]]
    box = W.VBox(rows)
    box.add_class("arcnb-explore")
    return box


@contextmanager
def _quiet(ex: Explorer):
    ex._syncing = True
    try:
        yield
    finally:
        ex._syncing = False


def _sync_widget(ex: Explorer, w: dict, *, filters: bool) -> None:
    """Push the explorer's state into the widgets, then redraw the image and numbers."""
    with _quiet(ex):
        n = len(ex)
        if filters:
            w["select"].options = _option_labels(ex)
            w["select"].value = ex.select
            w["category"].options = _category_options(ex)
            cat = ex.category if isinstance(ex.category, str) else None
            w["category"].value = cat if cat in ex._categories else _ANY
            w["near"].value = ex.near_miss
            w["attempt"].value = ex.attempt if ex.attempt == "best" or \
                ex.attempt <= ex._max_attempts else "best"
            w["values"].value = ex.values
        if w["index"].max != max(1, n):
            w["index"].max = max(1, n)
        w["index"].value = (ex.position or 0) + 1
        w["index"].disabled = n <= 1
        w["prev"].disabled = w["next"].disabled = n <= 1
    w["image"].value = ex.png()
    w["info"].value = ex.info_html()
    w["status"].value = (f"<div class='arcnb-explore-status'>{html.escape(ex.message)}</div>"
                         if ex.message else "")


# ====================================================================== entry point
def explore(source=None, *, dataset=None, select: str = "all", category=None, compare=None,
            taxonomy=None, near_miss: float = NEAR_MISS, k: int = 2, attempt="best",
            values: bool = False, labels: Sequence[str] | None = None, show_all: bool = False,
            cell: int | None = None, max_width: int = 1200) -> Explorer:
    """Browse a run's outputs (or a dataset's tasks) in JupyterLab.

    ``source``: a run directory (``arcnb evaluate`` / ``arcnb report`` output), a
    :class:`~arcnb.scoring.Results`, an :class:`arcnb.report.Run`, a predictions file
    (with ``dataset=``), ``"default"`` (the bundled example predictions on ARC-AGI-1
    evaluation), or a :class:`~arcnb.data.Dataset` / dataset name (tasks only).
    ``compare``: a run (directory, Results, Run or predictions file) or a list of runs
    on the same tasks, shown side by side. ``select``: one of :data:`SELECTIONS`;
    ``category``: a category (or list) of ``taxonomy`` (anything
    :func:`arcnb.breakdown.breakdown` takes: ``"structural"`` (the default), ``"folder"``,
    a taxonomy ``.csv`` / ``.json``, a Taxonomy or a dict; ``False`` for none).
    ``near_miss``: the threshold of the near-miss selection; ``k``: solved@k defines
    solved. ``attempt``: ``"best"`` or an attempt number; ``values``: write the cell
    values. ``show_all=True`` displays the selection as a static gallery instead of the
    browser (also :meth:`Explorer.gallery`). ``cell`` fixes the pixels per cell;
    ``max_width`` is where the view wraps.
    """
    ds, runs = _open_all(source, dataset=dataset, compare=compare, labels=labels)
    return Explorer(ds, runs, select=select, category=category, taxonomy=taxonomy,
                    near_miss=near_miss, k=k, attempt=attempt, values=values,
                    show_all=show_all, cell=cell, max_width=max_width)
