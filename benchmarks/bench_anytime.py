"""Benchmark: the anytime curve of a large candidate pool (pass@1, pass@2 and coverage
for every budget n = 1 ... 1,000, the exact expectation over subsets of n draws, with the
bootstrap band over tasks) against a naive loop over random subsets, in the same run.

The pool: 400 tasks with one test output each and 1,000 draws per output (400,000
draws). Each output's draws (seed 0) come from 25 distinct grids with
Dirichlet(0.3)-distributed probabilities, the right one among them for three outputs in
four (as in ``bench_candidates.py``), so large vote counts, ties and absent answers all
occur.

Timed: what ``arcnb.candidates`` does for the curve of the rule ``votes`` once the
grids are merged: the exact curves of every output (``anytime_curves``), the mean per
task and the 95 % percentile bootstrap band over tasks (1,000 resamples), with ties
broken uniformly at random (the default) and, beside it, by first appearance. The
baseline estimates the random-tie curve the naive way: for every n, ``--subsets``
random subsets of n draws, votes counted with ``numpy.bincount``, ties split by a
random order; it
runs on ``--slice`` tasks and is extrapolated to the 400 by the number of tasks. The
script prints both times, their ratio, and the largest difference between the naive
estimate and the exact curve on the slice (the naive one is an estimate: it differs by
its sampling noise).

    .venv/bin/python benchmarks/bench_anytime.py [--draws 1000] [--slice 4] [--subsets 100]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from arcnb.candidates.anytime import anytime_curves, band, per_task

N_TASKS, N_GRIDS = 400, 25


def make_pool(draws: int, rng):
    """Per task: the draws' grid labels in draw order and the right label (-1: none)."""
    pool = []
    for _ in range(N_TASKS):
        labels = rng.choice(N_GRIDS, size=draws, p=rng.dirichlet(np.full(N_GRIDS, 0.3)))
        right = int(rng.integers(N_GRIDS)) if rng.random() < 0.75 else -1
        pool.append((labels, right))
    return pool


def distinct(pool):
    """The distinct grids as ``arcnb.candidates`` holds them: output, votes, right, and
    the tie order (first appearance)."""
    out, votes, correct, tie = [], [], [], []
    for o, (labels, right) in enumerate(pool):
        m = np.bincount(labels, minlength=N_GRIDS)
        first = np.full(N_GRIDS, labels.size)
        np.minimum.at(first, labels, np.arange(labels.size))
        for g in np.flatnonzero(m):
            out.append(o)
            votes.append(m[g])
            correct.append(g == right)
            tie.append(first[g])
    return (np.array(out), np.array(votes, np.int64), np.array(correct),
            np.array(tie, float))


def curve(pool, n_boot: int = 1000, random_ties: bool = True):
    out, votes, correct, tie = distinct(pool)
    (p1, p2, cov), _ = anytime_curves(out, votes, correct, len(pool),
                                      np.zeros(len(pool), np.int64),
                                      (np.zeros(out.size),
                                       np.zeros(out.size) if random_ties else tie),
                                      random_ties=random_ties)
    task_of = np.arange(len(pool))
    rows = {k: per_task(v, task_of, len(pool)) for k, v in
            (("pass@1", p1), ("pass@2", p2), ("coverage", cov))}
    bands = {k: band(v, n_boot=n_boot, seed=0) for k, v in rows.items()}
    return {k: v.mean(axis=0) for k, v in rows.items()}, bands


def naive(pool, subsets: int, rng):
    """For every n: the mean over ``subsets`` random subsets of n draws."""
    n_max = max(labels.size for labels, _ in pool)
    res = np.zeros((3, n_max))
    for labels, right in pool:
        for n in range(1, n_max + 1):
            a = b = c = 0
            for _ in range(subsets):
                sub = labels[rng.choice(labels.size, size=min(n, labels.size), replace=False)]
                counts = np.bincount(sub, minlength=N_GRIDS)
                present = np.flatnonzero(counts)
                ranked = present[np.lexsort((rng.random(present.size), -counts[present]))]
                a += right >= 0 and ranked[0] == right
                b += right >= 0 and right in ranked[:2]
                c += right >= 0 and counts[right] > 0
            res[:, n - 1] += np.array([a, b, c]) / subsets
    return res / len(pool)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=1000, help="draws per test output")
    ap.add_argument("--slice", type=int, default=4, help="tasks the naive loop runs on")
    ap.add_argument("--subsets", type=int, default=100,
                    help="random subsets per budget in the naive loop")
    args = ap.parse_args()
    pool = make_pool(args.draws, np.random.default_rng(0))
    t0 = time.perf_counter()
    means, _ = curve(pool)
    t_exact = time.perf_counter() - t0
    t0 = time.perf_counter()
    curve(pool, random_ties=False)
    t_first = time.perf_counter() - t0
    part = pool[:args.slice]
    t0 = time.perf_counter()
    est = naive(part, args.subsets, np.random.default_rng(1))
    t_slice = time.perf_counter() - t0
    t_naive = t_slice * len(pool) / len(part)
    exact_part, _ = curve(part, n_boot=10)
    gap = max(float(np.abs(est[j] - exact_part[k]).max())
              for j, k in enumerate(("pass@1", "pass@2", "coverage")))
    n = args.draws
    print(f"pool: {len(pool)} tasks x {n} draws ({len(pool) * n:,} draws), {N_GRIDS} grids "
          "per output")
    print(f"at n=1 / 10 / 100 / {n}: pass@1 " + " / ".join(
        f"{means['pass@1'][i - 1]:.4f}" for i in (1, 10, 100, n))
        + f", coverage {means['coverage'][0]:.4f} / {means['coverage'][n - 1]:.4f} (n=1 / {n})")
    print(f"exact anytime curve (n = 1 ... {n}, pass@1, pass@2, coverage, bootstrap band), "
          f"random ties: {t_exact:.2f} s; ties by first appearance: {t_first:.2f} s")
    print(f"naive loop ({args.subsets} random subsets per n): {t_slice:.2f} s on "
          f"{len(part)} tasks, {t_naive:.0f} s extrapolated to {len(pool)}; largest "
          f"difference from the exact curve on those tasks: {gap:.3f}")
    print(f"ratio (naive / exact): {t_naive / t_exact:.0f}x")


if __name__ == "__main__":
    main()
