"""Galleries: many truth | prediction | difference triples in one figure, drawn fast.

:func:`gallery_items` selects the rows of ``results.outputs`` to draw (solved, failed,
near misses, tasks, categories). :func:`gallery` tiles them into one RGBA image per
figure (tiles from :mod:`arcnb.plot.tiles`, labels written into the pixels by
:mod:`arcnb.plot.pixelfont`, a single image artist), which is tens of times faster than
one Axes per grid; :func:`gallery_pages` splits a long selection into figures.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..columns import NEAR_MISS, is_near_miss
from ..errors import ParameterError
from ..grids import best_attempt, cell_accuracy, same_grid
from ..text import fmt_number
from .palette import WRONG_COLOR, shape_text
from .pixelfont import PixelFont, plain_label, safe_text
from .tiles import BACKGROUND_TOKEN, TOKEN_RGBA, render_tiles

__all__ = ["gallery", "gallery_items", "gallery_pages", "pairs_image"]


def _best_attempt(truth: np.ndarray, attempts: Sequence, max_k: int) -> tuple[int | None, Any]:
    """The attempt a gallery shows for ``attempt="best"``: :func:`arcnb.grids.best_attempt`
    (the one rule, the attempt behind ``Results.outputs["cell_accuracy"]``). Returns
    ``(0-based index, grid)`` or ``(None, None)``."""
    j, _ = best_attempt(truth, list(attempts), max_k)
    return (None, None) if j is None else (j, attempts[j])


def _category_lists(results, categories) -> dict[str, list[str]] | None:
    out = results.outputs
    if categories is None:
        for col in ("categories", "category"):
            if col in out.columns:
                categories = col
                break
        else:
            return None
    if isinstance(categories, str):
        if categories not in out.columns:
            raise ParameterError(f"results.outputs has no column {categories!r} to select categories by")
        mapping: dict[str, list[str]] = {}
        for tid, v in zip(out["task_id"], out[categories]):
            mapping.setdefault(tid, [])
            mapping[tid].extend(_as_list(v))
        return mapping
    if isinstance(categories, Mapping):
        return {str(k): _as_list(v) for k, v in categories.items()}
    raise TypeError("categories must be a column name of results.outputs or a mapping "
                    "{task_id: [category, ...]}")


def _as_list(v) -> list[str]:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return []
    if isinstance(v, str):
        return [v]
    return [str(x) for x in v]


def gallery_items(results, select: str = "failed", *, tasks: Iterable[str] | None = None,
                  category: str | Sequence[str] | None = None, categories=None,
                  near_miss: float = NEAR_MISS, k: int = 2, sort: str | None = None,
                  max_items: int | None = None, rows=None):
    """The rows of ``results.outputs`` a gallery draws, in drawing order.

    ``select``: ``"all"``; ``"solved"`` (``solved@k``); ``"failed"`` (not ``solved@k``);
    ``"near_miss"`` (not solved but ``cell_accuracy >= near_miss``). ``tasks`` keeps
    only these task ids. ``category`` keeps tasks carrying that category (or any of
    several), looked up in ``categories`` (a mapping ``{task_id: [categories]}`` or a
    column of ``results.outputs``; by default a ``categories`` or ``category`` column).
    ``sort``: None (task id, test index) or ``"cell_accuracy"`` (descending).
    ``rows`` replaces the table (e.g. a filtered copy of ``results.outputs``).
    """
    out = results.outputs if rows is None else rows
    col = f"solved@{k}"
    if col not in out.columns:
        raise ParameterError(f"no column {col!r} in the outputs table (scored ks: {results.ks})")
    if select == "all":
        keep = np.ones(len(out), bool)
    elif select == "solved":
        keep = out[col].to_numpy(bool)
    elif select == "failed":
        keep = ~out[col].to_numpy(bool)
    elif select in ("near_miss", "near-miss"):
        keep = is_near_miss(out[col], out["cell_accuracy"], near_miss)
    else:
        raise ParameterError(f"select must be 'all', 'solved', 'failed' or 'near_miss', got {select!r}")
    if tasks is not None:
        tasks = [tasks] if isinstance(tasks, str) else list(tasks)
        unknown = sorted(set(tasks) - set(out["task_id"]))
        if unknown and rows is None:
            raise ParameterError(f"task ids not in the results: {', '.join(unknown[:5])}")
        keep &= out["task_id"].isin(tasks).to_numpy()
    if category is not None:
        mapping = _category_lists(results, categories)
        if mapping is None:
            raise ParameterError("no category information: pass categories={task_id: [...]} or a "
                                 "column name of results.outputs")
        wanted = {category} if isinstance(category, str) else set(category)
        keep &= np.array([bool(wanted & set(mapping.get(t, []))) for t in out["task_id"]], bool)
    sel = out[keep]
    if sort == "cell_accuracy":
        sel = sel.sort_values(["cell_accuracy", "task_id", "test_index"],
                              ascending=[False, True, True], na_position="last", kind="mergesort")
    elif sort is not None:
        raise ParameterError(f"sort must be None or 'cell_accuracy', got {sort!r}")
    if max_items is not None:
        sel = sel.iloc[:max_items]
    return sel


_EXACT_IMAGE = None


def _exact_image_class():
    """An AxesImage that hands its RGBA uint8 array to a raster renderer untouched when
    the array maps 1:1 onto device pixels (no resampling pass, the costly part of
    drawing a large image); in every other case it draws exactly like AxesImage."""
    global _EXACT_IMAGE
    if _EXACT_IMAGE is None:
        from matplotlib.image import AxesImage
        from matplotlib.transforms import IdentityTransform

        class ExactImage(AxesImage):
            def make_image(self, renderer, magnification=1.0, unsampled=False):
                A = self._A
                if (not unsampled and magnification == 1.0 and A is not None and A.ndim == 3
                        and A.shape[2] == 4 and A.dtype == np.uint8
                        and self._get_scalar_alpha() == 1.0):
                    x1, x2, y1, y2 = self.get_extent()
                    (l, b), (r, t) = self.get_transform().transform([[x1, y1], [x2, y2]])  # noqa: E741
                    h, w = A.shape[:2]
                    exact = (abs((r - l) - w) < 1e-6 and abs((t - b) - h) < 1e-6
                             and abs(l - round(l)) < 1e-6 and abs(b - round(b)) < 1e-6)
                    if exact:
                        fig_bbox = self.get_figure(root=True).bbox
                        inside = (l >= -1e-6 and b >= -1e-6 and r <= fig_bbox.width + 1e-6
                                  and t <= fig_bbox.height + 1e-6)
                        if inside:
                            # raster renderers take the rows bottom-up
                            return (np.ascontiguousarray(A[::-1]), round(l), round(b),
                                    IdentityTransform())
                return super().make_image(renderer, magnification, unsampled=unsampled)

        _EXACT_IMAGE = ExactImage
    return _EXACT_IMAGE


def gallery(results, select: str = "failed", *, tasks=None, category=None, categories=None,
            near_miss: float = NEAR_MISS, k: int = 2, sort: str | None = None,
            max_items: int | None = None, rows=None, attempt: str | int = "best",
            ncols: int | None = None, slot: int = 64, dpi: int = 100, lines: bool = True,
            text: str = "pixels", fontsize: float = 7.5, title: str | None = None, fig=None):
    """Many truth | prediction | difference triples in one figure, drawn fast.

    The triples chosen by :func:`gallery_items` (same selection arguments) are rendered
    into one RGBA image shown by one image artist (see ``tiles.render_tiles``), each
    panel in a square slot of ``slot`` pixels, labelled ``"{task_id} test {i}"`` over
    ``"cell acc {a}"`` (plus ``attempt j`` when there are several attempts and ``✓``
    when solved@k).

    ``attempt`` is ``"best"`` (the first correct attempt, else the same-shape attempt
    behind the table's ``cell_accuracy``, else the first valid one) or a 1-based
    attempt number. The label's cell accuracy is that of the drawn attempt: the
    fraction of cells equal to the truth (``NaN`` when its shape is wrong or it is
    missing; the difference tile is then hatched red with the reason written on it).

    ``text="pixels"`` (default) writes the labels into the image (fast: hundreds of
    matplotlib Text artists take seconds to draw); ``text="artists"`` adds them as Text
    artists instead (searchable text in PDF/SVG, slower). Either way the label strings
    are in ``fig.arcnb_labels`` (the header in ``fig.arcnb_header``: "24 of 418
    outputs" when ``max_items`` cut the selection), the drawn rows in
    ``fig.arcnb_items`` and the RGB image in ``fig.arcnb_image``. The figure's size
    equals the image's at ``dpi``, so a PNG saved at that dpi holds the image pixel for
    pixel. Labels show a task id's control characters and the characters the font lacks
    escaped (``a\\nb``). Returns the Figure.
    """
    every = gallery_items(results, select, tasks=tasks, category=category,
                          categories=categories, near_miss=near_miss, k=k, sort=sort, rows=rows)
    items = every if max_items is None else every.iloc[:max_items]
    what = f"{select}, k={k}" if select != "all" else "all"
    return _gallery(results, items, what=what, k=k, attempt=attempt, ncols=ncols, slot=slot,
                    dpi=dpi, lines=lines, text=text, fontsize=fontsize, title=title, fig=fig,
                    total=len(every))


# spacing in pixels: between the panels of a triple, between triples side by side,
# below each triple, around the whole image
_GAP_IN, _GAP_OUT, _GAP_V, _MARGIN = 4, 18, 8, 8


def _gallery(results, items, *, what, k, attempt, ncols, slot, dpi, lines, text, fontsize,
             title, fig, total: int | None = None):
    """Draw the rows ``items`` of ``results.outputs`` as one gallery figure (the body of
    :func:`gallery` and of each :func:`gallery_pages` page). ``total``: how many rows
    the selection has before ``max_items`` cut it (the header then says "24 of 418")."""
    _check_gallery_options(text=text, slot=slot, attempt=attempt)
    triples, heads, tails, notes = _gallery_rows(results, items, k=k, attempt=attempt)
    labels = [f"{h}  {t}" for h, t in zip(heads, tails)]
    n = len(triples)
    if ncols is None:
        ncols = int(min(max(1, n), 5))
    font = PixelFont(fontsize, dpi)
    small_pt = max(4.0, fontsize - 1.5)
    small = PixelFont(small_pt, dpi)
    label_px = 2 * font.height + 2
    header_px = font.height + 6
    notes = [tuple(_fit_note(nt, small.width, slot - 4) for nt in pair) for pair in notes]
    rgba, block_w, block_h = _gallery_canvas(triples, ncols=ncols, slot=slot, lines=lines,
                                             label_px=label_px, header_px=header_px)
    shown = f"{n} of {total}" if total is not None and total > n else f"{n}"
    head = (f"{title}: " if title else "") + f"{shown} outputs ({what})" + \
        "   panels: truth | prediction | difference"
    origin = (_MARGIN, _MARGIN + header_px)
    text_items, note_items = _gallery_text(
        head, heads, tails, notes, width=rgba.shape[1], origin=origin, ncols=ncols, slot=slot,
        block=(block_w, block_h), label_px=label_px, line_px=font.height, note_px=small.height)
    if text == "pixels":
        font.draw_many(rgba, text_items)
        small.draw_many(rgba, note_items)
    fig, ax = _gallery_figure(rgba, fig=fig, dpi=dpi)
    if text == "artists":
        for x, y, s, color, anchor, bg in text_items + note_items:
            ax.text(x - 0.5, y - 0.5, plain_label(s), fontsize=fontsize if bg is None else small_pt,
                    color=color, ha=anchor, va="top",
                    gid="arcnb-gallery-text", clip_on=False,
                    bbox=None if bg is None else dict(facecolor=bg, edgecolor="none", pad=0.5))
    fig.arcnb_png_compress_level = 3
    fig.arcnb_items = items.reset_index(drop=True)
    fig.arcnb_labels = labels
    fig.arcnb_header = head
    fig.arcnb_image = rgba[..., :3]
    fig.arcnb_layout = {"slot": slot, "gap": _GAP_IN, "block_width": block_w,
                        "block_height": block_h, "label_px": label_px, "origin": origin,
                        "ncols": ncols}
    return fig


def _check_gallery_options(*, text, slot, attempt) -> None:
    if text not in ("pixels", "artists"):
        raise ParameterError(f"text must be 'pixels' or 'artists', got {text!r}")
    if slot < 31:
        raise ParameterError(f"slot must be at least 31 pixels (a 30x30 grid at one pixel per "
                             f"cell plus its border), got {slot}")
    if attempt != "best" and (isinstance(attempt, bool) or not isinstance(attempt, (int, np.integer))
                              or attempt < 1):
        raise ParameterError(f"attempt must be 'best' or a 1-based attempt number, got {attempt!r}")


def _gallery_rows(results, items, *, k, attempt):
    """Per drawn row: the ``(truth, attempt)`` pair, the label's two lines and the notes
    written over the prediction and difference panels (``"|"`` separates note lines;
    None when there is nothing to say)."""
    max_k = max(results.ks)
    triples, heads, tails, notes = [], [], [], []
    for tid, i, solved in zip(items["task_id"], items["test_index"], items[f"solved@{k}"]):
        truth = np.asarray(results.truth(tid, int(i)))
        atts = results.attempts(tid, int(i))
        if attempt == "best":
            j, p = _best_attempt(truth, atts, max_k)
        else:
            j, p = (attempt - 1, atts[attempt - 1]) if attempt <= len(atts) else (None, None)
        same = p is not None and p.shape == truth.shape
        acc = cell_accuracy(p, truth)
        tail = f"cell acc {fmt_number(acc, least=3, most=6)}"
        if j is not None and len(atts) > 1:
            tail += f"  attempt {j + 1}"
        if bool(solved):
            tail += "  ✓"
        heads.append(f"{safe_text(tid)} test {int(i)}")  # a newline in an id shows as \n
        tails.append(tail)
        if p is None:
            notes.append(("no|prediction", "no|prediction"))
        elif not same:
            notes.append((None, f"shape mismatch|{shape_text(truth)} vs|{shape_text(p)}"))
        else:
            notes.append((None, None))
        triples.append((truth, p))
    return triples, heads, tails, notes


def _fit_note(note: str | None, width, room: int) -> str | None:
    """``note`` (lines separated by ``"|"``) with every line that is wider than
    ``room`` pixels (``width(text)`` measures one) broken between words, so a note
    stays inside its panel ("shape mismatch" on a 64-pixel panel: two lines)."""
    if not note:
        return note
    out: list[str] = []
    for line in note.split("|"):
        cur = ""
        for word in line.split(" "):
            trial = f"{cur} {word}" if cur else word
            if cur and width(trial) > room:
                out.append(cur)
                cur = word
            else:
                cur = trial
        out.append(cur)
    return "|".join(out)


def _gallery_canvas(triples, *, ncols, slot, lines, label_px, header_px):
    """The gallery's RGBA image (``H x W x 4`` uint8) without text, and the size of one
    triple's block (width, height) including its label band and gaps."""
    n = len(triples)
    nrows = max(1, -(-n // ncols))
    tiles = render_tiles(triples, slot, lines=lines)  # [n, 3, S, S] tokens
    n_slots = nrows * ncols
    if n_slots > n:
        tiles = np.concatenate([tiles, np.full((n_slots - n, 3, slot, slot), BACKGROUND_TOKEN,
                                               np.uint8)])
    # tokens [N, 3, S, S] -> label band above, gaps right/below -> one canvas, by reshapes
    t = np.pad(tiles, ((0, 0), (0, 0), (label_px, _GAP_V), (0, _GAP_IN)),
               constant_values=BACKGROUND_TOKEN)
    Y = t.shape[2]
    t = t.transpose(0, 2, 1, 3).reshape(n_slots, Y, 3 * t.shape[3])
    t = np.pad(t, ((0, 0), (0, 0), (0, _GAP_OUT - _GAP_IN)), constant_values=BACKGROUND_TOKEN)
    Xb = t.shape[2]
    tok = t.reshape(nrows, ncols, Y, Xb).transpose(0, 2, 1, 3).reshape(nrows * Y, ncols * Xb)
    tok = np.pad(tok[:, : tok.shape[1] - _GAP_OUT],
                 ((_MARGIN + header_px, _MARGIN), (_MARGIN, _MARGIN)),
                 constant_values=BACKGROUND_TOKEN)
    # the one colour look-up for the whole figure (RGBA gathered as 32-bit words)
    rgba = TOKEN_RGBA.view(np.uint32).ravel()[tok].view(np.uint8).reshape(tok.shape + (4,))
    return rgba, Xb, Y


def _gallery_text(head, heads, tails, notes, *, width, origin, ncols, slot, block, label_px,
                  line_px, note_px):
    """The strings to write on the gallery, as :meth:`PixelFont.draw_many` items: the
    header and the two label lines of each triple (``text_items``), and the notes
    centred on the prediction and difference panels (``note_items``, smaller font)."""
    x_origin, y_origin = origin
    block_w, block_h = block
    text_items = [(_MARGIN, _MARGIN, head, "#000000", "left", None)]
    note_items = []
    if not heads:
        text_items.append((width // 2, y_origin, "no outputs match the selection",
                           "#000000", "center", None))
    for q in range(len(heads)):
        r, cidx = divmod(q, ncols)
        x0 = x_origin + cidx * block_w
        y0 = y_origin + r * block_h
        text_items.append((x0, y0, heads[q], "#222222", "left", None))
        text_items.append((x0, y0 + line_px, tails[q], "#222222", "left", None))
        for panel, note in ((1, notes[q][0]), (2, notes[q][1])):
            if note:
                xc = x0 + panel * (slot + _GAP_IN) + slot // 2
                parts = note.split("|")
                yc = y0 + label_px + slot // 2 - (len(parts) * note_px) // 2
                for li, line in enumerate(parts):
                    note_items.append((xc, yc + li * note_px, line, WRONG_COLOR, "center",
                                       "#FFFFFF"))
    return text_items, note_items


def _gallery_figure(rgba, *, fig, dpi):
    """Show ``rgba`` as one image filling a figure whose size equals the image's at
    ``dpi`` (a new figure unless ``fig`` is given); returns the figure and its Axes."""
    H, W = rgba.shape[:2]
    if fig is None:
        from .figures import new_figure

        fig = new_figure(figsize=(W / dpi, H / dpi), dpi=dpi, layout="none")
    ax = fig.add_axes((0, 0, 1, 1))
    im = _exact_image_class()(ax, interpolation="nearest", resample=False, origin="upper",
                               extent=(-0.5, W - 0.5, H - 0.5, -0.5), gid="arcnb-gallery-image")
    im.set_data(rgba)
    ax.add_image(im)
    ax.set_xlim(-0.5, W - 0.5)
    ax.set_ylim(H - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return fig, ax


def gallery_pages(results, select: str = "failed", *, per_page: int = 100, tasks=None,
                  category=None, categories=None, near_miss: float = NEAR_MISS, k: int = 2,
                  sort: str | None = None, max_items: int | None = None, rows=None,
                  **kwargs) -> list:
    """:func:`gallery` split into figures of at most ``per_page`` triples each (same
    arguments); always at least one figure."""
    if per_page < 1:
        raise ParameterError(f"per_page must be >= 1, got {per_page}")
    items = gallery_items(results, select, tasks=tasks, category=category, categories=categories,
                          near_miss=near_miss, k=k, sort=sort, max_items=max_items, rows=rows)
    what = f"{select}, k={k}" if select != "all" else "all"
    opts = dict(attempt="best", ncols=None, slot=64, dpi=100, lines=True, text="pixels",
                fontsize=7.5, title=None, fig=None)
    unknown = set(kwargs) - set(opts)
    if unknown:
        raise TypeError(f"gallery_pages() got unexpected arguments {sorted(unknown)}")
    opts.update(kwargs)
    figs = []
    n_pages = max(1, -(-len(items) // per_page))
    for p in range(n_pages):
        chunk = items.iloc[p * per_page:(p + 1) * per_page]
        o = dict(opts)
        o["title"] = f"{opts['title'] + ', ' if opts['title'] else ''}page {p + 1}/{n_pages}"
        figs.append(_gallery(results, chunk, what=what, k=k, **o))
    return figs


class _PairRows:
    """Just enough of :class:`~arcnb.scoring.Results` for :func:`_gallery` to draw
    (truth, prediction) pairs that come from no scored run (a training loop's batch)."""

    ks = (1,)

    def __init__(self, pairs):
        self._pairs = [(np.asarray(t), None if p is None else np.asarray(p)) for t, p in pairs]

    def truth(self, tid, i):
        return self._pairs[int(i)][0]

    def attempts(self, tid, i):
        return [self._pairs[int(i)][1]]


def pairs_image(pairs, labels: Sequence[str] | None = None, *, ncols: int | None = None,
                slot: int = 64, title: str | None = None, dpi: int = 100,
                fontsize: float = 7.5) -> np.ndarray:
    """The gallery image (truth | prediction | difference, labels written into the
    pixels) of ``pairs``, a list of ``(truth, prediction)`` grids (a prediction may be
    None), as an ``H x W x 3`` uint8 RGB array: what :func:`gallery` draws, for
    grids that come from a training loop rather than a scored run (the Lightning
    callback logs it). ``labels[j]`` names pair ``j`` (default ``"sample j"``).
    """
    pairs = list(pairs)
    labels = [f"sample {j}" for j in range(len(pairs))] if labels is None else list(labels)
    if len(labels) != len(pairs):
        raise ParameterError(f"{len(labels)} labels for {len(pairs)} pairs")
    src = _PairRows(pairs)
    solved = [same_grid(p, t) for t, p in src._pairs]
    items = pd.DataFrame({"task_id": labels, "test_index": range(len(pairs)),
                          "solved@1": solved})
    fig = _gallery(src, items, what="all", k=1, attempt=1, ncols=ncols, slot=slot, dpi=dpi,
                   lines=True, text="pixels", fontsize=fontsize, title=title, fig=None)
    import matplotlib.pyplot as plt

    image = np.ascontiguousarray(fig.arcnb_image)
    plt.close(fig)  # a training loop calls this again and again: no figure is kept
    return image
