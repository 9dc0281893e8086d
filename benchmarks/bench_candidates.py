"""Benchmark: analysing a large candidate pool with ``arcnb.candidates`` against a naive
per-grid loop, in the same run.

The pool: the 400 ARC-AGI-1 evaluation tasks (419 test outputs), 1,000 sampled attempts
per test output (419,000 grids), written as a candidates Parquet file. Each output's
samples (seed 0) are drawn from 25 distinct grids, the truth and 24 copies of it with a
few cells changed (one output in four without the truth), with Dirichlet-distributed
probabilities, so votes, ties and absent answers all occur.

Timed (in a fresh process, so its peak memory is its own): read the Parquet file and run
``arcnb.candidates`` (hash every grid, merge identical ones, rank under ``order`` and
``votes``, coverage, pass@K, rank of the right candidate, calibration with its bootstrap
interval, by-category table). The baseline does the core of that work the naive way: per
output, every sample is compared with every distinct grid seen so far
(``numpy.array_equal`` in a Python loop), votes are counted, the right one looked up;
it runs on a slice of the outputs and is extrapolated to the whole pool by the number of
samples. The script prints both times, their ratio and the peak resident memory.

    .venv/bin/python benchmarks/bench_candidates.py [--samples 1000] [--slice 20]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from arcnb.candidates import FORMAT_KEY
from arcnb.data import load_dataset

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from arcnb.candidates import candidates
from arcnb.data import load_dataset
ds = load_dataset("arc-agi-1:evaluation")
t1 = time.perf_counter()
a = candidates(ds, sys.argv[1])
t2 = time.perf_counter()
print(json.dumps({"load_dataset_s": t1 - t0, "analyse_s": t2 - t1,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "coverage": a.summary["coverage"], "n_candidates": a.summary["n_candidates"],
                  "n_samples": a.summary["n_samples"]}))
"""


def make_pool(ds, samples: int, rng):
    """Per output: (truth, distinct grids, sample indices into them)."""
    out = []
    for t in ds:
        for i, p in enumerate(t.test):
            truth = p.output
            distinct = []
            for _ in range(24):
                g = truth.copy()
                n = int(rng.integers(1, 4))
                r = rng.integers(0, g.shape[0], n)
                c = rng.integers(0, g.shape[1], n)
                g[r, c] = (g[r, c] + rng.integers(1, 10, n)) % 10
                distinct.append(g)
            if rng.random() > 0.25:
                distinct.insert(int(rng.integers(0, 25)), truth)
            probs = rng.dirichlet(np.full(len(distinct), 0.3))
            idx = rng.choice(len(distinct), size=samples, p=probs)
            out.append((t.id, i, truth, distinct, idx))
    return out


def write_parquet(pool, path: Path) -> int:
    tids, tix, hs, ws, cells = [], [], [], [], []
    for tid, i, _, distinct, idx in pool:
        blobs = [g.astype(np.int8).tobytes() for g in distinct]
        tids += [tid] * idx.size
        tix.append(np.full(idx.size, i, np.int32))
        hs.append(np.array([distinct[j].shape[0] for j in idx], np.int16))
        ws.append(np.array([distinct[j].shape[1] for j in idx], np.int16))
        cells += [blobs[j] for j in idx]
    table = pa.table({"task_id": pa.array(tids, pa.string()),
                      "test_index": pa.array(np.concatenate(tix)),
                      "height": pa.array(np.concatenate(hs)),
                      "width": pa.array(np.concatenate(ws)),
                      "cells": pa.array(cells, pa.binary())})
    table = table.replace_schema_metadata({FORMAT_KEY: json.dumps({"version": 1})})
    pq.write_table(table, path)
    return table.num_rows


def naive(pool) -> tuple[int, int]:
    """Per-grid loop: merge identical grids by pairwise comparison, count votes, find
    the right one. Returns (outputs covered, outputs whose top-voted grid is right)."""
    covered = top = 0
    for _, _, truth, distinct, idx in pool:
        seen, votes = [], []
        for j in idx:
            g = distinct[j]
            for k, s in enumerate(seen):
                if s.shape == g.shape and np.array_equal(s, g):
                    votes[k] += 1
                    break
            else:
                seen.append(g)
                votes.append(1)
        right = [k for k, s in enumerate(seen) if s.shape == truth.shape
                 and np.array_equal(s, truth)]
        covered += bool(right)
        top += bool(right) and votes[right[0]] == max(votes)
    return covered, top


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1000, help="attempts per test output")
    ap.add_argument("--slice", type=int, default=20, help="outputs the naive loop runs on")
    args = ap.parse_args()
    ds = load_dataset("arc-agi-1:evaluation")
    pool = make_pool(ds, args.samples, np.random.default_rng(0))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "candidates.parquet"
        n = write_parquet(pool, path)
        size_mb = path.stat().st_size / 2 ** 20
        child = subprocess.run([sys.executable, "-c", CHILD, str(path)], check=True,
                               capture_output=True, text=True)
        res = json.loads(child.stdout.strip().splitlines()[-1])
    part = pool[:args.slice]
    t0 = time.perf_counter()
    naive(part)
    t_slice = time.perf_counter() - t0
    n_part = sum(p[4].size for p in part)
    t_naive = t_slice * n / n_part
    print(f"pool: {len(ds)} tasks, {len(pool)} test outputs, {n:,} grids "
          f"({args.samples} per output), Parquet {size_mb:.1f} MB; "
          f"{res['n_candidates']:,} distinct candidates")
    print(f"arcnb.candidates (read + analyse): {res['analyse_s']:.2f} s "
          f"(dataset load {res['load_dataset_s']:.2f} s), peak memory "
          f"{res['peak_rss_mb']:.0f} MB")
    print(f"naive per-grid loop: {t_slice:.2f} s on {n_part:,} grids, "
          f"{t_naive:.1f} s extrapolated to {n:,}")
    print(f"ratio (naive / arcnb): {t_naive / res['analyse_s']:.1f}x")


if __name__ == "__main__":
    main()
