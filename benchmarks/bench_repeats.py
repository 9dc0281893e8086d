"""Benchmark: many runs analysed with ``arcnb.repeats.analyse`` against a naive per-task
loop, in the same run.

The runs: 50 runs in 5 configurations of 10 on the 400 ARC-AGI-1 evaluation tasks (their
419 test outputs), each output solved with a probability drawn per task and scaled per run
(seed 0). Timed: every number of the analysis (per configuration the mean, SD, the
two-level interval with 1,000 resamples, the single-run interval, flips, the variance
split; every comparison with its interval and paired test; the winner's curse over 1,000
halves; union coverage for every number of runs; unique solves). The baseline computes
the two-level intervals alone the naive way, one resample and one task at a time; it runs
a slice of the resamples and is extrapolated. The script prints both times and their
ratio.

    .venv/bin/python benchmarks/bench_repeats.py [--runs 50] [--slice 20]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from arcnb.data import load_dataset
from arcnb.repeats import analyse
from arcnb.stats import bootstrap_indices


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--per-config", type=int, default=10)
    ap.add_argument("--slice", type=int, default=20, help="resamples the naive loop runs")
    args = ap.parse_args()
    ds = load_dataset("arc-agi-1:evaluation")
    ids = [t.id for t in ds]
    codes = np.array([i for i, t in enumerate(ds) for _ in t.test])
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 0.7, size=len(ids))[codes]
    m = rng.uniform(0.6, 1.4, size=args.runs)
    solved = (rng.random((codes.size, args.runs)) < np.clip(p[:, None] * m, 0, 1)).astype(float)
    names = [f"run{r}" for r in range(args.runs)]
    configs = [f"config{r // args.per_config}" for r in range(args.runs)]

    t0 = time.perf_counter()
    rep = analyse(solved, codes, ids, names, configs, n_boot=1000, seed=0, n_splits=1000)
    fast = time.perf_counter() - t0

    # naive: per resample, per task, per drawn run (the two-level intervals only)
    P = np.zeros((len(ids), args.runs))
    for t in range(len(ids)):
        P[t] = solved[codes == t].mean(axis=0)
    t0 = time.perf_counter()
    ti = bootstrap_indices(len(ids), n_boot=args.slice, seed=0)
    n_cfg = len(set(configs))
    for k in range(n_cfg):
        cols = [r for r in range(args.runs) if configs[r] == f"config{k}"]
        ri = bootstrap_indices(len(cols), n_boot=args.slice, seed=1 + k)
        for b in range(args.slice):
            total = 0.0
            for t in ti[b]:
                for r in ri[b]:
                    total += P[t, cols[r]]
    naive = (time.perf_counter() - t0) * 1000 / args.slice
    print(f"{args.runs} runs x {len(ids)} tasks ({codes.size} test outputs), "
          f"{n_cfg} configurations, 1,000 resamples")
    print(f"arcnb.repeats.analyse (every number): {fast:.2f} s")
    print(f"naive loop (the two-level intervals only, extrapolated from {args.slice} "
          f"resamples): {naive:.1f} s  ({naive / fast:.0f}x)")
    print(f"union pass@2 of all runs: {rep.summary['union']['pass@2']:.4f}")


if __name__ == "__main__":
    main()
