"""The simulation behind the test and the intervals of ``arcnb repeats``: the before /
after table of docs/guide/repeats.md.

Two configurations A and B run on 80 tasks drawn afresh in every experiment. A task's
difficulty is drawn on the logit scale (normal, mean -1, SD 2: about a third of the
tasks solved, many never or always); a run's seed shifts every task of that run by one
draw (normal, SD 0, 0.5 or 1 on the logit scale); each run solves each task with
probability ``expit(difficulty + seed shift [+ effect for B])``. Under the null A and B
are the same model. Per scenario (seed SD, runs per configuration) the table gives, over
the experiments:

* ``p < 0.05``: how often the comparison's p-value is below 0.05 (5 % is right);
* ``diff covers``: how often the 95 % interval of the difference covers the true
  difference (95 % is right);
* ``mean covers``: how often the 95 % interval of A's mean covers A's true mean (the
  expectation over tasks and seeds; 95 % is right);
* ``power``: with a real effect (+0.5 on the logit scale for B: about +0.07 in pass@2),
  how often p < 0.05.

``OLD`` is the method of commit 0072c5e (a paired sign-flip permutation test over tasks,
the two-level percentile bootstrap over tasks then runs), read from git and run exactly
as its ``analyse`` ran it (1,000 resamples); ``NEW`` is :mod:`arcnb.repeats.inference`,
the functions ``arcnb repeats`` calls, on every experiment at once. The Monte Carlo
error of a rate near 5 % over ``E`` experiments is ``sqrt(0.05 * 0.95 / E)``.

    PYTHONPATH=. .venv/bin/python scripts/repeats_simulation.py [--experiments 2000]
        [--old-experiments 1000] [--seed 0]
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from arcnb.repeats.inference import compare, config_interval

ROOT = Path(__file__).resolve().parents[1]
OLD_COMMIT = "0072c5e"
N_TASKS = 80
MU, TASK_SD, EFFECT = -1.0, 2.0, 0.5


def expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def true_mean(mu: float, sd: float) -> float:
    """E[expit(N(mu, sd^2))] by Gauss-Hermite quadrature."""
    x, w = np.polynomial.hermite_e.hermegauss(120)
    return float((w * expit(mu + sd * x)).sum() / w.sum())


def simulate(rng, n_exp: int, n_runs: int, seed_sd: float, effect: float = 0.0):
    """``[experiments, tasks, runs]`` pass@2 (0/1) of A and of B."""
    theta = rng.normal(MU, TASK_SD, (n_exp, N_TASKS, 1))
    out = []
    for shift in (0.0, effect):
        u = rng.normal(0.0, seed_sd, (n_exp, 1, n_runs)) if seed_sd else 0.0
        out.append((rng.random((n_exp, N_TASKS, n_runs))
                    < expit(theta + shift + u)).astype(float))
    return out


def truths(seed_sd: float, effect: float) -> tuple[float, float]:
    sd = float(np.hypot(TASK_SD, seed_sd))
    a = true_mean(MU, sd)
    return a, true_mean(MU + effect, sd) - a


def new_method(A, B):
    c, m = compare(A, B), config_interval(A)
    return c["p"], c["low"], c["high"], m["low"], m["high"]


def old_module():
    """The ``arcnb.repeats`` of :data:`OLD_COMMIT`, loaded beside today's (its relative
    imports read today's ``arcnb``; the parts it uses did not change)."""
    src = subprocess.run(["git", "show", f"{OLD_COMMIT}:arcnb/repeats/__init__.py"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    name = "arcnb.repeats._old"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "arcnb.repeats"
    sys.modules[name] = mod
    exec(compile(src, f"{OLD_COMMIT}:arcnb/repeats/__init__.py", "exec"), mod.__dict__)
    return mod


def old_method(old, A, B, n_boot: int = 1000):
    """The old ``analyse``'s comparison and configuration interval, experiment by
    experiment (the seed of each experiment is its index, as ``--seed`` would be)."""
    rows = []
    for e in range(A.shape[0]):
        Pa, Pb = A[e], B[e]
        t = Pa.shape[0]
        counts = old._counts(old.bootstrap_indices(t, n_boot=n_boot, seed=e), t)
        sa = old._two_level_samples(Pa, counts, n_boot, old._run_seed(e, 0))
        sb = old._two_level_samples(Pb, counts, n_boot, old._run_seed(e, 1))
        diff = Pb.mean() - Pa.mean()
        lo, hi = old._interval(sb - sa, diff)
        mlo, mhi = old._interval(sa, Pa.mean())
        p = old._paired_p(Pb.mean(axis=1) - Pa.mean(axis=1), e)
        rows.append((p, lo, hi, mlo, mhi))
    return tuple(np.array(c) for c in zip(*rows))


def rates(result, true_a: float, true_diff: float) -> dict:
    p, lo, hi, mlo, mhi = result
    return {"p < 0.05": float(np.mean(p < 0.05)),
            "diff covers": float(np.mean((lo <= true_diff) & (true_diff <= hi))),
            "mean covers": float(np.mean((mlo <= true_a) & (true_a <= mhi)))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiments", type=int, default=2000)
    ap.add_argument("--old-experiments", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    old = old_module()
    print(f"{N_TASKS} tasks; difficulty N({MU}, {TASK_SD}) on the logit scale; power: "
          f"B +{EFFECT} on the logit scale; NEW over {args.experiments} experiments, OLD "
          f"over {args.old_experiments}")
    print("| seed SD | runs | method | p < 0.05 | diff covers | mean covers | power |")
    print("|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for seed_sd in (0.0, 0.5, 1.0):
        true_a, _ = truths(seed_sd, 0.0)
        _, true_eff = truths(seed_sd, EFFECT)
        for n in (2, 3, 5):
            for label, n_exp in (("OLD", args.old_experiments), ("NEW", args.experiments)):
                A, B = simulate(rng, n_exp, n, seed_sd)
                A1, B1 = simulate(rng, n_exp, n, seed_sd, EFFECT)
                if label == "OLD":
                    r, r1 = old_method(old, A, B), old_method(old, A1, B1)
                else:
                    r, r1 = new_method(A, B), new_method(A1, B1)
                row = rates(r, true_a, 0.0)
                power = float(np.mean(r1[0] < 0.05))
                print(f"| {seed_sd} | {n} | {label} | {row['p < 0.05']:.3f} | "
                      f"{row['diff covers']:.3f} | {row['mean covers']:.3f} | {power:.3f} |",
                      flush=True)
    e = args.experiments
    print(f"Monte Carlo SD at 5 % over {e} experiments: {np.sqrt(0.05 * 0.95 / e):.4f}; "
          f"over {args.old_experiments}: {np.sqrt(0.05 * 0.95 / args.old_experiments):.4f}"
          f" ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
