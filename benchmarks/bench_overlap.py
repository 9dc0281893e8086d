"""Benchmark: ``arcnb overlap`` of ARC-AGI-1 evaluation against ARC-AGI-1 training plus
ARC-AGI-2 training (with the equivalence up to rotations, mirrors and colours), cold,
against a naive pairwise check on a slice, in the same run.

Cold: a fresh ``python -m arcnb overlap ... --json`` process, so the time holds the
interpreter start, the imports, loading and validating the three datasets (about 7800
pairs) and the canonical keys of every pair. The wall time and the CPU time of the
process (user + system, from ``resource.getrusage``) are printed with the load
average, since the wall time on a shared machine grows with the load.

The naive check compares each evaluation test output with every training pair (train
and test pairs of all 1400 training tasks): for each of the 8 dihedral transforms it
derives the colour map the cells force and checks that it is one-to-one and keeps 0.
It runs on the first ``--slice`` test outputs; its time is scaled to all 419 outputs
(it grows linearly with them) and the script prints the ratio to the cold command.
The two answers on the slice are compared.

    .venv/bin/python benchmarks/bench_overlap.py [--slice 10]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from arcnb.augment import dihedral
from arcnb.data import load_dataset

ROOT = Path(__file__).resolve().parents[1]
EVAL = "arc-agi-1:evaluation"
TRAIN = ("arc-agi-1:training", "arc-agi-2:training")


def cold_command() -> tuple[float, float, dict]:
    """Wall and CPU seconds of a fresh ``arcnb overlap --json`` process, its summary."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "arcnb", "overlap", EVAL, "--train", *TRAIN,
                        "--json"], capture_output=True, text=True, cwd=ROOT, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(p.stdout)


def naive_equivalent(a, b, c, d) -> bool:
    """(c, d) is (P(D(a)), P(D(b))) for a dihedral D and a permutation P of 1-9."""
    for t in range(8):
        da, db = dihedral(a, t), dihedral(b, t)
        if da.shape != c.shape or db.shape != d.shape:
            continue
        src = np.concatenate([da.ravel(), db.ravel()]).tolist()
        dst = np.concatenate([c.ravel(), d.ravel()]).tolist()
        fwd, back = {}, {}
        if all(fwd.setdefault(x, y) == y and back.setdefault(y, x) == x
               for x, y in zip(src, dst)) and fwd.get(0, 0) == 0 and back.get(0, 0) == 0:
            return True
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slice", type=int, default=10, help="test outputs for the naive check")
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    wall, cpu, summary = cold_command()
    print(f"arcnb overlap {EVAL} --train {' '.join(TRAIN)} (cold, equivalence on): "
          f"{wall:.2f} s wall, {cpu:.2f} s CPU")
    print(f"  {summary['outputs_equivalent']}/{summary['n_outputs']} test outputs equivalent, "
          f"{summary['outputs_exact']} exact, {summary['outputs_input_seen']} inputs seen; "
          f"{summary['n_train_pairs']} training pairs")

    ev = load_dataset(EVAL)
    pool = [p for name in TRAIN for t in load_dataset(name) for p in t.train + t.test]
    outputs = [(t.id, i, p) for t in ev for i, p in enumerate(t.test)][:args.slice]
    t0 = time.perf_counter()
    naive = [any(naive_equivalent(p.input, p.output, q.input, q.output) for q in pool)
             for _, _, p in outputs]
    naive_s = time.perf_counter() - t0
    full = naive_s * summary["n_outputs"] / len(outputs)
    from arcnb.overlap import overlap

    ov = overlap(EVAL, list(TRAIN), tasks=sorted({tid for tid, _, _ in outputs}))
    fast = ov.outputs.set_index(["task_id", "test_index"])["equivalent"]
    agree = all(bool(fast[(tid, i)]) == n for (tid, i, _), n in zip(outputs, naive))
    print(f"naive pairwise check: {naive_s:.2f} s for {len(outputs)} test outputs x "
          f"{len(pool)} training pairs -> {full:.0f} s for all {summary['n_outputs']} "
          f"(scaled); the cold command is {full / wall:.0f}x faster (wall)")
    print(f"answers on the slice agree: {agree}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
