"""The explorer's frame: panels laid out left to right, titled with Pillow, the grids
drawn by the gallery's raster engine (:mod:`arcnb.plot.tiles`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import printable


# ====================================================================== drawing
_GAP = 14           # pixels between columns (and below a column)
_MARGIN = 10
_TITLE_PX = 12      # title font size in pixels
_HEADER_PX = 14
_COLUMN_TEXT_PX = 320  # a column's text is cut at this width or its grid's, the wider
_WHITE = (255, 255, 255)
#: Title lines of a right answer.
RIGHT_RGB = (26, 152, 80)
#: Title lines of a wrong answer.
WRONG_RGB = (214, 39, 40)
#: Title lines.
TEXT_RGB = (34, 34, 34)
_MUTED = (110, 110, 110)


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


@dataclass
class Panel:
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


def compose(sections, *, max_width: int, header: str):
    """Lay out ``sections`` (``(title, columns)``; a column is a list of panels, drawn
    top to bottom) left to right, wrapping at ``max_width``; returns the RGB array and
    the placements (one dict per panel: kind, run, x, y, w, h of its image, grid)."""
    from PIL import Image, ImageDraw

    font, bold = _font(_TITLE_PX), _font(_HEADER_PX, bold=True)
    lh, hh = _TITLE_PX + 4, _HEADER_PX + 6
    # the frame is sized by the grids; text (task ids, labels, categories) is cut to fit
    line_px = max(int(max_width) - 2 * _MARGIN, 200)
    header = _fit(header, bold, line_px)
    texts, tiles, places = [(_MARGIN, _MARGIN, header, TEXT_RGB, bold)], [], []
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
