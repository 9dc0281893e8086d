"""Gallery tiles: (truth, prediction) pairs rendered into square slots of *tokens*
(indices into one colour look-up table), batched in numpy.

Tokens 0-9 are the ARC colours; 10-18 are padding, background, the difference
panel's right / wrong / mismatch cells, cell lines and hatches. :func:`render_tiles`
fills ``[N, 3, slot, slot]`` tokens; the gallery turns the whole figure's tokens into
RGBA with one look-up in ``TOKEN_RGBA``.

The explorer draws its grids with the same engine, one tile at a time:
:func:`grid_tile` (a grid, optionally with its values written in), :func:`diff_tile`
(the difference panel) and :func:`hatch_tile` (a missing or invalid grid), each the
same tokens, cell upsampling (:func:`_upsample`) and cell lines (:func:`_line_mask`)
as the gallery's tiles, turned into RGB by ``_LUT``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .palette import (BACKGROUND_COLOR, DIFF_OK_COLOR, DIFF_WRONG_COLOR, LINE_COLOR,
                      MISMATCH_COLOR, MISMATCH_HATCH_COLOR, PAD_COLOR, PAD_HATCH_COLOR, PALETTE,
                      hex_to_rgb)

# token layout of the gallery's look-up table (values 0-9 are the ARC colours);
# BACKGROUND_TOKEN, the space around and between the panels, is the gallery's too
(_T_PAD, BACKGROUND_TOKEN, _T_OK, _T_WRONG, _T_MISMATCH, _T_LINE, _T_DIFF_LINE, _T_PAD_HATCH,
 _T_MISMATCH_HATCH) = range(10, 19)
_LUT = np.array([hex_to_rgb(c) for c in PALETTE]
                + [hex_to_rgb(c) for c in (PAD_COLOR, BACKGROUND_COLOR, DIFF_OK_COLOR,
                                           DIFF_WRONG_COLOR, MISMATCH_COLOR, LINE_COLOR, "#C8C8C8",
                                           PAD_HATCH_COLOR, MISMATCH_HATCH_COLOR)], dtype=np.uint8)
#: The look-up table from a token to its RGBA colour (``[19, 4]`` uint8, opaque).
TOKEN_RGBA = np.ascontiguousarray(np.concatenate([_LUT, np.full((len(_LUT), 1), 255, np.uint8)],
                                                 axis=1))


def _upsample(tokens: np.ndarray, c: int, ph: int | None = None,
              pw: int | None = None) -> np.ndarray:
    """``[..., H, W]`` -> ``[..., ph, pw]`` (default ``H*c+1``, ``W*c+1``): each cell a
    ``c x c`` block, the last row and column repeated into the closing line."""
    H, W = tokens.shape[-2:]
    ph = H * c + 1 if ph is None else ph
    pw = W * c + 1 if pw is None else pw
    yy = np.minimum(np.arange(ph) // c, H - 1)
    xx = np.minimum(np.arange(pw) // c, W - 1)
    return tokens[..., yy[:, None], xx[None, :]]


def _line_mask(ys, xs, hh, ww, c: int, lines: bool = True):
    """Where the 1-px lines go (broadcast over ``ys``, ``xs`` and the grids' pixel
    heights ``hh`` / widths ``ww``): around every cell when ``lines`` and ``c >= 4``,
    only the outer border when ``c`` is 2 or 3 (or ``lines`` is off), none when
    ``c == 1``."""
    if lines and c >= 4:
        on_line = (ys % c == 0) | (xs % c == 0)
    elif c >= 2:  # too small for cell lines: only the outer border
        on_line = (ys == 0) | (xs == 0) | (ys == hh) | (xs == ww)
    else:  # one pixel per cell: no room for any line
        on_line = np.zeros((1, 1, 1), bool)
    return on_line & (ys <= hh) & (xs <= ww) & (hh > 0)


def _single(tokens: np.ndarray, c: int, line_token: int, values: bool = False) -> np.ndarray:
    """One ``h x w`` token grid as an RGB tile with its lines: ``(h*c+1, w*c+1, 3)``;
    with ``values`` (cells of at least 4 px, so lines around every cell) each cell
    shows its digit (:func:`_value_cells`): a gather, then the lines as slices."""
    h, w = tokens.shape
    if values and c >= 4:
        tile = np.empty((h * c + 1, w * c + 1, 3), np.uint8)
        tile[:-1, :-1] = _value_cells(c)[tokens].transpose(0, 2, 1, 3, 4).reshape(h * c, w * c, 3)
        tile[::c, :] = _LUT[line_token]  # _line_mask's cell lines, as slices
        tile[:, ::c] = _LUT[line_token]
        return tile
    pix = _upsample(tokens, c)
    ys, xs = np.ogrid[: pix.shape[0], : pix.shape[1]]
    pix[_line_mask(ys, xs, h * c, w * c, c)] = line_token
    return _LUT[pix]


def grid_tile(grid: np.ndarray, c: int, *, values: bool = False) -> np.ndarray:
    """A grid as an RGB tile, ``c x c`` pixels per cell with the gallery's cell lines;
    with ``values`` (and cells of at least 8 px) each cell's value is written on it."""
    return _single(np.asarray(grid, np.uint8), c, _T_LINE, values=values and c >= 8)


def diff_tile(mask: np.ndarray, c: int) -> np.ndarray:
    """The difference panel of one output as an RGB tile: the wrong colour where
    ``mask`` (``truth != prediction``), the right colour elsewhere."""
    tokens = np.where(np.asarray(mask, bool), _T_WRONG, _T_OK).astype(np.uint8)
    return _single(tokens, c, _T_DIFF_LINE)


def hatch_tile(shape, c: int, *, missing: bool = False) -> np.ndarray:
    """A placeholder of ``shape`` cells as an RGB tile, hatched as the gallery hatches:
    red (``_T_MISMATCH``: an invalid grid, a shape mismatch) or, with ``missing``,
    grey (``_T_PAD``: a grid that is not there, such as a hidden test output)."""
    base, hatch = (_T_PAD, _T_PAD_HATCH) if missing else (_T_MISMATCH, _T_MISMATCH_HATCH)
    h, w = shape
    pix = np.full((h * c + 1, w * c + 1), base, np.uint8)
    ys, xs = np.ogrid[: pix.shape[0], : pix.shape[1]]
    pix[((ys + xs) % 6) < 2] = hatch
    pix[_line_mask(ys, xs, h * c, w * c, min(c, 3))] = _T_LINE  # the border only
    return _LUT[pix]


_VALUE_CELLS: dict = {}


def _value_cells(c: int) -> np.ndarray:
    """``[10, c, c, 3]`` uint8: the cell of each value 0-9 in its ARC colour with the
    digit written on it (DejaVu Sans Bold, shipped with matplotlib), black or white for
    contrast. Built once per cell size, so writing the values is a gather."""
    if c not in _VALUE_CELLS:
        import matplotlib  # lazy: heavy, and only for the values toggle
        from PIL import Image, ImageDraw, ImageFont

        path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans-Bold.ttf"
        font = ImageFont.truetype(str(path), max(6, int(c * 0.72)))
        colors = _LUT[:10].astype(np.float32)
        lum = colors @ np.array([0.2126, 0.7152, 0.0722], np.float32)
        ink = np.where((lum < 128)[:, None], 255.0, 0.0)
        cells = np.empty((10, c, c, 3), np.uint8)
        for d in range(10):
            im = Image.new("L", (c, c), 0)
            ImageDraw.Draw(im).text((c / 2, c / 2 + 0.5), str(d), fill=255, font=font,
                                    anchor="mm")
            a = np.asarray(im, np.float32)[..., None] / 255.0
            cells[d] = (colors[d] * (1 - a) + ink[d] * a + 0.5).astype(np.uint8)
        _VALUE_CELLS[c] = cells
    return _VALUE_CELLS[c]


def render_tiles(triples: list[tuple[np.ndarray, np.ndarray | None]], slot: int,
                 lines: bool = True) -> np.ndarray:
    """Render N (truth, prediction) pairs into ``[N, 3, slot, slot]`` uint8 *tokens*
    (indices into ``_LUT``: colours 0-9, padding, background, difference, lines, hatch).

    Each triple uses one cell size ``c = (slot - 1) // max(dims of truth and prediction)``
    for its three panels (so the panels are comparable); grids are top-left aligned,
    with a 1-px line around every cell (only the outer border when ``c`` is 2 or 3,
    none when ``c == 1``). The
    difference panel holds ``_T_WRONG`` exactly where ``truth != prediction`` and
    ``_T_OK`` elsewhere; a missing prediction or a shape mismatch fills the truth's area
    with a red hatch instead. All pixel work is batched over the grids that share a
    cell size (one numpy pass per distinct ``c``).
    """
    n = len(triples)
    tiles = np.full((n, 3, slot, slot), BACKGROUND_TOKEN, np.uint8)
    if n == 0:
        return tiles
    dims = np.array([max(t.shape + (p.shape if p is not None else ())) for t, p in triples])
    cells = np.maximum(1, (slot - 1) // dims)
    for c in np.unique(cells):
        idx = np.flatnonzero(cells == c)
        m = len(idx)
        Hm = max(max(triples[i][0].shape[0], 0 if triples[i][1] is None else triples[i][1].shape[0])
                 for i in idx)
        Wm = max(max(triples[i][0].shape[1], 0 if triples[i][1] is None else triples[i][1].shape[1])
                 for i in idx)
        G = np.full((3, m, Hm, Wm), BACKGROUND_TOKEN, np.uint8)  # truth, prediction, difference
        shapes = np.zeros((3, m, 2), np.int64)
        for j, i in enumerate(idx):  # stacking only; all pixel work below is batched
            t, p = triples[i]
            G[0, j, : t.shape[0], : t.shape[1]] = t
            shapes[0, j] = shapes[2, j] = t.shape
            if p is not None:
                G[1, j, : p.shape[0], : p.shape[1]] = p
                shapes[1, j] = p.shape
        same = (shapes[0] == shapes[1]).all(axis=1)  # [m]
        in_truth = G[0] != BACKGROUND_TOKEN
        G[2] = np.where(G[0] == G[1], _T_OK, _T_WRONG)
        G[2][~same] = _T_MISMATCH
        G[2][~in_truth] = BACKGROUND_TOKEN
        G = G.reshape(3 * m, Hm, Wm)
        shapes = shapes.reshape(3 * m, 2)
        ph, pw = min(Hm * c + 1, slot), min(Wm * c + 1, slot)
        pix = _upsample(G, c, ph, pw)  # [3m, ph, pw] upsampled tokens
        ys, xs = np.arange(ph)[None, :, None], np.arange(pw)[None, None, :]
        hh = shapes[:, 0][:, None, None] * c
        ww = shapes[:, 1][:, None, None] * c
        stripes = ((ys + xs) % 6) < 2
        pix[(pix == _T_PAD) & stripes] = _T_PAD_HATCH
        pix[(pix == _T_MISMATCH) & stripes] = _T_MISMATCH_HATCH
        line = _line_mask(ys, xs, hh, ww, c, lines)
        is_diff = (np.arange(3 * m) >= 2 * m)[:, None, None]
        pix[line & ~is_diff] = _T_LINE
        pix[line & is_diff] = _T_DIFF_LINE
        panel = np.repeat(np.arange(3), m)
        tiles[np.tile(idx, 3), panel, :ph, :pw] = pix
    return tiles
