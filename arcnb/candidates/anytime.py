"""What test-time compute buys: anytime curves of a candidate pool, its refinement steps,
and how well passing the demonstrations predicts being right.

Anytime curves (:func:`anytime_curves`)
    For a budget of ``n`` draws (samples, views, steps or iterations: the ``axis``), the
    *exact* expectation over every subset of ``n`` of an output's draws, each subset as
    likely as any other (the unbiased estimator, not one random draw): ``coverage`` (the
    right grid is among the subset's draws), ``pass@1`` and ``pass@2`` (the right grid
    is among the one or two top-ranked grids of the subset). An output with fewer than
    ``n`` draws uses all of them. Per task the mean over its test outputs, then the mean
    over the dataset's tasks (the dataset is the denominator: an output without draws
    counts 0), with a percentile bootstrap band over tasks (:mod:`arcnb.stats`).

    Within a subset, ``votes`` counts each grid's draws in the subset; grids with equal
    counts are ordered by the tie rule of the whole pool's ranking
    (:mod:`arcnb.voting`): uniformly at random (``random``, the default; the exact
    expectation, below), or by the order in which they first appear along the axis
    (``first``: their first draw in the whole pool). A malformed draw is a draw that
    votes for no grid. The other rules rank the grids present in the subset by
    their keys: a named score or ``order`` (first appearance) ignore the counts;
    ``passes_train`` puts grids that pass the demonstrations first, then counts the
    subset's votes, then ``train_score``; ``votes_then_<score>`` counts votes, then the
    score.

    The method, per test output, over its distinct grids with their multiplicities ``m``
    and first-appearance order: with ``N`` draws, the right grid ``r`` drawn ``k`` times
    in the subset and grid ``j`` drawn ``i`` times, ``r`` is top-ranked when every other
    grid stays below its threshold ``theta_j(k)`` (``k`` for a grid that wins ties
    against ``r``, ``k + 1`` for one that loses them, 1 for a grid that outranks ``r``
    whenever present, none for one that never does; under random ties, a rival that may
    tie ``r`` (:data:`TIE`) has threshold ``k + 1`` with its ``x^k`` coefficient
    weighted by ``u``). The number of subsets is the
    coefficient of ``x^(n - k)`` in ``prod_j T_j(x)`` where ``T_j`` is ``(1 + x)^m_j``
    truncated below degree ``theta_j(k)``; summed over ``k`` with ``C(m_r, k)`` and
    divided by ``C(N, n)``. ``pass@2`` (at most one grid above ``r``) is
    ``sum_j C_-j - (R - 1) C_0``, where ``C_0`` counts the subsets with no grid above
    ``r`` and ``C_-j`` those where only ``j`` may be. Grids that cannot reach their
    threshold merge into one binomial factor; the products are batched over ``k`` in
    numpy and every coefficient is scaled by ``2^(-m/2)`` per grid so that pools of up
    to :data:`MAX_ANYTIME_DRAWS` draws per output stay within a float's range. Every
    term is a sum of products of non-negative numbers: the result is exact up to
    floating-point rounding (about 1e-12), which the tests check against enumerating
    every subset.

    Random ties, exactly: given the right grid's uniform tie-break value ``u``, each
    tied rival falls below it with probability ``u``, and a right grid tied with ``T``
    others is first with probability ``1/(T+1)``, the integral of ``u^T`` over [0, 1].
    The products above, with the ``u`` weights, are polynomials in ``u`` of degree at
    most ``d`` (the tied rivals that fit among the draws); they are integrated over
    [0, 1] by Gauss-Legendre quadrature with ``d // 2 + 1`` nodes, which is exact for
    that degree (each node is one more row of the batched products). pass@2 integrates
    the same way. The tests check it against enumerating every subset with every order
    of the tied grids.

Refinement steps (:func:`step_table`)
    When draws carry ``step`` (or ``iteration``): the answer of an output at a step is
    its most-voted grid among that step's draws (ties: the first listed); a step without
    draws keeps the previous answer. ``first_right_step``: per output, the first step
    whose answer is right (``never``); ``stable``: right from then on to the last step;
    ``lost``: right at some step and wrong at the last one. Per step: the share of the
    dataset's outputs whose answer is right, that were right at an earlier step and are
    wrong now, and that changed answer since the previous step.

Verifier (:func:`verifier`)
    Over distinct candidates with a known ``passes_train``: ``precision`` (right among
    those that pass the demonstrations), ``recall`` (passing among the right ones),
    ``overfit_rate`` (wrong among those that pass), and ``coverage_passers`` beside
    ``coverage_all`` (coverage counting only candidates that pass, against all). An empty
    denominator gives NaN.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..stats import bootstrap_indices, percentile_interval

__all__ = ["MAX_ANYTIME_DRAWS", "exact_curves", "anytime_curves", "step_table", "verifier",
           "ALWAYS", "EARLY", "LATE", "NEVER", "TIE"]

#: Most draws of one test output an anytime curve is computed for (beyond, the
#: curve is left out with a warning: the scaled coefficients would leave a float's range).
MAX_ANYTIME_DRAWS = 2000

#: How another grid ranks against the right one within a subset: above it whenever
#: present (``ALWAYS``), above it with at least as many votes (``EARLY``: it wins ties),
#: above it with more votes (``LATE``), never (``NEVER``), above it with more votes and
#: tied with it at equal votes, the tie broken uniformly at random (``TIE``).
ALWAYS, EARLY, LATE, NEVER, TIE = 0, 1, 2, 3, 4


def _binomial_row(m: int) -> np.ndarray:
    """``C(m, i) * 2^(-m/2)`` for ``i = 0 .. m`` (every value within a float's range for
    ``m`` up to about 2,000; computed as one running product, so no step overflows)."""
    if m == 0:
        return np.ones(1)
    i = np.arange(1, m + 1, dtype=float)
    return np.cumprod(np.r_[2.0 ** (-m / 2), (m - i + 1) / i])


class _Rows:
    def __init__(self):
        self.cache: dict[int, np.ndarray] = {}

    def __call__(self, m: int) -> np.ndarray:
        r = self.cache.get(m)
        if r is None:
            r = self.cache[m] = _binomial_row(m)
        return r


def _batched_conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise polynomial products of ``a`` [K, p] and ``b`` [K, q]."""
    if a.shape[1] < b.shape[1]:
        a, b = b, a
    n_rows, p, q = a.shape[0], a.shape[1], b.shape[1]
    out = np.zeros((n_rows, p + q - 1))
    if q == 1:
        return a * b
    if n_rows > 2 * q:  # many rows (k values x tie weights): one shift per column of b
        for j in range(q):
            out[:, j:j + p] += a * b[:, j:j + 1]
        return out
    for k in range(n_rows):  # one C-level convolution per row
        out[k] = np.convolve(a[k], b[k])
    return out


def _add(acc: dict, f: int, v: np.ndarray) -> None:
    if f in acc:
        acc[f] += v
    else:
        acc[f] = v.copy()


def _block(ks, rm, rk, u, w, f_blk, rows, diagonal, acc1, acc2) -> None:
    """The subsets of one block of ``k`` (the right grid's draws in the subset; one row
    per ``k`` and tie weight) at tie weight ``u`` (per row: a tied rival loses the tie
    with probability ``u``), weighted by ``w`` (per row), added to the pass@1
    (``acc1``) and pass@2 (``acc2``) sums per free block."""
    factors = []
    for mj, kj in zip(rm, rk):
        theta = (np.ones_like(ks) if kj == ALWAYS else ks if kj == EARLY else ks + 1)
        width = int(theta.max())
        row = rows(int(mj))[:width]
        cols = np.arange(width)[None, :]
        mat = np.where(cols < theta[:, None], row[None, :], 0.0)
        if kj == TIE:  # drawn as often as the right grid: below it with probability u
            mat = np.where(cols == ks[:, None], mat * u[:, None], mat)
        factors.append(mat)
    ones = w[:, None]
    if not factors:
        v = diagonal(ones, ks)
        _add(acc1, f_blk, v)
        _add(acc2, f_blk, v)
        return
    prefix = [ones]
    for fm in factors:
        prefix.append(_batched_conv(prefix[-1], fm))
    v = diagonal(prefix[-1], ks)
    _add(acc1, f_blk, v)
    _add(acc2, f_blk, v * -(len(factors) - 1))
    suffix = np.ones((ks.size, 1))
    for j in range(len(factors) - 1, -1, -1):
        loo = prefix[j] if j == len(factors) - 1 else _batched_conv(prefix[j], suffix)
        _add(acc2, f_blk + int(rm[j]), diagonal(loo, ks))
        if j:
            suffix = _batched_conv(suffix, factors[j])


def exact_curves(m_r: int, m: np.ndarray, kind: np.ndarray, free: int = 0,
                 rows: _Rows | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One test output's exact ``pass@1``, ``pass@2`` and ``coverage`` for every subset
    size ``n = 1 .. N`` (index ``n - 1``): ``m_r`` draws of the right grid, ``m[j]``
    draws of each other grid with ``kind[j]`` (:data:`ALWAYS`, :data:`EARLY`,
    :data:`LATE`, :data:`NEVER`, :data:`TIE`), ``free`` draws that vote for no grid. See the module
    docstring for the method."""
    rows = rows or _Rows()
    m = np.asarray(m, np.int64)
    kind = np.asarray(kind, np.int64)
    n_total = int(m_r + m.sum() + free)
    if n_total == 0:
        z = np.zeros(0)
        return z, z, z
    if m_r == 0:
        z = np.zeros(n_total)
        return z, z, z.copy()
    n_idx = np.arange(1, n_total + 1)
    # coverage: 1 - C(N - m_r, n) / C(N, n), as a running product
    cov = 1.0 - np.cumprod(np.clip((n_total - m_r - n_idx + 1) / (n_total - n_idx + 1), 0, None))
    rival = kind != NEVER
    free_all = int(free + m[~rival].sum())
    rm, rk = m[rival], kind[rival]
    # k (the right grid's draws in the subset) up to which each rival can stay a threat
    lim = np.where(rk == ALWAYS, m_r, np.where((rk == EARLY) | (rk == TIE), rm, rm - 1))
    lim = np.minimum(lim, m_r)
    keep = lim >= 1
    rm, rk, lim = rm[keep], rk[keep], lim[keep]
    row_r = rows(m_r)
    acc1: dict[int, np.ndarray] = {}
    acc2: dict[int, np.ndarray] = {}

    def diagonal(q, ks):
        """sum over k of C(m_r, k) x^k Q_k(x), as coefficients 0 .. N."""
        idx = ks[:, None] + np.arange(q.shape[1])[None, :]
        return np.bincount(idx.ravel(), weights=(q * row_r[ks][:, None]).ravel(),
                           minlength=n_total + 1)

    bounds = np.unique(np.r_[lim, m_r])
    k0 = 1
    for k1 in bounds:
        if k1 < k0:
            continue
        ks = np.arange(k0, k1 + 1)
        active = lim >= k1  # constant over the block: lim is a block boundary
        f_blk = free_all + int(rm[~active].sum()) + int(m[rival][~keep].sum())
        # random ties: the tie weight u integrated over [0, 1] by Gauss-Legendre, exact
        # for the integrand's degree in u (at most the tied rivals that fit in the draws)
        n_tie = int((rk[active] == TIE).sum())
        deg = min(n_tie, (n_total - m_r - free) // int(k0)) if n_tie else 0
        nodes, weights = np.polynomial.legendre.leggauss(deg // 2 + 1)
        # every (node, k) pair is one row of the batched products
        u = np.repeat((nodes + 1) / 2, ks.size)
        w = np.repeat(weights / 2, ks.size)
        _block(np.tile(ks, nodes.size), rm[active], rk[active], u, w, f_blk, rows, diagonal,
               acc1, acc2)
        k0 = k1 + 1
    denom = rows(n_total)[1:]
    out = []
    for acc in (acc1, acc2):
        total = np.zeros(n_total + 1)
        prev = None
        for f in sorted(acc, reverse=True):
            if prev is not None:
                total = np.convolve(total, rows(prev - f))[:n_total + 1]
            total = total + acc[f]
            prev = f
        if prev:
            total = np.convolve(total, rows(prev))[:n_total + 1]
        out.append(np.clip(total[1:] / denom, 0.0, 1.0))
    return out[0], out[1], np.clip(cov, 0.0, 1.0)


def _kinds(votes_matter: bool, cls: np.ndarray, tie: np.ndarray, r: int,
           random_ties: bool = False) -> np.ndarray:
    """Each grid's :data:`ALWAYS` / :data:`EARLY` / :data:`LATE` / :data:`NEVER` /
    :data:`TIE` against grid ``r``: ``cls`` higher ranks first, then (when votes matter)
    the votes, then ``tie`` lower first; with ``random_ties`` (votes matter), grids of
    equal ``cls`` and equal ``tie`` are tied with ``r`` at equal votes (:data:`TIE`)."""
    above = (cls > cls[r]) | ((cls == cls[r]) & (tie < tie[r]))
    if not votes_matter:
        return np.where(above, ALWAYS, NEVER)
    at_tie = TIE if random_ties else LATE
    return np.where(cls > cls[r], ALWAYS, np.where(cls < cls[r], NEVER, np.where(
        tie < tie[r], EARLY, np.where(tie == tie[r], at_tie, LATE))))


def anytime_curves(out, votes, correct, n_out, free, keys, *, votes_matter=True,
                   random_ties=False):
    """Per test output (rows) and subset size (columns, ``n = 1 .. n_max``): exact
    ``pass@1``, ``pass@2`` and ``coverage`` arrays. ``out`` / ``votes`` / ``correct``:
    the distinct grids; ``free[o]``: draws of output ``o`` that vote for no grid;
    ``keys``: ``(cls, tie)`` per grid (see :func:`_kinds`; with ``random_ties`` grids of
    equal keys tie at equal votes, broken uniformly at random). Outputs with more than
    :data:`MAX_ANYTIME_DRAWS` draws are left at 0 and listed (second value)."""
    cls, tie = keys
    sizes = np.bincount(out, weights=votes, minlength=n_out).astype(np.int64) + free
    n_max = int(sizes.max()) if sizes.size else 0
    too_big = np.flatnonzero(sizes > MAX_ANYTIME_DRAWS)
    n_max = min(n_max, MAX_ANYTIME_DRAWS)
    p1 = np.zeros((n_out, n_max))
    p2 = np.zeros((n_out, n_max))
    cov = np.zeros((n_out, n_max))
    order = np.argsort(out, kind="stable")
    starts = np.searchsorted(out[order], np.arange(n_out + 1))
    rows = _Rows()
    for o in range(n_out):
        idx = order[starts[o]:starts[o + 1]]
        if sizes[o] > MAX_ANYTIME_DRAWS or sizes[o] == 0:
            continue
        right = np.flatnonzero(correct[idx])
        if right.size == 0:
            continue
        r = int(right[0])
        kinds = _kinds(votes_matter, cls[idx], tie[idx], r, random_ties)
        others = np.arange(idx.size) != r
        a, b, c = exact_curves(int(votes[idx][r]), votes[idx][others], kinds[others],
                               int(free[o]), rows)
        n = a.size
        p1[o, :n], p2[o, :n], cov[o, :n] = a, b, c
        p1[o, n:], p2[o, n:], cov[o, n:] = a[-1], b[-1], c[-1]
    return (p1, p2, cov), too_big


def per_task(curves: np.ndarray, task_of: np.ndarray, n_tasks: int) -> np.ndarray:
    """Rows per output -> rows per task (the mean over each task's outputs)."""
    n_per = np.bincount(task_of, minlength=n_tasks).astype(float)
    sums = np.zeros((n_tasks, curves.shape[1]))
    np.add.at(sums, task_of, curves)
    return sums / n_per[:, None]


def band(task_rows: np.ndarray, *, n_boot: int, seed: int, level: float = 0.95):
    """Percentile bootstrap band over tasks of the mean of every column: (low, high)."""
    n = task_rows.shape[0]
    if n == 0 or task_rows.shape[1] == 0:
        nan = np.full(task_rows.shape[1], np.nan)
        return nan, nan
    idx = bootstrap_indices(n, n_boot=n_boot, seed=seed)
    weights = np.zeros((idx.shape[0], n))
    np.add.at(weights, (np.repeat(np.arange(idx.shape[0]), n), idx.ravel()), 1.0)
    boot = weights @ task_rows / n
    lo, hi = percentile_interval(boot, level)
    return lo, hi


# ------------------------------------------------------------------------ steps
def step_table(out, cand, step, weight, entry_pos, correct, n_out):
    """Per output and step: the answer (most-voted grid of the step, ties to the first
    listed), carried forward over steps without draws. Returns ``(steps, answer_right,
    answer)`` with ``answer_right`` / ``answer`` [n_out, n_steps] (answer -1: none)."""
    df = pd.DataFrame({"out": out, "cand": cand, "step": step, "w": weight, "pos": entry_pos})
    df = df[np.isfinite(df["step"])]
    steps = np.unique(df["step"].to_numpy())
    if steps.size == 0:
        return steps, np.zeros((n_out, 0), bool), np.full((n_out, 0), -1)
    g = df.groupby(["out", "step", "cand"], sort=False).agg(w=("w", "sum"), pos=("pos", "min"))
    g = g.reset_index().sort_values(["out", "step", "w", "pos"],
                                    ascending=[True, True, False, True])
    top = g.drop_duplicates(["out", "step"])
    s_idx = np.searchsorted(steps, top["step"].to_numpy())
    answer = np.full((n_out, steps.size), -1, np.int64)
    answer[top["out"].to_numpy(np.int64), s_idx] = top["cand"].to_numpy(np.int64)
    for j in range(1, steps.size):  # a step without draws keeps the previous answer
        missing = answer[:, j] < 0
        answer[missing, j] = answer[missing, j - 1]
    right = np.where(answer >= 0, correct[np.maximum(answer, 0)], False)
    return steps, right, answer


def step_summary(steps, right, answer) -> tuple[dict, pd.DataFrame, dict]:
    """``first_right_step`` counts (keyed by the step value, and ``never``), the stable
    and lost counts, the per-step table of shares (over every output) and, per output,
    its first right step (None: never), whether it is stable and whether it is lost."""
    n_out = right.shape[0]
    ever = right.any(axis=1)
    first = np.where(ever, right.argmax(axis=1), -1)
    counts: dict[str, int] = {}
    for j, s in enumerate(steps):
        c = int((first == j).sum())
        if c:
            counts[_step_name(s)] = c
    counts["never"] = int((~ever).sum())
    later_all = np.array([bool(right[o, first[o]:].all()) if first[o] >= 0 else False
                          for o in range(n_out)], bool)
    lost_final = ever & ~right[:, -1] if right.shape[1] else np.zeros(n_out, bool)
    earlier = np.maximum.accumulate(right, axis=1)
    before = np.c_[np.zeros((n_out, 1), bool), earlier[:, :-1]]
    changed = np.c_[np.zeros((n_out, 1), bool), answer[:, 1:] != answer[:, :-1]]
    with np.errstate(invalid="ignore", divide="ignore"):
        table = pd.DataFrame({
            "step": [_step_value(s) for s in steps],
            "share_right": right.mean(axis=0) if n_out else np.nan,
            "share_lost": (before & ~right).mean(axis=0) if n_out else np.nan,
            "share_changed": changed.mean(axis=0) if n_out else np.nan})
    stability = {"n_outputs": n_out, "n_right_at_some_step": int(ever.sum()),
                 "n_stable": int(later_all.sum()), "n_lost": int(lost_final.sum())}
    per_output = pd.DataFrame({
        "first_right_step": [_step_value(steps[f]) if f >= 0 else None for f in first],
        "stable": later_all, "lost": lost_final})
    return counts, table, stability, per_output


def _step_value(s: float):
    return int(s) if float(s).is_integer() else float(s)


def _step_name(s: float) -> str:
    return str(_step_value(s))


# ------------------------------------------------------------------------ verifier
def verifier(out, passes, correct, task_of, n_out) -> dict:
    """Precision, recall, overfit rate of ``passes_train`` as a predictor of a distinct
    candidate being right (candidates without the field left out; NaN for an empty
    denominator), the confusion counts, and coverage among passing candidates against
    all (per task, then the mean over tasks)."""
    known = np.isfinite(passes)
    p = (passes == 1) & known
    f = (passes == 0) & known
    ok = correct.astype(bool)
    n_pr, n_pw = int((p & ok).sum()), int((p & ~ok).sum())
    n_fr, n_fw = int((f & ok).sum()), int((f & ~ok).sum())

    def rate(a, b):
        return a / b if b else math.nan

    n_tasks = int(task_of.max()) + 1 if task_of.size else 0
    n_per = np.bincount(task_of, minlength=n_tasks).astype(float)

    def cov(mask):
        hit = np.zeros(n_out, bool)
        hit[out[mask & ok]] = True
        with np.errstate(invalid="ignore", divide="ignore"):
            return float(np.mean(np.bincount(task_of, weights=hit.astype(float),
                                              minlength=n_tasks) / n_per))

    return {"precision": rate(n_pr, n_pr + n_pw), "recall": rate(n_pr, n_pr + n_fr),
            "overfit_rate": rate(n_pw, n_pr + n_pw),
            "coverage_passers": cov(p), "coverage_all": cov(np.ones_like(ok)),
            "n_pass_right": n_pr, "n_pass_wrong": n_pw, "n_fail_right": n_fr,
            "n_fail_wrong": n_fw}
