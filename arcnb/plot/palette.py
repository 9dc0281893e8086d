"""The ARC palette and grid images: colour constants, :func:`grid_image`,
:func:`diff_mask` and the array helpers every other plot module uses.

``PALETTE[c]`` is the official ARC colour of value ``c`` (0 black, 1 blue, 2 red,
3 green, 4 yellow, 5 grey, 6 magenta, 7 orange, 8 azure, 9 maroon). Padding (the pad
token, default 10) is never drawn black: it is white with a grey hatch.

Nothing here imports matplotlib at import time (:func:`pyplot` imports pyplot when a
figure is first made).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import GridError
from ..grids import COLOR_NAMES, PAD_TOKEN, check_pad_token

__all__ = ["PALETTE", "PALETTE_RGB", "COLOR_NAMES", "PAD_COLOR", "PAD_HATCH_COLOR", "LINE_COLOR",
           "DIFF_OK_COLOR", "DIFF_WRONG_COLOR", "grid_image", "diff_mask"]

#: Official ARC colours, index = cell value.
PALETTE = ("#000000", "#0074D9", "#FF4136", "#2ECC40", "#FFDC00",
           "#AAAAAA", "#F012BE", "#FF851B", "#7FDBFF", "#870C25")


def hex_to_rgb(hex_color: str) -> tuple[int, int, int]:
    """``(r, g, b)`` integers 0-255 of a ``"#RRGGBB"`` colour."""
    h = hex_color.lstrip("#")
    return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))


#: ``PALETTE`` as a ``(10, 3)`` uint8 array.
PALETTE_RGB = np.array([hex_to_rgb(c) for c in PALETTE], dtype=np.uint8)
PALETTE_RGB.setflags(write=False)

#: Padding cells: white under a grey hatch (never black, never an ARC colour).
PAD_COLOR = "#FFFFFF"
#: The hatch drawn over padding cells.
PAD_HATCH_COLOR = "#B4B4B4"
#: Thin lines between cells.
LINE_COLOR = "#555555"
#: Difference panel: a correct cell.
DIFF_OK_COLOR = "#EBEBEB"
#: Difference panel: a wrong cell.
DIFF_WRONG_COLOR = "#D62728"
#: Shape mismatch hatch in galleries.
MISMATCH_COLOR = "#FFFFFF"
#: The hatch drawn over a shape mismatch in galleries.
MISMATCH_HATCH_COLOR = "#D62728"
#: The background of galleries, around and between the panels.
BACKGROUND_COLOR = "#FFFFFF"
#: Text and marks of a right answer.
RIGHT_COLOR = "#1A9850"
#: Text and marks of a wrong answer.
WRONG_COLOR = "#D62728"


# ------------------------------------------------------------------ helpers
def pyplot():
    """``matplotlib.pyplot``, imported on first use (so that importing a plot module does
    not import matplotlib)."""
    # pyplot picks a non-interactive backend (Agg) by itself when there is no display
    import matplotlib.pyplot as plt

    return plt


def axes_or_new(ax, figsize=(5.0, 3.0)):
    """``ax`` itself, or when it is None the Axes of a new figure of ``figsize`` inches
    with the constrained layout (the figures of the sweep, repeats and probes)."""
    if ax is not None:
        return ax
    from .figures import new_subplots

    _, ax = new_subplots(figsize=figsize, layout="constrained")
    return ax


def as_grid_array(g: Any, *, pad_token: int | None = PAD_TOKEN, name: str = "grid") -> np.ndarray:
    """A 2-D int array with values 0-9 (or the pad token). Accepts lists, numpy, torch."""
    if g is None:
        raise GridError(f"{name} is None")
    if hasattr(g, "detach"):
        g = g.detach().cpu().numpy()
    arr = np.asarray(g)
    if arr.ndim != 2 or arr.size == 0:
        raise GridError(f"{name} must be a non-empty 2-D grid, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise GridError(f"{name} must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    ok = (arr >= 0) & (arr <= 9)
    if pad_token is not None:
        ok |= arr == pad_token
    if not ok.all():
        bad = arr[~ok].ravel()[0]
        extra = "" if pad_token is None else f" or the pad token {pad_token}"
        raise GridError(f"{name} holds value {bad} outside the ARC colours 0-9{extra}")
    return arr


def shape_text(g: np.ndarray) -> str:
    """A grid's shape in words, ``"HxW"``."""
    return f"{g.shape[0]}x{g.shape[1]}"


def grid_image(g: Any, *, pad_token: int | None = PAD_TOKEN) -> np.ndarray:
    """The ``H x W x 3`` uint8 image of a grid: ``PALETTE_RGB[g]`` per cell.

    Pad cells (value ``pad_token``) get :data:`PAD_COLOR` (white; :func:`grid` adds a
    hatch over them), never black.
    """
    pad_token = check_pad_token(pad_token)
    arr = as_grid_array(g, pad_token=pad_token)
    lut = np.vstack([PALETTE_RGB, np.array([hex_to_rgb(PAD_COLOR)], np.uint8)])
    idx = np.where(arr == pad_token, 10, arr) if pad_token is not None else arr
    return lut[idx]


def diff_mask(truth: Any, pred: Any) -> np.ndarray | None:
    """Boolean ``H x W`` mask of the wrong cells (``truth != pred``), or None when the
    prediction is missing or its shape differs from the truth's."""
    t = as_grid_array(truth, name="truth")
    if pred is None:
        return None
    p = as_grid_array(pred, name="prediction")
    if p.shape != t.shape:
        return None
    return t != p


def mismatch_text(truth: np.ndarray, pred: np.ndarray | None) -> str:
    """Why a prediction has no difference panel: missing, or its shape and the truth's."""
    if pred is None:
        return "no prediction"
    return f"shape mismatch: truth {shape_text(truth)}, prediction {shape_text(pred)}"


def is_dark(rgb: np.ndarray) -> np.ndarray:
    """Black or white text per colour: True where a colour is dark, so its text is white
    (relative luminance threshold)."""
    lum = (0.2126 * rgb[..., 0] + 0.7152 * rgb[..., 1] + 0.0722 * rgb[..., 2]) / 255.0
    return lum < 0.5
