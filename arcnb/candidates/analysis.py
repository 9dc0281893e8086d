"""Candidate pools measured against a dataset's truth: :func:`candidates` and what it
returns (:class:`CandidateAnalysis`), the ranking rules and :func:`calibration`. The
numbers are defined in :mod:`arcnb.candidates`."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..data import Dataset, load_dataset
from ..errors import ParameterError
from ..html import note
from ..html import table as html_table
from ..runs import OutputFolder, provenance_block, write_result_folder
from ..scoring import missing_tasks_warning
from ..stats import (bootstrap_ci, bootstrap_indices, check_n_boot, check_seed, mcnemar_table,
                     paired_bootstrap_ci, percentile_interval, ratio_bootstrap_ci)
from ..taxonomy import load_taxonomy
from ..text import fmt_interval, fmt_number
from ..voting import VoteRanks, check_tie, majority_vote
from .anytime import MAX_ANYTIME_DRAWS, anytime_curves, band, per_task, step_summary, step_table, verifier
from .files import AXES, BUILTIN_RULES, CandidateSet, grid_codes, load_candidates

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
_ABSENT = np.iinfo(np.int64).max

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
    fields: dict = field(default_factory=dict)  # passes_train / train_score (max over listings)
    cand_of_sample: np.ndarray | None = None    # sample -> candidate (-1: none)
    free: np.ndarray | None = None              # per output: draws of malformed samples


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
        new = np.zeros(0, bool)
        starts = np.zeros(0, np.int64)
    votes = np.add.reduceat(v, starts) if starts.size else np.zeros(0, np.int64)
    out = r[starts]
    correct = (c[starts] == tcode[out]) & (hh[starts] == th[out]) & (ww[starts] == tw[out])
    scores = {k: s[src[starts]] for k, s in cs.scores.items()}
    # a grid passes the demonstrations when any of its listings does (its best score)
    fields = {k: (np.fmax.reduceat(f[src], starts) if starts.size else np.zeros(0))
              for k, f in cs.fields.items()}
    cand = np.full(cs.n_samples, -1, np.int64)
    cand[src] = np.cumsum(new) - 1
    bad = ~valid & in_ds
    free = np.bincount(row[bad], weights=cs.votes[bad], minlength=int(th.size)).astype(np.int64)
    return _Pool(out, votes, p[starts], correct, src[starts], scores, int(th.size), fields,
                 cand, free), counts


#: The confidence scores a pool may carry (the first one present is calibrated and
#: gives the rule ``votes_then_<name>``).
CONFIDENCE_SCORES = ("q_halt", "confidence")
#: The rule of the demonstration checks: passers first, then votes, then train_score.
PASSES_TRAIN = "passes_train"
VOTES_THEN = "votes_then_"


def _score_key(pool: _Pool, name: str, lower: frozenset) -> np.ndarray:
    """A named score as a sort key: better first, candidates without it last."""
    s = pool.scores[name]
    return np.where(np.isnan(s), np.inf, s if name in lower else -s)


def _counts_votes(rule: str, pool: _Pool) -> bool:
    """Whether ``rule`` counts votes (its ties then follow the tie rule)."""
    return rule in ("votes", PASSES_TRAIN) or (
        rule.startswith(VOTES_THEN) and rule[len(VOTES_THEN):] in pool.scores)


def _rule_keys(pool: _Pool, rule: str, lower: frozenset) -> tuple[list, list]:
    """The lower-first keys of ``rule`` before and after the votes (most significant
    first); a rule that does not count votes has its keys in the first list."""
    if rule in ("votes", "order"):
        return [], []
    if rule == PASSES_TRAIN:
        passes = pool.fields[PASSES_TRAIN]
        ts = pool.fields.get("train_score", np.full(passes.size, np.nan))
        return [-np.where(np.isnan(passes), -1.0, passes)], [np.where(np.isnan(ts), np.inf, -ts)]
    if rule.startswith(VOTES_THEN) and rule[len(VOTES_THEN):] in pool.scores:
        return [], [_score_key(pool, rule[len(VOTES_THEN):], lower)]
    return [_score_key(pool, rule, lower)], []


def _ranks(pool: _Pool, rule: str, lower: frozenset, first_keys: list, tie: str) -> VoteRanks:
    """Every candidate's place within its output under ``rule``
    (:func:`arcnb.voting.majority_vote`): the listing rank, and what the tie rule makes
    of ties (a rule that does not count votes breaks ties by first appearance)."""
    if rule == "order":  # the attempts as given: the place of the first appearance
        r = pool.first + 1
        return VoteRanks(r, r - 1, np.ones_like(r), "first")
    before, after = _rule_keys(pool, rule, lower)
    if _counts_votes(rule, pool):
        return majority_vote(pool.out, pool.votes, before=before, after=after,
                             order=first_keys, tie=tie)
    return majority_vote(pool.out, None, before=before, order=first_keys, tie="first")


def _right_place(pool: _Pool, vr: VoteRanks) -> tuple[np.ndarray, np.ndarray]:
    """Per output: ``(ahead, tied)`` of its right candidate (``ahead`` = _ABSENT when
    the right answer is not among the candidates)."""
    ahead = np.full(pool.n_out, _ABSENT, np.int64)
    tied = np.ones(pool.n_out, np.int64)
    c = pool.correct
    ahead[pool.out[c]] = vr.ahead[c]
    tied[pool.out[c]] = vr.tied[c]
    return ahead, tied


def _solved(place, k) -> np.ndarray:
    """Per output: the probability that the right candidate is among the top ``k``."""
    ahead, tied = place
    present = ahead != _ABSENT
    return np.where(present, np.clip((k - np.where(present, ahead, 0)) / tied, 0.0, 1.0), 0.0)


def _rank_counts(place) -> dict:
    """Test outputs by the rank of their right candidate (expected counts under random
    ties: a right candidate tied with ``t - 1`` others takes each of their ranks with
    probability ``1 / t``), and ``absent``."""
    ahead, tied = place
    present = ahead != _ABSENT
    a, t = ahead[present], tied[present]
    top = int((a + t).max()) if a.size else 0
    diff = np.zeros(top + 2)
    np.add.at(diff, a + 1, 1.0 / t)
    np.add.at(diff, a + t + 1, -1.0 / t)
    out = {}
    for j, c in enumerate(np.cumsum(diff)[1:top + 1], start=1):
        if c > 1e-12:
            c = float(c)
            out[str(j)] = int(round(c)) if abs(c - round(c)) < 1e-9 else c
    out["absent"] = int((~present).sum())
    return out


def calibration(confidence, correct, task_codes, *, bins: int = 10, n_boot: int = 1000,
                seed: int = 0, level: float = 0.95) -> tuple[pd.DataFrame, dict]:
    """Reliability of a confidence in [0, 1] against right / wrong, over outputs
    (``correct``: booleans, or the probability of being right, e.g. under random ties).

    Returns the reliability table (one row per equal-width bin: ``bin_low``,
    ``bin_high``, ``n``, ``confidence`` (mean), ``accuracy`` (fraction right) and its
    Wilson 95 % interval ``ci_low``/``ci_high``) and ``{"ece", "ece_ci95"}``.
    ECE = sum over bins of ``n_b / n * abs(accuracy_b - confidence_b)``. The binned estimate
    is biased upwards on finite samples, so its interval is the basic bootstrap interval
    over tasks (``2 * ece - quantiles`` of the resampled ECE, which removes that bias),
    clipped to [0, 1]: a calibrated pool gives an interval that reaches 0.
    """
    conf = np.asarray(confidence, float)
    ok = np.asarray(correct, float)
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


@dataclass(repr=False)
class CandidateAnalysis:
    """What :func:`candidates` measured.

    ``summary``: the numbers (see the module docstring; ``--json`` prints it).
    ``outputs``: one row per test output of the dataset (distinct candidates, votes,
    coverage, the rank of the right candidate under every rule, the top candidate's vote
    share). ``pool``: one row per distinct candidate (votes, first appearance, scores,
    ``correct``, ``rank_<rule>``: the listing rank, ties by first appearance).
    ``pass_at_k``: pass@K for K = 1 ... the pool's largest K (the most distinct
    candidates of an output), per rule (long table). ``reliability``: the calibration bins. ``by_category``:
    coverage beside pass@2 per category of the structural taxonomy. ``comparisons``:
    paired comparison of every two rules on pass@2. ``warnings``: what to know.
    ``anytime``: with a budget axis, pass@1 / pass@2 / coverage per number of draws
    ``n`` and rule (long table; the band of ``votes``); ``steps``: with refinement steps,
    the per-step shares; ``confidence_reliability``: with a confidence score, its
    calibration bins (see :mod:`arcnb.candidates`).

    Shown, it is a few lines (``repr``) or, in Jupyter, a short HTML summary.
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
    anytime: pd.DataFrame | None = None
    steps: pd.DataFrame | None = None
    confidence_reliability: pd.DataFrame | None = None

    def _lines(self) -> list[str]:
        s = self.summary
        lines = [f"{s['n_candidates']} distinct candidates from {s['n_samples']} samples, "
                 f"{s['n_tasks']} tasks, {s['n_outputs']} test outputs; vote ties "
                 f"{'at random' if s.get('tie') == 'random' else 'by first appearance'}",
                 f"coverage {fmt_number(s['coverage'], least=4)} "
                 f"{fmt_interval(*s['coverage_ci95'])}"]
        for rule, r in s["rankings"].items():
            lines.append(f"{rule}: pass@1 {fmt_number(r['pass@1'], least=4)}, pass@2 "
                         f"{fmt_number(r['pass@2'], least=4)}, selection gap "
                         f"{fmt_number(r['selection_gap'], least=4)}")
        if "voting_gain" in s:
            g = s["voting_gain"]
            lines.append(f"anytime ({s['anytime']['axis']}): pass@1 "
                         f"{fmt_number(g['pass@1_at_1'], least=4)} with 1 draw, "
                         f"{fmt_number(g['pass@1_at_n'], least=4)} with {g['n']}")
        return lines

    def __repr__(self) -> str:
        return "CandidateAnalysis(" + "\n  ".join(self._lines()) + ")"

    def _repr_html_(self) -> str:
        s = self.summary
        rows = pd.DataFrame([{"rule": rule, "pass@1": r["pass@1"], "pass@2": r["pass@2"],
                              "selection_gap": r["selection_gap"]}
                             for rule, r in s["rankings"].items()])
        lines = self._lines()
        return (note(lines[0] + "; " + lines[1] + ".")
                + html_table(rows, caption="per ranking rule (the analysis's summary, outputs, "
                                      "pool and pass_at_k hold the rest)")
                + ("".join(note(line + ".") for line in lines[len(rows) + 2:])))

    @property
    def rules(self) -> list[str]:
        """The ranking rules measured, ``order`` and ``votes`` first."""
        return list(self.summary["rankings"])

    def grids(self, task_id: str, test_index: int = 0, *, rule: str | None = None,
              with_checks: bool = False) -> list[tuple]:
        """The candidates of one output in rank order under ``rule`` (default: the
        first rule asked for): ``(grid, votes, correct)`` each, and with ``with_checks``
        a fourth value: whether it passes the demonstrations (None: not known)."""
        rule = rule or self.summary["rank_by"]
        p = self.pool[(self.pool["task_id"] == task_id) & (self.pool["test_index"] == test_index)]
        p = p.sort_values([f"rank_{rule}", "first"])
        items = [(self.candidate_set.grid(int(s)), int(v), bool(c))
                 for s, v, c in zip(p["sample"], p["votes"], p["correct"])]
        if not with_checks:
            return items
        passes = (p["passes_train"].to_numpy(float) if "passes_train" in p
                  else np.full(len(p), np.nan))
        return [(*it, None if x != x else bool(x)) for it, x in zip(items, passes)]

    def write(self, out: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write ``summary.json`` and the tables as CSV into the folder ``out`` through
        the guarded output folder (:class:`arcnb.runs.OutputFolder`: not inside arcnb's
        own folders, never through a link; the seven files (and ``anytime.csv``,
        ``steps.csv``, ``confidence_reliability.csv`` for a pool with those fields)
        written as one, atomically, by :func:`arcnb.runs.write_result_folder`; existing
        files are kept unless ``overwrite=True``)."""
        folder = OutputFolder(out)
        # the last three only for pools with those fields (None: left out)
        write_result_folder(folder, self.summary, {
            "outputs.csv": self.outputs, "candidates.csv": self.pool.drop(columns=["sample"]),
            "pass_at_k.csv": self.pass_at_k, "reliability.csv": self.reliability,
            "by_category.csv": self.by_category, "comparisons.csv": self.comparisons,
            "anytime.csv": self.anytime, "steps.csv": self.steps,
            "confidence_reliability.csv": self.confidence_reliability}, overwrite=overwrite)
        return folder.path


def _ci(values, n_boot: int, seed: int) -> list:
    return list(bootstrap_ci(values, n_boot=n_boot, seed=seed))


def _pass_at_k_table(rules, places, task_of, n_per_task, largest: int) -> pd.DataFrame:
    """pass@K per ranking rule, for K from 1 to the pool's largest K (``largest``: the
    most distinct candidates of an output; every K up to 50, then 40 steps on a log
    scale), where every rule reaches the coverage."""
    deepest = [int((a + t)[a != _ABSENT].max()) for a, t in places.values()
               if (a != _ABSENT).any()]
    max_rank = int(max([1, int(largest), *deepest]))
    ks = np.unique(np.r_[np.arange(1, min(max_rank, 50) + 1),
                         np.geomspace(1, max_rank, 40).round().astype(int)])
    rows = []
    for rule in rules:
        for k in ks:
            pt = _task_mean(_solved(places[rule], k), task_of, n_per_task)
            rows.append({"rule": rule, "K": int(k), "pass@K": float(pt.mean())})
    return pd.DataFrame(rows)


def _rule_comparisons(rules, rankings, per_task_pass2, solved2, n_boot, seed) -> pd.DataFrame:
    """Every pair of ranking rules: the paired bootstrap difference in pass@2 over tasks
    and the exact McNemar test on the outputs one rule solves and the other does not
    (``solved2``: per output the probability of a solve under the tie rule; the test
    counts the outputs both rules decide, that no tie leaves to chance, and
    ``n_tie_decided`` the others)."""
    rows = []
    for a_i, a in enumerate(rules):
        for b in rules[a_i + 1:]:
            diff, lo, hi = paired_bootstrap_ci(per_task_pass2[a], per_task_pass2[b],
                                               n_boot=n_boot, seed=seed)
            sa, sb = solved2[a], solved2[b]
            decided = ((sa == 0) | (sa == 1)) & ((sb == 0) | (sb == 1))
            mc = mcnemar_table(sa[decided] == 1, sb[decided] == 1)
            rows.append({"rule_a": a, "rule_b": b, "pass@2_a": rankings[a]["pass@2"],
                         "pass@2_b": rankings[b]["pass@2"], "difference": diff,
                         "ci_low": lo, "ci_high": hi, "n_a_only": mc["n_a_only"],
                         "n_b_only": mc["n_b_only"], "mcnemar_p": mc["p_value"],
                         "n_tie_decided": int((~decided).sum())})
    return pd.DataFrame(rows, columns=["rule_a", "rule_b", "pass@2_a", "pass@2_b", "difference",
                                       "ci_low", "ci_high", "n_a_only", "n_b_only",
                                       "mcnemar_p", "n_tie_decided"])


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


def _rank_of(*keys) -> np.ndarray:
    """The position of every element in the order of ``keys`` (most significant first);
    equal keys share a position."""
    if not keys[0].size:
        return np.zeros(0)
    order = np.lexsort(tuple(reversed(keys)))
    ks = np.stack([k[order] for k in keys])
    new = np.r_[True, (ks[:, 1:] != ks[:, :-1]).any(axis=0)]
    rank = np.empty(order.size, float)
    rank[order] = np.cumsum(new) - 1
    return rank


def _anytime_keys(pool: _Pool, rule: str, lower: frozenset, first_keys: list, tie: str):
    """``(cls, tie, votes_matter, random_ties)`` of ``rule`` for
    :func:`.anytime.anytime_curves`: the same keys as the whole pool's ranking
    (:func:`_ranks`), ties by ``first_keys`` or, for a rule that counts votes under
    random ties, left equal (tied)."""
    before, after = _rule_keys(pool, rule, lower)
    counts = _counts_votes(rule, pool)
    cls = -before[0] if (counts and before) else np.zeros(pool.out.size)
    rest = after if counts else before
    if counts and tie == "random":
        return cls, _rank_of(*rest, np.zeros(pool.out.size)), True, True
    return cls, _rank_of(*rest, *first_keys), counts, False


def _points(n_max, metrics: dict, bands: dict | None = None) -> list:
    pts = []
    for i in range(n_max):
        pt = {"n": i + 1, **{k: float(v[i]) for k, v in metrics.items()}}
        for k, (lo, hi) in (bands or {}).items():
            pt[f"{k}_ci95"] = [float(lo[i]), float(hi[i])]
        pts.append(pt)
    return pts


def _first_keys(pool: _Pool, cs: CandidateSet, axis):
    """The budget axis (the one asked for, else the first the draws carry; None: none)
    and the first-appearance keys of every candidate: its first draw along that axis,
    then its place in the listing (the ``first`` tie rule's order, and the listing order
    of every rule)."""
    draws = cs.draws
    present = [a for a in AXES if draws is not None and a in draws
               and np.isfinite(draws[a]).any()]
    if axis is not None and axis not in present:
        raise ParameterError(f"the pool's draws carry no {axis!r} values "
                             f"(they carry: {', '.join(present) or 'none'})")
    axis = axis or (present[0] if present else None)
    if axis is None:
        return None, present, [pool.first.astype(float)]
    d_cand = pool.cand_of_sample[draws["entry"]]
    ok = d_cand >= 0
    first_axis = np.full(pool.out.size, np.inf)
    ax = draws[axis][ok]
    np.minimum.at(first_axis, d_cand[ok], np.where(np.isnan(ax), np.inf, ax))
    return axis, present, [first_axis, pool.first.astype(float)]


def _budget_views(pool: _Pool, cs: CandidateSet, rules, lower, ranks, task_of, n_tasks,
                  axes, first_keys, tie, confidence, n_boot, seed, bins):
    """The anytime curves, refinement steps, verifier and confidence calibration of a
    pool with those fields: ``(summary keys, tables, warnings)``."""
    summary, tables, warnings = {}, {}, []
    draws = cs.draws
    axis, present = axes
    d_cand = pool.cand_of_sample[draws["entry"]] if draws is not None else None
    if axis is not None:
        rows, long = {}, []
        for rule in rules:
            cls, tkey, vm, rt = _anytime_keys(pool, rule, lower, first_keys, tie)
            (p1, p2, cov), too_big = anytime_curves(pool.out, pool.votes, pool.correct,
                                                     pool.n_out, pool.free, (cls, tkey),
                                                     votes_matter=vm, random_ties=rt)
            rows[rule] = {k: per_task(v, task_of, n_tasks)
                          for k, v in (("pass@1", p1), ("pass@2", p2), ("coverage", cov))}
        if too_big.size:
            warnings.append(f"{too_big.size} test outputs have more than {MAX_ANYTIME_DRAWS} "
                            "draws: the anytime curves count them as not solved")
        n_max = rows["votes"]["pass@1"].shape[1]
        for rule, r in rows.items():
            means = {k: v.mean(axis=0) for k, v in r.items()}
            bands = ({k: band(v, n_boot=n_boot, seed=seed) for k, v in r.items()}
                     if rule == "votes" else None)
            entry = {"axis": axis, "tie": tie if _counts_votes(rule, pool) else "first",
                     "points": _points(n_max, means, bands)}
            if rule == "votes":
                summary["anytime"] = entry
            else:
                summary.setdefault("anytime_by_rule", {})[rule] = entry
            table = pd.DataFrame({"rule": rule, "n": np.arange(1, n_max + 1), **means})
            for k, (lo, hi) in (bands or {}).items():
                table[f"{k}_ci_low"], table[f"{k}_ci_high"] = lo, hi
            long.append(table)
        tables["anytime"] = pd.concat(long, ignore_index=True)
        if n_max:
            t1 = rows["votes"]["pass@1"]
            diff, lo, hi = paired_bootstrap_ci(t1[:, 0], t1[:, -1], n_boot=n_boot, seed=seed)
            summary["voting_gain"] = {"n": n_max, "value": float(diff), "ci95": [lo, hi],
                                      "pass@1_at_1": float(t1[:, 0].mean()),
                                      "pass@1_at_n": float(t1[:, -1].mean())}
    step_axis = next((a for a in ("step", "iteration") if a in present), None)
    if step_axis is not None:
        ok = d_cand >= 0
        steps, right, answer = step_table(pool.out[d_cand[ok]], d_cand[ok], draws[step_axis][ok],
                                          draws["weight"][ok], pool.first[d_cand[ok]],
                                          pool.correct, pool.n_out)
        counts, table, stability, per_output = step_summary(steps, right, answer)
        summary.update({"step_axis": step_axis, "first_right_step": counts,
                        "stability": stability, "steps": table.to_dict(orient="records")})
        tables["steps"] = table
        tables["step_outputs"] = per_output
    if PASSES_TRAIN in pool.fields:
        summary["verifier"] = verifier(pool.out, pool.fields[PASSES_TRAIN], pool.correct,
                                       task_of, pool.n_out)
    if confidence is not None:
        vr = ranks[f"{VOTES_THEN}{confidence}"]
        top = vr.rank == 1  # tied top candidates share their votes and confidence
        right_top = _solved(_right_place(pool, vr), 1)[pool.out[top]]
        conf = pool.scores[confidence][top]
        has = np.isfinite(conf)
        raw_ok = bool(has.any() and conf[has].min() >= 0 and conf[has].max() <= 1)
        with np.errstate(over="ignore"):  # a logit: read through the sigmoid
            value = conf if raw_ok else 1.0 / (1.0 + np.exp(-conf))
        rel, cal = calibration(value[has], right_top[has],
                               task_of[pool.out[top]][has], bins=bins, n_boot=n_boot,
                               seed=seed)
        summary["confidence"] = {"score": confidence,
                                 "transform": "none" if raw_ok else "sigmoid",
                                 "n_outputs": int(has.sum()), **cal,
                                 "reliability": rel.to_dict(orient="records")}
        tables["confidence_reliability"] = rel
    return summary, tables, warnings


def _rules(cs: CandidateSet, rank_by, axis) -> tuple[list[str], str, str | None]:
    """The ranking rules measured (the built-in ones, those asked for, and those the pool's
    fields add), the one that ranks ``rank_of_correct``, and the pool's confidence
    score (None without one); an unknown rule or axis is refused."""
    rank_by = [rank_by] if isinstance(rank_by, str) else list(rank_by or [])
    available = (set(BUILTIN_RULES) | set(cs.scores)
                 | {f"{VOTES_THEN}{name}" for name in cs.scores}
                 | ({PASSES_TRAIN} if PASSES_TRAIN in cs.fields else set()))
    for rule in rank_by:
        if rule not in available:
            have = ", ".join(sorted(available))
            raise ParameterError(f"unknown ranking rule {rule!r}: this pool offers {have}")
    confidence = next((c for c in CONFIDENCE_SCORES if c in cs.scores), None)
    auto = ([PASSES_TRAIN] if PASSES_TRAIN in cs.fields else []) + (
        [f"{VOTES_THEN}{confidence}"] if confidence else [])
    if axis is not None and axis not in AXES:
        raise ParameterError(f"unknown axis {axis!r}: one of {', '.join(AXES)}")
    return (list(dict.fromkeys([*BUILTIN_RULES, *rank_by, *auto])),
            rank_by[0] if rank_by else "votes", confidence)


def _pool_warnings(n_distinct: np.ndarray, counts: dict, ds: Dataset, covered) -> list:
    """What to know about the pool: first, tasks of ``ds`` it has no candidate for
    (``covered``: the tasks it has; counted wrong, :func:`arcnb.scoring.missing_tasks_warning`),
    then a single distinct candidate everywhere, samples for outputs the dataset lacks."""
    warnings = [w for w in [missing_tasks_warning(ds, covered)] if w]
    if (n_distinct > 0).any() and n_distinct.max() == 1:
        warnings.append("every test output has a single distinct candidate: pass@K is the "
                        "same for every K, and ranking rules cannot differ")
    if counts["n_outside_dataset"]:
        warnings.append(f"{counts['n_outside_dataset']} samples are for tasks or test outputs "
                        "the dataset lacks: ignored")
    return warnings


def _rankings(pool: _Pool, rules, places, tie, cov_task, task_of, n_per_task, n_boot, seed):
    """Per rule: pass@1, pass@2 (the probability of a solve under the tie rule, per task
    then the mean), their intervals and per-output forms, the selection gap; and per
    rule the per-task pass@2 and the per-output probability of a solve."""
    rankings, per_task_pass2, solved2 = {}, {}, {}
    for rule in rules:
        entry = {"tie": tie} if _counts_votes(rule, pool) else {}
        for k in (1, 2):
            solved = _solved(places[rule], k)
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
    return rankings, per_task_pass2, solved2


def _tables(keys, pool: _Pool, rules, ranks, places, tie, per_output: dict):
    """The outputs table (``per_output`` columns, then per rule the right candidate's
    best rank and, under random ties, its tie group) and the pool table."""
    out_tid = [k[0] for k in keys]
    out_idx = [k[1] for k in keys]
    outputs = pd.DataFrame({"task_id": out_tid, "test_index": out_idx, **per_output})
    for rule in rules:
        ahead, tied = places[rule]
        absent = ahead == _ABSENT
        outputs[f"rank_{rule}"] = pd.array(np.where(absent, 0, ahead + 1), dtype="Int64")
        outputs.loc[absent, f"rank_{rule}"] = pd.NA
        if tie == "random" and _counts_votes(rule, pool):
            outputs[f"tied_{rule}"] = pd.array(np.where(absent, 0, tied), dtype="Int64")
            outputs.loc[absent, f"tied_{rule}"] = pd.NA
    tid_arr = np.asarray(out_tid, dtype=object)
    # every column at once (one insert per score column is quadratic); no score can
    # take a pool column's name (refused when read)
    pool_cols = {"task_id": tid_arr[pool.out], "test_index": np.asarray(out_idx)[pool.out],
                 "votes": pool.votes, "first": pool.first, "correct": pool.correct,
                 "sample": pool.src}
    pool_cols.update(pool.scores)
    pool_cols.update(pool.fields)
    pool_cols.update({f"rank_{rule}": ranks[rule].rank for rule in rules})
    return outputs, pd.DataFrame(pool_cols)


def _truth(ds: Dataset):
    """The dataset's test outputs in order: their ``(task id, index)`` keys, the index
    of each one's task, and their grids packed as ``(cells, offsets, heights, widths)``."""
    keys, task_of, truths = [], [], []
    for t, task in enumerate(ds):
        for i, pair in enumerate(task.test):
            keys.append((task.id, i))
            task_of.append(t)
            truths.append(pair.output)
    if not keys:
        raise ParameterError("the dataset has no test outputs to measure candidates against")
    tcells = np.concatenate([np.ascontiguousarray(g, np.int8).ravel() for g in truths])
    th = np.array([g.shape[0] for g in truths], np.int64)
    tw = np.array([g.shape[1] for g in truths], np.int64)
    toffs = np.zeros(len(keys) + 1, np.int64)
    np.cumsum(th * tw, out=toffs[1:])
    return keys, np.asarray(task_of, np.int64), (tcells, toffs, th, tw)


def candidates(dataset, predictions, *, tasks=None, rank_by: Sequence[str] | str | None = None,
               taxonomy="structural", bins: int = 10, n_boot: int = 1000,
               seed: int = 0, axis: str | None = None, tie: str = "random") -> CandidateAnalysis:
    """Measure a candidate pool against ``dataset``'s truth.

    ``predictions``: anything :func:`load_candidates` reads. ``rank_by``: extra ranking
    rules (``order`` and ``votes`` are always measured); the first one given ranks
    ``rank_of_correct`` (default ``votes``). ``taxonomy``: categories for
    ``by_category`` (``"structural"``, a taxonomy file, or None to skip). ``axis``: the
    budget axis of the anytime curves (default: the first of ``sample``, ``view``,
    ``step``, ``iteration`` the draws carry). A pool with ``passes_train`` adds the rule
    ``passes_train``; one with a confidence score (``q_halt``, else ``confidence``) the
    rule ``votes_then_<score>``. ``tie``: how the rules that count votes break ties
    (:data:`arcnb.voting.TIE_RULES`): ``"random"`` (uniformly at random; pass@K is then
    the exact expectation over the tie-breaking) or ``"first"`` (first appearance: the
    first draw along the budget axis, then the listing); the same rule in the whole
    pool's rankings and within the anytime curves' subsets.
    """
    n_boot, seed, tie = check_n_boot(n_boot), check_seed(seed), check_tie(tie)
    ds = load_dataset(dataset, tasks=tasks) if not isinstance(dataset, Dataset) else (
        dataset if tasks is None else load_dataset(dataset, tasks=tasks))
    cs = load_candidates(predictions, n_tests={t.id: len(t.test) for t in ds})
    rules, first_rule, confidence = _rules(cs, rank_by, axis)
    keys, task_of, truth = _truth(ds)
    n_out, n_tasks = len(keys), len(ds)
    n_per_task = np.bincount(task_of, minlength=n_tasks).astype(float)
    row_of_key = {k: r for r, k in enumerate(keys)}
    pool, counts = _distinct(cs, row_of_key, truth)

    covered = np.zeros(n_out, bool)
    covered[pool.out[pool.correct]] = True
    n_distinct = np.bincount(pool.out, minlength=n_out)
    # integer sums (votes are at most MAX_VOTES each: no sum can wrap, none is rounded)
    total_votes = np.zeros(n_out, np.int64)
    np.add.at(total_votes, pool.out, pool.votes)
    axis, present_axes, first_keys = _first_keys(pool, cs, axis)
    ranks = {rule: _ranks(pool, rule, cs.lower_is_better, first_keys, tie) for rule in rules}
    places = {rule: _right_place(pool, ranks[rule]) for rule in rules}

    cov_task = _task_mean(covered, task_of, n_per_task)
    out_per_task = np.bincount(task_of, weights=covered.astype(float), minlength=n_tasks)
    coverage = float(cov_task.mean())
    rankings, per_task_pass2, solved2 = _rankings(pool, rules, places, tie, cov_task, task_of,
                                                  n_per_task, n_boot, seed)
    rank_of_correct = _rank_counts(places[first_rule])

    # the top candidate under votes: its share of the output's votes (tied top
    # candidates share it) and whether it is right (its probability, under random ties)
    top = ranks["votes"].rank == 1
    has = n_distinct > 0
    share = np.full(n_out, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        share[pool.out[top]] = pool.votes[top] / total_votes[pool.out[top]]
    top_right = _solved(places["votes"], 1)
    voted = np.isfinite(share)  # outputs with candidates and at least one vote
    reliability, cal = calibration(share[voted], top_right[voted], task_of[voted], bins=bins,
                                   n_boot=n_boot, seed=seed)

    warnings = _pool_warnings(n_distinct, counts, ds, np.asarray(ds.task_ids)[task_of[has]])
    single_share, n_without = float((n_distinct == 1).mean()), int((~has).sum())
    ratio_lo, ratio_hi = ratio_bootstrap_ci(out_per_task, n_per_task, n_boot=n_boot, seed=seed,
                                            level=0.95)
    pass_at_k = _pass_at_k_table(rules, places, task_of, n_per_task,
                                 int(n_distinct.max()) if n_distinct.size else 1)
    comparisons = _rule_comparisons(rules, rankings, per_task_pass2, solved2, n_boot, seed)
    by_category = _by_category(ds, taxonomy, cov_task, per_task_pass2[first_rule], n_boot, seed)

    extra, extra_tables, extra_warnings = _budget_views(
        pool, cs, rules, cs.lower_is_better, ranks, task_of, n_tasks, (axis, present_axes),
        first_keys, tie, confidence, n_boot, seed, bins)
    warnings += extra_warnings

    outputs, pool_df = _tables(keys, pool, rules, ranks, places, tie, {
        "n_distinct": n_distinct, "n_votes": total_votes, "covered": covered,
        "top_vote_share": share, "top_correct": top_right})
    if "step_outputs" in extra_tables:
        outputs = pd.concat([outputs, extra_tables["step_outputs"]], axis=1)

    summary = {
        "dataset": ds.info, "source": cs.source, "format": cs.format,
        "n_tasks": n_tasks, "n_outputs": n_out,
        "n_outputs_without_candidates": n_without,
        "n_samples": counts["n_samples"], "n_invalid_attempts": counts["n_invalid"],
        "n_candidates": int(pool.out.size), "tie": tie,
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
        "warnings": warnings, "definitions": CANDIDATE_DEFINITIONS, **extra,
        "provenance": provenance_block(ds, estimator="ranked", tie=tie)}
    return CandidateAnalysis(summary, outputs, pool_df, pass_at_k, reliability, by_category,
                             comparisons, warnings, ds, cs, extra_tables.get("anytime"),
                             extra_tables.get("steps"),
                             extra_tables.get("confidence_reliability"))
