#!/usr/bin/env python
"""Benchmark `arcnb evaluate` on ARC-AGI-1 evaluation (400 tasks, 419 test inputs).

For the bundled baseline and, as the in-run reference, the copy-input model (no
compute: it measures arcnb's own overhead - loading, padding, cropping, voting,
scoring, writing), under each augmentation mode, in a fresh process each:

* grids/s = model inputs (test inputs x views) / wall time of evaluate(), the
  fastest of ``--repeats`` runs in the process (the minimum is the least disturbed
  by other jobs on a shared machine);
* peak RSS of the process (MB) and its increase over the RSS after imports;
* ratio = the baseline's time / copy-input's time in the same mode.

    python benchmarks/bench_evaluate.py [--threads 2] [--batch-size 64] [--repeats 3]
    python benchmarks/bench_evaluate.py --device cuda      # the model on the GPU
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

MODES = ("none", "dihedral", "dihedral+colors")


def child(model: str, augment: str, batch_size: int, threads: int, repeats: int,
          device: str) -> None:
    import torch

    torch.set_num_threads(threads)
    from arcnb.data import load_dataset
    from arcnb.evaluate import evaluate

    ds = load_dataset("arc-agi-1:evaluation")
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    times = []
    for rep in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            res = evaluate(model, ds, os.path.join(d, "run"), augment=augment,
                           batch_size=batch_size, device=device, progress=False)
            times.append(time.perf_counter() - t0)
    dt = min(times)
    n_views = int(res.votes["n_views"].iloc[0])
    n_inputs = ds.n_outputs * n_views
    print(json.dumps({"model": model, "augment": augment, "seconds": dt, "n_inputs": n_inputs,
                      "grids_per_s": n_inputs / dt, "pass@2": res.summary["pass@2"],
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "rss_after_imports_mb": rss0}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu", help="where the model runs (cpu, cuda, cuda:N)")
    ap.add_argument("--child", nargs=2, metavar=("MODEL", "AUGMENT"))
    args = ap.parse_args()
    if args.child:
        child(*args.child, args.batch_size, args.threads, args.repeats, args.device)
        return
    rows = []
    for augment in MODES:
        for model in ("copy-input", "baseline"):
            out = subprocess.run([sys.executable, __file__, "--child", model, augment,
                                  "--batch-size", str(args.batch_size), "--threads",
                                  str(args.threads), "--repeats", str(args.repeats),
                                  "--device", args.device],
                                 capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"arcnb evaluate on arc-agi-1:evaluation (419 test inputs), {args.device}, "
          f"{args.threads} CPU threads, batch size {args.batch_size}, best of {args.repeats}")
    print(f"{'model':<11} {'augment':<16} {'inputs':>6} {'seconds':>8} {'grids/s':>8} "
          f"{'x copy':>7} {'peak MB':>8} {'+MB':>6} {'pass@2':>7}")
    ref = {r["augment"]: r["seconds"] for r in rows if r["model"] == "copy-input"}
    for r in rows:
        print(f"{r['model']:<11} {r['augment']:<16} {r['n_inputs']:>6} {r['seconds']:>8.2f} "
              f"{r['grids_per_s']:>8.0f} {r['seconds'] / ref[r['augment']]:>7.2f} "
              f"{r['peak_rss_mb']:>8.0f} {r['peak_rss_mb'] - r['rss_after_imports_mb']:>6.0f} "
              f"{r['pass@2']:>7.4f}")


if __name__ == "__main__":
    main()
