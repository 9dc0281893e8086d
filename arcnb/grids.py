"""ARC grids: validation, padding and cropping, conversion to tensors.

This is the one place that knows the pad convention. A grid is a 2-D array of ARC
colours 0-9, from 1x1 to 30x30. Batches of grids are integer tensors ``[B, H, W]``
padded with ``pad_token`` (default 10). A pad token inside 0-9 is refused: colour 0 is
black, a real colour, never padding.
"""
from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from .errors import GridError, ParameterError

#: ARC colours are 0-9 (0 is black, never padding).
N_COLORS = 10
#: The default pad token: outside the colours, so padding is never a colour.
PAD_TOKEN = 10
#: The largest ARC grid side.
MAX_SIZE = 30
#: ARC colour names (index = colour); the palette is in :mod:`arcnb.plot`.
COLOR_NAMES = ("black", "blue", "red", "green", "yellow", "grey", "magenta", "orange",
               "azure", "maroon")

__all__ = [
    "N_COLORS",
    "PAD_TOKEN",
    "MAX_SIZE",
    "background",
    "COLOR_NAMES",
    "check_pad_token",
    "validate_grid",
    "as_grid_or_none",
    "grid_problem",
    "shape_str",
    "pad_grids",
    "crop_padding",
    "same_grid",
    "cell_accuracy",
    "best_attempt",
]


def check_pad_token(pad_token: int | None) -> int | None:
    """Return ``pad_token`` if it is usable, else raise :class:`~arcnb.errors.ParameterError`.

    ``None`` means "no padding". A pad token in 0-9 is refused because those values
    are ARC colours (0 is black).
    """
    if pad_token is None:
        return None
    if isinstance(pad_token, bool) or not isinstance(pad_token, (int, np.integer)):
        raise ParameterError(f"pad_token must be an int or None, got {pad_token!r}")
    if 0 <= int(pad_token) <= 9:
        raise ParameterError(
            f"pad_token={pad_token} is an ARC colour (0-9); colour 0 is black, not "
            "padding. Use a value outside 0-9 (default 10) or pad_token=None."
        )
    return int(pad_token)


def grid_problem(obj: Any) -> str | None:
    """Describe why ``obj`` is not a valid ARC grid, or return None if it is one."""
    if obj is None:
        return "grid is None"
    if isinstance(obj, (str, bytes)):
        return "grid is a string"
    if isinstance(obj, np.ndarray):
        arr = obj
        if arr.ndim != 2:
            return f"grid has {arr.ndim} dimensions, expected 2"
    else:
        if not isinstance(obj, (list, tuple)):
            return f"grid is a {type(obj).__name__}, expected a list of rows"
        if len(obj) == 0:
            return "grid is empty"
        widths = set()
        for row in obj:
            if not isinstance(row, (list, tuple)):
                return "grid rows must be lists"
            widths.add(len(row))
        if len(widths) != 1:
            return f"grid is ragged (row lengths {sorted(widths)})"
        # numpy reads true as 1: a boolean cell is found before the conversion (the
        # cells' types are collected in C)
        if bool in set(map(type, itertools.chain.from_iterable(obj))):
            return "grid holds a boolean (true/false), not a colour"
        try:
            arr = np.asarray(obj)
        except (ValueError, TypeError):
            return "grid holds values that are not integers"
        if arr.ndim != 2 or arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
            return "grid holds values that are not integers"
    if arr.size == 0 or 0 in arr.shape:
        return "grid is empty"
    if arr.shape[0] > MAX_SIZE or arr.shape[1] > MAX_SIZE:
        return f"grid is {arr.shape[0]}x{arr.shape[1]}, larger than 30x30"
    if arr.dtype.kind not in "iuf":
        return f"grid has dtype {arr.dtype}, expected integers"
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        return "grid holds non-integer values"
    if arr.min() < 0 or arr.max() > 9:
        bad = arr[(arr < 0) | (arr > 9)].ravel()[0].item()  # a Python number: prints as 15
        return f"grid holds value {bad!r} outside 0-9"
    return None


def validate_grid(obj: Any, *, file: str | None = None, task: str | None = None,
                  where: str = "") -> np.ndarray:
    """Return ``obj`` as an ``int8`` numpy array, or raise :class:`~arcnb.errors.GridError`.

    Checks: not empty, rectangular (no ragged rows), at most 30x30, values in 0-9.
    ``file``, ``task`` and ``where`` name the offending place in the message.
    """
    problem = grid_problem(obj)
    if problem is not None:
        raise GridError(problem, file=file, task=task, where=where)
    return np.asarray(obj).astype(np.int8, copy=False)


def as_grid_or_none(obj: Any) -> np.ndarray | None:
    """Return a valid grid as an ``int8`` array, or None if ``obj`` is malformed."""
    if grid_problem(obj) is not None:
        return None
    return np.asarray(obj).astype(np.int8, copy=False)


def background(grid: Any, *, prefer_black: bool = False) -> int:
    """The background colour of ``grid``: its most frequent value (ties go to the lower
    colour). This is the definition users read (the structural taxonomy's
    ``fill_background`` and the explorer's wording).

    ``prefer_black=True`` is the program search's guess instead: black whenever the grid
    holds a black cell, else the most frequent value. It is kept for the search only
    (its programs and reported numbers were fitted with it); do not use it to describe
    a task."""
    counts = np.bincount(np.asarray(grid).ravel().astype(np.int64, copy=False), minlength=1)
    if prefer_black and counts[0]:
        return 0
    return int(counts.argmax())


def shape_str(grid: np.ndarray | None) -> str | None:
    """``"HxW"`` for a grid, None for a missing one."""
    if grid is None:
        return None
    return f"{grid.shape[0]}x{grid.shape[1]}"


def pad_grids(grids: Sequence[np.ndarray | None], *, pad_token: int = PAD_TOKEN,
              size: tuple[int, int] | None = None, device=None, dtype=None):
    """Stack grids into a padded ``[B, H, W]`` torch tensor (top-left aligned).

    ``size`` defaults to the largest height and width in ``grids``. A None grid
    becomes an all-padding slot.
    """
    import torch

    pad_token = check_pad_token(pad_token)
    if pad_token is None:
        raise ParameterError("pad_grids needs a pad_token outside 0-9")
    if size is None:
        hs = [g.shape[0] for g in grids if g is not None] or [1]
        ws = [g.shape[1] for g in grids if g is not None] or [1]
        size = (max(hs), max(ws))
    H, W = size
    out = np.full((len(grids), H, W), pad_token, dtype=np.int64)
    for i, g in enumerate(grids):
        if g is None:
            continue
        h, w = g.shape
        if h > H or w > W:
            raise GridError(f"grid {i} is {h}x{w}, larger than the pad size {H}x{W}")
        out[i, :h, :w] = g
    t = torch.from_numpy(out)
    if dtype is not None:
        t = t.to(dtype)
    if device is not None:
        t = t.to(device)
    return t


def crop_padding(padded: Any, *, pad_token: int = PAD_TOKEN) -> np.ndarray | None:
    """Cut the grid out of one padded 2-D array.

    Rule: the grid is the top-left rectangle spanned by the rows and columns that
    hold at least one non-padding cell, from row 0 / column 0 to the last such row /
    column. Padding *inside* that rectangle is kept (it is not a colour, so the result
    is not a valid grid and will be scored as wrong): the crop never repairs a shape.
    Returns None when every cell is padding.
    """
    arr = np.asarray(padded.detach().cpu() if hasattr(padded, "detach") else padded)
    valid = arr != pad_token
    rows = np.flatnonzero(valid.any(axis=1))
    cols = np.flatnonzero(valid.any(axis=0))
    if rows.size == 0:
        return None
    return arr[: rows[-1] + 1, : cols[-1] + 1].copy()


def same_grid(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same grid: the same shape, then the same cells.

    The one test of "is this grid right" (``same_grid(attempt, truth)``) and of "are
    these two grids one": a missing grid (None) is never the same as anything, not even
    another None, so a missing attempt is never right. The dtypes may differ (an
    ``int8`` grid equals the ``int16`` grid of the same colours). Lists are read as
    arrays.

    >>> same_grid([[1, 2]], [[1, 2]]), same_grid([[1, 2]], [[1], [2]]), same_grid(None, None)
    (True, False, False)
    """
    if a is None or b is None:
        return False
    if not isinstance(a, np.ndarray):
        a = np.asarray(a)
    if not isinstance(b, np.ndarray):
        b = np.asarray(b)
    return a.shape == b.shape and bool((a == b).all())


def cell_accuracy(pred: Any, truth: Any, *, otherwise: float = float("nan")) -> float:
    """The fraction of ``pred``'s cells equal to ``truth``'s, when ``pred`` has the
    truth's shape; ``otherwise`` (NaN unless given) when ``pred`` is missing (None) or
    shaped differently. The cell accuracy of the results tables (of the attempt
    :func:`~arcnb.grids.best_attempt` picks), the figures' notes and the program search's
    ``train_score`` (``otherwise=0.0``).

    >>> cell_accuracy([[1, 2]], [[1, 3]]), cell_accuracy([[1, 2]], [[1], [2]])
    (0.5, nan)
    """
    if pred is None:
        return otherwise
    if not isinstance(pred, np.ndarray):
        pred = np.asarray(pred)
    if not isinstance(truth, np.ndarray):
        truth = np.asarray(truth)
    if pred.shape != truth.shape:
        return otherwise
    return float(np.mean(pred == truth))


def best_attempt(truth: np.ndarray, attempts: Sequence[np.ndarray | None],
                 max_k: int | None = None) -> tuple[int | None, float]:
    """The one rule for "the best attempt" of a test output, used everywhere.

    Among the first ``max_k`` attempts (all when None): the first exactly correct
    attempt; else the right-shaped attempt with the highest fraction of correct cells
    (the first on ties); else the first valid attempt. Returns ``(index, cell
    accuracy)``: a 0-based index (None when no attempt is valid) and that attempt's
    cell accuracy (NaN unless it has the truth's shape). This attempt is the one
    behind ``Results.outputs["cell_accuracy"]`` and its ``best_attempt`` column.
    """
    considered = list(attempts if max_k is None else attempts[:max_k])
    best, best_acc, first_valid = None, -1.0, None
    for i, g in enumerate(considered):
        if g is None:
            continue
        if first_valid is None:
            first_valid = i
        if g.shape != truth.shape:
            continue
        acc = cell_accuracy(g, truth)
        if acc > best_acc:
            best, best_acc = i, acc
        if acc == 1.0:
            break
    if best is None:
        return first_valid, float("nan")
    return best, best_acc
