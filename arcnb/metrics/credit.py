"""Partial credit of one predicted grid against its truth (used by :mod:`arcnb.scoring`).

numpy only: no torch.
"""
from __future__ import annotations

import numpy as np

from ..grids import same_grid


def partial_credit(truth, pred) -> float:
    """Partial credit for one predicted grid.

    1.0 on an exact match; 0.0 for None; otherwise
    ``(min/max ratio of rows) * (min/max ratio of columns) * cell accuracy`` on the
    top-left overlap of the two grids.

    >>> partial_credit([[1, 2, 3], [4, 5, 6]], [[3, 2, 1], [4, 5, 6]])
    0.6666666666666666
    >>> round(partial_credit([[1, 2, 3], [4, 5, 6]], [[3, 2, 1], [4, 5, 6], [7, 8, 9]]), 4)
    0.4444
    """
    if pred is None:
        return 0.0
    t = np.asarray(truth)
    p = np.asarray(pred)
    if same_grid(t, p):
        return 1.0
    if p.ndim != 2 or p.size == 0:
        return 0.0
    rows = min(t.shape[0], p.shape[0]) / max(t.shape[0], p.shape[0])
    cols = min(t.shape[1], p.shape[1]) / max(t.shape[1], p.shape[1])
    h, w = min(t.shape[0], p.shape[0]), min(t.shape[1], p.shape[1])
    acc = float(np.mean(t[:h, :w] == p[:h, :w]))
    return float(rows * cols * acc)
