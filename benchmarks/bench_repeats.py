"""Benchmark: many runs analysed with ``arcnb.repeats.analyse`` against a naive per-task
loop, in the same run.

The runs: 50 runs in 5 configurations of 10 on the 400 ARC-AGI-1 evaluation tasks (their
419 test outputs), each output solved with a probability drawn per task and scaled per run
(seed 0), with three graded metrics and one ensemble per configuration and of all runs.
Timed: every number of the analysis (per configuration the mean, SD, the two-level
interval with 1,000 resamples, the single-run interval, flips, the variance split, the
graded metrics with their two-level intervals; every comparison with its interval and
paired test; the winner's curse over 1,000 halves; union coverage for every number of
runs; unique solves; the ensembles and the one chosen on 1,000 public halves). The baseline computes
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


def _time(runs: int = 50, per_config: int = 10, slice_: int = 20) -> dict:
    ds = load_dataset("arc-agi-1:evaluation")
    ids = [t.id for t in ds]
    codes = np.array([i for i, t in enumerate(ds) for _ in t.test])
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 0.7, size=len(ids))[codes]
    m = rng.uniform(0.6, 1.4, size=runs)
    solved = (rng.random((codes.size, runs)) < np.clip(p[:, None] * m, 0, 1)).astype(float)
    names = [f"run{r}" for r in range(runs)]
    configs = [f"config{r // per_config}" for r in range(runs)]

    # graded metrics per output x run (cell accuracy NaN where the shape is wrong) and
    # one vote ensemble per configuration plus all runs (0/1 per output)
    shape = (rng.random(solved.shape) < 0.7).astype(float)
    graded = {"shape_accuracy": shape,
              "cell_accuracy": np.where(shape > 0, np.maximum(solved, rng.random(solved.shape)),
                                        np.nan),
              "partial_credit": np.maximum(solved, rng.random(solved.shape) * 0.8)}
    names_c = list(dict.fromkeys(configs))
    ensembles = {c: solved[:, [r for r in range(runs) if configs[r] == c]].max(axis=1)
                 for c in names_c}
    ensembles["all"] = solved.max(axis=1)

    t0 = time.perf_counter()
    rep = analyse(solved, codes, ids, names, configs, n_boot=1000, seed=0, n_splits=1000,
                  graded=graded, ensembles=ensembles)
    fast = time.perf_counter() - t0

    # naive: per resample, per task, per drawn run (the two-level intervals only)
    P = np.zeros((len(ids), runs))
    for t in range(len(ids)):
        P[t] = solved[codes == t].mean(axis=0)
    t0 = time.perf_counter()
    ti = bootstrap_indices(len(ids), n_boot=slice_, seed=0)
    n_cfg = len(set(configs))
    for k in range(n_cfg):
        cols = [r for r in range(runs) if configs[r] == f"config{k}"]
        ri = bootstrap_indices(len(cols), n_boot=slice_, seed=1 + k)
        for b in range(slice_):
            total = 0.0
            for t in ti[b]:
                for r in ri[b]:
                    total += P[t, cols[r]]
    naive = (time.perf_counter() - t0) * 1000 / slice_
    return {"runs": runs, "tasks": len(ids), "outputs": int(codes.size), "configs": n_cfg,
            "fast": fast, "naive": naive, "slice": slice_,
            "union": rep.summary["union"]["pass@2"]}


def measure(runs: int = 50, per_config: int = 10, slice_: int = 20):
    """One run of the benchmark as a figure (the two times) and its numbers."""
    from arcnb import plot as PL

    r = _time(runs, per_config, slice_)
    with PL.paper_style():
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=PL.figsize("column", 0.55))
        labels = ["arcnb.repeats\n(every number)", "naive loop\n(two-level intervals only)"]
        ax.barh(labels, [r["fast"], r["naive"]], color=["#1f77b4", "#aaaaaa"])
        ax.set_xlabel("time (s)")
        for y, v in enumerate((r["fast"], r["naive"])):
            ax.text(v, y, f" {v:.1f} s", va="center", fontsize="small")
        ax.set_title(f"{r['runs']} runs x {r['tasks']} tasks, 1,000 resamples",
                     fontsize="small")
        ax.set_xlim(0, max(r["naive"], r["fast"]) * 1.3)
    return fig, r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--per-config", type=int, default=10)
    ap.add_argument("--slice", type=int, default=20, help="resamples the naive loop runs")
    args = ap.parse_args()
    r = _time(args.runs, args.per_config, args.slice)
    print(f"{r['runs']} runs x {r['tasks']} tasks ({r['outputs']} test outputs), "
          f"{r['configs']} configurations, 1,000 resamples")
    print(f"arcnb.repeats.analyse (every number): {r['fast']:.2f} s")
    print(f"naive loop (the two-level intervals only, extrapolated from {r['slice']} "
          f"resamples): {r['naive']:.1f} s  ({r['naive'] / r['fast']:.0f}x)")
    print(f"union pass@2 of all runs: {r['union']:.4f}")


if __name__ == "__main__":
    main()
