#!/usr/bin/env python
"""Benchmark `arcnb sweep`: its overhead over the sum of its evaluations.

Ten checkpoints of the bundled model's size (the bundled baseline's weights, each
scaled by its own small seeded noise, saved with a step by
``arcnb.models.save_checkpoint``) are evaluated on ARC-AGI-1 evaluation, in one process:

* baseline = the sum, over the checkpoints, of one ``evaluate()`` each into its own
  folder (the dataset loaded once and passed in, as the sweep does);
* sweep = ``arcnb.sweep.sweep()`` of the same checkpoints (reading the steps, the
  evaluations, the tables: sweep.csv with its bootstrap intervals, categories,
  gained/lost, the task x step matrix, the honest selection), without the page;
* page = one run of the sweep notebook (papermill + nbconvert) on the finished sweep,
  reported on its own: the target is sweep <= 1.10 x baseline, plus one page;
* per stage (``benchmarks/_stages.py``), for the separate evaluations and for the
  sweep: the models' forward passes and each arcnb stage around them (padding,
  decoding, voting, records, journal, scoring, writing, loading; the sweep's plan,
  tables and files), so the overhead shows where it is spent.

    python benchmarks/bench_sweep.py [--tasks 400] [--checkpoints 10] [--threads 2]
    python benchmarks/bench_sweep.py --device cuda --no-page   # the models on the GPU
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=400,
                    help="the first N tasks of ARC-AGI-1 evaluation (default all 400)")
    ap.add_argument("--checkpoints", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-page", action="store_true", help="skip the notebook run")
    ap.add_argument("--device", default="cpu", help="where the models run (cpu, cuda, cuda:N)")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from _stages import Stages

    from arcnb import sweep as S
    from arcnb.data import load_dataset
    from arcnb.evaluate import evaluate
    from arcnb.models import load_model, save_checkpoint

    ds = load_dataset("arc-agi-1:evaluation")
    ds = ds.select(ds.task_ids[: args.tasks])
    base = load_model("baseline").model
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        gen = torch.Generator().manual_seed(0)
        for k in range(args.checkpoints):
            with torch.no_grad():
                for p in base.parameters():
                    p.mul_(1 + 0.02 * torch.randn(p.shape, generator=gen))
            save_checkpoint(tmp / "ckpt" / f"model-{k}.pt", base, arch="demo-conv",
                            config={"hidden": 32, "blocks": 3, "prior": True},
                            step=1000 * (k + 1))
        ckpts = sorted((tmp / "ckpt").glob("*.pt"))
        # warm-up outside the timings (a GPU's context, the first model load)
        evaluate(str(ckpts[0]), ds.select(ds.task_ids[:2]), tmp / "warm-up", progress=False,
                 device=args.device)
        stages = Stages(args.device).patch()
        try:
            t0 = time.perf_counter()
            for c in ckpts:
                evaluate(str(c), ds, tmp / "separate" / c.stem, progress=False,
                         device=args.device)
            t_sum = time.perf_counter() - t0
            separate = stages.table(t_sum)
            stages.reset()
            t0 = time.perf_counter()
            sw = S.sweep([tmp / "ckpt"], ds, tmp / "sweep", report=False, progress=False,
                         device=args.device)
            t_sweep = time.perf_counter() - t0
            in_sweep = stages.table(t_sweep)
        finally:
            stages.restore()
        t_page = None
        if not args.no_page:
            t0 = time.perf_counter()
            sw.write(report=True)
            t_page = time.perf_counter() - t0
        print(json.dumps({"device": args.device, "n_checkpoints": len(ckpts), "n_tasks": len(ds),
                          "sum_of_evaluations_s": round(t_sum, 2),
                          "sweep_s": round(t_sweep, 2),
                          "overhead": round(t_sweep / t_sum - 1, 4),
                          "page_s": None if t_page is None else round(t_page, 2),
                          "stages_separate": separate, "stages_sweep": in_sweep}))
        print("per stage (self times; every stage waits for the device):")
        print(f"    {'stage':<34} {'separate':>11} {'sweep':>11} {'sweep %':>8}")
        sep = {k: v for k, v, _ in separate}
        for stage, sec, share in in_sweep:
            print(f"    {stage:<34} {sep.get(stage, 0.0) * 1e3:8.0f} ms {sec * 1e3:8.0f} ms "
                  f"{100 * share:7.1f}%")
        print(f"sweep of {len(ckpts)} checkpoints on {len(ds)} tasks: {t_sweep:.1f} s against "
              f"{t_sum:.1f} s for the evaluations alone: overhead "
              f"{100 * (t_sweep / t_sum - 1):+.1f}% (target <= +10%)"
              + ("" if t_page is None else f"; the page (one notebook run): {t_page:.1f} s"))


if __name__ == "__main__":
    main()
