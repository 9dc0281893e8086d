"""The honest choice of the best checkpoint: the tasks split into a selection half and
a report half (every category divided evenly), the checkpoint chosen on one and
reported on the other, and the inflation that choosing on the reported tasks would
have added."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..stats import bootstrap_ci, check_seed
from ..taxonomy import UNCATEGORIZED

__all__ = ["selection_split", "honest_selection"]


def selection_split(task_ids: Sequence[str], strata: dict, *,
                    seed: int = 0) -> tuple[list[str], list[str]]:
    """Split tasks into a selection half and a report half so that every category is
    divided evenly between them. ``strata`` maps a task to its category, or to all its
    categories (a tuple: the structural taxonomy gives a task several).

    First the deal: within each task's first category (in sorted order) the tasks are
    shuffled (``numpy.random.default_rng(seed)``) and dealt alternately to the two
    halves, the deal continuing across categories, so the halves differ in size by at
    most one. Then, while swapping a task of one half with a task of the other lowers
    the sum over categories of the squared difference between the halves' counts, the
    best such swap is made (sizes unchanged). A task of several categories thus counts
    in each of them: on the structural taxonomy of ARC-AGI-1's evaluation tasks every
    category ends within one task of even. Returns both halves, sorted."""
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    ids = sorted(task_ids)
    cats = []
    for t in ids:
        c = strata.get(t, UNCATEGORIZED)
        c = (str(c),) if isinstance(c, str) or not isinstance(c, (tuple, list)) else \
            tuple(dict.fromkeys(str(x) for x in c)) or (UNCATEGORIZED,)
        cats.append(c)
    names = sorted({c for cs in cats for c in cs})
    col = {c: j for j, c in enumerate(names)}
    member = np.zeros((len(ids), len(names)), np.int64)
    for i, cs in enumerate(cats):
        member[i, [col[c] for c in cs]] = 1
    by: dict[str, list[int]] = {}
    for i, cs in enumerate(cats):
        by.setdefault(cs[0], []).append(i)
    in_sel = np.zeros(len(ids), bool)
    turn = 0
    for stratum in sorted(by):
        members = by[stratum]
        for j in rng.permutation(len(members)):
            in_sel[members[int(j)]] = turn % 2 == 0
            turn += 1
    # swaps: moving t (selection) and u (report) changes the imbalances d by
    # 2 (m_u - m_t), so sum d^2 changes by 4 (d.m_u - d.m_t + |m_u - m_t|^2)
    norms = member.sum(axis=1)
    for _ in range(len(ids)):
        d = member[in_sel].sum(axis=0) - member[~in_sel].sum(axis=0)
        s_idx, r_idx = np.flatnonzero(in_sel), np.flatnonzero(~in_sel)
        if not s_idx.size or not r_idx.size:
            break
        gain = (member[r_idx] @ d)[None, :] - (member[s_idx] @ d)[:, None] \
            + norms[s_idx][:, None] + norms[r_idx][None, :] \
            - 2 * (member[s_idx] @ member[r_idx].T)
        k = int(np.argmin(gain))
        if gain.flat[k] >= 0:
            break
        a, b = divmod(k, r_idx.size)
        in_sel[s_idx[a]], in_sel[r_idx[b]] = False, True
    sel = [ids[i] for i in np.flatnonzero(in_sel)]
    rep = [ids[i] for i in np.flatnonzero(~in_sel)]
    return sorted(sel), sorted(rep)


def honest_selection(matrix: pd.DataFrame, strata: dict, *, seed: int = 0,
                     n_boot: int = 1000, metric: str = "pass@2") -> dict:
    """Choose the best checkpoint on one half of the tasks and report it on the other.

    ``matrix``: tasks x steps of a per-task score (:meth:`Sweep.task_matrix`).
    The tasks are split by :func:`selection_split`; the checkpoint with the highest mean
    on the selection half is chosen (the earliest on ties) and its mean on the report
    half is the honest score (with a bootstrap interval over the report half's tasks).
    Choosing on the report half itself would have given the highest mean there: the
    difference is the ``inflation`` (>= 0). ``full_set_best`` is what choosing and
    reporting on every task gives, for reference. Every score is a fraction in [0, 1].
    """
    m = matrix.astype(float)
    steps = [int(s) for s in m.columns]
    sel, rep = selection_split(list(m.index), strata, seed=seed)
    mean_sel = m.loc[sel].mean(axis=0).to_numpy() if sel else np.full(len(steps), np.nan)
    mean_rep = m.loc[rep].mean(axis=0).to_numpy() if rep else np.full(len(steps), np.nan)
    mean_all = m.mean(axis=0).to_numpy()

    def best(v):
        return int(np.nanargmax(v)) if np.isfinite(v).any() else 0

    i_sel, i_rep, i_all = best(mean_sel), best(mean_rep), best(mean_all)
    honest = float(mean_rep[i_sel])
    lo, hi = bootstrap_ci(m.loc[rep].iloc[:, i_sel].to_numpy(), n_boot=n_boot, seed=seed) \
        if rep else (float("nan"), float("nan"))
    return {
        "metric": metric,
        "seed": int(seed),
        "n_selection_tasks": len(sel),
        "n_report_tasks": len(rep),
        "selection_tasks": sel,
        "report_tasks": rep,
        "chosen_step": steps[i_sel],
        "selection_score": float(mean_sel[i_sel]),
        "report_score": honest,
        "report_score_ci95": [lo, hi],
        "best_step_on_report_half": steps[i_rep],
        "best_score_on_report_half": float(mean_rep[i_rep]),
        "inflation": float(mean_rep[i_rep] - honest),
        "full_set_best_step": steps[i_all],
        "full_set_best_score": float(mean_all[i_all]),
    }
