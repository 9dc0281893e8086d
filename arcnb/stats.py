"""Statistics with honest uncertainty: seeded bootstrap intervals over tasks."""
from __future__ import annotations

import numpy as np

__all__ = ["bootstrap_ci"]


def bootstrap_ci(values, *, n_boot: int = 1000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values`` (resampling tasks).

    ``values`` holds one number per task (e.g. a task's pass@2). Resampling uses
    ``numpy.random.default_rng(seed)`` so the interval is reproducible. Returns
    ``(nan, nan)`` for an empty input. The interval of a constant is that constant.
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(n_boot, v.size))
    means = v[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    # a constant input must give exactly that constant, free of rounding
    if np.all(v == v[0]):
        return (float(v[0]), float(v[0]))
    return (float(lo), float(hi))
