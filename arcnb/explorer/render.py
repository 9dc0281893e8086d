"""The explorer's frame: panels laid out left to right, titled with Pillow, the grids
drawn by the gallery's raster engine (:mod:`arcnb.plot.tiles`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import printable
from ..plot import DIFF_OK_COLOR, DIFF_WRONG_COLOR, LINE_COLOR, grid_image


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
