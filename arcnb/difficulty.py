"""Task difficulty across systems: an item response model over the output x system
matrix that :func:`arcnb.compare.compare` builds.

Each test output is an *item*; each system (a run, or the runs of one configuration
pooled) answers it *solved* or not under pass@2 (``solved@2``: right within the first 2
attempts, the ranked rule). The model gives system ``s`` the probability

    P(s solves output j) = sigmoid(a_j * (theta_s - b_j))

with ``theta_s`` the system's *ability*, ``b_j`` the output's *difficulty* and ``a_j``
its *discrimination*: ``a_j = 1`` for the Rasch model (1PL, the default), a free
``a_j > 0`` for the two-parameter model (``model="2pl"``). Pooled runs count as
binomial trials (``k`` of ``n`` runs solved it).

Fit. Maximum a posteriori with independent normal priors: ``theta_s ~ N(0, prior_sd^2)``
and ``b_j ~ N(0, prior_sd^2)`` (default :data:`PRIOR_SD` = 3 on the logit scale: weak), and
for 2PL ``log a_j ~ N(0, LOG_A_PRIOR_SD^2)``. The prior keeps every estimate finite: an
output every system solves (or none) gets a large but finite difficulty and a wide
interval, a system that solves everything a finite ability. The fit is Newton's method
(Fisher scoring for 2PL) on all parameters at once, the system x item block of the
information solved through its Schur complement over the systems (a dense solve of size
``n_systems``), with step halving whenever the log posterior would fall.

Scale. The probability depends on ``theta - b`` only, so the difficulties are reported
centred to mean 0 over the outputs and the abilities shifted by the same amount: an
ability of 1 means even odds on an output of difficulty 1 (for 2PL, at any
discrimination). A task's difficulty is the mean of its outputs'.

Intervals. 95 % intervals from the curvature of the log posterior at its maximum (the
Laplace approximation: the inverse of the Fisher information plus the prior's
precision; ``estimate +/- 1.96 SD``), for the centred quantities (each one's covariance
with the mean difficulty included). Not a bootstrap over systems: an output every
system solves would keep that pattern in every resample and get a falsely narrow
interval, whereas its posterior SD stays close to ``prior_sd``.

Reading the numbers. A difficulty is relative to the systems given: it says which
outputs these systems find harder than others, not how hard a task is for a person or
for systems not in the set; with few systems the intervals are wide.

Per system: a *surprise* is an output the system never solves although the model gives
it a probability of at least :data:`SURPRISE` (0.8); *beyond* lists the outputs it
always solves although the model gives it at most :data:`BEYOND` (0.2). The accuracy by
difficulty bin (the outputs cut at the quantiles of their difficulty,
:func:`difficulty_bins`) draws one curve per system.

``difficulty.csv`` (:meth:`Difficulty.csv_table`) holds one row per output, easiest
task first: ``task_id, test_index, category`` (the task's difficulty bin, so the file is
also a taxonomy file for :func:`arcnb.breakdown.breakdown` and the report's taxonomy
option) then the task's and the output's difficulty with their intervals and the share
of systems that solve the output. :func:`read_difficulty` reads it back, checked, as a
:class:`~arcnb.taxonomy.Taxonomy`; :func:`read_solve_rates` reads a CSV of human solve
rates (``task_id, solve_rate``) drawn against the fitted difficulty.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .data import normalize_task_id
from .errors import InputFileError, ParameterError
from .io import atomic_write_text, csv_text, read_csv
from .taxonomy import Taxonomy
from .text import fmt_number, fmt_significant

__all__ = ["MODELS", "PRIOR_SD", "LOG_A_PRIOR_SD", "SURPRISE", "BEYOND", "N_BINS",
           "DIFFICULTY_FILE", "CSV_COLUMNS", "IRTFit", "Difficulty", "fit_irt",
           "fit_difficulty", "difficulty_bins", "surprises", "read_difficulty",
           "read_solve_rates"]

#: The models: Rasch (one parameter per output) and the two-parameter model.
MODELS = ("rasch", "2pl")
#: The prior's SD on abilities and difficulties (logit scale): weak.
PRIOR_SD = 3.0
#: The prior's SD on the log discrimination of the two-parameter model.
LOG_A_PRIOR_SD = 0.5
#: A surprise: never solved although the model gives it at least this probability.
SURPRISE = 0.8
#: Beyond: always solved although the model gives it at most this probability.
BEYOND = 0.2
#: The number of difficulty bins (quantiles) for the curves and the CSV's category.
N_BINS = 5
#: The file compare writes beside summary.json.
DIFFICULTY_FILE = "difficulty.csv"
#: The columns of difficulty.csv, in order (``discrimination`` added for 2PL).
CSV_COLUMNS = ("task_id", "test_index", "category", "task_difficulty", "task_ci_low",
               "task_ci_high", "difficulty", "ci_low", "ci_high", "solve_share", "n_systems")

_Z95 = 1.959963984540054
_INTERVAL = ("95% interval from the curvature of the log posterior at its maximum (Laplace "
             "approximation: inverse Fisher information plus prior precision), for the "
             "centred values")


# ---------------------------------------------------------------------------- the fit
@dataclass
class IRTFit:
    """The MAP fit of :func:`fit_irt`: centred ``ability`` (per system) and
    ``difficulty`` (per item) with their posterior SDs (``ability_sd``,
    ``difficulty_sd``), ``discrimination`` (ones for Rasch), and what the interval of a
    mean of difficulties needs (:meth:`mean_sd`)."""

    model: str
    prior_sd: float
    ability: np.ndarray
    difficulty: np.ndarray
    discrimination: np.ndarray
    ability_sd: np.ndarray
    difficulty_sd: np.ndarray
    iterations: int
    converged: bool
    log_posterior: float
    _cov: tuple = field(repr=False, default=())

    def probability(self) -> np.ndarray:
        """``P(system s solves item j)``: an ``n_systems x n_items`` array."""
        eta = self.discrimination[None, :] * (self.ability[:, None] - self.difficulty[None, :])
        return _sigmoid(eta)

    def mean_sd(self, groups: np.ndarray) -> np.ndarray:
        """The posterior SD of the mean centred difficulty of each group of items:
        ``groups`` is an ``n_items x n_groups`` 0/1 membership matrix."""
        weights = groups / np.maximum(groups.sum(axis=0, keepdims=True), 1)
        return np.sqrt(np.maximum(_centred_var(self._cov, weights), 0.0))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def _log_posterior(y, n, theta, b, la, prior_sd, la_sd) -> float:
    eta = np.exp(la)[None, :] * (theta[:, None] - b[None, :])
    ll = -(y * np.logaddexp(0.0, -eta) + (n - y) * np.logaddexp(0.0, eta)).sum()
    prior = (theta @ theta + b @ b) / prior_sd ** 2 + (la @ la) / la_sd ** 2
    return float(ll - 0.5 * prior)


def _information(y, n, theta, b, la, prior_sd, la_sd, two: bool):
    """The gradient of the log posterior and its Fisher information in blocks: ``A``
    (systems, diagonal), ``C`` (systems x items x k), ``D`` (items x k x k)."""
    a = np.exp(la)
    eta = a[None, :] * (theta[:, None] - b[None, :])
    p = _sigmoid(eta)
    r = y - n * p
    w = n * p * (1.0 - p)
    prec = 1.0 / prior_sd ** 2
    ra, wa = r * a[None, :], w * a[None, :]
    g_theta = ra.sum(axis=1) - theta * prec
    g_items = [-ra.sum(axis=0) - b * prec]
    A = (wa * a[None, :]).sum(axis=1) + prec
    C = [-wa * a[None, :]]
    if not two:
        D = ((wa * a[None, :]).sum(axis=0) + prec)[:, None, None]
        return g_theta, np.stack(g_items, axis=1), A, np.stack(C, axis=2), D
    g_items.append((r * eta).sum(axis=0) - la / la_sd ** 2)
    C.append(wa * eta)
    daa = (wa * a[None, :]).sum(axis=0) + prec
    dab = -(wa * eta).sum(axis=0)
    dbb = (w * eta * eta).sum(axis=0) + 1.0 / la_sd ** 2
    D = np.stack([np.stack([daa, dab], axis=1), np.stack([dab, dbb], axis=1)], axis=1)
    return g_theta, np.stack(g_items, axis=1), A, np.stack(C, axis=2), D


def _schur(A, C, D):
    """``(D^-1, C D^-1, S^-1)`` with ``S = A - C D^-1 C^T``: the pieces of the inverse
    of ``[[diag(A), C], [C^T, blockdiag(D)]]``."""
    Dinv = np.linalg.inv(D)
    CD = np.einsum("sik,ikl->sil", C, Dinv)
    ns = len(A)
    S = np.diag(A) - CD.reshape(ns, -1) @ C.reshape(ns, -1).T
    return Dinv, CD, np.linalg.inv(S)


def _solve(g_theta, g_items, A, C, D):
    Dinv, CD, Sinv = _schur(A, C, D)
    x = Sinv @ (g_theta - np.einsum("sil,il->s", CD, g_items))
    z = np.einsum("ikl,il->ik", Dinv, g_items - np.einsum("sik,s->ik", C, x))
    return x, z


def _centred_var(cov, weights: np.ndarray | None) -> np.ndarray:
    """The posterior variance of ``weights^T b - mean(b)`` for each column of
    ``weights`` (items x combinations; None: each item alone); ``cov`` is
    ``(Dinv_bb, E, Sinv)`` with ``E`` the difficulty column of ``C D^-1``."""
    dinv, E, Sinv = cov
    n = len(dinv)
    if weights is None:  # L = I - 1/n: its products in closed form
        EL = E - E.mean(axis=1, keepdims=True)
        dterm = dinv * (1 - 2.0 / n) + dinv.sum() / n ** 2
        return dterm + (EL * (Sinv @ EL)).sum(axis=0)
    L = weights - 1.0 / n  # centring: minus the mean difficulty
    EL = E @ L
    return (dinv[:, None] * L * L).sum(axis=0) + (EL * (Sinv @ EL)).sum(axis=0)


def _ability_var(cov) -> np.ndarray:
    """The posterior variance of ``theta_s - mean(b)`` for each system."""
    dinv, E, Sinv = cov
    n = len(dinv)
    e = E.sum(axis=1) / n  # E @ (1/n)
    var_m = dinv.sum() / n ** 2 + e @ Sinv @ e
    cov_theta_m = -(Sinv @ e)
    return np.diag(Sinv) - 2.0 * cov_theta_m + var_m


def fit_irt(successes, trials=None, *, model: str = "rasch", prior_sd: float = PRIOR_SD,
            log_a_prior_sd: float = LOG_A_PRIOR_SD, tol: float = 1e-9,
            max_iter: int = 500) -> IRTFit:
    """The MAP fit of the Rasch (``model="rasch"``) or two-parameter (``"2pl"``) model
    to ``successes`` (``n_systems x n_items``: 0/1, or counts of ``trials``; a cell
    with 0 trials is missing). See the module docstring for the model, the prior and
    the intervals. Returns an :class:`IRTFit` (centred)."""
    if model not in MODELS:
        raise ParameterError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    if not (np.isfinite(prior_sd) and prior_sd > 0) or not (np.isfinite(log_a_prior_sd)
                                                            and log_a_prior_sd > 0):
        raise ParameterError(f"prior_sd must be a positive number, got {prior_sd!r}")
    y = np.asarray(successes, dtype=float)
    n = np.ones_like(y) if trials is None else np.asarray(trials, dtype=float)
    if y.ndim != 2 or y.shape != n.shape or 0 in y.shape:
        raise ParameterError(f"successes and trials must be two non-empty n_systems x n_items "
                             f"arrays of one shape, got {y.shape} and {n.shape}")
    if not (np.isfinite(y).all() and np.isfinite(n).all()) or (y < 0).any() or (y > n).any():
        raise ParameterError("successes must be finite counts between 0 and the trials")
    two = model == "2pl"
    ns, ni = y.shape
    theta, b, la = np.zeros(ns), np.zeros(ni), np.zeros(ni)
    args = (prior_sd, log_a_prior_sd)
    lp = _log_posterior(y, n, theta, b, la, *args)
    converged, it = False, 0
    for it in range(1, max_iter + 1):
        grads = _information(y, n, theta, b, la, *args, two)
        dx, dz = _solve(*grads)
        step = 1.0
        while True:  # step halving: the log posterior never falls
            t2, b2 = theta + step * dx, b + step * dz[:, 0]
            la2 = la + step * dz[:, 1] if two else la
            lp2 = _log_posterior(y, n, t2, b2, la2, *args)
            if lp2 >= lp - 1e-12 * abs(lp) or step < 1e-6:
                break
            step /= 2
        theta, b, la, lp = t2, b2, la2, lp2
        if step * max(np.abs(dx).max(), np.abs(dz).max()) < tol:
            converged = True
            break
    _, _, A, C, D = _information(y, n, theta, b, la, *args, two)
    Dinv, CD, Sinv = _schur(A, C, D)
    cov = (Dinv[:, 0, 0].copy(), CD[:, :, 0].copy(), Sinv)
    shift = b.mean()
    return IRTFit(model, float(prior_sd), theta - shift, b - shift, np.exp(la),
                  np.sqrt(np.maximum(_ability_var(cov), 0.0)),
                  np.sqrt(np.maximum(_centred_var(cov, None), 0.0)), it, converged, lp, cov)


# ---------------------------------------------------------------------------- derived
def difficulty_bins(values, n_bins: int = N_BINS) -> tuple[np.ndarray, list[str]]:
    """Cut ``values`` at their quantiles into at most ``n_bins`` bins, equal values
    always together: ``(bin index per value, labels)``, labels such as
    ``"1 easiest (-3.1 to -1.2)"`` (the smallest and largest value in the bin)."""
    v = np.round(np.asarray(values, dtype=float), 6)  # equal up to the fit's precision
    if v.size == 0:
        return np.zeros(0, dtype=int), []
    edges = np.unique(np.quantile(v, np.linspace(0, 1, n_bins + 1))[1:-1])
    idx = np.searchsorted(edges, v, side="right")
    used = np.unique(idx)
    idx = np.searchsorted(used, idx)
    labels = []
    for k in range(len(used)):
        vals = v[idx == k]
        word = (" easiest" if k == 0 and len(used) > 1 else
                " hardest" if k == len(used) - 1 and len(used) > 1 else "")
        lo, hi = (fmt_number(x, least=1, most=1) for x in (vals.min(), vals.max()))
        labels.append(f"{k + 1}{word} ({lo} to {hi})")
    return idx, labels


def surprises(probability, solved_share, *, surprise: float = SURPRISE,
              beyond: float = BEYOND) -> tuple[np.ndarray, np.ndarray]:
    """Two boolean ``n_systems x n_items`` masks: *surprises* (never solved,
    probability at least ``surprise``) and *beyond* (always solved, probability at most
    ``beyond``); a missing cell (``solved_share`` NaN) is neither."""
    p = np.asarray(probability, dtype=float)
    s = np.asarray(solved_share, dtype=float)
    return (s == 0) & (p >= surprise), (s == 1) & (p <= beyond)


# ---------------------------------------------------------------------------- the view
@dataclass
class Difficulty:
    """Task difficulty across systems (:func:`fit_difficulty`): the fit and its tables.

    ``abilities``: one row per system (``system``, ``ability``, ``ci_low``, ``ci_high``,
    ``n_runs``, ``accuracy``: the share of its outputs solved, ``n_surprises``,
    ``n_beyond``). ``outputs``: one row per output (``task_id``, ``test_index``,
    ``difficulty`` with ``ci_low`` / ``ci_high``, ``discrimination``, ``solve_share``:
    the share of systems that solve it (a pooled system counts its runs' share),
    ``n_systems``, ``bin``). ``tasks``: one row per task (``task_id``, ``difficulty``:
    the mean of its outputs', its interval, ``n_outputs``, ``solve_share``,
    ``category``: its difficulty bin). ``unexpected``: one row per surprise or beyond
    (``system``, ``task_id``, ``test_index``, ``kind``, ``probability``,
    ``solved_share``). ``curves``: accuracy by output difficulty bin per system.
    ``members`` maps each system to the run labels pooled in it; ``human`` (when solve
    rates were given) the tasks with their human solve rate."""

    fit: IRTFit
    abilities: pd.DataFrame
    outputs: pd.DataFrame
    tasks: pd.DataFrame
    unexpected: pd.DataFrame
    curves: pd.DataFrame
    members: dict
    human: pd.DataFrame | None = None
    notes: list = field(default_factory=list)

    @property
    def model(self) -> str:
        """The model fitted: ``"rasch"`` or ``"2pl"``."""
        return self.fit.model

    def surprises_of(self, system: str, kind: str = "surprise") -> pd.DataFrame:
        """The system's surprises (or ``kind="beyond"``), most confident first."""
        u = self.unexpected
        return u[(u["system"] == system) & (u["kind"] == kind)].reset_index(drop=True)

    def summary(self) -> dict:
        """The ``difficulty`` entry of compare's ``summary.json``."""
        def key(row):
            return f"{row.task_id}:{int(row.test_index)}"
        surprise = {s: [key(r) for r in self.surprises_of(s).itertuples()]
                    for s in self.abilities["system"]}
        beyond = {s: [key(r) for r in self.surprises_of(s, "beyond").itertuples()]
                  for s in self.abilities["system"]}
        out = {
            "model": self.model, "prior_sd": self.fit.prior_sd,
            "prior": (f"theta ~ N(0, {fmt_significant(self.fit.prior_sd)}^2), "
                      f"b ~ N(0, {fmt_significant(self.fit.prior_sd)}^2)"
                      + (f", log a ~ N(0, {fmt_significant(LOG_A_PRIOR_SD)}^2)" if self.model == "2pl" else "")),
            "interval": _INTERVAL, "converged": self.fit.converged,
            "iterations": self.fit.iterations, "n_systems": len(self.abilities),
            "n_outputs": len(self.outputs), "n_tasks": len(self.tasks),
            "response": "solved@2 (right within the first 2 attempts, ranked rule)",
            "thresholds": {"surprise": SURPRISE, "beyond": BEYOND},
            "systems": {r.system: {"ability": float(r.ability),
                                   "ci95": [float(r.ci_low), float(r.ci_high)],
                                   "runs": list(self.members[r.system]),
                                   "accuracy": float(r.accuracy)}
                        for r in self.abilities.itertuples()},
            "tasks": {r.task_id: {"difficulty": float(r.difficulty),
                                  "ci95": [float(r.ci_low), float(r.ci_high)],
                                  "solve_share": float(r.solve_share)}
                      for r in self.tasks.itertuples()},
            "surprises": surprise, "beyond": beyond, "file": DIFFICULTY_FILE,
            "notes": list(self.notes),
        }
        if self.human is not None:
            out["human"] = _human_summary(self.human)
        return out

    def csv_table(self) -> pd.DataFrame:
        """The rows of ``difficulty.csv``: one per output, easiest task first (see the
        module docstring)."""
        t = self.tasks.rename(columns={"difficulty": "task_difficulty", "ci_low": "task_ci_low",
                                       "ci_high": "task_ci_high"})
        m = self.outputs.merge(t[["task_id", "category", "task_difficulty", "task_ci_low",
                                  "task_ci_high"]], on="task_id")
        m = m.sort_values(["task_difficulty", "task_id", "test_index"], kind="mergesort")
        cols = list(CSV_COLUMNS) + (["discrimination"] if self.model == "2pl" else [])
        return m[cols].reset_index(drop=True)

    def write_csv(self, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write ``difficulty.csv`` atomically (formula cells neutralised)."""
        return atomic_write_text(path, csv_text(self.csv_table()), overwrite=overwrite)

    def taxonomy(self) -> Taxonomy:
        """The tasks' difficulty bins as a taxonomy (for :func:`arcnb.breakdown.breakdown`)."""
        return _bins_taxonomy(self.tasks["task_id"], self.tasks["category"], source=None)

    def __repr__(self) -> str:
        return (f"Difficulty(model={self.model!r}, systems={len(self.abilities)}, "
                f"outputs={len(self.outputs)})")


def _bins_taxonomy(task_ids, categories, *, source) -> Taxonomy:
    order = sorted(set(categories), key=_bin_number)
    return Taxonomy("difficulty", {str(t): (str(c),) for t, c in zip(task_ids, categories)},
                    order=order, source=source)


def _bin_number(label: str) -> tuple:
    head = str(label).split(" ", 1)[0]
    return (int(head), str(label)) if head.isdigit() else (10 ** 9, str(label))


def _human_summary(human: pd.DataFrame) -> dict:
    both = human.dropna(subset=["difficulty", "solve_rate"])
    rho = (float(both["difficulty"].round(6).rank().corr(both["solve_rate"].rank()))
           if len(both) >= 3 else float("nan"))
    return {"n_tasks": int(len(both)), "spearman": rho,
            "note": "Spearman rank correlation between the fitted task difficulty and the "
                    "human solve rate over the tasks in both (negative when the tasks these "
                    "systems find hard are also hard for people)"}


# ---------------------------------------------------------------------------- from runs
def _matrix(runs, systems, members):
    """``(successes, trials, keys)``: systems x outputs counts of ``solved@2`` over the
    runs pooled in each system, on the first run's outputs."""
    first = runs[0].results.outputs
    keys = first[["task_id", "test_index"]].reset_index(drop=True)
    index = pd.MultiIndex.from_frame(keys)
    row = {s: i for i, s in enumerate(systems)}
    y = np.zeros((len(systems), len(keys)))
    n = np.zeros_like(y)
    for r in runs:
        out = r.results.outputs.set_index(["task_id", "test_index"])["solved@2"]
        solved = out.reindex(index)
        have = solved.notna().to_numpy()
        i = row[members[r.label]]
        y[i] += np.where(have, solved.fillna(False).to_numpy(bool), 0.0)
        n[i] += have
    return y, n, keys


def _pooling(runs, pool) -> dict:
    """Run label -> system name: each run alone, or ``pool`` (a mapping, or True: the
    runs whose labels differ only by compare's ``#2`` suffix)."""
    labels = [r.label for r in runs]
    if pool is None or pool is False:
        return {lab: lab for lab in labels}
    if pool is True:
        return {lab: lab.rsplit("#", 1)[0] if "#" in lab and lab.rsplit("#", 1)[1].isdigit()
                else lab for lab in labels}
    if not isinstance(pool, Mapping):
        raise ParameterError("pool must be True or a mapping of run label -> system name")
    unknown = sorted(set(pool) - set(labels))
    if unknown:
        raise ParameterError(f"pool names runs that are not compared: {', '.join(unknown[:5])}")
    return {lab: str(pool.get(lab, lab)) for lab in labels}


def fit_difficulty(runs: Sequence, *, model: str = "rasch", prior_sd: float = PRIOR_SD,
                   pool=None, solve_rates=None, n_bins: int = N_BINS) -> Difficulty:
    """Fit task difficulty across systems from scored runs on the same outputs (the
    runs of a :class:`~arcnb.compare.Comparison`, or the comparison itself).

    ``pool``: None (each run a system), True (runs labelled alike, ``name`` and
    ``name#2``, are one system) or a mapping run label -> system name. ``solve_rates``:
    a CSV path or a DataFrame with ``task_id, solve_rate`` (human solve rates), drawn
    against the fitted difficulty. See the module docstring."""
    runs = list(getattr(runs, "runs", runs))
    if not runs:
        raise ParameterError("fit_difficulty needs at least one scored run")
    members_of = _pooling(runs, pool)
    systems = list(dict.fromkeys(members_of[r.label] for r in runs))
    y, n, keys = _matrix(runs, systems, members_of)
    fit = fit_irt(y, n, model=model, prior_sd=prior_sd)
    share = np.where(n > 0, y / np.where(n > 0, n, 1), np.nan)
    members = {s: [r.label for r in runs if members_of[r.label] == s] for s in systems}
    outputs = keys.assign(
        difficulty=fit.difficulty, ci_low=fit.difficulty - _Z95 * fit.difficulty_sd,
        ci_high=fit.difficulty + _Z95 * fit.difficulty_sd, discrimination=fit.discrimination,
        solve_share=np.nanmean(share, axis=0), n_systems=(n > 0).sum(axis=0))
    bins, labels = difficulty_bins(fit.difficulty, n_bins)
    outputs["bin"] = np.array(labels, dtype=object)[bins]
    tasks = _task_table(fit, outputs, n_bins)
    prob = fit.probability()
    surprise, beyond = surprises(prob, share)
    unexpected = _unexpected(systems, keys, prob, share, surprise, beyond)
    acc = y.sum(axis=1) / np.maximum(n.sum(axis=1), 1)
    abilities = pd.DataFrame({
        "system": systems, "ability": fit.ability,
        "ci_low": fit.ability - _Z95 * fit.ability_sd,
        "ci_high": fit.ability + _Z95 * fit.ability_sd,
        "n_runs": [len(members[s]) for s in systems], "accuracy": acc,
        "n_surprises": surprise.sum(axis=1), "n_beyond": beyond.sum(axis=1)})
    curves = _curves(systems, y, n, bins, labels, fit.difficulty)
    notes = _notes(fit, len(systems))
    human = None
    if solve_rates is not None:
        rates = (solve_rates if isinstance(solve_rates, pd.DataFrame)
                 else read_solve_rates(solve_rates))
        human = tasks[["task_id", "difficulty", "ci_low", "ci_high"]].merge(
            rates[["task_id", "solve_rate"]], on="task_id", how="inner")
        missing = len(tasks) - len(human)
        if missing:
            notes.append(f"{missing} of the {len(tasks)} tasks have no human solve rate")
    return Difficulty(fit, abilities, outputs, tasks, unexpected, curves, members, human, notes)


def _task_table(fit: IRTFit, outputs: pd.DataFrame, n_bins: int) -> pd.DataFrame:
    codes, ids = pd.factorize(outputs["task_id"], sort=True)
    groups = np.zeros((len(outputs), len(ids)))
    groups[np.arange(len(outputs)), codes] = 1.0
    count = groups.sum(axis=0)
    d = (fit.difficulty @ groups) / count
    sd = fit.mean_sd(groups)
    share = outputs["solve_share"].to_numpy(float) @ groups / count
    bins, labels = difficulty_bins(d, n_bins)
    return pd.DataFrame({"task_id": list(ids), "difficulty": d, "ci_low": d - _Z95 * sd,
                         "ci_high": d + _Z95 * sd, "n_outputs": count.astype(int),
                         "solve_share": share,
                         "category": np.array(labels, dtype=object)[bins]})


def _unexpected(systems, keys, prob, share, surprise, beyond) -> pd.DataFrame:
    rows = []
    for kind, mask in (("surprise", surprise), ("beyond", beyond)):
        s, j = np.nonzero(mask)
        rows.append(pd.DataFrame({
            "system": np.array(systems, dtype=object)[s],
            "task_id": keys["task_id"].to_numpy()[j], "test_index": keys["test_index"].to_numpy()[j],
            "kind": kind, "probability": prob[s, j], "solved_share": share[s, j]}))
    u = pd.concat(rows, ignore_index=True)
    # per system and kind, the most confident first (lowest probability first for beyond)
    u["_order"] = np.where(u["kind"] == "surprise", -u["probability"], u["probability"])
    u = u.sort_values(["system", "kind", "_order", "task_id", "test_index"], kind="mergesort")
    return u.drop(columns="_order").reset_index(drop=True)


def _curves(systems, y, n, bins, labels, difficulty) -> pd.DataFrame:
    rows = []
    for k, label in enumerate(labels):
        cols = bins == k
        mean_b = float(difficulty[cols].mean())
        tot = n[:, cols].sum(axis=1)
        acc = np.where(tot > 0, y[:, cols].sum(axis=1) / np.where(tot > 0, tot, 1), np.nan)
        rows += [{"system": s, "bin": label, "bin_index": k, "mean_difficulty": mean_b,
                  "n_outputs": int(cols.sum()), "accuracy": float(acc[i])}
                 for i, s in enumerate(systems)]
    return pd.DataFrame(rows)


def _notes(fit: IRTFit, n_systems: int) -> list[str]:
    notes = ["difficulties are relative to the systems given (centred to mean 0 over the "
             "outputs); they do not say how hard a task is for people or other systems"]
    if n_systems < 10:
        notes.append(f"only {n_systems} systems: the difficulties' intervals are wide")
    if not fit.converged:
        notes.append(f"the fit stopped after {fit.iterations} iterations without converging")
    return notes


# ---------------------------------------------------------------------------- files
def _read_table(path, what: str, required: Sequence[str]) -> pd.DataFrame:
    path = Path(path)
    try:
        df = read_csv(path, what=what, dtype=str, keep_default_na=False)
    except InputFileError:
        raise
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputFileError(f"{what} {path} is not a CSV file arcnb can read: "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                             ) from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputFileError(f"{what} {path} lacks the column(s) {', '.join(missing)} (it "
                             f"needs {', '.join(required)})")
    if not len(df):
        raise InputFileError(f"{what} {path} has no rows")
    return df


def _numbers(df: pd.DataFrame, column: str, path, what: str) -> np.ndarray:
    v = pd.to_numeric(df[column].str.strip(), errors="coerce").to_numpy(float)
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        raise InputFileError(f"{what} {path}, row {bad[0] + 2}: {column} is not a finite "
                             f"number ({df[column].iloc[bad[0]]!r})")
    return v


def read_difficulty(path: str | os.PathLike) -> Taxonomy:
    """Read a ``difficulty.csv`` written by compare (:data:`CSV_COLUMNS`) and return
    its tasks' difficulty bins as a :class:`~arcnb.taxonomy.Taxonomy` named
    ``difficulty``. Refuses, in one line (:class:`~arcnb.errors.InputFileError`), a
    file that is not such a CSV: missing columns, no rows, a difficulty that is not a
    finite number, or a task given two bins or two difficulties."""
    what = "difficulty file"
    df = _read_table(path, what, ("task_id", "category", "task_difficulty"))
    ids = df["task_id"].map(normalize_task_id)
    if (ids == "").any() or (df["category"].str.strip() == "").any():
        row = int(np.flatnonzero((ids == "").to_numpy() | (df["category"].str.strip() == "")
                                 .to_numpy())[0]) + 2
        raise InputFileError(f"{what} {path}, row {row}: empty task_id or category")
    d = _numbers(df, "task_difficulty", path, what)
    per = pd.DataFrame({"task_id": ids, "category": df["category"].str.strip(), "d": d})
    uniq = per.drop_duplicates()
    twice = uniq["task_id"].duplicated()
    if twice.any():
        raise InputFileError(f"{what} {path}: task {uniq['task_id'][twice].iloc[0]} has two "
                             "difficulty bins or difficulties")
    return _bins_taxonomy(uniq["task_id"], uniq["category"], source=str(path))


def read_solve_rates(path: str | os.PathLike) -> pd.DataFrame:
    """Read human solve rates: a CSV with columns ``task_id, solve_rate`` (a fraction
    in [0, 1]; extra columns ignored). Returns ``task_id, solve_rate``; refuses a bad
    file in one line (:class:`~arcnb.errors.InputFileError`)."""
    what = "solve-rate file"
    df = _read_table(path, what, ("task_id", "solve_rate"))
    ids = df["task_id"].map(normalize_task_id)
    rate = _numbers(df, "solve_rate", path, what)
    out_of = np.flatnonzero((rate < 0) | (rate > 1))
    if out_of.size:
        raise InputFileError(f"{what} {path}, row {out_of[0] + 2}: solve_rate {rate[out_of[0]]} "
                             "is not a fraction in [0, 1]")
    if (ids == "").any():
        raise InputFileError(f"{what} {path}: an empty task_id")
    if ids.duplicated().any():
        raise InputFileError(f"{what} {path}: task {ids[ids.duplicated()].iloc[0]} is given "
                             "twice")
    return pd.DataFrame({"task_id": ids, "solve_rate": rate})
