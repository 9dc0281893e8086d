"""The intervals and the test of many runs (``arcnb repeats``), from a task x run matrix
of pass@2 per configuration: closed form, vectorised over any leading axes (a
simulation passes ``[experiments, tasks, runs]`` and gets one answer per experiment).

A run's pass@2 on a task mixes three things: the task (some are easy), the run (a seed
that moves every task of that run: sampling temperature, colour permutations, bf16
nondeterminism) and the luck of that run on that task. The two-way analysis of
variance of the ``T x n`` matrix of one configuration estimates them without a model:

* ``var_runs``, the variance over its runs of a run's pass@2 (the mean over tasks): the
  seed's shift plus the luck averaged over the tasks;
* ``ms_resid``, the mean square of the task x run residual (the matrix minus its task
  means and run means, plus its grand mean): the luck of one run on one task;
* ``var_tasks``, the variance over tasks of the per-task solve rate (the mean over
  runs): the task's difficulty plus the luck averaged over the runs.

**One configuration's mean** (``config_interval``): its variance over new tasks and new
runs is ``max(0, var_tasks - ms_resid / n) / T`` (the tasks) plus ``var_runs / n`` (the
runs), the usual unbiased estimate of a crossed design. The 95 % interval is the mean
plus or minus ``q`` standard errors, where ``q`` weighs the t quantile of each part by
its share of the variance (Cochran and Cox): ``T - 1`` degrees of freedom for the tasks,
``n - 1`` for the runs. With one run the run-to-run spread cannot be estimated and the
interval is NaN.

**The difference of two configurations** (``compare``, ``b - a`` on the same tasks): a
t-test whose variance has two parts, the task-by-configuration interaction
``max(0, var_d - ms_a / n_a - ms_b / n_b) / T`` (``var_d``: the variance over tasks of
the per-task difference of the solve rates, less the luck it holds; ``T - 1`` degrees
of freedom) and the run-to-run spread ``v_p (1 / n_a + 1 / n_b)`` (``v_p``:
``var_runs`` pooled over the two configurations; ``n_a + n_b - 2`` degrees of freedom).
Its critical values ``q`` weigh the two parts' t quantiles by their shares of the
variance (Cochran and Cox), as for one configuration. (Runs whose pass@2 agree exactly,
which happens with few runs, count the spread of a run's mean as ``ms_resid / T``, the
luck of its tasks, which it cannot be below.) The interval is ``diff`` plus or minus
``q_0.975`` standard errors; the p-value (two-sided) is the level whose ``q`` is
``|diff| / se``, so it is below 0.05 exactly when the interval leaves out 0; ``mde80``,
the difference this test detects with 80 % power at the 5 % level, is
``q_0.975 + q_0.8`` standard errors, and ``runs_needed`` projects it to more runs. It
needs two runs of each configuration; when nothing varies (every task the same in every
run of both) there is no spread to test against and every number but ``diff`` is NaN,
with the reason in ``note``.

``docs/guide/repeats.md`` shows by simulation (``scripts/repeats_simulation.py``)
that the test keeps its 5 % level with and without seed effects, 2 to 5 runs each.
"""
from __future__ import annotations

import numpy as np

from ..stats import t_isf, t_quantile, t_sf

__all__ = ["TEST", "TEST_NAME", "POWER_DIFFS", "MAX_RUNS_NEEDED", "two_way",
           "mixed_quantile", "mixed_p",
           "config_interval", "compare", "runs_needed", "NOTE_ONE_RUN", "NOTE_ONE_RUN_CONFIG",
           "NOTE_NO_SPREAD",
           "NOTE_ONE_TASK"]

#: The test between two configurations, by name (each comparison's ``test``).
TEST_NAME = "two-level t-test (tasks and runs)"
#: The test in words.
TEST = ("t-test of the difference of the means: its variance is the task-by-configuration "
        "interaction over tasks plus the run-to-run spread pooled over the two "
        "configurations, its critical values the two parts' t quantiles weighted by "
        "their shares (Cochran and Cox); two-sided")
#: The differences (in pass@2) each comparison says how many runs would detect.
POWER_DIFFS = (0.01, 0.02, 0.05, 0.1)
#: The most runs per configuration ``runs_needed`` says; a difference that needs more
#: gets None (more tasks are needed, not more runs).
MAX_RUNS_NEEDED = 10_000
NOTE_ONE_RUN = ("needs at least two runs of each configuration to estimate the "
                "run-to-run spread")
NOTE_ONE_RUN_CONFIG = "needs at least two runs to estimate the run-to-run spread"
NOTE_NO_SPREAD = ("nothing varies between the tasks or the runs: there is no spread to "
                  "test against")
NOTE_ONE_TASK = "needs at least two tasks"


def _var(x: np.ndarray, axis: int) -> np.ndarray:
    n = x.shape[axis]
    if n < 2:
        return np.full(np.delete(x.shape, axis % x.ndim), np.nan)
    return x.var(axis=axis, ddof=1)


def two_way(P) -> dict:
    """The two-way decomposition of ``P`` (``[..., tasks, runs]``): ``mean``,
    ``task_means`` (the per-task solve rates), ``var_tasks``, ``var_runs`` and
    ``ms_resid`` (see the module docstring; NaN where fewer than two tasks or runs)."""
    P = np.asarray(P, dtype=float)
    t, n = P.shape[-2:]
    task_means, run_means = P.mean(axis=-1), P.mean(axis=-2)
    mean = P.mean(axis=(-2, -1))
    if t > 1 and n > 1:
        resid = P - task_means[..., None] - run_means[..., None, :] + mean[..., None, None]
        ms = (resid ** 2).sum(axis=(-2, -1)) / ((t - 1) * (n - 1))
    else:
        ms = np.full(mean.shape, np.nan)
    return {"mean": mean, "task_means": task_means, "var_tasks": _var(task_means, -1),
            "var_runs": _var(run_means, -1), "ms_resid": ms}


def config_interval(P, level: float = 0.95, bounds=(0.0, 1.0)) -> dict:
    """One configuration's mean with its interval over tasks and runs (Cochran and Cox's
    weighted t quantile; see the module docstring). ``P``: ``[..., tasks, runs]``.
    Returns arrays ``mean``, ``low``, ``high``, ``var_tasks`` (the tasks' part of the
    mean's variance), ``var_runs`` (the runs' part) and ``note`` (a sentence when the
    interval cannot be given, else None). A constant matrix gives its constant; the
    ends are kept within ``bounds`` (pass@2 lies in [0, 1])."""
    lo, hi = bounds
    P = np.asarray(P, dtype=float)
    t, n = P.shape[-2:]
    w = two_way(P)
    mean = w["mean"]
    if n < 2 or t < 2:
        nan = np.full(mean.shape, np.nan)
        v_tasks = w["var_tasks"] / t if n < 2 else nan
        return {"mean": mean, "low": nan, "high": nan, "var_tasks": v_tasks,
                "var_runs": nan, "note": NOTE_ONE_RUN_CONFIG if n < 2 else NOTE_ONE_TASK}
    v_tasks = np.maximum(w["var_tasks"] - w["ms_resid"] / n, 0.0) / t
    floor = w["var_runs"] <= 0  # runs that agree exactly: the luck of the tasks at least
    v_runs = np.where(floor, w["ms_resid"] / t, w["var_runs"]) / n
    df_runs = np.where(floor, (t - 1) * (n - 1), n - 1)
    # both parts 0 while the tasks differ: the tasks' spread alone, unsplit
    v_tasks = np.where((v_tasks + v_runs == 0) & (w["var_tasks"] > 0), w["var_tasks"] / t,
                       v_tasks)
    total = v_tasks + v_runs
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, v_tasks / np.where(total > 0, total, 1.0), 1.0)
        q = mixed_quantile((1.0 - level) / 2.0, share, t - 1, df_runs)
        half = np.where(total > 0, q * np.sqrt(total), 0.0)
    return {"mean": mean, "low": np.clip(mean - half, lo, hi),
            "high": np.clip(mean + half, lo, hi), "var_tasks": v_tasks, "var_runs": v_runs,
            "note": None}


def mixed_quantile(tail, w, df1, df2):
    """The weighted t critical value ``w t1 + (1 - w) t2``, ``t1`` and ``t2`` the points
    with upper tail ``tail`` of Student's t with ``df1`` and ``df2`` degrees of freedom
    (Cochran and Cox's critical value of a variance made of two parts, ``w`` the first
    part's share), elementwise."""
    w = np.asarray(w, dtype=float)
    q1, q2 = t_isf(tail, df1), t_isf(tail, df2)
    return np.where(w >= 1, q1, np.where(w <= 0, q2, w * q1 + (1 - w) * q2))


def mixed_p(x, w, df1, df2):
    """The two-sided p-value of ``x`` (``|estimate| / se``) against
    :func:`mixed_quantile`: the level ``a`` whose critical value
    ``mixed_quantile(a / 2, ...)`` is ``x``. It lies between the two t distributions'
    own p-values; found by regula falsi (the Illinois rule) on ``log a`` inside them,
    to about 1e-10 relative."""
    x, w, df1, df2 = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                          for v in (x, w, df1, df2)))
    p1, p2 = 2.0 * t_sf(x, df1), 2.0 * t_sf(x, df2)
    lo_p, hi_p = np.maximum(np.minimum(p1, p2), 1e-300), np.maximum(p1, p2)
    out = np.where(w >= 1, p1, np.where(w <= 0, p2, np.nan))
    todo = np.isnan(out) & (hi_p > lo_p)
    out = np.where(np.isnan(out) & ~todo, lo_p, out)
    if todo.any():
        out[todo] = _solve_p(x[todo], w[todo], df1[todo], df2[todo], lo_p[todo], hi_p[todo])
    return np.minimum(out, 1.0)


def _solve_p(x, w, df1, df2, lo_p, hi_p):
    """:func:`mixed_p` where it needs a root: ``log a`` in ``[log lo_p, log hi_p]``."""
    def f(la):
        return mixed_quantile(np.exp(la) / 2.0, w, df1, df2) - x

    a, b = np.log(lo_p), np.log(hi_p)
    fa, fb = f(a), f(b)                                # fa >= 0 >= fb
    side = np.zeros(a.shape)
    for _ in range(100):
        with np.errstate(invalid="ignore", divide="ignore"):
            c = np.where(fa != fb, (a * fb - b * fa) / (fb - fa), (a + b) / 2.0)
        c = np.where(np.isfinite(c) & (c >= a) & (c <= b), c, (a + b) / 2.0)
        fc = f(c)
        right = fc > 0                                 # the root lies right of c
        fb = np.where(right & (side == 1), fb / 2.0, fb)
        fa = np.where(~right & (side == -1), fa / 2.0, fa)
        a, fa = np.where(right, c, a), np.where(right, fc, fa)
        b, fb = np.where(right, b, c), np.where(right, fb, fc)
        side = np.where(right, 1, -1)
        if np.all((b - a < 1e-10) | (np.abs(fc) < 1e-12 * np.maximum(x, 1.0))):
            break
    return np.exp(np.where(np.abs(fa) < np.abs(fb), a, b))


def compare(Pa, Pb, level: float = 0.95) -> dict:
    """The difference ``mean(b) - mean(a)`` of two configurations on the same tasks
    (``Pa``: ``[..., tasks, runs_a]``, ``Pb``: ``[..., tasks, runs_b]``) and its
    t-test (see the module docstring). Returns arrays ``diff``, ``se``,
    ``share_tasks`` (the interaction's share of the variance, the weight of the tasks'
    t quantile), ``low``, ``high`` (kept within [-1, 1]), ``p``, ``mde80`` (NaN where
    the test cannot be made), the variance parts ``var_interaction`` (of the per-task
    differences, not divided by the tasks) and ``var_run`` (of one run's pass@2,
    pooled) that ``runs_needed`` projects, and ``note``: None, or why the test cannot be made (when it cannot for
    every leading index, as with a single comparison)."""
    Pa, Pb = np.asarray(Pa, dtype=float), np.asarray(Pb, dtype=float)
    t, na = Pa.shape[-2:]
    nb = Pb.shape[-1]
    a, b = two_way(Pa), two_way(Pb)
    d = b["task_means"] - a["task_means"]
    diff = d.mean(axis=-1)
    nan = np.full(diff.shape, np.nan)
    out = {"diff": diff, "se": nan, "share_tasks": nan, "low": nan, "high": nan, "p": nan,
           "mde80": nan, "var_interaction": nan, "var_run": nan, "note": None}
    if na < 2 or nb < 2 or t < 2:
        out["note"] = NOTE_ONE_TASK if t < 2 else NOTE_ONE_RUN
        return out
    var_d = _var(d, -1)
    inter = var_d - a["ms_resid"] / na - b["ms_resid"] / nb
    keep = inter > 0
    v_run = ((na - 1) * a["var_runs"] + (nb - 1) * b["var_runs"]) / (na + nb - 2)
    # runs whose pass@2 agree exactly (few runs, few tasks): the spread of a run's mean
    # is still at least the luck of its tasks, the residual mean square over the tasks
    ms = ((na - 1) * a["ms_resid"] + (nb - 1) * b["ms_resid"]) / (na + nb - 2)
    floor = v_run <= 0
    v_run = np.where(floor, ms / t, v_run)
    df_run = np.where(floor, (t - 1) * (na + nb - 2), na + nb - 2)
    c_int = np.where(keep, inter, 0.0) / t
    c_run = v_run * (1.0 / na + 1.0 / nb)
    var = c_int + c_run
    ok = var > 0
    se = np.where(ok, np.sqrt(np.where(ok, var, 1.0)), np.nan)
    share = np.where(ok, c_int / np.where(ok, var, 1.0), np.nan)
    q = mixed_quantile((1.0 - level) / 2.0, share, t - 1, df_run)
    q80 = mixed_quantile(0.2, share, t - 1, df_run)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(ok, mixed_p(np.abs(diff) / se, share, t - 1, df_run), np.nan)
    out.update({"se": se, "share_tasks": share, "low": np.maximum(diff - q * se, -1.0),
                "high": np.minimum(diff + q * se, 1.0), "p": p,
                "mde80": (q + q80) * se, "var_interaction": np.where(keep, inter, 0.0),
                "var_run": v_run})
    if not np.any(ok):
        out["note"] = NOTE_NO_SPREAD
    return out


def runs_needed(var_interaction: float, var_run: float, n_tasks: int,
                deltas=POWER_DIFFS) -> dict:
    """Per difference of ``deltas``, the fewest runs per configuration (2 at least) with
    which the test of :func:`compare` detects it with 80 % power at the 5 % level, the
    variance parts held at their estimates: ``var_interaction / T + 2 var_run / n``
    with the weighted quantiles of ``T - 1`` and ``2 n - 2`` degrees of freedom. None
    when even endless runs would not (the task-by-configuration interaction alone is
    too large: more tasks are needed) or more than :data:`MAX_RUNS_NEEDED` are; NaN when
    the parts are unknown or both 0."""
    keys = [str(x) for x in deltas]
    if not (np.isfinite(var_interaction) and np.isfinite(var_run)) \
            or var_interaction + var_run <= 0:
        return {k: float("nan") for k in keys}
    c_int = var_interaction / n_tasks

    def mde(n):
        n = np.asarray(n, dtype=float)
        c_run = 2.0 * var_run / n
        share = c_int / (c_int + c_run)
        return (mixed_quantile(0.025, share, n_tasks - 1, 2 * n - 2)
                + mixed_quantile(0.2, share, n_tasks - 1, 2 * n - 2)) * np.sqrt(c_int + c_run)

    # mde falls with n: every n up to 64, then a geometric grid, then whole numbers
    # halved between the last grid point above delta and the first at or below it
    grid = np.unique(np.r_[np.arange(2, 65), np.geomspace(64, MAX_RUNS_NEEDED, 60).round()])
    at = mde(grid)
    floor = (t_quantile(0.975, n_tasks - 1) + t_quantile(0.8, n_tasks - 1)) * np.sqrt(c_int)
    out = {}
    for k, delta in zip(keys, deltas):
        hit = np.flatnonzero(at <= delta * (1 + 1e-12))
        if hit.size == 0 or (c_int > 0 and floor > delta):
            out[k] = None
            continue
        hi = int(grid[hit[0]])
        lo = int(grid[hit[0] - 1]) if hit[0] > 0 else hi
        while hi - lo > 1:                              # mde(lo) > delta >= mde(hi)
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if mde(mid) <= delta * (1 + 1e-12) else (mid, hi)
        out[k] = hi
    return out
