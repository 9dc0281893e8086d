"""Statistics with honest uncertainty: seeded bootstrap intervals over tasks, paired
bootstrap intervals for the difference between two runs on the same tasks, the exact
McNemar test on paired solved / unsolved flags, and Student's t distribution (any
positive, not necessarily whole, degrees of freedom) for t-based tests and intervals."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from .errors import ParameterError

__all__ = ["bootstrap_indices", "percentile_interval", "bootstrap_ci", "ratio_bootstrap_ci",
           "paired_bootstrap_ci", "mcnemar_exact", "mcnemar_table", "pareto_front",
           "check_n_boot", "check_seed", "MAX_N_BOOT", "MAX_SEED", "t_sf", "t_quantile",
           "t_isf"]

#: Most bootstrap resamples arcnb draws (100,000): the resamples of 1,000 tasks then
#: take 800 MB; the default 1,000 is plenty for a 95 % interval.
MAX_N_BOOT = 100_000
#: Largest seed (2^63 - 1): every random generator arcnb seeds (numpy's, torch's)
#: takes it.
MAX_SEED = 2 ** 63 - 1


def check_n_boot(n_boot) -> int:
    """``n_boot`` as an int, refused (:class:`~arcnb.errors.ParameterError`, one line)
    unless it is a whole number from 1 to :data:`MAX_N_BOOT`."""
    return whole_number(n_boot, 1, MAX_N_BOOT, "the number of bootstrap resamples")


def check_seed(seed) -> int:
    """``seed`` as an int, refused (:class:`~arcnb.errors.ParameterError`, one line)
    unless it is a whole number from 0 to :data:`MAX_SEED`."""
    return whole_number(seed, 0, MAX_SEED, "the seed")


def whole_number(value, low: int, high: int, what: str) -> int:
    """``value`` as an int, refused (:class:`~arcnb.errors.ParameterError`, one line
    naming ``what``) unless it is a whole number (an int or a numpy integer, not a
    bool) from ``low`` to ``high``: the one check behind :func:`check_n_boot`,
    :func:`check_seed` and the bounded evaluation options."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not low <= value <= high:
        raise ParameterError(f"{what} must be a whole number from {low} to {high}, got "
                             f"{value!r}")
    return int(value)


def bootstrap_indices(n: int, *, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """``[n_boot, n]`` unit indices drawn with replacement by
    ``numpy.random.default_rng(seed)``: the one resampling behind every interval of
    arcnb (a unit is a task), so equal seeds draw equal resamples everywhere."""
    rng = np.random.default_rng(check_seed(seed))
    return rng.integers(0, n, size=(n_boot, n))


#: Resampled values held at once by :func:`bootstrap_means` (8 bytes each, and as many
#: indices): about 64 MB, whatever the number of units.
BOOTSTRAP_CHUNK = 4_000_000


def bootstrap_means(values, *, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """The ``n_boot`` means of ``values`` resampled by :func:`bootstrap_indices` (the
    same draws), computed a block of resamples at a time: memory stays near
    :data:`BOOTSTRAP_CHUNK` values (300,000 units x 1,000 resamples: about 64 MB, not
    4.8 GB); time is ``n_boot x n``."""
    v = np.asarray(values, dtype=float)
    n = v.size
    rng = np.random.default_rng(check_seed(seed))
    step = max(1, BOOTSTRAP_CHUNK // max(n, 1))
    out = np.empty(n_boot)
    for start in range(0, n_boot, step):
        rows = min(step, n_boot - start)
        # drawn in order from one generator: the same indices as bootstrap_indices
        out[start:start + rows] = v[rng.integers(0, n, size=(rows, n))].mean(axis=1)
    return out


def percentile_interval(samples, level: float = 0.95, axis: int = 0):
    """The central ``level`` percentile interval ``(low, high)`` of bootstrap
    ``samples`` along ``axis``."""
    alpha = (1.0 - level) / 2.0
    return np.quantile(samples, [alpha, 1.0 - alpha], axis=axis)


def bootstrap_ci(values, *, n_boot: int = 1000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values`` (resampling tasks).

    ``values`` holds one number per task (e.g. a task's pass@2). Resampling uses
    ``numpy.random.default_rng(seed)`` so the interval is reproducible. Returns
    ``(nan, nan)`` for an empty input. The interval of a constant is that constant.
    """
    n_boot = check_n_boot(n_boot)
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return (float("nan"), float("nan"))
    means = bootstrap_means(v, n_boot=n_boot, seed=seed)
    lo, hi = percentile_interval(means, level)
    # a constant input must give exactly that constant, free of rounding
    if np.all(v == v[0]):
        return (float(v[0]), float(v[0]))
    return (float(lo), float(hi))


def ratio_bootstrap_ci(num, den, *, n_boot: int = 1000, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of ``sum(num) / sum(den)``, resampling the units (rows; one
    per task). Units with ``den == 0`` count in the resample but add nothing; resamples
    whose ``den`` sums to 0 are left out. No unit with ``den > 0`` gives NaNs; a
    constant ratio gives exactly that constant."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    ok = den > 0
    if not ok.any():
        return (float("nan"), float("nan"))
    ratio = num / np.where(ok, den, 1.0)
    if np.all(ratio[ok] == ratio[ok][0]):
        return (float(ratio[ok][0]), float(ratio[ok][0]))
    idx = bootstrap_indices(num.size, n_boot=n_boot, seed=seed)
    d = den[idx].sum(axis=1)
    r = num[idx].sum(axis=1)[d > 0] / d[d > 0]
    lo, hi = percentile_interval(r, level)
    return (float(lo), float(hi))


def paired_bootstrap_ci(a, b, *, n_boot: int = 1000, seed: int = 0,
                        level: float = 0.95) -> tuple[float, float, float]:
    """Difference ``mean(b) - mean(a)`` over the same units (tasks) with a paired
    percentile bootstrap interval.

    ``a[i]`` and ``b[i]`` are the two runs' values on unit ``i``; a resample draws unit
    indices with replacement (``numpy.random.default_rng(seed)``) and keeps each unit's
    pair together, so the interval reflects the per-unit differences
    ``d_i = b_i - a_i``. Returns ``(difference, low, high)``. Units where either value
    is NaN are dropped; an empty input gives NaNs. When every ``d_i`` is the same
    number (e.g. a run compared with itself, all 0) the interval is exactly that number.
    """
    check_n_boot(n_boot)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ParameterError(f"paired values need two 1-D arrays of one length, got shapes "
                             f"{a.shape} and {b.shape}")
    d = b - a
    d = d[~np.isnan(d)]
    if d.size == 0:
        return (float("nan"), float("nan"), float("nan"))
    diff = float(d.mean())
    if np.all(d == d[0]):
        return (float(d[0]), float(d[0]), float(d[0]))
    lo, hi = bootstrap_ci(d, n_boot=n_boot, seed=seed, level=level)
    return (diff, lo, hi)


def mcnemar_exact(n01: int, n10: int) -> float:
    """Exact two-sided McNemar p-value from the two discordant counts.

    ``n01`` = units solved by the second run only, ``n10`` = by the first run only.
    Under the null hypothesis (both runs equally good) each discordant unit falls on
    either side with probability 1/2, so with ``n = n01 + n10`` and
    ``m = min(n01, n10)``::

        p = min(1, 2 * sum_{i=0}^{m} C(n, i) / 2^n)

    Computed with exact integers. ``n = 0`` gives ``p = 1``.

    >>> mcnemar_exact(1, 9)   # 2 * (1 + 10) / 1024
    0.021484375
    """
    n01, n10 = int(n01), int(n10)
    if n01 < 0 or n10 < 0:
        raise ParameterError("discordant counts must be >= 0")
    n = n01 + n10
    if n == 0:
        return 1.0
    m = min(n01, n10)
    tail = sum(math.comb(n, i) for i in range(m + 1))
    return min(1.0, 2 * tail / 2 ** n)


def mcnemar_table(solved_a, solved_b) -> dict:
    """Paired 2x2 table of two runs' solved / unsolved flags on the same units, and
    the exact McNemar test on it.

    Returns ``n_both`` (solved by both), ``n_a_only``, ``n_b_only``, ``n_neither``,
    ``n`` and ``p_value`` = :func:`mcnemar_exact` ``(n_b_only, n_a_only)``.
    """
    a = np.asarray(solved_a, dtype=bool)
    b = np.asarray(solved_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ParameterError(f"paired flags need two 1-D arrays of one length, got shapes "
                             f"{a.shape} and {b.shape}")
    out = {
        "n_both": int(np.sum(a & b)),
        "n_a_only": int(np.sum(a & ~b)),
        "n_b_only": int(np.sum(~a & b)),
        "n_neither": int(np.sum(~a & ~b)),
        "n": int(a.size),
    }
    out["p_value"] = mcnemar_exact(out["n_b_only"], out["n_a_only"])
    return out


def pareto_front(cost, score) -> np.ndarray:
    """Which points lie on the Pareto front of *lower cost, higher score*.

    Point i is on the front unless another point j is at least as good on both
    (``cost_j <= cost_i`` and ``score_j >= score_i``) and strictly better on one.
    Equal points are all on the front; a point whose cost or score is NaN is never on
    it and dominates nothing. Returns a boolean array.

    >>> pareto_front([1, 2, 3, 2], [0.1, 0.3, 0.2, 0.05]).tolist()
    [True, True, False, False]
    """
    c = np.asarray(cost, dtype=float)
    s = np.asarray(score, dtype=float)
    if c.shape != s.shape or c.ndim != 1:
        raise ParameterError(f"cost and score must be 1-D arrays of one length, got {c.shape} "
                             f"and {s.shape}")
    ok = np.isfinite(c) & np.isfinite(s)
    # [i, j]: point j dominates point i
    dom = ((c[None, :] <= c[:, None]) & (s[None, :] >= s[:, None])
           & ((c[None, :] < c[:, None]) | (s[None, :] > s[:, None])) & ok[None, :])
    return ok & ~dom.any(axis=1)


def _betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), elementwise (arrays of one
    broadcast shape, a, b > 0, 0 <= x <= 1): the continued fraction of Numerical
    Recipes (modified Lentz), on the side of x where it converges fast."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (a, b, x)))
    flip = x > (a + 1.0) / (a + b + 2.0)
    a, b, x = np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1.0 - x, x)
    lgamma = np.vectorize(math.lgamma, otypes=[float])
    with np.errstate(divide="ignore"):
        front = np.exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * np.log(x)
                       + b * np.log1p(-x)) / a
    tiny = 1e-300
    c = np.ones_like(x)
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, 301):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + num / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            h = h * d * c
        if np.all(np.abs(d * c - 1.0) < 1e-15):
            break
    out = front * h
    return np.where(flip, 1.0 - out, out)


def t_sf(t, df):
    """P(T >= t) for Student's t with ``df`` degrees of freedom (any df > 0, not only
    whole numbers; ``inf`` is the normal distribution), elementwise. NaN where ``df``
    is NaN or not positive.

    >>> round(float(t_sf(12.706204736, 1)), 6)   # the table's t(0.975, 1)
    0.025
    """
    t, df = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(df, dtype=float))
    ok = np.isfinite(df) & (df > 0)
    v = np.where(ok, np.minimum(df, 1e7), 1.0)
    tail = 0.5 * _betainc(v / 2.0, 0.5, v / (v + t * t))
    sf = np.where(t > 0, tail, 1.0 - tail)
    normal = 0.5 * np.vectorize(math.erfc, otypes=[float])(t / math.sqrt(2.0))
    sf = np.where(df > 1e7, normal, sf)                           # normal beyond 1e7
    out = np.where(ok | (np.isinf(df) & (df > 0)), sf, np.nan)
    return out if out.ndim else float(out)


def _t_logpdf_const(df):
    lgamma = np.vectorize(math.lgamma, otypes=[float])
    return lgamma((df + 1.0) / 2.0) - lgamma(df / 2.0) - 0.5 * np.log(df * math.pi)


def t_quantile(q, df):
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom (any df > 0;
    ``inf``: the normal one), elementwise: Newton's method on ``log t`` against
    :func:`t_sf`, kept inside a shrinking bracket (a bisection step when Newton's leaves
    it), to about 1e-10 relative. NaN where ``df`` is NaN or not positive or ``q`` is
    outside (0, 1).

    >>> round(float(t_quantile(0.975, 10)), 3)   # the table's 2.228
    2.228
    """
    q, df = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(df, dtype=float))
    x = t_isf(np.minimum(q, 1.0 - q), df)
    out = np.where(q >= 0.5, x, -x)
    return out if out.ndim else float(out)


def t_isf(p, df):
    """The ``t`` with ``P(T >= t) = p`` for Student's t with ``df`` degrees of freedom
    (the upper-tail inverse: exact also for tails far below 1e-16, where ``1 - p`` is 1
    in floating point), elementwise. NaN where ``df`` is NaN or not positive or ``p`` is
    outside (0, 1).

    >>> round(float(t_isf(0.025, 10)), 3)
    2.228
    """
    q, df = np.broadcast_arrays(np.asarray(p, dtype=float), np.asarray(df, dtype=float))
    ok = (df > 0) & (q > 0) & (q < 1) & ~np.isnan(df)
    tail = np.where(ok, np.minimum(q, 1.0 - q), 0.25)              # upper tail, <= 0.5
    v = np.where(ok, np.minimum(df, 1e10), 1.0)
    const = _t_logpdf_const(v)
    lo, hi = np.full(q.shape, -50.0), np.full(q.shape, 700.0)    # log t
    z = np.vectorize(lambda a: -NormalDist().inv_cdf(a) if 0 < a < 0.5 else 0.0,
                     otypes=[float])(tail)
    y = np.log(np.maximum(z, 1e-3))                               # t >= z: from the left
    for _ in range(100):
        x = np.exp(y)
        g = t_sf(x, v) - tail
        lo, hi = np.where(g > 0, y, lo), np.where(g > 0, hi, y)
        dens = np.exp(const - (v + 1.0) / 2.0 * np.log1p(x * x / v)) * x
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            step = y + g / dens
        bad = ~np.isfinite(step) | (step < lo) | (step > hi)
        new = np.where(bad, (lo + hi) / 2.0, step)
        done = (~bad & (np.abs(step - y) < 1e-12)) | (hi - lo < 1e-12) | (g == 0)
        y = new
        if np.all(done | ~ok):
            break
    y = np.where(df > 1e7, np.log(np.maximum(z, 1e-300)), y)      # normal beyond 1e7
    x = np.where(q == 0.5, 0.0, np.where(q < 0.5, np.exp(y), -np.exp(y)))
    out = np.where(ok, x, np.nan)
    return out if out.ndim else float(out)
