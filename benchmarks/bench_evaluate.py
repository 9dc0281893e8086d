#!/usr/bin/env python
"""Benchmark `arcnb evaluate` on ARC-AGI-1 evaluation (400 tasks, 419 test inputs).

For the bundled baseline and, as the in-run reference, the copy-input model (no
compute: it measures arcnb's own overhead - loading, padding, cropping, voting,
scoring, writing), under each augmentation mode, in a fresh process each:

* grids/s = model inputs (test inputs x views) / wall time of evaluate(), the
  fastest of ``--repeats`` runs in the process (the minimum is the least disturbed
  by other jobs on a shared machine);
* peak RSS of the process (MB) and its increase over the RSS after imports;
* ratio = the baseline's time / copy-input's time in the same mode;
* per stage (one more run of each, instrumented by ``benchmarks/_stages.py``): the
  model's forward passes and each arcnb stage around them (padding, views, decoding,
  voting, records, journal, scoring, writing, loading), and copy-input's *pure*
  forward passes (the same inputs, padded beforehand, through the model alone): the
  floor of any evaluation. ``overhead`` = evaluate's time / that floor.

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

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
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stages, total = staged_run(model, ds, augment, batch_size, device)
    print(json.dumps({"model": model, "augment": augment, "seconds": dt, "n_inputs": n_inputs,
                      "grids_per_s": n_inputs / dt, "pass@2": res.summary["pass@2"],
                      "peak_rss_mb": peak, "rss_after_imports_mb": rss0,
                      "staged_seconds": total, "stages": stages,
                      "pure_forward_s": pure_forward(ds, augment, batch_size, device)}))


def staged_run(model, ds, augment, batch_size, device):
    """One more evaluation, each stage timed: ``([(stage, seconds, share)], total)``."""
    from _stages import Stages

    from arcnb.evaluate import evaluate

    st = Stages(device).patch()
    try:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            evaluate(model, ds, os.path.join(d, "run"), augment=augment, batch_size=batch_size,
                     device=device, progress=False)
            total = time.perf_counter() - t0
    finally:
        st.restore()
    return st.table(total), total


def pure_forward(ds, augment, batch_size, device) -> float:
    """copy-input's forward passes alone over the evaluation's inputs (every view),
    padded on the device beforehand: the floor of any evaluation (best of 3)."""
    import torch

    from arcnb.augment import make_views
    from arcnb.models.baseline import CopyInput
    from arcnb.models.interface import pad_batch

    views = make_views(augment)
    xs = [v.apply(p.input) for t in ds for p in t.test for v in views]
    batches = [pad_batch(xs[a:a + batch_size], device=torch.device(device))
               for a in range(0, len(xs), batch_size)]
    model = CopyInput().to(device).eval()
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(3):
            sync()
            t0 = time.perf_counter()
            for x in batches:
                model(x)
            sync()
            best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu", help="where the model runs (cpu, cuda, cuda:N)")
    ap.add_argument("--modes", default=",".join(MODES),
                    help=f"comma-separated augmentation modes (default {','.join(MODES)})")
    ap.add_argument("--child", nargs=2, metavar=("MODEL", "AUGMENT"))
    args = ap.parse_args()
    if args.child:
        child(*args.child, args.batch_size, args.threads, args.repeats, args.device)
        return
    rows = []
    for augment in args.modes.split(","):
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
    print("\nper stage (one more run each; self times, ms):")
    for r in rows:
        floor = r["pure_forward_s"]
        print(f"  {r['model']} {r['augment']}: {r['staged_seconds']:.3f} s; copy-input's pure "
              f"forward {floor * 1e3:.1f} ms: overhead {r['staged_seconds'] / floor:.1f}x")
        for stage, sec, share in r["stages"]:
            if sec >= 0.0005 or stage.startswith("model"):
                print(f"    {stage:<34} {sec * 1e3:9.1f} ms {100 * share:6.1f} %")


if __name__ == "__main__":
    main()
