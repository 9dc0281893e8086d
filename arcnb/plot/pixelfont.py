"""Text rasterised straight into the pixels of an image (the gallery's labels), and
the escaping that keeps user strings (task ids, category names, run labels) from
breaking a figure: :func:`safe_text` and :func:`plain_label`."""
from __future__ import annotations

import functools

import numpy as np

from .palette import hex_to_rgb

__all__ = ["safe_text", "plain_label"]


@functools.lru_cache(maxsize=1)
def _font_file():
    from matplotlib import font_manager as fm

    return fm.findfont(fm.FontProperties(family="DejaVu Sans"))


@functools.lru_cache(maxsize=1)
def _coverage_font():
    from matplotlib.ft2font import FT2Font

    return FT2Font(_font_file())


@functools.lru_cache(maxsize=8192)
def _drawable(ch: str) -> bool:
    """Whether ``ch`` is printable and DejaVu Sans (the font of arcnb's figures, shipped
    with matplotlib) has a glyph for it."""
    return ch.isprintable() and _coverage_font().get_char_index(ord(ch)) != 0


def safe_text(text) -> str:
    """``text`` with every character that can't be drawn shown escaped: control
    characters (a newline as ``\\n``, a bell as ``\\x07``) and characters the font
    lacks (``\\u4e2d``). A task id, a category or a run label can then never stop a
    figure (the pixel font would fail on a missing glyph) nor break its layout."""
    text = str(text)
    if all(_drawable(c) for c in text):
        return text
    return "".join(c if _drawable(c) else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def plain_label(text) -> str:
    """:func:`safe_text` for a matplotlib Text artist (title, tick label, legend entry):
    ``$`` is escaped too, so that user text is drawn as plain text, never parsed as
    mathtext (``$\\foo$`` in a category name would stop the figure from drawing)."""
    return safe_text(text).replace("$", r"\$")


class PixelFont:
    """Text rasterised straight into an RGB(A) array: glyphs rendered once by FreeType
    (DejaVu Sans, shipped with matplotlib), then placed for all strings at once.

    Drawing hundreds of matplotlib Text artists costs several ms each; a gallery's
    labels are composed here in a few numpy operations instead.
    """

    _cache: dict = {}

    def __new__(cls, size_pt: float, dpi: float):
        key = (float(size_pt), float(dpi))
        if key not in cls._cache:
            self = super().__new__(cls)
            self._init(size_pt, dpi)
            cls._cache[key] = self
        return cls._cache[key]

    def _init(self, size_pt: float, dpi: float) -> None:
        from matplotlib.ft2font import FT2Font

        self.font = FT2Font(_font_file())
        self.font.set_size(size_pt, dpi)
        px = size_pt * dpi / 72.0
        em = self.font.units_per_EM
        self.ascent = int(np.ceil(self.font.ascender * px / em))
        self.height = self.ascent + int(np.ceil(-self.font.descender * px / em)) + 1
        # per glyph: ink bitmap, its offset from (pen x, line top), advance
        self.glyphs: dict[str, tuple[np.ndarray, int, int, float]] = {}

    def _glyph(self, ch: str):
        g = self.glyphs.get(ch)
        if g is None:
            from matplotlib.ft2font import LoadFlags

            gl = self.font.load_char(ord(ch), flags=LoadFlags.NO_HINTING)
            adv = gl.linearHoriAdvance / 65536.0
            top = max(0, self.ascent - int(np.ceil(gl.horiBearingY / 64.0)))
            buf = np.zeros((self.height + 2, int(np.ceil(adv)) + 8), np.uint8)
            self.font.draw_glyph_to_bitmap(buf, 3, top, gl)
            rows, cols = np.nonzero(buf)
            if rows.size:
                ink = buf[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
                g = (ink, int(cols.min()) - 3, int(rows.min()), adv)
            else:
                g = (np.zeros((0, 0), np.uint8), 0, 0, adv)
            self.glyphs[ch] = g
        return g

    def width(self, text: str) -> int:
        return int(np.ceil(sum(self._glyph(c)[3] for c in text)))

    def draw_many(self, canvas: np.ndarray, items) -> None:
        """Blend many strings into ``canvas`` (``H x W x 3|4`` uint8, in place).

        ``items``: ``(x, y, text, colour, anchor, background)`` with (x, y) the top-left
        (``anchor="left"``) or top-centre (``"center"``) of the line; ``background`` a
        colour to fill the text's box with first, or None.
        """
        H, W = canvas.shape[:2]
        by_color: dict[str, dict[str, list]] = {}
        for x, y, text, color, anchor, background in items:
            text = safe_text(text)  # a glyph the font lacks would raise
            adv = np.array([self._glyph(c)[3] for c in text], float)
            w = int(np.ceil(adv.sum()))
            if anchor == "center":
                x = int(round(x - w / 2))
            if background is not None:
                canvas[max(0, y):max(0, min(H, y + self.height)),
                       max(0, x - 1):max(0, min(W, x + w + 1)), :3] = hex_to_rgb(background)
            pens = x + np.round(np.concatenate([[0.0], np.cumsum(adv)[:-1]])).astype(int)
            per = by_color.setdefault(color, {})
            for ch, px in zip(text, pens):
                per.setdefault(ch, []).append((px, y))
        flat_rgb = canvas.reshape(H * W, canvas.shape[2])
        for color, per in by_color.items():
            alpha = np.zeros(H * W, np.uint8)
            touched = []
            for ch, pos in per.items():
                ink, dx, dy, _ = self._glyph(ch)
                if ink.size == 0:
                    continue
                pos = np.asarray(pos)
                h, w = ink.shape
                Y = pos[:, 1][:, None, None] + dy + np.arange(h)[None, :, None]
                X = pos[:, 0][:, None, None] + dx + np.arange(w)[None, None, :]
                Y, X = np.broadcast_arrays(Y, X)
                vals = np.broadcast_to(ink, Y.shape)
                ok = (Y >= 0) & (Y < H) & (X >= 0) & (X < W) & (vals > 0)
                flat = Y[ok] * W + X[ok]
                np.maximum.at(alpha, flat, vals[ok])
                touched.append(flat)
            if not touched:
                continue
            # blend at the inked pixels only (a pixel listed twice gets the same value twice)
            flat = np.concatenate(touched)
            a = alpha[flat].astype(np.float32)[:, None] / 255.0
            px = flat_rgb[flat, :3].astype(np.float32)
            flat_rgb[flat, :3] = (px * (1.0 - a) + np.array(hex_to_rgb(color), np.float32) * a
                                  + 0.5).astype(np.uint8)
