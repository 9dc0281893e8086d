"""The analysis of many runs (:mod:`arcnb.repeats`): from one task x run matrix of
pass@2 and its output x run twin (:func:`analyse`), the numbers the package docstring
lists (per configuration, between configurations, the winner's curse, union coverage,
unique solves, pairs of runs, the graded metrics, the vote ensembles and the one chosen
on a public half), and :class:`Repeats`, the result: its summary, its tables, its lines
for the terminal and its output folder. :func:`arcnb.repeats.repeats` opens the runs
and calls :func:`analyse`; this module reads no file."""
from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import RepeatsError
from ..io import to_jsonable
from ..runs import OutputFolder, write_result_folder
from ..scoring import pass_at_k_unbiased
from ..stats import (MAX_SEED, bootstrap_ci, bootstrap_indices, check_n_boot, check_seed,
                    percentile_interval)
from ..text import fmt_number, fmt_percent, printable
from ..voting import check_tie
from .inference import TEST, TEST_NAME, compare, config_interval, runs_needed

__all__ = ["Repeats", "analyse", "GRADED", "ENSEMBLE_RULE"]


# ------------------------------------------------------------------ the numbers
def _counts(idx: np.ndarray, n: int) -> np.ndarray:
    """``[B, n]`` how often each unit is drawn in each resample (vectorised bincount)."""
    b = idx.shape[0]
    flat = (idx + n * np.arange(b)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(float)


def _run_seed(seed: int, k: int) -> int:
    return (seed + 1 + k) % (MAX_SEED + 1)


def _interval(samples: np.ndarray, point: float) -> list[float]:
    if samples.size == 0 or not np.isfinite(point):
        return [float("nan"), float("nan")]
    if np.all(samples == samples[0]):
        return [float(samples[0]), float(samples[0])]
    lo, hi = percentile_interval(samples)
    return [float(lo), float(hi)]


#: Runs whose values differ by less than this (relative to their size) agree: the SD
#: between them is 0, not the 1.4e-16 of summing the same numbers in another order.
SD_AGREE = 1e-12


def _sd(x: np.ndarray) -> float:
    """The SD between runs (NaN with fewer than two); exactly 0 when they agree to
    :data:`SD_AGREE`."""
    if x.size < 2:
        return float("nan")
    sd = float(np.std(x, ddof=1))
    return 0.0 if sd <= SD_AGREE * max(1.0, float(np.max(np.abs(x)))) else sd


def _splits(t: int, n_splits: int, seed: int) -> np.ndarray:
    """``[S, t]`` public-half masks: every half of ``t // 2`` tasks when there are at
    most ``n_splits`` of them, else ``n_splits`` seeded random halves."""
    h = t // 2
    if math.comb(t, h) <= n_splits:
        combos = np.array(list(itertools.combinations(range(t), h)), dtype=np.int64)
        mask = np.zeros((len(combos), t), dtype=bool)
        mask[np.arange(len(combos))[:, None], combos] = True
        return mask
    rng = np.random.default_rng(check_seed(seed))
    order = np.argsort(rng.random((n_splits, t)), axis=1)[:, :h]
    mask = np.zeros((n_splits, t), dtype=bool)
    mask[np.arange(n_splits)[:, None], order] = True
    return mask


def _winners_curse(P: np.ndarray, mask: np.ndarray) -> dict:
    t, _ = P.shape
    mean = float(P.mean()) if P.size else float("nan")
    if t < 2 or mask.size == 0:
        return {"public": float("nan"), "private": float("nan"), "mean": mean,
                "n_splits": 0}
    m = mask.astype(float)
    pub = (m @ P) / m.sum(axis=1, keepdims=True)
    priv = ((1.0 - m) @ P) / (1.0 - m).sum(axis=1, keepdims=True)
    pick = np.argmax(pub, axis=1)
    rows = np.arange(len(pick))
    return {"public": float(pub[rows, pick].mean()), "private": float(priv[rows, pick].mean()),
            "mean": mean, "n_splits": int(len(pick))}


def _union(solved: np.ndarray, starts: np.ndarray, n_out: np.ndarray) -> dict:
    """Union coverage of the runs (columns) of ``solved`` (outputs x runs, 0/1)."""
    n = solved.shape[1]
    c = solved.sum(axis=1).astype(np.int64)

    def per_task(v):
        return float(np.mean(np.add.reduceat(v, starts) / n_out)) if v.size else float("nan")

    by_k = [per_task(pass_at_k_unbiased(np.full(c.shape, n), c, k)) for k in range(1, n + 1)]
    return {"pass@2": per_task((c > 0).astype(float)), "by_n_runs": by_k}


#: Most runs whose pairs are compared (the Jaccard index and the best pair): memory and
#: time grow with the square of the runs.
MAX_PAIR_RUNS = 1_000


def _pairs(solved: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of runs (columns of ``solved``, outputs x runs, 0/1): the Jaccard index
    of their solved outputs (NaN when neither solves any) and the pass@2 of their union
    (``weight`` per output: 1 / (its task's outputs x tasks))."""
    inter = solved.T @ solved
    count = solved.sum(axis=0)
    either = count[:, None] + count[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        jaccard = np.where(either > 0, inter / np.where(either > 0, either, 1), np.nan)
    alone = weight @ solved
    union = alone[:, None] + alone[None, :] - (solved * weight[:, None]).T @ solved
    return jaccard, union


def _pairs_of_runs(S: np.ndarray, weight: np.ndarray, run_names: Sequence[str]) -> tuple:
    """``(jaccard, best_pair)``: :func:`_pairs` and the two runs whose union has the
    highest pass@2 (the first such pair in run order). Pairs grow with the square of the
    runs: computed up to :data:`MAX_PAIR_RUNS` runs (1,000: about 40 MB), not at the
    10,000-run limit (gigabytes; jaccard.csv 720 MB): beyond, no Jaccard matrix (None)
    and a note."""
    n_r = S.shape[1]
    if n_r > MAX_PAIR_RUNS:
        return None, {"runs": [], "pass@2": float("nan"),
                      "note": f"pairs of runs are compared for at most {MAX_PAIR_RUNS} runs "
                              f"({n_r} given): no best pair, and jaccard.csv is left empty"}
    jaccard, pair_union = _pairs(S, weight)
    if n_r < 2:
        return jaccard, {"runs": [], "pass@2": float("nan")}
    upper = np.triu(np.ones((n_r, n_r), dtype=bool), k=1)
    best = np.flatnonzero(upper.ravel() & (pair_union.ravel()
                                           >= pair_union[upper].max() - 1e-12))[0]
    i, j = divmod(int(best), n_r)
    return jaccard, {"runs": [run_names[i], run_names[j]], "pass@2": float(pair_union[i, j])}


def _comparison(a: str, b: str, Pa: np.ndarray, Pb: np.ndarray) -> dict:
    """One entry of ``comparisons``: ``b - a`` and its test
    (``arcnb.repeats.inference.compare``), NaN where the test cannot be made."""
    c = compare(Pa, Pb)
    f = {k: float(c[k]) for k in ("diff", "low", "high", "p", "mde80", "se", "share_tasks",
                                  "var_interaction", "var_run")}
    return {"a": a, "b": b, "diff": f["diff"], "ci95": [f["low"], f["high"]], "p": f["p"],
            "test": TEST_NAME, "se": f["se"], "share_tasks": f["share_tasks"],
            "mde80": f["mde80"],
            "runs_needed": runs_needed(f["var_interaction"], f["var_run"], Pa.shape[0]),
            "note": c["note"]}


#: The graded metrics of a run over runs, each a graded breakdown column of
#: :data:`arcnb.columns.GROUPS` with an interval, and how it averages (as the breakdown
#: and :func:`arcnb.score` do): ``"task"``, the mean over a task's outputs, then over
#: tasks; ``"output"``, the mean over the outputs that have a value (cell accuracy: the
#: outputs with a right-shaped attempt).
GRADED = {"shape_accuracy": "task", "cell_accuracy": "output", "partial_credit": "task"}


def _graded_parts(values: np.ndarray, how: str, starts: np.ndarray, n_out: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per task x run, the numerator and denominator of a graded metric (outputs x runs
    ``values``, NaN where an output has none): a run's value is the ratio of their sums
    over tasks."""
    ok = ~np.isnan(values)
    if how == "output":
        return (np.add.reduceat(np.where(ok, values, 0.0), starts),
                np.add.reduceat(ok.astype(float), starts))
    num = np.add.reduceat(values, starts) / n_out[:, None]
    return np.nan_to_num(num), (~np.isnan(num)).astype(float)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _graded_numbers(num: np.ndarray, den: np.ndarray, task_counts: np.ndarray,
                    n_boot: int, seed: int) -> dict:
    """Mean, SD, min and max over runs (runs without a value left out) of a graded
    metric, and its two-level interval: per resample, the mean over the drawn runs of
    each run's ratio on the drawn tasks (the runs drawn as for pass@2)."""
    vals = _ratio(num.sum(axis=0), den.sum(axis=0))
    ok = vals[~np.isnan(vals)]
    nan = float("nan")
    if ok.size == 0:
        return {"mean": nan, "sd": nan, "min": nan, "max": nan, "ci95": [nan, nan]}
    r = num.shape[1]
    w = _counts(bootstrap_indices(r, n_boot=n_boot, seed=seed), r)
    per = _ratio(task_counts @ num, task_counts @ den)                # resamples x runs
    have = ~np.isnan(per)
    wsum = (w * have).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = np.where(wsum > 0, (np.where(have, per, 0.0) * w).sum(axis=1)
                           / np.where(wsum > 0, wsum, 1.0), np.nan)
    mean = float(ok.mean())
    return {"mean": mean, "sd": _sd(ok), "min": float(ok.min()), "max": float(ok.max()),
            "ci95": _interval(samples[~np.isnan(samples)], mean)}


def _ensemble_numbers(solved: np.ndarray, starts: np.ndarray, n_out: np.ndarray,
                      n_boot: int, seed: int) -> dict:
    per_task = np.add.reduceat(solved, starts) / n_out
    return {"pass@2": float(per_task.mean()),
            "ci95": list(bootstrap_ci(per_task, n_boot=n_boot, seed=seed))}


def _held_out(cand: np.ndarray, names: list[dict], mask: np.ndarray, n_boot: int,
              seed: int) -> dict:
    """The candidate (columns of ``cand``, tasks x candidates, per-task pass@2) with the
    best pass@2 on each public half of ``mask`` (the first on ties), scored on the
    other half: its public and private pass@2 averaged over the splits, and the 95 %
    bootstrap interval over the private tasks (the same ``n_boot`` resamples of the
    private positions for every split: :func:`arcnb.stats.bootstrap_ci` of the
    private tasks in task order), its ends averaged over the splits."""
    t, n_c = cand.shape
    if t < 2 or mask.size == 0 or n_c == 0:
        nan = float("nan")
        return {"public": nan, "private": nan, "ci95": [nan, nan], "n_splits": 0,
                "chosen": [], "most_chosen": None}
    m = mask.astype(float)
    pub = (m @ cand) / m.sum(axis=1, keepdims=True)
    pick = np.argmax(pub, axis=1)
    rows = np.arange(len(pick))
    n_priv = t - int(mask[0].sum())
    priv_idx = np.argsort(mask, axis=1, kind="stable")[:, :n_priv]  # private, in order
    V = cand[priv_idx, pick[:, None]]                                # splits x private
    private = V.mean(axis=1)
    C = _counts(bootstrap_indices(n_priv, n_boot=n_boot, seed=seed), n_priv)
    means = (C @ V.T) / n_priv                                       # resamples x splits
    lo, hi = percentile_interval(means)
    const = np.all(V == V[:, :1], axis=1)
    lo = np.where(const, V[:, 0], lo)
    hi = np.where(const, V[:, 0], hi)
    share = np.bincount(pick, minlength=n_c) / len(pick)
    chosen = [{**names[c], "share": float(share[c])} for c in np.flatnonzero(share)]
    chosen.sort(key=lambda c: -c["share"])
    return {"public": float(pub[rows, pick].mean()), "private": float(private.mean()),
            "ci95": [float(lo.mean()), float(hi.mean())], "n_splits": int(len(pick)),
            "chosen": chosen, "most_chosen": chosen[0] if chosen else None}


#: The ensemble's rule in words (``{score}`` is the named score, when there is one).
ENSEMBLE_RULE = ("every attempt of every run is a vote for its grid; the two grids with "
                 "the most votes, ties broken by {score}{tie}")

#: The words of each tie rule in :data:`ENSEMBLE_RULE`.
TIE_WORDS = {"random": "chance, uniformly (the pass@2 is the exact expectation)",
             "first": "first appearance (run order, then attempt order)"}


def _ensembles(ensembles, S: np.ndarray, P: np.ndarray, starts: np.ndarray,
               n_out: np.ndarray, run_names: Sequence[str], mask: np.ndarray, n_boot: int,
               seed: int, score: str | None, tie: str = "random") -> dict:
    """The ``ensemble`` document: each set's pass@2 and interval, and ``held_out``: the
    candidate (each run alone, each set's vote ensemble, by votes and, with a named
    score, by votes then the score) with the best pass@2 on a public half of the tasks,
    scored on the other half (:func:`_held_out`), beside ``best_run``: the same choice
    among the runs alone."""
    if isinstance(ensembles, Mapping):
        ensembles = [{"name": k, "solved": v} for k, v in ensembles.items()]
    sets, cand, names = {}, [P], [{"kind": "run", "name": r} for r in run_names]
    for e in ensembles or []:
        entry = {"runs": list(e.get("runs") or [])}
        for key, rule in (("solved", "votes"), ("solved_score", f"votes, then {score}")):
            if e.get(key) is None:
                continue
            v = np.asarray(e[key], dtype=float)
            if v.shape != (S.shape[0],):
                raise RepeatsError(f"ensemble {printable(str(e['name']))} has {v.size} "
                                   f"values for {S.shape[0]} test outputs")
            nums = _ensemble_numbers(v, starts, n_out, n_boot, seed)
            if key == "solved":
                entry.update(nums)
            else:
                entry["with_score"] = nums
            cand.append((np.add.reduceat(v, starts) / n_out)[:, None])
            names.append({"kind": "ensemble", "name": str(e["name"]), "rule": rule})
        sets[str(e["name"])] = entry
    both = _held_out(np.concatenate(cand, axis=1), names, mask, n_boot, seed)
    runs = _held_out(P, names[:P.shape[1]], mask, n_boot, seed)
    both["best_run"] = {k: runs[k] for k in ("public", "private", "ci95")}
    words = ENSEMBLE_RULE.format(score=f"the highest {score}, then " if score else "",
                                 tie=TIE_WORDS[tie])
    return {"rule": words, "tie": tie, "score": score, "sets": sets, "held_out": both}


# ------------------------------------------------------------------ the result
class Repeats:
    """Many runs analysed together. ``summary`` is the JSON document (the ``--json``
    contract); ``matrix`` the task x run pass@2 table (index ``task_id``), ``solved``
    the test output x run table (index ``task_id, test_index``); ``runs``, ``configs``,
    ``flips``, ``comparisons``, ``union`` and ``jaccard`` are tables of the same
    numbers."""

    def __init__(self, summary: dict, matrix: pd.DataFrame, solved: pd.DataFrame,
                 runs: pd.DataFrame, flips: pd.DataFrame):
        self.summary = summary
        self.matrix = matrix
        self.solved = solved
        self.runs = runs
        self.flips = flips
        #: run x run Jaccard index of the solved test outputs (NaN when neither solves any)
        self.jaccard = pd.DataFrame()

    def __repr__(self) -> str:
        s = self.summary
        return (f"Repeats({len(self.runs)} runs in {len(s['configs'])} configurations, "
                f"{s['n_tasks']} tasks)")

    @property
    def configs(self) -> pd.DataFrame:
        """One row per configuration: runs, pass@2 mean, SD, min, max, both intervals,
        task counts, the variance split."""
        rows = []
        for name, c in self.summary["configs"].items():
            p = c["pass@2"]
            rows.append({"config": name, "n_runs": c["n_runs"], "pass@2_mean": p["mean"],
                         "pass@2_sd": p["sd"], "pass@2_min": p["min"], "pass@2_max": p["max"],
                         "ci95_low": p["ci95"][0], "ci95_high": p["ci95"][1],
                         "single_run_ci95_low": p["ci95_single_run"][0],
                         "single_run_ci95_high": p["ci95_single_run"][1],
                         "always_solved": c["always_solved"], "never_solved": c["never_solved"],
                         "flipping": c["flipping"], "steady_partial": c["steady_partial"],
                         "variance_tasks": c["variance"]["tasks"],
                         "variance_runs": c["variance"]["runs"],
                         "runs_share": c["variance"]["runs_share"]})
            for m, g in c.get("graded", {}).items():
                rows[-1].update({f"{m}_mean": g["mean"], f"{m}_sd": g["sd"],
                                 f"{m}_min": g["min"], f"{m}_max": g["max"],
                                 f"{m}_ci95_low": g["ci95"][0],
                                 f"{m}_ci95_high": g["ci95"][1]})
        return pd.DataFrame(rows)

    @property
    def graded(self) -> pd.DataFrame:
        """One row per configuration and graded metric (:data:`GRADED`): mean, SD, min,
        max over runs and the two-level interval."""
        rows = [{"config": name, "metric": m, "mean": g["mean"], "sd": g["sd"],
                 "min": g["min"], "max": g["max"], "ci95_low": g["ci95"][0],
                 "ci95_high": g["ci95"][1]}
                for name, c in self.summary["configs"].items()
                for m, g in c.get("graded", {}).items()]
        return pd.DataFrame(rows, columns=["config", "metric", "mean", "sd", "min", "max",
                                           "ci95_low", "ci95_high"])

    @property
    def comparisons(self) -> pd.DataFrame:
        """One row per pair of configurations: ``diff = b - a``, its interval, ``p``,
        ``mde80`` and the standard error ``se`` of the test (NaN where the test cannot be
        made: each comparison's ``note`` in ``summary`` says why)."""
        cols = ["a", "b", "diff", "ci95_low", "ci95_high", "p", "mde80", "se"]
        rows = [{"a": c["a"], "b": c["b"], "diff": c["diff"], "ci95_low": c["ci95"][0],
                 "ci95_high": c["ci95"][1], "p": c["p"], "mde80": c["mde80"], "se": c["se"]}
                for c in self.summary["comparisons"]]
        return pd.DataFrame(rows, columns=cols).astype(
            {k: float for k in cols[2:]})

    @property
    def union(self) -> pd.DataFrame:
        """Union coverage (pass@2 of "any run solves it") against the number of runs."""
        by = self.summary["union"]["by_n_runs"]
        return pd.DataFrame({"n_runs": np.arange(1, len(by) + 1), "union_pass@2": by})

    def text(self) -> str:
        """The numbers in plain lines, for the terminal."""
        s = self.summary

        def f(x):
            return fmt_number(x, least=4)

        def nm(x):  # a run or configuration name, escaped: a newline never forges a row
            return printable(str(x))

        lines = [f"tasks: {s['n_tasks']}  runs: {len(self.runs)}  configurations: "
                 f"{len(s['configs'])}"]
        if s.get("skipped"):
            lines.append(f"left out (none of the dataset's tasks): {', '.join(map(nm, s['skipped']))}")
        lines.append(f"{'configuration':<24} {'runs':>4} {'pass@2 mean':>11} {'sd':>7} "
                     f"{'min':>7} {'max':>7}  {'95% (tasks and runs)':<20}  "
                     f"{'95% (one run)':<18} {'always':>6} {'never':>6} {'flip':>5}")
        for name, c in s["configs"].items():
            p = c["pass@2"]
            lines.append(f"{nm(name)[:24]:<24} {c['n_runs']:>4} {f(p['mean']):>11} {f(p['sd']):>7} "
                         f"{f(p['min']):>7} {f(p['max']):>7}  "
                         f"[{f(p['ci95'][0])}, {f(p['ci95'][1])}]  "
                         f"[{f(p['ci95_single_run'][0])}, {f(p['ci95_single_run'][1])}] "
                         f"{c['always_solved']:>6} {c['never_solved']:>6} {c['flipping']:>5}")
        for name, c in s["configs"].items():
            for m, g in c.get("graded", {}).items():
                lines.append(f"{nm(name)[:24]:<24} {m}: mean {f(g['mean'])}, sd {f(g['sd'])}, "
                             f"min {f(g['min'])}, max {f(g['max'])}, 95% (tasks and runs) "
                             f"[{f(g['ci95'][0])}, {f(g['ci95'][1])}]")
        for c in s["comparisons"]:
            lines.append(f"{nm(c['b'])} - {nm(c['a'])}: {f(c['diff'])} [{f(c['ci95'][0])}, "
                         f"{f(c['ci95'][1])}]  p = {f(c['p'])}  smallest difference "
                         f"detectable (80% power): {f(c['mde80'])}"
                         + (f"  ({c['note']})" if c.get("note") else ""))
        for name, c in s["configs"].items():
            if c["pass@2"].get("ci95_note"):
                lines.append(f"{nm(name)}: no interval over tasks and runs "
                             f"({c['pass@2']['ci95_note']})")
        for name, w in s["winners_curse"].items():
            lines.append(f"best of {s['configs'][name]['n_runs']} runs of {nm(name)} picked on a "
                         f"public half: public {f(w['public'])}, private {f(w['private'])}, "
                         f"configuration mean {f(w['mean'])}")
        u = s["union"]
        lines.append(f"union of all runs: pass@2 {f(u['pass@2'])}; by number of runs: "
                     + ", ".join(f(x) for x in u["by_n_runs"]))
        lines.append("unique solves (test outputs no other run solves): "
                     + ", ".join(f"{nm(k)}: {v}" for k, v in s["unique_solves"].items()))
        h = s["ensemble"]["held_out"]
        if h["n_splits"]:
            m, b = h["most_chosen"], h["best_run"]
            lines.append(f"ensemble chosen on a public half (most often: {m['kind']} "
                         f"{nm(m['name'])}, {fmt_percent(m['share'], least=0)} of {h['n_splits']} halves): public "
                         f"{f(h['public'])}, private {f(h['private'])} "
                         f"[{f(h['ci95'][0])}, {f(h['ci95'][1])}]; the best run alone: "
                         f"private {f(b['private'])}")
        return "\n".join(lines)

    def write(self, out: str | os.PathLike, *, overwrite: bool = False,
              html: str | None = None) -> Path:
        """Write ``summary.json`` and the tables as CSV into ``out`` as one result folder
        (:func:`arcnb.runs.write_result_folder`): all files as one, atomically, through
        the guarded output folder; existing files are kept unless ``overwrite=True``.
        ``html``: a page written with them as ``repeats.html``
        (``arcnb.report.sections.repeats_page``)."""
        folder = OutputFolder(out)
        tables = {"runs.csv": self.runs, "configs.csv": self.configs,
                  "graded.csv": self.graded, "solve_matrix.csv": self.matrix,
                  "flips.csv": self.flips, "comparisons.csv": self.comparisons,
                  "union.csv": self.union, "jaccard.csv": self.jaccard}
        extra = {"repeats.html": html.encode("utf-8")} if html is not None else None
        write_result_folder(folder, self.summary, tables, overwrite=overwrite,
                            indexed=("solve_matrix.csv", "jaccard.csv"), extra_files=extra)
        return folder.path


# ------------------------------------------------------------------ the analysis
def _check_n_splits(n_splits) -> int:
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) \
            or not 1 <= n_splits <= 1_000_000:
        raise RepeatsError(f"n_splits must be a whole number from 1 to 1000000, got "
                           f"{n_splits!r}")
    return n_splits


@dataclass
class _Matrix:
    """The solve matrix checked, and its tasks: ``S`` outputs x runs (0/1), ``codes``
    each output's task position, ``starts`` each task's first output, ``n_out`` its
    outputs, ``P`` the task x run pass@2 (a task's outputs averaged)."""

    S: np.ndarray
    codes: np.ndarray
    starts: np.ndarray
    n_out: np.ndarray
    P: np.ndarray


def _solve_matrix(solved, output_task, n_t: int, n_r: int, n_configs: int) -> _Matrix:
    """:class:`_Matrix` of ``solved`` (outputs x runs) and ``output_task``; one-line
    :class:`RepeatsError` when they do not match ``n_t`` tasks and ``n_r`` runs, or a
    task's outputs are not contiguous and in task order."""
    S = np.asarray(solved, dtype=float)
    codes = np.asarray(output_task, dtype=np.int64)
    if S.ndim != 2 or S.shape[1] != n_r or S.shape[0] != codes.size or n_configs != n_r:
        raise RepeatsError(f"a solve matrix of shape {S.shape} does not match "
                           f"{codes.size} outputs and {n_r} runs")
    if codes.size and (np.any(np.diff(codes) < 0) or codes[0] != 0 or codes[-1] != n_t - 1
                       or np.any(np.diff(codes) > 1)):
        raise RepeatsError("every task needs its outputs, contiguous, in task order")
    if n_t == 0:
        raise RepeatsError("no tasks to analyse")
    starts = np.flatnonzero(np.r_[True, np.diff(codes) != 0])
    n_out = np.diff(np.r_[starts, codes.size]).astype(float)
    P = np.add.reduceat(S, starts, axis=0) / n_out[:, None]          # tasks x runs
    return _Matrix(S, codes, starts, n_out, P)


def _graded_of(graded: Mapping[str, np.ndarray] | None, m: _Matrix) -> dict:
    """Per graded metric (:data:`GRADED`), its task x run numerator and denominator
    (:func:`_graded_parts`); an unknown metric or a shape other than the solve
    matrix's is refused."""
    parts = {}
    for name, v in (graded or {}).items():
        if name not in GRADED:
            raise RepeatsError(f"no graded metric {printable(str(name))}; the graded metrics "
                               f"are {', '.join(GRADED)}")
        v = np.asarray(v, dtype=float)
        if v.shape != m.S.shape:
            raise RepeatsError(f"graded metric {name} has shape {v.shape}, the solve matrix "
                               f"{m.S.shape}")
        parts[name] = _graded_parts(v, GRADED[name], m.starts, m.n_out)
    return parts


def _config(k: int, name: str, idx: np.ndarray, m: _Matrix, parts: dict,
            task_ids: Sequence[str], run_names: Sequence[str], seeds: Sequence | None,
            task_counts: np.ndarray, n_boot: int, seed: int) -> tuple[dict, list[dict]]:
    """One configuration (the ``k``-th, runs ``idx``): its entry of ``configs`` and its
    rows of the flips table."""
    Pc = m.P[:, idx]
    scores = m.P.mean(axis=0)[idx]
    ci = config_interval(Pc)
    lo_t, hi_t = Pc.min(axis=1), Pc.max(axis=1)
    always, never, flip = lo_t == 1, hi_t == 0, hi_t > lo_t
    v_tasks, v_runs = float(ci["var_tasks"]), float(ci["var_runs"])
    total = v_tasks + v_runs
    entry = {
        "n_runs": int(len(idx)),
        "runs": [run_names[i] for i in idx],
        "seeds": None if seeds is None else [to_jsonable(seeds[i]) for i in idx],
        "pass@2": {"mean": float(scores.mean()), "sd": _sd(scores), "min": float(scores.min()),
                   "max": float(scores.max()),
                   "ci95": [float(ci["low"]), float(ci["high"])],
                   "ci95_note": ci["note"],
                   "ci95_single_run": list(bootstrap_ci(Pc[:, 0], n_boot=n_boot, seed=seed))},
        "always_solved": int(always.sum()), "never_solved": int(never.sum()),
        "flipping": int(flip.sum()),
        "steady_partial": int(len(task_ids) - always.sum() - never.sum() - flip.sum()),
        "flips": [task_ids[i] for i in np.flatnonzero(flip)],
        "variance": {"tasks": v_tasks, "runs": v_runs,
                     "runs_share": v_runs / total if total > 0 else float("nan")},
        "union": _union(m.S[:, idx], m.starts, m.n_out),
        "graded": {g: _graded_numbers(num[:, idx], den[:, idx], task_counts, n_boot,
                                      _run_seed(seed, k))
                   for g, (num, den) in parts.items()},
    }
    rate = Pc.mean(axis=1)
    flips = [{"config": name, "task_id": task_ids[i], "solve_rate": float(rate[i]),
              "runs_solving": int((Pc[i] == 1).sum()), "n_runs": int(len(idx))}
             for i in np.flatnonzero(flip)]
    return entry, flips


def _runs_entries(m: _Matrix, parts: dict, run_names: Sequence[str], configs: Sequence[str],
                  seeds: Sequence | None, run_info: Sequence[Mapping] | None) -> list[dict]:
    """The ``runs`` document: per run its configuration, seed, pass@2, graded metrics
    and ``run_info``."""
    run_score = m.P.mean(axis=0)
    return [{"run": run_names[r], "config": configs[r],
             "seed": None if seeds is None else to_jsonable(seeds[r]),
             "pass@2": float(run_score[r]),
             **{g: float(_ratio(num[:, r].sum(), den[:, r].sum()))
                for g, (num, den) in parts.items()},
             **(dict(run_info[r]) if run_info is not None else {})}
            for r in range(len(run_names))]


def _result(summary: dict, m: _Matrix, task_ids: Sequence[str], run_names: Sequence[str],
            test_index, flips: list[dict], jaccard: np.ndarray | None) -> "Repeats":
    """The :class:`Repeats` of ``summary``: its matrices and tables as DataFrames."""
    matrix = pd.DataFrame(m.P, columns=list(run_names),
                          index=pd.Index(list(task_ids), name="task_id"))
    if test_index is None:
        test_index = np.arange(m.codes.size) - m.starts[m.codes]
    solved_df = pd.DataFrame(m.S, columns=list(run_names), index=pd.MultiIndex.from_arrays(
        [np.asarray(task_ids, dtype=object)[m.codes], np.asarray(test_index)],
        names=["task_id", "test_index"]))
    runs_df = pd.DataFrame(summary["runs"])
    seeds_col = pd.to_numeric(runs_df["seed"], errors="coerce") if "seed" in runs_df else None
    if seeds_col is not None and runs_df["seed"].notna().sum() == seeds_col.notna().sum() \
            and (seeds_col.dropna() % 1 == 0).all():
        runs_df["seed"] = seeds_col.astype("Int64")  # whole numbers (1, not 1.0000)
    flips_df = pd.DataFrame(flips, columns=["config", "task_id", "solve_rate", "runs_solving",
                                            "n_runs"])
    rep = Repeats(summary, matrix, solved_df, runs_df, flips_df)
    if jaccard is not None:
        rep.jaccard = pd.DataFrame(jaccard, index=list(run_names), columns=list(run_names))
    return rep


def analyse(solved, output_task, task_ids: Sequence[str], run_names: Sequence[str],
            configs: Sequence[str], *, seeds: Sequence | None = None, test_index=None,
            n_boot: int = 1000, seed: int = 0, n_splits: int = 1000,
            skipped: Sequence[str] = (), ensembles=None, score: str | None = None,
            graded: Mapping[str, np.ndarray] | None = None,
            run_info: Sequence[Mapping] | None = None, tie: str = "random") -> Repeats:
    """The analysis of a solve matrix: ``solved`` is ``[outputs, runs]`` (0/1 per test
    output, ranked pass@2), ``output_task`` each output's task position (outputs of a
    task contiguous, tasks in the order of ``task_ids``), ``configs`` each run's
    configuration (configurations in order of first appearance). ``ensembles``: the
    vote ensembles of sets of runs (:func:`arcnb.voting.vote_ensemble`), a mapping of a
    set's name (a configuration, or ``"all"``) to 0/1 per test output, or a list of
    ``{"name", "runs", "solved"}`` and optionally ``"solved_score"`` (the same
    ensemble with the named ``score`` breaking vote ties); their pass@2 and interval,
    and the ensemble chosen on public halves and scored on the other half, go under
    ``ensemble``. ``graded``: per metric of :data:`GRADED`, its value per test output x
    run (NaN where an output has none); mean, SD, min, max and the two-level interval
    per configuration go under ``graded``. ``run_info``: per run, more numbers for its
    entry of ``runs`` (its cost, its API log rates). ``tie``: the tie rule the
    ensembles were voted with, named in ``ensemble``."""
    n_boot, seed = check_n_boot(n_boot), check_seed(seed)
    check_tie(tie)
    n_splits = _check_n_splits(n_splits)
    n_t, n_r = len(task_ids), len(run_names)
    m = _solve_matrix(solved, output_task, n_t, n_r, len(configs))
    order = list(dict.fromkeys(configs))
    cols = {c: np.flatnonzero(np.asarray(configs, dtype=object) == c) for c in order}
    task_counts = _counts(bootstrap_indices(n_t, n_boot=n_boot, seed=seed), n_t)
    mask = _splits(n_t, n_splits, seed)
    parts = _graded_of(graded, m)
    out_configs, flips, curse = {}, [], {}
    for k, name in enumerate(order):
        out_configs[name], rows = _config(k, name, cols[name], m, parts, task_ids, run_names,
                                          seeds, task_counts, n_boot, seed)
        flips += rows
        curse[name] = _winners_curse(m.P[:, cols[name]], mask)
    S = m.S
    unique = ((S > 0) & (S.sum(axis=1) == 1)[:, None]).sum(axis=0)
    jaccard, best_pair = _pairs_of_runs(S, 1.0 / (m.n_out[m.codes] * n_t), run_names)
    summary = {
        "n_tasks": int(n_t), "n_outputs": int(m.codes.size), "n_runs": int(n_r),
        "configs": out_configs,
        "union": _union(S, m.starts, m.n_out),
        "unique_solves": {run_names[r]: int(unique[r]) for r in range(n_r)},
        "comparisons": [_comparison(a, b, m.P[:, cols[a]], m.P[:, cols[b]])
                        for a, b in itertools.combinations(order, 2)],
        "winners_curse": curse,
        "best_pair": best_pair,
        "ensemble": _ensembles(ensembles, S, m.P, m.starts, m.n_out, run_names, mask, n_boot,
                               seed, score, tie),
        "runs": _runs_entries(m, parts, run_names, configs, seeds, run_info),
        "skipped": list(skipped),
        "bootstrap": {"n_boot": n_boot, "seed": seed, "level": 0.95,
                      "unit": "task, then run"},
        "test": TEST,
        "test_name": TEST_NAME,
    }
    return _result(summary, m, task_ids, run_names, test_index, flips, jaccard)


