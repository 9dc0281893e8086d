"""Candidate pools measured against a dataset's truth: :func:`candidates` and what it
returns (:class:`CandidateAnalysis`), the ranking rules and :func:`calibration`. The
numbers are defined in :mod:`arcnb.candidates`."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..data import Dataset, load_dataset
from ..errors import ParameterError
from ..io import csv_text, to_jsonable
from ..runs import OutputFolder
from ..stats import (bootstrap_ci, bootstrap_indices, check_n_boot, check_seed, mcnemar_table,
                     paired_bootstrap_ci, percentile_interval, ratio_bootstrap_ci)
from ..taxonomy import load_taxonomy
from .files import (BUILTIN_RULES, CandidateSet, grid_codes, load_candidates)

__all__ = ["CandidateAnalysis", "candidates", "calibration", "CANDIDATE_DEFINITIONS"]

#: Each number of the summary, defined in words.
CANDIDATE_DEFINITIONS = {
    "coverage": "per task: fraction of its test outputs whose right answer is among the "
                "candidates, then the mean over tasks (the ceiling of any ranking rule)",
    "coverage_per_output": "fraction of all test outputs whose right answer is among the "
                           "candidates",
    "pass@K": "per task: fraction of its test outputs whose right answer is among the K "
              "top-ranked candidates, then the mean over tasks",
    "selection_gap": "coverage - pass@2: what a perfect choice of two candidates would add",
    "rank_of_correct": "test outputs counted by the rank of the right candidate ('absent': "
                       "not among the candidates)",
    "distinct_mean": "distinct candidate grids per test output (0 where there are none)",
    "single_candidate_share": "fraction of test outputs with exactly one distinct candidate",
    "ece": "expected calibration error of the top candidate's vote share: the mean, over "
           "vote-share bins weighted by their outputs, of |fraction right - mean vote share|",
}


# ------------------------------------------------------------------------ analysis
@dataclass
class _Pool:
    """Distinct candidates aligned on a dataset's test outputs."""

    out: np.ndarray        # output row of each candidate
    votes: np.ndarray
    first: np.ndarray      # first appearance (place within the output)
    correct: np.ndarray
    src: np.ndarray        # the sample that first gave it
    scores: dict
    n_out: int


def _distinct(cs: CandidateSet, row_of_key: dict, truth) -> tuple[_Pool, dict]:
    """Merge identical grids of each output. ``truth``: ``(cells, offsets, heights,
    widths)`` of the dataset's test outputs, in row order."""
    block_row = np.array([row_of_key.get(k, -1) for k in cs.keys], dtype=np.int64)
    row = block_row[cs.block] if cs.n_samples else np.zeros(0, np.int64)
    valid = cs.valid
    in_ds = row >= 0
    counts = {"n_samples": int(cs.n_samples), "n_invalid": int((~valid).sum()),
              "n_outside_dataset": int((~in_ds).sum())}
    keep = np.flatnonzero(valid & in_ds)
    tcells, toffs, th, tw = truth
    codes, tcode = grid_codes(cs.cells, cs.offsets, also=(tcells, toffs))
    r, p, c = row[keep], cs.pos[keep], codes[keep]
    hh, ww = cs.heights[keep], cs.widths[keep]
    order = np.lexsort((p, ww, hh, c, r))
    r, p, c, hh, ww = r[order], p[order], c[order], hh[order], ww[order]
    v, src = cs.votes[keep][order], keep[order]
    if r.size:
        new = np.r_[True, (r[1:] != r[:-1]) | (c[1:] != c[:-1]) | (hh[1:] != hh[:-1])
                    | (ww[1:] != ww[:-1])]
        starts = np.flatnonzero(new)
    else:
        starts = np.zeros(0, np.int64)
    votes = np.add.reduceat(v, starts) if starts.size else np.zeros(0, np.int64)
    out = r[starts]
    correct = (c[starts] == tcode[out]) & (hh[starts] == th[out]) & (ww[starts] == tw[out])
    scores = {k: s[src[starts]] for k, s in cs.scores.items()}
    return _Pool(out, votes, p[starts], correct, src[starts], scores, int(th.size)), counts


def _ranks(pool: _Pool, rule: str, lower: frozenset) -> np.ndarray:
    """Rank (1 = top) of every candidate within its output under ``rule``."""
    if rule == "order":
        return pool.first + 1
    if rule == "votes":
        key = -pool.votes.astype(float)
    else:
        s = pool.scores[rule]
        key = np.where(np.isnan(s), np.inf, s if rule in lower else -s)
    order = np.lexsort((pool.first, key, pool.out))
    ranks = np.empty(order.size, np.int64)
    o = pool.out[order]
    start = np.r_[0, np.flatnonzero(o[1:] != o[:-1]) + 1] if o.size else np.zeros(0, np.int64)
    group_start = np.repeat(start, np.diff(np.r_[start, o.size]))
    ranks[order] = np.arange(order.size) - group_start + 1
    return ranks


_ABSENT = np.iinfo(np.int64).max


def _rank_of_correct(pool: _Pool, ranks: np.ndarray) -> np.ndarray:
    r = np.full(pool.n_out, _ABSENT, np.int64)
    c = pool.correct
    np.minimum.at(r, pool.out[c], ranks[c])
    return r


def calibration(confidence, correct, task_codes, *, bins: int = 10, n_boot: int = 1000,
                seed: int = 0, level: float = 0.95) -> tuple[pd.DataFrame, dict]:
    """Reliability of a confidence in [0, 1] against right / wrong, over outputs.

    Returns the reliability table (one row per equal-width bin: ``bin_low``,
    ``bin_high``, ``n``, ``confidence`` (mean), ``accuracy`` (fraction right) and its
    Wilson 95 % interval ``ci_low``/``ci_high``) and ``{"ece", "ece_ci95"}``.
    ECE = sum over bins of ``n_b / n * abs(accuracy_b - confidence_b)``. The binned estimate
    is biased upwards on finite samples, so its interval is the basic bootstrap interval
    over tasks (``2 * ece - quantiles`` of the resampled ECE, which removes that bias),
    clipped to [0, 1]: a calibrated pool gives an interval that reaches 0.
    """
    conf = np.asarray(confidence, float)
    ok = np.asarray(correct, bool).astype(float)
    codes = np.asarray(task_codes, np.int64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    b = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, bins - 1)
    n_b = np.bincount(b, minlength=bins).astype(float)
    c_b = np.bincount(b, weights=conf, minlength=bins)
    a_b = np.bincount(b, weights=ok, minlength=bins)
    z = 1.959963984540054
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = a_b / n_b
        mconf = c_b / n_b
        centre = (acc + z * z / (2 * n_b)) / (1 + z * z / n_b)
        half = z * np.sqrt(acc * (1 - acc) / n_b + z * z / (4 * n_b * n_b)) / (1 + z * z / n_b)
    table = pd.DataFrame({"bin_low": edges[:-1], "bin_high": edges[1:], "n": n_b.astype(int),
                          "confidence": mconf, "accuracy": acc,
                          "ci_low": np.clip(centre - half, 0, 1),
                          "ci_high": np.clip(centre + half, 0, 1)})
    n = conf.size
    if n == 0:
        return table, {"ece": float("nan"), "ece_ci95": [float("nan"), float("nan")]}

    def ece_of(nb, cb, ab):
        tot = nb.sum(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.abs(ab - cb) / np.where(tot > 0, tot, 1)
        return gap.sum(axis=-1)

    ece = float(ece_of(n_b, c_b, a_b))
    # per task x bin sums, then each resample's sums as a weighted sum over tasks
    _, tix = np.unique(codes, return_inverse=True)
    n_t = int(tix.max()) + 1
    cell = tix * bins + b
    per = [np.bincount(cell, weights=w, minlength=n_t * bins).reshape(n_t, bins)
           for w in (np.ones(n), conf, ok)]
    draws = bootstrap_indices(n_t, n_boot=n_boot, seed=seed)
    weights = np.zeros((n_boot, n_t))
    np.add.at(weights, (np.repeat(np.arange(n_boot), n_t), draws.ravel()), 1.0)
    boot = ece_of(weights @ per[0], weights @ per[1], weights @ per[2])
    q_lo, q_hi = percentile_interval(boot, level)
    lo, hi = float(np.clip(2 * ece - q_hi, 0, 1)), float(np.clip(2 * ece - q_lo, 0, 1))
    return table, {"ece": ece, "ece_ci95": [lo, hi]}


def _task_mean(values: np.ndarray, task_of: np.ndarray, n_per_task: np.ndarray) -> np.ndarray:
    return np.bincount(task_of, weights=values.astype(float),
                       minlength=n_per_task.size) / n_per_task


@dataclass
class CandidateAnalysis:
    """What :func:`candidates` measured.

    ``summary``: the numbers (see the module docstring; ``--json`` prints it).
    ``outputs``: one row per test output of the dataset (distinct candidates, votes,
    coverage, the rank of the right candidate under every rule, the top candidate's vote
    share). ``pool``: one row per distinct candidate (votes, first appearance, scores,
    ``correct``, ``rank_<rule>``). ``pass_at_k``: pass@K for K = 1 ... the largest rank,
    per rule (long table). ``reliability``: the calibration bins. ``by_category``:
    coverage beside pass@2 per category of the structural taxonomy. ``comparisons``:
    paired comparison of every two rules on pass@2. ``warnings``: what to know.
    """

    summary: dict
    outputs: pd.DataFrame
    pool: pd.DataFrame
    pass_at_k: pd.DataFrame
    reliability: pd.DataFrame
    by_category: pd.DataFrame
    comparisons: pd.DataFrame
    warnings: list
    dataset: Dataset
    candidate_set: CandidateSet = field(repr=False, default=None)

    @property
    def rules(self) -> list[str]:
        """The ranking rules measured, ``order`` and ``votes`` first."""
        return list(self.summary["rankings"])

    def grids(self, task_id: str, test_index: int = 0, *, rule: str | None = None
              ) -> list[tuple[np.ndarray, int, bool]]:
        """The candidates of one output in rank order under ``rule`` (default: the
        first rule asked for): ``(grid, votes, correct)`` each."""
        rule = rule or self.summary["rank_by"]
        p = self.pool[(self.pool["task_id"] == task_id) & (self.pool["test_index"] == test_index)]
        p = p.sort_values([f"rank_{rule}", "first"])
        return [(self.candidate_set.grid(int(s)), int(v), bool(c))
                for s, v, c in zip(p["sample"], p["votes"], p["correct"])]

    def write(self, out: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write ``summary.json`` and the tables as CSV into the folder ``out`` through
        the guarded output folder (:class:`arcnb.runs.OutputFolder`: not inside arcnb's
        own folders, never through a link; the seven files written as one, atomically;
        existing files are kept unless ``overwrite=True``)."""
        folder = OutputFolder(out)
        summary = json.dumps(to_jsonable(self.summary), indent=2, sort_keys=True,
                             allow_nan=False) + "\n"
        files = {"summary.json": summary.encode()}
        for name, table in (("outputs.csv", self.outputs),
                            ("candidates.csv", self.pool.drop(columns=["sample"])),
                            ("pass_at_k.csv", self.pass_at_k),
                            ("reliability.csv", self.reliability),
                            ("by_category.csv", self.by_category),
                            ("comparisons.csv", self.comparisons)):
            files[name] = (lambda t=table: csv_text(t).encode())
        # the seven files as one: all claimed first, a failure takes back those created
        folder.write(files, overwrite=overwrite)
        return folder.path


def _ci(values, n_boot: int, seed: int) -> list:
    return list(bootstrap_ci(values, n_boot=n_boot, seed=seed))


def _pass_at_k_table(rules, roc, task_of, n_per_task) -> pd.DataFrame:
    """pass@K per ranking rule, for K from 1 to the deepest rank of a right candidate
    (every K up to 50, then 40 steps on a log scale)."""
    max_rank = int(max([1, *[int(r[r != _ABSENT].max()) for r in roc.values()
                             if (r != _ABSENT).any()]]))
    ks = np.unique(np.r_[np.arange(1, min(max_rank, 50) + 1),
                         np.geomspace(1, max_rank, 40).round().astype(int)])
    rows = []
    for rule in rules:
        for k in ks:
            pt = _task_mean(roc[rule] <= k, task_of, n_per_task)
            rows.append({"rule": rule, "K": int(k), "pass@K": float(pt.mean())})
    return pd.DataFrame(rows)


def _rule_comparisons(rules, rankings, per_task_pass2, solved2, n_boot, seed) -> pd.DataFrame:
    """Every pair of ranking rules: the paired bootstrap difference in pass@2 over tasks
    and the exact McNemar test on the outputs one rule solves and the other does not."""
    rows = []
    for a_i, a in enumerate(rules):
        for b in rules[a_i + 1:]:
            diff, lo, hi = paired_bootstrap_ci(per_task_pass2[a], per_task_pass2[b],
                                               n_boot=n_boot, seed=seed)
            mc = mcnemar_table(solved2[a], solved2[b])
            rows.append({"rule_a": a, "rule_b": b, "pass@2_a": rankings[a]["pass@2"],
                         "pass@2_b": rankings[b]["pass@2"], "difference": diff,
                         "ci_low": lo, "ci_high": hi, "n_a_only": mc["n_a_only"],
                         "n_b_only": mc["n_b_only"], "mcnemar_p": mc["p_value"]})
    return pd.DataFrame(rows, columns=["rule_a", "rule_b", "pass@2_a", "pass@2_b", "difference",
                                       "ci_low", "ci_high", "n_a_only", "n_b_only",
                                       "mcnemar_p"])


def _by_category(ds, taxonomy, cov_task, pass2_task, n_boot, seed) -> pd.DataFrame:
    """Coverage beside pass@2 (of the first ranking rule) per category of ``taxonomy``
    (None: an empty table), each with its bootstrap interval, drawn once."""
    rows = []
    if taxonomy is not None:
        task_ids = ds.task_ids
        tax = load_taxonomy(taxonomy, dataset=ds)
        mem = tax.membership(task_ids)
        pos_of = {t: j for j, t in enumerate(task_ids)}
        for cat in tax.order:
            members = [pos_of[t] for t in mem.loc[mem["category"] == cat, "task_id"]]
            if not members:
                continue
            m = np.asarray(members)
            cv, p2 = cov_task[m], pass2_task[m]
            cv_ci, p2_ci = _ci(cv, n_boot, seed), _ci(p2, n_boot, seed)
            rows.append({"category": cat, "n_tasks": m.size, "coverage": float(cv.mean()),
                         "coverage_ci_low": cv_ci[0], "coverage_ci_high": cv_ci[1],
                         "pass@2": float(p2.mean()), "pass@2_ci_low": p2_ci[0],
                         "pass@2_ci_high": p2_ci[1], "selection_gap": float((cv - p2).mean())})
    return pd.DataFrame(rows, columns=[
        "category", "n_tasks", "coverage", "coverage_ci_low", "coverage_ci_high", "pass@2",
        "pass@2_ci_low", "pass@2_ci_high", "selection_gap"])


def candidates(dataset, predictions, *, tasks=None, rank_by: Sequence[str] | str | None = None,
               taxonomy="structural", bins: int = 10, n_boot: int = 1000,
               seed: int = 0) -> CandidateAnalysis:
    """Measure a candidate pool against ``dataset``'s truth.

    ``predictions``: anything :func:`load_candidates` reads. ``rank_by``: extra ranking
    rules (``order`` and ``votes`` are always measured); the first one given ranks
    ``rank_of_correct`` (default ``votes``). ``taxonomy``: categories for
    ``by_category`` (``"structural"``, a taxonomy file, or None to skip).
    """
    n_boot, seed = check_n_boot(n_boot), check_seed(seed)
    ds = load_dataset(dataset, tasks=tasks) if not isinstance(dataset, Dataset) else (
        dataset if tasks is None else load_dataset(dataset, tasks=tasks))
    cs = load_candidates(predictions, n_tests={t.id: len(t.test) for t in ds})
    rank_by = [rank_by] if isinstance(rank_by, str) else list(rank_by or [])
    available = set(BUILTIN_RULES) | set(cs.scores)
    for rule in rank_by:
        if rule not in available:
            have = ", ".join(sorted(available))
            raise ParameterError(f"unknown ranking rule {rule!r}: this pool offers {have}")
    rules = list(dict.fromkeys([*BUILTIN_RULES, *rank_by]))
    first_rule = rank_by[0] if rank_by else "votes"

    keys, task_of, truths = [], [], []
    for t, task in enumerate(ds):
        for i, pair in enumerate(task.test):
            keys.append((task.id, i))
            task_of.append(t)
            truths.append(pair.output)
    n_out, n_tasks = len(keys), len(ds)
    if n_out == 0:
        raise ParameterError("the dataset has no test outputs to measure candidates against")
    task_of = np.asarray(task_of, np.int64)
    n_per_task = np.bincount(task_of, minlength=n_tasks).astype(float)
    row_of_key = {k: r for r, k in enumerate(keys)}
    tcells = np.concatenate([np.ascontiguousarray(g, np.int8).ravel() for g in truths])
    th = np.array([g.shape[0] for g in truths], np.int64)
    tw = np.array([g.shape[1] for g in truths], np.int64)
    toffs = np.zeros(n_out + 1, np.int64)
    np.cumsum(th * tw, out=toffs[1:])
    pool, counts = _distinct(cs, row_of_key, (tcells, toffs, th, tw))

    covered = np.zeros(n_out, bool)
    covered[pool.out[pool.correct]] = True
    n_distinct = np.bincount(pool.out, minlength=n_out)
    # integer sums (votes are at most MAX_VOTES each: no sum can wrap, none is rounded)
    total_votes = np.zeros(n_out, np.int64)
    np.add.at(total_votes, pool.out, pool.votes)
    ranks = {rule: _ranks(pool, rule, cs.lower_is_better) for rule in rules}
    roc = {rule: _rank_of_correct(pool, ranks[rule]) for rule in rules}

    cov_task = _task_mean(covered, task_of, n_per_task)
    out_per_task = np.bincount(task_of, weights=covered.astype(float), minlength=n_tasks)
    coverage = float(cov_task.mean())
    rankings, per_task_pass2, solved2 = {}, {}, {}
    for rule in rules:
        entry = {}
        for k in (1, 2):
            solved = roc[rule] <= k
            pt = _task_mean(solved, task_of, n_per_task)
            entry[f"pass@{k}"] = float(pt.mean())
            entry[f"pass@{k}_ci95"] = _ci(pt, n_boot, seed)
            entry[f"pass@{k}_per_output"] = float(solved.mean())
            if k == 2:
                per_task_pass2[rule], solved2[rule] = pt, solved
        gap = cov_task - per_task_pass2[rule]
        entry["selection_gap"] = float(gap.mean())
        entry["selection_gap_ci95"] = _ci(gap, n_boot, seed)
        rankings[rule] = entry

    r0 = roc[first_rule]
    present = r0[r0 != _ABSENT]
    rank_of_correct = {str(int(k)): int(n) for k, n in zip(*np.unique(present, return_counts=True))}
    rank_of_correct["absent"] = int((r0 == _ABSENT).sum())

    # the top candidate under votes: its share of the output's votes
    top = ranks["votes"] == 1
    has = n_distinct > 0
    share = np.full(n_out, np.nan)
    top_right = np.zeros(n_out, bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        share[pool.out[top]] = pool.votes[top] / total_votes[pool.out[top]]
    top_right[pool.out[top]] = pool.correct[top]
    voted = np.isfinite(share)  # outputs with candidates and at least one vote
    reliability, cal = calibration(share[voted], top_right[voted], task_of[voted], bins=bins,
                                   n_boot=n_boot, seed=seed)

    warnings = []
    single_share = float((n_distinct == 1).mean())
    if has.any() and n_distinct.max() == 1:
        warnings.append("every test output has a single distinct candidate: pass@K is the "
                        "same for every K, and ranking rules cannot differ")
    if counts["n_outside_dataset"]:
        warnings.append(f"{counts['n_outside_dataset']} samples are for tasks or test outputs "
                        "the dataset lacks: ignored")
    n_without = int((~has).sum())

    ratio_lo, ratio_hi = ratio_bootstrap_ci(out_per_task, n_per_task, n_boot=n_boot, seed=seed,
                                            level=0.95)
    pass_at_k = _pass_at_k_table(rules, roc, task_of, n_per_task)
    comparisons = _rule_comparisons(rules, rankings, per_task_pass2, solved2, n_boot, seed)
    by_category = _by_category(ds, taxonomy, cov_task, per_task_pass2[first_rule], n_boot, seed)

    out_tid = [k[0] for k in keys]
    out_idx = [k[1] for k in keys]
    outputs = pd.DataFrame({"task_id": out_tid, "test_index": out_idx,
                            "n_distinct": n_distinct, "n_votes": total_votes,
                            "covered": covered, "top_vote_share": share,
                            "top_correct": top_right})
    for rule in rules:
        r = roc[rule]
        outputs[f"rank_{rule}"] = pd.array(np.where(r == _ABSENT, 0, r), dtype="Int64")
        outputs.loc[r == _ABSENT, f"rank_{rule}"] = pd.NA
    tid_arr = np.asarray(out_tid, dtype=object)
    # every column at once (one insert per score column is quadratic); no score can
    # take a pool column's name (refused when read)
    pool_cols = {"task_id": tid_arr[pool.out], "test_index": np.asarray(out_idx)[pool.out],
                 "votes": pool.votes, "first": pool.first, "correct": pool.correct,
                 "sample": pool.src}
    pool_cols.update(pool.scores)
    pool_cols.update({f"rank_{rule}": ranks[rule] for rule in rules})
    pool_df = pd.DataFrame(pool_cols)

    summary = {
        "dataset": ds.info, "source": cs.source, "format": cs.format,
        "n_tasks": n_tasks, "n_outputs": n_out,
        "n_outputs_without_candidates": n_without,
        "n_samples": counts["n_samples"], "n_invalid_attempts": counts["n_invalid"],
        "n_candidates": int(pool.out.size),
        "coverage": coverage, "coverage_ci95": _ci(cov_task, n_boot, seed),
        "coverage_per_output": float(covered.mean()),
        "coverage_per_output_ci95": [ratio_lo, ratio_hi],
        "rankings": rankings, "rank_by": first_rule, "rank_of_correct": rank_of_correct,
        "distinct_mean": float(n_distinct.mean()), "single_candidate_share": single_share,
        "ece": cal["ece"], "ece_ci95": cal["ece_ci95"],
        "reliability": reliability.to_dict(orient="records"),
        "comparisons": comparisons.to_dict(orient="records"),
        "by_category": by_category.to_dict(orient="records"),
        "scores": sorted(cs.scores), "lower_is_better": sorted(cs.lower_is_better),
        "warnings": warnings, "definitions": CANDIDATE_DEFINITIONS,
    }
    return CandidateAnalysis(summary, outputs, pool_df, pass_at_k, reliability, by_category,
                             comparisons, warnings, ds, cs)
